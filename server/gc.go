package server

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// GC pacing. Go collects when the heap has grown by GOGC percent of what
// the last cycle left live. A server whose data is small allocates request
// buffers at 100+ MB/s under a pipelined load, so with a few MB live it
// collects many times a second, each cycle with fixed costs and mark
// workers taking CPU from the commands: about 6% of the server's CPU under
// redis-benchmark -P 16 against a near-empty keyspace. gcPacer gives the
// heap at least gcMinHeadroom to grow into, raising the percentage while the
// live heap is small; from 64 MB live on it is Go's default 100.
//
// With maxmemory set the pacer stays out: garbage counts in used_memory,
// which maxmemory limits, and the user chose the bound. So does an explicit
// GOGC. Under an evicting policy Go's memory limit is maxmemory (evict.go),
// which collects before garbage takes the heap past it.
const (
	gcMinHeadroom = 64 << 20
	gcMaxPercent  = 800
)

type gcPacer struct {
	sample  []metrics.Sample
	percent int
	off     bool
}

func newGCPacer() *gcPacer {
	return &gcPacer{
		sample:  []metrics.Sample{{Name: "/gc/heap/live:bytes"}},
		percent: 100,
		off:     os.Getenv("GOGC") != "",
	}
}

// gcPercentFor is the GOGC that gives live bytes of heap at least
// gcMinHeadroom of growth, within [100, gcMaxPercent].
func gcPercentFor(live uint64, maxMemory int64) int {
	if maxMemory > 0 {
		return 100
	}
	if live == 0 {
		return gcMaxPercent
	}
	return int(min(max(uint64(gcMinHeadroom)*100/live, 100), gcMaxPercent))
}

// update re-reads the live heap and adjusts the percentage when it moved.
func (p *gcPacer) update(maxMemory int64) {
	if p.off {
		return
	}
	metrics.Read(p.sample)
	want := gcPercentFor(p.sample[0].Value.Uint64(), maxMemory)
	// Small drifts of the live heap leave the percentage alone; reaching
	// the default always applies.
	if want == p.percent || want != 100 && want*4 > p.percent*3 && want*4 < p.percent*5 {
		return
	}
	p.percent = want
	debug.SetGCPercent(want)
}
