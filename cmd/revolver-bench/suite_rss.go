package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// rssSuite measures issue 32's memory rows: what a server really takes
// (VmRSS, no MEMORY PURGE) per key or element some time after loading a
// data set, at default settings on both servers (Revolver persistence on,
// Redis AOF everysec), each data set on a freshly started server. Where the
// memory suite isolates each type's cost (persistence off, growth after
// MEMORY PURGE), this one is what a user pays.
type rssSuite struct{}

func init() { register(rssSuite{}) }

func (rssSuite) Name() string { return "rss" }
func (rssSuite) About() string {
	return "RSS per key at default settings (Revolver persistence on, Redis AOF everysec), --rss-wait after the " +
		"load, no MEMORY PURGE: 1M strings (10M with --rss-10m), 10k hashes × 100, 1M set, zset, DELAY timers, " +
		"QUEUE jobs, NUMPOOL numbers, a small server (issue 32)"
}

// rssConfig is both servers at their defaults: Revolver's persistence on
// with appendfsync everysec, Redis's AOF everysec with its automatic
// rewrites. --fsync does not apply: the rows are about default settings.
func rssConfig() ServerConfig {
	return ServerConfig{Persistence: true, Fsync: "everysec", AOFRewrite: true}
}

func (rssSuite) Config(*Options) ServerConfig { return rssConfig() }

// Flags of the rss and drift suites. They live here, not in Options, so
// that the suites stay in their own files; parseOptions calls addRSSFlags,
// which resets them to their defaults on every parse.
var rssFlags struct {
	wait  time.Duration // 0: rssWait, times --scale below 1
	big   bool          // also the 10M-string rows
	drift time.Duration // 0: driftDuration, times --scale below 1
}

func addRSSFlags(fs *flag.FlagSet) {
	fs.DurationVar(&rssFlags.wait, "rss-wait", 0, "rss suite: time from the end of a load to the RSS reading "+
		"(0: 30s, times --scale when it is below 1)")
	fs.BoolVar(&rssFlags.big, "rss-10m", false, "rss suite: also run the 10M-string rows (1-2 GB on Redis, "+
		"several GB on Revolver, minutes to load)")
	fs.DurationVar(&rssFlags.drift, "drift-duration", 0, "drift suite: length of the mixed write load on each "+
		"server (0: 10m, times --scale when it is below 1)")
}

const (
	rssWait = 30 * time.Second
	// rssKeyDigits makes 10-byte string keys: "k:" and 8 digits.
	rssKeyDigits = 8
	rssBig       = 10_000_000
	rssSmall     = 10_000 // the "small server" row's keys
)

// scaledDuration is d, or def times --scale when --scale is below 1 (the
// smoke test's tiny runs).
func scaledDuration(d, def time.Duration, scale float64) time.Duration {
	if d > 0 {
		return d
	}
	if scale < 1 {
		return max(time.Millisecond, time.Duration(float64(def)*scale))
	}
	return def
}

// rssSet is one row: a data set, its recipe on Redis where Revolver has a
// native type, and issue 32's target for the ratio.
type rssSet struct {
	memSet
	keys   int     // keys the data set makes (DBSIZE), checked after the load; 0: not checked
	target float64 // issue 32's ceiling on Revolver/Redis RSS
	revRan string  // what each side ran, when the name does not say
	redRan string
}

// appendRSSKey appends "k:" and i as 8 zero-padded digits (10 bytes).
func appendRSSKey(dst []byte, i int) []byte {
	dst = appendHeader(dst, '$', 2+rssKeyDigits)
	dst = append(dst, 'k', ':')
	var digits [rssKeyDigits]byte
	for j, n := rssKeyDigits-1, uint64(i); j >= 0; j-- {
		digits[j] = byte('0' + n%10)
		n /= 10
	}
	dst = append(dst, digits[:]...)
	return append(dst, '\r', '\n')
}

// appendRSSValue appends a vlen-byte value: filler and i's last 8 digits,
// so no two neighbouring values are equal.
func appendRSSValue(dst []byte, i, vlen int) []byte {
	dst = appendHeader(dst, '$', vlen)
	start := len(dst)
	for j := 0; j < vlen; j++ {
		dst = append(dst, 'v')
	}
	for j, n := len(dst)-1, uint64(i); j >= start && j >= len(dst)-rssKeyDigits; j-- {
		dst[j] = byte('0' + n%10)
		n /= 10
	}
	return append(dst, '\r', '\n')
}

// rssStrings is n `SET k:<8 digits> <vlen bytes>`, one key per command.
func rssStrings(name string, n, vlen int, target float64) rssSet {
	return rssSet{memSet: memSet{name: name, command: "set", elems: n, cmds: n,
		shape: fmt.Sprintf("`SET k:<8 digits> <%d bytes>`, one key per command (10-byte keys)", vlen),
		gen: func(dst []byte, i int) []byte {
			dst = appendHeader(dst, '*', 3)
			dst = appendBulkString(dst, "SET")
			dst = appendRSSKey(dst, i)
			return appendRSSValue(dst, i, vlen)
		}}, keys: n, target: target}
}

// rssSets are the suite's rows at n elements (1M before --scale).
func rssSets(n, small int, big bool) []rssSet {
	one := func(k string) func(int) string { return func(int) string { return k } }
	var sets []rssSet
	sets = append(sets, rssStrings(fmt.Sprintf("small server: %s strings × 32 B", humanCount(small)), small, 32, 2))
	sets[0].shape += "; the target compares total RSS (≤ 2x Redis's)"
	for _, v := range []int{32, 100} {
		sets = append(sets, rssStrings(fmt.Sprintf("strings: %s × %d B values", humanCount(n), v), n, v, 0.7))
	}
	if big {
		m := n * (rssBig / 1_000_000)
		for _, v := range []int{32, 100} {
			sets = append(sets, rssStrings(fmt.Sprintf("strings: %s × %d B values", humanCount(m), v), m, v, 0.7))
		}
	}
	hashes := max(1, n/100)
	c, g := batched("HSET", func(c int) string { return "h:" + strconv.Itoa(c) }, hashes*100, 100, 2,
		func(dst []byte, i int) []byte {
			return appendBulkString(appendBulkString(dst, "f:"+strconv.Itoa(i%100)), memValue)
		})
	sets = append(sets, rssSet{memSet: memSet{name: fmt.Sprintf("hashes: %s × 100 fields", humanCount(hashes)),
		shape: "`HSET h:<k> f:0 0123456789 ... f:99 0123456789`, one hash per command (each server's compact " +
			"encoding); per element is per field", command: "hset", elems: hashes * 100, cmds: c, gen: g},
		keys: hashes, target: 0.7})
	c, g = batched("SADD", one("myset"), n, 1000, 1, func(dst []byte, i int) []byte {
		return appendBulkString(dst, "m:"+strconv.Itoa(i))
	})
	sets = append(sets, rssSet{memSet: memSet{name: fmt.Sprintf("set: 1 key × %s members", humanCount(n)),
		shape: "`SADD myset m:<i> ...` (1000 per command)", command: "sadd", elems: n, cmds: c, gen: g},
		keys: 1, target: 1})
	c, g = batched("ZADD", one("myzset"), n, 500, 2, func(dst []byte, i int) []byte {
		return appendBulkString(appendBulkInt(dst, int64(i)), "m:"+strconv.Itoa(i))
	})
	sets = append(sets, rssSet{memSet: memSet{name: fmt.Sprintf("zset: 1 key × %s members", humanCount(n)),
		shape: "`ZADD myzset <i> m:<i> ...` (500 per command)", command: "zadd", elems: n, cmds: c, gen: g},
		keys: 1, target: 1})
	// The DELAY and QUEUE rows are the memory suite's, with its recipes on
	// Redis (seed 004's ZSET of timers; its pending list and interceptor set).
	for _, ms := range memSets(n) {
		switch ms.command {
		case "delay.add":
			ms.name = fmt.Sprintf("DELAY: %s pending timers", humanCount(n))
			sets = append(sets, rssSet{memSet: ms, target: 1,
				revRan: "DELAY.ADD timers timer:<i> AT <tomorrow+i>", redRan: "ZADD timers <tomorrow+i> timer:<i>"})
		case "queue.push":
			ms.name = fmt.Sprintf("QUEUE: %s ready jobs", humanCount(n))
			sets = append(sets, rssSet{memSet: ms, target: 1,
				revRan: "QUEUE.PUSH jobs \"\" ID <uid>", redRan: "LPUSH pending <uid> + SADD interceptor <uid>"})
		}
	}
	np := npMemSet(n)
	np.name = fmt.Sprintf("NUMPOOL: %s idle+up numbers", humanCount(n))
	np.shape = "Revolver `NUMPOOL.ADD numpool <number> ...` and `NUMPOOL.REG` (10,000 per command); Redis seed " +
		"003's script state, `RPUSH {numpool}:idle:up <number> ...` and `HSET {numpool}:numstate <number> " +
		npIdleUp + "` (1000 per command), as the numpool suite's memory row"
	sets = append(sets, rssSet{memSet: np, target: 1, revRan: "NUMPOOL.ADD + NUMPOOL.REG",
		redRan: "RPUSH {numpool}:idle:up + HSET {numpool}:numstate (the script's state)"})
	return sets
}

var rssViews = []View{
	{Title: "Per element: RSS (VmRSS) and used_memory after the wait, divided by the element count", Metrics: []Metric{
		{Key: "elems", Label: "elements", Unit: "n"},
		{Key: "rss", Label: "RSS B/el", Unit: "B", Spread: true, Ratio: true},
		{Key: "anon", Label: "anon RSS B/el", Unit: "B", Ratio: true},
		{Key: "used", Label: "used_memory B/el", Unit: "B", Ratio: true},
	}},
	{Title: "Totals: RSS before the load and after the wait, peak RSS (VmHWM), used_memory, memory left out of eviction", Metrics: []Metric{
		{Key: "rss0", Label: "RSS before", Unit: "MB"},
		{Key: "rsstotal", Label: "RSS", Unit: "MB", Ratio: true},
		{Key: "anontotal", Label: "anon RSS", Unit: "MB", Ratio: true},
		{Key: "hwm", Label: "peak RSS", Unit: "MB", Ratio: true},
		{Key: "usedtotal", Label: "used_memory", Unit: "MB"},
		{Key: "notcounted", Label: "mem_not_counted_for_evict", Unit: "MB"},
		{Key: "aofbuf", Label: "mem_aof_buffer", Unit: "MB"},
		{Key: "load", Label: "load s", Unit: "s"},
	}},
}

func (rssSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: rssViews}
	wait := scaledDuration(rssFlags.wait, rssWait, env.Opts.Scale)
	n := env.Scaled(1_000_000)
	sets := rssSets(n, env.Scaled(rssSmall), rssFlags.big)
	cfg := rssConfig()
	res.Notes = append(res.Notes,
		fmt.Sprintf("Each row, on each server and in each round, starts a fresh server at default settings "+
			"(Revolver %s; Redis %s, its default automatic AOF rewrites, no RDB snapshots as every suite runs it), "+
			"reads VmRSS (/proc/PID/status), loads the data set with pipelines of 256 over 2 connections, waits "+
			"%v after the last reply, and reads INFO memory and /proc/PID/status again; then stops it. No "+
			"MEMORY PURGE, nothing else runs on the server. The other server is not running meanwhile.",
			cfg.describe(kindRevolver), cfg.describe(kindRedis), wait),
		"RSS B/el is the whole VmRSS after the wait divided by the elements (what a server holding this data "+
			"costs, its empty footprint included; RSS before shows that footprint); used_memory likewise. "+
			"anon RSS is RssAnon, VmRSS without the pages of files mapped into the process: most of those are "+
			"the server's own binary (Revolver's 24 MB of text and read-only data are all resident on this "+
			"kernel, Redis's few MB likewise), shared with the page cache and dropped under memory pressure. "+
			"used_memory is jemalloc's allocated bytes on Redis and the engine's estimate of its live heap on "+
			"Revolver (engine/evict_mem.go: garbage not counted). Peak RSS is VmHWM: the most the process held, "+
			"during the load included.",
		"mem_not_counted_for_evict is what each server would leave out of maxmemory. Revolver reports its "+
			"persistence memory there only under an evicting policy (decision 0008) and these rows run with "+
			"maxmemory unset, so it reads 0; mem_aof_buffer is the same memory (the change records and buffers "+
			"persistence holds in the Go heap) reported under every policy. On Redis both are its AOF buffer.",
		"The 10M-string rows run only with --rss-10m.")
	for _, rs := range sets {
		res.Notes = append(res.Notes, rs.name+": "+rs.shape)
	}
	for _, rs := range sets {
		row := res.NewRow(rs.name)
		for round := 1; round <= env.Opts.Rounds; round++ {
			for _, s := range env.Servers {
				if row.Skipped(s.Name) {
					continue
				}
				if !s.Owned {
					row.Skip(s.Name, "skipped: needs a server the bench starts (--addr)")
					continue
				}
				if s.Kind == kindRedis && rs.redRan != "" {
					row.SetRan(s.Name, rs.redRan)
				} else if s.Kind == kindRevolver && rs.revRan != "" {
					row.SetRan(s.Name, rs.revRan)
				}
				label := fmt.Sprintf("rss: %s on %s (round %d/%d)", rs.name, s.Name, round, env.Opts.Rounds)
				sample, skip, err := rssMeasure(ctx, env, s.Kind, rs, cfg, wait, label)
				if err != nil {
					return nil, fmt.Errorf("%s on %s: %w", rs.name, s.Name, err)
				}
				if skip != "" {
					row.Skip(s.Name, skip)
					continue
				}
				row.Add(s.Name, sample)
			}
		}
	}
	res.Notes = append(res.Notes, rssTargets(res, sets, env.Servers)...)
	return res, nil
}

// rssMeasure loads one data set into a fresh server of kind, waits, and
// reads its memory.
func rssMeasure(ctx context.Context, env *Env, kind string, rs rssSet, cfg ServerConfig, wait time.Duration,
	label string) (map[string]float64, string, error) {
	env.Prog.Status(label + ": starting")
	s, err := env.fresh(ctx, kind, cfg)
	if err != nil {
		return nil, "", err
	}
	defer s.Stop()
	gen, cmds := rs.gen, rs.cmds
	if kind == kindRedis && rs.redisGen != nil {
		gen, cmds = rs.redisGen, rs.redisCmds
	} else if ok, err := hasCommand(s.Addr, rs.command); err != nil {
		return nil, "", err
	} else if !ok {
		return nil, fmt.Sprintf("skipped: %s does not have %s at this commit", s.Name, strings.ToUpper(rs.command)), nil
	}
	before, err := readProcStatus(s.PID())
	if err != nil {
		return nil, "", err
	}
	env.Prog.Status(label + ": loading")
	begin := time.Now()
	if err := fill(ctx, s.Addr, cmds, 2, gen); err != nil {
		if unknownCommand(err) {
			return nil, fmt.Sprintf("skipped: %s answers %q", s.Name, err.Error()), nil
		}
		return nil, "", fmt.Errorf("load: %w", err)
	}
	loaded := time.Since(begin)
	env.Prog.Timed(label+": waiting", wait)
	select {
	case <-time.After(wait):
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	env.Prog.Clear()
	info, err := do(s.Addr, "INFO", "memory")
	if err != nil {
		return nil, "", err
	}
	after, err := readProcStatus(s.PID())
	if err != nil {
		return nil, "", err
	}
	keys, err := do(s.Addr, "DBSIZE")
	if err != nil {
		return nil, "", err
	}
	nkeys, _ := strconv.Atoi(keys)
	if rs.keys > 0 && nkeys != rs.keys {
		return nil, "", fmt.Errorf("DBSIZE %d after the load, want %d", nkeys, rs.keys)
	}
	field := func(name string) (float64, error) {
		v, err := strconv.ParseFloat(infoField(info, name), 64)
		if err != nil {
			return 0, fmt.Errorf("INFO memory %s: %q", name, infoField(info, name))
		}
		return v, nil
	}
	used, err := field("used_memory")
	if err != nil {
		return nil, "", err
	}
	notCounted, err := field("mem_not_counted_for_evict")
	if err != nil {
		return nil, "", err
	}
	aofBuf, err := field("mem_aof_buffer")
	if err != nil {
		return nil, "", err
	}
	el := float64(rs.elems)
	return map[string]float64{
		"elems": el, "keys": float64(nkeys),
		"rss": float64(after.RSS) / el, "used": used / el, "anon": float64(after.Anon) / el,
		"rss0": float64(before.RSS), "rsstotal": float64(after.RSS), "hwm": float64(after.HWM),
		"anontotal": float64(after.Anon),
		"rssgrowth": float64(after.RSS-before.RSS) / el,
		"usedtotal": used, "notcounted": notCounted, "aofbuf": aofBuf,
		"load": loaded.Seconds(), "wait": wait.Seconds(),
	}, "", nil
}

// procStatus is a process's resident set, its peak and its anonymous
// part, from /proc/PID/status.
type procStatus struct {
	RSS, HWM, Anon int64 // VmRSS, VmHWM, RssAnon in bytes
}

func readProcStatus(pid int) (procStatus, error) {
	if pid <= 0 {
		return procStatus{}, errors.New("no process id")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procStatus{}, err
	}
	return parseProcStatus(b)
}

func parseProcStatus(b []byte) (procStatus, error) {
	var ps procStatus
	found := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		for name, dst := range map[string]*int64{"VmRSS:": &ps.RSS, "VmHWM:": &ps.HWM, "RssAnon:": &ps.Anon} {
			if v, ok := bytes.CutPrefix(line, []byte(name)); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(v)), " kB"), 10, 64)
				if err != nil {
					return ps, fmt.Errorf("/proc status %s %q", name, v)
				}
				*dst = kb * 1024
				found++
			}
		}
	}
	if found != 3 {
		return ps, errors.New("/proc status without VmRSS, VmHWM and RssAnon")
	}
	return ps, nil
}

// rssTargets states issue 32's targets against this run's medians.
func rssTargets(res *Result, sets []rssSet, servers []*Server) []string {
	rev, red := comparedPair(servers)
	if rev == "" || red == "" {
		return nil
	}
	var out []string
	for i, row := range res.Rows {
		if row.Skipped(rev) || row.Skipped(red) {
			continue
		}
		a, okA := row.Sides[rev].Summary("rss")
		b, okB := row.Sides[red].Summary("rss")
		if !okA || !okB || b.Median <= 0 {
			continue
		}
		r := a.Median / b.Median
		verdict := "met"
		if r > sets[i].target {
			verdict = "not met"
		}
		out = append(out, fmt.Sprintf("%s: RSS %.2fx Redis's (target ≤ %.1fx: %s)", row.Name, r, sets[i].target,
			verdict))
	}
	if len(out) == 0 {
		return nil
	}
	return []string{"Issue 32's targets against this run's medians — " + strings.Join(out, "; ") + "."}
}
