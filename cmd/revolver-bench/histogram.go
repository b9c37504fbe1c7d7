package main

import (
	"math"
	"math/bits"
	"time"
)

// Histogram is a log-linear latency histogram in the spirit of HDR
// histograms: values below 128 ns are exact, every power-of-two range above
// is split into 128 equal buckets, so a recorded value is known to within
// 1/128 (0.8%) whatever its magnitude, in a fixed 60 KB of counters.
// Recording is one index computation and one increment; each load-generating
// goroutine owns one and they are merged at the end.
//
// (github.com/HdrHistogram/hdrhistogram-go was considered; it has had no
// release since 2021, and this is all the benchmark needs.)
type Histogram struct {
	counts   []uint64
	total    uint64
	min, max int64
	sum      float64
	// Negative values (an event before its due time) are counted apart,
	// never as 0, so an early event cannot pass for an on-time one.
	below  uint64
	lowest int64
}

const (
	histSubBits = 7
	histSub     = 1 << histSubBits // buckets per power of two
	histBuckets = histSub + (64-histSubBits)*histSub
)

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{counts: make([]uint64, histBuckets), min: math.MaxInt64}
}

func histIndex(v int64) int {
	if v < histSub {
		return int(v)
	}
	k := bits.Len64(uint64(v)) - 1 // v in [2^k, 2^(k+1)), k >= histSubBits
	shift := k - histSubBits
	sub := int(uint64(v)>>shift) - histSub
	return histSub + shift*histSub + sub
}

// histUpper is the largest value that lands in bucket i (what HDR calls the
// highest equivalent value): percentiles never understate.
func histUpper(i int) int64 {
	if i < histSub {
		return int64(i)
	}
	shift := (i - histSub) / histSub
	sub := (i - histSub) % histSub
	lower := int64(histSub+sub) << shift
	return lower + (int64(1) << shift) - 1
}

// Record adds one value. A negative value is kept out of the distribution
// (Count, Min, Mean, quantiles) and counted by Below instead.
func (h *Histogram) Record(v int64) {
	if v < 0 {
		h.below++
		h.lowest = min(h.lowest, v)
		return
	}
	h.counts[histIndex(v)]++
	h.total++
	h.sum += float64(v)
	if v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
}

// RecordDuration records d in nanoseconds.
func (h *Histogram) RecordDuration(d time.Duration) { h.Record(int64(d)) }

// Merge adds o's counts to h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.total+o.below == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.below += o.below
	h.lowest = min(h.lowest, o.lowest)
	h.total += o.total
	h.sum += o.sum
	h.min = min(h.min, o.min)
	h.max = max(h.max, o.max)
}

// Count is the number of recorded values, negative ones apart.
func (h *Histogram) Count() uint64 { return h.total }

// Below is how many negative values were recorded and the most negative
// of them (0 when none).
func (h *Histogram) Below() (n uint64, lowest int64) { return h.below, h.lowest }

// Max is the largest recorded value, exactly.
func (h *Histogram) Max() int64 {
	if h.total == 0 {
		return 0
	}
	return h.max
}

// Min is the smallest recorded value, exactly.
func (h *Histogram) Min() int64 {
	if h.total == 0 {
		return 0
	}
	return h.min
}

// Mean is the average of the recorded values.
func (h *Histogram) Mean() float64 {
	if h.total == 0 {
		return 0
	}
	return h.sum / float64(h.total)
}

// Quantile returns the value at quantile q in [0, 1]: the upper bound of
// the bucket holding the ceil(q*n)-th smallest value, capped by the
// recorded maximum.
func (h *Histogram) Quantile(q float64) int64 {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(histUpper(i), h.max)
		}
	}
	return h.max
}
