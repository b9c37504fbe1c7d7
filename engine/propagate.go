package engine

// A master tells its replicas of the keys it deletes on its own, expired or
// evicted, as DEL (UNLINK when the matching lazyfree option is on), exactly
// when it deletes them: in the middle of the command that found a key past
// its deadline, or between commands.

// DeletionHook receives each key the engine deletes by itself: db, the key
// (valid during the call) and whether the deletion is lazy. Under the lock.
type DeletionHook func(db int, key []byte, lazy bool)

// SetDeletionHook installs h (nil: none).
func (e *Engine) SetDeletionHook(h DeletionHook) { e.onDeleted = h }

// deleted reports a deletion the engine made by itself.
func (e *Engine) deleted(db int, key []byte, lazy bool) {
	if e.onDeleted != nil {
		e.onDeleted(db, key, lazy)
	}
}

// Dirty is the count of changes since the last save, which every write
// moves: a command that moved it changed data and is propagated.
func (e *Engine) Dirty() int64 { return e.stats.Dirty }
