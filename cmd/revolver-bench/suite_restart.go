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
	return "time to load 1M and 10M keys after SHUTDOWN and restart (Revolver's store vs Redis's AOF)"
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
		"Data: `MSET key:<i> 0123456789 ...` (100 keys per command, 10-byte values) into a freshly started server, "+
			"then per round: SHUTDOWN (timed until the process exits), start the same binary with the same flags "+
			"and directory, and time until it answers. CPU s is the new process's utime+stime when it is ready; "+
			"RSS is at that moment; \"on disk\" is the data directory's size.",
		fmt.Sprintf("Revolver: `--appendfsync %s`; it replays the rest of its change log into Pebble, then loads memory "+
			"from Pebble. Redis: `--appendonly yes --appendfsync %s --save ''` with aof-use-rdb-preamble yes (the "+
			"default). Row \"AOF of commands\": automatic AOF rewrites off (`--auto-aof-rewrite-percentage 0`), so "+
			"Redis replays every MSET from its incremental AOF file. Row \"after BGREWRITEAOF\": the same data after "+
			"BGREWRITEAOF, so Redis loads an RDB-format base file (its fastest start); Revolver is restarted again "+
			"for that row with nothing changed.", env.Opts.Fsync, env.Opts.Fsync))
	for _, n := range []int{env.Scaled(1_000_000), env.Scaled(10_000_000)} {
		if err := restartSize(ctx, env, res, n); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func restartSize(ctx context.Context, env *Env, res *Result, n int) error {
	rowAOF := res.NewRow(fmt.Sprintf("%s keys, AOF of commands", humanCount(n)))
	rowRDB := res.NewRow(fmt.Sprintf("%s keys, after BGREWRITEAOF", humanCount(n)))
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
		env.Prog.Status(fmt.Sprintf("restart: loading %s keys into %s", humanCount(n), s.Name))
		err = fill(ctx, fs.Addr, (n+99)/100, 4, func(dst []byte, c int) []byte {
			from, to := c*100, min((c+1)*100, n)
			dst = appendHeader(dst, '*', 1+2*(to-from))
			dst = appendBulkString(dst, "MSET")
			for i := from; i < to; i++ {
				dst = appendBulkString(appendBulkString(dst, "key:"+strconv.Itoa(i)), memValue)
			}
			return dst
		})
		if err != nil {
			return fmt.Errorf("loading %s: %w", s.Name, err)
		}
	}
	rounds := func(row *Row) error {
		for round := 1; round <= env.Opts.Rounds; round++ {
			for _, s := range servers {
				env.Prog.Status(fmt.Sprintf("restart: %s, %s (round %d/%d)", row.Name, s.Name, round, env.Opts.Rounds))
				sample, note, err := restartOnce(ctx, s, n)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", row.Name, s.Name, err)
				}
				if note != "" {
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

func restartOnce(ctx context.Context, s *Server, n int) (map[string]float64, string, error) {
	t := time.Now()
	if err := s.Shutdown(5 * time.Minute); err != nil {
		return nil, "", err
	}
	shutdown := time.Since(t)
	disk := dirSize(s.DataDir)
	t = time.Now()
	if err := s.Restart(ctx, restartTimeout); err != nil {
		return nil, "", err
	}
	ready := time.Since(t)
	ps, _ := readProcStats(s.PID())
	sample := map[string]float64{"ready": ready.Seconds(), "shutdown": shutdown.Seconds(), "cpu": ps.CPU.Seconds(),
		"rss": float64(ps.RSS), "disk": float64(disk)}
	var note string
	if got, err := do(s.Addr, "DBSIZE"); err != nil || got != strconv.Itoa(n) {
		note = fmt.Sprintf("DBSIZE after restart was %s (%v), expected %d", got, err, n)
	}
	return sample, note, nil
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
