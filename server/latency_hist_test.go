package server

import (
	"testing"
	"time"

	"github.com/revolver-db/revolver/commands"
)

func TestHistIndexBounds(t *testing.T) {
	prev := -1
	for _, ns := range []int64{0, 1, 63, 64, 1023, 1024, 1031, 1032, 1087, 1088, 2047, 2048, 2063, 2064,
		32768, 33023, 33024, 1 << 29, int64(time.Second), int64(time.Hour)} {
		i := histIndex(ns)
		if i < prev || i >= histBuckets {
			t.Fatalf("histIndex(%d) = %d after %d (of %d)", ns, i, prev, histBuckets)
		}
		clamped := min(max(ns, 1), histMaxValue)
		if up := histUpper(i); clamped > up || (i > 0 && clamped <= histUpper(i-1)) {
			t.Fatalf("%d ns in bucket %d, which spans (%d, %d]", ns, i, histUpper(i-1), up)
		}
		prev = i
	}
}

// TestHistogramCDF: the reported buckets are Redis's (labels 1, 2, 4, 8,
// 16, 33, 66 µs ...) and each counts the calls up to its label's top.
func TestHistogramCDF(t *testing.T) {
	var h cmdHistogram
	for _, us := range []int64{0, 1, 1, 2, 3, 30, 33, 40, 1000} {
		h.record(time.Duration(us) * time.Microsecond)
	}
	got := h.cdf()
	want := [][2]int64{{1, 3}, {2, 4}, {4, 5}, {33, 7}, {66, 8}, {1056, 9}}
	if len(got) != len(want) {
		t.Fatalf("cdf %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("cdf %v, want %v", got, want)
		}
	}
	if p := h.percentile(50); p < 3000 || p > 3200 { // the 5th of 9 calls: 3 µs
		t.Fatalf("p50 = %d ns, want about 3 µs", p)
	}
	if p := h.percentile(100); p < 1_000_000 || p > 1_070_000 {
		t.Fatalf("p100 = %d ns, want about 1 ms", p)
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h cmdHistogram
	for i := 0; i < b.N; i++ {
		h.record(time.Duration(i&0xffff) * 37)
	}
}

// BenchmarkObserveLatency is what every command pays for the histograms
// and the monitor's threshold check (latency-tracking yes, monitor off).
func BenchmarkObserveLatency(b *testing.B) {
	s := &Server{table: commands.NewTable(commands.Families()...)}
	s.lat.tracking = true
	s.lat.hists = make([]*cmdHistogram, s.table.Count())
	cmd := s.table.Get([]byte("get"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.observeLatency(cmd, time.Duration(300+i&0x3ff))
	}
}
