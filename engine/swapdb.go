package engine

import (
	"fmt"
	"slices"
)

// SWAPDB exchanges the contents of two databases, as Redis does: the DB
// structs keep their number, so a connection that selected database 0 (or a
// blocked client's serve function, a script's DB) sees the other contents
// from then on, and WATCH and blocking registrations, which are by number,
// stay where they were.
//
// Persistence and the scheduler name a database's contents by DB.phys, the
// physical number its records are stored under, which moves with the
// contents. Change records are written under the physical number (physSink
// translates), so a swap rewrites no record: it writes one server record,
// the logical-to-physical map, and a load applies it (LoadServer). Scheduler
// entries (expiry, the families' timers) carry DB.phys too, so they follow
// their keys without being touched.

// dbMapRecord names the server record holding the map: one byte per logical
// database, the physical number of its contents. It is absent while the map
// is the identity.
const dbMapRecord = "swapdb-map"

// SwapDB exchanges the contents of databases a and b (both valid numbers).
func (e *Engine) SwapDB(a, b int) {
	e.stats.Dirty++
	if a == b {
		return
	}
	// A held-back record names its database by logical number: write it
	// while that number still means the same contents.
	e.sink.flush()
	x, y := e.dbs[a], e.dbs[b]
	if e.watching > 0 {
		e.touchWatchedOnSwap(x, y)
		e.touchWatchedOnSwap(y, x)
	}
	swapContents(x, y)
	e.persistDBMap()
	if e.blocked > 0 {
		e.signalBlockedKeys(x)
		e.signalBlockedKeys(y)
	}
}

// swapContents exchanges what two DB structs hold, leaving their numbers.
func swapContents(x, y *DB) {
	x.keys, y.keys = y.keys, x.keys
	x.volatile, y.volatile = y.volatile, x.volatile
	x.bound, y.bound = y.bound, x.bound
	x.phys, y.phys = y.phys, x.phys
	x.e.byPhys[x.phys], x.e.byPhys[y.phys] = x, y
}

// touchWatchedOnSwap marks the transactions watching a key of db that
// exists there before the swap or in with after it (what db will hold), as
// Redis's touchAllWatchedKeysInDb does; a key that did not exist and comes
// in already past its deadline is not a change.
func (e *Engine) touchWatchedOnSwap(db, with *DB) {
	for wk, list := range e.watched {
		if wk.db != db.id {
			continue
		}
		if db.keys.recs.Get(bytesOf(wk.key)) == nil {
			r := with.keys.recs.Get(bytesOf(wk.key))
			if r == nil || r.HasExpire() && r.Expire() <= e.now {
				continue
			}
		}
		for _, w := range list {
			w.dirty = true
		}
	}
}

// signalBlockedKeys marks ready every key of db that clients are blocked on
// and that now exists, as Redis's scanDatabaseForReadyKeys does; serving
// decides whether the value is one they can take. Keys are signaled in
// order, so which client is served first does not depend on map order.
func (e *Engine) signalBlockedKeys(db *DB) {
	var keys []string
	for wk := range e.waiters {
		if wk.db == db.id && db.keys.recs.Get(bytesOf(wk.key)) != nil {
			keys = append(keys, wk.key)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		db.signalReady(bytesOf(k))
	}
}

// dbMap is the logical-to-physical map: the physical number of each
// database's contents, or nil when that is the identity.
func (e *Engine) dbMap() []byte {
	var m []byte
	for i, db := range e.dbs {
		if db.phys != i && m == nil {
			m = make([]byte, len(e.dbs))
			for j := range i {
				m[j] = byte(e.dbs[j].phys)
			}
		}
		if m != nil {
			m[i] = byte(db.phys)
		}
	}
	return m
}

// DBMap is the physical number of each database's contents, by database
// number (for tests and diagnostics).
func (e *Engine) DBMap() []int {
	m := make([]int, len(e.dbs))
	for i, db := range e.dbs {
		m[i] = db.phys
	}
	return m
}

// persistDBMap records the map, or removes its record when the swaps undid
// each other.
func (e *Engine) persistDBMap() {
	if m := e.dbMap(); m != nil {
		e.sink.PutServer([]byte(dbMapRecord), m)
	} else {
		e.sink.DeleteServer([]byte(dbMapRecord))
	}
}

// loadDBMap applies a stored map at start-up. The records loaded so far
// went to the DB stored under their physical number (Loader looks them up
// by it), so the contents are rearranged, whatever came first.
func (e *Engine) loadDBMap(val []byte) error {
	n := len(e.dbs)
	want := make([]int, n)
	for i := range want {
		want[i] = i
		if i < len(val) {
			want[i] = int(val[i])
		}
	}
	// Databases past the configured number cannot hold records (those
	// would be refused), so only the map of the configured ones matters,
	// but it must be a permutation of them.
	seen := make([]bool, n)
	for i, p := range want {
		if p >= n || seen[p] {
			return fmt.Errorf("the SWAPDB map stores database %d under %d, which does not fit %d databases", i, p, n)
		}
		seen[p] = true
	}
	for i, p := range want {
		if e.dbs[i].phys != p {
			swapContents(e.dbs[i], e.byPhys[p])
		}
	}
	return nil
}

// physSink translates the database number of every change record from the
// logical number the engine uses to the physical one the records are stored
// under.
type physSink struct {
	ChangeSink
	e *Engine
}

func (s physSink) phys(db int) int { return s.e.dbs[db].phys }

func (s physSink) PutValue(db int, key []byte, t Type, payload []byte) {
	s.ChangeSink.PutValue(s.phys(db), key, t, payload)
}

func (s physSink) PatchValue(db int, key []byte, off int, data []byte) {
	s.ChangeSink.PatchValue(s.phys(db), key, off, data)
}

func (s physSink) PutExpire(db int, key []byte, at int64) {
	s.ChangeSink.PutExpire(s.phys(db), key, at)
}

func (s physSink) DeleteExpire(db int, key []byte) { s.ChangeSink.DeleteExpire(s.phys(db), key) }

func (s physSink) PutItem(db int, key []byte, item []byte, val []byte) {
	s.ChangeSink.PutItem(s.phys(db), key, item, val)
}

func (s physSink) DeleteItem(db int, key []byte, item []byte) {
	s.ChangeSink.DeleteItem(s.phys(db), key, item)
}

func (s physSink) DeleteItemRange(db int, key []byte, from, to []byte) {
	s.ChangeSink.DeleteItemRange(s.phys(db), key, from, to)
}

func (s physSink) DeleteKey(db int, key []byte, items bool) {
	s.ChangeSink.DeleteKey(s.phys(db), key, items)
}

func (s physSink) FlushDB(db int) { s.ChangeSink.FlushDB(s.phys(db)) }

// timerDB is the database whose contents a scheduler entry belongs to.
func (e *Engine) timerDB(t Timer) *DB { return e.byPhys[t.DB] }
