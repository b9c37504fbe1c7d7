package engine

import (
	"github.com/revolver-db/revolver/flat"
	"github.com/tidwall/btree"
)

// DB is one numbered keyspace.
type DB struct {
	e        *Engine
	id       int
	keys     *keyspace
	volatile int // keys with a deadline
	// bound holds the key-bound values (family.go) by their stored key, so
	// that FLUSHDB can detach them without visiting every key, in key order
	// so that a walk of them can stop and resume (WalkNative).
	bound *btree.Map[string, keyBound]
	// phys is the number the database's contents are stored under, in
	// change records and scheduler entries: id until SWAPDB exchanges the
	// contents of two databases (swapdb.go).
	phys int
	// sampled is eviction's scratch for a sample's records.
	sampled []flat.Record
}

// entry is a key as a lookup found it: its record (a view, valid until the
// key is next written), its value and its deadline (0 for none). A string
// held in its record is a copy here: a change to it is stored back by
// Changed, ChangedBytes or a write.
type entry struct {
	rec    flat.Record
	obj    Object
	expire int64
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

// findRec returns key's live record, deleting the key first if its
// deadline has passed (lazy expiry); nil when absent.
func (db *DB) findRec(key []byte) flat.Record {
	r, _ := db.keys.recs.Find(key)
	if r == nil {
		return nil
	}
	if db.pastDeadline(r) {
		if !db.e.rx.on {
			db.expireNow(key, r)
		}
		return nil
	}
	return r
}

// find is findRec with the value and deadline read out.
func (db *DB) find(key []byte) (entry, bool) {
	r := db.findRec(key)
	if r == nil {
		return entry{}, false
	}
	return db.entryOf(r), true
}

func (db *DB) entryOf(r flat.Record) entry {
	return entry{rec: r, obj: db.keys.object(r), expire: r.Expire()}
}

// touch records an access to the key of r (LRU clock or LFU counter).
func (db *DB) touch(r flat.Record) { r.SetClock(db.e.touchClock(r.Clock())) }

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
	r := db.lookupRec(key, f)
	if r == nil {
		return nil
	}
	return db.keys.object(r)
}

// lookupRec is Lookup returning the record.
func (db *DB) lookupRec(key []byte, f LookupFlags) flat.Record {
	r := db.findRec(key)
	if r == nil {
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
		db.touch(r)
	}
	return r
}

// Write looks key up for a write command. nil when absent.
func (db *DB) Write(key []byte) Object {
	r := db.writeRec(key)
	if r == nil {
		return nil
	}
	return db.keys.object(r)
}

// writeRec is Write returning the record.
func (db *DB) writeRec(key []byte) flat.Record {
	r := db.findRec(key)
	if r != nil {
		db.touch(r)
	}
	return r
}

// Peek looks key up without counting or touching it (TYPE, OBJECT, TTL).
func (db *DB) Peek(key []byte) Object {
	r := db.findRec(key)
	if r == nil {
		return nil
	}
	return db.keys.object(r)
}

// PeekType is the type of key's value without reading the value; false
// when absent.
func (db *DB) PeekType(key []byte) (Type, bool) {
	r := db.findRec(key)
	if r == nil {
		return 0, false
	}
	return recType(r), true
}

// Exists reports whether key is present.
func (db *DB) Exists(key []byte) bool { return db.findRec(key) != nil }

// Touch refreshes key's access time (TOUCH); false when absent.
func (db *DB) Touch(key []byte) bool { return db.writeRec(key) != nil }

// Set stores obj under key, replacing any value of any type, persists it
// whole, and drops the key's deadline unless keepTTL.
func (db *DB) Set(key []byte, obj Object, keepTTL bool) {
	old, _ := db.slot(key)
	expire := int64(0)
	if keepTTL && old != nil {
		expire = old.Expire()
	}
	db.store(key, old, obj, expire)
}

// slot looks key up for a write that will store a value in it: its record,
// nil when the key is absent or its old value had expired (retired here,
// announced, and created reported true).
func (db *DB) slot(key []byte) (old flat.Record, created bool) {
	old, _ = db.keys.recs.Find(key)
	if old != nil {
		if at := old.Expire(); db.pastDeadline(old) {
			// The old value died before this write: retire it as a lookup
			// would have, so it lends the new value neither deadline nor
			// items.
			obj := db.keys.ref(old)
			db.unscheduleExpire(key, at)
			db.e.sink.DeleteKey(db.id, key, obj != nil && obj.hasItems())
			if obj != nil {
				db.detach(str(key), obj)
			}
			db.e.freed(obj, db.e.lazy.Expire)
			db.keys.delete(key, old)
			old = nil
			db.e.stats.ExpiredKeys++
			db.e.notify(NotifyExpired, "expired", db.id, key)
			db.e.deleted(db.id, key, db.e.lazy.Expire)
		}
	}
	if old == nil {
		db.e.notify(NotifyNew, "new", db.id, key)
		created = true
	}
	return old, created
}

// store writes obj under key in place of old (key's record from slot, nil
// when new) with the deadline expire, persisting the value whole and the
// deadline's change.
func (db *DB) store(key []byte, old flat.Record, obj Object, expire int64) {
	prev, oldExpire := db.retire(key, old, obj)
	clock := db.e.storedClock(obj, old, prev)
	obj.header().atime = clock
	db.keys.put(key, old, obj, clock, expire)
	db.persistValue(key, obj)
	if prev != obj {
		db.attach(str(key), obj)
	}
	db.wrote(key, oldExpire, expire)
}

// storeBytes is store for a string value given as bytes (SET), which
// needs no *String when the value fits in its record.
func (db *DB) storeBytes(key []byte, old flat.Record, val []byte, enc strEnc, expire int64) {
	if len(val) > inlineStringMax {
		s := &String{enc: enc}
		s.store(val)
		db.store(key, old, s, expire)
		return
	}
	_, oldExpire := db.retire(key, old, nil)
	clock := db.e.touchClock(0)
	switch {
	case old == nil:
		clock = db.e.freshClock(0)
	case db.e.eviction().cfg.Policy.LFU():
		clock = db.e.touchClock(old.Clock())
	}
	db.keys.putString(key, old, val, uint8(TypeString)|uint8(enc)<<recEncShift, clock, expire)
	db.e.sink.putInline(db.id, key, val)
	db.wrote(key, oldExpire, expire)
}

// persistValue records obj, just stored under key, whole.
func (db *DB) persistValue(key []byte, obj Object) {
	if s, ok := inlines(obj); ok {
		db.e.sink.putInline(db.id, key, s.b)
		return
	}
	obj.persist(db.e.sink, db.id, key)
}

// retire lets go of the value of old (key's record, nil when new) that obj
// replaces: its items' records, its key binding, its memory. It returns
// that value when it was an object (nil for a string in its record) and
// the old deadline.
func (db *DB) retire(key []byte, old flat.Record, obj Object) (prev Object, oldExpire int64) {
	if old == nil {
		return nil, 0
	}
	prev, oldExpire = db.keys.ref(old), old.Expire()
	if prev != nil && prev != obj {
		if prev.hasItems() {
			db.e.sink.DeleteKey(db.id, key, true)
		}
		db.detach(str(key), prev)
		db.e.freed(prev, db.e.lazy.ServerDel) // Redis's dbOverwrite
	}
	return prev, oldExpire
}

// wrote ends a write of key's value: the change is counted, and the
// deadline's change, from oldExpire to expire, scheduled and recorded.
func (db *DB) wrote(key []byte, oldExpire, expire int64) {
	db.modified(key)
	if oldExpire != expire {
		db.deadlineMoved(key, oldExpire, expire)
	}
}

// deadlineMoved schedules and records key's deadline moving from old to at
// (either 0 for none), its record already changed.
func (db *DB) deadlineMoved(key []byte, old, at int64) {
	if old != 0 {
		db.unscheduleExpire(key, old)
		db.volatile--
	}
	if at == 0 {
		db.e.sink.DeleteExpire(db.id, key)
		return
	}
	db.volatile++
	db.e.schedule(Timer{When: at, Kind: TimerExpire, DB: uint8(db.phys), Key: str(key)})
	db.e.sink.PutExpire(db.id, key, at)
	db.modified(key)
}

func (db *DB) unscheduleExpire(key []byte, at int64) {
	db.e.unschedule(Timer{When: at, Kind: TimerExpire, DB: uint8(db.phys), Key: str(key)})
}

// setExpire gives the live key of r the deadline at (0 removes it),
// scheduling and recording the change. r is stale afterwards.
func (db *DB) setExpire(key []byte, r flat.Record, at int64) {
	if old := r.Expire(); old != at {
		db.keys.recs.SetExpire(key, at)
		db.deadlineMoved(key, old, at)
	}
}

// replaceObject puts obj in place of the value of key's record r, keeping
// its deadline and clock and persisting nothing (SPOP's kept members).
func (db *DB) replaceObject(key []byte, r flat.Record, obj Object) {
	db.keys.put(key, r, obj, r.Clock(), r.Expire())
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
	inRecord := db.storeBack(key, s)
	switch n := end - off; {
	case len(s.b) >= minPatchedString && 2*n <= len(s.b):
		db.e.sink.PatchValue(db.id, key, off, s.b[off:end])
	case inRecord:
		db.e.sink.deferString(db.id, key, s.b)
	default:
		db.e.sink.deferValue(db.id, key, s)
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
	if s, ok := obj.(*String); ok {
		if db.storeBack(key, s) {
			db.e.sink.deferString(db.id, key, s.b)
		} else {
			db.e.sink.deferValue(db.id, key, s)
		}
		return
	}
	obj.persist(db.e.sink, db.id, key)
}

// storeBack writes s, a copy of key's string changed by a command, into
// key's record, keeping its deadline and clock, and reports whether it
// stays there. A string that outgrew its record becomes an object, and a
// string that is one already was changed in place.
func (db *DB) storeBack(key []byte, s *String) (inRecord bool) {
	r := db.keys.recs.Get(key)
	if r == nil || r.IsRef() {
		return false
	}
	if len(s.b) > inlineStringMax {
		db.keys.put(key, r, s, r.Clock(), r.Expire())
		return false
	}
	db.keys.putString(key, r, s.b, stringTypeByte(s), r.Clock(), r.Expire())
	return true
}

// markRaw records that key's string is now raw-encoded, as Redis's
// unsharing makes it even when nothing else changes (SETBIT of a bit that
// already has the value).
func (db *DB) markRaw(key []byte, s *String) {
	s.enc = encRaw
	if r := db.keys.recs.Get(key); r != nil && !r.IsRef() {
		r.SetType(stringTypeByte(s))
	}
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
	r := db.findRec(key)
	if r == nil {
		return false
	}
	db.e.freed(db.keys.ref(r), lazy)
	db.remove(key, r)
	return true
}

// remove deletes a present key, whose record is r, and its records. key
// must not be a view of r.
func (db *DB) remove(key []byte, r flat.Record) {
	if at := r.Expire(); at != 0 {
		db.unscheduleExpire(key, at)
		db.volatile--
	}
	obj := db.keys.ref(r)
	items := obj != nil && obj.hasItems()
	if obj != nil {
		db.detach(str(key), obj)
	}
	db.keys.delete(key, r)
	db.e.sink.DeleteKey(db.id, key, items)
	db.modified(key)
}

// Expire returns key's deadline in unix ms: 0 when it has none, -1 when the
// key is absent.
func (db *DB) Expire(key []byte) int64 {
	r := db.findRec(key)
	if r == nil {
		return -1
	}
	return r.Expire()
}

// SetExpire gives key the deadline at (unix ms). A deadline already passed
// deletes the key, as Redis does. false when the key is absent.
func (db *DB) SetExpire(key []byte, at int64) bool {
	r := db.findRec(key)
	if r == nil {
		return false
	}
	if at <= db.e.now {
		db.e.freed(db.keys.ref(r), db.e.lazy.Expire)
		db.remove(key, r)
		return true
	}
	db.setExpire(key, r, at)
	return true
}

// Persist removes key's deadline; false when absent or without one.
func (db *DB) Persist(key []byte) bool {
	r := db.findRec(key)
	if r == nil || r.Expire() == 0 {
		return false
	}
	db.setExpire(key, r, 0)
	db.modified(key)
	return true
}

// expireNow deletes a key whose deadline has passed and announces it. key
// must not be a view of r.
func (db *DB) expireNow(key []byte, r flat.Record) {
	db.e.freed(db.keys.ref(r), db.e.lazy.Expire)
	db.remove(key, r)
	// An expiry is no change a command made (Redis's server.dirty leaves
	// it out): a read that finds a key expired is not a write.
	db.e.stats.Dirty--
	db.e.stats.ExpiredKeys++
	db.e.notify(NotifyExpired, "expired", db.id, key)
	db.e.deleted(db.id, key, db.e.lazy.Expire)
}

// fireExpire is the scheduler's handler for key deadlines.
func (e *Engine) fireExpire(t Timer) {
	db := e.timerDB(t)
	key := bytesOf(t.Key)
	r := db.keys.recs.Get(key)
	if r == nil || r.Expire() != t.When || e.holdExpire(t) {
		return
	}
	db.expireNow(key, r)
}

// Rename moves src's value and deadline to dst, replacing dst; false when
// src is absent.
func (db *DB) Rename(src, dst []byte) bool {
	en, ok := db.find(src)
	if !ok {
		return false
	}
	if string(src) == string(dst) {
		return true
	}
	db.remove(src, en.rec)
	db.Delete(dst)
	db.add(dst, en.obj, en.expire)
	return true
}

// MoveTo moves key to another database; false when key is absent there or
// already present in the target.
func (db *DB) MoveTo(key []byte, target *DB) bool {
	en, ok := db.find(key)
	if !ok || target.Exists(key) {
		return false
	}
	db.remove(key, en.rec)
	target.add(key, en.obj, en.expire)
	return true
}

// CopyTo copies key's value and deadline to dst in target (COPY). With
// replace unset it fails when dst exists.
func (db *DB) CopyTo(key []byte, target *DB, dst []byte, replace bool) bool {
	en, ok := db.find(key)
	if !ok {
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
	old, _ := db.slot(key)
	db.store(key, old, obj, expire)
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
		db.keys.recs.ForEach(func(r flat.Record) bool {
			if at := r.Expire(); at != 0 {
				db.unscheduleExpire(r.Key(), at)
			}
			return true
		})
	}
	db.keys.clear()
	db.volatile = 0
}

// RandomKey returns a random live key, or nil when the database is empty.
func (db *DB) RandomKey() []byte {
	// Like Redis, give up on expired samples after a bounded number of tries
	// and return one of them rather than loop.
	for tries := 0; ; tries++ {
		r := db.keys.recs.Random(nil)
		if r == nil {
			return nil
		}
		key := append(make([]byte, 0, len(r.Key())), r.Key()...) // not nil for the empty key
		if !db.pastDeadline(r) || tries >= 100 {
			return key
		}
		if !db.e.rx.on {
			db.expireNow(key, r)
		}
	}
}

// Keys calls fn for every live key matching match (nil matches all). The
// key is a view of its record: fn copies what it keeps past the call's
// return.
func (db *DB) Keys(match func(key string) bool, fn func(key string)) {
	var expired [][]byte
	db.keys.recs.ForEach(func(r flat.Record) bool {
		key := r.Key()
		if db.pastDeadline(r) {
			expired = append(expired, append([]byte(nil), key...))
			return true
		}
		if k := str(key); match == nil || match(k) {
			fn(k)
		}
		return true
	})
	db.expireKeys(expired)
}

// expireKeys deletes the keys a walk found past their deadline.
func (db *DB) expireKeys(keys [][]byte) {
	if db.e.rx.on {
		return // a replica waits for the master's DEL
	}
	for _, k := range keys {
		if r := db.keys.recs.Get(k); r != nil {
			db.expireNow(k, r)
		}
	}
}

// Scan continues a SCAN from cursor, calling fn for live keys with their
// type, and returns the next cursor (flat's hash-position cursor: Redis's
// guarantees, every key present throughout is returned). The key is a view
// of its record, valid until the call returns.
func (db *DB) Scan(cursor uint64, count int, fn func(key string, t Type)) uint64 {
	var expired [][]byte
	cursor = db.keys.recs.Scan(cursor, count, func(r flat.Record) {
		key := r.Key()
		if db.pastDeadline(r) {
			expired = append(expired, append([]byte(nil), key...))
			return
		}
		fn(str(key), recType(r))
	})
	db.expireKeys(expired)
	return cursor
}

// Notify publishes a keyspace event for key in this database.
func (db *DB) Notify(class NotifyClass, event string, key []byte) {
	db.e.notify(class, event, db.id, key)
}

// IdleTime is seconds since obj was last accessed.
func (db *DB) IdleTime(obj Object) int64 { return db.e.idleTime(obj) }

// KeyMemoryUsage is the bytes key occupies with its value: its record's
// slot, its share of the index and, for a value that is an object, the
// object.
func (db *DB) KeyMemoryUsage(key []byte) int {
	r := db.keys.recs.Get(key)
	if r == nil {
		return 0
	}
	return db.keys.usage(r)
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

// rawObject is key's value whatever its deadline, as the scheduler's
// handlers and loads find it (no lazy expiry); nil when absent.
func (db *DB) rawObject(key []byte) Object {
	r := db.keys.recs.Get(key)
	if r == nil {
		return nil
	}
	return db.keys.object(r)
}

// removeRaw deletes key if it is stored, whatever its deadline, as Redis's
// dbDelete does (no lazy expiry first); it reports whether it was there.
func (db *DB) removeRaw(key []byte) bool {
	r := db.keys.recs.Get(key)
	if r == nil {
		return false
	}
	db.remove(key, r)
	return true
}
