package server

import (
	"runtime"
	"testing"
)

// TestSetProcsAddsAPPerLoop: the runtime's default plus one P per event
// loop, and nothing changed when GOMAXPROCS is in the environment.
func TestSetProcsAddsAPPerLoop(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	t.Setenv("GOMAXPROCS", "")
	if n := SetProcs(2); n != before+2 || runtime.GOMAXPROCS(0) != before+2 {
		t.Fatalf("SetProcs(2) = %d, GOMAXPROCS %d; want %d", n, runtime.GOMAXPROCS(0), before+2)
	}
	runtime.GOMAXPROCS(before)
	t.Setenv("GOMAXPROCS", "1")
	if n := SetProcs(2); n != 0 || runtime.GOMAXPROCS(0) != before {
		t.Fatalf("with GOMAXPROCS set, SetProcs(2) = %d and GOMAXPROCS is %d; want 0 and %d", n, runtime.GOMAXPROCS(0), before)
	}
}
