package engine

import "github.com/revolver-db/revolver/flat"

// On a replica, keys die only when the master says so: its stream carries a
// DEL for every key it expires or evicts. Deleting a key the moment its
// deadline passes here could lose it for good, since the master may have
// moved the deadline in a write still on its way. So, as Redis's replicas
// do, a replica reports a key past its deadline absent to its clients
// without deleting it, the master's own commands still see it, and deadline
// timers that fire are held until the replica is promoted.

// replicaExpiry is the engine's state for that. DEBUG SET-ACTIVE-EXPIRE 0
// holds fired deadline timers the same way.
type replicaExpiry struct {
	on       bool    // the server follows a master
	applying bool    // the master's stream runs now
	inactive bool    // DEBUG SET-ACTIVE-EXPIRE 0: only lookups expire keys
	held     []Timer // deadline timers that fired while on or inactive
	pruneAt  int     // len(held) that makes it worth pruning
	native   nativeReplica
}

// SetReplica turns the replica's expiry rule on or off. Turned off (the
// replica is promoted), the deadlines that passed meanwhile are applied.
// Under the lock.
func (e *Engine) SetReplica(on bool) {
	if e.rx.on == on {
		return
	}
	e.rx.on, e.rx.applying = on, false
	e.rx.native.masterNow = 0
	if !on {
		e.releaseHeldNative()
	}
	e.releaseHeldExpiries()
}

// SetActiveExpire is DEBUG SET-ACTIVE-EXPIRE: off, keys past their deadline
// are deleted only when a command finds them. Under the lock.
func (e *Engine) SetActiveExpire(on bool) {
	e.rx.inactive = !on
	e.releaseHeldExpiries()
}

// releaseHeldExpiries applies the deadlines held, once neither rule holds
// them any longer.
func (e *Engine) releaseHeldExpiries() {
	if e.rx.on || e.rx.inactive {
		return
	}
	held := e.rx.held
	e.rx.held, e.rx.pruneAt = nil, 0
	for _, t := range held {
		e.fireExpire(t)
	}
}

// SetApplyingMaster marks the master's commands running (on) or done.
// Under the lock.
func (e *Engine) SetApplyingMaster(on bool) {
	e.rx.applying = on
	switch {
	case on && e.rx.native.masterNow != 0:
		e.now = e.rx.native.masterNow // the master's time for its native commands
	case !on && e.rx.native.masterNow != 0:
		e.Refresh()
	}
}

// pastDeadline reports whether r's deadline has passed for the command
// running now: never for the master's stream on a replica.
func (db *DB) pastDeadline(r flat.Record) bool {
	at := r.Expire()
	return at != 0 && at <= db.e.now && !db.e.rx.applying
}

// holdExpire keeps a deadline timer that fired on a replica for the
// promotion, reporting whether it did. The list is pruned of keys the
// master deleted (or gave another deadline) whenever it doubles.
func (e *Engine) holdExpire(t Timer) bool {
	if !e.rx.on && !e.rx.inactive {
		return false
	}
	e.rx.held = append(e.rx.held, t)
	if len(e.rx.held) < max(e.rx.pruneAt, 1024) {
		return true
	}
	kept := e.rx.held[:0]
	for _, h := range e.rx.held {
		if r := e.timerDB(h).keys.recs.Get(bytesOf(h.Key)); r != nil && r.Expire() == h.When {
			kept = append(kept, h)
		}
	}
	clear(e.rx.held[len(kept):])
	e.rx.held = kept
	e.rx.pruneAt = 2 * len(kept)
	return true
}
