package tests

import (
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// QUEUE's behaviour is pinned in transcripts (testdata/golden/queue_*.txt).
// What stays in Go is what a transcript cannot say: consumers racing each
// other, a linearizability check of concurrent histories
// (queue_linearizable_test.go), and kill -9 of the real binary under load.

// queueJob is one delivery POPACK returned.
type queueJob struct {
	id, payload, receipt string
	attempt              int64
}

func parseQueueJobs(v any) ([]queueJob, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("POPACK reply %#v is not an array", v)
	}
	out := make([]queueJob, 0, len(arr))
	for _, e := range arr {
		el, ok := e.([]any)
		if !ok || len(el) != 4 {
			return nil, fmt.Errorf("POPACK element %#v is not [id, payload, attempt, receipt]", e)
		}
		var j queueJob
		var ok1, ok2, ok3, ok4 bool
		j.id, ok1 = el[0].(string)
		j.payload, ok2 = el[1].(string)
		j.attempt, ok3 = el[2].(int64)
		j.receipt, ok4 = el[3].(string)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return nil, fmt.Errorf("POPACK element %#v has the wrong types", e)
		}
		out = append(out, j)
	}
	return out, nil
}

// popack runs QUEUE.POPACK; a timed-out BLOCK is no jobs, not an error.
func popack(c *redis.Client, key, consumer string, opts ...any) ([]queueJob, error) {
	v, err := c.Do(ctx, append([]any{"QUEUE.POPACK", key, consumer}, opts...)...).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseQueueJobs(v)
}

// TestQueueConsumersRace: producers push while consumers take, NACK some
// and ACK the rest, all at once. No job is ever held by two consumers, and
// every job pushed is acknowledged exactly once.
func TestQueueConsumersRace(t *testing.T) {
	srv := startServer(t)
	forProtocols(t, func(t *testing.T, proto int) {
		admin := delayClient(t, srv.Addr(), proto)
		admin.FlushAll(ctx)
		const producers, consumers, perProducer = 4, 8, 250
		total := producers * perProducer
		var (
			mu      sync.Mutex
			holder  = map[string]int{} // job id -> consumer holding it
			acked   = map[string]int{}
			failure atomic.Value
		)
		fail := func(err error) { failure.CompareAndSwap(nil, err) }
		var wg sync.WaitGroup
		for p := range producers {
			c := delayClient(t, srv.Addr(), proto)
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewSource(int64(p)))
				for i := 0; i < perProducer; {
					if i%10 == 0 && i+5 <= perProducer {
						args := []any{"QUEUE.PUSHMANY", "q"}
						for k := range 5 {
							args = append(args, fmt.Sprintf("p%d-%d", p, i+k))
						}
						if err := c.Do(ctx, args...).Err(); err != nil {
							fail(err)
							return
						}
						i += 5
						continue
					}
					err := c.Do(ctx, "QUEUE.PUSH", "q", fmt.Sprintf("p%d-%d", p, i), "PRIORITY", rng.Intn(3)).Err()
					if err != nil {
						fail(err)
						return
					}
					i++
				}
			}()
		}
		var done atomic.Int64
		for w := range consumers {
			c := delayClient(t, srv.Addr(), proto)
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewSource(int64(100 + w)))
				deadline := time.Now().Add(30 * time.Second)
				for done.Load() < int64(total) && failure.Load() == nil {
					if time.Now().After(deadline) {
						fail(fmt.Errorf("consumer %d gave up with %d of %d acked", w, done.Load(), total))
						return
					}
					jobs, err := popack(c, "q", "c"+strconv.Itoa(w), "COUNT", 1+rng.Intn(4), "BLOCK", 50, "LEASE", 60000)
					if err != nil {
						fail(err)
						return
					}
					for _, j := range jobs {
						mu.Lock()
						if h, held := holder[j.id]; held {
							fail(fmt.Errorf("%s delivered to consumer %d while consumer %d holds it", j.id, w, h))
						}
						holder[j.id] = w
						mu.Unlock()
						time.Sleep(time.Duration(rng.Intn(300)) * time.Microsecond) // the work
						// Let go before settling: the server can hand the job
						// out again only after it has the settlement.
						mu.Lock()
						delete(holder, j.id)
						mu.Unlock()
						if rng.Intn(10) == 0 {
							if n, err := c.Do(ctx, "QUEUE.NACK", "q", j.receipt).Int(); err != nil || n != 1 {
								fail(fmt.Errorf("NACK %s: %d %v", j.receipt, n, err))
							}
							continue
						}
						n, err := c.Do(ctx, "QUEUE.ACK", "q", j.receipt).Int()
						if err != nil || n != 1 {
							fail(fmt.Errorf("ACK %s: %d %v", j.receipt, n, err))
							continue
						}
						mu.Lock()
						acked[j.id]++
						mu.Unlock()
						done.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if err, _ := failure.Load().(error); err != nil {
			t.Fatal(err)
		}
		if len(acked) != total {
			t.Fatalf("%d distinct jobs acked, %d pushed", len(acked), total)
		}
		for id, n := range acked {
			if n != 1 {
				t.Errorf("%s acked %d times", id, n)
			}
		}
		if n := dInt(t, admin, "QUEUE.LEN", "q"); n != 0 {
			t.Errorf("QUEUE.LEN after everything was acked: %d", n)
		}
	})
}

// TestQueueKill9: with appendfsync always, a loop of kill -9 under load
// loses no acknowledged PUSH and brings back no acknowledged job; a job in
// flight at the kill stays in flight until its lease ends. Leases are judged
// by the server's own times (QUEUE.GET's due): under load an fsync can hold
// a reply back long enough that the client's clock would mislead.
func TestQueueKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	const lease = 3000
	pushed := map[string]bool{}    // acknowledged pushes, by id
	ackedJob := map[string]bool{}  // jobs whose ACK returned 1
	ackSent := map[string]bool{}   // an ACK was sent: its reply may have been lost to the kill
	leaseEnd := map[string]int64{} // the last delivery's lease end, server time
	next := 0
	for round := range 4 {
		p := startProcess(t, dir, "--appendfsync", "always")
		c := delayClient(t, p.addr, 2)
		for id := range ackedJob {
			if v, err := c.Do(ctx, "QUEUE.GET", "q", id).Result(); !errors.Is(err, redis.Nil) {
				t.Fatalf("round %d: acked job %s came back: %v %v", round, id, v, err)
			}
		}
		for id := range pushed {
			if ackedJob[id] || ackSent[id] {
				continue
			}
			if _, err := c.Do(ctx, "QUEUE.GET", "q", id).Result(); err != nil {
				t.Fatalf("round %d: acknowledged push %s lost: %v", round, id, err)
			}
		}
		var mu sync.Mutex
		var stop atomic.Bool
		var wg sync.WaitGroup
		for w := range 3 {
			pc, cc := delayClient(t, p.addr, 2), delayClient(t, p.addr, 2)
			wg.Add(2)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					mu.Lock()
					id := fmt.Sprintf("job-%d", next)
					next++
					mu.Unlock()
					v, err := pc.Do(ctx, "QUEUE.PUSH", "q", "x", "ID", id).Result()
					if err != nil {
						p.stoppedByKill(t, fmt.Sprintf("round %d pusher %d", round, w), err)
						return
					}
					if v == id {
						mu.Lock()
						pushed[id] = true
						mu.Unlock()
					}
				}
			}()
			go func() {
				defer wg.Done()
				for !stop.Load() {
					jobs, err := popack(cc, "q", "w"+strconv.Itoa(w), "COUNT", 5, "BLOCK", 20, "LEASE", lease)
					if err != nil {
						p.stoppedByKill(t, fmt.Sprintf("round %d consumer %d (POPACK)", round, w), err)
						return
					}
					for _, j := range jobs {
						due, err := cc.Do(ctx, "QUEUE.GET", "q", j.id).Result()
						if err != nil {
							p.stoppedByKill(t, fmt.Sprintf("round %d consumer %d (QUEUE.GET %s)", round, w, j.id), err)
							return
						}
						end := jobField(due, "due")
						if end <= 0 {
							t.Errorf("round %d: QUEUE.GET %s of a job just delivered has no due time: %v", round, j.id, due)
						}
						mu.Lock()
						if prev, ok := leaseEnd[j.id]; ok && end-lease < prev {
							t.Errorf("round %d: %s handed out again at %d, before its last lease ended at %d",
								round, j.id, end-lease, prev)
						}
						leaseEnd[j.id] = end
						ackSent[j.id] = true
						mu.Unlock()
						n, err := cc.Do(ctx, "QUEUE.ACK", "q", j.receipt).Int()
						if err != nil {
							p.stoppedByKill(t, fmt.Sprintf("round %d consumer %d (ACK %s)", round, w, j.receipt), err)
							return
						}
						if n != 1 {
							// Its lease has seconds left: only a lost
							// delivery answers 0.
							t.Errorf("round %d: ACK %s of a live delivery of %s: %d", round, j.receipt, j.id, n)
							continue
						}
						mu.Lock()
						ackedJob[j.id] = true
						mu.Unlock()
					}
				}
			}()
		}
		time.Sleep(400 * time.Millisecond)
		p.kill9(t)
		stop.Store(true)
		wg.Wait()
		if len(pushed) == 0 {
			t.Fatalf("round %d: nothing was pushed before the kill", round)
		}
	}
	if len(ackedJob) == 0 {
		t.Error("no job was acked: what the rounds say of acks and leases went unchecked")
	}
	t.Logf("%d pushes acknowledged, %d jobs acked over 4 kill -9 rounds", len(pushed), len(ackedJob))
}

// jobField reads a number from a QUEUE.GET reply (RESP2: a flat array).
func jobField(v any, name string) int64 {
	arr, _ := v.([]any)
	for i := 0; i+1 < len(arr); i += 2 {
		if arr[i] == name {
			n, _ := arr[i+1].(int64)
			return n
		}
	}
	return 0
}

func TestQueueCommandDocs(t *testing.T) {
	checkFamilyDocs(t, "queue", map[string]string{
		"queue.push": "key payload [ID id] [PRIORITY priority] [DELAY milliseconds|AT unix-time-milliseconds] " +
			"[MAXATTEMPTS attempts] [TTL milliseconds] [GROUP group]",
		"queue.pushmany": "key payload [payload ...]",
		"queue.popack":   "key consumer [COUNT count] [BLOCK milliseconds] [LEASE milliseconds] [RELEASE-ON-DISCONNECT]",
		"queue.ack":      "key receipt [receipt ...]",
		"queue.nack":     "key receipt [DELAY milliseconds]",
		"queue.extend":   "key receipt milliseconds",
		"queue.dead":     "key [CURSOR cursor] [COUNT count]",
		"queue.retry":    "key id",
		"queue.del":      "key id [id ...]",
		"queue.peek":     "key [COUNT count]",
		"queue.inflight": "key [CURSOR cursor] [COUNT count]",
		"queue.get":      "key id",
		"queue.stats":    "key",
		"queue.len":      "key",
		"queue.config": "key [WEIGHTS weights] [DEDUPE-WINDOW milliseconds] [MAXLEN maxlen] [LEASE milliseconds] " +
			"[MAXATTEMPTS attempts] [MAXINFLIGHT maxinflight] [GROUP-MAXINFLIGHT maxinflight] [RATE rate]",
		"queue.pause":  "key [PUSH|POP]",
		"queue.resume": "key [PUSH|POP]",
	}, "QUEUE.PUSH", "thekey", "payload", "ID", "x")
}
