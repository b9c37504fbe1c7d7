package tests

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DELAY's behaviour is pinned in transcripts (testdata/golden/delay_*.txt):
// every reply and error, blocking and FIFO service, leases, MULTI, the key
// commands, keyspace events, INFO delay, restart and crash, all on the
// manual clock. What stays in Go is what a transcript cannot say: random
// binary members, consumers racing each other, the real clock, COMMAND
// DOCS as redis-cli reads it, and a kill -9 of the real binary.

// delayClient is goRedis with a read timeout long enough for the BLOCKs
// these tests use (go-redis's default of 3 s does not know about BLOCK).
func delayClient(t testing.TB, addr string, proto int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, DisableIdentity: proto == 2,
		ReadTimeout: 15 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// delayFired is one timer DELAY.POP delivered.
type delayFired struct {
	member  string
	payload *string // nil: the timer has no payload
	due     int64
	fires   int64
}

func (f delayFired) String() string {
	p := "nil"
	if f.payload != nil {
		p = strconv.Quote(*f.payload)
	}
	return fmt.Sprintf("[%s %s %d %d]", f.member, p, f.due, f.fires)
}

// key is what identifies a delivery (a redelivery repeats it exactly).
func (f delayFired) key() string { return f.String() }

func parseFired(v any) ([]delayFired, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("DELAY.POP reply %#v is not an array", v)
	}
	out := make([]delayFired, 0, len(arr))
	for _, e := range arr {
		el, ok := e.([]any)
		if !ok || len(el) != 4 {
			return nil, fmt.Errorf("DELAY.POP element %#v is not a 4-element array", e)
		}
		var f delayFired
		var ok1, ok3, ok4 bool
		f.member, ok1 = el[0].(string)
		f.due, ok3 = el[2].(int64)
		f.fires, ok4 = el[3].(int64)
		if p, isStr := el[1].(string); isStr {
			f.payload = &p
		} else if el[1] != nil {
			return nil, fmt.Errorf("DELAY.POP payload %#v is neither a string nor nil", el[1])
		}
		if !ok1 || !ok3 || !ok4 {
			return nil, fmt.Errorf("DELAY.POP element %#v: want [string, payload, int, int]", e)
		}
		out = append(out, f)
	}
	return out, nil
}

// delayPop runs DELAY.POP key opts...; the error is redis.Nil when a BLOCK
// timed out.
func delayPop(c *redis.Client, key string, opts ...any) ([]delayFired, error) {
	v, err := c.Do(ctx, append([]any{"DELAY.POP", key}, opts...)...).Result()
	if err != nil {
		return nil, err
	}
	return parseFired(v)
}

// mustPop is delayPop for calls that must succeed (a nil reply fails).
func mustPop(t testing.TB, c *redis.Client, key string, opts ...any) []delayFired {
	t.Helper()
	f, err := delayPop(c, key, opts...)
	if err != nil {
		t.Fatalf("DELAY.POP %s %v: %v", key, opts, err)
	}
	return f
}

func firedString(fs []delayFired) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, " ")
}

// dInt runs a command that must answer an integer.
func dInt(t testing.TB, c *redis.Client, args ...any) int64 {
	t.Helper()
	n, err := c.Do(ctx, args...).Int64()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return n
}

// dueList renders DELAY.RANGE / DELAY.NEXT pairs as "member:due ...".
func dueList(t testing.TB, v any) string {
	t.Helper()
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("reply %#v is not an array", v)
	}
	var parts []string
	for _, e := range arr {
		p, ok := e.([]any)
		if !ok || len(p) != 2 {
			t.Fatalf("element %#v is not a [member, due] pair", e)
		}
		parts = append(parts, fmt.Sprintf("%v:%v", p[0], p[1]))
	}
	return strings.Join(parts, " ")
}

func dRange(t testing.TB, c *redis.Client, key string, args ...any) string {
	t.Helper()
	v, err := c.Do(ctx, append([]any{"DELAY.RANGE", key}, args...)...).Result()
	if err != nil {
		t.Fatalf("DELAY.RANGE %s %v: %v", key, args, err)
	}
	return dueList(t, v)
}

func forProtocols(t *testing.T, f func(t *testing.T, proto int)) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) { f(t, proto) })
	}
}

// TestDelayManyMembers: members of every length, binary ones and the empty
// one included, come out whole, in (due, member byte) order, each with its
// own payload, whether popped and gone or leased and acknowledged.
func TestDelayManyMembers(t *testing.T) {
	srv := startServer(t)
	forProtocols(t, func(t *testing.T, proto int) {
		c := delayClient(t, srv.Addr(), proto)
		c.FlushAll(ctx)
		type timer struct {
			member string
			due    int64
		}
		all := []timer{{"", 1000}}
		rng := rand.New(rand.NewSource(int64(proto)))
		for i := 0; i < 300; i++ {
			b := make([]byte, rng.Intn(70))
			for j := range b {
				b[j] = byte(rng.Intn(256))
			}
			m := string(b)
			if slices.ContainsFunc(all, func(x timer) bool { return x.member == m }) {
				continue
			}
			all = append(all, timer{m, int64(1000 + rng.Intn(50))})
		}
		for _, lease := range []bool{false, true} {
			p := c.Pipeline()
			for _, x := range all {
				p.Do(ctx, "DELAY.ADD", "q", x.member, "AT", x.due, "PAYLOAD", "p:"+x.member)
			}
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			var got []delayFired
			for len(got) < len(all) {
				opts := []any{"COUNT", 37}
				if lease {
					opts = append(opts, "LEASE", 100000)
				}
				f := mustPop(t, c, "q", opts...)
				if len(f) == 0 {
					t.Fatalf("popped %d of %d, then nothing", len(got), len(all))
				}
				got = append(got, f...)
			}
			want := slices.Clone(all)
			slices.SortFunc(want, func(a, b timer) int {
				if a.due != b.due {
					return int(a.due - b.due)
				}
				return strings.Compare(a.member, b.member)
			})
			for i, f := range got {
				if i >= len(want) || f.member != want[i].member || f.due != want[i].due || f.payload == nil ||
					*f.payload != "p:"+f.member || f.fires != 1 {
					t.Fatalf("lease %v: delivery %d is %s, want %q due %d", lease, i, f, want[min(i, len(want)-1)].member,
						want[min(i, len(want)-1)].due)
				}
			}
			if lease {
				args := []any{"DELAY.ACK", "q"}
				for _, x := range all {
					args = append(args, x.member)
				}
				if n := dInt(t, c, args...); n != int64(len(all)) {
					t.Errorf("ACK of every leased timer: %d, want %d", n, len(all))
				}
			}
			if n := dInt(t, c, "EXISTS", "q"); n != 0 {
				t.Errorf("lease %v: q outlived its timers", lease)
			}
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

// TestDelayConsumersRace: five consumers loop on one key with short
// BLOCKs on the real clock while timers come due: each timer goes to
// exactly one of them, never before its due time.
func TestDelayConsumersRace(t *testing.T) {
	srv := startServer(t)
	forProtocols(t, func(t *testing.T, proto int) {
		admin := delayClient(t, srv.Addr(), proto)
		admin.FlushAll(ctx)
		const waiters = 5
		const timers = 40
		p := admin.Pipeline()
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

// TestDelayRealClock: on the wall clock, the scheduler wakes a blocked
// DELAY.POP at the due time (never before it), and a BLOCK with nothing due
// times out no earlier than it should. The transcripts check the same on
// the manual clock; this checks the clock that production runs on.
func TestDelayRealClock(t *testing.T) {
	srv := startServer(t)
	admin, c := delayClient(t, srv.Addr(), 2), delayClient(t, srv.Addr(), 2)
	start := time.Now()
	if _, err := delayPop(c, "nokey", "BLOCK", 100); err != redis.Nil {
		t.Errorf("timed-out BLOCK: %v, want nil", err)
	}
	if e := time.Since(start); e < 100*time.Millisecond {
		t.Errorf("BLOCK 100 timed out after %v", e)
	}
	ch := goPop(c, "k", "BLOCK", 5000)
	zsetWaitBlocked(t, admin, 1)
	dInt(t, admin, "DELAY.ADD", "k", "soon", "IN", 150)
	r := recvPop(t, ch)
	if r.err != nil || len(r.fired) != 1 || r.fired[0].member != "soon" {
		t.Fatalf("woken by ADD IN 150: %s %v", firedString(r.fired), r.err)
	}
	if r.at.UnixMilli() < r.fired[0].due {
		t.Errorf("timer due %d delivered at %d, before its due time", r.fired[0].due, r.at.UnixMilli())
	}
}

// TestDelayCommandDocs: COMMAND DOCS describes every DELAY command for
// redis-cli (summary, group "delay", the argument hint), and COMMAND
// GETKEYS finds the key.
func TestDelayCommandDocs(t *testing.T) {
	checkFamilyDocs(t, "delay", map[string]string{
		"delay.add":    "key member IN milliseconds|AT unix-time-milliseconds [EVERY period] [PAYLOAD data] [NX|XX]",
		"delay.touch":  "key member milliseconds",
		"delay.cancel": "key member [member ...]",
		"delay.ttl":    "key member",
		"delay.pop":    "key [COUNT count] [BLOCK milliseconds] [LEASE milliseconds]",
		"delay.ack":    "key member [member ...]",
		"delay.len":    "key",
		"delay.next":   "key",
		"delay.range":  "key from to [LIMIT offset count]",
	}, "DELAY.ADD", "thekey", "m", "IN", "5", "PAYLOAD", "x")
}

// TestDelayKill9: what was acknowledged before a kill -9 is what the
// restarted server holds (ADD, a taken lease, an ACK, a CANCEL).
func TestDelayKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProcess(t, dir, "--appendfsync", "always")
	c := delayClient(t, p.addr, 2)
	for i := 0; i < 20; i++ {
		dInt(t, c, "DELAY.ADD", "q", fmt.Sprintf("m%02d", i), "AT", 1000+i, "EVERY", 3600000, "PAYLOAD", strconv.Itoa(i))
	}
	leased := mustPop(t, c, "q", "COUNT", 5, "LEASE", 3600000)
	dInt(t, c, "DELAY.ACK", "q", "m00", "m01")
	dInt(t, c, "DELAY.CANCEL", "q", "m19")
	want := dRange(t, c, "q", "-inf", "+inf")
	p.kill9(t)

	p2 := startProcess(t, dir, "--appendfsync", "always")
	c2 := delayClient(t, p2.addr, 2)
	if got := dRange(t, c2, "q", "-inf", "+inf"); got != want {
		t.Errorf("after kill -9:\n got %s\nwant %s", got, want)
	}
	if n := dInt(t, c2, "DELAY.ACK", "q", "m00", "m01", "m02", "m03", "m04"); n != 3 {
		t.Errorf("leases after kill -9: ACK %d, want 3 (m02..m04 of %s)", n, firedString(leased))
	}
	if n := dInt(t, c2, "DELAY.LEN", "q"); n != 19 {
		t.Errorf("LEN after kill -9: %d", n)
	}
}
