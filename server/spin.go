package server

import "time"

// A loop that finds nothing ready may poll for up to spinWindow before it
// sleeps. Under load the next request is usually that close: sleeping
// instead costs the loop a context switch, and costs the client that sends
// the request the work of waking it, which on a machine where clients and
// server share the cores is throughput taken from the clients. Spinning
// only pays while it keeps finding work, so the spinner keeps a small
// credit: a spin that found work earns one, a spin that found none halves
// it, and while it has none the loop sleeps, earning one for each sleep a
// spin would have cut short. A client that waits for each reply before it
// sends (a round trip longer than the window) never earns any.
const (
	spinWindow    = 10 * time.Microsecond
	spinCreditMax = 8
)

type spinner struct{ credit int }

// worth reports whether the loop should spin before it sleeps.
func (s *spinner) worth() bool { return s.credit > 0 }

// spun records how a spin ended.
func (s *spinner) spun(found bool) {
	if found {
		s.credit = min(s.credit+1, spinCreditMax)
	} else {
		s.credit /= 2
	}
}

// slept records a sleep that no spin came before, and how long it lasted.
func (s *spinner) slept(d time.Duration) {
	if d < spinWindow {
		s.credit = min(s.credit+1, spinCreditMax)
	}
}
