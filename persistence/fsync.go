package persistence

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// Fsync is the appendfsync policy: when the change log reaches the disk.
// Every group commit reaches the OS (write(2)) before it is acknowledged
// under any policy, so a process crash never loses an acknowledged write.
// Pebble's own syncs are off the acknowledgment path and not affected.
type Fsync int32

const (
	// FsyncEverySec fsyncs the log about once a second: power loss loses at
	// most about a second of writes. The zero value, like Redis's default.
	FsyncEverySec Fsync = iota
	// FsyncAlways fsyncs before a write is acknowledged; concurrent writers
	// share each fsync.
	FsyncAlways
	// FsyncNo leaves flushing to the OS.
	FsyncNo
)

// ParseFsync parses an appendfsync value, case-insensitively like Redis.
func ParseFsync(s string) (Fsync, error) {
	switch strings.ToLower(s) {
	case "always":
		return FsyncAlways, nil
	case "everysec":
		return FsyncEverySec, nil
	case "no":
		return FsyncNo, nil
	}
	return 0, fmt.Errorf("invalid appendfsync value %q (want always, everysec or no)", s)
}

// String returns the appendfsync spelling of f.
func (f Fsync) String() string {
	switch f {
	case FsyncAlways:
		return "always"
	case FsyncEverySec:
		return "everysec"
	case FsyncNo:
		return "no"
	}
	return fmt.Sprintf("Fsync(%d)", int32(f))
}

// fsyncBounds are the upper bounds, in seconds, of the fsync latency
// histogram's buckets: from a fast SSD's fdatasync to a stalled disk.
var fsyncBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// fsyncHistogram counts the change log's fsyncs by duration, for
// /metrics. Recording is a bucket search and three atomic adds, off the
// engine lock (fsyncs run in the writer and the ticker).
type fsyncHistogram struct {
	counts [16]atomic.Uint64 // by bucket of fsyncBounds, the last one +Inf
	n      atomic.Uint64
	sumNs  atomic.Int64
}

func (h *fsyncHistogram) record(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(fsyncBounds) && s > fsyncBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNs.Add(int64(d))
	h.n.Add(1)
}

// FsyncHistogram is the change log's fsync latencies since the store
// opened: cumulative counts by upper bound in seconds (+Inf left out: it
// is Count), the count and the sum in seconds.
type FsyncHistogram struct {
	Bounds     []float64
	Cumulative []uint64
	Count      uint64
	Sum        float64
}

// FsyncLatency returns the fsync latency histogram. Read while fsyncs go
// on, a bucket may count one the count does not yet (or the reverse):
// the count is taken as the last bucket's total so the two agree.
func (s *Store) FsyncLatency() FsyncHistogram {
	h := &s.fsyncHist
	out := FsyncHistogram{Bounds: fsyncBounds, Cumulative: make([]uint64, len(fsyncBounds)),
		Sum: time.Duration(h.sumNs.Load()).Seconds()}
	var c uint64
	for i := range fsyncBounds {
		c += h.counts[i].Load()
		out.Cumulative[i] = c
	}
	out.Count = c + h.counts[len(fsyncBounds)].Load()
	return out
}
