package engine

import "encoding/binary"

// Blocking commands (BLPOP, BZPOPMIN, later DELAY.POP and QUEUE.POPACK)
// park a Waiter on one or more keys. When a write gives such a key something
// to serve, the type's code signals the key ready; after the command that
// did it, the server calls ServeBlocked, which offers each ready key to its
// waiters in the order they blocked (FIFO), until the key is gone; a waiter
// it cannot serve (one for another type) keeps its place.
// Serving runs under the engine lock, so a blocked pop is as atomic as any
// other command.

// Waiter is a client blocked on keys.
type Waiter struct {
	db   int
	keys []string
	// serve tries to serve the waiter from key; it writes the reply and
	// returns true, or returns false when there is nothing for it.
	serve func(key []byte) bool
	// woken is called once the waiter was served or timed out (under the
	// lock).
	woken  func()
	served bool
	linked bool
	// deadline is when the waiter times out (unix ms, 0: never): an entry
	// in the scheduler like any other deadline, so a manual clock drives
	// it too.
	deadline int64
	id       uint64
}

// Served reports whether the waiter was served (and unlinked).
func (w *Waiter) Served() bool { return w.served }

// Waiting reports whether the waiter is still parked: neither served, nor
// timed out, nor unblocked.
func (w *Waiter) Waiting() bool { return w.linked }

// Block parks a waiter on keys of database db until it is served or, when
// deadline (unix ms) is not 0, until the deadline, when it is woken
// unserved.
func (e *Engine) Block(db int, keys [][]byte, deadline int64, serve func(key []byte) bool, woken func()) *Waiter {
	w := &Waiter{db: db, serve: serve, woken: woken, linked: true, deadline: deadline}
	if deadline != 0 {
		if e.timedWaiters == nil {
			e.timedWaiters = map[uint64]*Waiter{}
		}
		e.nextWaiterID++
		w.id = e.nextWaiterID
		e.timedWaiters[w.id] = w
		e.schedule(w.timer())
	}
	if e.waiters == nil {
		e.waiters = map[dbKey][]*Waiter{}
	}
	seen := map[string]bool{}
	for _, k := range keys {
		ks := string(k)
		if seen[ks] {
			continue
		}
		seen[ks] = true
		w.keys = append(w.keys, ks)
		wk := dbKey{db, ks}
		e.waiters[wk] = append(e.waiters[wk], w)
	}
	e.blocked++
	return w
}

// Unblock removes a waiter that gives up (timeout, disconnect, CLIENT
// UNBLOCK). It is a no-op for a waiter already served.
func (e *Engine) Unblock(w *Waiter) {
	if !w.linked {
		return
	}
	w.linked = false
	e.blocked--
	if w.deadline != 0 {
		e.unschedule(w.timer())
		delete(e.timedWaiters, w.id)
	}
	for _, k := range w.keys {
		wk := dbKey{w.db, k}
		list := e.waiters[wk]
		if len(list) > 0 && list[0] == w {
			// The oldest waiter, which ServeBlocked serves first: slicing
			// keeps a broadcast to n waiters (ROOM.PULL) O(n), not O(n²).
			list[0] = nil
			list = list[1:]
		} else {
			for i, x := range list {
				if x == w {
					list = append(list[:i], list[i+1:]...)
					break
				}
			}
		}
		if len(list) == 0 {
			delete(e.waiters, wk)
		} else {
			e.waiters[wk] = list
		}
	}
}

// Blocked is the number of parked waiters.
func (e *Engine) Blocked() int { return e.blocked }

// HasReady reports whether ServeBlocked has keys to offer.
func (e *Engine) HasReady() bool { return len(e.ready) > 0 && !e.frozen }

// signalReady notes that key may now serve a waiter. Types call it when a
// write adds to a key blocking commands pop from; it costs one comparison
// when nobody is blocked.
func (db *DB) signalReady(key []byte) {
	e := db.e
	if e.blocked == 0 {
		return
	}
	wk := dbKey{db.id, str(key)}
	if _, ok := e.waiters[wk]; !ok {
		return
	}
	for _, r := range e.ready {
		if r == wk {
			return
		}
	}
	wk.key = string(key)
	e.ready = append(e.ready, wk)
}

// SignalReady is signalReady for callers outside the engine (a key whose
// readiness the engine cannot see, such as a timer coming due).
func (db *DB) SignalReady(key []byte) { db.signalReady(key) }

// ServeBlocked offers every ready key to its waiters, oldest first, and
// repeats while serving makes more keys ready (BLMOVE pushes to its
// destination). The server calls it after each command.
func (e *Engine) ServeBlocked() {
	if e.frozen {
		return // served when the script ends
	}
	for len(e.ready) > 0 {
		ready := e.ready
		e.ready = nil
		for _, wk := range ready {
			key := []byte(wk.key)
			for i := 0; ; {
				list := e.waiters[wk]
				if i >= len(list) {
					break
				}
				w := list[i]
				if !w.serve(key) {
					// A waiter for another type (BZPOPMIN on what is now a
					// list) cannot be served, but those behind it may be:
					// Redis skips it. A key that is gone is still offered
					// to all: XREADGROUP answers that its stream went.
					i++
					continue
				}
				w.served = true
				e.Unblock(w) // list[i] is now the next waiter
				if w.woken != nil {
					w.woken()
				}
			}
		}
	}
}

// timer is the waiter's scheduler entry: its id, big-endian, as the member.
func (w *Waiter) timer() Timer {
	return Timer{When: w.deadline, Kind: TimerBlock, Member: string(binary.BigEndian.AppendUint64(nil, w.id))}
}

// fireBlockTimeout is the scheduler's handler for blocked clients'
// timeouts: the waiter is woken unserved and answers as timed out.
func (e *Engine) fireBlockTimeout(t Timer) {
	if len(t.Member) != 8 {
		return
	}
	w := e.timedWaiters[binary.BigEndian.Uint64([]byte(t.Member))]
	if w == nil {
		return
	}
	// A key made ready at this same instant (a timer due at the deadline)
	// serves the waiter first.
	e.ServeBlocked()
	if !w.linked {
		return
	}
	e.Unblock(w)
	if w.woken != nil {
		w.woken()
	}
}
