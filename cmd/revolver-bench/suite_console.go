package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// consoleSuite measures issue 35's row: what the console's reads cost the
// event loop, with --console-keys plain keys (10M) and a queue of
// --console-jobs jobs (1M). On Revolver the console's pages and /metrics
// are read in a loop; on Redis what an operator's tools do there (a
// redis_exporter scrape is INFO ALL; a key browser walks SCAN ... TYPE;
// the queue is a list read with LLEN and LRANGE). Meanwhile a client PINGs
// every millisecond: its round trips are what the reads cost everyone
// else. The slow log, set to 1 ms, catches any one command that held the
// lock that long.
type consoleSuite struct{}

func init() { register(consoleSuite{}) }

func (consoleSuite) Name() string { return "console" }
func (consoleSuite) About() string {
	return "console: PING latency while the console's pages and /metrics are read (Redis: INFO ALL, SCAN TYPE walks, " +
		"LRANGE), with --console-keys keys and a --console-jobs job queue, and the commands over 1 ms (issue 35)"
}
func (consoleSuite) Config(*Options) ServerConfig {
	if consoleFlags.memoryOnly {
		return ServerConfig{Persistence: false, Fsync: "everysec"}
	}
	return rssConfig()
}

var consoleFlags struct {
	keys, jobs int
	memoryOnly bool
}

func addConsoleFlags(fs *flag.FlagSet) {
	fs.IntVar(&consoleFlags.keys, "console-keys", 10_000_000, "console suite: plain keys (before --scale)")
	fs.IntVar(&consoleFlags.jobs, "console-jobs", 1_000_000, "console suite: jobs in the queue (before --scale)")
	fs.BoolVar(&consoleFlags.memoryOnly, "console-memory-only", false, "console suite: both servers without "+
		"persistence (the floor: no store applying or compacting beside the loop)")
}

const (
	consoleProbeEvery = time.Millisecond
	consoleIdle       = 3 * time.Second
	consoleInflight   = 10_000
	consoleDead       = 100
)

func consoleViews() []View {
	return []View{
		{Title: "PING round trips (every 1 ms) while idle and while the console (Redis: the operator's tools) reads",
			RowPrefix: "PING", Metrics: []Metric{
				{Key: "p50", Label: "p50", Unit: "ms"},
				{Key: "p99", Label: "p99", Unit: "ms", Ratio: true},
				{Key: "max", Label: "max", Unit: "ms", Ratio: true},
				{Key: "reads", Label: "reads done", Unit: "n"},
			}},
		{Title: "Commands that held the server over 1 ms (SLOWLOG, slowlog-log-slower-than 1000)", RowPrefix: "slow",
			Metrics: []Metric{
				{Key: "n", Label: "commands over 1 ms", Unit: "n"},
				{Key: "max", Label: "slowest", Unit: "µs"},
				{Key: "view", Label: "console's direct engine reads, longest", Unit: "µs"},
			}},
	}
}

func (consoleSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	keys, jobs := env.Scaled(consoleFlags.keys), env.Scaled(consoleFlags.jobs)
	res := &Result{Views: consoleViews()}
	res.Notes = append(res.Notes,
		fmt.Sprintf("Each server holds %d keys `key:<12 digits>` of 32 bytes and a queue `jobs` of %d jobs (Revolver: "+
			"a QUEUE with %d in flight and %d dead; Redis: a list). Revolver's console: GET /metrics, /api/overview, "+
			"the QUEUE and DELAY key lists walked to their ends (SCAN ... TYPE in steps of 250 keys), the queue's page, in-flight, "+
			"dead and ready pages, the other families' key lists, in a loop. Redis: INFO ALL, a SCAN 0 ... TYPE list "+
			"COUNT 1000 walk to the end, LLEN and LRANGE 0 49 of the queue, "+
			"in a loop. Both are measured once the preload is on disk (Revolver's store applied, Redis's AOF "+
			"rewrite done).", keys, jobs,
			consoleInflight, consoleDead),
		fmt.Sprintf("A separate connection sends PING every %v, idle for %v and then during %v of reads; a "+
			"round trip is what one read step cost the clients.", consoleProbeEvery, min(consoleIdle, env.Opts.Duration), env.Opts.Duration))
	idle := res.NewRow("PING while idle")
	busy := res.NewRow("PING while the console reads")
	slow := res.NewRow("slow commands during the reads")
	for _, s := range env.Servers {
		if !s.Owned {
			for _, r := range res.Rows {
				r.Skip(s.Name, "skipped: needs servers the bench starts (--addr)")
			}
			continue
		}
		if err := env.Flush(s); err != nil {
			return nil, err
		}
		env.Prog.Status(fmt.Sprintf("%s: preloading %d keys and %d jobs", s.Name, keys, jobs))
		if err := fill(ctx, s.Addr, keys, 4, func(dst []byte, i int) []byte {
			dst = appendHeader(dst, '*', 3)
			dst = appendBulkString(dst, "SET")
			dst = appendRandArg(dst, "key:", uint64(i))
			return appendBulkString(dst, replValue)
		}); err != nil {
			return nil, err
		}
		var reader func(ctx context.Context) (int, error)
		var err error
		if s.Kind == kindRevolver {
			reader, err = consoleRevolverSetup(ctx, s, jobs)
		} else {
			reader, err = consoleRedisSetup(ctx, s, jobs)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		env.Prog.Status(s.Name + ": waiting for the preload to reach the disk")
		settlePreload(s.Addr)
		for _, set := range [][]string{{"slowlog-log-slower-than", "1000"}, {"slowlog-max-len", "1024"}} {
			if _, err := do(s.Addr, "CONFIG", "SET", set[0], set[1]); err != nil {
				return nil, err
			}
		}
		env.Prog.Status(s.Name + ": idle PINGs")
		h, _, err := pingWhile(s.Addr, func() (int, error) { time.Sleep(min(consoleIdle, env.Opts.Duration)); return 0, nil })
		if err != nil {
			return nil, err
		}
		idle.Add(s.Name, map[string]float64{"p50": ms(h.Quantile(0.5)), "p99": ms(h.Quantile(0.99)), "max": ms(h.Max())})
		if _, err := do(s.Addr, "SLOWLOG", "RESET"); err != nil {
			return nil, err
		}
		env.Prog.Status(s.Name + ": reading")
		h, reads, err := pingWhile(s.Addr, func() (int, error) {
			rctx, cancel := context.WithTimeout(ctx, env.Opts.Duration)
			defer cancel()
			return reader(rctx)
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		busy.Add(s.Name, map[string]float64{"p50": ms(h.Quantile(0.5)), "p99": ms(h.Quantile(0.99)),
			"max": ms(h.Max()), "reads": float64(reads)})
		n, longest, which, err := slowlogOver(s.Addr)
		if err != nil {
			return nil, err
		}
		if which != "" {
			slow.Note(s.Name, "slow log: "+which)
		}
		sample := map[string]float64{"n": float64(n), "max": float64(longest)}
		if s.Kind == kindRevolver {
			if info, err := do(s.Addr, "INFO", "stats"); err == nil {
				sample["view"], _ = strconv.ParseFloat(infoField(info, "console_engine_read_max_usec"), 64)
			}
		}
		slow.Add(s.Name, sample)
	}
	return res, nil
}

// settlePreload waits (up to a minute) until the preload is on disk: Revolver's
// store has applied the change log, Redis has no AOF rewrite running.
func settlePreload(addr string) {
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		info, err := do(addr, "INFO", "persistence")
		if err != nil {
			return
		}
		if lag := infoField(info, "store_apply_lag_records"); (lag == "" || lag == "0") &&
			infoField(info, "aof_rewrite_in_progress") != "1" {
			return
		}
	}
}

// pingWhile PINGs addr every consoleProbeEvery while work runs and returns
// the round trips and what work returned.
func pingWhile(addr string, work func() (int, error)) (*Histogram, int, error) {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	h := NewHistogram()
	var stop atomic.Bool
	var probeErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(consoleProbeEvery)
		defer tick.Stop()
		for !stop.Load() {
			<-tick.C
			t0 := time.Now()
			if _, err := c.DoTimeout(10*time.Second, "PING"); err != nil {
				probeErr = err
				return
			}
			h.RecordDuration(time.Since(t0))
		}
	}()
	n, err := work()
	stop.Store(true)
	wg.Wait()
	if err == nil {
		err = probeErr
	}
	return h, n, err
}

// slowlogOver returns how many commands the slow log holds, the longest
// one's µs, and which commands they were ("SCAN ×3 (max 1200 µs), ...").
func slowlogOver(addr string) (int, int64, string, error) {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return 0, 0, "", err
	}
	defer c.Close()
	v, err := c.Do("SLOWLOG", "GET", "1024")
	if err != nil {
		return 0, 0, "", err
	}
	var longest int64
	count, most := map[string]int{}, map[string]int64{}
	var names []string
	for _, e := range v.Elems {
		if len(e.Elems) < 4 || len(e.Elems[3].Elems) == 0 {
			continue
		}
		d, name := e.Elems[2].Int, strings.ToUpper(e.Elems[3].Elems[0].Str)
		longest = max(longest, d)
		if count[name] == 0 {
			names = append(names, name)
		}
		count[name]++
		most[name] = max(most[name], d)
	}
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s ×%d (max %d µs)", n, count[n], most[n]))
	}
	return len(v.Elems), longest, strings.Join(parts, ", "), nil
}

// fillJobs pushes n payloads job-<i> to the key "jobs" with cmd (QUEUE.PUSHMANY
// or LPUSH), 500 to a command.
func fillJobs(ctx context.Context, addr, cmd string, n int) error {
	const per = 500
	return fill(ctx, addr, (n+per-1)/per, 2, func(dst []byte, i int) []byte {
		m := min(per, n-i*per)
		dst = appendHeader(dst, '*', 2+m)
		dst = appendBulkString(dst, cmd)
		dst = appendBulkString(dst, "jobs")
		for j := range m {
			dst = appendBulkString(dst, "job-"+strconv.Itoa(i*per+j))
		}
		return dst
	})
}

// consoleRevolverSetup fills the queue and the other families, turns the
// console on, and returns the loop of page reads.
func consoleRevolverSetup(ctx context.Context, s *Server, jobs int) (func(context.Context) (int, error), error) {
	if err := fillJobs(ctx, s.Addr, "QUEUE.PUSHMANY", jobs); err != nil {
		return nil, err
	}
	c, err := Dial(s.Addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	setup := [][]string{}
	for i := range consoleDead {
		setup = append(setup, []string{"QUEUE.PUSH", "jobs", "doomed", "ID", "dead-" + strconv.Itoa(i),
			"PRIORITY", "9", "MAXATTEMPTS", "1"})
	}
	setup = append(setup, []string{"QUEUE.POPACK", "jobs", "reaper", "COUNT", strconv.Itoa(consoleDead), "LEASE", "1"})
	for i := 0; i < consoleInflight; i += 1000 {
		setup = append(setup, []string{"QUEUE.POPACK", "jobs", "worker-" + strconv.Itoa(i/1000), "COUNT", "1000", "LEASE", "3600000"})
	}
	for i := range 10 {
		k := "timers:" + strconv.Itoa(i)
		for j := range 100 {
			setup = append(setup, []string{"DELAY.ADD", k, "t" + strconv.Itoa(j), "IN", strconv.Itoa(60_000 + j*1000)})
		}
		setup = append(setup, []string{"NUMPOOL.ADD", "pool:" + strconv.Itoa(i), "100", "101", "102"},
			[]string{"ROOM.HEARTBEAT", "room:" + strconv.Itoa(i), "u1", "u2", "u3"})
	}
	for _, cmd := range setup {
		if _, err := c.Do(cmd...); err != nil {
			return nil, fmt.Errorf("%v: %w", cmd, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if _, err := c.Do("CONFIG", "SET", "http-port", strconv.Itoa(port)); err != nil {
		return nil, fmt.Errorf("the console: %w", err)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	hc := &http.Client{Timeout: time.Minute}
	get := func(path string) (map[string]any, error) {
		res, err := hc.Get(base + path)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			return nil, fmt.Errorf("GET %s: %d %s", path, res.StatusCode, body)
		}
		out := map[string]any{}
		if err := json.Unmarshal(body, &out); err != nil {
			return nil, fmt.Errorf("GET %s: %w", path, err)
		}
		return out, nil
	}
	walk := func(typ string) (int, error) { // a key list walked to its end
		n, cursor := 0, "0"
		for {
			page, err := get("/api/keys?type=" + typ + "&count=50&cursor=" + url.QueryEscape(cursor))
			if err != nil {
				return n, err
			}
			n++
			cursor, _ = page["cursor"].(string)
			if cursor == "0" || cursor == "" {
				return n, nil
			}
		}
	}
	return func(ctx context.Context) (int, error) {
		reads := 0
		for ctx.Err() == nil {
			for _, path := range []string{"/metrics", "/api/overview", "/api/key?type=queue&key=jobs",
				"/api/queue/inflight?key=jobs&count=50", "/api/queue/dead?key=jobs&count=50",
				"/api/queue/ready?key=jobs&count=50", "/api/numpool/numbers?key=pool:0",
				"/api/delay/timers?key=timers:0", "/api/room/members?key=room:0"} {
				if path == "/metrics" {
					res, err := hc.Get(base + path) // its text, not JSON; absent before the metrics land
					if err != nil {
						return reads, err
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				} else if _, err := get(path); err != nil {
					return reads, err
				}
				reads++
			}
			for _, typ := range []string{"queue", "delay"} {
				n, err := walk(typ)
				reads += n
				if err != nil {
					return reads, err
				}
				if ctx.Err() != nil {
					break
				}
			}
		}
		return reads, nil
	}, nil
}

// consoleRedisSetup fills the queue as a list and returns the loop of what
// an operator's tools read from Redis.
func consoleRedisSetup(ctx context.Context, s *Server, jobs int) (func(context.Context) (int, error), error) {
	if err := fillJobs(ctx, s.Addr, "LPUSH", jobs); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (int, error) {
		c, err := Dial(s.Addr, 5*time.Second)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		reads := 0
		for ctx.Err() == nil {
			for _, cmd := range [][]string{{"INFO", "ALL"}, {"LLEN", "jobs"}, {"LRANGE", "jobs", "0", "49"}} {
				if _, err := c.Do(cmd...); err != nil {
					return reads, err
				}
				reads++
			}
			cursor := "0"
			for ctx.Err() == nil {
				v, err := c.Do("SCAN", cursor, "COUNT", "1000", "TYPE", "list")
				if err != nil {
					return reads, err
				}
				reads++
				cursor = v.Elems[0].Str
				if cursor == "0" {
					break
				}
			}
		}
		return reads, nil
	}, nil
}
