package engine

// Watch is one client's WATCH state: the keys it watches and whether any of
// them was modified since (then its next EXEC fails). Every mutation goes
// through DB.modified, which marks the watches of the key dirty; deletion at
// the deadline is a mutation too.
type Watch struct {
	keys  []dbKey
	dirty bool
}

// Dirty reports whether a watched key changed since it was watched.
func (w *Watch) Dirty() bool { return w.dirty }

// Len is the number of watched keys.
func (w *Watch) Len() int { return len(w.keys) }

// WatchKey adds key of database db to w (WATCH).
func (e *Engine) WatchKey(w *Watch, db int, key []byte) {
	wk := dbKey{db, string(key)}
	for _, k := range w.keys {
		if k == wk {
			return
		}
	}
	if e.watched == nil {
		e.watched = map[dbKey][]*Watch{}
	}
	w.keys = append(w.keys, wk)
	e.watched[wk] = append(e.watched[wk], w)
	e.watching++
}

// Unwatch forgets every key of w and clears its dirty flag (UNWATCH, EXEC,
// DISCARD, RESET, disconnect).
func (e *Engine) Unwatch(w *Watch) {
	for _, wk := range w.keys {
		list := e.watched[wk]
		for i, x := range list {
			if x == w {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(e.watched, wk)
		} else {
			e.watched[wk] = list
		}
		e.watching--
	}
	w.keys = w.keys[:0]
	w.dirty = false
}

// WatchedKeyExpired reports whether a watched key has passed its deadline
// without being deleted yet; Redis counts that as a change at EXEC time.
func (e *Engine) WatchedKeyExpired(w *Watch) bool {
	for _, wk := range w.keys {
		r := e.dbs[wk.db].keys.recs.Get(bytesOf(wk.key))
		if r != nil && r.HasExpire() && r.Expire() <= e.now {
			return true
		}
	}
	return false
}

func (e *Engine) touchWatched(db int, key []byte) {
	for _, w := range e.watched[dbKey{db, str(key)}] {
		w.dirty = true
	}
}

// touchAllWatched marks the watches of every existing key of db (FLUSHDB,
// FLUSHALL): as in Redis, a watched key that did not exist is unaffected.
func (e *Engine) touchAllWatched(db int) {
	for wk, list := range e.watched {
		if wk.db != db || e.dbs[db].keys.recs.Get(bytesOf(wk.key)) == nil {
			continue
		}
		for _, w := range list {
			w.dirty = true
		}
	}
}
