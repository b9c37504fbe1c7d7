package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInfoFieldsCoverRedis: every field redis-server prints in these INFO
// sections is in Revolver's too (tools key off the names). Fields owned by
// eviction and client tracking exist already (as zeros).
func TestInfoFieldsCoverRedis(t *testing.T) {
	redisConn := dialRaw(t, realRedis(t))
	rev := dialRaw(t, startServer(t).Addr())
	for _, sec := range []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu"} {
		_, want := infoSections(t, redisConn.do("INFO", sec).Str)
		_, got := infoSections(t, rev.do("INFO", sec).Str)
		for name := range want {
			if _, ok := got[name]; !ok {
				t.Errorf("INFO %s lacks %s (redis-server: %s)", sec, name, want[name])
			}
		}
	}
}

func rawInfoInt(t *testing.T, c *rawConn, section, field string) int64 {
	t.Helper()
	_, f := infoSections(t, c.do("INFO", section).Str)
	n, err := strconv.ParseInt(f[field], 10, 64)
	if err != nil {
		t.Fatalf("INFO %s %s: %q", section, field, f[field])
	}
	return n
}

// TestUsedMemoryPeakFollowsTransientAllocation: the peak is sampled with
// used_memory, not only when INFO runs, so a value that comes and goes
// between two INFOs still shows in used_memory_peak. maxmemory, set half
// the value above the memory in use without it, tells when the cron has
// sampled: writes are accepted once it has sampled the heap without the
// value, refused once it has sampled the value, and accepted again once
// its memory is gone. The server is a process of its own: in-process, the
// heap (and so the peak) would hold every earlier test's memory. The value
// is made by the server (SETRANGE), so no big request buffer is involved.
func TestUsedMemoryPeakFollowsTransientAllocation(t *testing.T) {
	p := startProcess(t, t.TempDir(), "--persistence", "off")
	c := dialRaw(t, p.addr)
	const size = 64 << 20
	if before := rawInfoInt(t, c, "memory", "used_memory_peak"); before >= size/2 {
		t.Fatalf("a fresh server's used_memory_peak is already %d", before)
	}
	c.do("MEMORY", "PURGE") // a full collection: no garbage in the baseline
	limit := rawInfoInt(t, c, "memory", "used_memory") + size/2
	c.do("CONFIG", "SET", "maxmemory", strconv.FormatInt(limit, 10))
	waitFor(t, 10*time.Second, "the cron to sample the heap without the value", func() bool {
		return c.do("SET", "small", "v").Str == "OK"
	})
	if v := c.do("SETRANGE", "big", strconv.Itoa(size-1), "x"); v.Int != size {
		t.Fatalf("SETRANGE big: %s", v)
	}
	waitFor(t, 10*time.Second, "the cron to sample the big value", func() bool {
		return strings.HasPrefix(c.do("SET", "small", "v").Str, "OOM")
	})
	c.do("DEL", "big")
	c.do("MEMORY", "PURGE") // a full collection: the value's memory is gone
	waitFor(t, 10*time.Second, "the cron to sample the memory without it", func() bool {
		return c.do("SET", "small", "v").Str == "OK"
	})
	c.do("CONFIG", "SET", "maxmemory", "0")
	used := rawInfoInt(t, c, "memory", "used_memory")
	peak := rawInfoInt(t, c, "memory", "used_memory_peak")
	if peak < size || used > limit {
		t.Fatalf("after a transient %d-byte value: used_memory %d, used_memory_peak %d", size, used, peak)
	}
	_, f := infoSections(t, c.do("INFO", "memory").Str)
	for _, name := range []string{"used_memory_rss", "used_memory_startup", "used_memory_overhead",
		"allocator_allocated", "allocator_active", "allocator_resident", "mem_clients_normal"} {
		if n, err := strconv.ParseInt(f[name], 10, 64); err != nil || n <= 0 {
			t.Errorf("INFO memory %s: %q", name, f[name])
		}
	}
}

// TestInfoNetStats: the network counters follow the bytes a client sends.
func TestInfoNetStats(t *testing.T) {
	c := dialRaw(t, startServer(t).Addr())
	in := rawInfoInt(t, c, "stats", "total_net_input_bytes")
	reads := rawInfoInt(t, c, "stats", "total_reads_processed")
	c.do("SET", "k", strings.Repeat("v", 10000))
	if got := rawInfoInt(t, c, "stats", "total_net_input_bytes"); got < in+10000 {
		t.Errorf("total_net_input_bytes %d after sending 10000 more than %d", got, in)
	}
	if got := rawInfoInt(t, c, "stats", "total_reads_processed"); got <= reads {
		t.Errorf("total_reads_processed %d, was %d", got, reads)
	}
}
