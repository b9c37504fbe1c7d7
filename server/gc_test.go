package server

import "testing"

func TestGCPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		live, scan uint64
		maxMemory  int64
		want       int
	}{
		{0, 0, 0, gcMaxPercent},
		{1 * mb, 1 * mb, 0, gcMaxPercent},  // 64 MB of headroom would be 6400%
		{16 * mb, 16 * mb, 0, 400},         // 64 MB over 16 MB live
		{64 * mb, 64 * mb, 0, 100},         // all scannable: 100% from here on
		{4096 * mb, 4096 * mb, 0, 100},     // never below it while all is scanned
		{4096 * mb, 64 * mb, 0, 12},        // mostly flat pages: an eighth of them
		{4096 * mb, 1024 * mb, 0, 25},      // the scannable part sets the headroom
		{100000 * mb, 100 * mb, 0, 12},     // an eighth of the pages, not below 10%
		{1 * mb, 1 * mb, 100 * mb, 100},    // maxmemory: garbage counts, keep the default
		{gcMinHeadroom/3 + 1, 0, 0, 299},   // rounds down
		{8 * mb, 16 * mb, 0, gcMaxPercent}, // scan read later than live: capped at live
		{1024 * mb, 0, 0, 12},              // all pages: an eighth of them
	} {
		if got := gcPercentFor(tc.live, tc.scan, tc.maxMemory); got != tc.want {
			t.Errorf("gcPercentFor(%d, %d, %d) = %d, want %d", tc.live, tc.scan, tc.maxMemory, got, tc.want)
		}
	}
}

func TestGCPacerReleasesOncePerIdleSpell(t *testing.T) {
	p := &gcPacer{}
	released := 0
	tick := func(ops int64, spare uint64) {
		before := p.released
		p.releaseWhenIdle(ops, spare)
		if p.released && !before {
			released++
		}
	}
	for range 3 * gcIdleTicks {
		tick(5, 100<<20) // idle with garbage: one release
	}
	tick(6, 100<<20) // a command ends the spell
	for range gcIdleTicks - 1 {
		tick(6, 100<<20) // not idle long enough yet
	}
	if released != 1 {
		t.Fatalf("released %d times, want 1", released)
	}
	tick(6, 100<<20)
	if released != 2 {
		t.Fatalf("a second idle spell released %d times in all, want 2", released)
	}
}
