package main

// The delay suite's "at rest" rows: probe timers coming due among many
// pending ones, with several consumers (issue 5's lateness target).

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// runAtRest measures the at-rest row: probe timers coming due one by one
// among many pending ones, with restConsumers consumers.
func runAtRest(ctx context.Context, env *Env, res *Result, native map[*Server]bool, pending, probes int,
	lead, window time.Duration) error {
	name := fmt.Sprintf("%s%s pending, %d probes, %d consumers", restPrefix, humanCount(pending), probes, restConsumers)
	row := res.NewRow(name)
	const key = "rb:delay:rest"
	loaded := map[*Server]bool{}
	defer func() {
		for s := range loaded {
			do(s.Addr, "DEL", key)
		}
	}()
	for round := 1; round <= env.Opts.Rounds; round++ {
		for _, s := range env.Servers {
			mode := zsetPoll
			if native[s] {
				mode = nativePop
				row.SetRan(s.Name, fmt.Sprintf("DELAY.ADD + %d consumers looping DELAY.POP COUNT 1 BLOCK 1000", restConsumers))
			} else {
				row.SetRan(s.Name, fmt.Sprintf("ZADD + %d consumers looping ZRANGEBYSCORE LIMIT 0 %d / ZREM, 10 ms polling",
					restConsumers, restBatch))
			}
			label := fmt.Sprintf("delay: %s on %s (round %d/%d)", name, s.Name, round, env.Opts.Rounds)
			if !loaded[s] {
				env.Prog.Status(label + ": loading pending timers")
				if _, err := do(s.Addr, "DEL", key); err != nil {
					return err
				}
				if err := loadPending(ctx, s.Addr, key, pending, mode == nativePop); err != nil {
					return fmt.Errorf("%s on %s: loading: %w", name, s.Name, err)
				}
				loaded[s] = true
				env.Prog.Status(label + ": waiting for the server to settle")
				if took, ok := settle(ctx, s); !ok {
					row.Note(s.Name, fmt.Sprintf("the server's CPU use did not fall below %g%% of a core within %v "+
						"after loading", settleCPU, settleMax))
				} else if took > 0 {
					env.Logf("%s: %s settled %v after loading", name, s.Name, took.Round(100*time.Millisecond))
				}
			}
			sample, note, err := restRun(ctx, env, s, key, round, probes, mode, lead, window, label)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", name, s.Name, err)
			}
			if note != "" {
				row.Note(s.Name, fmt.Sprintf("round %d: %s", round, note))
			}
			row.Add(s.Name, sample)
			res.noteEarly(row, s.Name, round, sample)
		}
	}
	return nil
}

// settle waits until the server has been quiet (below settleCPU % of a
// core) for settleWindow after loading, at most settleMax: the at-rest row
// measures a server at rest, not one still compacting or collecting the
// garbage of the load. It reports how long it waited and whether the server
// became quiet; servers without a process id (--addr elsewhere) get
// settleWindow.
func settle(ctx context.Context, s *Server) (time.Duration, bool) {
	begin := time.Now()
	prev, err := readProcStats(s.PID())
	for time.Since(begin) < settleMax && ctx.Err() == nil {
		select {
		case <-time.After(settleWindow):
		case <-ctx.Done():
		}
		if err != nil {
			return time.Since(begin), true
		}
		cur, err := readProcStats(s.PID())
		if err != nil {
			return time.Since(begin), true
		}
		if busy := cur.CPU - prev.CPU; float64(busy) < settleCPU/100*float64(settleWindow) {
			return time.Since(begin), true
		}
		prev = cur
	}
	return time.Since(begin), false
}

const (
	settleCPU    = 5.0 // % of one core
	settleWindow = time.Second
	settleMax    = time.Minute
)

// loadPending fills key with n timers pending:<i> due tomorrow (+i ms).
func loadPending(ctx context.Context, addr, key string, n int, native bool) error {
	far := time.Now().Add(24 * time.Hour).UnixMilli()
	if native {
		return fill(ctx, addr, n, 4, func(dst []byte, i int) []byte {
			dst = appendHeader(dst, '*', 5)
			dst = appendBulkString(dst, "DELAY.ADD")
			dst = appendBulkString(dst, key)
			dst = appendBulkString(dst, "pending:"+strconv.Itoa(i))
			dst = appendBulkString(dst, "AT")
			return appendBulkInt(dst, far+int64(i))
		})
	}
	const per = 500
	return fill(ctx, addr, (n+per-1)/per, 4, func(dst []byte, c int) []byte {
		from, to := c*per, min((c+1)*per, n)
		dst = appendHeader(dst, '*', 2+2*(to-from))
		dst = appendBulkString(dst, "ZADD")
		dst = appendBulkString(dst, key)
		for i := from; i < to; i++ {
			dst = appendBulkInt(dst, far+int64(i))
			dst = appendBulkString(dst, "pending:"+strconv.Itoa(i))
		}
		return dst
	})
}

// probeTally counts the deliveries of each probe and the lateness of its
// first one.
type probeTally struct {
	mu       sync.Mutex
	prefix   string
	due      func(i int) int64
	counts   []int
	hist     *Histogram
	held     int
	stray    int
	allHeld  chan struct{}
	lastHeld time.Time
}

func newProbeTally(prefix string, n int, due func(int) int64) *probeTally {
	return &probeTally{prefix: prefix, due: due, counts: make([]int, n), hist: NewHistogram(),
		allHeld: make(chan struct{})}
}

func (t *probeTally) record(member string, at time.Time) {
	i, err := strconv.Atoi(strings.TrimPrefix(member, t.prefix))
	t.mu.Lock()
	defer t.mu.Unlock()
	if !strings.HasPrefix(member, t.prefix) || err != nil || i < 0 || i >= len(t.counts) {
		t.stray++
		return
	}
	t.counts[i]++
	if t.counts[i] > 1 {
		return
	}
	t.hist.Record(at.UnixNano() - t.due(i)*int64(time.Millisecond)) // an early one is counted apart
	t.held++
	t.lastHeld = at
	if t.held == len(t.counts) {
		close(t.allHeld)
	}
}

// restRun adds one round's probes to key, runs the consumers until every
// probe is held (or the bound passes), and measures.
func restRun(ctx context.Context, env *Env, s *Server, key string, round, probes int, mode delayMode,
	lead, window time.Duration, label string) (map[string]float64, string, error) {
	t0 := time.Now().Add(lead).Truncate(time.Millisecond)
	due := func(i int) int64 { return t0.Add(time.Duration(i) * window / time.Duration(probes)).UnixMilli() }
	prefix := fmt.Sprintf("probe:%d:", round)
	err := fill(ctx, s.Addr, probes, 1, func(dst []byte, i int) []byte {
		if mode == nativePop {
			dst = appendHeader(dst, '*', 5)
			dst = appendBulkString(dst, "DELAY.ADD")
			dst = appendBulkString(dst, key)
			dst = appendBulkString(dst, prefix+strconv.Itoa(i))
			dst = appendBulkString(dst, "AT")
			return appendBulkInt(dst, due(i))
		}
		dst = appendHeader(dst, '*', 4)
		dst = appendBulkString(dst, "ZADD")
		dst = appendBulkString(dst, key)
		dst = appendBulkInt(dst, due(i))
		return appendBulkString(dst, prefix+strconv.Itoa(i))
	})
	if err != nil {
		return nil, "", fmt.Errorf("adding probes: %w", err)
	}
	conns := make([]*Conn, restConsumers)
	for i := range conns {
		if conns[i], err = Dial(s.Addr, 5*time.Second); err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return nil, "", err
		}
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	runtime.GC() // the bench's own garbage (loading) is not collected while it measures
	tally := newProbeTally(prefix, probes, due)
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	before, _ := readProcStats(s.PID())
	start := time.Now()
	giveUp := t0.Add(window + 5*time.Second)
	env.Prog.Timed(label, time.Until(t0.Add(window)))
	for _, c := range conns {
		wg.Add(1)
		go func(c *Conn) {
			defer wg.Done()
			var err error
			if mode == nativePop {
				err = popConsumer(c, key, &stop, tally)
			} else {
				err = zsetConsumer(ctx, c, key, &stop, tally)
			}
			if err != nil && !stop.Load() {
				errs <- err
				stop.Store(true)
			}
		}(c)
	}
	var runErr error
	select {
	case <-tally.allHeld:
		select { // a duplicate would arrive right after the first delivery
		case <-time.After(restGrace):
		case <-ctx.Done():
		}
	case <-time.After(time.Until(giveUp)):
	case <-ctx.Done():
	case runErr = <-errs:
	}
	stop.Store(true)
	end := time.Now()
	after, _ := readProcStats(s.PID())
	wg.Wait()
	env.Prog.Clear()
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	if runErr != nil {
		return nil, "", runErr
	}
	tally.mu.Lock()
	defer tally.mu.Unlock()
	var once, dups, missed int
	for _, n := range tally.counts {
		switch {
		case n == 1:
			once++
		case n == 0:
			missed++
		default:
			dups++
		}
	}
	sample := map[string]float64{"once": 100 * float64(once) / float64(probes),
		"held": 100 * float64(tally.held) / float64(probes), "dups": float64(dups), "stray": float64(tally.stray)}
	if tally.held > 0 {
		h := tally.hist
		sample["p50"], sample["p99"], sample["p999"], sample["max"] =
			ms(h.Quantile(0.5)), ms(h.Quantile(0.99)), ms(h.Quantile(0.999)), ms(h.Max())
	}
	addEarly(sample, tally.hist)
	if s.PID() > 0 {
		sample["cpupct"] = 100 * (after.CPU - before.CPU).Seconds() / end.Sub(start).Seconds()
	}
	var notes []string
	if dups > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d probes delivered more than once", dups, probes))
	}
	if missed > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d probes never delivered", missed, probes))
	}
	if tally.stray > 0 {
		notes = append(notes, fmt.Sprintf("%d deliveries of timers that were not this round's probes", tally.stray))
	}
	return sample, strings.Join(notes, "; "), nil
}

// popConsumer is one native consumer: DELAY.POP key COUNT 1 BLOCK 1000
// until stop (it notices within the block time).
func popConsumer(c *Conn, key string, stop *atomic.Bool, tally *probeTally) error {
	for !stop.Load() {
		v, err := c.DoTimeout(time.Minute, "DELAY.POP", key, "COUNT", "1", "BLOCK", "1000")
		if err != nil {
			return err
		}
		at := time.Now()
		for _, t := range v.Elems {
			if len(t.Elems) > 0 {
				tally.record(t.Elems[0].Str, at)
			}
		}
	}
	return nil
}

// zsetConsumer is one consumer of the recipe: poll the due members,
// sleep after an empty poll, claim each member with ZREM.
func zsetConsumer(ctx context.Context, c *Conn, key string, stop *atomic.Bool, tally *probeTally) error {
	limit := strconv.Itoa(restBatch)
	for !stop.Load() {
		now := strconv.FormatInt(time.Now().UnixMilli(), 10)
		v, err := c.DoTimeout(time.Minute, "ZRANGEBYSCORE", key, "0", now, "LIMIT", "0", limit)
		if err != nil {
			return err
		}
		if len(v.Elems) == 0 {
			select {
			case <-time.After(delayPollSleep):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		for _, m := range v.Elems {
			c.Append("ZREM", key, m.Str)
		}
		if err := c.Flush(); err != nil {
			return err
		}
		for _, m := range v.Elems {
			r, err := c.Read()
			if err != nil {
				return err
			}
			if r.Int == 1 {
				tally.record(m.Str, time.Now())
			}
		}
	}
	return nil
}
