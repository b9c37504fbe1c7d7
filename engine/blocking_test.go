package engine

import (
	"testing"
	"time"
)

func TestServeBlockedFIFO(t *testing.T) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	stock := 2 // what key "k" can serve
	var order []int
	mk := func(id int) *Waiter {
		return e.Block(0, [][]byte{[]byte("k"), []byte("other")}, 0, func(key []byte) bool {
			if string(key) != "k" || stock == 0 {
				return false
			}
			stock--
			order = append(order, id)
			return true
		}, nil)
	}
	w1, w2, w3 := mk(1), mk(2), mk(3)
	if e.Blocked() != 3 {
		t.Fatalf("blocked = %d", e.Blocked())
	}
	db.signalReady([]byte("k"))
	db.signalReady([]byte("k")) // signaling twice serves once
	e.ServeBlocked()
	if len(order) != 2 || order[0] != 1 || order[1] != 2 {
		t.Fatalf("served %v, want [1 2] (FIFO, until the key runs dry)", order)
	}
	if !w1.Served() || !w2.Served() || w3.Served() || e.Blocked() != 1 {
		t.Fatalf("served flags %v %v %v, blocked %d", w1.Served(), w2.Served(), w3.Served(), e.Blocked())
	}
	e.Unblock(w3)
	e.Unblock(w3) // idempotent
	if e.Blocked() != 0 || len(e.waiters) != 0 {
		t.Fatalf("after unblock: blocked %d, waiter lists %d", e.Blocked(), len(e.waiters))
	}
	db.signalReady([]byte("k")) // nobody waits: nothing recorded
	if len(e.ready) != 0 {
		t.Fatal("a key with no waiter was marked ready")
	}
}

// Serving one waiter may make another key ready (BLMOVE pushes to its
// destination); ServeBlocked keeps going until nothing is ready.
func TestServeBlockedCascade(t *testing.T) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	var got []string
	e.Block(0, [][]byte{[]byte("src")}, 0, func(key []byte) bool {
		got = append(got, "moved")
		db.signalReady([]byte("dst"))
		return true
	}, nil)
	e.Block(0, [][]byte{[]byte("dst")}, 0, func(key []byte) bool {
		got = append(got, "popped")
		return true
	}, nil)
	db.signalReady([]byte("src"))
	e.ServeBlocked()
	if len(got) != 2 || got[1] != "popped" {
		t.Fatalf("got %v", got)
	}
}

func TestWatchDirtiedByWrites(t *testing.T) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	var w, other Watch
	e.WatchKey(&w, 0, []byte("a"))
	e.WatchKey(&w, 0, []byte("a"))
	e.WatchKey(&other, 1, []byte("a"))
	db.SetString([]byte("b"), []byte("x"), SetOptions{})
	if w.Dirty() {
		t.Fatal("a write to another key dirtied the watch")
	}
	db.SetString([]byte("a"), []byte("x"), SetOptions{})
	if !w.Dirty() || other.Dirty() {
		t.Fatalf("dirty = %v (db 0), %v (db 1)", w.Dirty(), other.Dirty())
	}
	e.Unwatch(&w)
	if w.Dirty() || w.Len() != 0 || e.watching != 1 {
		t.Fatalf("after unwatch: dirty %v len %d watching %d", w.Dirty(), w.Len(), e.watching)
	}
	// FLUSHDB dirties watches of keys that existed, not of missing ones.
	e.WatchKey(&w, 0, []byte("a"))
	var missing Watch
	e.WatchKey(&missing, 0, []byte("nope"))
	db.Flush()
	if !w.Dirty() || missing.Dirty() {
		t.Fatalf("flush: existing %v, missing %v", w.Dirty(), missing.Dirty())
	}
}

// TestBlockTimeout: a waiter's deadline is an entry in the one scheduler,
// so a manual clock drives it: woken unserved at the deadline, not a
// millisecond before; served or unblocked first, its entry goes.
func TestBlockTimeout(t *testing.T) {
	e, clock, _ := newTestEngine(t)
	now := e.Now()
	woken := 0
	e.Lock()
	w := e.Block(0, [][]byte{b("k")}, now+100, func([]byte) bool { return false }, func() { woken++ })
	if e.PendingTimers() != 1 {
		t.Fatalf("entries %d, want the timeout's", e.PendingTimers())
	}
	e.Unlock()
	clock.Advance(99 * time.Millisecond)
	e.RunTimers()
	if woken != 0 || !w.Waiting() {
		t.Fatalf("woken %d, waiting %v before the deadline", woken, w.Waiting())
	}
	clock.Advance(time.Millisecond)
	e.RunTimers()
	if woken != 1 || w.Waiting() || w.Served() || e.Blocked() != 0 || e.PendingTimers() != 0 {
		t.Fatalf("at the deadline: woken %d waiting %v served %v blocked %d entries %d",
			woken, w.Waiting(), w.Served(), e.Blocked(), e.PendingTimers())
	}

	// Unblocked (a disconnect) or served before its deadline, a waiter
	// leaves no entry.
	e.Lock()
	defer e.Unlock()
	w = e.Block(0, [][]byte{b("k")}, e.Now()+100, func([]byte) bool { return false }, nil)
	e.Unblock(w)
	served := e.Block(0, [][]byte{b("k")}, e.Now()+100, func([]byte) bool { return true }, nil)
	e.DB(0).signalReady(b("k"))
	e.ServeBlocked()
	if !served.Served() || e.PendingTimers() != 0 || len(e.timedWaiters) != 0 {
		t.Fatalf("served %v, entries %d, timed waiters %d", served.Served(), e.PendingTimers(), len(e.timedWaiters))
	}
}

// TestBlockTimeoutLosesToSameInstant: a key made ready by an entry that
// fires at the waiter's deadline serves the waiter instead of timing it
// out (a DELAY timer due exactly at a BLOCK's end is delivered).
func TestBlockTimeoutLosesToSameInstant(t *testing.T) {
	e, clock, _ := newTestEngine(t)
	db := e.DB(0)
	e.Lock()
	if _, _, err := db.DelayAdd(b("q"), b("m"), DelayAddArgs{Due: e.Now() + 100}); err != nil {
		t.Fatal(err)
	}
	var got string
	w := e.Block(0, [][]byte{b("q")}, e.Now()+100, func(key []byte) bool {
		fired, _, _ := db.DelayPop(key, 1, 0)
		if len(fired) == 0 {
			return false
		}
		got = fired[0].Member
		return true
	}, nil)
	e.Unlock()
	clock.Advance(100 * time.Millisecond)
	e.RunTimers()
	if !w.Served() || got != "m" {
		t.Fatalf("served %v with %q, want the timer due at the deadline", w.Served(), got)
	}
}
