package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// Suite is one family of measurements. Adding a suite is one new file that
// implements this and calls register from init.
type Suite interface {
	Name() string
	About() string
	// Config is the durability both servers are started with.
	Config(o *Options) ServerConfig
	// Run measures every server of env, A B A B, and returns the rows.
	Run(ctx context.Context, env *Env) (*Result, error)
}

var registry = map[string]Suite{}

func register(s Suite) {
	if _, dup := registry[s.Name()]; dup {
		panic("revolver-bench: suite registered twice: " + s.Name())
	}
	registry[s.Name()] = s
}

// suiteOrder is the order "all" runs them in (and --help lists them in).
func suiteOrder() []string {
	preferred := []string{"core", "durable", "expiry-events", "delay", "hll", "memory", "restart"}
	seen := map[string]bool{}
	var out []string
	for _, n := range preferred {
		if registry[n] != nil {
			out, seen[n] = append(out, n), true
		}
	}
	var rest []string
	for n := range registry {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// Env is what a suite runs against: the servers in A B order, the options,
// and helpers for the chores every suite shares.
type Env struct {
	Opts    *Options
	Servers []*Server
	Config  ServerConfig
	Prog    *Progress
	Log     io.Writer

	// fresh starts a new owned server of a kind with a configuration (the
	// memory suite measures each type on a freshly started process).
	fresh func(ctx context.Context, kind string, cfg ServerConfig) (*Server, error)
}

// Scaled applies --scale to one of a suite's sizes (never below 1).
func (e *Env) Scaled(n int) int {
	return max(1, int(math.Round(float64(n)*e.Opts.Scale)))
}

// Logf writes a line to the log (stderr), above the progress line.
func (e *Env) Logf(format string, args ...any) {
	e.Prog.Clear()
	fmt.Fprintf(e.Log, format+"\n", args...)
}

// Flush empties a server the bench owns; servers given with --addr are
// never flushed (suites that need an empty server skip them instead).
func (e *Env) Flush(s *Server) error {
	if !s.Owned {
		return nil
	}
	c, err := Dial(s.Addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.DoTimeout(10*time.Minute, "FLUSHALL")
	return err
}

// do runs one control command on a fresh connection.
func do(addr string, args ...string) (string, error) {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	v, err := c.DoTimeout(time.Minute, args...)
	if err != nil {
		return "", err
	}
	if v.Kind == ':' {
		return fmt.Sprint(v.Int), nil
	}
	return v.Str, nil
}

// hasCommand asks COMMAND INFO whether the server knows a command.
func hasCommand(addr, name string) (bool, error) {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return false, err
	}
	defer c.Close()
	v, err := c.DoTimeout(10*time.Second, "COMMAND", "INFO", name)
	if err != nil {
		return false, err
	}
	return len(v.Elems) > 0 && v.Elems[0].Kind != '_', nil
}

// probe sends one command of a generator and reports whether the server
// knows it: an "unknown command" reply means the workload is skipped.
func probe(addr string, gen Generator) (known bool, err error) {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return false, err
	}
	defer c.Close()
	c.AppendRaw(gen(nil, newRand(1)))
	if err := c.Flush(); err != nil {
		return false, err
	}
	r, err := c.Skip()
	if err != nil {
		return false, err
	}
	if r.err != "" {
		if unknownCommand(ReplyError(r.err)) {
			return false, nil
		}
		return false, ReplyError(r.err)
	}
	return true, nil
}

// tpCase is one row of a throughput suite.
type tpCase struct {
	name     string
	work     *workload
	clients  int
	pipeline int
}

// throughputViews are the tables of the core and durable suites.
var throughputViews = []View{
	{Title: "Throughput (requests/s; median of rounds, min–max) and server CPU per request", Metrics: []Metric{
		{Key: "ops", Label: "ops/s", Unit: "ops/s", Spread: true, Ratio: true},
		{Key: "srvcpu", Label: "srv CPU µs/op", Unit: "µs", Ratio: true},
	}},
	{Title: "Latency per request, ms (median of rounds)", Metrics: []Metric{
		{Key: "p50", Label: "p50", Unit: "ms"},
		{Key: "p99", Label: "p99", Unit: "ms"},
		{Key: "p999", Label: "p99.9", Unit: "ms"},
		{Key: "max", Label: "max", Unit: "ms"},
	}},
	{Title: "Client CPU, server RSS after the run, empty replies (nil or empty array)", Metrics: []Metric{
		{Key: "clicpu", Label: "client CPU µs/op", Unit: "µs"},
		{Key: "rss", Label: "RSS", Unit: "MB"},
		{Key: "empty", Label: "empty", Unit: "%"},
	}},
}

// runThroughput measures each case on each server, A B A B: for every
// case, round after round, each server in turn.
func runThroughput(ctx context.Context, env *Env, res *Result, cases []tpCase) error {
	keyspace := uint64(env.Scaled(1_000_000))
	for _, tc := range cases {
		row := res.NewRow(tc.name)
		for _, s := range env.Servers {
			gen, _ := tc.work.forServer(s.Kind, keyspace)
			known, err := probe(s.Addr, gen)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", tc.name, s.Name, err)
			}
			if !known {
				row.Skip(s.Name, fmt.Sprintf("skipped: %s answers \"ERR unknown command\" to %s", s.Name,
					strings.ToUpper(tc.work.command)))
			}
		}
		for round := 1; round <= env.Opts.Rounds; round++ {
			for _, s := range env.Servers {
				if row.Skipped(s.Name) {
					continue
				}
				gen, setup := tc.work.forServer(s.Kind, keyspace)
				if setup != nil {
					env.Prog.Status(fmt.Sprintf("%s %s: setup", tc.name, s.Name))
					if err := setup(ctx, s.Addr, int(keyspace)); err != nil {
						return fmt.Errorf("%s setup on %s: %w", tc.name, s.Name, err)
					}
				}
				label := fmt.Sprintf("%s on %s, round %d/%d", tc.name, s.Name, round, env.Opts.Rounds)
				spec := LoadSpec{Clients: tc.clients, Pipeline: tc.pipeline, Duration: env.Opts.Duration,
					Gen: gen, Seed: uint64(round), Label: label, StopOnEmpty: tc.work.drains}
				if pc := tc.work.perClient; pc != nil {
					spec.ClientGen = func(i int) Generator { return pc(keyspace, i) }
				}
				r, err := runLoad(ctx, s, spec, env.Prog)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", tc.name, s.Name, err)
				}
				row.Add(s.Name, r.Sample())
			}
		}
	}
	return nil
}
