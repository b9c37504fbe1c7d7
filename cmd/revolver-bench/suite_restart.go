package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"
)

// restartSuite measures how long a server takes to come back with its data:
// SHUTDOWN, start the same binary on the same directory, and time until
// PING answers PONG and INFO says loading:0.
type restartSuite struct{}

func init() { register(restartSuite{}) }

func (restartSuite) Name() string { return "restart" }
func (restartSuite) About() string {
	return "time to load 1M and 10M keys, 1M and 10M pending DELAY timers, and 1M queued jobs, after SHUTDOWN and restart " +
		"(Revolver's store vs Redis's AOF)"
}
func (restartSuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: o.Fsync, AOFRewrite: false}
}

const restartTimeout = 30 * time.Minute

func (restartSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: []View{{Title: "Restart: start of the process until PING answers PONG and INFO loading:0", Metrics: []Metric{
		{Key: "ready", Label: "ready s", Unit: "s", Spread: true, Ratio: true},
		{Key: "cpu", Label: "CPU s", Unit: "s", Ratio: true},
		{Key: "rss", Label: "RSS", Unit: "MB"},
		{Key: "disk", Label: "on disk", Unit: "MB"},
		{Key: "shutdown", Label: "SHUTDOWN s", Unit: "s"},
	}}}}
	res.Notes = append(res.Notes,
		"Rows \"N keys\": `MSET key:<i> 0123456789 ...` (100 keys per command, 10-byte values) into a freshly "+
			"started server. Rows \"N timers\": N pending timers with 16-byte members `timer:<i>` (i as 10 "+
			"zero-padded digits), no payload, due tomorrow + i ms, timer i in key `timers:<i mod 10>`: Revolver "+
			"`DELAY.ADD timers:<k> timer:<i> AT <due>` (one timer per command, pipelined), Redis the recipe's "+
			"`ZADD timers:<k> <due> timer:<i>` (500 members per command) — Redis replays those ZADDs from its AOF or "+
			"loads 10 sorted sets from the RDB-format base file. Issue 5's target: start-up with 10,000,000 persisted "+
			"timers ≤ 15 s. After every restart the bench checks the data came back whole (DBSIZE; for timers "+
			"DELAY.LEN or ZCARD summed over the keys) and remarks on any shortfall. Each pair of rows loads a "+
			"freshly started server, then per round: SHUTDOWN (timed until the process exits), start the same binary with the same flags "+
			"and directory, and time until it answers. CPU s is the new process's utime+stime when it is ready; "+
			"RSS is at that moment; \"on disk\" is the data directory's size.",
		fmt.Sprintf("Revolver: `--appendfsync %s`; it replays the rest of its change log into Pebble, then loads memory "+
			"from Pebble. Redis: `--appendonly yes --appendfsync %s --save ''` with aof-use-rdb-preamble yes (the "+
			"default). Row \"AOF of commands\": automatic AOF rewrites off (`--auto-aof-rewrite-percentage 0`), so "+
			"Redis replays every MSET (or ZADD) from its incremental AOF file. Row \"after BGREWRITEAOF\": the same data after "+
			"BGREWRITEAOF, so Redis loads an RDB-format base file (its fastest start); Revolver is restarted again "+
			"for that row with nothing changed.", env.Opts.Fsync, env.Opts.Fsync))
	res.Notes = append(res.Notes, "Row \"N jobs\": N jobs with 16-byte ids `timer:<i>` (no payload) in one queue, "+
		"half of them in flight: Revolver `QUEUE.PUSH jobs \"\" ID <id>` (pipelined), then `QUEUE.POPACK jobs c "+
		"COUNT 1000 LEASE 86400000` until half are leased; Redis seed 004's recipe, `LPUSH pending <id> ...` and "+
		"`SADD interceptor <id> ...` (500 per command), then `RPOPLPUSH pending processing` for half. Issue 21's "+
		"target: 1M jobs ready in the time 1M timers take.")
	for _, n := range []int{env.Scaled(1_000_000), env.Scaled(10_000_000)} {
		if err := restartSize(ctx, env, res, keysData(n)); err != nil {
			return nil, err
		}
		if err := restartSize(ctx, env, res, timersData(n)); err != nil {
			return nil, err
		}
		if n == env.Scaled(1_000_000) {
			if err := restartSize(ctx, env, res, jobsData(n)); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// jobsData is n queued jobs timer:<i> in one queue, half of them in flight
// (Revolver), or seed 004's recipe: the pending list, the interceptor set
// and half the uids moved to the processing list (Redis).
func jobsData(n int) restartData {
	const per = 500
	batches := (n + per - 1) / per
	members := func(dst []byte, cmd, key string, b int) []byte {
		from, to := b*per, min((b+1)*per, n)
		dst = appendHeader(dst, '*', 2+to-from)
		dst = appendBulkString(dst, cmd)
		dst = appendBulkString(dst, key)
		for i := from; i < to; i++ {
			dst = appendTimerMember(dst, i)
		}
		return dst
	}
	return restartData{name: humanCount(n) + " jobs, half in flight",
		load: func(ctx context.Context, s *Server) error {
			if s.Kind == kindRedis {
				err := fill(ctx, s.Addr, 2*batches, 4, func(dst []byte, c int) []byte {
					if c%2 == 0 {
						return members(dst, "LPUSH", "pending", c/2)
					}
					return members(dst, "SADD", "interceptor", c/2)
				})
				if err != nil {
					return err
				}
				return fill(ctx, s.Addr, n/2, 1, func(dst []byte, _ int) []byte {
					return appendCommand(dst, "RPOPLPUSH", "pending", "processing")
				})
			}
			err := fill(ctx, s.Addr, n, 4, func(dst []byte, i int) []byte {
				dst = appendHeader(dst, '*', 5)
				dst = appendBulkString(dst, "QUEUE.PUSH")
				dst = appendBulkString(dst, "jobs")
				dst = appendBulkString(dst, "")
				dst = appendBulkString(dst, "ID")
				return appendTimerMember(dst, i)
			})
			if err != nil {
				return err
			}
			return fill(ctx, s.Addr, (n/2+999)/1000, 1, func(dst []byte, c int) []byte {
				count := min(1000, n/2-c*1000)
				return appendCommand(dst, "QUEUE.POPACK", "jobs", "c", "COUNT", strconv.Itoa(count), "LEASE", "86400000")
			})
		},
		check: func(s *Server) string {
			if s.Kind == kindRedis {
				a, err1 := do(s.Addr, "LLEN", "pending")
				b, err2 := do(s.Addr, "LLEN", "processing")
				x, _ := strconv.Atoi(a)
				y, _ := strconv.Atoi(b)
				if err1 != nil || err2 != nil || x+y != n || y != n/2 {
					return fmt.Sprintf("after restart: %s pending and %s processing (%v %v), expected %d and %d",
						a, b, err1, err2, n-n/2, n/2)
				}
				return ""
			}
			got, err := do(s.Addr, "QUEUE.LEN", "jobs")
			if err != nil || got != strconv.Itoa(n) {
				return fmt.Sprintf("QUEUE.LEN after restart was %s (%v), expected %d", got, err, n)
			}
			return ""
		}}
}

// restartData is what a pair of restart rows loads and then checks after
// every restart.
type restartData struct {
	name  string // "1M keys"
	load  func(ctx context.Context, s *Server) error
	check func(s *Server) string // "" when the data came back whole
}

// msetKeys generates command c of the MSETs that set key:0 .. key:n-1 to
// memValue, 100 keys per command.
func msetKeys(n int) func(dst []byte, c int) []byte {
	return func(dst []byte, c int) []byte {
		from, to := c*100, min((c+1)*100, n)
		dst = appendHeader(dst, '*', 1+2*(to-from))
		dst = appendBulkString(dst, "MSET")
		for i := from; i < to; i++ {
			dst = appendBulkString(appendBulkString(dst, "key:"+strconv.Itoa(i)), memValue)
		}
		return dst
	}
}

// keysData is n string keys, MSET 100 at a time.
func keysData(n int) restartData {
	return restartData{name: humanCount(n) + " keys",
		load: func(ctx context.Context, s *Server) error {
			return fill(ctx, s.Addr, (n+99)/100, 4, msetKeys(n))
		},
		check: func(s *Server) string {
			if got, err := do(s.Addr, "DBSIZE"); err != nil || got != strconv.Itoa(n) {
				return fmt.Sprintf("DBSIZE after restart was %s (%v), expected %d", got, err, n)
			}
			return ""
		}}
}

// restartTimerKeys is how many keys the timers rows spread their timers over.
const restartTimerKeys = 10

// timersData is n pending timers timer:<i> (16 bytes) due tomorrow+i ms,
// timer i in key timers:<i mod 10>: Revolver DELAY.ADD one per command
// (pipelined), Redis the recipe's ZADD, 500 members per command.
func timersData(n int) restartData {
	far := time.Now().Add(24 * time.Hour).UnixMilli()
	keys := min(n, restartTimerKeys)
	type chunk struct{ key, from, to int } // members i = key + keys*j for j in [from, to)
	var chunks []chunk
	const per = 500
	for k := 0; k < keys; k++ {
		m := (n - k + keys - 1) / keys // members of key k
		for j := 0; j < m; j += per {
			chunks = append(chunks, chunk{k, j, min(j+per, m)})
		}
	}
	return restartData{name: humanCount(n) + " timers",
		load: func(ctx context.Context, s *Server) error {
			if s.Kind == kindRedis {
				return fill(ctx, s.Addr, len(chunks), 4, func(dst []byte, c int) []byte {
					ch := chunks[c]
					dst = appendHeader(dst, '*', 2+2*(ch.to-ch.from))
					dst = appendBulkString(dst, "ZADD")
					dst = appendBulkString(dst, "timers:"+strconv.Itoa(ch.key))
					for j := ch.from; j < ch.to; j++ {
						i := ch.key + keys*j
						dst = appendTimerMember(appendBulkInt(dst, far+int64(i)), i)
					}
					return dst
				})
			}
			return fill(ctx, s.Addr, n, 4, func(dst []byte, i int) []byte {
				dst = appendHeader(dst, '*', 5)
				dst = appendBulkString(dst, "DELAY.ADD")
				dst = appendBulkString(dst, "timers:"+strconv.Itoa(i%keys))
				dst = appendTimerMember(dst, i)
				dst = appendBulkString(dst, "AT")
				return appendBulkInt(dst, far+int64(i))
			})
		},
		check: func(s *Server) string {
			count := "ZCARD"
			if s.Kind == kindRevolver {
				count = "DELAY.LEN"
			}
			total := 0
			for k := 0; k < keys; k++ {
				got, err := do(s.Addr, count, "timers:"+strconv.Itoa(k))
				if err != nil {
					return fmt.Sprintf("%s timers:%d after restart: %v", count, k, err)
				}
				c, _ := strconv.Atoi(got)
				total += c
			}
			if total != n {
				return fmt.Sprintf("%d timers after restart (%s over the %d keys), expected %d", total, count, keys, n)
			}
			return ""
		}}
}

func restartSize(ctx context.Context, env *Env, res *Result, data restartData) error {
	rowAOF := res.NewRow(data.name + ", AOF of commands")
	rowRDB := res.NewRow(data.name + ", after BGREWRITEAOF")
	var servers []*Server
	defer func() {
		for _, s := range servers {
			s.Stop()
			os.RemoveAll(s.DataDir) // the data can be gigabytes; the log stays for the report
		}
	}()
	for _, s := range env.Servers {
		if !s.Owned {
			rowAOF.Skip(s.Name, "skipped: needs a server the bench starts (--addr)")
			rowRDB.Skip(s.Name, "skipped: needs a server the bench starts (--addr)")
			continue
		}
		fs, err := env.fresh(ctx, s.Kind, env.Config)
		if err != nil {
			return err
		}
		fs.Name = s.Name
		servers = append(servers, fs)
		env.Prog.Status(fmt.Sprintf("restart: loading %s into %s", data.name, s.Name))
		begin := time.Now()
		if err := data.load(ctx, fs); err != nil {
			if unknownCommand(err) {
				rowAOF.Skip(s.Name, fmt.Sprintf("skipped: %s answers %q", s.Name, err.Error()))
				rowRDB.Skip(s.Name, fmt.Sprintf("skipped: %s answers %q", s.Name, err.Error()))
				servers = servers[:len(servers)-1]
				fs.Stop()
				os.RemoveAll(fs.DataDir)
				continue
			}
			return fmt.Errorf("loading %s: %w", s.Name, err)
		}
		env.Logf("restart: loaded %s into %s in %v", data.name, s.Name, time.Since(begin).Round(100*time.Millisecond))
	}
	rounds := func(row *Row) error {
		for round := 1; round <= env.Opts.Rounds; round++ {
			for _, s := range servers {
				env.Prog.Status(fmt.Sprintf("restart: %s, %s (round %d/%d)", row.Name, s.Name, round, env.Opts.Rounds))
				sample, err := restartOnce(ctx, s)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", row.Name, s.Name, err)
				}
				if note := data.check(s); note != "" {
					row.Note(s.Name, note)
				}
				row.Add(s.Name, sample)
			}
		}
		return nil
	}
	if err := rounds(rowAOF); err != nil {
		return err
	}
	for _, s := range servers {
		if s.Kind == kindRedis {
			env.Prog.Status("restart: BGREWRITEAOF on " + s.Name)
			if err := rewriteAOF(ctx, s); err != nil {
				return err
			}
		}
	}
	return rounds(rowRDB)
}

func restartOnce(ctx context.Context, s *Server) (map[string]float64, error) {
	t := time.Now()
	if err := s.Shutdown(5 * time.Minute); err != nil {
		return nil, err
	}
	shutdown := time.Since(t)
	disk := dirSize(s.DataDir)
	t = time.Now()
	if err := s.Restart(ctx, restartTimeout); err != nil {
		return nil, err
	}
	ready := time.Since(t)
	ps, _ := readProcStats(s.PID())
	return map[string]float64{"ready": ready.Seconds(), "shutdown": shutdown.Seconds(), "cpu": ps.CPU.Seconds(),
		"rss": float64(ps.RSS), "disk": float64(disk)}, nil
}

// rewriteAOF runs BGREWRITEAOF and waits for it to finish.
func rewriteAOF(ctx context.Context, s *Server) error {
	if _, err := do(s.Addr, "BGREWRITEAOF"); err != nil {
		return err
	}
	for {
		info, err := do(s.Addr, "INFO", "persistence")
		if err != nil {
			return err
		}
		if infoField(info, "aof_rewrite_in_progress") == "0" && infoField(info, "aof_rewrite_scheduled") == "0" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
