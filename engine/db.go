package engine

// DB is one numbered keyspace.
type DB struct {
	e        *Engine
	id       int
	keys     *Dict[entry]
	volatile int // keys with a deadline
	// bound holds the key-bound values (family.go) by their stored key, so
	// that FLUSHDB can detach them without visiting every key.
	bound map[string]keyBound
	// phys is the number the database's contents are stored under, in
	// change records and scheduler entries: id until SWAPDB exchanges the
	// contents of two databases (swapdb.go).
	phys int
}

// entry is what the keyspace stores per key: 24 bytes, so a dict node stays
// in the 48-byte size class.
type entry struct {
	obj    Object
	expire int64 // unix ms; 0 when the key does not expire
}

// dbKey names a key of one database (WATCH and blocking registrations,
// keys awaiting work after a load).
type dbKey struct {
	db  int
	key string
}

// ID is the database number.
func (db *DB) ID() int { return db.id }

// Len is the number of keys (including ones whose deadline passed but that
// nobody has touched since; the scheduler removes those within a tick).
func (db *DB) Len() int { return db.keys.Len() }

// Volatile is the number of keys with a deadline.
func (db *DB) Volatile() int { return db.volatile }

// find returns the live entry for key and the stored key string, deleting
// the key first if its deadline has passed (lazy expiry).
func (db *DB) find(key []byte) (string, *entry) {
	k, en := db.keys.Find(str(key))
	if en == nil {
		return "", nil
	}
	if en.expire != 0 && en.expire <= db.e.now {
		db.expireNow(k, en)
		return "", nil
	}
	return k, en
}

// LookupFlags trim a read lookup's side effects, as Redis's LOOKUP_* flags
// do for the commands that inspect a key rather than read it.
type LookupFlags uint8

// Lookup flags.
const (
	LookupNoTouch  LookupFlags = 1 << iota // keep the access time (EXISTS, TYPE, TTL, OBJECT)
	LookupNoNotify                         // no keymiss event (OBJECT)
	LookupNoStats                          // no keyspace hit or miss counted
)

// Read looks key up for a read command: it counts a keyspace hit or miss,
// announces a miss, and refreshes the access time. nil when absent.
func (db *DB) Read(key []byte) Object { return db.Lookup(key, 0) }

// Lookup is Read with some of its side effects turned off by f.
func (db *DB) Lookup(key []byte, f LookupFlags) Object {
	_, en := db.find(key)
	if en == nil {
		if f&LookupNoStats == 0 {
			db.e.stats.KeyspaceMisses++
		}
		if f&LookupNoNotify == 0 {
			db.e.notify(NotifyKeyMiss, "keymiss", db.id, key)
		}
		return nil
	}
	if f&LookupNoStats == 0 {
		db.e.stats.KeyspaceHits++
	}
	if f&LookupNoTouch == 0 {
		db.e.accessed(en.obj)
	}
	return en.obj
}

// Write looks key up for a write command. nil when absent.
func (db *DB) Write(key []byte) Object {
	_, en := db.find(key)
	if en == nil {
		return nil
	}
	db.e.accessed(en.obj)
	return en.obj
}

// Peek looks key up without counting or touching it (TYPE, OBJECT, TTL).
func (db *DB) Peek(key []byte) Object {
	_, en := db.find(key)
	if en == nil {
		return nil
	}
	return en.obj
}

// Exists reports whether key is present.
func (db *DB) Exists(key []byte) bool {
	_, en := db.find(key)
	return en != nil
}

// Touch refreshes key's access time (TOUCH); false when absent.
func (db *DB) Touch(key []byte) bool {
	_, en := db.find(key)
	if en == nil {
		return false
	}
	db.e.accessed(en.obj)
	return true
}

// Set stores obj under key, replacing any value of any type, persists it
// whole, and drops the key's deadline unless keepTTL.
func (db *DB) Set(key []byte, obj Object, keepTTL bool) {
	k, en, _ := db.slot(key)
	db.replace(k, key, en, obj)
	if !keepTTL {
		db.dropExpire(k, en, key)
	}
}

// slot returns key's entry for a write that will store a value in it,
// creating the entry (en.obj nil, created true) when the key is absent or its
// old value already expired.
func (db *DB) slot(key []byte) (k string, en *entry, created bool) {
	k, en, created = db.keys.Insert(str(key))
	if !created && en.expire != 0 && en.expire <= db.e.now {
		// The old value died before this write: retire it as a lookup
		// would have, so it lends the new value neither deadline nor items.
		db.clearExpire(k, en)
		db.e.sink.DeleteKey(db.id, key, en.obj.hasItems())
		db.detach(k, en.obj)
		db.e.freed(en.obj, db.e.lazy.Expire)
		en.obj = nil
		db.e.stats.ExpiredKeys++
		db.e.notify(NotifyExpired, "expired", db.id, key)
		created = true
	}
	if created {
		db.e.notify(NotifyNew, "new", db.id, key)
	}
	return k, en, created
}

// replace stores obj in en (k's entry, from slot) and persists it whole.
func (db *DB) replace(k string, key []byte, en *entry, obj Object) {
	old := en.obj
	if old != nil && old != obj {
		if old.hasItems() {
			db.e.sink.DeleteKey(db.id, key, true)
		}
		db.detach(k, old)
		db.e.freed(old, db.e.lazy.ServerDel) // Redis's dbOverwrite
	}
	en.obj = obj
	db.e.stored(obj, old)
	obj.persist(db.e.sink, db.id, key)
	if old != obj {
		db.attach(k, obj)
	}
	db.modified(key)
}

// dropExpire removes en's deadline, if any, with its record.
func (db *DB) dropExpire(k string, en *entry, key []byte) {
	if en.expire != 0 {
		db.clearExpire(k, en)
		db.e.sink.DeleteExpire(db.id, key)
	}
}

// setEntryExpire gives a live entry the deadline at.
func (db *DB) setEntryExpire(k string, en *entry, key []byte, at int64) {
	if en.expire == at {
		return
	}
	if en.expire != 0 {
		db.e.unschedule(Timer{When: en.expire, Kind: TimerExpire, DB: uint8(db.phys), Key: k})
	} else {
		db.volatile++
	}
	en.expire = at
	db.e.schedule(Timer{When: at, Kind: TimerExpire, DB: uint8(db.phys), Key: k})
	db.e.sink.PutExpire(db.id, key, at)
	db.modified(key)
}

// Changed persists obj again after it was modified in place (APPEND, INCR,
// SETRANGE on strings: whole-value types).
func (db *DB) Changed(key []byte, obj Object) {
	db.persistChanged(key, obj)
	db.modified(key)
}

// ChangedBytes persists a string changed in place where only s.b[off:end]
// was written, the value perhaps growing to end (SETBIT, SETRANGE,
// APPEND): when those bytes are a small part of a long value the record is
// a patch of them, not the whole value, so a bit set in a 1 MB bitmap or a
// line appended to a long log costs the log and the store a few bytes
// (with 50 clients setting bits of a 1 MB bitmap: 29-31k SETBITs/s writing
// a megabyte each, against Redis's 92-98k; 93-98k with patches).
func (db *DB) ChangedBytes(key []byte, s *String, off, end int) {
	db.recordBytes(key, s, off, end)
	db.modified(key)
}

// recordBytes is ChangedBytes without marking the key modified.
func (db *DB) recordBytes(key []byte, s *String, off, end int) {
	if n := end - off; len(s.b) >= minPatchedString && 2*n <= len(s.b) {
		db.e.sink.PatchValue(db.id, key, off, s.b[off:end])
	} else {
		db.persistChanged(key, s)
	}
}

// minPatchedString is the length from which an in-place change to a string
// is recorded as a patch: below it the whole value is about as small, and
// the changes of one pipelined batch coalesce into one record of it.
const minPatchedString = 256

// persistChanged records obj after an in-place change. A string's record
// is the whole value, so it is held back: more changes to the same value
// before anything else is recorded cost no more records.
func (db *DB) persistChanged(key []byte, obj Object) {
	if _, ok := obj.(*String); ok {
		db.e.sink.deferValue(db.id, key, obj)
		return
	}
	obj.persist(db.e.sink, db.id, key)
}

// Delete removes key as a command deletes a key it works on (RENAME's
// target, an emptied collection); false when it was absent.
func (db *DB) Delete(key []byte) bool { return db.deleteKey(key, db.e.lazy.ServerDel) }

// UserDelete is DEL, or UNLINK when unlink is set: a lazy deletion under
// lazyfree-lazy-user-del, or always for UNLINK.
func (db *DB) UserDelete(key []byte, unlink bool) bool {
	return db.deleteKey(key, unlink || db.e.lazy.UserDel)
}

func (db *DB) deleteKey(key []byte, lazy bool) bool {
	k, en := db.find(key)
	if en == nil {
		return false
	}
	db.e.freed(en.obj, lazy)
	db.remove(k, en, key)
	return true
}

// remove deletes a present key and its records.
func (db *DB) remove(k string, en *entry, key []byte) {
	if en.expire != 0 {
		db.clearExpire(k, en)
	}
	items := en.obj.hasItems()
	db.detach(k, en.obj)
	db.keys.Delete(k)
	db.e.sink.DeleteKey(db.id, key, items)
	db.modified(key)
}

// Expire returns key's deadline in unix ms: 0 when it has none, -1 when the
// key is absent.
func (db *DB) Expire(key []byte) int64 {
	_, en := db.find(key)
	if en == nil {
		return -1
	}
	return en.expire
}

// SetExpire gives key the deadline at (unix ms). A deadline already passed
// deletes the key, as Redis does. false when the key is absent.
func (db *DB) SetExpire(key []byte, at int64) bool {
	k, en := db.find(key)
	if en == nil {
		return false
	}
	if at <= db.e.now {
		db.e.freed(en.obj, db.e.lazy.Expire)
		db.remove(k, en, key)
		return true
	}
	db.setEntryExpire(k, en, key, at)
	return true
}

// Persist removes key's deadline; false when absent or without one.
func (db *DB) Persist(key []byte) bool {
	k, en := db.find(key)
	if en == nil || en.expire == 0 {
		return false
	}
	db.clearExpire(k, en)
	db.e.sink.DeleteExpire(db.id, key)
	db.modified(key)
	return true
}

func (db *DB) clearExpire(k string, en *entry) {
	db.e.unschedule(Timer{When: en.expire, Kind: TimerExpire, DB: uint8(db.phys), Key: k})
	en.expire = 0
	db.volatile--
}

// expireNow deletes a key whose deadline has passed and announces it.
func (db *DB) expireNow(k string, en *entry) {
	key := []byte(k)
	db.e.freed(en.obj, db.e.lazy.Expire)
	db.remove(k, en, key)
	db.e.stats.ExpiredKeys++
	db.e.notify(NotifyExpired, "expired", db.id, key)
}

// fireExpire is the scheduler's handler for key deadlines.
func (e *Engine) fireExpire(t Timer) {
	db := e.timerDB(t)
	k, en := db.keys.Find(t.Key)
	if en == nil || en.expire != t.When {
		return
	}
	db.expireNow(k, en)
}

// Rename moves src's value and deadline to dst, replacing dst; false when
// src is absent.
func (db *DB) Rename(src, dst []byte) bool {
	k, en := db.find(src)
	if en == nil {
		return false
	}
	if string(src) == string(dst) {
		return true
	}
	obj, expire := en.obj, en.expire
	db.remove(k, en, src)
	db.Delete(dst)
	db.add(dst, obj, expire)
	return true
}

// MoveTo moves key to another database; false when key is absent there or
// already present in the target.
func (db *DB) MoveTo(key []byte, target *DB) bool {
	k, en := db.find(key)
	if en == nil || target.Exists(key) {
		return false
	}
	obj, expire := en.obj, en.expire
	db.remove(k, en, key)
	target.add(key, obj, expire)
	return true
}

// CopyTo copies key's value and deadline to dst in target (COPY). With
// replace unset it fails when dst exists.
func (db *DB) CopyTo(key []byte, target *DB, dst []byte, replace bool) bool {
	_, en := db.find(key)
	if en == nil {
		return false
	}
	if target.Exists(dst) {
		if !replace {
			return false
		}
		target.Delete(dst)
	}
	target.add(dst, en.obj.Clone(), en.expire)
	return true
}

// add stores a value under a key known to be absent, with a deadline (0 for
// none), persisting both.
func (db *DB) add(key []byte, obj Object, expire int64) {
	k, en, _ := db.slot(key)
	db.replace(k, key, en, obj)
	if expire != 0 {
		db.setEntryExpire(k, en, key, expire)
	}
	// A key that arrives whole (RENAME, COPY, MOVE, a *STORE) can serve
	// clients blocked on it, as Redis's dbAdd signals.
	db.signalReady(key)
}

// Flush empties the database (FLUSHDB). Each key removed counts as a
// change, as in Redis, and nothing else does.
func (db *DB) Flush() { db.flush(false) }

// FlushAsync is FLUSHDB ASYNC: the keys count as freed lazily.
func (db *DB) FlushAsync() { db.flush(true) }

func (db *DB) flush(async bool) {
	if async {
		db.e.stats.LazyfreedObjects += int64(db.Len())
	}
	if db.Len() > 0 {
		reclaim()
	}
	db.e.stats.Dirty += int64(db.keys.Len())
	db.clear()
	if db.e.tracker != nil {
		db.e.tracker.Flushed(async)
	}
	db.e.sink.FlushDB(db.id)
}

// modified records a change to key: it counts towards the dirty counter and
// invalidates transactions watching the key. Every mutation of a key, of
// any type, goes through it.
func (db *DB) modified(key []byte) {
	db.e.stats.Dirty++
	if db.e.watching > 0 {
		db.e.touchWatched(db.id, key)
	}
	if db.e.tracker != nil {
		db.e.tracker.KeyModified(key)
	}
}

func (db *DB) clear() {
	if db.e.watching > 0 {
		db.e.touchAllWatched(db.id)
	}
	db.detachAll()
	if db.volatile > 0 {
		db.keys.ForEach(func(k string, en *entry) bool {
			if en.expire != 0 {
				db.e.unschedule(Timer{When: en.expire, Kind: TimerExpire, DB: uint8(db.phys), Key: k})
			}
			return true
		})
	}
	db.keys.Clear()
	db.volatile = 0
}

// RandomKey returns a random live key, or nil when the database is empty.
func (db *DB) RandomKey() []byte {
	// Like Redis, give up on expired samples after a bounded number of tries
	// and return one of them rather than loop.
	for tries := 0; ; tries++ {
		k, en := db.keys.RandomEntry()
		if en == nil {
			return nil
		}
		if en.expire == 0 || en.expire > db.e.now || tries >= 100 {
			return []byte(k)
		}
		db.expireNow(k, en)
	}
}

// Keys calls fn for every live key matching match (nil matches all).
func (db *DB) Keys(match func(key string) bool, fn func(key string)) {
	var expired []string
	db.keys.ForEach(func(k string, en *entry) bool {
		if en.expire != 0 && en.expire <= db.e.now {
			expired = append(expired, k)
			return true
		}
		if match == nil || match(k) {
			fn(k)
		}
		return true
	})
	for _, k := range expired {
		if _, en := db.keys.Find(k); en != nil {
			db.expireNow(k, en)
		}
	}
}

// Scan continues a SCAN from cursor, calling fn for live keys, and returns
// the next cursor. It visits at least count buckets' worth of keys, like
// Redis, bounded so a sparse table cannot make one call unbounded.
func (db *DB) Scan(cursor uint64, count int, fn func(key string, obj Object)) uint64 {
	var expired []string
	visited := 0
	for maxIter := count * 10; ; {
		cursor = db.keys.Scan(cursor, func(k string, en *entry) {
			visited++
			if en.expire != 0 && en.expire <= db.e.now {
				expired = append(expired, k)
				return
			}
			fn(k, en.obj)
		})
		maxIter--
		if cursor == 0 || maxIter <= 0 || visited >= count {
			break
		}
	}
	for _, k := range expired {
		if _, en := db.keys.Find(k); en != nil {
			db.expireNow(k, en)
		}
	}
	return cursor
}

// Notify publishes a keyspace event for key in this database.
func (db *DB) Notify(class NotifyClass, event string, key []byte) {
	db.e.notify(class, event, db.id, key)
}

// IdleTime is seconds since obj was last accessed.
func (db *DB) IdleTime(obj Object) int64 { return db.e.idleTime(obj) }

// KeyMemoryUsage estimates the bytes key occupies with its value.
func (db *DB) KeyMemoryUsage(key []byte, obj Object) int {
	// dict node (48) + key bytes + the value.
	return 48 + roundAlloc(len(key)) + obj.MemoryUsage()
}

// lookupAs looks key up as a value of type T: as a read command does
// (statistics, keymiss event) when read is set, else as a write. It returns
// T's zero value (nil) when the key is absent and ErrWrongType when it
// holds another type.
func lookupAs[T Object](db *DB, key []byte, read bool) (T, error) {
	var obj Object
	if read {
		obj = db.Read(key)
	} else {
		obj = db.Write(key)
	}
	var zero T
	if obj == nil {
		return zero, nil
	}
	v, ok := obj.(T)
	if !ok {
		return zero, ErrWrongType
	}
	return v, nil
}
