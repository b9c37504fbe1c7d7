package engine

// The metrics' walk of the native keys (issue 35): /metrics names the
// largest keys of each family, and finding them must not hold the engine
// lock for long even with 100k native keys. The walk visits the key-bound
// values (db.bound, ordered by key) a bounded chunk at a time, each chunk
// under its own hold of the lock, and resumes after the last key it saw.

// nativeSized is implemented by the native families' values: the family's
// name (as TYPE reports it) and how many items the value holds, which
// ranks the keys of a family for the metrics.
type nativeSized interface {
	nativeFamily() string
	nativeItems() int64
}

// NativeKey is a native key as the walk sees it.
type NativeKey struct {
	DB     int    // database number
	Key    string // the key's name (immutable; it may outlive the lock)
	Family string // "delay", "queue", "numpool" or "room"
	Items  int64  // timers, jobs, numbers or stored messages
}

// NativeCursor is where a walk of the native keys stands. The zero value
// starts at the first database.
type NativeCursor struct {
	DB    int    // the database being walked
	After string // the last key visited in it
	Done  bool   // the walk has visited every database
	begun bool   // After names a key (a key may be "")
}

// WalkNative visits up to max native keys from cur on, in database then
// key order, and returns where to resume. Keys stored or removed between
// two calls are seen or not, never twice and never crashing the walk; a key
// renamed between two calls may be seen under both names or neither.
func (e *Engine) WalkNative(cur NativeCursor, max int, fn func(NativeKey)) NativeCursor {
	for !cur.Done && max > 0 {
		if cur.DB >= len(e.dbs) {
			cur.Done = true
			break
		}
		db := e.dbs[cur.DB]
		full := false
		if db.bound != nil {
			visit := func(k string, b keyBound) bool {
				if cur.begun && k == cur.After {
					return true // the pivot itself, seen last time
				}
				if max == 0 {
					full = true
					return false
				}
				if s, ok := b.(nativeSized); ok {
					fn(NativeKey{DB: cur.DB, Key: k, Family: s.nativeFamily(), Items: s.nativeItems()})
				}
				cur.After, cur.begun = k, true
				max--
				return true
			}
			if cur.begun {
				db.bound.Ascend(cur.After, visit)
			} else {
				db.bound.Scan(visit)
			}
		}
		if full || max == 0 {
			// max == 0 after the last key: the next call finds nothing
			// more here and moves on.
			break
		}
		cur.DB, cur.After, cur.begun = cur.DB+1, "", false
	}
	if cur.DB >= len(e.dbs) {
		cur.Done = true
	}
	return cur
}
