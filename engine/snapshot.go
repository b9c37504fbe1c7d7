package engine

import "github.com/revolver-db/revolver/flat"

// WriteSnapshot writes the whole state to sink as the change records a
// restart loads: every key's value and items with its deadline, under its
// logical database number, then the server records but the SWAPDB map
// (databases written by logical number need none). A server without a
// store (persistence off) saves this way what a persistent one keeps
// (SAVE, BGSAVE). Under the lock; nothing is modified, not even keys whose
// deadline passed: the load that reads them expires them.
func (e *Engine) WriteSnapshot(sink ChangeSink) {
	e.sink.flush()
	var key []byte
	for _, db := range e.dbs {
		db.keys.recs.ForEach(func(r flat.Record) bool {
			k, val := r.KeyValue()
			key = append(key[:0], k...)
			if obj := db.keys.ref(r); obj != nil {
				obj.persist(sink, db.id, key)
			} else {
				sink.PutValue(db.id, key, TypeString, val)
			}
			if at := r.Expire(); at != 0 {
				sink.PutExpire(db.id, key, at)
			}
			return true
		})
	}
	for name, v := range e.server {
		if name != dbMapRecord {
			sink.PutServer([]byte(name), v)
		}
	}
}

// SavedChanges takes off the change count (rdb_changes_since_last_save)
// the changes a background save that began at n of them has saved, as
// Redis does when a BGSAVE ends: those made meanwhile still count.
func (e *Engine) SavedChanges(n int64) { e.stats.Dirty = max(e.stats.Dirty-n, 0) }
