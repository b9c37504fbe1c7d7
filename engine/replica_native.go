package engine

import "github.com/tidwall/btree"

// A replica runs the native families on its master's clock. Their state
// moves on three kinds of event besides commands: timers coming due (DELAY
// firing, leases ending, presence ageing), a client's disconnect (QUEUE's
// RELEASE-ON-DISCONNECT), and the time a command runs at. Given the same
// state, the same events in the same order at the same times give the same
// state: so a master sends each event (a timer fired, a client gone, the
// time and caller of a native command), and a replica never fires a native
// timer or hooks a disconnect of its own.

// nativeReplica is the engine's part of that, inside replicaExpiry.
type nativeReplica struct {
	held      *btree.BTreeG[Timer] // native timers due by this replica's clock, waiting for the master's tick
	masterNow int64                // the master's time for the command applied now, 0: none given
	onFired   func(at int64)       // a master's hook: a native timer fires now
}

// nativeKind reports whether k is a family's timer (not a key's deadline, a
// blocked client's timeout or eviction's continuation).
func nativeKind(k TimerKind) bool { return k != TimerExpire && k != TimerBlock && k != timerEvict }

// SetNativeTimerHook installs the master's hook, called under the lock
// just before each native timer fires.
func (e *Engine) SetNativeTimerHook(h func(at int64)) { e.rx.native.onFired = h }

// holdNative keeps a native timer a replica's own clock found due; false
// when the engine is no replica.
func (e *Engine) holdNative(t Timer) bool {
	if !e.rx.on {
		return false
	}
	if e.rx.native.held == nil {
		e.rx.native.held = btree.NewBTreeGOptions(timerLess, btree.Options{NoLocks: true})
	}
	e.rx.native.held.Set(t)
	return true
}

// FireNativeTimer is the master's tick on a replica: the first native
// timer due at the master's time at (held, or still scheduled) fires, at
// that time. false when none is due (the states differ, or the replica was
// given a tick twice). Under the lock.
func (e *Engine) FireNativeTimer(at int64) bool {
	var held, sched Timer
	var hok, sok bool
	if e.rx.native.held != nil {
		if held, hok = e.rx.native.held.Min(); hok && held.When > at {
			hok = false
		}
	}
	e.sched.items.Scan(func(t Timer) bool {
		if t.When > at {
			return false
		}
		if nativeKind(t.Kind) {
			sched, sok = t, true
			return false
		}
		return true
	})
	var t Timer
	switch {
	case hok && (!sok || timerLess(held, sched)):
		t = held
		e.rx.native.held.Delete(t)
	case sok:
		t = sched
		e.sched.remove(t)
	default:
		return false
	}
	saved := e.now
	e.now = at
	timerKinds[t.Kind].fire(e, t)
	e.now = saved
	return true
}

// SetMasterClock gives the master's time (unix ms) to the master's next
// commands, until the next call (0: this replica's own clock).
func (e *Engine) SetMasterClock(at int64) {
	e.rx.native.masterNow = at
	if e.rx.applying && at != 0 {
		e.now = at
	}
}

// releaseHeldNative puts the native timers held back in the scheduler, on
// promotion: from now on this engine's own clock fires them.
func (e *Engine) releaseHeldNative() {
	if e.rx.native.held == nil {
		return
	}
	held := e.rx.native.held
	e.rx.native.held = nil
	held.Scan(func(t Timer) bool {
		e.schedule(t)
		return true
	})
}

// ClientClosedByMaster runs the disconnect hooks for a client of the
// master, as the master did.
func (e *Engine) ClientClosedByMaster(client int64) {
	for _, h := range clientHooks {
		h(e, client)
	}
}
