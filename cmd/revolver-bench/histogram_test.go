package main

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
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
	a.Record(-5)
	if a.Min() != 0 {
		t.Errorf("negative values count as 0, min %d", a.Min())
	}
}
