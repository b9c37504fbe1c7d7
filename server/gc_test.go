package server

import "testing"

func TestGCPercentFor(t *testing.T) {
	for _, tc := range []struct {
		live      uint64
		maxMemory int64
		want      int
	}{
		{0, 0, gcMaxPercent},
		{1 << 20, 0, gcMaxPercent},    // 64 MB of headroom would be 6400%
		{16 << 20, 0, 400},            // 64 MB over 16 MB live
		{64 << 20, 0, 100},            // the default from here on
		{4 << 30, 0, 100},             // never below it
		{1 << 20, 100 << 20, 100},     // maxmemory: garbage counts, keep the default
		{gcMinHeadroom/3 + 1, 0, 299}, // rounds down
	} {
		if got := gcPercentFor(tc.live, tc.maxMemory); got != tc.want {
			t.Errorf("gcPercentFor(%d, %d) = %d, want %d", tc.live, tc.maxMemory, got, tc.want)
		}
	}
}
