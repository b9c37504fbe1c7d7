package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// delaySuite compares the delay-queue recipe of seed 000 on Redis (timers
// as sorted-set scores, workers polling ZRANGEBYSCORE 0 now and claiming
// with ZREM) with Revolver's DELAY.ADD + blocking DELAY.POP (SPEC.md §2
// "DELAY"), in three groups of rows, each with its own tables:
//
//   - "burst:" P timers all coming due within the window, one worker;
//   - "at rest:" probe timers coming due among 1M pending ones due
//     tomorrow, ten consumers (issue 5's lateness target);
//   - "throughput:" DELAY.ADD vs ZADD and DELAY.POP vs ZPOPMIN under the
//     core suite's closed-loop load (--clients, --pipeline).
//
// A Revolver without the DELAY commands (an older build given with --addr)
// runs the sorted-set recipe in the first two groups, and the results say
// so; its throughput rows are skipped.
type delaySuite struct{}

func init() { register(delaySuite{}) }

func (delaySuite) Name() string { return "delay" }
func (delaySuite) About() string {
	return "timers: seed 000's ZSET polling vs DELAY.ADD + DELAY.POP: bursts of 10k/100k/1M, lateness among 1M " +
		"pending with 10 consumers, DELAY.ADD/DELAY.POP vs ZADD/ZPOPMIN throughput"
}
func (delaySuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: o.Fsync}
}

// delayMode is how one side consumes its timers.
type delayMode int

const (
	zsetBackoff delayMode = iota // seed 000: sleep 1, 2, 4, 4, ... s after empty polls
	zsetPoll                     // the same loop, sleeping 10 ms after an empty poll
	nativePop                    // DELAY.POP COUNT 100 BLOCK
)

func (m delayMode) String() string {
	switch m {
	case zsetBackoff:
		return "ZADD + ZRANGEBYSCORE/ZREM loop, 1-2-4 s backoff"
	case zsetPoll:
		return "ZADD + ZRANGEBYSCORE/ZREM loop, 10 ms polling"
	}
	return "DELAY.ADD + DELAY.POP COUNT 100 BLOCK 1000"
}

const (
	delayBatch     = 100
	delayLoadRate  = 50_000 // timers/s assumed when scheduling the first due time after loading
	delayLoadSlack = 250 * time.Millisecond
	delayPollSleep = 10 * time.Millisecond

	restConsumers = 10
	restBatch     = 10  // ZRANGEBYSCORE ... LIMIT 0 restBatch per poll of a recipe consumer
	restProbeRate = 100 // probes per second of the window
	restGrace     = 200 * time.Millisecond
)

// Row name prefixes: each group of rows has its own tables.
const (
	burstPrefix = "burst: "
	restPrefix  = "at rest: "
	tpPrefix    = "throughput: "
)

// restProbes is how many probe timers an at-rest run schedules: about
// restProbeRate per second of the window, at least 10.
func restProbes(window time.Duration) int {
	return max(10, int(math.Round(restProbeRate*window.Seconds())))
}

// delayWorkloads are the throughput rows: a native command on Revolver,
// the recipe's command on Redis.
var delayWorkloads = []*workload{
	{name: "DELAY.ADD vs ZADD", command: "delay.add",
		shape: "Revolver `DELAY.ADD timers element:<rand> IN <rand-ms>`; Redis the recipe's write `ZADD timers <rand> element:<rand>`",
		gen:   delayAddGen, redisGen: zaddKeyGen("timers")},
	{name: "DELAY.POP vs ZPOPMIN", command: "delay.pop",
		shape: "Revolver `DELAY.POP popq` (popq topped up to the keyspace size first with `DELAY.ADD popq element:<i> AT 1`, " +
			"timers already due); Redis `ZPOPMIN popq` (popq topped up with `ZADD popq <i> element:<i>`)",
		gen: fixed("DELAY.POP", "popq"), setup: delayTopUp("popq"), drains: true,
		redisGen: fixed("ZPOPMIN", "popq"), redisSetup: topUpZSetKey("popq")},
}

// delayAddGen is DELAY.ADD timers element:<rand> IN <n>: the member as in
// the core suite, the delay the same kind of draw written as a plain
// integer (Revolver, like Redis, refuses integers with leading zeros).
func delayAddGen(keyspace uint64) Generator {
	return func(dst []byte, r *rand.Rand) []byte {
		dst = appendHeader(dst, '*', 5)
		dst = appendBulkString(dst, "DELAY.ADD")
		dst = appendBulkString(dst, "timers")
		dst = appendRandArg(dst, "element:", r.Uint64N(keyspace))
		dst = appendBulkString(dst, "IN")
		return appendBulkInt(dst, int64(r.Uint64N(keyspace)))
	}
}

// zaddKeyGen is the core suite's ZADD <rand> element:<rand> on another key.
func zaddKeyGen(key string) func(uint64) Generator {
	return func(keyspace uint64) Generator {
		return func(dst []byte, r *rand.Rand) []byte {
			dst = appendHeader(dst, '*', 4)
			dst = appendBulkString(dst, "ZADD")
			dst = appendBulkString(dst, key)
			dst = appendRandArg(dst, "", r.Uint64N(keyspace))
			return appendRandArg(dst, "element:", r.Uint64N(keyspace))
		}
	}
}

// delayTopUp makes key hold the keyspace's timers element:<i>, all due
// already (AT 1), so DELAY.POP measures pops, not empty replies.
func delayTopUp(key string) func(ctx context.Context, addr string, keyspace int) error {
	return func(ctx context.Context, addr string, keyspace int) error {
		n, err := do(addr, "DELAY.LEN", key)
		if err != nil {
			return err
		}
		if have, _ := strconv.Atoi(n); have >= keyspace {
			return nil
		}
		return fill(ctx, addr, keyspace, 2, func(dst []byte, i int) []byte {
			dst = appendHeader(dst, '*', 5)
			dst = appendBulkString(dst, "DELAY.ADD")
			dst = appendBulkString(dst, key)
			dst = appendRandArg(dst, "element:", uint64(i))
			dst = appendBulkString(dst, "AT")
			return appendBulkString(dst, "1")
		})
	}
}

func (delaySuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: []View{
		{Title: "Bursts — timer lateness: ms from the due time to the worker receiving the timer", RowPrefix: burstPrefix,
			Metrics: []Metric{
				{Key: "p50", Label: "p50", Unit: "ms", Spread: true},
				{Key: "p99", Label: "p99", Unit: "ms"},
				{Key: "max", Label: "max", Unit: "ms"},
				earlyMetric,
			}},
		{Title: "Bursts — timers fired per second, server CPU per fired timer, share fired", RowPrefix: burstPrefix,
			Metrics: []Metric{
				{Key: "rate", Label: "fired/s", Unit: "/s", Ratio: true},
				{Key: "cpu", Label: "srv CPU µs/timer", Unit: "µs", Ratio: true},
				{Key: "fired", Label: "fired", Unit: "%"},
			}},
		{Title: "At rest — lateness of probe timers among pending ones, ms from the due time to a consumer holding it; " +
			"share delivered exactly once; server CPU (% of one core) over the run", RowPrefix: restPrefix,
			Metrics: []Metric{
				{Key: "p50", Label: "p50", Unit: "ms", Spread: true},
				{Key: "p99", Label: "p99", Unit: "ms"},
				{Key: "p999", Label: "p99.9", Unit: "ms"},
				{Key: "max", Label: "max", Unit: "ms"},
				earlyMetric,
				{Key: "once", Label: "exactly once", Unit: "%"},
				{Key: "cpupct", Label: "srv CPU", Unit: "%", Ratio: true},
			}},
	}}
	for _, v := range throughputViews {
		v.Title = "Throughput rows — " + v.Title
		v.RowPrefix = tpPrefix
		res.Views = append(res.Views, v)
	}
	window := env.Opts.Duration
	lead := min(time.Second, window)
	native := map[*Server]bool{}
	for _, s := range env.Servers {
		if s.Kind == kindRevolver {
			ok, err := hasCommand(s.Addr, "DELAY.ADD")
			if err != nil {
				return nil, err
			}
			native[s] = ok
			if !ok {
				res.Notes = append(res.Notes, fmt.Sprintf("%s has no DELAY.* commands (COMMAND INFO DELAY.ADD is "+
					"empty; an older build): in the burst and at-rest rows it runs the same sorted-set recipe as "+
					"Redis, so those rows compare the recipe on both servers, not DELAY.POP; its throughput rows "+
					"are skipped.", s.Name))
			}
		}
	}
	pending := env.Scaled(1_000_000)
	probes := restProbes(window)
	keyspace := env.Scaled(1_000_000)
	res.Notes = append(res.Notes,
		fmt.Sprintf("Burst rows (\"burst: P pending\"): per run, P timers `t:<i>` due at t0 + i·%v/P (all come due "+
			"within %v). Redis (the recipe): `ZADD key <due-ms> t:<i>` (500 pairs per command), one worker looping "+
			"`ZRANGEBYSCORE key 0 <now-ms> LIMIT 0 %d` then `ZREM key <members>`, sleeping after an empty poll "+
			"(seed 000: 1, 2, 4, 4, ... s as its text says; its code's `1<<n + 1` would sleep 2, 3, 5 s; or 10 ms). "+
			"Revolver: `DELAY.ADD key t:<i> AT <due-ms>` (one timer per command, pipelined), one worker looping "+
			"`DELAY.POP key COUNT %d BLOCK 1000` — the same on both burst rows of a size.",
			window, window, delayBatch, delayBatch),
		fmt.Sprintf("Burst rows: t0 is %v after loading is expected to end (loading budgeted at %v + %d timers/s); "+
			"the worker starts %v before t0 on every server. Lateness = time the worker received the timer minus "+
			"its due time; quantiles are over the timers received at or after it, and \"early\" counts those "+
			"received before it (DELAY.POP returns only timers whose due time has passed; the recipe asks for "+
			"scores up to its own clock): any fails the run. fired/s = timers fired / (last fire − t0). Server CPU "+
			"covers the worker's whole run (idle polling included). Unfired timers are given up %v after the last "+
			"due time.", lead, delayLoadSlack,
			delayLoadRate, lead, window+5*time.Second),
		fmt.Sprintf("At-rest row (issue 5's target: p99 ≤ 2 ms, max ≤ 10 ms with 1,000,000 pending and 10 "+
			"consumers): one key holds %d pending timers `pending:<i>` due tomorrow (+i ms), loaded once per server "+
			"before the first round (Revolver `DELAY.ADD key pending:<i> AT <due>` pipelined, Redis `ZADD key <due> "+
			"pending:<i>` 500 per command) and kept for every round; each round adds %d probe timers "+
			"`probe:<round>:<i>` due at t0 + i·%v/%d (t0 = %v after they are added) and runs %d consumers from "+
			"then until every probe is held (plus %v to catch duplicates) or %v after the last due time. "+
			"Revolver: each consumer loops `DELAY.POP key COUNT 1 BLOCK 1000` on its own connection (blocked "+
			"clients woken by the server's scheduler). Redis (the recipe): each consumer loops `ZRANGEBYSCORE key 0 "+
			"<now-ms> LIMIT 0 %d`, sleeping %v after an empty poll, and claims each member with `ZREM key <member>` "+
			"(pipelined); only the consumer whose ZREM returns 1 holds the timer.",
			pending, probes, window, probes, lead, restConsumers, restGrace, 5*time.Second, restBatch, delayPollSleep),
		fmt.Sprintf("At-rest row: after loading the pending timers the bench waits until the server's CPU use "+
			"stays below %g%% of a core for %v (at most %v), so the rounds measure a server at rest, not one "+
			"still compacting or collecting the load's garbage. Lateness = time the consumer holds the probe (the "+
			"DELAY.POP reply, or the ZREM reply that returned 1) minus its due time, over each probe's first "+
			"delivery; quantiles are nearest-rank over the %d probes of a round (with 1000: p99 is the 10th-latest, "+
			"p99.9 the 2nd-latest), over the probes held at or after their due time; \"early\" counts those held "+
			"before it, and any fails the run. \"exactly once\" = share of probes delivered to exactly one "+
			"consumer, once (remarks count duplicates and misses). Server CPU = the server's utime+stime over the consumers' "+
			"run divided by its wall time.", settleCPU, settleWindow, settleMax, probes),
		fmt.Sprintf("Throughput rows: the core suite's closed loop (%d clients, pipeline PN = N commands per round "+
			"trip per client, %v per run; <rand> is a number drawn uniformly from [0, %d), written as 12 zero-padded "+
			"digits; <rand-ms> the same draw as a plain integer). The POP runs end early when the key runs dry "+
			"(the first empty reply: an empty array from DELAY.POP, nil from ZPOPMIN); their throughput is over "+
			"the shorter run.", env.Opts.Clients, window, keyspace))
	for _, w := range delayWorkloads {
		res.Notes = append(res.Notes, "Throughput row "+w.name+": "+w.shape)
	}
	if err := runBursts(ctx, env, res, native, lead, window); err != nil {
		return nil, err
	}
	if err := runAtRest(ctx, env, res, native, pending, probes, lead, window); err != nil {
		return nil, err
	}
	var cases []tpCase
	for _, p := range env.Opts.Pipelines {
		for _, w := range delayWorkloads {
			cases = append(cases, tpCase{name: fmt.Sprintf("%s%s P%d", tpPrefix, w.name, p), work: w,
				clients: env.Opts.Clients, pipeline: p})
		}
	}
	if err := runThroughput(ctx, env, res, cases); err != nil {
		return nil, err
	}
	return res, nil
}

// runBursts measures the burst rows: 10k, 100k and 1M timers coming due
// within the window, one worker.
func runBursts(ctx context.Context, env *Env, res *Result, native map[*Server]bool, lead, window time.Duration) error {
	counts := []int{env.Scaled(10_000), env.Scaled(100_000), env.Scaled(1_000_000)}
	for _, p := range counts {
		for _, redisMode := range []delayMode{zsetBackoff, zsetPoll} {
			name := fmt.Sprintf("%s%s pending, %s", burstPrefix, humanCount(p), map[delayMode]string{zsetBackoff: "seed backoff 1-2-4 s",
				zsetPoll: "10 ms polling"}[redisMode])
			row := res.NewRow(name)
			for round := 1; round <= env.Opts.Rounds; round++ {
				for _, s := range env.Servers {
					mode := redisMode
					if native[s] {
						mode = nativePop
					}
					if mode != redisMode {
						row.SetRan(s.Name, mode.String())
					}
					env.Prog.Status(fmt.Sprintf("delay: %s on %s (round %d/%d): loading", name, s.Name, round, env.Opts.Rounds))
					key := fmt.Sprintf("rb:delay:%d:%d:%d", p, redisMode, round)
					sample, note, err := delayRun(ctx, env, s, key, p, mode, lead, window,
						fmt.Sprintf("delay: %s on %s (round %d/%d)", name, s.Name, round, env.Opts.Rounds))
					if err != nil {
						return fmt.Errorf("%s on %s: %w", name, s.Name, err)
					}
					if note != "" {
						row.Note(s.Name, note)
					}
					row.Add(s.Name, sample)
					res.noteEarly(row, s.Name, round, sample)
				}
			}
		}
	}
	return nil
}

func humanCount(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// delayRun loads p timers into key, runs one worker until they have all
// fired (or the bound passes), and measures.
func delayRun(ctx context.Context, env *Env, s *Server, key string, p int, mode delayMode, lead, window time.Duration,
	label string) (map[string]float64, string, error) {
	loadStart := time.Now()
	t0 := loadStart.Add(delayLoadSlack + time.Duration(p)*time.Second/delayLoadRate + lead).Truncate(time.Millisecond)
	due := func(i int) int64 { return t0.Add(time.Duration(i) * window / time.Duration(p)).UnixMilli() }
	var err error
	if mode == nativePop {
		err = fill(ctx, s.Addr, p, 4, func(dst []byte, i int) []byte {
			dst = appendHeader(dst, '*', 5)
			dst = appendBulkString(dst, "DELAY.ADD")
			dst = appendBulkString(dst, key)
			dst = appendBulkString(dst, "t:"+strconv.Itoa(i))
			dst = appendBulkString(dst, "AT")
			return appendBulkInt(dst, due(i))
		})
	} else {
		const per = 500
		err = fill(ctx, s.Addr, (p+per-1)/per, 4, func(dst []byte, c int) []byte {
			from, to := c*per, min((c+1)*per, p)
			dst = appendHeader(dst, '*', 2+2*(to-from))
			dst = appendBulkString(dst, "ZADD")
			dst = appendBulkString(dst, key)
			for i := from; i < to; i++ {
				dst = appendBulkInt(dst, due(i))
				dst = appendBulkString(dst, "t:"+strconv.Itoa(i))
			}
			return dst
		})
	}
	if err != nil {
		return nil, "", fmt.Errorf("loading timers: %w", err)
	}
	defer do(s.Addr, "DEL", key)
	var note string
	if late := time.Since(t0.Add(-lead)); late > 0 {
		note = fmt.Sprintf("loading overran its budget by %v, so the worker started late", late.Round(time.Millisecond))
	}
	select {
	case <-time.After(time.Until(t0.Add(-lead))):
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	c, err := Dial(s.Addr, 5*time.Second)
	if err != nil {
		return nil, "", err
	}
	defer c.Close()
	before, _ := readProcStats(s.PID())
	giveUp := t0.Add(window + 5*time.Second)
	env.Prog.Timed(label, time.Until(giveUp))
	h := NewHistogram()
	fired := make([]bool, p)
	var nFired int
	var lastFire time.Time
	record := func(member string, at time.Time) {
		i, err := strconv.Atoi(strings.TrimPrefix(member, "t:"))
		if err != nil || i < 0 || i >= p || fired[i] {
			return
		}
		fired[i] = true
		nFired++
		lastFire = at
		h.Record(at.UnixNano() - due(i)*int64(time.Millisecond))
	}
	emptyPolls := 0
	for nFired < p && time.Now().Before(giveUp) && ctx.Err() == nil {
		if mode == nativePop {
			v, err := c.DoTimeout(time.Minute, "DELAY.POP", key, "COUNT", strconv.Itoa(delayBatch), "BLOCK", "1000")
			if err != nil {
				return nil, "", err
			}
			at := time.Now()
			for _, t := range v.Elems {
				if len(t.Elems) > 0 {
					record(t.Elems[0].Str, at)
				}
			}
			continue
		}
		now := strconv.FormatInt(time.Now().UnixMilli(), 10)
		v, err := c.DoTimeout(time.Minute, "ZRANGEBYSCORE", key, "0", now, "LIMIT", "0", strconv.Itoa(delayBatch))
		if err != nil {
			return nil, "", err
		}
		at := time.Now()
		if len(v.Elems) == 0 {
			sleep := delayPollSleep
			if mode == zsetBackoff {
				sleep = time.Second << min(emptyPolls, 2) // 1, 2, 4, 4, ... s
			}
			emptyPolls++
			select {
			case <-time.After(min(sleep, time.Until(giveUp)+time.Millisecond)):
			case <-ctx.Done():
			}
			continue
		}
		emptyPolls = 0
		if _, err := c.DoTimeout(time.Minute, zremArgs(key, v.Elems)...); err != nil {
			return nil, "", err
		}
		for _, m := range v.Elems {
			record(m.Str, at)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	after, _ := readProcStats(s.PID())
	env.Prog.Clear()
	sample := map[string]float64{"fired": 100 * float64(nFired) / float64(p)}
	addEarly(sample, h)
	if nFired > 0 {
		sample["p50"], sample["p99"], sample["max"] = ms(h.Quantile(0.5)), ms(h.Quantile(0.99)), ms(h.Max())
		if span := lastFire.Sub(t0); span > 0 {
			sample["rate"] = float64(nFired) / span.Seconds()
		}
		if s.PID() > 0 {
			sample["cpu"] = float64((after.CPU - before.CPU).Microseconds()) / float64(nFired)
		}
	}
	return sample, note, nil
}

func zremArgs(key string, members []resp.Value) []string {
	args := make([]string, 0, 2+len(members))
	args = append(args, "ZREM", key)
	for _, m := range members {
		args = append(args, m.Str)
	}
	return args
}
