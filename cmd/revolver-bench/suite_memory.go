package main

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// memorySuite measures bytes per element of each data type: each
// measurement loads one data set into a freshly started server and divides
// the growth of used_memory (INFO memory) and of RSS by the element count.
type memorySuite struct{}

func init() { register(memorySuite{}) }

func (memorySuite) Name() string { return "memory" }
func (memorySuite) About() string {
	return "bytes per element (used_memory and RSS growth) of 1M-element strings, lists, hashes, sets, zsets, HLLs, timers"
}
func (memorySuite) Config(*Options) ServerConfig {
	return ServerConfig{Persistence: false, Fsync: "everysec"}
}

const memValue = "0123456789" // 10-byte values

// memSet is one data set: n commands of gen, holding elems elements.
type memSet struct {
	name    string
	shape   string
	command string // probed on each server; unknown means skip
	cmds    int
	elems   int
	gen     func(dst []byte, i int) []byte
	// redisGen replaces gen on Redis (the DELAY row stores the recipe's ZSET).
	redisGen  func(dst []byte, i int) []byte
	redisCmds int
}

// batched builds commands "CMD key <per items>" over n items.
func batched(cmd string, key func(c int) string, n, per, width int, item func(dst []byte, i int) []byte) (int, func([]byte, int) []byte) {
	return (n + per - 1) / per, func(dst []byte, c int) []byte {
		from, to := c*per, min((c+1)*per, n)
		dst = appendHeader(dst, '*', 2+width*(to-from))
		dst = appendBulkString(dst, cmd)
		dst = appendBulkString(dst, key(c))
		for i := from; i < to; i++ {
			dst = item(dst, i)
		}
		return dst
	}
}

func memSets(n int) []memSet {
	one := func(k string) func(int) string { return func(int) string { return k } }
	perKey := func(prefix string) func(int) string { return func(c int) string { return prefix + strconv.Itoa(c) } }
	field := func(prefix string) func(dst []byte, i int) []byte {
		return func(dst []byte, i int) []byte { return appendBulkString(dst, prefix+strconv.Itoa(i)) }
	}
	fieldValue := func(dst []byte, i int) []byte {
		return appendBulkString(appendBulkString(dst, "f:"+strconv.Itoa(i)), memValue)
	}
	scoreMember := func(dst []byte, i int) []byte {
		return appendBulkString(appendBulkInt(dst, int64(i)), "m:"+strconv.Itoa(i))
	}
	small := max(1, n/100)
	var sets []memSet
	add := func(name, shape, command string, elems, cmds int, gen func([]byte, int) []byte) {
		sets = append(sets, memSet{name: name, shape: shape, command: command, elems: elems, cmds: cmds, gen: gen})
	}
	strCmds := (n + 99) / 100
	add(fmt.Sprintf("strings: %s keys", humanCount(n)), "`MSET key:<i> 0123456789 ...` (10-byte values)", "mset",
		n, strCmds, msetKeys(n))
	c, g := batched("RPUSH", one("mylist"), n, 1000, 1, func(dst []byte, _ int) []byte { return appendBulkString(dst, memValue) })
	add(fmt.Sprintf("list: 1 key × %s", humanCount(n)), "`RPUSH mylist 0123456789 ...`", "rpush", n, c, g)
	c, g = batched("HSET", one("myhash"), n, 500, 2, fieldValue)
	add(fmt.Sprintf("hash: 1 key × %s fields", humanCount(n)), "`HSET myhash f:<i> 0123456789 ...`", "hset", n, c, g)
	c, g = batched("SADD", one("myset"), n, 1000, 1, field("m:"))
	add(fmt.Sprintf("set: 1 key × %s", humanCount(n)), "`SADD myset m:<i> ...`", "sadd", n, c, g)
	c, g = batched("ZADD", one("myzset"), n, 500, 2, scoreMember)
	add(fmt.Sprintf("zset: 1 key × %s", humanCount(n)), "`ZADD myzset <i> m:<i> ...`", "zadd", n, c, g)
	c, g = batched("HSET", perKey("hash:"), small*100, 100, 2, fieldValue)
	add(fmt.Sprintf("hashes: %s keys × 100 fields", humanCount(small)), "`HSET hash:<k> f:<i> 0123456789` × 100 per key (compact encoding)", "hset", small*100, c, g)
	c, g = batched("ZADD", perKey("zset:"), small*100, 100, 2, scoreMember)
	add(fmt.Sprintf("zsets: %s keys × 100", humanCount(small)), "`ZADD zset:<k> <i> m:<i>` × 100 per key (compact encoding)", "zadd", small*100, c, g)
	c, g = batched("PFADD", perKey("hll:"), small*100, 100, 1, field("e:"))
	add(fmt.Sprintf("HLLs: %s keys × 100 elements", humanCount(small)), "`PFADD hll:<k> e:<i>` × 100 per key (sparse)", "pfadd", small*100, c, g)
	far := time.Now().Add(24 * time.Hour).UnixMilli()
	timers := memSet{name: fmt.Sprintf("timers: 1 key × %s", humanCount(n)),
		shape: "16-byte members `timer:<i>` (i as 10 zero-padded digits), no payload, due tomorrow: Revolver " +
			"`DELAY.ADD timers timer:<i> AT <tomorrow+i>` (one timer per command, pipelined); Redis the recipe's " +
			"`ZADD timers <tomorrow+i> timer:<i>` (500 per command). Issue 5's target: memory per pending timer ≤ " +
			"Redis's per ZSET member.",
		command: "delay.add", elems: n, cmds: n,
		gen: func(dst []byte, i int) []byte {
			dst = appendHeader(dst, '*', 5)
			dst = appendBulkString(dst, "DELAY.ADD")
			dst = appendBulkString(dst, "timers")
			dst = appendTimerMember(dst, i)
			dst = appendBulkString(dst, "AT")
			return appendBulkInt(dst, far+int64(i))
		}}
	timers.redisCmds, timers.redisGen = batched("ZADD", one("timers"), n, 500, 2, func(dst []byte, i int) []byte {
		return appendTimerMember(appendBulkInt(dst, far+int64(i)), i)
	})
	jobs := memSet{name: fmt.Sprintf("queue: 1 key × %s ready jobs", humanCount(n)),
		shape: "16-byte merchant uids `timer:<i>` (as the timers' members): Revolver `QUEUE.PUSH jobs \"\" ID <uid>` " +
			"(the uid is the job id, no payload; one job per command, pipelined); Redis seed 004's recipe, the uid " +
			"in the pending list and in the interceptor set (`LPUSH pending <uid> ...`, `SADD interceptor <uid> ...`, " +
			"500 per command). Issue 21's target: memory per ready job ≤ the recipe's list entry + set member.",
		command: "queue.push", elems: n, cmds: n,
		gen: func(dst []byte, i int) []byte {
			dst = appendHeader(dst, '*', 5)
			dst = appendBulkString(dst, "QUEUE.PUSH")
			dst = appendBulkString(dst, "jobs")
			dst = appendBulkString(dst, "")
			dst = appendBulkString(dst, "ID")
			return appendTimerMember(dst, i)
		}}
	lists, lpush := batched("LPUSH", one("pending"), n, 500, 1, appendTimerMember)
	_, sadd := batched("SADD", one("interceptor"), n, 500, 1, appendTimerMember)
	jobs.redisCmds = 2 * lists
	jobs.redisGen = func(dst []byte, c int) []byte {
		if c%2 == 0 {
			return lpush(dst, c/2)
		}
		return sadd(dst, c/2)
	}
	return append(sets, timers, jobs)
}

func (memorySuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: []View{{Title: "Bytes per element (growth after loading, divided by the element count)", Metrics: []Metric{
		{Key: "used", Label: "used_memory B/el", Unit: "B", Spread: true, Ratio: true},
		{Key: "rss", Label: "RSS B/el", Unit: "B", Ratio: true},
		{Key: "usedtotal", Label: "used_memory growth", Unit: "MB"},
	}}}}
	n := env.Scaled(1_000_000)
	sets := memSets(n)
	res.Notes = append(res.Notes,
		"Each measurement starts a fresh server (Revolver `--persistence off`, Redis `--appendonly no --save ''`), "+
			"reads INFO memory `used_memory` and VmRSS, loads one data set with deep pipelines, and reads them again.",
		"Both readings follow `MEMORY PURGE` on both servers. On Revolver (since commit 45c44f6) it runs a full GC and "+
			"returns freed pages to the OS (debug.FreeOSMemory), so used_memory — the Go heap's live-plus-unswept "+
			"objects (server/info.go) — is the live heap and RSS loses the garbage of loading; on Redis it asks "+
			"jemalloc to release dirty pages, and used_memory is jemalloc's allocated bytes. Reported as measured.")
	for _, ms := range sets {
		res.Notes = append(res.Notes, ms.name+": "+ms.shape)
	}
	for _, ms := range sets {
		row := res.NewRow(ms.name)
		for round := 1; round <= env.Opts.Rounds; round++ {
			for _, s := range env.Servers {
				if row.Skipped(s.Name) {
					continue
				}
				if !s.Owned {
					row.Skip(s.Name, "skipped: needs a server the bench starts (--addr)")
					continue
				}
				env.Prog.Status(fmt.Sprintf("memory: %s on %s (round %d/%d)", ms.name, s.Name, round, env.Opts.Rounds))
				sample, skip, err := memMeasure(ctx, env, s.Kind, ms)
				if err != nil {
					return nil, fmt.Errorf("%s on %s: %w", ms.name, s.Name, err)
				}
				if skip != "" {
					row.Skip(s.Name, skip)
					continue
				}
				row.Add(s.Name, sample)
			}
		}
	}
	return res, nil
}

func memMeasure(ctx context.Context, env *Env, kind string, ms memSet) (map[string]float64, string, error) {
	s, err := env.fresh(ctx, kind, env.Config)
	if err != nil {
		return nil, "", err
	}
	defer s.Stop()
	gen, cmds := ms.gen, ms.cmds
	if kind == kindRedis && ms.redisGen != nil {
		gen, cmds = ms.redisGen, ms.redisCmds
	} else if ok, err := hasCommand(s.Addr, ms.command); err != nil {
		return nil, "", err
	} else if !ok {
		return nil, fmt.Sprintf("skipped: %s does not have %s at this commit", s.Name, ms.command), nil
	}
	used0, rss0, err := memSample(s)
	if err != nil {
		return nil, "", err
	}
	if err := fill(ctx, s.Addr, cmds, 2, gen); err != nil {
		if unknownCommand(err) {
			return nil, fmt.Sprintf("skipped: %s answers %q", s.Name, err.Error()), nil
		}
		return nil, "", err
	}
	used1, rss1, err := memSample(s)
	if err != nil {
		return nil, "", err
	}
	el := float64(ms.elems)
	return map[string]float64{"used": float64(used1-used0) / el, "rss": float64(rss1-rss0) / el,
		"usedtotal": float64(used1 - used0)}, "", nil
}

// memSample asks the server to release what it can (MEMORY PURGE), then
// reads used_memory and RSS.
func memSample(s *Server) (used, rss int64, err error) {
	if _, err := do(s.Addr, "MEMORY", "PURGE"); err != nil {
		return 0, 0, fmt.Errorf("MEMORY PURGE: %w", err)
	}
	info, err := do(s.Addr, "INFO", "memory")
	if err != nil {
		return 0, 0, err
	}
	used, err = strconv.ParseInt(infoField(info, "used_memory"), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("INFO used_memory: %w", err)
	}
	ps, err := readProcStats(s.PID())
	return used, ps.RSS, err
}

// timerMemberLen is the size of a timer member in the memory and restart
// suites: "timer:" and 10 digits, issue 5's 16-byte member.
const timerMemberLen = 16

// appendTimerMember appends timer:<i> with i as 10 zero-padded digits.
func appendTimerMember(dst []byte, i int) []byte {
	dst = appendHeader(dst, '$', timerMemberLen)
	dst = append(dst, "timer:"...)
	var digits [10]byte
	for j, n := 9, uint64(i); j >= 0; j-- {
		digits[j] = byte('0' + n%10)
		n /= 10
	}
	dst = append(dst, digits[:]...)
	return append(dst, '\r', '\n')
}
