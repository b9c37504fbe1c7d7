package engine

import (
	"testing"
	"time"
)

// TestExpiryObserver: the latency monitor's expire-cycle hook is called for
// a scheduler firing that expired keys, and not for one that expired none.
func TestExpiryObserver(t *testing.T) {
	e, clock, _ := newTestEngine(t)
	calls := 0
	e.Lock()
	e.SetExpiryObserver(func(d time.Duration) {
		if d < 0 {
			t.Errorf("negative duration %v", d)
		}
		calls++
	})
	db := e.DB(0)
	for _, k := range []string{"a", "b", "c"} {
		db.SetString(b(k), b("v"), SetOptions{ExpireAt: e.Now() + 10})
	}
	e.Unlock()
	e.RunTimers() // nothing due yet
	if calls != 0 {
		t.Fatalf("observer called %d times before any key expired", calls)
	}
	clock.Advance(time.Second)
	e.RunTimers()
	if calls != 1 || e.Stats().ExpiredKeys != 3 {
		t.Fatalf("after the keys' deadline: %d calls, %d expired", calls, e.Stats().ExpiredKeys)
	}
}
