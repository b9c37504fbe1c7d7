package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// delayFixture is an engine on a manual clock with a recording sink, so
// tests can replay what a DELAY key persisted.
type delayFixture struct {
	t     *testing.T
	e     *Engine
	clock *ManualClock
	db    *DB
	rec   *listRecorder
	t0    int64
}

func newDelayFixture(t *testing.T) *delayFixture {
	e, clock, _ := newTestEngine(t)
	rec := &listRecorder{}
	e.SetSink(rec)
	e.Lock()
	t.Cleanup(e.Unlock)
	return &delayFixture{t: t, e: e, clock: clock, db: e.DB(0), rec: rec, t0: e.Now()}
}

// advance moves the clock and fires what came due, as the timer loop would.
func (f *delayFixture) advance(d time.Duration) {
	f.clock.Advance(d)
	f.e.Unlock()
	f.e.RunTimers()
	f.e.Lock()
}

func (f *delayFixture) add(key, member string, a DelayAddArgs) bool {
	f.t.Helper()
	added, _, err := f.db.DelayAdd(b(key), b(member), a)
	if err != nil {
		f.t.Fatal(err)
	}
	return added
}

func (f *delayFixture) addIn(key, member string, ms int64) {
	f.add(key, member, DelayAddArgs{Due: f.e.Now() + ms})
}

// pop renders what DelayPop delivered as "member@due-offset×fires[:payload]".
func (f *delayFixture) pop(key string, count int, lease int64) string {
	f.t.Helper()
	fired, _, err := f.db.DelayPop(b(key), count, lease)
	if err != nil {
		f.t.Fatal(err)
	}
	var parts []string
	for _, t := range fired {
		s := fmt.Sprintf("%s@%d×%d", t.Member, t.Due-f.t0, t.Fires)
		if t.Payload != nil {
			s += ":" + string(t.Payload)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func (f *delayFixture) ttl(key, member string) int64 {
	f.t.Helper()
	ms, err := f.db.DelayTTL(b(key), b(member))
	if err != nil {
		f.t.Fatal(err)
	}
	return ms
}

func expect(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

func TestDelayOrderAndTies(t *testing.T) {
	f := newDelayFixture(t)
	f.addIn("q", "c", 20)
	f.addIn("q", "b", 10)
	f.addIn("q", "a", 20)
	f.addIn("q", "z", 5)
	f.add("q", "past", DelayAddArgs{Due: f.t0 - 1000})
	expect(t, "only what is due", f.pop("q", 10, 0), "past@-1000×1")
	f.advance(10 * time.Millisecond)
	expect(t, "due by 10 ms", f.pop("q", 10, 0), "z@5×1 b@10×1")
	f.advance(10 * time.Millisecond)
	// Equal due times come out in member order.
	expect(t, "ties", f.pop("q", 1, 0), "a@20×1")
	expect(t, "ties", f.pop("q", 1, 0), "c@20×1")
	if f.db.Exists(b("q")) {
		t.Fatal("a DELAY key with no timers left should be gone")
	}
	if n := f.e.PendingTimers(); n != 0 {
		t.Fatalf("%d scheduler entries left behind", n)
	}
}

func TestDelayTouchAndTTL(t *testing.T) {
	f := newDelayFixture(t)
	f.addIn("s", "x", 1000)
	f.addIn("s", "y", 500)
	if ms := f.ttl("s", "x"); ms != 1000 {
		t.Fatalf("TTL %d", ms)
	}
	if ms := f.ttl("s", "nope"); ms != -2 {
		t.Fatalf("TTL of a missing timer %d", ms)
	}
	if ms := f.ttl("nokey", "x"); ms != -2 {
		t.Fatalf("TTL on a missing key %d", ms)
	}
	// Later: y moves past x.
	if ok, _ := f.db.DelayTouch(b("s"), b("y"), 2000); !ok {
		t.Fatal("TOUCH of an existing timer")
	}
	// Earlier: x comes due sooner.
	f.db.DelayTouch(b("s"), b("x"), 100)
	if ok, _ := f.db.DelayTouch(b("s"), b("nope"), 100); ok {
		t.Fatal("TOUCH of a missing timer")
	}
	next, _, _ := f.db.DelayNext(b("s"))
	if next.Member != "x" || next.Due != f.t0+100 {
		t.Fatalf("NEXT %+v", next)
	}
	f.advance(100 * time.Millisecond)
	expect(t, "x after TOUCH earlier", f.pop("s", 5, 0), "x@100×1")
	f.advance(1899 * time.Millisecond)
	expect(t, "y not yet", f.pop("s", 5, 0), "")
	if ms := f.ttl("s", "y"); ms != 1 {
		t.Fatalf("TTL %d", ms)
	}
	f.advance(time.Millisecond)
	expect(t, "y after TOUCH later", f.pop("s", 5, 0), "y@2000×1")
}

func TestDelayAddConditionsAndReplace(t *testing.T) {
	f := newDelayFixture(t)
	if added, written, _ := f.db.DelayAdd(b("k"), b("m"), DelayAddArgs{Due: f.t0 + 10, XX: true}); added || written {
		t.Fatal("XX on a missing timer must not add")
	}
	if f.db.Exists(b("k")) {
		t.Fatal("XX created the key")
	}
	if !f.add("k", "m", DelayAddArgs{Due: f.t0 + 10, NX: true, Payload: b("p1"), HasPayload: true}) {
		t.Fatal("NX on a missing timer adds")
	}
	if added, written, _ := f.db.DelayAdd(b("k"), b("m"), DelayAddArgs{Due: f.t0 + 50, NX: true}); added || written {
		t.Fatal("NX on an existing timer must not touch it")
	}
	if f.add("k", "m", DelayAddArgs{Due: f.t0 + 30, XX: true, Period: 100}) {
		t.Fatal("an update is not new")
	}
	// The update replaced due, period and payload.
	f.advance(30 * time.Millisecond)
	expect(t, "replaced timer", f.pop("k", 1, 0), "m@30×1")
	if ms := f.ttl("k", "m"); ms != 100 {
		t.Fatalf("recurring timer re-armed %d ms out", ms)
	}
	// An empty payload is a payload.
	f.add("k", "e", DelayAddArgs{Due: f.t0, HasPayload: true})
	expect(t, "empty payload", f.pop("k", 1, 0), "e@0×1:")
}

func TestDelayWrongType(t *testing.T) {
	f := newDelayFixture(t)
	f.db.SetString(b("s"), b("v"), SetOptions{})
	if _, _, err := f.db.DelayAdd(b("s"), b("m"), DelayAddArgs{Due: 1}); err != ErrWrongType {
		t.Fatalf("ADD on a string: %v", err)
	}
	if _, _, err := f.db.DelayPop(b("s"), 1, 0); err != ErrWrongType {
		t.Fatalf("POP on a string: %v", err)
	}
	if _, err := f.db.DelayLen(b("s")); err != ErrWrongType {
		t.Fatalf("LEN on a string: %v", err)
	}
}

func TestDelayRecurringCatchUp(t *testing.T) {
	f := newDelayFixture(t)
	f.add("bill", "viewer", DelayAddArgs{Due: f.t0 + 60_000, Period: 60_000, Payload: b("room 7"), HasPayload: true})
	f.advance(60 * time.Second)
	expect(t, "on time", f.pop("bill", 1, 0), "viewer@60000×1:room 7")
	// The consumer falls 3.5 periods behind: one delivery covers the three
	// periods that came due, and the schedule keeps its phase.
	f.advance(60*time.Second*3 + 30*time.Second)
	expect(t, "catch-up", f.pop("bill", 1, 0), "viewer@120000×3:room 7")
	if ms := f.ttl("bill", "viewer"); ms != 30_000 {
		t.Fatalf("next due in %d ms, want 30000 (fixed rate)", ms)
	}
	expect(t, "nothing due", f.pop("bill", 1, 0), "")
}

func TestDelayLeaseRedelivery(t *testing.T) {
	f := newDelayFixture(t)
	f.addIn("q", "job", 0)
	expect(t, "leased delivery", f.pop("q", 1, 1000), "job@0×1")
	expect(t, "held while leased", f.pop("q", 1, 1000), "")
	if n, _ := f.db.DelayLen(b("q")); n != 1 {
		t.Fatalf("LEN %d while leased", n)
	}
	f.advance(999 * time.Millisecond)
	expect(t, "lease not over", f.pop("q", 1, 0), "")
	f.advance(time.Millisecond)
	expect(t, "redelivered", f.pop("q", 1, 1000), "job@0×1")
	if n, _, _ := f.db.DelayAck(b("q"), [][]byte{b("job"), b("other")}); n != 1 {
		t.Fatalf("ACK %d", n)
	}
	if f.db.Exists(b("q")) {
		t.Fatal("an acknowledged one-shot timer should be gone")
	}
	// Without LEASE a pop is at-most-once: nothing to acknowledge.
	f.addIn("q", "once", 0)
	expect(t, "unleased", f.pop("q", 1, 0), "once@1000×1")
	if n, _, _ := f.db.DelayAck(b("q"), [][]byte{b("once")}); n != 0 {
		t.Fatalf("ACK of an unleased delivery %d", n)
	}
}

func TestDelayRecurringLeaseCountsEachPeriodOnce(t *testing.T) {
	f := newDelayFixture(t)
	f.add("q", "r", DelayAddArgs{Due: f.t0, Period: 100})
	f.advance(250 * time.Millisecond)
	expect(t, "first", f.pop("q", 1, 1000), "r@0×3")
	// The lease runs out after 10 more periods came due: the redelivery
	// repeats the same delivery instead of folding them in.
	f.advance(1000 * time.Millisecond)
	expect(t, "redelivery", f.pop("q", 1, 1000), "r@0×3")
	if n, _, _ := f.db.DelayAck(b("q"), [][]byte{b("r")}); n != 1 {
		t.Fatal("ACK")
	}
	// After the ACK the periods from 300 on are due, each counted once:
	// 3 + 10 = the 13 periods 0, 100, ..., 1200.
	expect(t, "the rest", f.pop("q", 1, 0), "r@300×10")
	if ms := f.ttl("q", "r"); ms != 50 {
		t.Fatalf("next due in %d ms, want 50", ms)
	}
}

func TestDelayOnePopDeliversATimerOnce(t *testing.T) {
	f := newDelayFixture(t)
	f.add("q", "rec", DelayAddArgs{Due: f.t0, Period: 40})
	f.advance(100 * time.Millisecond)
	expect(t, "leased", f.pop("q", 1, 250), "rec@0×3")
	f.advance(300 * time.Millisecond)
	// The redelivery re-arms the timer at 120, already past; the periods
	// from there are the next pop's, not a second entry in this reply.
	expect(t, "redelivery alone", f.pop("q", 5, 0), "rec@0×3")
	expect(t, "then the rest", f.pop("q", 5, 0), "rec@120×8")
}

func TestDelayCancelLeased(t *testing.T) {
	f := newDelayFixture(t)
	f.addIn("q", "a", 0)
	f.addIn("q", "b", 0)
	expect(t, "lease both", f.pop("q", 2, 500), "a@0×1 b@0×1")
	n, deleted, _ := f.db.DelayCancel(b("q"), [][]byte{b("a"), b("zz")})
	if n != 1 || deleted {
		t.Fatalf("CANCEL %d %v", n, deleted)
	}
	if n, _, _ := f.db.DelayAck(b("q"), [][]byte{b("a")}); n != 0 {
		t.Fatal("ACK after CANCEL must find nothing")
	}
	f.advance(500 * time.Millisecond)
	expect(t, "only b comes back", f.pop("q", 5, 0), "b@0×1")
	if f.db.Exists(b("q")) {
		t.Fatal("key should be gone")
	}
}

func TestDelayRange(t *testing.T) {
	f := newDelayFixture(t)
	for i, m := range []string{"a", "b", "c", "d", "e"} {
		f.addIn("r", m, int64(i*10))
	}
	render := func(from, to, off, count int64) string {
		got, err := f.db.DelayRange(b("r"), f.t0+from, f.t0+to, off, count)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, g := range got {
			parts = append(parts, fmt.Sprintf("%s@%d", g.Member, g.Due-f.t0))
		}
		return strings.Join(parts, " ")
	}
	expect(t, "window", render(10, 30, 0, -1), "b@10 c@20 d@30")
	expect(t, "limit", render(0, 40, 1, 2), "b@10 c@20")
	expect(t, "empty window", render(31, 39, 0, -1), "")
	expect(t, "reversed window", render(30, 10, 0, -1), "")
}

func TestDelayBlockedPopWokenByScheduler(t *testing.T) {
	f := newDelayFixture(t)
	f.addIn("q", "t1", 100)
	f.addIn("q", "t2", 200)
	var got []string
	block := func(name string) *Waiter {
		return f.e.Block(0, [][]byte{b("q")}, 0, func(key []byte) bool {
			s := f.pop(string(key), 1, 0)
			if s == "" {
				return false
			}
			got = append(got, name+":"+s)
			return true
		}, nil)
	}
	w1, w2 := block("first"), block("second")
	f.advance(99 * time.Millisecond)
	if len(got) != 0 {
		t.Fatalf("served early: %v", got)
	}
	f.advance(time.Millisecond)
	expect(t, "FIFO, one timer each", strings.Join(got, ","), "first:t1@100×1")
	if !w1.Served() || w2.Served() {
		t.Fatal("only the first waiter should be served")
	}
	f.advance(100 * time.Millisecond)
	expect(t, "second", strings.Join(got, ","), "first:t1@100×1,second:t2@200×1")
	if f.e.PendingTimers() != 0 {
		t.Fatal("scheduler entries left")
	}
}

func TestDelaySchedulerEntryFollowsTheKey(t *testing.T) {
	f := newDelayFixture(t)
	f.addIn("old", "t", 100)
	if f.e.PendingTimers() != 1 {
		t.Fatalf("one entry per key, got %d", f.e.PendingTimers())
	}
	f.addIn("old", "u", 50)
	f.addIn("old", "v", 500)
	if f.e.PendingTimers() != 1 {
		t.Fatalf("still one entry per key, got %d", f.e.PendingTimers())
	}
	f.db.Rename(b("old"), b("new"))
	served := false
	f.e.Block(0, [][]byte{b("new")}, 0, func(key []byte) bool {
		served = f.pop(string(key), 1, 0) != ""
		return served
	}, nil)
	f.advance(50 * time.Millisecond)
	if !served {
		t.Fatal("a renamed key's timers must still wake its waiters")
	}
	f.db.Delete(b("new"))
	if f.e.PendingTimers() != 0 {
		t.Fatalf("DEL left %d scheduler entries", f.e.PendingTimers())
	}
	// A key that expires takes its entry with it.
	f.addIn("exp", "t", 1000)
	f.db.SetExpire(b("exp"), f.e.Now()+10)
	f.advance(10 * time.Millisecond)
	if f.db.Exists(b("exp")) || f.e.PendingTimers() != 0 {
		t.Fatalf("expired DELAY key: exists %v, entries %d", f.db.Exists(b("exp")), f.e.PendingTimers())
	}
	// FLUSHDB and FLUSHALL detach every DELAY key: no entry is left behind.
	f.addIn("a", "t", 1000)
	f.addIn("b", "t", 2000)
	f.db.Flush()
	other := f.e.DB(1)
	if _, _, err := other.DelayAdd(b("c"), b("t"), DelayAddArgs{Due: f.e.Now() + 1000}); err != nil {
		t.Fatal(err)
	}
	if n := f.e.PendingTimers(); n != 1 {
		t.Fatalf("after FLUSHDB: %d entries, want database 1's one", n)
	}
	f.e.FlushAll()
	if n, keys := f.e.PendingTimers(), f.e.DelayStats().Keys; n != 0 || keys != 0 {
		t.Fatalf("after FLUSHALL: %d entries, %d DELAY keys", n, keys)
	}
}

// TestDelayStats: the figures of INFO delay follow attaches and detaches,
// deliveries, redeliveries and ACKs, and the lateness of each delivery.
func TestDelayStats(t *testing.T) {
	f := newDelayFixture(t)
	f.addIn("q", "a", 100)
	f.addIn("q", "b", 100)
	f.addIn("r", "c", 1000)
	f.advance(150 * time.Millisecond)
	if got := f.pop("q", 1, 500); got == "" {
		t.Fatal("nothing due")
	}
	f.advance(700 * time.Millisecond) // a's lease ended 200 ms ago
	f.pop("q", 5, 0)
	f.db.Rename(b("r"), b("r2"))
	s := f.e.DelayStats()
	want := DelayStats{Keys: 1, Timers: 1, Fired: 3, Redelivered: 1,
		Lateness: Lateness{Samples: 3, P50: 200 * time.Millisecond, P99: 750 * time.Millisecond, Max: 750 * time.Millisecond}}
	if s != want {
		t.Fatalf("stats\n got %+v\nwant %+v", s, want)
	}
	f.e.ResetStats()
	if s := f.e.DelayStats(); s.Fired != 0 || s.Lateness.Samples != 0 || s.Keys != 1 {
		t.Fatalf("after a reset: %+v", s)
	}
}

func TestDelayRestartReplay(t *testing.T) {
	f := newDelayFixture(t)
	f.addIn("q", "soon", 1000)
	f.add("q", "later", DelayAddArgs{Due: f.t0 + 60_000, Payload: b("p"), HasPayload: true})
	f.add("q", "every", DelayAddArgs{Due: f.t0 + 500, Period: 1000})
	f.addIn("q", "leased", 0)
	f.addIn("q", "gone", 0)
	expect(t, "lease one", f.pop("q", 1, 5000), "gone@0×1")
	f.db.DelayCancel(b("q"), [][]byte{b("gone")})
	expect(t, "lease another", f.pop("q", 1, 5000), "leased@0×1")
	store := listStore{}
	store.apply(f.rec.take())

	// The server is down for 3 s: "soon" and two periods of "every" came
	// due meanwhile; the lease still ends 5 s after it began.
	clock := NewManualClock(time.UnixMilli(f.t0 + 3000))
	e := store.loadInto(t, New(Options{Clock: clock}))
	e.Lock()
	e.FinishLoad()
	g := &delayFixture{t: t, e: e, clock: clock, db: e.DB(0), rec: &listRecorder{}, t0: f.t0}
	t.Cleanup(e.Unlock)
	if n, _ := g.db.DelayLen(b("q")); n != 4 {
		t.Fatalf("LEN after restart %d", n)
	}
	expect(t, "due at once", g.pop("q", 10, 0), "every@500×3 soon@1000×1")
	g.advance(1999 * time.Millisecond)
	expect(t, "lease still running", g.pop("q", 10, 0), "every@3500×2")
	g.advance(time.Millisecond)
	expect(t, "lease kept its deadline", g.pop("q", 10, 0), "leased@0×1")
	if ms := g.ttl("q", "later"); ms != 60_000-5000 {
		t.Fatalf("later due in %d", ms)
	}
}

func TestDelayRecordCodec(t *testing.T) {
	d := newDelay()
	n := d.insert("m", delayTimer{due: 1_700_000_000_123, period: 60_000, payload: newPayload(b("hello"))})
	d.setLease("m", delayLease{due: 1_699_999_999_000, fires: 7})
	rec := d.encodeTimer(nil, "m", &n.val)
	tm, l, leased, err := decodeTimer(rec)
	if err != nil || !leased || tm.due != n.val.due || tm.period != n.val.period || *tm.payload != "hello" ||
		l != (delayLease{1_699_999_999_000, 7}) {
		t.Fatalf("round trip: %+v %+v %v %v", tm, l, leased, err)
	}
	for _, bad := range [][]byte{nil, {0}, {0, 2}, {recordLeased, 2, 2}, append([]byte{0, 2, 2}, 'x')} {
		if _, _, _, err := decodeTimer(bad); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
}

func TestDelayCloneIsIndependent(t *testing.T) {
	f := newDelayFixture(t)
	f.addIn("a", "x", 0)
	f.addIn("a", "y", 10)
	f.db.CopyTo(b("a"), f.db, b("b"), false)
	expect(t, "pop from copy", f.pop("b", 5, 0), "x@0×1")
	if n, _ := f.db.DelayLen(b("a")); n != 2 {
		t.Fatalf("original changed: LEN %d", n)
	}
	// b waits for y; a needs no entry, x being due already.
	if f.e.PendingTimers() != 1 {
		t.Fatalf("scheduler entries: %d", f.e.PendingTimers())
	}
	if obj := f.db.Peek(b("a")); obj.Type() != TypeDelay || obj.MemoryUsage() < 2*delayTimerOverhead {
		t.Fatalf("type %v memory %d", obj.Type(), obj.MemoryUsage())
	}
}
