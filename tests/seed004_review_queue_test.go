package tests

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Seed 004: merchant-review tasks. A submission LPUSHes the merchant uid onto
// a pending list unless the "interceptor" set already holds it (SADD 0 means
// the uid is in review: drop the duplicate); a reviewer moves a uid
// atomically into a processing (ack) list with RPOPLPUSH, reviews it, then
// LREMs it and SREMs the interceptor; a poller re-queues uids stuck in the
// processing list.

const (
	s004Pending    = "s004:pending"
	s004Processing = "s004:processing"
	s004Seen       = "s004:interceptor"
)

// s004Queue is the note's queue helper, plus the bookkeeping the test
// checks: accepted submissions and completed reviews per uid.
type s004Queue struct {
	mu        sync.Mutex
	accepted  map[string]int
	done      map[string]int
	dropped   int
	reclaimed map[string]bool
}

func newS004Queue() *s004Queue {
	return &s004Queue{accepted: map[string]int{}, done: map[string]int{}, reclaimed: map[string]bool{}}
}

// submit enqueues uid unless it is already in review.
func (q *s004Queue) submit(c *redis.Client, uid string) error {
	added, err := c.SAdd(ctx, s004Seen, uid).Result()
	if err != nil {
		return err
	}
	q.mu.Lock()
	if added == 0 {
		q.dropped++
	} else {
		q.accepted[uid]++
	}
	q.mu.Unlock()
	if added == 0 {
		return nil
	}
	return c.LPush(ctx, s004Pending, uid).Err()
}

// ack completes a review. The review only counts if this reviewer's LREM
// removed the uid: if the poller re-queued it meanwhile, another reviewer
// owns it now and this one must not finish it a second time.
func (q *s004Queue) ack(c *redis.Client, uid string) error {
	n, err := c.LRem(ctx, s004Processing, 1, uid).Result()
	if err != nil || n == 0 {
		return err
	}
	q.mu.Lock()
	q.done[uid]++
	q.mu.Unlock()
	return c.SRem(ctx, s004Seen, uid).Err()
}

// s004Takes are the ways a reviewer moves the oldest pending uid into the
// processing list; each returns redis.Nil when nothing arrived in time.
// The blocking ones go through Do: go-redis rounds typed timeouts up to 1 s.
var s004Takes = []struct {
	name string
	take func(c *redis.Client) (string, error)
}{
	{"BRPOPLPUSH", func(c *redis.Client) (string, error) {
		return c.Do(ctx, "BRPOPLPUSH", s004Pending, s004Processing, "0.1").Text()
	}},
	{"BLMOVE", func(c *redis.Client) (string, error) {
		return c.Do(ctx, "BLMOVE", s004Pending, s004Processing, "RIGHT", "LEFT", "0.1").Text()
	}},
	{"LMOVE", func(c *redis.Client) (string, error) {
		return s004Poll(c.LMove(ctx, s004Pending, s004Processing, "RIGHT", "LEFT").Result())
	}},
	{"RPOPLPUSH", func(c *redis.Client) (string, error) {
		return s004Poll(c.RPopLPush(ctx, s004Pending, s004Processing).Result())
	}},
}

// s004Poll backs off briefly when a non-blocking move found nothing.
func s004Poll(uid string, err error) (string, error) {
	if err == redis.Nil {
		time.Sleep(5 * time.Millisecond)
	}
	return uid, err
}

// reviewer takes and acks uids until stop is closed.
func (q *s004Queue) reviewer(c *redis.Client, take func(*redis.Client) (string, error), stop chan struct{}) error {
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		uid, err := take(c)
		if err == redis.Nil {
			continue
		}
		if err != nil {
			return err
		}
		if err := q.ack(c, uid); err != nil {
			return err
		}
	}
}

// sweep is the poller: a uid found in the processing list on two sweeps in
// a row is stuck; LREM it and, if that removed it, push it back as pending.
func (q *s004Queue) sweep(c *redis.Client, prev map[string]bool) (map[string]bool, error) {
	uids, err := c.LRange(ctx, s004Processing, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, uid := range uids {
		if !prev[uid] {
			seen[uid] = true
			continue
		}
		n, err := c.LRem(ctx, s004Processing, 1, uid).Result()
		if err != nil {
			return nil, err
		}
		if n == 1 {
			q.mu.Lock()
			q.reclaimed[uid] = true
			q.mu.Unlock()
			if err := c.LPush(ctx, s004Pending, uid).Err(); err != nil {
				return nil, err
			}
		}
	}
	return seen, nil
}

func TestSeed004ReviewQueue(t *testing.T) {
	onBothServers(t, s004Run)
}

func s004Uid(i int) string { return strconv.Itoa(880000 + i) }

// s004Submit runs producers concurrently over uids from..to-1: each uid is
// submitted twice, by two producers racing, so one of the two must be
// dropped unless the first was already reviewed in between.
func s004Submit(t *testing.T, q *s004Queue, clients []*redis.Client, from, to int) {
	var wg sync.WaitGroup
	for p, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, off := range []int{p, (p + 1) % len(clients)} {
				for i := from + off; i < to; i += len(clients) {
					if err := q.submit(c, s004Uid(i)); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func s004Run(t *testing.T, addr string) {
	admin := goRedis(t, addr, 2)
	if err := admin.Del(ctx, s004Pending, s004Processing, s004Seen).Err(); err != nil {
		t.Fatal(err)
	}
	q := newS004Queue()
	producers := []*redis.Client{goRedis(t, addr, 2), goRedis(t, addr, 3), goRedis(t, addr, 3)}

	// Before any reviewer runs, every resubmission is a duplicate.
	s004Submit(t, q, producers, 0, 60)
	if q.dropped != 60 || len(q.accepted) != 60 {
		t.Fatalf("first wave: %d accepted, %d dropped; want 60 and 60", len(q.accepted), q.dropped)
	}
	if n := admin.LLen(ctx, s004Pending).Val(); n != 60 {
		t.Fatalf("LLEN pending = %d, want 60", n)
	}

	// A reviewer takes the oldest task and crashes before acking it.
	crashed, err := goRedis(t, addr, 3).BRPopLPush(ctx, s004Pending, s004Processing, time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := q.submit(producers[0], crashed); err != nil || q.dropped != 61 {
		t.Fatalf("resubmitting stuck uid %s was not dropped (err %v)", crashed, err)
	}

	// Reviewers (each move variant, RESP2 and RESP3), the poller and a
	// second wave of producers all run at once.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	run := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				failed.CompareAndSwap(nil, &err)
			}
		}()
	}
	for i, tk := range s004Takes {
		for j := 0; j < 2; j++ {
			c := goRedis(t, addr, 2+j)
			run(func() error {
				if err := q.reviewer(c, tk.take, stop); err != nil {
					return fmt.Errorf("reviewer %d %s: %w", i, tk.name, err)
				}
				return nil
			})
		}
	}
	poller := goRedis(t, addr, 2)
	run(func() error {
		prev := map[string]bool{}
		for {
			select {
			case <-stop:
				return nil
			case <-time.After(150 * time.Millisecond):
			}
			var err error
			if prev, err = q.sweep(poller, prev); err != nil {
				return fmt.Errorf("sweep: %w", err)
			}
		}
	})
	s004Submit(t, q, producers, 60, 150)

	waitFor(t, 20*time.Second, "every accepted task reviewed", func() bool {
		if failed.Load() != nil {
			return true
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		return maps.Equal(q.accepted, q.done)
	})
	close(stop)
	wg.Wait()
	if err := failed.Load(); err != nil {
		t.Fatal(*err)
	}

	for uid, n := range q.accepted {
		if q.done[uid] != n {
			t.Errorf("uid %s accepted %d times, reviewed %d times", uid, n, q.done[uid])
		}
	}
	if !q.reclaimed[crashed] {
		t.Errorf("stuck uid %s was not re-queued by the poller", crashed)
	}
	if q.done[crashed] != 1 {
		t.Errorf("stuck uid %s reviewed %d times after recovery, want 1", crashed, q.done[crashed])
	}
	if left := s004Snapshot(t, admin); len(left[0])+len(left[1])+len(left[2]) != 0 {
		t.Errorf("at the end: pending %v, processing %v, interceptor %v", left[0], left[1], left[2])
	}
	reviews := 0
	for _, n := range q.done {
		reviews += n
	}
	t.Logf("%d reviews of %d uids, %d duplicates dropped, %d re-queued by the poller", reviews, len(q.done), q.dropped, len(q.reclaimed))
}

// TestSeed004RestartKeepsQueue: the note moved Redis from RDB to AOF so a
// restart loses no task. With appendfsync always, after SHUTDOWN and a
// restart the pending and processing lists and the interceptor set are
// exactly as they were, and the queue then drains normally.
func TestSeed004RestartKeepsQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("restart test builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProcess(t, dir, "--appendfsync", "always")
	// No retries: go-redis would retry the EOF that answers SHUTDOWN and
	// report the failed redial instead.
	c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1})
	q := newS004Queue()
	for i := 0; i < 20; i++ {
		for _, uid := range []string{s004Uid(i), s004Uid(i / 2)} { // second is a duplicate
			if err := q.submit(c, uid); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tk := range s004Takes {
		if _, err := tk.take(c); err != nil {
			t.Fatalf("%s: %v", tk.name, err)
		}
	}
	before := s004Snapshot(t, c)
	if len(before[0]) != 16 || len(before[1]) != 4 || len(before[2]) != 20 {
		t.Fatalf("before restart: pending %v, processing %v, interceptor %v", before[0], before[1], before[2])
	}
	if err := c.Shutdown(ctx).Err(); err != nil {
		t.Fatalf("SHUTDOWN: %v", err)
	}
	c.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("server exit after SHUTDOWN: %v\n%s", err, p.log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("server still running after SHUTDOWN\n%s", p.log)
	}

	p2 := startProcess(t, dir, "--appendfsync", "always")
	c2 := goRedis(t, p2.addr, 3)
	after := s004Snapshot(t, c2)
	for i, what := range []string{"pending", "processing", "interceptor"} {
		if !slices.Equal(before[i], after[i]) {
			t.Errorf("%s after restart = %v, want %v", what, after[i], before[i])
		}
	}
	// The reviewers that held the four processing uids are gone: the
	// poller's re-queue plus one reviewer finish all 20.
	prev, err := q.sweep(c2, nil)
	if err == nil {
		_, err = q.sweep(c2, prev)
	}
	if err != nil {
		t.Fatal(err)
	}
	for {
		uid, err := c2.RPopLPush(ctx, s004Pending, s004Processing).Result()
		if err == redis.Nil {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := q.ack(c2, uid); err != nil {
			t.Fatal(err)
		}
	}
	if len(q.done) != 20 || len(q.reclaimed) != 4 || c2.DBSize(ctx).Val() != 0 {
		t.Errorf("after draining: reviewed %d, re-queued %d, %d keys left", len(q.done), len(q.reclaimed), c2.DBSize(ctx).Val())
	}
}

// s004Snapshot returns pending and processing in list order and the
// interceptor sorted.
func s004Snapshot(t *testing.T, c *redis.Client) [3][]string {
	pending, err1 := c.LRange(ctx, s004Pending, 0, -1).Result()
	processing, err2 := c.LRange(ctx, s004Processing, 0, -1).Result()
	seen, err3 := c.SMembers(ctx, s004Seen).Result()
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(seen)
	return [3][]string{pending, processing, seen}
}
