package server

import (
	"math/bits"
	"time"
)

// cmdHistogram is one command's latency distribution for LATENCY HISTOGRAM
// and INFO latencystats. Redis keeps an HdrHistogram per command (1 ns to
// 1 s, two significant digits); this is a smaller log-bucketed one that
// costs one bits.Len64, a few shifts and one increment per command:
//
//   - below 1024 ns, 16 linear buckets of 64 ns;
//   - from 1024 ns to 1 s, one octave [L, 2L) per power of two, cut into
//     a first bucket [L, L+L/128) and 16 buckets of L/16 (the first of which
//     starts at L+L/128).
//
// The first bucket of each octave exists so that the cumulative counts
// LATENCY HISTOGRAM reports are exactly Redis's: Redis reports the counts at
// the top of the HdrHistogram bucket that holds 1024·2^k ns, which is
// 1024·2^k + 1024·2^k/128 - 1 ns (its "highest equivalent value"), and
// labels it with that value in microseconds (1, 2, 4, 8, 16, 33, 66, ...).
// Percentiles come from the same buckets (about 6% resolution).
type cmdHistogram struct {
	calls   int64
	buckets [histBuckets]int64
}

const (
	histLinear     = 16
	histSubBuckets = 17 // per octave
	histMinOctave  = 10 // 1024 ns
	histMaxOctave  = 29 // 1 s < 2^30 ns
	histBuckets    = histLinear + (histMaxOctave-histMinOctave+1)*histSubBuckets
	histMaxValue   = int64(time.Second)
)

// histIndex is the bucket of a duration in nanoseconds.
func histIndex(ns int64) int {
	if ns < 1 {
		ns = 1 // as Redis, which records at least its smallest value
	}
	if ns > histMaxValue {
		ns = histMaxValue
	}
	if ns < 1<<histMinOctave {
		return int(ns >> 6)
	}
	e := bits.Len64(uint64(ns)) - 1
	off := ns - 1<<e
	sub := 0
	if off >= 1<<e>>7 {
		sub = 1 + int(off>>(e-4))
	}
	return histLinear + (e-histMinOctave)*histSubBuckets + sub
}

// histUpper is the largest duration (ns) bucket i holds.
func histUpper(i int) int64 {
	if i < histLinear {
		return int64(i+1)<<6 - 1
	}
	i -= histLinear
	e, sub := uint(i/histSubBuckets+histMinOctave), i%histSubBuckets
	l := int64(1) << e
	if sub == 0 {
		return l + l>>7 - 1
	}
	return l + int64(sub)*(l>>4) - 1
}

func (h *cmdHistogram) record(d time.Duration) {
	h.calls++
	h.buckets[histIndex(int64(d))]++
}

// cdf returns Redis's LATENCY HISTOGRAM buckets: (upper bound in µs,
// cumulative count) at each power of two from 1024 ns, only where the count
// grew.
func (h *cmdHistogram) cdf() [][2]int64 {
	var out [][2]int64
	cum, prev := int64(0), int64(0)
	for i := 0; i < histBuckets; i++ {
		cum += h.buckets[i]
		// A reporting level ends with each octave's first bucket.
		if i < histLinear || (i-histLinear)%histSubBuckets != 0 {
			continue
		}
		if cum > prev {
			out = append(out, [2]int64{histUpper(i) / 1000, cum})
		}
		prev = cum
		if cum == h.calls {
			break
		}
	}
	return out
}

// percentile is the duration (ns) at or below which p percent of the
// calls took: the top of the bucket holding that call, as HdrHistogram's
// value_at_percentile reports the top of its bucket.
func (h *cmdHistogram) percentile(p float64) int64 {
	if h.calls == 0 {
		return 0
	}
	want := int64(p/100*float64(h.calls) + 0.5)
	want = max(want, 1)
	cum := int64(0)
	for i := 0; i < histBuckets; i++ {
		cum += h.buckets[i]
		if cum >= want {
			return histUpper(i)
		}
	}
	return histUpper(histBuckets - 1)
}
