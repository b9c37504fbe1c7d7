package engine

import "testing"

// TestFamilyRegistries: each engine holds its own state per family slot;
// timer kinds are distinct and sit between expiry and block timeouts; a
// type number or name taken twice is refused.
func TestFamilyRegistries(t *testing.T) {
	a, b := New(Options{}), New(Options{})
	delayState.of(a).acked = 5
	if delayState.of(b).acked != 0 {
		t.Fatal("two engines share a family's state")
	}
	if timerDelay <= TimerExpire || timerDelay >= TimerBlock || timerKinds[timerDelay].name != "delay" {
		t.Fatalf("DELAY's timer kind %d (%q)", timerDelay, timerKinds[timerDelay].name)
	}
	for _, dup := range []struct {
		t    Type
		name string
	}{{TypeDelay, "other"}, {99, "delay"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("registerType(%d, %q) was accepted", dup.t, dup.name)
				}
			}()
			registerType(dup.t, dup.name, nil)
		}()
	}
	if got, ok := TypeByName("DELAY"); !ok || got != TypeDelay || TypeDelay.String() != "delay" {
		t.Fatalf("TypeByName(DELAY) = %d %v", got, ok)
	}
}
