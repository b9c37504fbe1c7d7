package tests

import (
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Seed 000: a paid live room bills each viewer once per period. Every viewer
// is a member of a sorted set scored by its next due time; billing workers
// poll ZRANGEBYSCORE key 0 now, claim each due member, charge it and re-add
// it with the next due time, backing off while nothing is due. The period
// is scaled from one minute to 200 ms and three workers share the room.

const (
	s000Period  = 200 // ms
	s000Viewers = 100
	s000Leavers = 20
	s000Run     = 800 // ms from start to the billing deadline
)

func s000Now() int64 { return time.Now().UnixMilli() }

// s000Viewer is what the room server holds in memory for one viewer (the
// note's _Member): presence, and the charges recorded against its account.
type s000Viewer struct {
	mu      sync.Mutex
	id      string
	joinAt  int64
	leaveAt int64 // 0 while present
	present bool
	nextDue int64   // used by the zrem variant only
	charges []int64 // due time of every billed period
}

// s000Room is one billing run against one server.
type s000Room struct {
	key      string
	deadline int64 // workers bill periods due at or before this, then stop
	viewers  map[string]*s000Viewer
}

// charge records one billed period; callers hold v.mu and checked presence.
func (v *s000Viewer) charge(due int64) { v.charges = append(v.charges, due) }

// s000Claims are the ways a worker makes sure it alone bills a due member.
// Each gets the member and the score its ZRANGEBYSCORE returned.
var s000Claims = []struct {
	name  string
	claim func(r *s000Room, c *redis.Client, v *s000Viewer, due int64) error
}{
	// ZREM is the claim: only the worker whose ZREM returns 1 bills. A
	// ZREM cannot tell which period it removed, so a worker whose read is
	// stale (another worker already billed and re-added) puts back the
	// viewer's real next due instead of billing that period twice.
	{"zrem", func(r *s000Room, c *redis.Client, v *s000Viewer, due int64) error {
		n, err := c.ZRem(ctx, r.key, v.id).Result()
		if err != nil || n == 0 {
			return err
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		if !v.present {
			return nil // left the room: stays out of the schedule
		}
		next := v.nextDue
		if due == v.nextDue {
			v.charge(due)
			next = due + s000Period
			v.nextDue = next
		}
		return c.ZAdd(ctx, r.key, redis.Z{Score: float64(next), Member: v.id}).Err()
	}},
	// WATCH the schedule, check the score is still the one read, and move
	// it to the next period in MULTI/EXEC: a nil EXEC means someone else
	// touched the room first, so this worker leaves the member alone.
	{"watch-multi", func(r *s000Room, c *redis.Client, v *s000Viewer, due int64) error {
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			score, err := tx.ZScore(ctx, r.key, v.id).Result()
			if err == redis.Nil || err == nil && int64(score) != due {
				return errS000Skip
			} else if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.ZAdd(ctx, r.key, redis.Z{Score: float64(due + s000Period), Member: v.id})
				return nil
			})
			return err
		}, r.key)
		if errors.Is(err, errS000Skip) || errors.Is(err, redis.TxFailedErr) {
			return nil
		}
		if err != nil {
			return err
		}
		return s000Bill(r, c, v, due)
	}},
	// ZADD XX GT CH to due+period is a compare-and-advance in one command:
	// it reports 1 only to the worker that moved the score past due.
	{"zadd-gt", func(r *s000Room, c *redis.Client, v *s000Viewer, due int64) error {
		n, err := c.ZAddArgs(ctx, r.key, redis.ZAddArgs{XX: true, GT: true, Ch: true,
			Members: []redis.Z{{Score: float64(due + s000Period), Member: v.id}}}).Result()
		if err != nil || n == 0 {
			return err
		}
		return s000Bill(r, c, v, due)
	}},
}

var errS000Skip = errors.New("skip")

// s000Bill charges a claimed period if the viewer is still in the room; a
// viewer that left meanwhile is taken out of the schedule instead.
func s000Bill(r *s000Room, c *redis.Client, v *s000Viewer, due int64) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.present {
		v.charge(due)
		return nil
	}
	return c.ZRem(ctx, r.key, v.id).Err()
}

// worker is the note's _CoreBill loop with capped exponential backoff. Its
// "now" never passes the deadline, and it stops once nothing is due after
// the deadline, so when all workers are done every period due by the
// deadline has been billed exactly once, however late the workers ran.
func (r *s000Room) worker(c *redis.Client, claim func(*s000Room, *redis.Client, *s000Viewer, int64) error) error {
	idle := 0
	for {
		now := min(s000Now(), r.deadline)
		due, err := c.ZRangeByScoreWithScores(ctx, r.key, &redis.ZRangeBy{
			Min: "0", Max: strconv.FormatInt(now, 10), Count: 20}).Result()
		if err != nil {
			return err
		}
		if len(due) == 0 {
			if now == r.deadline {
				return nil
			}
			time.Sleep(time.Duration(1<<min(idle, 2)+1) * 3 * time.Millisecond)
			idle++
			continue
		}
		idle = 0
		for _, z := range due {
			v := r.viewers[z.Member.(string)]
			if v == nil {
				return fmt.Errorf("unknown member %v in the billing set", z.Member)
			}
			if int64(z.Score) > now {
				return fmt.Errorf("ZRANGEBYSCORE 0 %d returned %s with score %v", now, v.id, z.Score)
			}
			if err := claim(r, c, v, int64(z.Score)); err != nil {
				return fmt.Errorf("claim %s: %w", v.id, err)
			}
		}
	}
}

// join adds a viewer, first due one period after joining.
func (r *s000Room) join(c *redis.Client, v *s000Viewer) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.joinAt, v.present = s000Now(), true
	v.nextDue = v.joinAt + s000Period
	return c.ZAdd(ctx, r.key, redis.Z{Score: float64(v.nextDue), Member: v.id}).Err()
}

// leave removes a viewer from the room and from the billing schedule.
func (r *s000Room) leave(c *redis.Client, v *s000Viewer) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.leaveAt, v.present = s000Now(), false
	return c.ZRem(ctx, r.key, v.id).Err()
}

// seat fills the room with its viewers, in joining order, and picks (from
// seed) the indexes of those who will leave mid-run.
func (r *s000Room) seat(seed int64) (order []*s000Viewer, leavers []int) {
	r.viewers = map[string]*s000Viewer{}
	order = make([]*s000Viewer, s000Viewers)
	for i := range order {
		order[i] = &s000Viewer{id: strconv.Itoa(100000 + i)}
		r.viewers[order[i].id] = order[i]
	}
	return order, rand.New(rand.NewSource(seed)).Perm(s000Viewers)[:s000Leavers]
}

func TestSeed000RoomBilling(t *testing.T) {
	long(t)
	onBothServers(t, func(t *testing.T, addr string) {
		for i, cl := range s000Claims {
			t.Run(cl.name, func(t *testing.T) { s000Run1(t, addr, fmt.Sprintf("s000:bill:%d", 7000+i), cl.claim) })
		}
	})
}

func s000Run1(t *testing.T, addr, key string, claim func(*s000Room, *redis.Client, *s000Viewer, int64) error) {
	admin := goRedis(t, addr, 2)
	if err := admin.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	start := s000Now()
	r := &s000Room{key: key, deadline: start + s000Run}
	order, leavers := r.seat(start)

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 3; w++ {
		c := goRedis(t, addr, 2+w%2) // workers speak RESP2 and RESP3
		wg.Add(1)
		go func() { defer wg.Done(); errs <- r.worker(c, claim) }()
	}
	// Viewers join over the first 200 ms; some leave between 200 ms and
	// the deadline.
	roomConn := goRedis(t, addr, 3)
	for i, v := range order {
		if err := r.join(roomConn, v); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := goRedis(t, addr, 2)
		for n, i := range leavers {
			at := start + s000Period + int64(n)*(s000Run-s000Period-50)/s000Leavers
			time.Sleep(time.Duration(at-s000Now()) * time.Millisecond)
			if err := r.leave(c, order[i]); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s000Check(t, r, admin)
}

// s000Check: each remaining viewer was billed every period due by the
// deadline, once, in order, and is scheduled for the next one; each viewer
// that left was billed in order, never for a period due after leaving, and
// is off the schedule.
func s000Check(t *testing.T, r *s000Room, admin *redis.Client) {
	sched, err := admin.ZRangeWithScores(ctx, r.key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	scheduled := map[string]int64{}
	for _, z := range sched {
		scheduled[z.Member.(string)] = int64(z.Score)
	}
	total, stayed, bad := 0, 0, 0
	fail := func(format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	for _, v := range r.viewers {
		total += len(v.charges)
		for k, due := range v.charges {
			if want := v.joinAt + int64(k+1)*s000Period; due != want {
				fail("viewer %s charge #%d for period due %d, want %d (charges %v)", v.id, k, due, want, v.charges)
				break
			}
		}
		if v.present {
			stayed++
			periods := int((r.deadline - v.joinAt) / s000Period)
			if len(v.charges) != periods {
				fail("viewer %s billed %d times, want %d (joined %d ms before the deadline)",
					v.id, len(v.charges), periods, r.deadline-v.joinAt)
			}
			if want := v.joinAt + int64(periods+1)*s000Period; scheduled[v.id] != want {
				fail("viewer %s scheduled at %d, want %d", v.id, scheduled[v.id], want)
			}
			continue
		}
		if _, ok := scheduled[v.id]; ok {
			fail("viewer %s left but is still in the billing set", v.id)
		}
		if n := len(v.charges); n > 0 && v.charges[n-1] > v.leaveAt {
			fail("viewer %s left at %d but was billed for the period due %d", v.id, v.leaveAt, v.charges[n-1])
		}
	}
	if len(sched) != stayed {
		fail("billing set holds %d members, want the %d viewers still in the room", len(sched), stayed)
	}
	if stayed != s000Viewers-s000Leavers || total < 2*stayed {
		t.Errorf("run did not exercise billing: %d viewers stayed, %d charges", stayed, total)
	}
	t.Logf("%d charges, %d viewers stayed", total, stayed)
}
