package server

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// GC pacing. Go collects when the heap has grown by GOGC percent of what
// the last cycle left live. Two things make its default wrong here:
//
//   - A cycle's cost is the heap it must scan, and the keyspace's records
//     live in pointer-free pages (flat/, decision 0012) that it marks
//     without scanning. Growth of 100% of the live heap would double a
//     server's memory for nothing: the headroom is 100% of the scannable
//     heap (what cycles cost), or 1/8 of the rest, whichever is more.
//   - A server whose data is small allocates request buffers at 100+ MB/s
//     under a pipelined load, so with a few MB live it would collect many
//     times a second, each cycle with fixed costs and mark workers taking
//     CPU from the commands (about 6% of the server's CPU under
//     redis-benchmark -P 16 against a near-empty keyspace): the headroom is
//     at least gcMinHeadroom.
//
// And an idle server gives back what the last burst of garbage took: a
// second after the last command, a collection and a scavenge return the
// free pages to the OS, so RSS settles near the live heap rather than at
// the heap goal.
//
// With maxmemory set the pacer stays out: garbage counts in used_memory,
// which maxmemory limits, and the user chose the bound. So does an explicit
// GOGC. Under an evicting policy Go's memory limit is maxmemory (evict.go),
// which collects before garbage takes the heap past it.
const (
	gcMinHeadroom = 64 << 20
	gcMinPercent  = 10
	gcMaxPercent  = 800
	// gcUnscannedDiv: the headroom given to pointer-free heap.
	gcUnscannedDiv = 8
	// gcIdleTicks is how many cron ticks without a command make the
	// server idle; gcIdleGarbage how much garbage is worth returning.
	gcIdleTicks   = 10
	gcIdleGarbage = 8 << 20
)

type gcPacer struct {
	sample  []metrics.Sample
	percent int
	off     bool
	// lastOps is the command count at the last tick, idle the ticks since
	// it changed, released whether this idle spell was used to give
	// memory back.
	lastOps  int64
	idle     int
	released bool
}

func newGCPacer() *gcPacer {
	return &gcPacer{
		sample: []metrics.Sample{
			{Name: "/gc/heap/live:bytes"},
			{Name: "/gc/scan/heap:bytes"},
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/heap/free:bytes"},
		},
		percent: 100,
		off:     os.Getenv("GOGC") != "",
	}
}

// gcPercentFor is the GOGC that gives a live heap, scan bytes of it
// scannable, the headroom described above, within [gcMinPercent,
// gcMaxPercent].
func gcPercentFor(live, scan uint64, maxMemory int64) int {
	if maxMemory > 0 {
		return 100
	}
	if live == 0 {
		return gcMaxPercent
	}
	scan = min(scan, live)
	headroom := max(uint64(gcMinHeadroom), scan, (live-scan)/gcUnscannedDiv)
	return int(min(max(headroom*100/live, gcMinPercent), gcMaxPercent))
}

// update re-reads the heap and adjusts the percentage when it moved; ops
// is the server's command count, which tells an idle server.
func (p *gcPacer) update(maxMemory, ops int64) {
	if p.off {
		return
	}
	metrics.Read(p.sample)
	live, scan := p.sample[0].Value.Uint64(), p.sample[1].Value.Uint64()
	objects, free := p.sample[2].Value.Uint64(), p.sample[3].Value.Uint64()
	p.releaseWhenIdle(ops, objects+free-min(live, objects))
	want := gcPercentFor(live, scan, maxMemory)
	// Small drifts of the live heap leave the percentage alone; reaching
	// the default always applies.
	if want == p.percent || want != 100 && want*4 > p.percent*3 && want*4 < p.percent*5 {
		return
	}
	p.percent = want
	debug.SetGCPercent(want)
}

// releaseWhenIdle collects and returns free memory to the OS once per idle
// spell, when the heap holds enough garbage and free pages (spare) to
// matter.
func (p *gcPacer) releaseWhenIdle(ops int64, spare uint64) {
	if ops != p.lastOps {
		p.lastOps, p.idle, p.released = ops, 0, false
		return
	}
	if p.idle++; p.idle < gcIdleTicks || p.released {
		return
	}
	p.released = true
	if spare > gcIdleGarbage {
		debug.FreeOSMemory()
	}
}
