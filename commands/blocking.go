package commands

import (
	"math"
	"time"

	"github.com/revolver-db/revolver/engine"
)

// BlockTimeout parses a blocking command's timeout in seconds (BLPOP,
// BZPOPMIN, ...) as Redis does: a long double, rounded up to whole
// milliseconds; 0 waits forever; a negative value, or one too large for a
// 64-bit millisecond count (which Redis's conversion turns negative), is
// "timeout is negative".
func (c *Ctx) BlockTimeout(arg []byte) (time.Duration, bool) {
	f, ok := engine.ParseLongDouble(arg)
	if !ok {
		c.W.Error("ERR timeout is not a float or out of range")
		return 0, false
	}
	ms := math.Ceil(f * 1000)
	if math.IsNaN(ms) || ms < 0 || ms >= 1<<63 {
		c.W.Error("ERR timeout is negative")
		return 0, false
	}
	if ms >= float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, true // beyond any real deadline: wait forever
	}
	return time.Duration(ms) * time.Millisecond, true
}

// blockDuration is a BLOCK of ms as a wait; one beyond time.Duration's
// range waits for good (0).
func blockDuration(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}
