package engine

import (
	"runtime"
	"strings"
	"time"

	"github.com/tidwall/btree"
)

// TimerKind says what a scheduled entry is for. Every time-driven thing in
// the engine (key expiry, blocked clients' timeouts, the native families'
// due times, leases and presence) is an entry in the one scheduler.
type TimerKind uint8

// The engine's own timer kinds; families register theirs between the two
// (registerTimerKind, family.go).
const (
	TimerExpire TimerKind = 0  // a key's deadline (db.go)
	TimerBlock  TimerKind = 63 // a blocked client's timeout (blocking.go)
)

// Timer is one scheduled entry, ordered by (When, Kind, DB, Key, Member).
type Timer struct {
	When   int64 // unix ms
	Kind   TimerKind
	DB     uint8 // the contents' number, DB.phys: it follows SWAPDB
	Key    string
	Member string
}

func timerLess(a, b Timer) bool {
	switch {
	case a.When != b.When:
		return a.When < b.When
	case a.Kind != b.Kind:
		return a.Kind < b.Kind
	case a.DB != b.DB:
		return a.DB < b.DB
	case a.Key != b.Key:
		return a.Key < b.Key
	}
	return a.Member < b.Member
}

// scheduler is an ordered index of deadlines and the goroutine that sleeps
// until the earliest one. There is no sampling and no per-item timer: a
// deadline fires when it is reached, however many others are pending.
type scheduler struct {
	items *btree.BTreeG[Timer]
	armed int64 // deadline the loop sleeps until (0: none)
	wake  chan struct{}
	// bytes estimates the heap the entries hold, counted as they come and
	// go, so that the memory meter sees a key's deadline when it is set
	// rather than at the next collection (evict_mem.go).
	bytes int64
}

// timerBytes is an entry's share of the tree and its copy of the key.
func timerBytes(t Timer) int64 { return 64 + int64(roundAlloc(len(t.Key))) }

// add and remove keep bytes with the tree.
func (s *scheduler) add(t Timer) {
	if _, replaced := s.items.Set(t); !replaced {
		s.bytes += timerBytes(t)
	}
}

func (s *scheduler) remove(t Timer) {
	if _, found := s.items.Delete(t); found {
		s.bytes -= timerBytes(t)
	}
}

// fireBudget and fireTimeBudget bound the entries fired per lock hold, so
// a million keys expiring in the same millisecond cannot stall clients: at
// most fireBudget entries, and no more once fireTimeBudget has passed
// (an entry's cost varies: a key with a big value, a queue redelivering).
// The timer loop yields to waiting clients, then takes the lock again for
// the rest.
const (
	fireBudget     = 1000
	fireTimeBudget = 500 * time.Microsecond
)

func newScheduler() scheduler {
	return scheduler{
		items: btree.NewBTreeGOptions(timerLess, btree.Options{NoLocks: true}),
		wake:  make(chan struct{}, 1),
	}
}

// schedule adds an entry; the loop is woken if it is now the earliest.
func (e *Engine) schedule(t Timer) {
	// Keys reach here as views of a command's arguments or of a record:
	// the entry keeps a copy.
	t.Key = strings.Clone(t.Key)
	if e.rx.native.held != nil {
		e.rx.native.held.Delete(t) // rescheduled: no longer waiting for a tick
	}
	e.sched.add(t)
	if e.sched.armed == 0 || t.When < e.sched.armed {
		e.sched.armed = t.When
		select {
		case e.sched.wake <- struct{}{}:
		default:
		}
	}
}

// unschedule removes an entry.
func (e *Engine) unschedule(t Timer) {
	e.sched.remove(t)
	if e.rx.native.held != nil {
		e.rx.native.held.Delete(t)
	}
}

// fireDue fires entries due at e.now, at most budget of them, and reports
// whether more are due.
func (e *Engine) fireDue(budget int) (more bool) {
	start := time.Now()
	if e.onExpiry != nil {
		defer e.observeExpiry(start, e.stats.ExpiredKeys)
	}
	for i := 0; i < budget; i++ {
		if i&15 == 15 && time.Since(start) >= fireTimeBudget {
			break
		}
		t, ok := e.sched.items.Min()
		if !ok || t.When > e.now {
			return false
		}
		e.sched.remove(t)
		if nativeKind(t.Kind) {
			if e.holdNative(t) {
				continue // a replica waits for its master's tick
			}
			if e.rx.native.onFired != nil {
				e.rx.native.onFired(e.now)
			}
		}
		timerKinds[t.Kind].fire(e, t)
	}
	t, ok := e.sched.items.Min()
	return ok && t.When <= e.now
}

// RunTimers fires everything due by the clock's current time. The timer loop
// calls it; tests with a ManualClock call it after advancing the clock.
func (e *Engine) RunTimers() {
	for {
		e.Lock()
		if e.frozen {
			e.Unlock()
			return
		}
		more := e.fireDue(fireBudget)
		e.ServeBlocked()
		e.Unlock()
		if !more {
			return
		}
	}
}

// PendingTimers is the number of scheduled entries.
func (e *Engine) PendingTimers() int { return e.sched.items.Len() }

// timerLoop sleeps until the earliest deadline, fires what is due and goes
// back to sleep; schedule() wakes it when an earlier deadline appears.
func (e *Engine) timerLoop() {
	defer close(e.stopped)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		e.Lock()
		if e.frozen {
			thawed := e.thawed
			e.Unlock()
			select {
			case <-e.stop:
				return
			case <-thawed:
			}
			continue
		}
		more := e.fireDue(fireBudget)
		e.ServeBlocked() // a timer coming due may make a key servable
		next := int64(0)
		if t, ok := e.sched.items.Min(); ok {
			next = t.When
		}
		e.sched.armed = next
		e.Unlock()
		if more {
			// Let a client waiting for the lock in before the next batch:
			// a mutex lets the goroutine that just released it take it
			// again first.
			runtime.Gosched()
			continue
		}
		wait := time.Hour
		if _, manual := e.clock.(*ManualClock); manual {
			// Only RunTimers, called after the clock moves, fires on a
			// manual clock: waiting in real time would mean nothing.
			next = 0
		}
		if next != 0 {
			// Sleep to the exact instant, not a whole number of ms from a
			// truncated "now", or every deadline would fire up to 1 ms late.
			if wait = time.UnixMilli(next).Sub(e.clock.Now()); wait <= 0 {
				continue
			}
		}
		timer.Reset(wait)
		select {
		case <-e.stop:
			return
		case <-e.sched.wake:
		case <-timer.C:
		}
	}
}
