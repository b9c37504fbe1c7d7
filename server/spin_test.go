package server

import (
	"testing"
	"time"
)

func TestSpinnerNeverSpinsForRoundTrips(t *testing.T) {
	// One client waiting for each reply: every sleep lasts its round trip.
	var s spinner
	for range 1000 {
		if s.worth() {
			t.Fatal("spins although no sleep was shorter than the window")
		}
		s.slept(40 * time.Microsecond)
	}
}

func TestSpinnerEarnsAndLosesCredit(t *testing.T) {
	var s spinner
	s.slept(2 * time.Microsecond) // a spin would have caught this one
	if !s.worth() {
		t.Fatal("a sleep shorter than the window earned no spin")
	}
	for range 100 { // spins that keep finding work keep it spinning
		s.spun(true)
	}
	if s.credit != spinCreditMax {
		t.Fatalf("credit %d after many good spins, want the cap %d", s.credit, spinCreditMax)
	}
	failures := 0
	for s.worth() {
		s.spun(false)
		failures++
	}
	if failures > 4 { // halving from the cap of 8
		t.Fatalf("took %d failed spins to stop spinning", failures)
	}
	s.slept(spinWindow) // not shorter than the window: no credit
	if s.worth() {
		t.Fatal("a sleep as long as the window earned a spin")
	}
}

// TestAwaitSpinsThenSleeps drives a loop's wait with a full credit: with
// nothing ready it spins, loses half its credit, then sleeps out the
// timeout and returns nothing; a wake ends a wait with no limit.
func TestAwaitSpinsThenSleeps(t *testing.T) {
	p, err := newPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	l := &loop{poll: p}
	l.spin.credit = spinCreditMax
	events, err := l.await(5 * time.Millisecond)
	if err != nil || len(events) != 0 {
		t.Fatalf("await with nothing ready: %v, %v", events, err)
	}
	if l.spin.credit != spinCreditMax/2 {
		t.Fatalf("credit %d after a failed spin, want %d", l.spin.credit, spinCreditMax/2)
	}
	go func() {
		time.Sleep(time.Millisecond)
		p.wake()
	}()
	if _, err := l.await(-1); err != nil { // no limit: only the wake ends it
		t.Fatal(err)
	}
}
