package server

import "time"

// pollEvent is one ready connection as a poller reports it.
type pollEvent struct {
	fd    int
	flags pollFlags
}

type pollFlags uint8

const (
	pollRead  pollFlags = 1 << iota // input, the peer's end, or an error: a read tells which
	pollWrite                       // room to write, or an error a write will report
)

// pollMillis turns a wait into a poll timeout in whole milliseconds,
// rounded up so a deadline is never reported early; negative waits forever.
func pollMillis(d time.Duration) int {
	if d < 0 {
		return -1
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return int(min(ms, 1<<30))
}
