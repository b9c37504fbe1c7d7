package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// delaySuite compares the delay-queue recipe of seed 000 on Redis (timers
// as sorted-set scores, a worker polling ZRANGEBYSCORE 0 now) with
// Revolver's DELAY.ADD + blocking DELAY.POP (SPEC.md §2 "DELAY"). Until the
// DELAY commands exist, Revolver runs the same sorted-set recipe, and the
// results say so.
type delaySuite struct{}

func init() { register(delaySuite{}) }

func (delaySuite) Name() string { return "delay" }
func (delaySuite) About() string {
	return "timers: seed 000's ZSET polling (1-2-4 s backoff; 10 ms polling) vs DELAY.ADD + DELAY.POP, 10k/100k/1M pending"
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
)

func (delaySuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: []View{
		{Title: "Timer lateness: ms from the due time to the worker receiving the timer", Metrics: []Metric{
			{Key: "p50", Label: "p50", Unit: "ms", Spread: true},
			{Key: "p99", Label: "p99", Unit: "ms"},
			{Key: "max", Label: "max", Unit: "ms"},
		}},
		{Title: "Timers fired per second, server CPU per fired timer, share fired", Metrics: []Metric{
			{Key: "rate", Label: "fired/s", Unit: "/s", Ratio: true},
			{Key: "cpu", Label: "srv CPU µs/timer", Unit: "µs", Ratio: true},
			{Key: "fired", Label: "fired", Unit: "%"},
		}},
	}}
	lead := min(time.Second, env.Opts.Duration)
	window := env.Opts.Duration
	native := map[*Server]bool{}
	for _, s := range env.Servers {
		if s.Kind == kindRevolver {
			ok, err := hasCommand(s.Addr, "DELAY.ADD")
			if err != nil {
				return nil, err
			}
			native[s] = ok
			if !ok {
				res.Notes = append(res.Notes, fmt.Sprintf("%s has no DELAY.* commands at this commit (COMMAND INFO "+
					"DELAY.ADD is empty): it runs the same sorted-set recipe as Redis, so this run compares the "+
					"recipe on both servers, not DELAY.POP.", s.Name))
			}
		}
	}
	res.Notes = append(res.Notes,
		fmt.Sprintf("Per run: P timers `t:<i>` due at t0 + i·%v/P (all come due within %v); ZSET recipe: `ZADD key <due-ms> t:<i>` "+
			"(500 pairs per command), one worker looping `ZRANGEBYSCORE key 0 <now-ms> LIMIT 0 %d` then `ZREM key <members>`, "+
			"sleeping after an empty poll (seed 000: 1, 2, 4, 4, ... s as its text says; its code's `1<<n + 1` would sleep "+
			"2, 3, 5 s; or 10 ms). Native: `DELAY.ADD key t:<i> AT <due-ms>`, one worker looping `DELAY.POP key COUNT %d BLOCK 1000`.",
			window, window, delayBatch, delayBatch),
		fmt.Sprintf("t0 is %v after loading is expected to end (loading budgeted at %v + %d timers/s); the worker starts %v "+
			"before t0 on every server. Lateness = time the worker received the timer minus its due time. fired/s = "+
			"timers fired / (last fire − t0). Server CPU covers the worker's whole run (idle polling included). "+
			"Unfired timers are given up %v after the last due time.", lead, delayLoadSlack, delayLoadRate, lead,
			window+5*time.Second))
	counts := []int{env.Scaled(10_000), env.Scaled(100_000), env.Scaled(1_000_000)}
	for _, p := range counts {
		for _, redisMode := range []delayMode{zsetBackoff, zsetPoll} {
			name := fmt.Sprintf("%s pending, %s", humanCount(p), map[delayMode]string{zsetBackoff: "seed backoff 1-2-4 s",
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
						return nil, fmt.Errorf("%s on %s: %w", name, s.Name, err)
					}
					if note != "" {
						row.Note(s.Name, note)
					}
					row.Add(s.Name, sample)
				}
			}
		}
	}
	return res, nil
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
