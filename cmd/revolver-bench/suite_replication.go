package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// replicationSuite measures issue 33's rows on each kind of server, master
// and replicas of the same kind, all started fresh at default settings: the
// full sync of a preloaded keyspace (and how long the master's loop stalls
// meanwhile), the master's write throughput with 0, 1 and 2 replicas
// attached, and replication lag under that load as the latency of WAIT.
type replicationSuite struct{}

func init() { register(replicationSuite{}) }

func (replicationSuite) Name() string { return "replication" }
func (replicationSuite) About() string {
	return "replication: full sync of --repl-keys keys (1M) master to replica, the master's PING stall during it, " +
		"SET throughput with 0, 1 and 2 replicas attached, and WAIT latency (replication lag) under that load (issue 33)"
}
func (replicationSuite) Config(*Options) ServerConfig { return rssConfig() }

var replFlags struct{ keys int }

func addReplFlags(fs *flag.FlagSet) {
	fs.IntVar(&replFlags.keys, "repl-keys", 1_000_000, "replication suite: keys the master holds for the full sync "+
		"(before --scale)")
}

const (
	replValue      = "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv" // 32 bytes
	replClients    = 50
	replPipeline   = 16
	replProbeEvery = 10 * time.Millisecond
)

func replViews() []View {
	return []View{
		{Title: "Full sync: REPLICAOF on a fresh replica until its link is up and the RDB loaded", RowPrefix: "full sync",
			Metrics: []Metric{
				{Key: "secs", Label: "time", Unit: "s", Ratio: true},
				{Key: "stall", Label: "master's longest PING meanwhile", Unit: "ms", Ratio: true},
				{Key: "keys", Label: "keys on the replica", Unit: "n"},
			}},
		{Title: "The master's throughput and latency with replicas attached", RowPrefix: "SET",
			Metrics: []Metric{
				{Key: "ops", Label: "ops/s", Unit: "ops/s", Ratio: true},
				{Key: "p50", Label: "p50", Unit: "ms"},
				{Key: "p99", Label: "p99", Unit: "ms", Ratio: true},
				{Key: "max", Label: "max", Unit: "ms"},
				{Key: "srvcpu", Label: "master CPU/op", Unit: "µs", Ratio: true},
				{Key: "lag50", Label: "WAIT p50", Unit: "ms"},
				{Key: "lag99", Label: "WAIT p99", Unit: "ms", Ratio: true},
				{Key: "lagmax", Label: "WAIT max", Unit: "ms"},
			}},
	}
}

func (replicationSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	keys := env.Scaled(replFlags.keys)
	res := &Result{Views: replViews()}
	cfg := rssConfig()
	res.Notes = append(res.Notes,
		fmt.Sprintf("Every server is started fresh at default settings (Revolver %s; Redis %s), master and "+
			"replicas of the same kind on this machine, one kind at a time. The master is preloaded with %d keys "+
			"`key:<12 digits>` of 32 bytes (the keyspace the SET load then overwrites).", cfg.describe(kindRevolver), cfg.describe(kindRedis), keys),
		"Full sync: the time from REPLICAOF on a fresh replica to its INFO showing master_link_status:up with "+
			"master_sync_in_progress:0 (the RDB written, sent and loaded); meanwhile a client PINGs the master "+
			"every 5 ms and the longest round trip is the master's stall (Redis forks for the RDB; Revolver "+
			"writes it from a view of its store on another goroutine). Redis's repl-diskless-sync-delay is set to 0 on "+
			"the master (its default, 5 s, waits for more replicas before a diskless transfer; Revolver starts at once).",
		fmt.Sprintf("Throughput: SET key:<rand> over the preloaded keyspace, %d connections, pipeline %d, %v, with "+
			"0 replicas, then 1, then 2 (each attached and in sync first). Meanwhile one more connection sends "+
			"`SET lag:probe <n>` then `WAIT <replicas> 5000` every %v: WAIT's latency is the time for the write "+
			"to reach every replica and be acknowledged, the replication lag as a client sees it.",
			replClients, replPipeline, env.Opts.Duration, replProbeEvery))
	rows := map[string]*Row{}
	row := func(name string) *Row {
		if rows[name] == nil {
			rows[name] = res.NewRow(name)
		}
		return rows[name]
	}
	row(fmt.Sprintf("full sync of %s keys", humanCount(keys)))
	for n := range 3 {
		row(fmt.Sprintf("SET with %d replicas", n))
	}
	kinds := []*Server{}
	for _, s := range env.Servers {
		if !s.Owned {
			for _, r := range res.Rows {
				r.Skip(s.Name, "skipped: needs servers the bench starts (--addr)")
			}
			continue
		}
		kinds = append(kinds, s)
	}
	for _, master := range kinds {
		if err := replRun(ctx, env, master, keys, cfg, res.Rows); err != nil {
			return nil, fmt.Errorf("%s: %w", master.Name, err)
		}
	}
	return res, nil
}

// replRun measures one kind: master is the suite's server of that kind.
func replRun(ctx context.Context, env *Env, master *Server, keys int, cfg ServerConfig, rows []*Row) error {
	if err := env.Flush(master); err != nil {
		return err
	}
	// Redis 7.0 waits 5 s by default for more replicas before a diskless
	// transfer; Revolver starts at once. The rows compare the transfers.
	if _, err := do(master.Addr, "CONFIG", "SET", "repl-diskless-sync-delay", "0"); err != nil {
		return err
	}
	env.Prog.Status(fmt.Sprintf("%s: preloading %d keys", master.Name, keys))
	if err := fill(ctx, master.Addr, keys, 4, func(dst []byte, i int) []byte {
		dst = appendHeader(dst, '*', 3)
		dst = appendBulkString(dst, "SET")
		dst = appendRandArg(dst, "key:", uint64(i))
		return appendBulkString(dst, replValue)
	}); err != nil {
		return err
	}
	load := func(replicas int) (map[string]float64, error) {
		env.Prog.Status(fmt.Sprintf("%s: SET with %d replicas", master.Name, replicas))
		probe := startLagProbe(master.Addr, replicas)
		lr, err := runLoad(ctx, master, LoadSpec{Clients: replClients, Pipeline: replPipeline,
			Duration: env.Opts.Duration, Gen: withRand([]string{"SET"}, "key:", replValue)(uint64(keys)),
			Seed: 33, Label: fmt.Sprintf("SET, %d replicas", replicas)}, env.Prog)
		lag, perr := probe.stop()
		if err != nil {
			return nil, err
		}
		if perr != nil {
			return nil, perr
		}
		s := lr.Sample()
		if replicas > 0 {
			s["lag50"], s["lag99"], s["lagmax"] = ms(lag.Quantile(0.5)), ms(lag.Quantile(0.99)), ms(lag.Max())
		}
		return s, nil
	}
	sample, err := load(0)
	if err != nil {
		return err
	}
	rows[1].Add(master.Name, sample)

	var replicas []*Server
	for n := 1; n <= 2; n++ {
		r, err := env.fresh(ctx, master.Kind, cfg)
		if err != nil {
			return err
		}
		replicas = append(replicas, r)
		env.Prog.Status(fmt.Sprintf("%s: full sync of replica %d", master.Name, n))
		secs, stall, err := fullSync(master.Addr, r.Addr)
		if err != nil {
			return err
		}
		if n == 1 {
			got, err := do(r.Addr, "DBSIZE")
			if err != nil {
				return err
			}
			k, _ := strconv.Atoi(got)
			rows[0].Add(master.Name, map[string]float64{"secs": secs, "stall": stall, "keys": float64(k)})
		}
		if sample, err = load(n); err != nil {
			return err
		}
		rows[1+n].Add(master.Name, sample)
	}
	for _, r := range replicas {
		r.Stop()
	}
	return nil
}

// fullSync points replica at master and waits for the sync to complete. It
// returns the seconds it took and the longest PING round trip to the
// master meanwhile, in ms.
func fullSync(master, replica string) (secs, stallMs float64, err error) {
	host, port, _ := net.SplitHostPort(master)
	var stop atomic.Bool
	var longest atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := Dial(master, 5*time.Second)
		if err != nil {
			return
		}
		defer c.Close()
		for !stop.Load() {
			t := time.Now()
			if _, err := c.DoTimeout(time.Minute, "PING"); err != nil {
				return
			}
			if d := time.Since(t); d.Nanoseconds() > longest.Load() {
				longest.Store(d.Nanoseconds())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	start := time.Now()
	if _, err := do(replica, "REPLICAOF", host, port); err != nil {
		return 0, 0, err
	}
	for {
		info, err := do(replica, "INFO", "replication")
		if err != nil {
			return 0, 0, err
		}
		if infoField(info, "master_link_status") == "up" && infoField(info, "master_sync_in_progress") == "0" {
			break
		}
		if time.Since(start) > 30*time.Minute {
			return 0, 0, fmt.Errorf("full sync still running after 30 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start).Seconds(), ms(longest.Load()), nil
}

// lagProbe writes a key and WAITs for every replica, every replProbeEvery.
type lagProbe struct {
	stopped atomic.Bool
	done    chan error
	hist    *Histogram
}

func startLagProbe(addr string, replicas int) *lagProbe {
	p := &lagProbe{done: make(chan error, 1), hist: NewHistogram()}
	if replicas == 0 {
		p.done <- nil
		return p
	}
	go func() {
		c, err := Dial(addr, 5*time.Second)
		if err != nil {
			p.done <- err
			return
		}
		defer c.Close()
		n := strconv.Itoa(replicas)
		for i := 0; !p.stopped.Load(); i++ {
			if _, err := c.DoTimeout(time.Minute, "SET", "lag:probe", strconv.Itoa(i)); err != nil {
				p.done <- err
				return
			}
			t := time.Now()
			v, err := c.DoTimeout(time.Minute, "WAIT", n, "5000")
			if err != nil {
				p.done <- err
				return
			}
			p.hist.RecordDuration(time.Since(t))
			if v.Int < int64(replicas) {
				p.done <- fmt.Errorf("WAIT %s 5000 answered %d: a replica did not acknowledge within 5 s", n, v.Int)
				return
			}
			time.Sleep(replProbeEvery)
		}
		p.done <- nil
	}()
	return p
}

func (p *lagProbe) stop() (*Histogram, error) {
	p.stopped.Store(true)
	return p.hist, <-p.done
}
