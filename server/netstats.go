package server

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// netStats counts the bytes and system calls of client sockets for INFO
// stats (total_net_input_bytes, total_reads_processed, ...). The socket
// functions have no server at hand, so the counters are the process's: one
// server per process outside tests. A read or write costs one atomic add of
// its size and one of its count, per system call rather than per command.
var netStats struct {
	in, out, reads, writes atomic.Int64
	inKbps, outKbps        atomic.Uint64 // float64 bits, over the last cron second
	// The crons' previous totals. In tests several servers' crons share
	// them, hence the lock.
	mu              sync.Mutex
	lastIn, lastOut int64
	lastAt          time.Time
}

func countRead(n int) {
	netStats.reads.Add(1)
	if n > 0 {
		netStats.in.Add(int64(n))
	}
}

func countWrite(n int) {
	netStats.writes.Add(1)
	if n > 0 {
		netStats.out.Add(int64(n))
	}
}

// sampleNetRates updates the instantaneous rates; the cron calls it once a
// second.
func sampleNetRates(now time.Time) {
	netStats.mu.Lock()
	defer netStats.mu.Unlock()
	in, out := netStats.in.Load(), netStats.out.Load()
	if !netStats.lastAt.IsZero() {
		secs := now.Sub(netStats.lastAt).Seconds()
		if secs > 0 {
			netStats.inKbps.Store(math.Float64bits(float64(in-netStats.lastIn) / 1024 / secs))
			netStats.outKbps.Store(math.Float64bits(float64(out-netStats.lastOut) / 1024 / secs))
		}
	}
	netStats.lastIn, netStats.lastOut, netStats.lastAt = in, out, now
}

func kbps(v *atomic.Uint64) string { return fmt.Sprintf("%.2f", math.Float64frombits(v.Load())) }

// resetNetStats is CONFIG RESETSTAT's part.
func resetNetStats() {
	netStats.in.Store(0)
	netStats.out.Store(0)
	netStats.reads.Store(0)
	netStats.writes.Store(0)
}
