package engine

import (
	"slices"
	"time"
)

// lateWindow keeps the latest samples of a lateness (how long after its
// instant something happened), for the percentiles a family's INFO section
// reports. Recording is O(1); a summary sorts a copy.
type lateWindow struct {
	samples [lateWindowSize]time.Duration
	n       int // samples recorded, up to the window
	next    int // where the next one goes
}

// lateWindowSize is how many of the latest samples the percentiles cover.
const lateWindowSize = 1024

func (w *lateWindow) record(d time.Duration) {
	w.samples[w.next] = max(d, 0)
	w.next = (w.next + 1) % lateWindowSize
	w.n = min(w.n+1, lateWindowSize)
}

// Lateness summarizes the latest samples of a lateness.
type Lateness struct {
	Samples       int // how many the figures cover
	P50, P99, Max time.Duration
}

func (w *lateWindow) summary() Lateness {
	if w.n == 0 {
		return Lateness{}
	}
	s := slices.Clone(w.samples[:w.n])
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(int(p*float64(len(s))), len(s)-1)] }
	return Lateness{Samples: len(s), P50: at(0.50), P99: at(0.99), Max: s[len(s)-1]}
}
