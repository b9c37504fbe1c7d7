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
