package engine

// A script that runs past busy-reply-threshold lets go of the engine lock
// between its commands, so that other clients can be answered BUSY (and
// kill it), as Redis serves events while a slow script runs. While it does
// the engine is frozen: nothing but the script changes data. Timers wait,
// blocked clients are not served, what a closing client held is handed
// back only later, and the engine's time stays the script's. Thaw, under
// the lock again when the script ends, lets all of it happen.

// Freeze starts the frozen state. Call it under the lock.
func (e *Engine) Freeze() {
	e.frozen = true
	e.thawed = make(chan struct{})
}

// Frozen reports whether a script holds the data.
func (e *Engine) Frozen() bool { return e.frozen }

// Thaw ends the frozen state: the hooks of the clients that closed
// meanwhile run, and the timer loop goes on. Call it under the lock.
func (e *Engine) Thaw() {
	e.frozen = false
	close(e.thawed)
	closed := e.closedFrozen
	e.closedFrozen = nil
	for _, id := range closed {
		e.ClientClosed(id)
	}
	e.Refresh()
}
