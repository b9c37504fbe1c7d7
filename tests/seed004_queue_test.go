package tests

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Seed 004 on QUEUE: the merchant-review workflow that
// seed004_review_queue_test.go builds from LPUSH, an interceptor set,
// RPOPLPUSH into an ack list and a re-queueing poller, in three commands.
// A submission is QUEUE.PUSH with the merchant's uid as the job id (the
// interceptor) and a priority for VIP merchants; a reviewer takes one with
// POPACK ... RELEASE-ON-DISCONNECT and ACKs it when the review is done. A
// reviewer that crashes mid-review hands its merchant back at once; one
// that hangs loses it when the lease ends. The README's example is this
// test's flow.
func TestSeed004OnQueue(t *testing.T) {
	srv := startServer(t)
	admin := delayClient(t, srv.Addr(), 3)
	const merchants, vips, reviewers = 40, 6, 4
	// Submissions, VIPs last: priority, not arrival, puts them first.
	for i := range merchants {
		args := []any{"QUEUE.PUSH", "reviews", fmt.Sprintf("materials of merchant %d", i), "ID", fmt.Sprintf("merchant:%d", i)}
		if i >= merchants-vips {
			args = append(args, "PRIORITY", 10)
		}
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A merchant who submits again while in review is intercepted.
	if v, err := admin.Do(ctx, "QUEUE.PUSH", "reviews", "again", "ID", "merchant:3").Result(); err != redis.Nil {
		t.Fatalf("resubmission while pending: %v %v, want nil", v, err)
	}

	// A reviewer that crashes mid-review: it takes the first VIP and its
	// connection drops without an ACK.
	crasher := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 3})
	first, err := popack(crasher, "reviews", "reviewer-crash", "LEASE", 600000, "RELEASE-ON-DISCONNECT")
	if err != nil || len(first) != 1 || first[0].id != fmt.Sprintf("merchant:%d", merchants-vips) {
		t.Fatalf("the crashing reviewer's job: %v %v", first, err)
	}
	crasher.Close()
	waitFor(t, 5*time.Second, "the crashed reviewer's merchant to be back", func() bool {
		v, err := admin.Do(ctx, "QUEUE.INFLIGHT", "reviews").Slice()
		if err != nil {
			t.Fatalf("QUEUE.INFLIGHT: %v", err) // not "nothing in flight"
		}
		return len(v) == 0
	})

	var mu sync.Mutex
	reviewedBy := map[string][]string{} // merchant -> reviewers who completed it
	inReview := map[string]string{}     // merchant -> reviewer reviewing it now
	byToken := map[int]string{}         // deliveries by fencing token: the server's order
	attempts := map[string]int64{}
	var wg sync.WaitGroup
	for r := range reviewers {
		c := delayClient(t, srv.Addr(), 3)
		name := fmt.Sprintf("reviewer-%d", r)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				finished := len(reviewedBy) == merchants
				mu.Unlock()
				if finished {
					return
				}
				jobs, err := popack(c, "reviews", name, "BLOCK", 100, "LEASE", 600000, "RELEASE-ON-DISCONNECT")
				if err != nil {
					t.Error(err)
					return
				}
				for _, j := range jobs {
					mu.Lock()
					if other, busy := inReview[j.id]; busy {
						t.Errorf("%s handed to %s while %s reviews it", j.id, name, other)
					}
					inReview[j.id] = name
					var token int
					fmt.Sscanf(j.receipt, "%d:", &token)
					byToken[token] = j.id
					attempts[j.id] = j.attempt
					mu.Unlock()
					time.Sleep(time.Millisecond) // the review
					mu.Lock()
					delete(inReview, j.id)
					reviewedBy[j.id] = append(reviewedBy[j.id], name)
					mu.Unlock()
					if n, err := c.Do(ctx, "QUEUE.ACK", "reviews", j.receipt).Int(); err != nil || n != 1 {
						t.Errorf("ACK %s: %d %v", j.receipt, n, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	for i := range merchants {
		m := fmt.Sprintf("merchant:%d", i)
		if len(reviewedBy[m]) != 1 {
			t.Errorf("%s reviewed by %v, want exactly one reviewer", m, reviewedBy[m])
		}
	}
	// The VIPs came first (the crashed reviewer's one among them, back at
	// once with its second attempt, long before its lease would end), in
	// the server's order of deliveries: their fencing tokens.
	tokens := slices.Sorted(maps.Keys(byToken))
	var order []string
	for _, tok := range tokens {
		order = append(order, byToken[tok])
	}
	for i, m := range order[:vips] {
		var n int
		if _, err := fmt.Sscanf(m, "merchant:%d", &n); err != nil || n < merchants-vips {
			t.Errorf("delivery %d is %s, before a VIP: %v", i, m, order[:vips])
		}
	}
	if a := attempts[first[0].id]; a != 2 {
		t.Errorf("the crashed reviewer's merchant was delivered again as attempt %d, want 2", a)
	}
	// Resubmitting a reviewed merchant is a new review.
	if v, err := admin.Do(ctx, "QUEUE.PUSH", "reviews", "new materials", "ID", "merchant:3").Result(); err != nil || v != "merchant:3" {
		t.Errorf("resubmission after the review: %v %v", v, err)
	}
}
