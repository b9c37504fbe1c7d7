// Command revolver-bench measures Revolver side by side with redis-server on
// the same machine, with the same client, and records the results.
//
//	go run ./cmd/revolver-bench --suite core --vs redis
//	go run ./cmd/revolver-bench --suite all --vs redis --json
//	go run ./cmd/revolver-bench --suite durable --addr 127.0.0.1:6379
//
// It builds Revolver from this checkout, starts it (and redis-server with
// --vs redis) on free loopback ports with fresh directories, runs each
// workload on both A B A B for --rounds rounds, prints the tables and writes
// them to bench/results/DATE-SUITE.md. Servers it started are stopped when
// it exits, Ctrl-C included.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options are the command-line settings.
type Options struct {
	Suites      []string
	VsRedis     bool
	Duration    time.Duration
	Clients     int
	Pipelines   []int
	Rounds      int
	Fsync       string
	Addr        string
	JSON        bool
	Out         string
	Scale       float64
	RevolverBin string
	RedisBin    string
	Date        string // results file date, YYYY-MM-DD (today)
	Command     string // the command line, for the report
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	interrupted := ctx.Err() != nil
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case interrupted:
		fmt.Fprintln(os.Stderr, "revolver-bench: interrupted; servers stopped")
		os.Exit(130)
	case err != nil:
		fmt.Fprintf(os.Stderr, "revolver-bench: %v\n", err)
		os.Exit(1)
	}
}

type listFlag struct{ vals *[]string }

func (l listFlag) String() string {
	if l.vals == nil {
		return ""
	}
	return strings.Join(*l.vals, ",")
}

func (l listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l.vals = append(*l.vals, v)
		}
	}
	return nil
}

func parseOptions(args []string, stderr io.Writer) (*Options, error) {
	o := &Options{}
	fs := flag.NewFlagSet("revolver-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(listFlag{&o.Suites}, "suite", "suite to run (repeatable or comma-separated; \"all\" runs every suite)")
	vs := fs.String("vs", "", "\"redis\": also start redis-server from PATH and compare (same client, same durability)")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "length of each timed run")
	fs.IntVar(&o.Clients, "clients", 50, "connections for the core suite")
	pipes := fs.String("pipeline", "1,16", "pipeline depths for the core suite")
	fs.IntVar(&o.Rounds, "rounds", 3, "A B rounds per workload (medians and min–max are reported)")
	fs.StringVar(&o.Fsync, "fsync", "everysec", "appendfsync of both servers: everysec or always (core, expiry-events, delay, restart)")
	fs.StringVar(&o.Addr, "addr", "", "measure an already-running server at host:port instead of building and starting Revolver")
	fs.BoolVar(&o.JSON, "json", false, "also write a .json copy of the results")
	fs.StringVar(&o.Out, "out", "bench/results", "directory for the results files (\"\" writes none); relative to the checkout")
	fs.Float64Var(&o.Scale, "scale", 1, "multiply every suite's sizes (keyspace, key counts) by this; recorded runs use 1")
	fs.StringVar(&o.RevolverBin, "revolver-bin", "", "use this revolver binary instead of building ./cmd/revolver")
	addRSSFlags(fs)     // --rss-wait, --rss-10m, --drift-duration (suite_rss.go)
	addReplFlags(fs)    // --repl-keys (suite_replication.go)
	addConsoleFlags(fs) // --console-keys, --console-jobs (suite_console.go)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: revolver-bench [--suite NAME ...] [--vs redis] [--duration 10s] [--clients 50]")
		fmt.Fprintln(stderr, "                      [--pipeline 1,16] [--rounds 3] [--fsync everysec|always] [--addr host:port]")
		fmt.Fprintln(stderr, "                      [--json] [--out bench/results] [--scale 1] [--revolver-bin PATH]")
		fmt.Fprintln(stderr, "\nsuites:")
		for _, n := range suiteOrder() {
			fmt.Fprintf(stderr, "  %-14s %s\n", n, registry[n].About())
		}
		fmt.Fprintln(stderr, "\noptions:")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nWith --addr the bench writes into that server's database 0 (as redis-benchmark does) and")
		fmt.Fprintln(stderr, "never flushes it; suites that need a fresh server (memory, restart) skip it.")
	}
	// "--suite core durable --vs redis": bare suite names after the flag
	// are suites too; flag parsing resumes after them.
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		if name := fs.Arg(0); registry[name] != nil || name == "all" {
			o.Suites = append(o.Suites, name)
			rest = fs.Args()[1:]
			continue
		}
		return nil, fmt.Errorf("unexpected argument %q (not a suite; have: %s)", fs.Arg(0),
			strings.Join(suiteOrder(), ", "))
	}
	switch *vs {
	case "":
	case "redis":
		o.VsRedis = true
	default:
		return nil, fmt.Errorf("--vs %q: only \"redis\" is supported", *vs)
	}
	for _, p := range strings.Split(*pipes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--pipeline %q: want depths like 1,16", *pipes)
		}
		o.Pipelines = append(o.Pipelines, n)
	}
	if o.Fsync != "everysec" && o.Fsync != "always" {
		return nil, fmt.Errorf("--fsync %q: want everysec or always", o.Fsync)
	}
	if o.Rounds < 1 || o.Clients < 1 || o.Duration <= 0 || o.Scale <= 0 {
		return nil, errors.New("--rounds, --clients, --duration and --scale must be positive")
	}
	if len(o.Suites) == 0 {
		o.Suites = []string{"core"}
	}
	if slices.Contains(o.Suites, "all") {
		o.Suites = suiteOrder()
	}
	for _, s := range o.Suites {
		if registry[s] == nil {
			return nil, fmt.Errorf("unknown suite %q (have: %s)", s, strings.Join(suiteOrder(), ", "))
		}
	}
	o.Date = time.Now().Format("2006-01-02")
	o.Command = commandLine(args)
	return o, nil
}

// commandLine is how the run was invoked, quoted for a shell.
func commandLine(args []string) string {
	parts := []string{"go run ./cmd/revolver-bench"}
	if exe := filepath.Base(os.Args[0]); !strings.Contains(os.Args[0], "go-build") && exe != "revolver-bench.test" {
		parts[0] = exe
	}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " '\"$*?") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// run is the whole program; tests call it with their own arguments.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if o.VsRedis {
		if o.RedisBin, err = exec.LookPath("redis-server"); err != nil {
			return errors.New("--vs redis needs redis-server in PATH")
		}
	}
	tmp, err := os.MkdirTemp("", "revolver-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	prog := NewProgress(stderr)
	defer prog.Close()
	if o.Addr == "" && o.RevolverBin == "" {
		prog.Status("building ./cmd/revolver")
		o.RevolverBin = filepath.Join(tmp, "revolver")
		if err := buildRevolver(ctx, root, o.RevolverBin); err != nil {
			return err
		}
		prog.Clear()
	}
	machine := describeMachine(root, o.RedisBin)
	fmt.Fprintf(stdout, "machine: %s; commit %s\n", machine.String(), machine.Commit)
	for _, name := range o.Suites {
		if err := runSuite(ctx, registry[name], o, root, tmp, machine, prog, stdout, stderr); err != nil {
			return fmt.Errorf("suite %s: %w", name, err)
		}
	}
	return nil
}

func runSuite(ctx context.Context, suite Suite, o *Options, root, tmp string, machine Machine, prog *Progress,
	stdout, stderr io.Writer) error {
	cfg := suite.Config(o)
	env := &Env{Opts: o, Config: cfg, Prog: prog, Log: stderr}
	var started []*Server
	defer func() {
		for _, s := range started {
			s.Stop()
			os.RemoveAll(s.Dir)
		}
	}()
	env.fresh = func(ctx context.Context, kind string, cfg ServerConfig) (*Server, error) {
		bin := o.RevolverBin
		if kind == kindRedis {
			bin = o.RedisBin
		}
		s, err := startServer(ctx, kind, bin, tmp, cfg)
		if err != nil {
			return nil, err
		}
		started = append(started, s)
		s.Version = versionOf(s, machine)
		return s, nil
	}
	prog.Status("starting servers for " + suite.Name())
	if o.Addr != "" {
		s, err := externalServer(o.Addr)
		if err != nil {
			return fmt.Errorf("--addr %s: %w", o.Addr, err)
		}
		env.Servers = append(env.Servers, s)
	} else {
		s, err := env.fresh(ctx, kindRevolver, cfg)
		if err != nil {
			return err
		}
		env.Servers = append(env.Servers, s)
	}
	if o.VsRedis {
		s, err := env.fresh(ctx, kindRedis, cfg)
		if err != nil {
			return err
		}
		if env.Servers[0].Name == s.Name {
			s.Name += " (--vs)"
		}
		env.Servers = append(env.Servers, s)
	}
	prog.Clear()
	fmt.Fprintf(stderr, "running suite %s (%s)\n", suite.Name(), suite.About())
	res, err := suite.Run(ctx, env)
	prog.Clear()
	if err != nil {
		return err
	}
	rep := newReport(suite, o, machine, env, res)
	if len(res.Failures) > 0 {
		rep.Notes = append([]string{"**This run failed**: " + strings.Join(res.Failures, "; ") + "."}, rep.Notes...)
	}
	tallies := map[string]*warningTally{}
	var names []string
	for _, s := range started {
		if tallies[s.Name] == nil {
			tallies[s.Name] = &warningTally{}
			names = append(names, s.Name)
		}
		s.warnings(tallies[s.Name])
	}
	for _, n := range names {
		if w := tallies[n]; len(w.order) > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s logged during the run: %s", n, w.summary(5)))
		}
	}
	fmt.Fprintln(stdout)
	rep.WriteMarkdown(stdout)
	if o.Out != "" {
		dir := o.Out
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		paths, err := rep.WriteFiles(dir, o.JSON)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", strings.Join(paths, ", "))
	}
	if len(res.Failures) > 0 {
		return fmt.Errorf("%s", strings.Join(res.Failures, "; "))
	}
	return nil
}

func versionOf(s *Server, m Machine) string {
	if s.Kind == kindRedis {
		return m.Redis
	}
	if v, err := do(s.Addr, "INFO", "server"); err == nil {
		return "Revolver " + infoField(v, "revolver_version") + " built from commit " + m.Commit
	}
	return "Revolver built from commit " + m.Commit
}

func newReport(suite Suite, o *Options, m Machine, env *Env, res *Result) *Report {
	rep := &Report{Suite: suite.Name(), Date: o.Date, Command: o.Command, Machine: m, result: res}
	for _, s := range env.Servers {
		cfg := s.Config
		if s.Owned {
			cfg += ", fresh directory, loopback port"
		} else {
			cfg += " at " + s.Addr
		}
		rep.Servers = append(rep.Servers, ServerInfo{Name: s.Name, Version: s.Version, Config: cfg})
	}
	rep.Settings = fmt.Sprintf("%d round(s), each workload run on every server in turn (A B A B), %v per timed run, "+
		"size scale %g", o.Rounds, o.Duration, o.Scale)
	rep.Notes = append(rep.Notes,
		"Client: revolver-bench's own pipelined RESP2 client (one goroutine and one connection per client, "+
			"commands encoded into one buffer per batch, replies skipped without allocation); the same code drives "+
			"both servers. go-redis was measured and rejected as the load generator: it costs about twice the client "+
			"CPU per command, which on shared cores caps the server under test (`go test -bench Client ./cmd/revolver-bench`).",
		fmt.Sprintf("The client shares the machine's %d cores with the server under test; nothing is pinned, and "+
			"the other server is idle while one is measured. Every cell is the median over rounds; ops/s also "+
			"shows the min–max spread. Server CPU is utime+stime from /proc/PID/stat, RSS is VmRSS.", m.Cores))
	if o.Addr == "" {
		rep.Notes = append(rep.Notes, "Both servers are revolver-bench's children, in its session: with Linux's "+
			"autogroup scheduling they share one CPU share with the client, and neither gets one of its own "+
			"(as a daemonized redis-server would).")
	}
	if o.Duration < 10*time.Second || o.Rounds < 3 || o.Scale != 1 {
		rep.Notes = append(rep.Notes, "**Short check run** (shorter than 10 s per run, fewer than 3 rounds or "+
			"scaled-down sizes): not a recorded result.")
	}
	rep.Notes = append(rep.Notes, res.Notes...)
	return rep
}
