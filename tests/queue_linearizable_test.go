package tests

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
)

// TestQueueLinearizable records histories of concurrent PUSH (with ids
// from a small set, so de-duplication matters), POPACK, ACK and NACK
// (with live and stale receipts) from several clients and checks each
// against a sequential model of one FIFO queue: every history must have an
// order of its operations, each within its call and reply, in which the
// model gives the replies the server gave.
func TestQueueLinearizable(t *testing.T) {
	srv := startServer(t)
	for round := range 10 {
		history := queueHistory(t, srv.Addr(), fmt.Sprintf("lin%d", round), int64(round))
		res := porcupine.CheckOperationsTimeout(queueModel, history, 20*time.Second)
		if res == porcupine.Illegal {
			t.Fatalf("round %d: the history is not linearizable:\n%s", round, describeHistory(history))
		}
		if res == porcupine.Unknown {
			t.Logf("round %d: the checker timed out (%d operations); not a failure", round, len(history))
		}
	}
}

type qlInput struct {
	op      string // push, pop, ack, nack
	id      string // push
	receipt string // ack, nack
}

type qlOutput struct {
	ok      bool   // push: pushed; pop: got a job; ack, nack: the receipt was live
	id      string // pop
	receipt string // pop
}

// qlState is the model's state: ready jobs in push order, the deliveries
// in flight by receipt, and the push order's next number.
type qlState struct {
	ready    []qlJob
	inflight map[string]qlJob
	seq      int
}

type qlJob struct {
	id  string
	seq int
}

func (s qlState) has(id string) bool {
	if slices.ContainsFunc(s.ready, func(j qlJob) bool { return j.id == id }) {
		return true
	}
	for _, j := range s.inflight {
		if j.id == id {
			return true
		}
	}
	return false
}

func (s qlState) clone() qlState {
	return qlState{ready: slices.Clone(s.ready), inflight: maps.Clone(s.inflight), seq: s.seq}
}

var queueModel = porcupine.Model{
	Init: func() any { return qlState{inflight: map[string]qlJob{}} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(qlState), input.(qlInput), output.(qlOutput)
		switch in.op {
		case "push":
			if s.has(in.id) {
				return !out.ok, s
			}
			if !out.ok {
				return false, s
			}
			n := s.clone()
			n.seq++
			n.ready = append(n.ready, qlJob{in.id, n.seq})
			return true, n
		case "pop":
			if len(s.ready) == 0 {
				return !out.ok, s
			}
			if !out.ok || out.id != s.ready[0].id {
				return false, s
			}
			if _, dup := s.inflight[out.receipt]; dup {
				return false, s
			}
			n := s.clone()
			n.inflight[out.receipt] = n.ready[0]
			n.ready = n.ready[1:]
			return true, n
		default: // ack, nack
			j, live := s.inflight[in.receipt]
			if live != out.ok {
				return false, s
			}
			if !live {
				return true, s
			}
			n := s.clone()
			delete(n.inflight, in.receipt)
			if in.op == "nack" {
				// Back in its place in push order.
				i, _ := slices.BinarySearchFunc(n.ready, j.seq, func(a qlJob, seq int) int { return a.seq - seq })
				n.ready = slices.Insert(n.ready, i, j)
			}
			return true, n
		}
	},
	Equal: func(a, b any) bool {
		x, y := a.(qlState), b.(qlState)
		return x.seq == y.seq && slices.Equal(x.ready, y.ready) && maps.Equal(x.inflight, y.inflight)
	},
}

// queueHistory runs 4 clients of random operations on one queue and
// records each operation's call, reply and times.
func queueHistory(t *testing.T, addr, key string, seed int64) []porcupine.Operation {
	const clients, opsEach = 4, 60
	var mu sync.Mutex
	var history []porcupine.Operation
	var receipts []string // every receipt handed out, live or not
	start := time.Now()
	var wg sync.WaitGroup
	for cl := range clients {
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed*10 + int64(cl)))
			for range opsEach {
				var in qlInput
				switch r := rng.Intn(10); {
				case r < 4:
					in = qlInput{op: "push", id: fmt.Sprintf("j%d", rng.Intn(6))}
				case r < 7:
					in = qlInput{op: "pop"}
				default:
					in = qlInput{op: "ack"}
					if r == 9 {
						in.op = "nack"
					}
					mu.Lock()
					if len(receipts) == 0 {
						mu.Unlock()
						continue
					}
					in.receipt = receipts[rng.Intn(len(receipts))]
					mu.Unlock()
				}
				call := time.Since(start).Nanoseconds()
				out, err := runQueueOp(c, key, in)
				ret := time.Since(start).Nanoseconds()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if out.receipt != "" {
					receipts = append(receipts, out.receipt)
				}
				history = append(history, porcupine.Operation{ClientId: cl, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return history
}

func runQueueOp(c *redis.Client, key string, in qlInput) (qlOutput, error) {
	switch in.op {
	case "push":
		v, err := c.Do(ctx, "QUEUE.PUSH", key, "x", "ID", in.id).Result()
		if err == redis.Nil {
			return qlOutput{}, nil
		}
		return qlOutput{ok: v == in.id}, err
	case "pop":
		jobs, err := popack(c, key, "c", "LEASE", 3600000)
		if err != nil || len(jobs) == 0 {
			return qlOutput{}, err
		}
		return qlOutput{ok: true, id: jobs[0].id, receipt: jobs[0].receipt}, nil
	default:
		cmd := "QUEUE.ACK"
		if in.op == "nack" {
			cmd = "QUEUE.NACK"
		}
		n, err := c.Do(ctx, cmd, key, in.receipt).Int()
		return qlOutput{ok: n == 1}, err
	}
}

func describeHistory(h []porcupine.Operation) string {
	s := ""
	for _, op := range h {
		s += fmt.Sprintf("client %d [%d, %d] %+v -> %+v\n", op.ClientId, op.Call, op.Return, op.Input, op.Output)
	}
	return s
}
