package main

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func TestHistogramSmallValuesExact(t *testing.T) {
	h := NewHistogram()
	for v := int64(0); v < 100; v++ {
		h.Record(v)
	}
	if h.Count() != 100 || h.Min() != 0 || h.Max() != 99 {
		t.Fatalf("count %d min %d max %d", h.Count(), h.Min(), h.Max())
	}
	for _, c := range []struct {
		q    float64
		want int64
	}{{0.5, 49}, {0.99, 98}, {1, 99}, {0, 0}, {0.01, 0}, {0.011, 1}} {
		if got := h.Quantile(c.q); got != c.want {
			t.Errorf("Quantile(%v) = %d, want %d", c.q, got, c.want)
		}
	}
	if m := h.Mean(); m != 49.5 {
		t.Errorf("mean %v", m)
	}
}

func TestHistogramRelativeError(t *testing.T) {
	h := NewHistogram()
	r := rand.New(rand.NewPCG(1, 2))
	vals := make([]int64, 100000)
	for i := range vals {
		// Log-uniform over 100 ns .. 10 s, like latencies.
		vals[i] = int64(math.Exp(math.Log(100) + r.Float64()*(math.Log(1e10)-math.Log(100))))
		h.Record(vals[i])
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, q := range []float64{0.1, 0.5, 0.9, 0.99, 0.999, 0.9999} {
		exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
		got := h.Quantile(q)
		if got < exact {
			t.Errorf("q=%v: %d understates the exact %d", q, got, exact)
		}
		if rel := float64(got-exact) / float64(exact); rel > 1.0/128 {
			t.Errorf("q=%v: %d vs exact %d, relative error %.4f > 1/128", q, got, exact, rel)
		}
	}
	if h.Quantile(1) != vals[len(vals)-1] || h.Max() != vals[len(vals)-1] {
		t.Errorf("max %d, quantile(1) %d, want %d", h.Max(), h.Quantile(1), vals[len(vals)-1])
	}
}

func TestHistogramBucketsRoundTrip(t *testing.T) {
	// Every value lands in a bucket whose upper bound is >= the value and
	// whose predecessor's upper bound is < the value.
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100000; i++ {
		v := int64(r.Uint64() >> (1 + r.IntN(62)))
		idx := histIndex(v)
		if idx < 0 || idx >= histBuckets {
			t.Fatalf("index %d out of range for %d", idx, v)
		}
		if histUpper(idx) < v || (idx > 0 && histUpper(idx-1) >= v) {
			t.Fatalf("value %d in bucket %d with bounds (%d, %d]", v, idx, histUpper(idx-1), histUpper(idx))
		}
	}
}

func TestHistogramMergeAndEmpty(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	if a.Quantile(0.5) != 0 || a.Max() != 0 || a.Min() != 0 || a.Mean() != 0 {
		t.Fatal("empty histogram should report zeros")
	}
	for i := int64(1); i <= 1000; i++ {
		a.Record(i * 1000)
		b.Record(i * 1000000)
	}
	a.Merge(b)
	a.Merge(NewHistogram())
	a.Merge(nil)
	if a.Count() != 2000 || a.Min() != 1000 || a.Max() != 1000000000 {
		t.Fatalf("merged count %d min %d max %d", a.Count(), a.Min(), a.Max())
	}
	if p := a.Quantile(0.5); p < 1000000 || p > 1000000*129/128 {
		t.Errorf("merged median %d, want about 1e6", p)
	}
}

// An early event (a negative lateness) must not pass for an on-time one:
// it stays out of the distribution and is counted by Below, merges
// included.
func TestHistogramNegativeCountedApart(t *testing.T) {
	h := NewHistogram()
	for v := int64(1000); v <= 10000; v += 1000 {
		h.Record(v)
	}
	h.Record(-5)
	h.RecordDuration(-300 * time.Microsecond)
	if n, lowest := h.Below(); n != 2 || lowest != -300_000 {
		t.Errorf("Below() = %d, %d; want 2, -300000", n, lowest)
	}
	if h.Count() != 10 || h.Min() != 1000 || h.Quantile(0) < 1000 || h.Mean() != 5500 {
		t.Errorf("negatives leaked into the distribution: count %d min %d q0 %d mean %v",
			h.Count(), h.Min(), h.Quantile(0), h.Mean())
	}
	early := NewHistogram()
	early.Record(-7)
	h.Merge(early)
	if n, lowest := h.Below(); n != 3 || lowest != -300_000 || h.Count() != 10 {
		t.Errorf("after a merge: Below() = %d, %d, count %d", n, lowest, h.Count())
	}
	only := NewHistogram()
	only.Merge(early)
	if n, lowest := only.Below(); n != 1 || lowest != -7 || only.Count() != 0 || only.Max() != 0 {
		t.Errorf("merge of negatives only: Below() = %d, %d, count %d, max %d", n, lowest, only.Count(), only.Max())
	}
	if n, lowest := NewHistogram().Below(); n != 0 || lowest != 0 {
		t.Errorf("empty histogram: Below() = %d, %d", n, lowest)
	}
}
