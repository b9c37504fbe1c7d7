package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// The script suite measures Lua scripting (issue 22) with EVALSHA, the way
// applications run scripts: loaded once with SCRIPT LOAD, then called by
// SHA1.
//
//   - "3 calls": a small script that makes three redis.call (INCR, HSET,
//     GET): the fixed cost of a script call over the commands it runs;
//   - "numpool call+hangup": seed 003's number-pool script (numpoolScript)
//     as its users drive it: an agent takes a free number with `call` and
//     gives it back with `hangup`, each one EVALSHA doing HGET, cjson
//     decode and encode, HSET and a LIST push or pop.
//
// Both at --clients connections and each --pipeline depth; ops/s and
// server CPU per script call, on Revolver and redis-server side by side.
type scriptSuite struct{}

func init() { register(scriptSuite{}) }

func (scriptSuite) Name() string { return "script" }
func (scriptSuite) About() string {
	return "Lua scripting: EVALSHA of a 3-call script (INCR, HSET, GET), of seed 003's number pool (call + hangup) " +
		"and of a job queue's add and move-to-active scripts in BullMQ's shape, --clients, --pipeline"
}
func (scriptSuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: o.Fsync}
}

// threeCallScript is the small script: three commands, the counter's value
// back.
const threeCallScript = `redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return redis.call('GET', KEYS[1])`

const (
	numpoolKey   = "{numpool}" // the pool's hash tag, KEYS[1] of every call
	numpoolMin   = 1000        // numbers in the pool, at least
	numpoolFirst = 13800000000 // the pool's numbers count up from here
)

func scriptSHA(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

var (
	threeCallSHA = scriptSHA(threeCallScript)
	numpoolSHA   = scriptSHA(numpoolScript)
)

// scriptViews are throughputViews in script calls.
var scriptViews = []View{
	{Title: "Throughput (script calls/s; median of rounds, min–max) and server CPU per script call", Metrics: []Metric{
		{Key: "ops", Label: "calls/s", Unit: "ops/s", Spread: true, Ratio: true},
		{Key: "srvcpu", Label: "srv CPU µs/call", Unit: "µs", Ratio: true},
	}},
	{Title: "Latency per script call, ms (median of rounds)", Metrics: []Metric{
		{Key: "p50", Label: "p50", Unit: "ms"},
		{Key: "p99", Label: "p99", Unit: "ms"},
		{Key: "p999", Label: "p99.9", Unit: "ms"},
		{Key: "max", Label: "max", Unit: "ms"},
	}},
	{Title: "Client CPU, server RSS after the run, empty replies (nil, or a call that found no free number)", Metrics: []Metric{
		{Key: "clicpu", Label: "client CPU µs/call", Unit: "µs"},
		{Key: "rss", Label: "RSS", Unit: "MB"},
		{Key: "empty", Label: "empty", Unit: "%"},
	}},
}

var threeCallWorkload = &workload{
	name: "EVALSHA 3 calls", command: "evalsha",
	shape: "EVALSHA <sha> 2 script:counter:<rand> script:hash script:field:<rand> xxx, the script being " +
		strings.ReplaceAll(threeCallScript, "\n", "; "),
	gen:   threeCallGen,
	setup: func(_ context.Context, addr string, _ int) error { return loadScripts(addr) },
}

func threeCallGen(keyspace uint64) Generator {
	return func(dst []byte, r *rand.Rand) []byte {
		dst = appendHeader(dst, '*', 7)
		dst = appendBulkString(dst, "EVALSHA")
		dst = appendBulkString(dst, threeCallSHA)
		dst = appendBulkString(dst, "2")
		dst = appendRandArg(dst, "script:counter:", r.Uint64N(keyspace))
		dst = appendBulkString(dst, "script:hash")
		dst = appendRandArg(dst, "script:field:", r.Uint64N(keyspace))
		return appendBulkString(dst, benchValue)
	}
}

// loadScripts loads the suite's scripts on a server (SCRIPT LOAD is idempotent)
// and checks the SHA1 it answers.
func loadScripts(addr string) error {
	for _, s := range []struct{ src, sha string }{{threeCallScript, threeCallSHA}, {numpoolScript, numpoolSHA},
		{bullAddScript, bullAddSHA}, {bullMoveScript, bullMoveSHA}} {
		got, err := do(addr, "SCRIPT", "LOAD", s.src)
		if err != nil {
			return err
		}
		if got != s.sha {
			return fmt.Errorf("SCRIPT LOAD answered %q, want the SHA1 %s", got, s.sha)
		}
	}
	return nil
}

func (scriptSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: scriptViews}
	keyspace := env.Scaled(1_000_000)
	pool := numpoolSize(env.Opts)
	res.Notes = append(res.Notes,
		"Every script is loaded with SCRIPT LOAD before the rows run and called with EVALSHA; a row's ops/s are "+
			"script calls per second, and srv CPU µs/call is the server's CPU time over the run (utime+stime) "+
			"divided by the script calls it answered.",
		fmt.Sprintf("%s: `%s`; <rand> is a number drawn uniformly from [0, %d), written as 12 zero-padded digits.",
			threeCallWorkload.name, threeCallWorkload.shape, keyspace),
		fmt.Sprintf("EVALSHA numpool call+hangup: seed 003's number-pool script (cmd/revolver-bench/numpool_script.go, "+
			"the text tests/testdata/seed003_numpool.lua tests on both servers; SHA1 %s). Before each run the pool "+
			"is reset and %d numbers are added and registered with the script itself (`add`, `reg`), so all are "+
			"idle+up. Each client then loops: N × `EVALSHA <sha> 1 {numpool} call` in one batch (each takes the "+
			"number at the LIST's head: LPOP, HSET busy+up), then N × `EVALSHA <sha> 1 {numpool} hangup <number>` "+
			"for the numbers it got (HGET, HSET idle+up, RPUSH), where N is the pipeline depth; both halves count "+
			"as script calls. The pool is larger than clients × depth, so a call always finds a free number; "+
			"after the run every number must be idle+up again, or the run fails.", numpoolSHA, pool),
		fmt.Sprintf("%s: %s. The add script takes a new id (INCR), writes the job's HASH (6 fields), appends an "+
			"event to a stream (XADD MAXLEN ~), ZADDs the id to an index and LPUSHes it to the wait LIST with a "+
			"second event; the move script LMOVEs the oldest id to the active LIST, sets a lock with PX, ZREMs it, "+
			"HSETs and HINCRBYs the job, appends an event and returns the job with HGETALL. Before each run the "+
			"database is flushed.", bullWorkload.name, bullWorkload.shape),
		"PN = N script calls pipelined per round trip per client; latency is per call, from the write of its "+
			"batch to the arrival of its reply. Rows run in this order, each on both servers before the next.")
	scripting := map[string]bool{}
	for _, s := range env.Servers {
		err := loadScripts(s.Addr)
		switch {
		case err == nil:
			scripting[s.Name] = true
		case unknownCommand(err):
		default:
			return nil, fmt.Errorf("SCRIPT LOAD on %s: %w", s.Name, err)
		}
	}
	for _, p := range env.Opts.Pipelines {
		tc := tpCase{name: fmt.Sprintf("%s P%d", threeCallWorkload.name, p), work: threeCallWorkload,
			clients: env.Opts.Clients, pipeline: p}
		if err := runThroughput(ctx, env, res, []tpCase{tc}); err != nil {
			return res, err
		}
		name := fmt.Sprintf("EVALSHA numpool call+hangup P%d", p)
		row := res.NewRow(name)
		for _, s := range env.Servers {
			if !scripting[s.Name] {
				row.Skip(s.Name, fmt.Sprintf("skipped: %s answers \"ERR unknown command\" to SCRIPT", s.Name))
			}
		}
		for round := 1; round <= env.Opts.Rounds; round++ {
			for _, s := range env.Servers {
				if row.Skipped(s.Name) {
					continue
				}
				env.Prog.Status(fmt.Sprintf("%s %s: setup", name, s.Name))
				if err := numpoolReset(ctx, s.Addr, pool); err != nil {
					return res, fmt.Errorf("%s setup on %s: %w", name, s.Name, err)
				}
				label := fmt.Sprintf("%s on %s, round %d/%d", name, s.Name, round, env.Opts.Rounds)
				r, err := numpoolLoad(ctx, s, env.Opts.Clients, p, env.Opts.Duration, label, env.Prog)
				if err != nil {
					return res, fmt.Errorf("%s on %s: %w", name, s.Name, err)
				}
				if err := numpoolCheck(s.Addr, pool); err != nil {
					return res, fmt.Errorf("%s on %s: after the run: %w", name, s.Name, err)
				}
				row.Add(s.Name, r.Sample())
			}
		}
		bull := tpCase{name: fmt.Sprintf("%s P%d", bullWorkload.name, p), work: bullWorkload,
			clients: env.Opts.Clients, pipeline: p}
		if err := runThroughput(ctx, env, res, []tpCase{bull}); err != nil {
			return res, err
		}
	}
	return res, nil
}

// numpoolSize is the pool's size: enough for every client to hold a full
// pipeline of numbers at once.
func numpoolSize(o *Options) int {
	deepest := 1
	for _, p := range o.Pipelines {
		deepest = max(deepest, p)
	}
	return max(numpoolMin, 2*o.Clients*deepest)
}

func numpoolNumber(i int) string { return strconv.Itoa(numpoolFirst + i) }

// numpoolReset empties the pool and adds and registers numbers 0..n-1 with
// the script, so every one is idle+up, in order, in the LIST.
func numpoolReset(ctx context.Context, addr string, n int) error {
	if err := loadScripts(addr); err != nil {
		return err
	}
	if _, err := do(addr, "DEL", numpoolKey+":idle:up", numpoolKey+":numstate"); err != nil {
		return err
	}
	// add and reg of a number are commands 2i and 2i+1: one batch of fill
	// (an even number of commands) sends both, in order, on one connection.
	return fill(ctx, addr, 2*n, 2, func(dst []byte, i int) []byte {
		return appendCommand(dst, "EVALSHA", numpoolSHA, "1", numpoolKey, [2]string{"add", "reg"}[i%2],
			numpoolNumber(i/2))
	})
}

// numpoolCheck verifies that a run gave every number back: all n are in
// the pool and in the idle+up LIST.
func numpoolCheck(addr string, n int) error {
	free, err := do(addr, "LLEN", numpoolKey+":idle:up")
	if err != nil {
		return err
	}
	all, err := do(addr, "HLEN", numpoolKey+":numstate")
	if err != nil {
		return err
	}
	if free != strconv.Itoa(n) || all != strconv.Itoa(n) {
		return fmt.Errorf("%s of %d numbers idle+up in the LIST and %s in the HASH, want all", free, n, all)
	}
	return nil
}

// numpoolLoad is runLoad for the call+hangup loop, whose hangups name the
// numbers the calls' replies gave: each client sends a batch of pipeline
// calls, reads the numbers, sends a batch of their hangups and reads those
// replies, until the duration is up (a client always finishes its hangups).
func numpoolLoad(ctx context.Context, srv *Server, clients, pipeline int, d time.Duration, label string,
	prog *Progress) (LoadResult, error) {
	conns := make([]*Conn, clients)
	for i := range conns {
		c, err := Dial(srv.Addr, 5*time.Second)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return LoadResult{}, err
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	type clientResult struct {
		ops, errs, empty int64
		firstErr         string
		hist             *Histogram
		err              error
	}
	results := make([]clientResult, clients)
	call := appendCommand(nil, "EVALSHA", numpoolSHA, "1", numpoolKey, "call")
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[i]
			res.hist = NewHistogram()
			held := make([]string, 0, pipeline)
			fail := func(msg string) {
				res.errs++
				if res.firstErr == "" {
					res.firstErr = msg
				}
			}
			// batch reads n replies of a batch written at t0; each one
			// that is not an error goes to got, and counts as a call if
			// got says it is the reply expected.
			batch := func(n int, t0 time.Time, got func(j int, v resp.Value) bool) bool {
				for j := range n {
					v, err := c.Read()
					var re ReplyError
					if err != nil && !errors.As(err, &re) {
						res.err = err
						return false
					}
					if err != nil {
						fail(string(re))
						continue
					}
					if got(j, v) {
						res.hist.RecordDuration(time.Since(t0))
						res.ops++
					}
				}
				return true
			}
			<-start
			for !stop.Load() {
				for range pipeline {
					c.AppendRaw(call)
				}
				t0 := time.Now()
				if res.err = c.Flush(); res.err != nil {
					return
				}
				held = held[:0]
				if !batch(pipeline, t0, func(_ int, v resp.Value) bool {
					if v.Kind != resp.KindBulk || v.Str == "0" {
						res.empty++
						return true
					}
					held = append(held, v.Str)
					return true
				}) {
					return
				}
				if len(held) == 0 {
					continue
				}
				for _, n := range held {
					c.Append("EVALSHA", numpoolSHA, "1", numpoolKey, "hangup", n)
				}
				t0 = time.Now()
				if res.err = c.Flush(); res.err != nil {
					return
				}
				if !batch(len(held), t0, func(j int, v resp.Value) bool {
					if v.Kind != resp.KindBulk || v.Str != "1" {
						fail(fmt.Sprintf("hangup %s replied %s", held[j], v))
						return false
					}
					return true
				}) {
					return
				}
			}
		}()
	}
	before, _ := readProcStats(srv.PID())
	cpu0 := selfCPU()
	t0 := time.Now()
	prog.Timed(label, d)
	close(start)
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	stop.Store(true)
	wg.Wait()
	out := LoadResult{Elapsed: time.Since(t0), Hist: NewHistogram(), ClientCPU: selfCPU() - cpu0}
	prog.Clear()
	if after, err := readProcStats(srv.PID()); err == nil {
		out.ServerCPU, out.RSS = after.CPU-before.CPU, after.RSS
	}
	for _, r := range results {
		if r.err != nil {
			return out, fmt.Errorf("client: %w", r.err)
		}
		out.Ops += r.ops
		out.Errors += r.errs
		out.Empty += r.empty
		if out.FirstErr == "" {
			out.FirstErr = r.firstErr
		}
		out.Hist.Merge(r.hist)
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	if out.Errors > 0 {
		return out, ErrorReplies{N: out.Errors, First: out.FirstErr}
	}
	return out, nil
}
