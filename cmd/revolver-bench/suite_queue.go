package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// queueSuite compares seed 004's reliable-queue recipe on Redis (SADD to
// an interceptor set + LPUSH; BRPOPLPUSH into a processing list; LREM +
// SREM when the review is done) with Revolver's QUEUE.PUSH, POPACK and ACK
// (issue 21), end to end: every job pushed, delivered, acknowledged.
//
//   - "throughput:" P producers and C consumers in closed loops for the
//     run: jobs acknowledged per second and server CPU per job;
//   - "latency:" producers paced to a fixed total rate, consumers blocked
//     waiting: ms from a push being sent to a consumer holding the job.
//
// The durability is the run's --fsync (run it with everysec and always).
type queueSuite struct{}

func init() { register(queueSuite{}) }

func (queueSuite) Name() string { return "queue" }
func (queueSuite) About() string {
	return "work queue: seed 004's SADD+LPUSH / BRPOPLPUSH / LREM+SREM vs QUEUE.PUSH / POPACK / ACK, end to end: " +
		"jobs/s and CPU per job with 50 producers + 50 consumers, push-to-delivery latency at a paced rate"
}
func (queueSuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: o.Fsync}
}

const (
	queueProducers = 50
	queueConsumers = 50
	queuePacedRate = 2000 // jobs/s of the latency row, all producers together
	queueBatch     = 10   // jobs a consumer takes at once in the batched row
)

func (queueSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: []View{
		{Title: "Throughput — jobs pushed, delivered and acknowledged per second, server CPU per job", RowPrefix: "throughput: ",
			Metrics: []Metric{
				{Key: "jobs", Label: "jobs/s", Unit: "/s", Spread: true, Ratio: true},
				{Key: "cpu", Label: "srv CPU µs/job", Unit: "µs", Ratio: true},
				{Key: "p50", Label: "delivery p50", Unit: "ms"},
				{Key: "p99", Label: "delivery p99", Unit: "ms"},
			}},
		{Title: "Latency — ms from sending a push to a blocked consumer holding the job, at a paced rate", RowPrefix: "latency: ",
			Metrics: []Metric{
				{Key: "p50", Label: "p50", Unit: "ms", Spread: true},
				{Key: "p99", Label: "p99", Unit: "ms"},
				{Key: "p999", Label: "p99.9", Unit: "ms"},
				{Key: "max", Label: "max", Unit: "ms"},
				{Key: "cpu", Label: "srv CPU µs/job", Unit: "µs", Ratio: true},
			}},
	}}
	res.Notes = append(res.Notes,
		"Redis runs seed 004's recipe as the note writes it: a producer `SADD interceptor <uid>` and, if it was "+
			"added, `LPUSH pending <uid>|<sent-ns>`; a consumer `BRPOPLPUSH pending processing 1`, then `LREM "+
			"processing 1 <element>` and `SREM interceptor <uid>` when done. Revolver: `QUEUE.PUSH jobs <sent-ns> ID "+
			"<uid>`, `QUEUE.POPACK jobs <consumer> BLOCK 1000 LEASE 30000`, `QUEUE.ACK jobs <receipt>`. Every "+
			"command is its own round trip (no pipelining), as a worker library sends them.",
		fmt.Sprintf("Throughput rows: %d producers and %d consumers in closed loops for --duration; a job counts "+
			"once acknowledged. In the POPACK COUNT row a Revolver consumer takes up to %d jobs per POPACK and acks "+
			"them with one QUEUE.ACK of all their receipts; the recipe has no such form (BRPOPLPUSH moves one "+
			"element), so Redis runs it unchanged. Latency rows: the producers paced to %d jobs/s in all, "+
			"consumers blocked waiting.", queueProducers, queueConsumers, queueBatch, queuePacedRate))
	rows := []struct {
		name  string
		paced bool
		batch int // jobs a Revolver consumer takes (POPACK COUNT) and acks at once
	}{
		{fmt.Sprintf("throughput: %d producers + %d consumers", queueProducers, queueConsumers), false, 1},
		{fmt.Sprintf("throughput: %d producers + %d consumers, POPACK COUNT %d", queueProducers, queueConsumers,
			queueBatch), false, queueBatch},
		{fmt.Sprintf("latency: %d jobs/s, %d consumers blocked", queuePacedRate, queueConsumers), true, 1},
	}
	for _, rw := range rows {
		row := res.NewRow(rw.name)
		for round := 1; round <= env.Opts.Rounds; round++ {
			for _, s := range env.Servers {
				native := s.Kind == kindRevolver
				if native {
					row.SetRan(s.Name, "QUEUE.PUSH / QUEUE.POPACK BLOCK / QUEUE.ACK")
				} else {
					row.SetRan(s.Name, "SADD + LPUSH / BRPOPLPUSH / LREM + SREM")
				}
				if err := env.Flush(s); err != nil {
					return nil, err
				}
				env.Prog.Status(fmt.Sprintf("queue: %s on %s (round %d/%d)", rw.name, s.Name, round, env.Opts.Rounds))
				sample, err := queueRun(ctx, s, native, rw.paced, rw.batch, env.Opts.Duration, round)
				if err != nil {
					return nil, fmt.Errorf("%s on %s: %w", rw.name, s.Name, err)
				}
				row.Add(s.Name, sample)
			}
		}
	}
	return res, nil
}

// queueRun runs producers and consumers against one server for d and
// returns the row's sample.
func queueRun(ctx context.Context, s *Server, native, paced bool, batch int, d time.Duration, round int) (map[string]float64, error) {
	// Every connection is made before the clock starts: dialing a hundred
	// of them on a loaded machine can take longer than a short run.
	producers, consumers := make([]*Conn, queueProducers), make([]*Conn, queueConsumers)
	for i := range queueProducers + queueConsumers {
		c, err := Dial(s.Addr, 5*time.Second)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		if i < queueProducers {
			producers[i] = c
		} else {
			consumers[i-queueProducers] = c
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		acked    atomic.Int64
		mu       sync.Mutex
		lat      []int64 // ns from send to delivery
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil && runCtx.Err() == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	before, _ := readProcStats(s.PID())
	start := time.Now()
	for p, c := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			interval := time.Duration(0)
			if paced {
				interval = time.Duration(float64(time.Second) * queueProducers / queuePacedRate)
			}
			next := time.Now().Add(time.Duration(p) * interval / queueProducers)
			for i := 0; runCtx.Err() == nil; i++ {
				if paced {
					if wait := time.Until(next); wait > 0 {
						select {
						case <-time.After(wait):
						case <-runCtx.Done():
							return
						}
					}
					next = next.Add(interval)
				}
				uid := "m:" + strconv.Itoa(round) + ":" + strconv.Itoa(p) + ":" + strconv.Itoa(i)
				sent := strconv.FormatInt(time.Now().UnixNano(), 10)
				if err := queueProduce(c, native, uid, sent); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	for w, c := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "c" + strconv.Itoa(w)
			for runCtx.Err() == nil {
				sent, err := queueConsume(c, native, name, batch)
				if err != nil {
					fail(err)
					return
				}
				delivered := time.Now().UnixNano()
				if runCtx.Err() != nil {
					return
				}
				acked.Add(int64(len(sent)))
				mu.Lock()
				for _, t := range sent {
					lat = append(lat, delivered-t)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return nil, firstErr
	}
	after, _ := readProcStats(s.PID())
	n := acked.Load()
	if n == 0 {
		return nil, fmt.Errorf("no job went through in %v", d)
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[min(int(p*float64(len(lat))), len(lat)-1)]) / 1e6 }
	return map[string]float64{
		"jobs": float64(n) / elapsed.Seconds(),
		"cpu":  float64((after.CPU - before.CPU).Microseconds()) / float64(n),
		"p50":  q(0.50), "p99": q(0.99), "p999": q(0.999), "max": float64(lat[len(lat)-1]) / 1e6,
	}, nil
}

// queueProduce pushes one job: uid is its identity (the interceptor's
// member, the job id), sent its send time in ns.
func queueProduce(c *Conn, native bool, uid, sent string) error {
	if native {
		_, err := c.Do("QUEUE.PUSH", "jobs", sent, "ID", uid)
		return err
	}
	v, err := c.Do("SADD", "interceptor", uid)
	if err != nil || v.Int == 0 {
		return err
	}
	_, err = c.Do("LPUSH", "pending", uid+"|"+sent)
	return err
}

// queueConsume takes a job (on Revolver up to batch of them), "reviews"
// and settles it, returning the send times of what it took (none when the
// wait timed out).
func queueConsume(c *Conn, native bool, consumer string, batch int) (sent []int64, err error) {
	if native {
		v, err := c.DoTimeout(5*time.Second, "QUEUE.POPACK", "jobs", consumer, "COUNT", strconv.Itoa(batch),
			"BLOCK", "1000", "LEASE", "30000")
		if err != nil || len(v.Elems) == 0 {
			return nil, err
		}
		ack := []string{"QUEUE.ACK", "jobs"}
		for _, job := range v.Elems {
			if len(job.Elems) != 4 {
				return nil, fmt.Errorf("POPACK reply %v", v)
			}
			t, _ := strconv.ParseInt(job.Elems[1].Str, 10, 64)
			sent = append(sent, t)
			ack = append(ack, job.Elems[3].Str)
		}
		_, err = c.Do(ack...)
		return sent, err
	}
	v, err := c.DoTimeout(5*time.Second, "BRPOPLPUSH", "pending", "processing", "1")
	if err != nil || v.Kind != resp.KindBulk {
		return nil, err
	}
	uid, ts, _ := cutLast(v.Str, '|')
	t, _ := strconv.ParseInt(ts, 10, 64)
	if _, err := c.Do("LREM", "processing", "1", v.Str); err != nil {
		return nil, err
	}
	_, err = c.Do("SREM", "interceptor", uid)
	return []int64{t}, err
}

func cutLast(s string, sep byte) (before, after string, found bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
