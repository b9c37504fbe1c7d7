package main

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// The hll suite measures what issue 4 asks of HyperLogLog: PFADD of 1 and
// of 100 elements per call, single-key PFCOUNT with its cache valid and
// after changes, PFCOUNT of 10 keys and PFMERGE of 10 dense keys.

const (
	hllSources   = 10     // hll:0 .. hll:9, the multi-key rows' inputs
	hllFill      = 20_000 // elements per prepared key: dense on both servers
	hllFillChunk = 1000
	// hllRecountKeys are the recount row's keys, one per client up to
	// this many clients (more share them).
	hllRecountKeys = 64
)

var hllWorkloads = []*workload{
	{name: "PFADD 1", command: "pfadd", shape: "PFADD hll:add element:<rand>",
		gen: withRand([]string{"PFADD", "hll:add"}, "element:")},
	{name: "PFADD 100", command: "pfadd", shape: "PFADD hll:add100 element:<rand> ... (100 elements, each drawn separately)",
		gen: pfaddManyGen},
	{name: "PFCOUNT cached", command: "pfcount",
		shape: fmt.Sprintf("PFCOUNT hll:0 (a dense key of %d elements that nothing changes: its cached count stays valid)", hllFill),
		gen:   fixed("PFCOUNT", "hll:0"), setup: fillHLLs},
	{name: "PFADD/PFCOUNT mix", command: "pfcount",
		shape: fmt.Sprintf("PFADD hll:mix element:<rand> or PFCOUNT hll:mix, half and half at random (hll:mix starts dense with %d "+
			"elements; a PFCOUNT after a PFADD that changed a register recounts the 16384 registers)", hllFill),
		gen: pfMixGen, setup: fillHLLs},
	{name: "PFCOUNT after a change", command: "pfcount",
		shape: fmt.Sprintf("SETRANGE hll:chg:<c> 15 \"\\x80\" then PFCOUNT hll:chg:<c>, in turn, on the client's own key "+
			"(dense, %d elements): the byte SETRANGE writes marks the cached count stale, as any change does, so every "+
			"PFCOUNT recounts the 16384 registers and caches the count; ops/s counts both commands", hllFill),
		gen: fixed("PFCOUNT", "hll:chg:0"), perClient: pfRecountGen, setup: fillRecountHLLs},
	{name: "PFCOUNT 10 keys", command: "pfcount",
		shape: fmt.Sprintf("PFCOUNT hll:0 ... hll:9 (10 dense keys of %d elements each, merged into a scratch set per call)", hllFill),
		gen:   fixed(append([]string{"PFCOUNT"}, hllSourceKeys()...)...), setup: fillHLLs},
	{name: "PFMERGE 10 keys", command: "pfmerge", shape: "PFMERGE hll:merged hll:0 ... hll:9 (the same 10 dense keys)",
		gen: fixed(append([]string{"PFMERGE", "hll:merged"}, hllSourceKeys()...)...), setup: fillHLLs},
}

func hllSourceKeys() []string {
	keys := make([]string, hllSources)
	for i := range keys {
		keys[i] = fmt.Sprintf("hll:%d", i)
	}
	return keys
}

func pfaddManyGen(keyspace uint64) Generator {
	return func(dst []byte, r *rand.Rand) []byte {
		dst = appendHeader(dst, '*', 102)
		dst = appendBulkString(dst, "PFADD")
		dst = appendBulkString(dst, "hll:add100")
		for range 100 {
			dst = appendRandArg(dst, "element:", r.Uint64N(keyspace))
		}
		return dst
	}
}

func pfMixGen(keyspace uint64) Generator {
	return func(dst []byte, r *rand.Rand) []byte {
		if r.Uint64()&1 == 0 {
			return appendCommand(dst, "PFCOUNT", "hll:mix")
		}
		dst = appendHeader(dst, '*', 3)
		dst = appendBulkString(dst, "PFADD")
		dst = appendBulkString(dst, "hll:mix")
		return appendRandArg(dst, "element:", r.Uint64N(keyspace))
	}
}

// pfRecountGen alternates a change to the client's own dense HLL with a
// PFCOUNT of it, which then cannot answer from the cache.
func pfRecountGen(_ uint64, client int) Generator {
	key := recountKey(client)
	change := appendCommand(nil, "SETRANGE", key, "15", "\x80")
	count := appendCommand(nil, "PFCOUNT", key)
	changed := false
	return func(dst []byte, _ *rand.Rand) []byte {
		changed = !changed
		if changed {
			return append(dst, change...)
		}
		return append(dst, count...)
	}
}

func recountKey(client int) string { return fmt.Sprintf("hll:chg:%d", client%hllRecountKeys) }

// fillRecountHLLs gives the recount row's keys hllFill elements each.
func fillRecountHLLs(ctx context.Context, addr string, _ int) error {
	keys := make([]string, hllRecountKeys)
	for i := range keys {
		keys[i] = recountKey(i)
	}
	return fillHLLKeys(ctx, addr, keys)
}

// fillHLLs gives hll:0..9 and hll:mix hllFill distinct elements each (their
// own ranges of element:<n>). PFADD of elements already counted changes
// nothing, so running it before every round is cheap and leaves the keys
// as they were.
func fillHLLs(ctx context.Context, addr string, _ int) error {
	return fillHLLKeys(ctx, addr, append(hllSourceKeys(), "hll:mix"))
}

// fillHLLKeys gives each key hllFill elements of its own.
func fillHLLKeys(ctx context.Context, addr string, keys []string) error {
	chunks := hllFill / hllFillChunk
	return fill(ctx, addr, len(keys)*chunks, 2, func(dst []byte, i int) []byte {
		k, c := i/chunks, i%chunks
		dst = appendHeader(dst, '*', 2+hllFillChunk)
		dst = appendBulkString(dst, "PFADD")
		dst = appendBulkString(dst, keys[k])
		for j := range hllFillChunk {
			dst = appendRandArg(dst, "element:", uint64(k*hllFill+c*hllFillChunk+j))
		}
		return dst
	})
}

type hllSuite struct{}

func init() { register(hllSuite{}) }

func (hllSuite) Name() string { return "hll" }
func (hllSuite) About() string {
	return "HyperLogLog: PFADD of 1 and 100 elements, PFCOUNT cached, after a change and mixed with PFADD, PFCOUNT and PFMERGE of 10 dense keys, --clients, --pipeline"
}
func (hllSuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: o.Fsync}
}

func (hllSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: throughputViews}
	cases := pipelineCases(env, hllWorkloads)
	res.Notes = append(res.Notes, fmt.Sprintf("<rand> is a number drawn uniformly from [0, %d) and written as 12 "+
		"zero-padded digits; in a round, every client draws the same sequence on both servers (its random source is "+
		"seeded by the round and the client), and both servers' HyperLogLogs are byte-identical, so both see the same "+
		"register changes. Rows run in this order, each on both servers before the next.", env.Scaled(1_000_000)))
	for _, w := range hllWorkloads {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: `%s`", w.name, w.shape))
	}
	res.Notes = append(res.Notes, "PN = N commands pipelined per round trip per client; latency is per command, "+
		"from the write of its batch to the arrival of its reply.")
	return res, runThroughput(ctx, env, res, cases)
}
