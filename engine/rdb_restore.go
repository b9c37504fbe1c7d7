package engine

// RestoreOptions are RESTORE's: a TTL in ms (0: none), absolute with
// AbsTTL; Replace deletes a key already there; IdleTime and Freq, when not
// negative, set the access clock that many seconds back (OBJECT IDLETIME)
// or the LFU counter (OBJECT FREQ), whichever the policy keeps.
type RestoreOptions struct {
	TTL      int64
	AbsTTL   bool
	Replace  bool
	IdleTime int64
	Freq     int64
}

// Restore stores obj (from ParseDumpPayload) under key as Redis's RESTORE
// does once the payload is decoded: an existing key is deleted with
// Replace (the caller has already refused it without), a deadline already
// past means the key is not created (and the replaced one announced
// deleted), and the key arrives whole, announced as "restore". It reports
// whether the key was created.
func (db *DB) Restore(key []byte, obj Object, o RestoreOptions) bool {
	deleted := false
	if o.Replace {
		deleted = db.Delete(key)
	}
	at := o.TTL
	if at != 0 && !o.AbsTTL {
		at += db.e.now
	}
	if at != 0 && at <= db.e.now {
		if deleted {
			db.e.notify(NotifyGeneric, "del", db.id, key)
		}
		return false
	}
	db.add(key, obj, at)
	db.e.setAccess(obj, o.Freq, o.IdleTime)
	if r := db.keys.recs.Get(key); r != nil {
		r.SetClock(obj.header().atime)
	}
	db.e.notify(NotifyGeneric, "restore", db.id, key)
	return true
}

// DumpKey returns key's DUMP payload and its deadline (0 for none) as a
// read command looks it up; ok is false when the key is absent.
func (db *DB) DumpKey(key []byte) (payload []byte, expire int64, ok bool) {
	obj := db.Read(key)
	if obj == nil {
		return nil, 0, false
	}
	return DumpPayload(obj), db.Expire(key), true
}

// DeleteMigrated removes a key MIGRATE handed over, announcing "del";
// false when it is no longer there.
func (db *DB) DeleteMigrated(key []byte) bool {
	if !db.Delete(key) {
		return false
	}
	db.e.notify(NotifyGeneric, "del", db.id, key)
	return true
}
