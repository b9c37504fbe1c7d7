package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// workload is one command shape, as redis-benchmark defines it.
type workload struct {
	name    string
	command string // the command's name, for skip notes
	shape   string // exact command sent; <rand> is 12 zero-padded digits, uniform over the keyspace
	gen     func(keyspace uint64) Generator
	// perClient, when set, makes each client's generator; gen is then
	// only the probe for an unknown command, sent before setup, so it must
	// change nothing.
	perClient func(keyspace uint64, client int) Generator
	// setup runs before every timed run on a server, untimed.
	setup func(ctx context.Context, addr string, keyspace int) error
	// drains: the run ends when the structure runs dry (RPOP, ZPOPMIN).
	drains bool
	// redisGen and redisSetup, when set, replace gen and setup on Redis
	// servers: a native command on Revolver measured against the recipe
	// Redis needs for the same job (the delay suite's DELAY.ADD vs ZADD).
	redisGen   func(keyspace uint64) Generator
	redisSetup func(ctx context.Context, addr string, keyspace int) error
}

// forServer returns the generator and setup a server of kind runs.
func (w *workload) forServer(kind string, keyspace uint64) (Generator, func(ctx context.Context, addr string, keyspace int) error) {
	gen, setup := w.gen, w.setup
	if kind == kindRedis {
		if w.redisGen != nil {
			gen = w.redisGen
		}
		if w.redisSetup != nil {
			setup = w.redisSetup
		}
	}
	return gen(keyspace), setup
}

const benchValue = "xxx" // redis-benchmark's default 3-byte value

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// fixed is a generator for a command without random parts.
func fixed(args ...string) func(uint64) Generator {
	cmd := appendCommand(nil, args...)
	return func(uint64) Generator {
		return func(dst []byte, _ *rand.Rand) []byte { return append(dst, cmd...) }
	}
}

// withRand builds "args... prefix<rand> tail..." with one random argument.
func withRand(head []string, prefix string, tail ...string) func(uint64) Generator {
	return func(keyspace uint64) Generator {
		n := len(head) + 1 + len(tail)
		return func(dst []byte, r *rand.Rand) []byte {
			dst = appendHeader(dst, '*', n)
			for _, a := range head {
				dst = appendBulkString(dst, a)
			}
			dst = appendRandArg(dst, prefix, r.Uint64N(keyspace))
			for _, a := range tail {
				dst = appendBulkString(dst, a)
			}
			return dst
		}
	}
}

var coreWorkloads = []*workload{
	{name: "SET", command: "set", shape: "SET key:<rand> xxx", gen: withRand([]string{"SET"}, "key:", benchValue)},
	{name: "GET", command: "get", shape: "GET key:<rand> (every key:<n> of the keyspace set to xxx first, so GETs hit)",
		gen: withRand([]string{"GET"}, "key:"), setup: fillKeyspace},
	{name: "INCR", command: "incr", shape: "INCR counter:<rand>", gen: withRand([]string{"INCR"}, "counter:")},
	{name: "LPUSH", command: "lpush", shape: "LPUSH mylist xxx", gen: fixed("LPUSH", "mylist", benchValue)},
	{name: "RPOP", command: "rpop", shape: "RPOP mylist (list topped up to the keyspace size first)",
		gen: fixed("RPOP", "mylist"), setup: topUpList(0), drains: true},
	{name: "SADD", command: "sadd", shape: "SADD myset element:<rand>",
		gen: withRand([]string{"SADD", "myset"}, "element:")},
	{name: "HSET", command: "hset", shape: "HSET myhash element:<rand> xxx",
		gen: withRand([]string{"HSET", "myhash"}, "element:", benchValue)},
	{name: "ZADD", command: "zadd", shape: "ZADD myzset <rand> element:<rand>", gen: zaddGen},
	{name: "ZPOPMIN", command: "zpopmin", shape: "ZPOPMIN myzset (zset topped up to the keyspace size first)",
		gen: fixed("ZPOPMIN", "myzset"), setup: topUpZSet, drains: true},
	{name: "PFADD", command: "pfadd", shape: "PFADD myhll element:<rand>",
		gen: withRand([]string{"PFADD", "myhll"}, "element:")},
	{name: "LRANGE_100", command: "lrange", shape: "LRANGE mylist 0 99 (list holds at least 600 elements)",
		gen: fixed("LRANGE", "mylist", "0", "99"), setup: topUpList(600)},
	{name: "MSET(10)", command: "mset", shape: "MSET key:<rand> xxx (10 pairs, each key drawn separately)",
		gen: msetGen},
}

// zaddGen follows redis-benchmark -r: the score is a random number too.
func zaddGen(keyspace uint64) Generator {
	return func(dst []byte, r *rand.Rand) []byte {
		dst = appendHeader(dst, '*', 4)
		dst = appendBulkString(dst, "ZADD")
		dst = appendBulkString(dst, "myzset")
		dst = appendRandArg(dst, "", r.Uint64N(keyspace))
		return appendRandArg(dst, "element:", r.Uint64N(keyspace))
	}
}

func msetGen(keyspace uint64) Generator {
	return func(dst []byte, r *rand.Rand) []byte {
		dst = appendHeader(dst, '*', 21)
		dst = appendBulkString(dst, "MSET")
		for i := 0; i < 10; i++ {
			dst = appendRandArg(dst, "key:", r.Uint64N(keyspace))
			dst = appendBulkString(dst, benchValue)
		}
		return dst
	}
}

// fillKeyspace sets every key:<n> of the keyspace once per server (a
// marker key remembers it), so GET measures hits, not misses.
func fillKeyspace(ctx context.Context, addr string, keyspace int) error {
	marker := "rb:keyspace-filled"
	if v, err := do(addr, "GET", marker); err == nil && v == strconv.Itoa(keyspace) {
		return nil
	}
	const per = 100
	err := fill(ctx, addr, (keyspace+per-1)/per, 2, func(dst []byte, c int) []byte {
		from, to := c*per, min((c+1)*per, keyspace)
		dst = appendHeader(dst, '*', 1+2*(to-from))
		dst = appendBulkString(dst, "MSET")
		for i := from; i < to; i++ {
			dst = appendBulkString(appendRandArg(dst, "key:", uint64(i)), benchValue)
		}
		return dst
	})
	if err != nil {
		return err
	}
	_, err = do(addr, "SET", marker, strconv.Itoa(keyspace))
	return err
}

// topUpList makes mylist hold at least want elements (0: the keyspace
// size), so RPOP measures pops rather than replies to an empty list.
func topUpList(want int) func(ctx context.Context, addr string, keyspace int) error {
	return func(ctx context.Context, addr string, keyspace int) error {
		target := want
		if target == 0 {
			target = keyspace
		}
		n, err := do(addr, "LLEN", "mylist")
		if err != nil {
			return err
		}
		have, _ := strconv.Atoi(n)
		missing := target - have
		const per = 1000
		return fill(ctx, addr, (missing+per-1)/per, 2, func(dst []byte, i int) []byte {
			k := min(per, missing-i*per)
			dst = appendHeader(dst, '*', 2+k)
			dst = appendBulkString(dst, "LPUSH")
			dst = appendBulkString(dst, "mylist")
			for j := 0; j < k; j++ {
				dst = appendBulkString(dst, benchValue)
			}
			return dst
		})
	}
}

// topUpZSet fills myzset with members element:0..keyspace-1 (scores equal
// to the index) so ZPOPMIN has a full set to pop from.
func topUpZSet(ctx context.Context, addr string, keyspace int) error {
	return topUpZSetKey("myzset")(ctx, addr, keyspace)
}

// topUpZSetKey is topUpZSet for any key.
func topUpZSetKey(key string) func(ctx context.Context, addr string, keyspace int) error {
	return func(ctx context.Context, addr string, keyspace int) error { return zsetTopUp(ctx, addr, key, keyspace) }
}

func zsetTopUp(ctx context.Context, addr, key string, keyspace int) error {
	n, err := do(addr, "ZCARD", key)
	if err != nil {
		return err
	}
	if have, _ := strconv.Atoi(n); have >= keyspace {
		return nil
	}
	const per = 500
	return fill(ctx, addr, (keyspace+per-1)/per, 2, func(dst []byte, i int) []byte {
		from, to := i*per, min((i+1)*per, keyspace)
		dst = appendHeader(dst, '*', 2+2*(to-from))
		dst = appendBulkString(dst, "ZADD")
		dst = appendBulkString(dst, key)
		for m := from; m < to; m++ {
			dst = appendBulkInt(dst, int64(m))
			dst = appendRandArg(dst, "element:", uint64(m))
		}
		return dst
	})
}

// pipelineCases is every workload at each --pipeline depth with --clients
// connections, depth by depth.
func pipelineCases(env *Env, ws []*workload) []tpCase {
	var cases []tpCase
	for _, p := range env.Opts.Pipelines {
		for _, w := range ws {
			cases = append(cases, tpCase{name: fmt.Sprintf("%s P%d", w.name, p), work: w,
				clients: env.Opts.Clients, pipeline: p})
		}
	}
	return cases
}

type coreSuite struct{}

func init() { register(coreSuite{}) }

func (coreSuite) Name() string { return "core" }
func (coreSuite) About() string {
	return "redis-benchmark's commands (SET GET INCR LPUSH RPOP SADD HSET ZADD ZPOPMIN PFADD LRANGE_100 MSET), --clients, --pipeline"
}
func (coreSuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: o.Fsync}
}

func (coreSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: throughputViews}
	cases := pipelineCases(env, coreWorkloads)
	res.Notes = append(res.Notes,
		fmt.Sprintf("Workloads follow `redis-benchmark -r %d -d 3`: <rand> is a number drawn uniformly from [0, %d) "+
			"and written as 12 zero-padded digits; each command's own keys, as below. Rows run in this order, "+
			"each on both servers before the next.",
			env.Scaled(1_000_000), env.Scaled(1_000_000)))
	for _, w := range coreWorkloads {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: `%s`", w.name, w.shape))
	}
	res.Notes = append(res.Notes, "PN = N commands pipelined per round trip per client; latency is per "+
		"command, from the write of its batch to the arrival of its reply (as redis-benchmark counts it).",
		"RPOP and ZPOPMIN runs end early when the list or zset runs dry (the first empty reply), so they measure "+
			"pops, not replies to an empty key; their throughput is over the shorter run.")
	return res, runThroughput(ctx, env, res, cases)
}
