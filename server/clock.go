package server

import (
	"sync/atomic"
	"time"
)

// clockRebase is how often the clock reads the wall clock again.
const clockRebase = 100 * time.Millisecond

// clock is the engine's clock and the one commands are timed with: the wall
// clock as read at most clockRebase ago, advanced by the monotonic clock
// since. Every command reads it (its start is the previous one's end), and a
// read costs one monotonic clock read where time.Now costs two (wall and
// monotonic). Durations are exact; the wall time lags a step of the system
// clock (an NTP correction) by at most clockRebase.
type clock struct{ base atomic.Pointer[time.Time] }

func newClock() *clock {
	c := &clock{}
	t := time.Now()
	c.base.Store(&t)
	return c
}

// Now implements engine.Clock.
func (c *clock) Now() time.Time {
	b := c.base.Load()
	if d := time.Since(*b); d < clockRebase {
		return b.Add(d)
	}
	t := time.Now()
	c.base.Store(&t)
	return t
}
