package engine

import "time"

// SetExpiryObserver has f called, under the engine lock, with the time a
// firing of the scheduler took whenever it expired keys: the latency
// monitor's "expire-cycle" event. Revolver deletes each key at its own
// deadline, so a "cycle" is one wake-up of the scheduler.
func (e *Engine) SetExpiryObserver(f func(time.Duration)) { e.onExpiry = f }

func (e *Engine) observeExpiry(start time.Time, expiredBefore int64) {
	if e.stats.ExpiredKeys != expiredBefore {
		e.onExpiry(time.Since(start))
	}
}
