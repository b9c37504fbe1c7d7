package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// The numpool suite compares NUMPOOL (issue 23), Revolver's native
// number-pool state machine, with seed 003's number-pool script
// (numpoolScript), which it replaces:
//
//   - "call+hangup": agents take a free number and give it back, as in
//     the script suite, at --clients and each --pipeline depth. Revolver
//     runs NUMPOOL.EVENT (POLICY fifo, the script's LIST order, and the
//     default lru) and, as a reference, the script itself; Redis runs the
//     script. Pairs/s, server CPU per pair, and latency of call and of
//     hangup apart.
//   - "memory": bytes per idle+up number, NUMPOOL against the LIST entry
//     and HASH field the script keeps per number.
type numpoolSuite struct{}

func init() { register(numpoolSuite{}) }

func (numpoolSuite) Name() string { return "numpool" }
func (numpoolSuite) About() string {
	return "number pool: NUMPOOL.EVENT call+hangup vs seed 003's EVALSHA script (pairs/s, CPU per pair, call and " +
		"hangup latency), --clients, --pipeline; memory per idle+up number"
}
func (numpoolSuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: o.Fsync}
}

const (
	npKey       = "numpool" // the NUMPOOL key (the script's keys start with numpoolKey)
	npPool      = 10_000    // numbers in the pool of the call+hangup rows, before --scale
	npMemory    = 1_000_000 // numbers of the memory row, before --scale
	npBatch     = 10_000    // numbers per NUMPOOL.ADD / NUMPOOL.REG
	npRecipePer = 1000      // numbers per RPUSH / HSET of the recipe's memory row
	npTPPrefix  = "call+hangup "
	npMemPrefix = "memory: "
	// npIdleUp is the HASH value the script leaves for an idle+up number.
	npIdleUp = `{"callstate":0,"regstate":1}`
)

// npVariant is one way of running the call+hangup loop.
type npVariant struct {
	label  string // row name after "call+hangup PN: "
	native bool   // NUMPOOL commands; otherwise the script
	policy string // NUMPOOL.EVENT call's POLICY, "" for the default
}

var (
	npFifo   = npVariant{label: "NUMPOOL.EVENT POLICY fifo", native: true, policy: "fifo"}
	npLRU    = npVariant{label: "NUMPOOL.EVENT (default lru)", native: true}
	npLua    = npVariant{label: "EVALSHA script on both"}
	npRecipe = npVariant{label: "EVALSHA script"} // Redis's side of every row
)

func npRowName(p int, v npVariant) string { return fmt.Sprintf("%sP%d: %s", npTPPrefix, p, v.label) }

var numpoolViews = []View{
	{Title: "Throughput — call+hangup pairs/s (median of rounds, min–max) and server CPU per pair", RowPrefix: npTPPrefix,
		Metrics: []Metric{
			{Key: "pairs", Label: "pairs/s", Unit: "/s", Spread: true, Ratio: true},
			{Key: "srvcpu", Label: "srv CPU µs/pair", Unit: "µs", Ratio: true},
		}},
	{Title: "Latency of call, ms (median of rounds)", RowPrefix: npTPPrefix, Metrics: []Metric{
		{Key: "cp50", Label: "p50", Unit: "ms"},
		{Key: "cp99", Label: "p99", Unit: "ms", Ratio: true},
		{Key: "cp999", Label: "p99.9", Unit: "ms"},
		{Key: "cmax", Label: "max", Unit: "ms"},
	}},
	{Title: "Latency of hangup, ms (median of rounds)", RowPrefix: npTPPrefix, Metrics: []Metric{
		{Key: "hp50", Label: "p50", Unit: "ms"},
		{Key: "hp99", Label: "p99", Unit: "ms", Ratio: true},
		{Key: "hp999", Label: "p99.9", Unit: "ms"},
		{Key: "hmax", Label: "max", Unit: "ms"},
	}},
	{Title: "Client CPU per pair, server RSS after the run, calls that found no free number", RowPrefix: npTPPrefix,
		Metrics: []Metric{
			{Key: "clicpu", Label: "client CPU µs/pair", Unit: "µs"},
			{Key: "rss", Label: "RSS", Unit: "MB"},
			{Key: "empty", Label: "empty calls", Unit: "%"},
		}},
	{Title: "Memory per idle+up number (growth after loading, divided by the count)", RowPrefix: npMemPrefix,
		Metrics: []Metric{
			{Key: "used", Label: "used_memory B/number", Unit: "B", Spread: true, Ratio: true},
			{Key: "rss", Label: "RSS B/number", Unit: "B", Ratio: true},
			{Key: "usedtotal", Label: "used_memory growth", Unit: "MB"},
		}},
}

func (numpoolSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: numpoolViews}
	pool := max(env.Scaled(npPool), numpoolSize(env.Opts))
	res.Notes = append(res.Notes,
		fmt.Sprintf("call+hangup rows: before each run the pool is emptied and refilled with %d numbers (%d, %d, ...), "+
			"all idle+up, in order. Revolver's NUMPOOL rows load them with `NUMPOOL.ADD numpool <number> ...` and "+
			"`NUMPOOL.REG numpool <number> ...` (%d per command); the script rows with the script's own `add` and "+
			"`reg` events (SHA1 %s, cmd/revolver-bench/numpool_script.go). Each client then loops: N calls in one "+
			"batch, then the N hangups of the numbers they got, where N is the pipeline depth (PN); a pair is a call "+
			"and its hangup, pairs/s counts hangups that succeeded, and server CPU (utime+stime over the run) and "+
			"client CPU are divided by pairs. Latency is per command, from the write of its batch to its reply.",
			pool, numpoolFirst, numpoolFirst+1, npBatch, numpoolSHA),
		"NUMPOOL rows: `NUMPOOL.EVENT numpool call POLICY fifo` (the number idle+up longest, the script's LPOP of its "+
			"LIST) or `NUMPOOL.EVENT numpool call` (the default lru: the number whose last call ended longest ago), "+
			"then `NUMPOOL.EVENT numpool hangup <number>`. The script row runs `EVALSHA <sha> 1 {numpool} call` and "+
			"`EVALSHA <sha> 1 {numpool} hangup <number>` on Revolver too (Lua on Revolver, for reference). Redis "+
			"has only the script: it is run once per round, and its runs are the Redis side of all three rows.",
		"After every run every number must be idle+up again — on Revolver NUMPOOL.INFO (numbers, idle+up, no busy "+
			"number, and its `calls` equal to the calls answered), for the script HLEN and LLEN of its HASH and "+
			"LIST — or the run fails.",
		fmt.Sprintf("memory rows: a fresh server of each kind without persistence (Revolver `--persistence off`, "+
			"Redis `--appendonly no --save ''`), INFO used_memory and VmRSS read after MEMORY PURGE before and after "+
			"loading (as the memory suite does). Revolver: `NUMPOOL.ADD` then `NUMPOOL.REG` of %d numbers per "+
			"command; Redis: the state the script leaves, loaded directly rather than one EVALSHA per event: "+
			"`RPUSH {numpool}:idle:up <number> ...` and `HSET {numpool}:numstate <number> %s ...`, %d per command.",
			npBatch, npIdleUp, npRecipePer),
		"Issue 23's targets: pairs/s ≥ 3x the script's on redis-server; p99 of call ≤ Redis's EVALSHA p99; "+
			"memory per number ≤ the script's.")

	scripting := map[string]bool{}
	native := map[string]bool{}
	for _, s := range env.Servers {
		switch err := loadScripts(s.Addr); {
		case err == nil:
			scripting[s.Name] = true
		case !unknownCommand(err):
			return nil, fmt.Errorf("SCRIPT LOAD on %s: %w", s.Name, err)
		}
		if s.Kind == kindRevolver {
			ok, err := hasCommand(s.Addr, "numpool.event")
			if err != nil {
				return nil, err
			}
			native[s.Name] = ok
		}
	}
	for _, p := range env.Opts.Pipelines {
		rows := map[npVariant]*Row{}
		for _, v := range []npVariant{npFifo, npLRU, npLua} {
			rows[v] = res.NewRow(npRowName(p, v))
		}
		// variants is what a server runs for this depth and the rows its
		// samples go to: Redis's script runs count in every row.
		variants := func(s *Server) map[npVariant][]*Row {
			if s.Kind == kindRedis {
				return map[npVariant][]*Row{npRecipe: {rows[npFifo], rows[npLRU], rows[npLua]}}
			}
			return map[npVariant][]*Row{npFifo: {rows[npFifo]}, npLRU: {rows[npLRU]}, npLua: {rows[npLua]}}
		}
		for _, s := range env.Servers {
			for v, rs := range variants(s) {
				for _, row := range rs {
					switch {
					case v.native && !native[s.Name]:
						row.Skip(s.Name, fmt.Sprintf("skipped: %s has no NUMPOOL.EVENT at this commit", s.Name))
					case !v.native && !scripting[s.Name]:
						row.Skip(s.Name, fmt.Sprintf("skipped: %s answers \"ERR unknown command\" to SCRIPT", s.Name))
					case s.Kind == kindRedis && row != rows[npFifo]:
						row.Note(s.Name, "the same runs as the fifo row (the script has one order)")
					}
				}
			}
		}
		for round := 1; round <= env.Opts.Rounds; round++ {
			for _, s := range env.Servers {
				for _, v := range []npVariant{npFifo, npLRU, npLua, npRecipe} {
					rs := variants(s)[v]
					if len(rs) == 0 || rs[0].Skipped(s.Name) {
						continue
					}
					name := npRowName(p, v)
					sample, note, err := npRun(ctx, env, s, v, pool, p, round, name)
					if err != nil {
						return res, fmt.Errorf("%s on %s: %w", name, s.Name, err)
					}
					for _, row := range rs {
						row.Add(s.Name, sample)
						if note != "" {
							row.Note(s.Name, note)
						}
					}
				}
			}
		}
	}

	n := env.Scaled(npMemory)
	ms := npMemSet(n)
	row := res.NewRow(ms.name)
	// A fresh server per measurement, without persistence, as the memory
	// suite measures every type.
	menv := *env
	menv.Config = ServerConfig{Persistence: false, Fsync: "everysec"}
	for round := 1; round <= env.Opts.Rounds; round++ {
		for _, s := range env.Servers {
			if row.Skipped(s.Name) {
				continue
			}
			if !s.Owned {
				row.Skip(s.Name, "skipped: needs a server the bench starts (--addr)")
				continue
			}
			if s.Kind == kindRedis {
				row.SetRan(s.Name, "RPUSH {numpool}:idle:up + HSET {numpool}:numstate (the script's state)")
			} else {
				row.SetRan(s.Name, "NUMPOOL.ADD + NUMPOOL.REG")
			}
			env.Prog.Status(fmt.Sprintf("numpool: %s on %s (round %d/%d)", ms.name, s.Name, round, env.Opts.Rounds))
			sample, skip, err := memMeasure(ctx, &menv, s.Kind, ms)
			if err != nil {
				return res, fmt.Errorf("%s on %s: %w", ms.name, s.Name, err)
			}
			if skip != "" {
				row.Skip(s.Name, skip)
				continue
			}
			row.Add(s.Name, sample)
		}
	}
	res.Notes = append(res.Notes, npTargets(res, env.Servers)...)
	return res, nil
}

// npRun resets the pool on s, runs one timed call+hangup loop of variant v,
// checks the pool after it and returns the sample (and a remark, if any).
func npRun(ctx context.Context, env *Env, s *Server, v npVariant, pool, pipeline, round int, name string) (
	map[string]float64, string, error) {
	env.Prog.Status(fmt.Sprintf("%s %s: setup", name, s.Name))
	if err := env.Flush(s); err != nil {
		return nil, "", err
	}
	d := npScriptDialect
	if v.native {
		d = npNativeDialect(v.policy)
		if err := npNativeReset(ctx, s.Addr, pool); err != nil {
			return nil, "", fmt.Errorf("setup: %w", err)
		}
		info, err := npInfo(s.Addr)
		if err == nil {
			err = npCheckInfo(info, pool)
		}
		if err != nil {
			return nil, "", fmt.Errorf("after the setup: %w", err)
		}
	} else if err := numpoolReset(ctx, s.Addr, pool); err != nil {
		return nil, "", fmt.Errorf("setup: %w", err)
	}
	label := fmt.Sprintf("%s on %s, round %d/%d", name, s.Name, round, env.Opts.Rounds)
	r, err := npLoad(ctx, s, d, env.Opts.Clients, pipeline, env.Opts.Duration, label, env.Prog)
	if err != nil {
		return nil, "", err
	}
	var notes []string
	if v.native {
		info, err := npInfo(s.Addr)
		if err == nil {
			err = npCheckInfo(info, pool)
		}
		if err != nil {
			return nil, "", fmt.Errorf("after the run: %w", err)
		}
		// A count that disagrees is remarked on, not fatal: the states are
		// what the run must leave right.
		if took := r.Calls - r.Empty; info["calls"] != took {
			notes = append(notes, fmt.Sprintf("NUMPOOL.INFO counted %d calls where %d took a number",
				info["calls"], took))
		}
	} else if err := numpoolCheck(s.Addr, pool); err != nil {
		return nil, "", fmt.Errorf("after the run: %w", err)
	}
	return r.Sample(), strings.Join(notes, "; "), nil
}

// npDialect is how one side spells the call+hangup loop.
type npDialect struct {
	call   []byte                             // one encoded call without a number
	hangup func(c *Conn, number string)       // appends the hangup of number
	taken  func(v resp.Value) (string, error) // the number a call took, "" for none free
	hungUp func(v resp.Value) bool            // whether a hangup reply is the success expected
}

func npNativeDialect(policy string) npDialect {
	call := []string{"NUMPOOL.EVENT", npKey, "call"}
	if policy != "" {
		call = append(call, "POLICY", policy)
	}
	return npDialect{
		call:   appendCommand(nil, call...),
		hangup: func(c *Conn, n string) { c.Append("NUMPOOL.EVENT", npKey, "hangup", n) },
		taken: func(v resp.Value) (string, error) {
			switch {
			case v.Kind == resp.KindNull:
				return "", nil
			case v.Kind == resp.KindArray && len(v.Elems) == 2 && v.Elems[0].Kind == resp.KindBulk &&
				v.Elems[0].Str != "" && v.Elems[1].Kind == resp.KindInt:
				return v.Elems[0].Str, nil
			}
			return "", fmt.Errorf("call replied %s, want [number, token] or nil", v)
		},
		hungUp: func(v resp.Value) bool { return v.Kind == resp.KindSimple && v.Str == "idle+up" },
	}
}

var npScriptDialect = npDialect{
	call: appendCommand(nil, "EVALSHA", numpoolSHA, "1", numpoolKey, "call"),
	hangup: func(c *Conn, n string) {
		c.Append("EVALSHA", numpoolSHA, "1", numpoolKey, "hangup", n)
	},
	taken: func(v resp.Value) (string, error) {
		if v.Kind != resp.KindBulk {
			return "", fmt.Errorf("call replied %s, want a number or \"0\"", v)
		}
		if v.Str == "0" {
			return "", nil
		}
		return v.Str, nil
	},
	hungUp: func(v resp.Value) bool { return v.Kind == resp.KindBulk && v.Str == "1" },
}

// npNumbers appends numbers from..to-1 of the pool as bulk strings.
func npNumbers(dst []byte, from, to int) []byte {
	for i := from; i < to; i++ {
		dst = appendBulkInt(dst, int64(numpoolFirst+i))
	}
	return dst
}

// npNativeLoad returns n numbers as interleaved NUMPOOL.ADD and NUMPOOL.REG
// commands of per numbers each: command 2c adds batch c, 2c+1 registers it.
// fill's batches hold an even number of commands, so a batch's REG follows
// its ADD on the same connection.
func npNativeLoad(n, per int) (cmds int, gen func(dst []byte, i int) []byte) {
	batches := (n + per - 1) / per
	return 2 * batches, func(dst []byte, i int) []byte {
		from, to := (i/2)*per, min((i/2+1)*per, n)
		dst = appendHeader(dst, '*', 2+to-from)
		dst = appendBulkString(dst, [2]string{"NUMPOOL.ADD", "NUMPOOL.REG"}[i%2])
		dst = appendBulkString(dst, npKey)
		return npNumbers(dst, from, to)
	}
}

// npNativeReset empties the NUMPOOL key and loads numbers 0..n-1, all
// idle+up, registered in order over one connection (fifo's order).
func npNativeReset(ctx context.Context, addr string, n int) error {
	if _, err := do(addr, "DEL", npKey); err != nil {
		return err
	}
	cmds, gen := npNativeLoad(n, npBatch)
	return fill(ctx, addr, cmds, 1, gen)
}

// npInfo reads NUMPOOL.INFO's integer fields (a RESP2 flat map).
func npInfo(addr string) (map[string]int64, error) {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	v, err := c.DoTimeout(time.Minute, "NUMPOOL.INFO", npKey)
	if err != nil {
		return nil, err
	}
	return npIntFields(v)
}

func npIntFields(v resp.Value) (map[string]int64, error) {
	if v.Kind != resp.KindArray || len(v.Elems)%2 != 0 {
		return nil, fmt.Errorf("NUMPOOL.INFO replied %s, want a map", v)
	}
	out := map[string]int64{}
	for i := 0; i < len(v.Elems); i += 2 {
		if v.Elems[i+1].Kind == resp.KindInt {
			out[v.Elems[i].Str] = v.Elems[i+1].Int
		}
	}
	return out, nil
}

// npCheckInfo verifies that NUMPOOL.INFO shows n numbers, all idle+up.
func npCheckInfo(info map[string]int64, n int) error {
	for _, k := range []string{"numbers", "idle+up", "idle+down", "busy+up", "busy+down"} {
		want := int64(0)
		if k == "numbers" || k == "idle+up" {
			want = int64(n)
		}
		got, ok := info[k]
		if !ok {
			return fmt.Errorf("NUMPOOL.INFO has no %q field: %v", k, info)
		}
		if got != want {
			return fmt.Errorf("NUMPOOL.INFO %s is %d, want %d (%d numbers, all idle+up): %v", k, got, want, n, info)
		}
	}
	return nil
}

// npResult is what one call+hangup run measured.
type npResult struct {
	Calls, Pairs, Empty  int64 // calls answered (a number or none), hangups that succeeded, calls that found none
	Errors               int64 // error or unexpected replies: none is a call or a pair, and a run with any fails
	FirstErr             string
	CallHist, HangupHist *Histogram
	Elapsed              time.Duration
	ServerCPU, ClientCPU time.Duration
	RSS                  int64
}

// Sample turns a run into the suite's metrics.
func (r npResult) Sample() map[string]float64 {
	pairs := max(float64(r.Pairs), 1)
	s := map[string]float64{
		"pairs": float64(r.Pairs) / r.Elapsed.Seconds(),
		"calls": float64(r.Calls) / r.Elapsed.Seconds(),
		"cp50":  ms(r.CallHist.Quantile(0.50)), "cp99": ms(r.CallHist.Quantile(0.99)),
		"cp999": ms(r.CallHist.Quantile(0.999)), "cmax": ms(r.CallHist.Max()),
		"hp50": ms(r.HangupHist.Quantile(0.50)), "hp99": ms(r.HangupHist.Quantile(0.99)),
		"hp999": ms(r.HangupHist.Quantile(0.999)), "hmax": ms(r.HangupHist.Max()),
		"clicpu": float64(r.ClientCPU.Microseconds()) / pairs,
		"rss":    float64(r.RSS),
		"errors": float64(r.Errors),
		"empty":  100 * float64(r.Empty) / max(float64(r.Calls), 1),
	}
	if r.ServerCPU > 0 {
		s["srvcpu"] = float64(r.ServerCPU.Microseconds()) / pairs
	}
	return s
}

// npLoad runs the call+hangup loop of d on srv for dur: each client sends
// a batch of pipeline calls, then the hangups of the numbers they took,
// until the time is up (a client always finishes its hangups).
func npLoad(ctx context.Context, srv *Server, d npDialect, clients, pipeline int, dur time.Duration, label string,
	prog *Progress) (npResult, error) {
	conns := make([]*Conn, clients)
	for i := range conns {
		c, err := Dial(srv.Addr, 5*time.Second)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return npResult{}, err
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	type clientResult struct {
		npResult
		err error
	}
	results := make([]clientResult, clients)
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[i]
			res.CallHist, res.HangupHist = NewHistogram(), NewHistogram()
			fail := func(msg string) {
				res.Errors++
				if res.FirstErr == "" {
					res.FirstErr = msg
				}
			}
			// read reads one reply of a batch written at t0; a reply
			// error comes back as ok false, after counting it.
			read := func(t0 time.Time) (v resp.Value, took time.Duration, ok bool) {
				v, err := c.Read()
				took = time.Since(t0)
				var re ReplyError
				if err != nil && !errors.As(err, &re) {
					res.err = err
					return v, took, false
				}
				if err != nil {
					fail(string(re))
					return v, took, false
				}
				return v, took, true
			}
			held := make([]string, 0, pipeline)
			<-start
			for !stop.Load() {
				for range pipeline {
					c.AppendRaw(d.call)
				}
				t0 := time.Now()
				if res.err = c.Flush(); res.err != nil {
					return
				}
				held = held[:0]
				for range pipeline {
					v, took, ok := read(t0)
					if res.err != nil {
						return
					}
					if !ok {
						continue
					}
					n, err := d.taken(v)
					if err != nil {
						fail(err.Error())
						continue
					}
					res.Calls++
					res.CallHist.RecordDuration(took)
					if n == "" {
						res.Empty++
					} else {
						held = append(held, n)
					}
				}
				for _, n := range held {
					d.hangup(c, n)
				}
				t0 = time.Now()
				if res.err = c.Flush(); res.err != nil {
					return
				}
				for _, n := range held {
					v, took, ok := read(t0)
					if res.err != nil {
						return
					}
					if !ok {
						continue
					}
					if !d.hungUp(v) {
						fail(fmt.Sprintf("hangup %s replied %s", n, v))
						continue
					}
					res.Pairs++
					res.HangupHist.RecordDuration(took)
				}
			}
		}()
	}
	before, _ := readProcStats(srv.PID())
	cpu0 := selfCPU()
	t0 := time.Now()
	prog.Timed(label, dur)
	close(start)
	select {
	case <-time.After(dur):
	case <-ctx.Done():
	}
	stop.Store(true)
	wg.Wait()
	out := npResult{Elapsed: time.Since(t0), CallHist: NewHistogram(), HangupHist: NewHistogram(),
		ClientCPU: selfCPU() - cpu0}
	prog.Clear()
	if after, err := readProcStats(srv.PID()); err == nil {
		out.ServerCPU, out.RSS = after.CPU-before.CPU, after.RSS
	}
	for _, r := range results {
		if r.err != nil {
			return out, fmt.Errorf("client: %w", r.err)
		}
		out.Calls += r.Calls
		out.Pairs += r.Pairs
		out.Empty += r.Empty
		out.Errors += r.Errors
		if out.FirstErr == "" {
			out.FirstErr = r.FirstErr
		}
		out.CallHist.Merge(r.CallHist)
		out.HangupHist.Merge(r.HangupHist)
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	if out.Errors > 0 {
		return out, ErrorReplies{N: out.Errors, First: out.FirstErr}
	}
	return out, nil
}

// npMemSet is the memory row: n idle+up numbers, NUMPOOL on Revolver, the
// script's LIST and HASH on Redis.
func npMemSet(n int) memSet {
	cmds, gen := npNativeLoad(n, npBatch)
	ms := memSet{name: fmt.Sprintf("%s%s idle+up numbers", npMemPrefix, humanCount(n)), command: "numpool.add",
		elems: n, cmds: cmds, gen: gen}
	batches := (n + npRecipePer - 1) / npRecipePer
	ms.redisCmds = 2 * batches
	ms.redisGen = func(dst []byte, i int) []byte {
		from, to := (i/2)*npRecipePer, min((i/2+1)*npRecipePer, n)
		if i%2 == 0 {
			dst = appendHeader(dst, '*', 2+to-from)
			dst = appendBulkString(dst, "RPUSH")
			dst = appendBulkString(dst, numpoolKey+":idle:up")
			return npNumbers(dst, from, to)
		}
		dst = appendHeader(dst, '*', 2+2*(to-from))
		dst = appendBulkString(dst, "HSET")
		dst = appendBulkString(dst, numpoolKey+":numstate")
		for j := from; j < to; j++ {
			dst = appendBulkInt(dst, int64(numpoolFirst+j))
			dst = appendBulkString(dst, npIdleUp)
		}
		return dst
	}
	return ms
}

// npTargets states issue 23's targets against this run's medians.
func npTargets(res *Result, servers []*Server) []string {
	rev, red := comparedPair(servers)
	if rev == "" || red == "" {
		return nil
	}
	var out []string
	for _, row := range res.Rows {
		switch {
		case strings.HasPrefix(row.Name, npTPPrefix) && strings.HasSuffix(row.Name, ": "+npFifo.label):
			a, okA := positiveMedian(row, rev, "pairs")
			b, okB := positiveMedian(row, red, "pairs")
			ca, okCA := positiveMedian(row, rev, "cp99")
			cb, okCB := positiveMedian(row, red, "cp99")
			if okA && okB && okCA && okCB {
				out = append(out, fmt.Sprintf("Targets, %s: pairs/s %.2fx Redis's (≥ 3x: %s); call p99 %s ms "+
					"against Redis's %s ms (≤: %s).", row.Name, a/b, metText(a/b >= 3), sig(ca), sig(cb),
					metText(ca <= cb)))
			}
		case strings.HasPrefix(row.Name, npMemPrefix):
			a, okA := positiveMedian(row, rev, "used")
			b, okB := positiveMedian(row, red, "used")
			if okA && okB {
				out = append(out, fmt.Sprintf("Targets, %s: used_memory %s B per number against the script's %s B "+
					"(≤: %s).", row.Name, sig(a), sig(b), metText(a <= b)))
			}
		}
	}
	return out
}
