package tests

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLatencyMonitor: with latency-monitor-threshold set, a command that
// takes longer is sampled under the "command" event (DEBUG SLEEP is not a
// fast command), on both servers, and the replies have Redis's shapes.
func TestLatencyMonitor(t *testing.T) {
	for name, addr := range map[string]string{"redis": realRedis(t), "revolver": startServer(t).Addr()} {
		t.Run(name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.do("LATENCY", "RESET")
			c.do("CONFIG", "SET", "latency-monitor-threshold", "20")
			defer c.do("CONFIG", "SET", "latency-monitor-threshold", "0")
			c.do("DEBUG", "SLEEP", "0.03")
			latest := c.do("LATENCY", "LATEST")
			if len(latest.Elems) != 1 || len(latest.Elems[0].Elems) != 4 || latest.Elems[0].Elems[0].Str != "command" {
				t.Fatalf("LATENCY LATEST: %s", latest)
			}
			e := latest.Elems[0].Elems
			if e[1].Int < 1e9 || e[2].Int < 30 || e[3].Int < e[2].Int {
				t.Fatalf("LATENCY LATEST sample: %s", latest)
			}
			hist := c.do("LATENCY", "HISTORY", "command")
			if len(hist.Elems) != 1 || hist.Elems[0].Elems[1].Int != e[2].Int {
				t.Fatalf("LATENCY HISTORY command: %s", hist)
			}
			graph := c.do("LATENCY", "GRAPH", "command").Str
			if !regexp.MustCompile(`^command - high \d+ ms, low \d+ ms \(all time high \d+ ms\)\n-{80}\n`).MatchString(graph) {
				t.Fatalf("LATENCY GRAPH: %q", graph)
			}
			if doc := c.do("LATENCY", "DOCTOR").Str; !strings.Contains(doc, "1. command: 1 latency spikes (average ") {
				t.Fatalf("LATENCY DOCTOR: %q", doc)
			}
			if v := c.do("LATENCY", "RESET", "COMMAND", "nosuch"); v.Int != 1 {
				t.Fatalf("LATENCY RESET: %s", v)
			}
			if v := c.do("LATENCY", "LATEST"); len(v.Elems) != 0 {
				t.Fatalf("LATENCY LATEST after RESET: %s", v)
			}
			// Below the threshold nothing is sampled.
			c.do("DEBUG", "SLEEP", "0")
			if v := c.do("LATENCY", "LATEST"); len(v.Elems) != 0 {
				t.Fatalf("LATENCY LATEST after a quick command: %s", v)
			}
		})
	}
}

// TestLatencyHistograms: every call is counted in its command's histogram
// (subcommands apart), latency-tracking no stops counting, CONFIG RESETSTAT
// forgets, and INFO latencystats lists the configured percentiles.
func TestLatencyHistograms(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	c.do("CONFIG", "RESETSTAT")
	for i := 0; i < 5; i++ {
		c.do("SET", "k", "v")
	}
	c.do("CONFIG", "GET", "hz")
	// CONFIG names its subcommands with calls: GET, and RESETSTAT, which
	// counts itself after resetting, as in Redis.
	v := c.do("LATENCY", "HISTOGRAM", "set", "config", "nosuch")
	if len(v.Elems) != 6 || v.Elems[0].Str != "set" || v.Elems[2].Str != "config|get" || v.Elems[4].Str != "config|resetstat" {
		t.Fatalf("LATENCY HISTOGRAM set config: %s", v)
	}
	set := v.Elems[1].Elems
	if set[0].Str != "calls" || set[1].Int != 5 || set[2].Str != "histogram_usec" {
		t.Fatalf("histogram of set: %s", v.Elems[1])
	}
	buckets := set[3].Elems
	if n := len(buckets); n < 2 || n%2 != 0 || buckets[n-1].Int != 5 {
		t.Fatalf("histogram_usec of set must end with the total count: %s", set[3])
	}
	info := c.do("INFO", "latencystats").Str
	if !regexp.MustCompile(`\r\nlatency_percentiles_usec_set:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}\r\n`).MatchString(info) {
		t.Fatalf("INFO latencystats: %q", info)
	}
	c.do("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.99")
	if info := c.do("INFO", "latencystats").Str; !regexp.MustCompile(`latency_percentiles_usec_set:p50=[\d.]+,p99\.99=[\d.]+\r\n`).MatchString(info) {
		t.Fatalf("INFO latencystats with other percentiles: %q", info)
	}
	c.do("CONFIG", "SET", "latency-tracking", "no")
	c.do("SET", "k", "v")
	if v := c.do("LATENCY", "HISTOGRAM", "set"); v.Elems[1].Elems[1].Int != 5 {
		t.Fatalf("a call counted with latency-tracking no: %s", v)
	}
	c.do("CONFIG", "SET", "latency-tracking", "yes")
	c.do("CONFIG", "RESETSTAT")
	if v := c.do("LATENCY", "HISTOGRAM", "set"); len(v.Elems) != 0 {
		t.Fatalf("LATENCY HISTOGRAM after CONFIG RESETSTAT: %s", v)
	}
}

// TestLatencyEventsAsRedis: the event series Redis records for the same
// commands, which LATENCY RESET then counts: a blocked client's serving
// ("command-unblocking", the reply to 300,000 pops), a slow fast command
// ("fast-command") and a slow command ("command"). The commands a script
// calls count in their own histograms.
func TestLatencyEventsAsRedis(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		h, a, b := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
		h.do("FLUSHALL")
		h.do("CONFIG", "SET", "latency-monitor-threshold", "1")
		t.Cleanup(func() { h.do("CONFIG", "SET", "latency-monitor-threshold", "0") })
		h.do("LATENCY", "RESET")
		h.do("CONFIG", "RESETSTAT")
		a.send("BLMPOP", "0", "1", "L", "LEFT", "COUNT", "300000")
		waitBlocked(t, h, "1")
		push := []string{"RPUSH", "L"}
		for i := 0; i < 300000; i++ {
			push = append(push, "e"+strconv.Itoa(i))
		}
		b.do(push...)
		if v := a.read(); len(v.Elems) != 2 || len(v.Elems[1].Elems) != 300000 {
			t.Fatalf("BLMPOP: %d elements", len(v.Elems[1].Elems))
		}
		h.do("EVAL", "for i = 1, 30000 do redis.call('set', 'k' .. i, 'v') end return 1", "0")
		h.do("EVAL", "redis.call('lpush', 'q', 'a') redis.call('lpush', 'q', 'b') return redis.call('lpush', 'q', 'c')", "0")
		var names []string
		for _, e := range h.do("LATENCY", "LATEST").Elems {
			names = append(names, e.Elems[0].Str)
		}
		for _, want := range []string{"command", "fast-command", "command-unblocking"} {
			if !slices.Contains(names, want) {
				t.Errorf("LATENCY LATEST has no %q event: %v", want, names)
			}
		}
		if v := h.do("LATENCY", "RESET"); v.Int != int64(len(names)) {
			t.Errorf("LATENCY RESET: %s, for %d events", v, len(names))
		}
		hist := h.do("LATENCY", "HISTOGRAM", "lpush")
		if len(hist.Elems) != 2 || hist.Elems[1].Elems[1].Int != 3 {
			t.Errorf("LATENCY HISTOGRAM lpush after a script's three LPUSHes: %s", hist)
		}
	})
}
