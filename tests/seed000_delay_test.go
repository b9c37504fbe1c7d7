package tests

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Seed 000 on DELAY: the same paid live room as seed000_billing_test.go,
// with each viewer a recurring timer (DELAY.ADD ... IN period EVERY period)
// instead of a polled sorted set. Billing consumers block on DELAY.POP with
// a LEASE, charge the delivered periods (fires of them from due) and ACK.
// One consumer crashes once: it pops with a lease and never acknowledges,
// and what it held must be redelivered, identically, and charged once.

const (
	s000dKey        = "room:bill"
	s000dRun        = 1300 // ms from start to the billing deadline
	s000dCrashAfter = 300  // ms from start
	// The crashing consumer's lease is short so that its deliveries come
	// back within the run; the others lease for 2 s as a real biller would.
	s000dCrashLease = 500
)

// s000dDelivery is one timer a consumer received.
type s000dDelivery struct {
	fired    delayFired
	consumer int
	at       int64 // unix ms when the pop answered
	lost     bool  // the crash: never charged nor acknowledged
}

type s000dRoom struct {
	*s000Room
	mu         sync.Mutex
	deliveries []s000dDelivery
	joinedBy   map[string]int64 // unix ms just after each viewer's DELAY.ADD answered
}

func s000dInfo(id string) string { return "viewer=" + id + ";room=7;rate=1" }

// bill charges and acknowledges what one pop delivered.
func (r *s000dRoom) bill(c *redis.Client, consumer int, fired []delayFired, at int64) error {
	for _, f := range fired {
		v := r.viewers[f.member]
		if v == nil || f.payload == nil || *f.payload != s000dInfo(f.member) || f.fires < 1 {
			return fmt.Errorf("consumer %d popped %s", consumer, f)
		}
		r.mu.Lock()
		r.deliveries = append(r.deliveries, s000dDelivery{fired: f, consumer: consumer, at: at})
		r.mu.Unlock()
		v.mu.Lock()
		if v.present {
			for k := int64(0); k < f.fires; k++ {
				v.charge(f.due + k*s000Period)
			}
		}
		v.mu.Unlock()
		// 0 when the viewer left meanwhile (CANCEL took the timer).
		if err := c.Do(ctx, "DELAY.ACK", s000dKey, f.member).Err(); err != nil {
			return err
		}
	}
	return nil
}

// consumer bills until stop. Consumer 0 crashes once after crashAt: that
// pop's deliveries are recorded as lost and dropped.
func (r *s000dRoom) consumer(c *redis.Client, id int, stop *atomic.Bool, crashAt int64) error {
	crashed := id != 0
	for !stop.Load() {
		lease := 2000
		crash := !crashed && s000Now() >= crashAt
		if crash {
			lease = s000dCrashLease
		}
		fired, err := delayPop(c, s000dKey, "COUNT", 20, "BLOCK", 1000, "LEASE", lease)
		if err == redis.Nil {
			continue
		}
		if err != nil {
			return err
		}
		at := s000Now()
		if crash && len(fired) > 0 {
			crashed = true
			r.mu.Lock()
			for _, f := range fired {
				r.deliveries = append(r.deliveries, s000dDelivery{fired: f, consumer: id, at: at, lost: true})
			}
			r.mu.Unlock()
			continue // "restarted": it goes on billing as if nothing happened
		}
		if err := r.bill(c, id, fired, at); err != nil {
			return err
		}
	}
	return nil
}

func (r *s000dRoom) join(c *redis.Client, v *s000Viewer) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.joinAt, v.present = s000Now(), true
	err := c.Do(ctx, "DELAY.ADD", s000dKey, v.id, "IN", s000Period, "EVERY", s000Period,
		"PAYLOAD", s000dInfo(v.id)).Err()
	r.joinedBy[v.id] = s000Now()
	return err
}

func (r *s000dRoom) leave(c *redis.Client, v *s000Viewer) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.leaveAt, v.present = s000Now(), false
	return c.Do(ctx, "DELAY.CANCEL", s000dKey, v.id).Err()
}

func TestSeed000DelayBilling(t *testing.T) {
	srv := startServer(t)
	addr := srv.Addr()
	start := s000Now()
	r := &s000dRoom{s000Room: &s000Room{key: s000dKey, deadline: start + s000dRun}, joinedBy: map[string]int64{}}
	order, leavers := r.seat(start)

	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 3; w++ {
		c := delayClient(t, addr, 2+w%2) // consumers speak RESP2 and RESP3
		wg.Add(1)
		go func() { defer wg.Done(); errs <- r.consumer(c, w, &stop, start+s000dCrashAfter) }()
	}
	// Viewers join over the first 200 ms; some leave between one period
	// and the deadline.
	roomConn := goRedis(t, addr, 3)
	for i, v := range order {
		if err := r.join(roomConn, v); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	leaveConn := goRedis(t, addr, 2)
	for n, i := range leavers {
		at := start + s000Period + int64(n)*(s000dRun-s000Period-50)/s000Leavers
		time.Sleep(time.Duration(at-s000Now()) * time.Millisecond)
		if err := r.leave(leaveConn, order[i]); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Duration(r.deadline-s000Now()) * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	// Bill what the consumers left due by the deadline, waiting for the
	// crash's deliveries to come back if their lease has not run out.
	admin := delayClient(t, addr, 2)
	for giveUp := time.Now().Add(10 * time.Second); ; {
		if time.Now().After(giveUp) {
			t.Fatalf("the crash's deliveries were not redelivered as they were: %s", r.lostReport())
		}
		due, err := admin.Do(ctx, "DELAY.NEXT", s000dKey).Slice()
		if err != nil {
			t.Fatal(err)
		}
		if due[1].(int64) > r.deadline && r.lostRedelivered() {
			break
		}
		fired, err := delayPop(admin, s000dKey, "COUNT", 100, "BLOCK", 3000, "LEASE", 2000)
		if err != nil {
			t.Fatalf("draining: %v", err)
		}
		if err := r.bill(admin, 9, fired, s000Now()); err != nil {
			t.Fatal(err)
		}
	}
	s000dCheck(t, r, admin)
}

// lostRedelivered: every delivery the crash lost, for a viewer still in the
// room, came back.
func (r *s000dRoom) lostRedelivered() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]int{}
	for _, d := range r.deliveries {
		seen[d.fired.key()]++
	}
	for _, d := range r.deliveries {
		v := r.viewers[d.fired.member]
		v.mu.Lock()
		present := v.present
		v.mu.Unlock()
		if d.lost && present && seen[d.fired.key()] < 2 {
			return false
		}
	}
	return true
}

// lostReport lists the lost deliveries and every delivery of their viewers.
func (r *s000dRoom) lostReport() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	lostViewers := map[string]bool{}
	for _, d := range r.deliveries {
		if d.lost {
			lostViewers[d.fired.member] = true
		}
	}
	out := ""
	for _, d := range r.deliveries {
		if lostViewers[d.fired.member] {
			out += fmt.Sprintf("\n  %s consumer %d lost %v", d.fired, d.consumer, d.lost)
		}
	}
	return out
}

// s000dCheck: each viewer's charges are its periods from its first due time
// on, each once and in order; a viewer still in the room was charged every
// period due by the deadline and is next due right after its last charge;
// a viewer that left was never charged for a period due after it left and
// has no timer. Each delivery the crash lost was redelivered once with the
// same due and fires; no other delivery was repeated.
func s000dCheck(t *testing.T, r *s000dRoom, admin *redis.Client) {
	sched := map[string]int64{}
	v, err := admin.Do(ctx, "DELAY.RANGE", s000dKey, "-inf", "+inf").Slice()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range v {
		p := e.([]any)
		sched[p[0].(string)] = p[1].(int64)
	}
	bad := 0
	fail := func(format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf(format, args...)
		}
	}

	perKey := map[string][]s000dDelivery{}
	lost, catchUp := 0, 0
	for _, d := range r.deliveries {
		perKey[d.fired.key()] = append(perKey[d.fired.key()], d)
		if last := d.fired.due + (d.fired.fires-1)*s000Period; last > d.at {
			fail("%s delivered at %d, before its last period was due", d.fired, d.at)
		}
		if d.lost {
			lost++
		}
		if d.fired.fires > 1 {
			catchUp++
		}
	}
	if lost == 0 {
		t.Error("the crash lost nothing: redelivery not exercised")
	}
	for _, ds := range perKey {
		f := ds[0].fired
		present := r.viewers[f.member].present
		switch {
		case len(ds) == 1 && !ds[0].lost:
		case len(ds) == 1 && !present:
			// Lost, and the viewer left before the lease ran out.
		case len(ds) == 2 && ds[0].lost && !ds[1].lost:
			// Redelivered: same member, payload, due and fires (the key).
		default:
			fail("delivery %s: %d times (lost first: %v)", f, len(ds), ds[0].lost)
		}
	}

	total, stayed := 0, 0
	for _, v := range r.viewers {
		total += len(v.charges)
		charged := append([]int64(nil), v.charges...)
		sort.Slice(charged, func(i, j int) bool { return charged[i] < charged[j] })
		if len(charged) > 0 {
			d0 := charged[0]
			if v.present && (d0 < v.joinAt+s000Period || d0 > r.joinedBy[v.id]+s000Period) {
				fail("viewer %s first charged for %d, joined at %d..%d", v.id, d0, v.joinAt, r.joinedBy[v.id])
			}
			for k, due := range charged {
				if want := d0 + int64(k)*s000Period; due != want {
					fail("viewer %s charge #%d for %d, want %d (charges %v)", v.id, k, due, want, charged)
					break
				}
			}
		}
		if v.present {
			stayed++
			if len(charged) == 0 {
				fail("viewer %s stayed and was never charged", v.id)
				continue
			}
			next := charged[0] + int64(len(charged))*s000Period
			if sched[v.id] != next || next <= r.deadline {
				fail("viewer %s next due %d, want %d (after the deadline %d)", v.id, sched[v.id], next, r.deadline)
			}
			continue
		}
		if _, ok := sched[v.id]; ok {
			fail("viewer %s left but still has a timer", v.id)
		}
		if n := len(charged); n > 0 && charged[n-1] > v.leaveAt {
			fail("viewer %s left at %d but was charged for the period due %d", v.id, v.leaveAt, charged[n-1])
		}
	}
	if len(sched) != stayed {
		fail("%d timers for the %d viewers still in the room", len(sched), stayed)
	}
	if stayed != s000Viewers-s000Leavers || total < 4*stayed {
		t.Errorf("run did not exercise billing: %d viewers stayed, %d charges", stayed, total)
	}
	t.Logf("%d charges, %d viewers stayed, %d deliveries (%d lost in the crash, %d catching up)",
		total, stayed, len(r.deliveries), lost, catchUp)
}
