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

// lateBounds are the upper bounds, in seconds, of a lateness histogram's
// buckets: from the scheduler's millisecond precision to a consumer a
// minute behind.
var lateBounds = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// lateHistogram counts every lateness since start (or CONFIG RESETSTAT)
// by bucket, for /metrics: a Prometheus histogram, unlike the window's
// percentiles of the latest samples. Recording is a bucket search and
// three adds; the engine lock guards it.
type lateHistogram struct {
	counts [16]uint64 // by bucket of lateBounds, the last one +Inf
	n      uint64
	sumNs  int64
}

func (h *lateHistogram) record(d time.Duration) {
	d = max(d, 0)
	s := d.Seconds()
	i := 0
	for i < len(lateBounds) && s > lateBounds[i] {
		i++
	}
	h.counts[i]++
	h.n++
	h.sumNs += int64(d)
}

// Histogram is a histogram's state: cumulative counts by upper bound (in
// seconds, +Inf left out: it is Count), the count and the sum in seconds.
type Histogram struct {
	Bounds     []float64
	Cumulative []uint64
	Count      uint64
	Sum        float64
}

// LateCounts is a lateness histogram copied out as a value: reading it
// under the engine lock allocates nothing (an allocation there may be
// made to help the garbage collector, holding the lock for milliseconds).
type LateCounts lateHistogram

// Histogram turns the counts into a Histogram (off the lock).
func (h LateCounts) Histogram() Histogram {
	out := Histogram{Bounds: lateBounds, Cumulative: make([]uint64, len(lateBounds)), Count: h.n,
		Sum: time.Duration(h.sumNs).Seconds()}
	var c uint64
	for i := range lateBounds {
		c += h.counts[i]
		out.Cumulative[i] = c
	}
	return out
}
