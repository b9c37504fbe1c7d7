package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// driftSuite runs a long mixed write load — overwrites with values of
// varying size, deletes, SETs with short TTLs — at a fixed rate on each
// server at default settings, samples RSS every second, and fits a line to
// the second half: issue 32's "no upward drift" as a number.
type driftSuite struct{}

func init() { register(driftSuite{}) }

func (driftSuite) Name() string { return "drift" }
func (driftSuite) About() string {
	return "RSS drift: a --drift-duration (10 min) mixed write load (overwrites, deletes, SETs with 0.5-5 s TTLs) " +
		"at 30k commands/s, default settings, RSS sampled every second; start/mid/end/max and the MB/min slope " +
		"of the second half (issue 32)"
}
func (driftSuite) Config(*Options) ServerConfig { return rssConfig() }

const (
	driftDuration = 10 * time.Minute
	driftRate     = 30_000 // commands/s, all connections together
	driftConns    = 4
	driftMaxBatch = 256
	driftKeys     = 1_000_000 // the overwritten keyspace, before --scale
	driftTTLKeys  = 1_000_000 // the expiring keyspace, before --scale
	driftMinValue = 16
	driftMaxValue = 256 // values are driftMinValue..driftMaxValue-1 bytes
	driftMinTTL   = 500 // ms
	driftMaxTTL   = 5000
	// Of every 10 commands: 5 overwrite a key, 2 delete one, 3 set an
	// expiring key. With SET:DEL at 5:2 a key of the keyspace holds a value
	// 5/7 of the time; the preload starts there.
	driftSetShare, driftDelShare = 5, 2
)

func driftViews(every time.Duration) []View {
	return []View{
		{Title: "RSS (VmRSS) over the run, read every " + shortDuration(every), Metrics: []Metric{
			{Key: "rssstart", Label: "start", Unit: "MB"},
			{Key: "rssmid", Label: "mid", Unit: "MB"},
			{Key: "rssend", Label: "end", Unit: "MB", Ratio: true},
			{Key: "rssmax", Label: "max", Unit: "MB", Ratio: true},
			{Key: "slope", Label: "drift 2nd half MB/min", Unit: "MB/min"},
		}},
		{Title: "used_memory (INFO memory) over the run, the rate held, server CPU", Metrics: []Metric{
			{Key: "usedstart", Label: "used start", Unit: "MB"},
			{Key: "usedend", Label: "used end", Unit: "MB"},
			{Key: "usedmax", Label: "used max", Unit: "MB"},
			{Key: "usedslope", Label: "used drift MB/min", Unit: "MB/min"},
			{Key: "ops", Label: "commands/s", Unit: "/s"},
			{Key: "cpu", Label: "srv CPU", Unit: "%", Ratio: true},
			{Key: "keys", Label: "keys at the end", Unit: "n"},
		}},
	}
}

func (driftSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	d := scaledDuration(rssFlags.drift, driftDuration, env.Opts.Scale)
	every := min(time.Second, d/20)
	keys, ttlKeys := env.Scaled(driftKeys), env.Scaled(driftTTLKeys)
	cfg := rssConfig()
	res := &Result{Views: driftViews(every)}
	res.Notes = append(res.Notes,
		fmt.Sprintf("Each server is started fresh at default settings (Revolver %s; Redis %s, its default "+
			"automatic AOF rewrites, no RDB snapshots), preloaded with %d of the %d keys `d:<12 digits>` (5 in "+
			"7, the share the mix keeps), then driven for %v at %d commands/s over %d connections (paced: each "+
			"sends what is due, in pipelines of up to %d). One run per server, the other server not running.",
			cfg.describe(kindRevolver), cfg.describe(kindRedis), driftPreloaded(keys), keys, d, driftRate,
			driftConns, driftMaxBatch),
		fmt.Sprintf("The mix, per 10 commands: 5 `SET d:<k> <v>` over the %d keys (overwrites), 2 `DEL d:<k>`, "+
			"3 `SET t:<k> <v> PX <%d-%d>` over %d other keys (expiring SETs); keys uniform, values %d-%d "+
			"bytes uniform, so a key's new value seldom fits its old one's allocation.", keys, driftMinTTL,
			driftMaxTTL, ttlKeys, driftMinValue, driftMaxValue-1),
		fmt.Sprintf("RSS is VmRSS (/proc/PID/status) and used_memory INFO memory's, read every %v from the start "+
			"of the load to its end; start is the reading at the start (after the preload), mid the one nearest "+
			"half-time, end the last, max the largest. The drift is the slope of a least-squares line through "+
			"the readings of the second half, in MB (10^6 bytes) per minute: 0 is no upward drift. Server CPU "+
			"is utime+stime over the run, in %% of one core.", every))
	row := res.NewRow(fmt.Sprintf("mixed writes: %s at %s commands/s, %s keys", shortDuration(d), humanCount(driftRate),
		humanCount(keys)))
	for _, s := range env.Servers {
		if !s.Owned {
			row.Skip(s.Name, "skipped: needs a server the bench starts (--addr)")
			continue
		}
		sample, err := driftRun(ctx, env, s.Kind, s.Name, cfg, d, every, keys, ttlKeys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		row.Add(s.Name, sample)
	}
	return res, nil
}

// shortDuration is d as time.Duration prints it, without trailing zero
// units: "10m", "1m30s", "600ms".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// driftPreloaded is how many of keys the preload sets: those with
// i%7 < 5.
func driftPreloaded(keys int) int {
	return keys/7*driftSetShare + min(keys%7, driftSetShare)
}

// appendDriftValue appends a value of n bytes.
func appendDriftValue(dst []byte, n int) []byte {
	dst = appendHeader(dst, '$', n)
	for range n {
		dst = append(dst, 'v')
	}
	return append(dst, '\r', '\n')
}

// driftCommand appends one command of the mix.
func driftCommand(dst []byte, r *rand.Rand, keys, ttlKeys int) []byte {
	size := driftMinValue + r.IntN(driftMaxValue-driftMinValue)
	switch p := r.IntN(10); {
	case p < driftSetShare:
		dst = appendHeader(dst, '*', 3)
		dst = appendBulkString(dst, "SET")
		dst = appendRandArg(dst, "d:", r.Uint64N(uint64(keys)))
		return appendDriftValue(dst, size)
	case p < driftSetShare+driftDelShare:
		dst = appendHeader(dst, '*', 2)
		dst = appendBulkString(dst, "DEL")
		return appendRandArg(dst, "d:", r.Uint64N(uint64(keys)))
	default:
		dst = appendHeader(dst, '*', 5)
		dst = appendBulkString(dst, "SET")
		dst = appendRandArg(dst, "t:", r.Uint64N(uint64(ttlKeys)))
		dst = appendDriftValue(dst, size)
		dst = appendBulkString(dst, "PX")
		return appendBulkInt(dst, int64(driftMinTTL+r.IntN(driftMaxTTL-driftMinTTL+1)))
	}
}

// driftSample is one reading, t seconds after the load started.
type driftSample struct {
	t         float64
	rss, used float64
}

func driftRun(ctx context.Context, env *Env, kind, name string, cfg ServerConfig, d, every time.Duration,
	keys, ttlKeys int) (map[string]float64, error) {
	env.Prog.Status(fmt.Sprintf("drift on %s: starting", name))
	s, err := env.fresh(ctx, kind, cfg)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	env.Prog.Status(fmt.Sprintf("drift on %s: preloading", name))
	pre := driftPreloaded(keys)
	err = fill(ctx, s.Addr, pre, 2, func(dst []byte, j int) []byte {
		i := j/driftSetShare*7 + j%driftSetShare
		dst = appendHeader(dst, '*', 3)
		dst = appendBulkString(dst, "SET")
		dst = appendRandArg(dst, "d:", uint64(i))
		return appendDriftValue(dst, driftMinValue+i*37%(driftMaxValue-driftMinValue))
	})
	if err != nil {
		return nil, fmt.Errorf("preload: %w", err)
	}
	ctl, err := Dial(s.Addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	read := func(t0 time.Time) (driftSample, error) {
		v, err := ctl.DoTimeout(10*time.Second, "INFO", "memory")
		if err != nil {
			return driftSample{}, err
		}
		used, err := strconv.ParseFloat(infoField(v.Str, "used_memory"), 64)
		if err != nil {
			return driftSample{}, fmt.Errorf("INFO used_memory: %w", err)
		}
		ps, err := readProcStatus(s.PID())
		if err != nil {
			return driftSample{}, err
		}
		return driftSample{t: time.Since(t0).Seconds(), rss: float64(ps.RSS), used: used}, nil
	}

	conns := make([]*Conn, driftConns)
	for i := range conns {
		if conns[i], err = Dial(s.Addr, 5*time.Second); err != nil {
			return nil, err
		}
		defer conns[i].Close()
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		sent     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		cancel()
	}
	cpu0, _ := readProcStats(s.PID())
	t0 := time.Now()
	first, err := read(t0)
	if err != nil {
		return nil, err
	}
	samples := []driftSample{first}
	env.Prog.Timed(fmt.Sprintf("drift on %s: mixed writes", name), d)
	perConn := float64(driftRate) / driftConns
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i)+1, 0xd1f7))
			buf := make([]byte, 0, 64*1024)
			done := 0
			for runCtx.Err() == nil {
				elapsed := time.Since(t0)
				if elapsed >= d {
					return
				}
				due := int(elapsed.Seconds()*perConn) + 1 - done
				if due <= 0 {
					next := t0.Add(time.Duration(float64(done) / perConn * float64(time.Second)))
					select {
					case <-time.After(max(time.Until(next), time.Millisecond)):
					case <-runCtx.Done():
					}
					continue
				}
				n := min(due, driftMaxBatch)
				buf = buf[:0]
				for range n {
					buf = driftCommand(buf, r, keys, ttlKeys)
				}
				c.AppendRaw(buf)
				if err := c.Flush(); err != nil {
					fail(err)
					return
				}
				for range n {
					rep, err := c.Skip()
					if err == nil && rep.err != "" {
						err = ReplyError(rep.err)
					}
					if err != nil {
						fail(err)
						return
					}
				}
				done += n
				sent.Add(int64(n))
			}
		}()
	}
	tick := time.NewTicker(every)
	var readErr error
loop:
	for {
		select {
		case <-runCtx.Done():
			break loop
		case <-tick.C:
			if time.Since(t0) >= d {
				break loop
			}
			sm, err := read(t0)
			if err != nil {
				readErr = err
				break loop
			}
			samples = append(samples, sm)
		}
	}
	tick.Stop()
	if readErr != nil {
		fail(readErr)
	}
	wg.Wait()
	elapsed := time.Since(t0)
	env.Prog.Clear()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	last, err := read(t0)
	if err != nil {
		return nil, err
	}
	samples = append(samples, last)
	cpu1, _ := readProcStats(s.PID())
	dbsize, err := do(s.Addr, "DBSIZE")
	if err != nil {
		return nil, err
	}
	out := driftSummary(samples, d)
	out["ops"] = float64(sent.Load()) / elapsed.Seconds()
	out["cpu"] = 100 * (cpu1.CPU - cpu0.CPU).Seconds() / elapsed.Seconds()
	out["keys"], _ = strconv.ParseFloat(dbsize, 64)
	out["errors"] = 0 // any error reply failed the run above
	return out, nil
}

// driftSummary turns the readings of a run of length d into the row's
// metrics (bytes; slopes in MB per minute).
func driftSummary(samples []driftSample, d time.Duration) map[string]float64 {
	out := map[string]float64{"samples": float64(len(samples))}
	if len(samples) == 0 {
		return out
	}
	half := d.Seconds() / 2
	mid := samples[0]
	var second []driftSample
	for _, sm := range samples {
		if math.Abs(sm.t-half) < math.Abs(mid.t-half) {
			mid = sm
		}
		if sm.t >= half {
			second = append(second, sm)
		}
		out["rssmax"] = max(out["rssmax"], sm.rss)
		out["usedmax"] = max(out["usedmax"], sm.used)
	}
	last := samples[len(samples)-1]
	out["rssstart"], out["rssmid"], out["rssend"] = samples[0].rss, mid.rss, last.rss
	out["usedstart"], out["usedend"] = samples[0].used, last.used
	ts := make([]float64, len(second))
	rss := make([]float64, len(second))
	used := make([]float64, len(second))
	for i, sm := range second {
		ts[i], rss[i], used[i] = sm.t, sm.rss, sm.used
	}
	if slope, ok := leastSquaresSlope(ts, rss); ok {
		out["slope"] = slope * 60 / 1e6
	}
	if slope, ok := leastSquaresSlope(ts, used); ok {
		out["usedslope"] = slope * 60 / 1e6
	}
	return out
}

// leastSquaresSlope is the slope of the least-squares line through the
// points (xs[i], ys[i]); false with fewer than two distinct xs.
func leastSquaresSlope(xs, ys []float64) (float64, bool) {
	n := float64(len(xs))
	if len(xs) < 2 || len(xs) != len(ys) {
		return 0, false
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0, false
	}
	return sxy / sxx, true
}
