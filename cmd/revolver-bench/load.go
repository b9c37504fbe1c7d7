package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Generator appends one command to dst. Each client goroutine has its own
// random source, so generators need no locking.
type Generator func(dst []byte, r *rand.Rand) []byte

// LoadSpec is one closed-loop run: Clients connections, each sending
// Pipeline commands, waiting for their replies, and repeating, for Duration.
type LoadSpec struct {
	Clients  int
	Pipeline int
	Duration time.Duration
	Gen      Generator
	// ClientGen, when set, gives each client a generator of its own
	// instead of Gen: one that keeps state from command to command (a
	// change, then the count that must follow it) or names the client's
	// own key.
	ClientGen func(client int) Generator
	// Seed, with a client's index, seeds the client's random source: runs
	// with the same seed send every server the same commands.
	Seed  uint64
	Label string // for the progress line
	// StopOnEmpty ends the run early at the first empty reply: pops are
	// measured only while there is something to pop.
	StopOnEmpty bool
}

// LoadResult is what one run measured.
type LoadResult struct {
	Ops       int64 // replies that were not errors
	Elapsed   time.Duration
	Hist      *Histogram // per-command latency, ns, of Ops
	Errors    int64      // error replies: not in Ops; a run with any fails
	FirstErr  string
	Empty     int64         // nil / empty-array replies
	ServerCPU time.Duration // utime+stime of the server during the run
	ClientCPU time.Duration // the bench process's CPU during the run
	RSS       int64         // server RSS after the run
}

// Sample turns a run into the metrics the throughput tables show.
func (r LoadResult) Sample() map[string]float64 {
	ops := float64(r.Ops)
	s := map[string]float64{
		"ops":    ops / r.Elapsed.Seconds(),
		"p50":    ms(r.Hist.Quantile(0.50)),
		"p99":    ms(r.Hist.Quantile(0.99)),
		"p999":   ms(r.Hist.Quantile(0.999)),
		"max":    ms(r.Hist.Max()),
		"rss":    float64(r.RSS),
		"errors": float64(r.Errors),
		"empty":  100 * float64(r.Empty) / max(ops, 1),
	}
	if r.ServerCPU > 0 {
		s["srvcpu"] = float64(r.ServerCPU.Microseconds()) / max(ops, 1)
	}
	s["clicpu"] = float64(r.ClientCPU.Microseconds()) / max(ops, 1)
	return s
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// runLoad performs one LoadSpec against srv. Connections are opened before
// the clock starts; the run ends when every client has finished the batch
// in flight at Duration.
func runLoad(ctx context.Context, srv *Server, spec LoadSpec, prog *Progress) (LoadResult, error) {
	conns := make([]*Conn, spec.Clients)
	for i := range conns {
		c, err := Dial(srv.Addr, 5*time.Second)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return LoadResult{}, err
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	type clientResult struct {
		ops, errs, empty int64
		firstErr         string
		hist             *Histogram
		err              error
	}
	results := make([]clientResult, spec.Clients)
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range conns {
		wg.Add(1)
		go func(i int, c *Conn) {
			defer wg.Done()
			res := &results[i]
			res.hist = NewHistogram()
			rng := rand.New(rand.NewPCG(spec.Seed, uint64(i)))
			gen := spec.Gen
			if spec.ClientGen != nil {
				gen = spec.ClientGen(i)
			}
			buf := make([]byte, 0, 4096)
			<-start
			for !stop.Load() {
				buf = buf[:0]
				for j := 0; j < spec.Pipeline; j++ {
					buf = gen(buf, rng)
				}
				t0 := time.Now()
				c.AppendRaw(buf)
				if res.err = c.Flush(); res.err != nil {
					return
				}
				for j := 0; j < spec.Pipeline; j++ {
					r, err := c.Skip()
					if err != nil {
						res.err = err
						return
					}
					if r.err != "" { // not work: counted apart, and the run fails
						res.errs++
						if res.firstErr == "" {
							res.firstErr = r.err
						}
						continue
					}
					res.hist.RecordDuration(time.Since(t0))
					res.ops++
					if r.empty {
						res.empty++
						if spec.StopOnEmpty {
							stop.Store(true)
						}
					}
				}
			}
		}(i, c)
	}
	before, _ := readProcStats(srv.PID())
	cpu0 := selfCPU()
	t0 := time.Now()
	prog.Timed(spec.Label, spec.Duration)
	close(start)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-time.After(spec.Duration):
	case <-ctx.Done():
	case <-finished: // every client stopped early (StopOnEmpty)
	}
	stop.Store(true)
	wg.Wait()
	out := LoadResult{Elapsed: time.Since(t0), Hist: NewHistogram(), ClientCPU: selfCPU() - cpu0}
	prog.Clear()
	if after, err := readProcStats(srv.PID()); err == nil {
		out.ServerCPU, out.RSS = after.CPU-before.CPU, after.RSS
	}
	for _, r := range results {
		if r.err != nil {
			return out, fmt.Errorf("client: %w", r.err)
		}
		out.Ops += r.ops
		out.Errors += r.errs
		out.Empty += r.empty
		if out.FirstErr == "" {
			out.FirstErr = r.firstErr
		}
		out.Hist.Merge(r.hist)
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	if out.Errors > 0 {
		return out, ErrorReplies{N: out.Errors, First: out.FirstErr}
	}
	return out, nil
}

// ErrorReplies fails a timed run that got error replies: an error reply is
// not the work the run measures, so its numbers would describe something
// else. No suite expects error replies in a timed run; one that comes to
// must allow them for its row, with the reason, not count them as work.
type ErrorReplies struct {
	N     int64
	First string
}

func (e ErrorReplies) Error() string {
	return fmt.Sprintf("%d error replies (first: %q)", e.N, e.First)
}

// fill sends many pre-generated commands over a few connections with deep
// pipelines, untimed: the setup of memory, expiry, delay and restart runs.
// gen(i) appends the i-th of n commands.
func fill(ctx context.Context, addr string, n int, conns int, gen func(dst []byte, i int) []byte) error {
	const batch = 256
	var next atomic.Int64
	errs := make(chan error, conns)
	for w := 0; w < conns; w++ {
		go func() {
			c, err := Dial(addr, 5*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			buf := make([]byte, 0, 64*1024)
			for ctx.Err() == nil {
				from := int(next.Add(batch)) - batch
				if from >= n {
					errs <- nil
					return
				}
				to := min(from+batch, n)
				buf = buf[:0]
				for i := from; i < to; i++ {
					buf = gen(buf, i)
				}
				c.AppendRaw(buf)
				if err := c.Flush(); err != nil {
					errs <- err
					return
				}
				for i := from; i < to; i++ {
					r, err := c.Skip()
					if err == nil && r.err != "" {
						err = ReplyError(r.err)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
			errs <- ctx.Err()
		}()
	}
	var first error
	for w := 0; w < conns; w++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
