package tests

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/resp"
)

// DELAY leases and blocking pops: ACK, redelivery, BLOCK with several clients,
// and BLOCK inside MULTI.

// TestDelayLeaseAck: a leased timer stays (LEN, NEXT at its lease end) and
// is not popped again; ACK settles it (one-shot: gone, recurring: re-armed
// from the delivered due time); ACK without a lease answers 0.
func TestDelayLeaseAck(t *testing.T) {
	onServer(t, func(t *testing.T, c *redis.Client) {
		const p = 1000
		due0 := time.Now().UnixMilli() - 2*p - p/2
		dInt(t, c, "DELAY.ADD", "q", "one", "AT", 1000, "PAYLOAD", "p1")
		dInt(t, c, "DELAY.ADD", "q", "rec", "AT", due0, "EVERY", p)
		dInt(t, c, "DELAY.ADD", "q", "later", "IN", 500000)
		before := time.Now().UnixMilli()
		got := mustPop(t, c, "q", "COUNT", 10, "LEASE", 100000)
		if len(got) != 2 || firedString(got[:1]) != `[one "p1" 1000 1]` || got[1].member != "rec" ||
			got[1].due != due0 || got[1].fires < 3 {
			t.Fatalf("leased pop: %s", firedString(got))
		}
		rec := got[1]
		if n := dInt(t, c, "DELAY.LEN", "q"); n != 3 {
			t.Errorf("LEN with two leased: %d, want 3", n)
		}
		if again := mustPop(t, c, "q", "COUNT", 10); len(again) != 0 {
			t.Errorf("leased timers popped again: %s", firedString(again))
		}
		if ttl := dInt(t, c, "DELAY.TTL", "q", "one"); ttl <= 90000 || ttl > 100000 {
			t.Errorf("TTL of a leased timer: %d, want the lease's rest", ttl)
		}
		if due := nextDue(t, c, "q"); due < before+100000 || due > time.Now().UnixMilli()+100000 {
			t.Errorf("NEXT due %d, want the lease end", due)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "one", "nosuch", "later"); n != 1 {
			t.Errorf("ACK one nosuch later: %d, want 1", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "one"); n != 0 {
			t.Errorf("second ACK: %d", n)
		}
		if n := dInt(t, c, "DELAY.TTL", "q", "one"); n != -2 {
			t.Errorf("an acknowledged one-shot timer stayed: TTL %d", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "rec"); n != 1 {
			t.Errorf("ACK rec: %d", n)
		}
		if got := dRange(t, c, "q", 0, time.Now().UnixMilli()+10*p); got != fmt.Sprintf("rec:%d", due0+rec.fires*p) {
			t.Errorf("after ACK: %s, want rec re-armed at %d", got, due0+rec.fires*p)
		}
		if n := dInt(t, c, "DELAY.ACK", "nokey", "m"); n != 0 {
			t.Errorf("ACK on a missing key: %d", n)
		}
		dInt(t, c, "DELAY.CANCEL", "q", "rec") // due again in 500 ms: out of the way
		// Without LEASE a pop is final: nothing to ACK.
		dInt(t, c, "DELAY.ADD", "q", "x", "AT", 1, "EVERY", 100000)
		if got := mustPop(t, c, "q"); len(got) != 1 || got[0].member != "x" {
			t.Fatalf("pop x: %s", firedString(got))
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "x"); n != 0 {
			t.Errorf("ACK after a pop without LEASE: %d", n)
		}
		// An update ends the lease.
		dInt(t, c, "DELAY.ADD", "q", "u", "AT", 2)
		if got := mustPop(t, c, "q", "LEASE", 100000); len(got) != 1 || got[0].member != "u" {
			t.Fatalf("pop u: %s", firedString(got))
		}
		if n := dInt(t, c, "DELAY.ADD", "q", "u", "AT", 3, "NX"); n != 0 {
			t.Errorf("NX on a leased timer: %d", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "u"); n != 1 {
			t.Errorf("NX ended the lease: ACK %d", n)
		}
		dInt(t, c, "DELAY.ADD", "q", "u", "AT", 2)
		mustPop(t, c, "q", "LEASE", 100000)
		if n := dInt(t, c, "DELAY.ADD", "q", "u", "AT", 3); n != 0 {
			t.Errorf("update of a leased timer: %d", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "u"); n != 0 {
			t.Errorf("ACK after an update: %d, want 0 (the lease ended)", n)
		}
		if got := mustPop(t, c, "q"); firedString(got) != "[u nil 3 1]" {
			t.Errorf("pop after the update: %s", firedString(got))
		}
		// The last ACK takes the key with it.
		c.Del(ctx, "q")
		dInt(t, c, "DELAY.ADD", "q", "last", "AT", 1)
		mustPop(t, c, "q", "LEASE", 100000)
		dInt(t, c, "DELAY.ACK", "q", "last")
		if n := dInt(t, c, "EXISTS", "q"); n != 0 {
			t.Error("the key outlived its last acknowledged timer")
		}
	})
}

// TestDelayLeaseRedelivery: a lease that runs out redelivers the same
// [due, fires], however many more periods passed meanwhile; a redelivery
// without LEASE is final and the schedule goes on from it.
func TestDelayLeaseRedelivery(t *testing.T) {
	onServer(t, func(t *testing.T, c *redis.Client) {
		const p = 40
		dInt(t, c, "DELAY.ADD", "q", "one", "AT", 1000, "PAYLOAD", "p1")
		dInt(t, c, "DELAY.ADD", "q", "rec", "AT", time.Now().UnixMilli()-100, "EVERY", p, "PAYLOAD", "r")
		first := mustPop(t, c, "q", "COUNT", 5, "LEASE", 250)
		if len(first) != 2 || first[0].member != "one" || first[1].member != "rec" || first[1].fires < 3 {
			t.Fatalf("leased pop: %s", firedString(first))
		}
		leasedAt := time.Now()
		// The redelivered rec is not leased, so it is re-armed right after
		// the periods it covered, which are long past: the next delivery
		// may come in the same reply.
		var again []delayFired
		for len(again) < 3 {
			f := mustPop(t, c, "q", "COUNT", 5, "BLOCK", 5000)
			again = append(again, f...)
		}
		if since := time.Since(leasedAt); since < 200*time.Millisecond {
			t.Errorf("redelivered %v after a 250 ms lease", since)
		}
		if firedString(again[:2]) != firedString(first) {
			t.Fatalf("redelivery differs:\n got %s\nwant %s", firedString(again[:2]), firedString(first))
		}
		// The schedule resumes right after the redelivered periods, the
		// ones that came due during the lease included.
		rec, next := first[1], again[2]
		if len(again) != 3 || next.member != "rec" || next.due != rec.due+rec.fires*p || next.fires < 2 {
			t.Errorf("after the redelivery: %s, want rec due %d with fires >= 2", firedString(again[2:]), rec.due+rec.fires*p)
		}
		if n := dInt(t, c, "DELAY.LEN", "q"); n != 1 {
			t.Errorf("LEN after the redelivery: %d, want 1 (the one-shot timer went)", n)
		}
	})
}

// blockedPop is DELAY.POP run in the background.
type blockedPop struct {
	fired []delayFired
	err   error
	at    time.Time // when the reply arrived
}

func goPop(c *redis.Client, key string, opts ...any) chan blockedPop {
	ch := make(chan blockedPop, 1)
	go func() {
		f, err := delayPop(c, key, opts...)
		ch <- blockedPop{f, err, time.Now()}
	}()
	return ch
}

func recvPop(t testing.TB, ch chan blockedPop) blockedPop {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("a blocked DELAY.POP was never answered")
		return blockedPop{}
	}
}

// TestDelayBlocking: BLOCK times out with nil, and a client blocked on a
// missing key or on one with nothing due is woken by a timer that comes
// due, whether it is added due now, added for later, or moved earlier.
func TestDelayBlocking(t *testing.T) {
	srv := startServer(t)
	forProtocols(t, func(t *testing.T, proto int) {
		admin, c := delayClient(t, srv.Addr(), proto), delayClient(t, srv.Addr(), proto)
		admin.FlushAll(ctx)

		start := time.Now()
		if _, err := delayPop(c, "nokey", "BLOCK", 100); err != redis.Nil {
			t.Errorf("timed-out BLOCK: %v, want nil", err)
		}
		if e := time.Since(start); e < 100*time.Millisecond {
			t.Errorf("BLOCK 100 timed out after %v", e)
		}
		dInt(t, admin, "DELAY.ADD", "far", "m", "IN", 100000)
		if _, err := delayPop(c, "far", "BLOCK", 50); err != redis.Nil {
			t.Errorf("BLOCK on a key with nothing due: %v, want nil", err)
		}

		// Woken by an ADD due now, BLOCK 0 waiting for good.
		ch := goPop(c, "k", "BLOCK", 0)
		zsetWaitBlocked(t, admin, 1)
		dInt(t, admin, "DELAY.ADD", "k", "now", "IN", 0, "PAYLOAD", "x")
		r := recvPop(t, ch)
		if r.err != nil || len(r.fired) != 1 || r.fired[0].member != "now" || r.fired[0].payload == nil ||
			*r.fired[0].payload != "x" {
			t.Errorf("woken by ADD IN 0: %s %v", firedString(r.fired), r.err)
		}
		if n := dInt(t, admin, "EXISTS", "k"); n != 0 {
			t.Error("the key outlived the timer the blocked pop took")
		}

		// Woken at the due time of a timer added for later.
		ch = goPop(c, "k", "BLOCK", 5000)
		zsetWaitBlocked(t, admin, 1)
		added := time.Now().UnixMilli()
		dInt(t, admin, "DELAY.ADD", "k", "soon", "IN", 150)
		r = recvPop(t, ch)
		if r.err != nil || len(r.fired) != 1 || r.fired[0].member != "soon" {
			t.Fatalf("woken by ADD IN 150: %s %v", firedString(r.fired), r.err)
		}
		if due := r.fired[0].due; due < added+150 || r.at.UnixMilli() < due {
			t.Errorf("timer due %d (added at %d, IN 150) delivered at %d", due, added, r.at.UnixMilli())
		}

		// A later timer does not wake it, an earlier one (ADD or TOUCH) does.
		dInt(t, admin, "DELAY.ADD", "k", "late", "IN", 100000)
		ch = goPop(c, "k", "BLOCK", 5000)
		zsetWaitBlocked(t, admin, 1)
		dInt(t, admin, "DELAY.ADD", "k", "early", "IN", 100)
		r = recvPop(t, ch)
		if r.err != nil || firedString(r.fired) == "" || r.fired[0].member != "early" {
			t.Errorf("woken by an earlier timer: %s %v", firedString(r.fired), r.err)
		}
		ch = goPop(c, "k", "BLOCK", 5000, "LEASE", 100000)
		zsetWaitBlocked(t, admin, 1)
		dInt(t, admin, "DELAY.TOUCH", "k", "late", 50)
		r = recvPop(t, ch)
		if r.err != nil || firedString(r.fired) == "" || r.fired[0].member != "late" {
			t.Errorf("woken by TOUCH: %s %v", firedString(r.fired), r.err)
		}
		if n := dInt(t, admin, "DELAY.ACK", "k", "late"); n != 1 {
			t.Errorf("the blocked pop's LEASE was not taken: ACK %d", n)
		}

		// Several timers coming due together go to one waiter, up to COUNT.
		ch = goPop(c, "k", "BLOCK", 5000, "COUNT", 5)
		zsetWaitBlocked(t, admin, 1)
		if _, err := admin.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, m := range []string{"t3", "t1", "t2"} {
				p.Do(ctx, "DELAY.ADD", "k", m, "AT", 10)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if r = recvPop(t, ch); firedString(r.fired) != "[t1 nil 10 1] [t2 nil 10 1] [t3 nil 10 1]" {
			t.Errorf("woken by a transaction adding three: %s %v", firedString(r.fired), r.err)
		}

		// A key that turns into another type keeps the waiter waiting; it
		// is served once the key holds timers again.
		ch = goPop(c, "k", "BLOCK", 5000)
		zsetWaitBlocked(t, admin, 1)
		admin.Set(ctx, "k", "str", 0)
		admin.Del(ctx, "k")
		dInt(t, admin, "DELAY.ADD", "k", "back", "IN", 20)
		if r = recvPop(t, ch); r.err != nil || len(r.fired) != 1 || r.fired[0].member != "back" {
			t.Errorf("after a type change: %s %v", firedString(r.fired), r.err)
		}

		// Cancelling the earliest timer moves the wake-up to the next one.
		dInt(t, admin, "DELAY.ADD", "k", "first", "IN", 100)
		dInt(t, admin, "DELAY.ADD", "k", "second", "IN", 250)
		ch = goPop(c, "k", "BLOCK", 5000)
		zsetWaitBlocked(t, admin, 1)
		dInt(t, admin, "DELAY.CANCEL", "k", "first")
		if r = recvPop(t, ch); r.err != nil || len(r.fired) != 1 || r.fired[0].member != "second" ||
			r.at.UnixMilli() < r.fired[0].due {
			t.Errorf("after cancelling the earliest: %s %v", firedString(r.fired), r.err)
		}

		// DEL takes the pending timers away: the waiter times out.
		dInt(t, admin, "DELAY.ADD", "k", "doomed", "IN", 100)
		ch = goPop(c, "k", "BLOCK", 400)
		zsetWaitBlocked(t, admin, 1)
		admin.Del(ctx, "k")
		if r = recvPop(t, ch); r.err != redis.Nil {
			t.Errorf("blocked on a deleted key: %s %v, want nil", firedString(r.fired), r.err)
		}
		zsetWaitBlocked(t, admin, 0)
	})
}

// TestDelayBlockingFIFO: clients blocked on one key are served in the order
// they blocked, each timer going to exactly one of them.
func TestDelayBlockingFIFO(t *testing.T) {
	srv := startServer(t)
	forProtocols(t, func(t *testing.T, proto int) {
		admin := delayClient(t, srv.Addr(), proto)
		admin.FlushAll(ctx)
		const waiters = 5
		chans := make([]chan blockedPop, waiters)
		for i := range chans {
			chans[i] = goPop(delayClient(t, srv.Addr(), proto), "q", "BLOCK", 8000)
			zsetWaitBlocked(t, admin, i+1)
		}
		// Due in reverse order of adding, 30 ms apart: the first waiter
		// gets the earliest whatever the order of adding.
		p := admin.Pipeline()
		for i := waiters - 1; i >= 0; i-- {
			p.Do(ctx, "DELAY.ADD", "q", fmt.Sprintf("t%d", i), "IN", 100+30*i)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for i, ch := range chans {
			r := recvPop(t, ch)
			if r.err != nil || len(r.fired) != 1 || r.fired[0].member != fmt.Sprintf("t%d", i) {
				t.Errorf("waiter %d got %s %v, want t%d", i, firedString(r.fired), r.err, i)
			} else if r.at.UnixMilli() < r.fired[0].due {
				t.Errorf("waiter %d got %s at %d, before it was due", i, r.fired[0], r.at.UnixMilli())
			}
		}

		// Two timers due at once, two waiters: one each, in order.
		first := goPop(delayClient(t, srv.Addr(), proto), "q", "BLOCK", 8000)
		zsetWaitBlocked(t, admin, 1)
		second := goPop(delayClient(t, srv.Addr(), proto), "q", "BLOCK", 8000, "COUNT", 5)
		zsetWaitBlocked(t, admin, 2)
		if _, err := admin.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Do(ctx, "DELAY.ADD", "q", "y", "IN", 0)
			p.Do(ctx, "DELAY.ADD", "q", "x", "IN", 0)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		r1, r2 := recvPop(t, first), recvPop(t, second)
		if len(r1.fired) != 1 || len(r2.fired) != 1 || r1.fired[0].member != "x" || r2.fired[0].member != "y" {
			t.Errorf("two due at once: first waiter %s %v, second %s %v, want x then y",
				firedString(r1.fired), r1.err, firedString(r2.fired), r2.err)
		}

		// Many timers, five consumers looping: each timer exactly once.
		const timers = 40
		p = admin.Pipeline()
		for i := 0; i < timers; i++ {
			p.Do(ctx, "DELAY.ADD", "q", fmt.Sprintf("m%02d", i), "IN", 30+(i*7)%200, "PAYLOAD", strconv.Itoa(i))
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		got := map[string]int{}
		total := 0
		var wg sync.WaitGroup
		errs := make(chan error, timers+waiters)
		deadline := time.Now().Add(10 * time.Second)
		for w := 0; w < waiters; w++ {
			c := delayClient(t, srv.Addr(), proto)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					done := total == timers
					mu.Unlock()
					if done {
						return
					}
					if time.Now().After(deadline) {
						errs <- fmt.Errorf("gave up with %d of %d timers delivered", total, timers)
						return
					}
					f, err := delayPop(c, "q", "BLOCK", 200)
					if err == redis.Nil {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					now := time.Now().UnixMilli()
					mu.Lock()
					for _, x := range f {
						got[x.member]++
						total++
						if x.due > now {
							errs <- fmt.Errorf("%s delivered at %d, before it was due", x, now)
						}
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for i := 0; i < timers; i++ {
			if m := fmt.Sprintf("m%02d", i); got[m] != 1 {
				t.Errorf("%s delivered %d times", m, got[m])
			}
		}
		if n := dInt(t, admin, "EXISTS", "q"); n != 0 {
			t.Error("q outlived its timers")
		}
	})
}

// TestDelayMulti: inside MULTI a BLOCK pop never blocks: with nothing due
// it answers as a timed-out BLOCK (a null array); with something due it
// pops as usual.
func TestDelayMulti(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	c.do("MULTI")
	c.do("DELAY.POP", "q", "BLOCK", "0")
	c.do("DELAY.POP", "q", "BLOCK", "100", "COUNT", "2", "LEASE", "1000")
	c.do("DELAY.POP", "q")
	v := c.do("EXEC")
	if v.Kind != resp.KindArray || len(v.Elems) != 3 {
		t.Fatalf("EXEC: %s", v)
	}
	for i, e := range v.Elems[:2] {
		if e.Kind != resp.KindNull || e.Nil2 != '*' {
			t.Errorf("BLOCK pop %d in MULTI, nothing due: %s, want a null array", i, e)
		}
	}
	if e := v.Elems[2]; e.Kind != resp.KindArray || len(e.Elems) != 0 {
		t.Errorf("non-blocking pop in MULTI: %s, want an empty array", e)
	}

	c.do("DELAY.ADD", "q", "m", "AT", "1")
	c.do("MULTI")
	c.do("DELAY.POP", "q", "BLOCK", "0")
	c.do("DELAY.ADD", "q", "n", "AT", "2")
	c.do("DELAY.POP", "q", "BLOCK", "0", "LEASE", "100000")
	c.do("DELAY.LEN", "q")
	v = c.do("EXEC")
	want := "[[[m nil 1 1]] 1 [[n nil 2 1]] 1]"
	if got := rawString(v); got != want {
		t.Errorf("EXEC with due timers: %s, want %s", got, want)
	}
	if v := c.do("DELAY.ACK", "q", "n"); v.Int != 1 {
		t.Errorf("the pop in MULTI did not lease: ACK %s", v)
	}

	// WATCH sees a pop by another client as a change to the key.
	other := delayClient(t, srv.Addr(), 2)
	c.do("DELAY.ADD", "w", "x", "AT", "1")
	c.do("WATCH", "w")
	mustPop(t, other, "w")
	c.do("MULTI")
	c.do("DELAY.LEN", "w")
	if v := c.do("EXEC"); v.Kind != resp.KindNull {
		t.Errorf("EXEC after a watched key was popped: %s, want nil", v)
	}
}

// rawString renders replies compactly: arrays in brackets, nulls as nil.
