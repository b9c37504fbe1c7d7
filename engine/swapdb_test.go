package engine

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// swapFixture is an engine on the manual clock with recorded change
// records and keyspace events, for SWAPDB's white-box tests.
type swapFixture struct {
	t     *testing.T
	e     *Engine
	clock *ManualClock
	rec   *listRecorder
	ev    *eventLog
	// store and dbMap are what the records taken so far left (restart).
	store listStore
	dbMap []byte
}

func newSwapFixture(t *testing.T) *swapFixture {
	e, clock, ev := newTestEngine(t)
	rec := &listRecorder{}
	e.SetSink(rec)
	e.Lock()
	t.Cleanup(func() { e.Unlock() })
	return &swapFixture{t: t, e: e, clock: clock, rec: rec, ev: ev, store: listStore{}}
}

func (f *swapFixture) advance(d time.Duration) {
	f.clock.Advance(d)
	f.e.Unlock()
	f.e.RunTimers()
	f.e.Lock()
}

func (f *swapFixture) set(db int, key, val string) {
	f.t.Helper()
	if _, err := f.e.DB(db).SetString(b(key), b(val), SetOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *swapFixture) get(db int, key string) string {
	f.t.Helper()
	v, ok := mustGet(f.t, f.e.DB(db), key)
	if !ok {
		return "(nil)"
	}
	return v
}

// restart replays the records written so far into a new engine, the map
// record included, its clock later by d.
func (f *swapFixture) restart(d time.Duration) *swapFixture {
	f.t.Helper()
	recs := f.rec.take()
	store, dbMap := f.store, f.dbMap
	store.apply(recs)
	for _, r := range recs {
		if r.key == dbMapRecord && r.op == "putserver" {
			dbMap = []byte(r.item)
		} else if r.key == dbMapRecord && r.op == "delserver" {
			dbMap = nil
		}
	}
	clock := NewManualClock(time.UnixMilli(f.e.Now()).Add(d))
	e := New(Options{Clock: clock})
	ev := &eventLog{}
	e.SetNotifier(ev)
	e.SetNotifyClasses(NotifyAll | NotifyKeyevent)
	e = store.loadInto(f.t, e)
	e.Lock()
	if dbMap != nil {
		if err := e.Loader().LoadServer(b(dbMapRecord), dbMap); err != nil {
			f.t.Fatal(err)
		}
	}
	e.FinishLoad()
	f.t.Cleanup(func() { e.Unlock() })
	rec := &listRecorder{}
	e.SetSink(rec)
	return &swapFixture{t: f.t, e: e, clock: clock, rec: rec, ev: ev, store: store, dbMap: dbMap}
}

// TestSwapDBDelayTimerFollowsItsKey: a DELAY key swapped from database 0
// to 1 fires there: it serves a client blocked on it in database 1, not one
// blocked on the same name in database 0.
func TestSwapDBDelayTimerFollowsItsKey(t *testing.T) {
	f := newSwapFixture(t)
	if _, _, err := f.e.DB(0).DelayAdd(b("q"), b("t"), DelayAddArgs{Due: f.e.Now() + 100}); err != nil {
		t.Fatal(err)
	}
	var served []string
	block := func(db int) *Waiter {
		return f.e.Block(db, [][]byte{b("q")}, 0, func(key []byte) bool {
			fired, _, err := f.e.DB(db).DelayPop(key, 1, 0)
			if err != nil || len(fired) == 0 {
				return false
			}
			served = append(served, string(fired[0].Member)+"@db"+string(rune('0'+db)))
			return true
		}, nil)
	}
	in0, in1 := block(0), block(1)
	f.e.SwapDB(0, 1)
	f.e.ServeBlocked()
	if len(served) != 0 {
		t.Fatalf("served before the timer was due: %v", served)
	}
	f.advance(99 * time.Millisecond)
	if len(served) != 0 {
		t.Fatalf("served early: %v", served)
	}
	f.advance(time.Millisecond)
	if strings.Join(served, ",") != "t@db1" || !in1.Served() || in0.Served() {
		t.Fatalf("served %v; want the waiter in database 1", served)
	}
	f.e.Unblock(in0)
	if n := f.e.PendingTimers(); n != 0 {
		t.Fatalf("%d scheduler entries left", n)
	}
}

// TestSwapDBExpiryFollowsItsKey: a key with a TTL expires in the database
// it was swapped to, announced there, and its deadline is not lost when
// the key is rewritten after the swap.
func TestSwapDBExpiryFollowsItsKey(t *testing.T) {
	f := newSwapFixture(t)
	f.set(0, "k", "v")
	f.e.DB(0).SetExpire(b("k"), f.e.Now()+50)
	f.set(3, "other", "v")
	f.e.DB(3).SetExpire(b("other"), f.e.Now()+80)
	f.ev.take()
	f.e.SwapDB(0, 3)
	if f.e.DB(0).Volatile() != 1 || f.e.DB(3).Volatile() != 1 {
		t.Fatalf("volatile counts: db0 %d, db3 %d", f.e.DB(0).Volatile(), f.e.DB(3).Volatile())
	}
	f.advance(50 * time.Millisecond)
	if got := f.ev.take(); got != "expired@3 k" {
		t.Fatalf("events %q, want k expired in database 3", got)
	}
	if f.e.DB(3).Exists(b("k")) || !f.e.DB(0).Exists(b("other")) {
		t.Fatal("wrong keys left")
	}
	// A deadline changed after the swap replaces the old entry.
	f.e.DB(0).SetExpire(b("other"), f.e.Now()+100)
	f.advance(30 * time.Millisecond)
	if got := f.ev.take(); got != "" || !f.e.DB(0).Exists(b("other")) {
		t.Fatalf("the old deadline fired: %q", got)
	}
	f.advance(70 * time.Millisecond)
	if got := f.ev.take(); got != "expired other" {
		t.Fatalf("events %q", got)
	}
	if n := f.e.PendingTimers(); n != 0 {
		t.Fatalf("%d scheduler entries left", n)
	}
}

// TestSwapDBRecords: after a swap, writes are recorded under the physical
// number of the contents they change; the swap itself is one map record,
// removed when the swaps undo each other.
func TestSwapDBRecords(t *testing.T) {
	f := newSwapFixture(t)
	f.set(0, "a", "1")
	f.rec.take()
	f.e.SwapDB(0, 2)
	recs := f.rec.take()
	want := []byte{2, 1, 0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	if len(recs) != 1 || recs[0].op != "putserver" || recs[0].key != dbMapRecord || recs[0].item != string(want) {
		t.Fatalf("swap records %+v", recs)
	}
	f.set(0, "b", "2")
	f.e.DB(2).Delete(b("a"))
	f.e.DB(2).Flush()
	var got []string
	for _, r := range f.rec.take() {
		got = append(got, r.op+"@"+string(rune('0'+r.db))+" "+r.key)
	}
	if want := "value@2 b,delkey@0 a,flushdb@0 "; strings.Join(got, ",") != want {
		t.Fatalf("records %q, want %q", strings.Join(got, ","), want)
	}
	f.e.SwapDB(2, 0)
	if recs := f.rec.take(); len(recs) != 1 || recs[0].op != "delserver" {
		t.Fatalf("swap back: records %+v", recs)
	}
	if m := f.e.DBMap(); !slices.Equal(m[:3], []int{0, 1, 2}) {
		t.Fatalf("map %v", m)
	}
	// Same index: a no-op that writes nothing.
	f.e.SwapDB(1, 1)
	if recs := f.rec.take(); len(recs) != 0 {
		t.Fatalf("SWAPDB 1 1 wrote %+v", recs)
	}
}

// TestSwapDBHeldRecordBeforeSwap: a string changed in place has its record
// held back for coalescing; the swap writes it under the database it
// belonged to before the numbers change.
func TestSwapDBHeldRecordBeforeSwap(t *testing.T) {
	f := newSwapFixture(t)
	f.set(0, "n", "1")
	f.rec.take()
	if _, err := f.e.DB(0).IncrBy(b("n"), 5); err != nil {
		t.Fatal(err)
	}
	f.e.SwapDB(0, 1)
	f.e.FlushChanges()
	g := f.restart(0)
	if v := g.get(1, "n"); v != "6" {
		t.Fatalf("after restart, db 1 n = %s", v)
	}
	if v := g.get(0, "n"); v != "(nil)" {
		t.Fatalf("after restart, db 0 n = %s", v)
	}
}

// TestSwapDBRestart: records written before and after swaps, replayed with
// the map, put every key, deadline and DELAY timer in its database.
func TestSwapDBRestart(t *testing.T) {
	f := newSwapFixture(t)
	f.set(0, "a", "zero")
	f.set(1, "a", "one")
	f.set(2, "a", "two")
	if _, _, err := f.e.DB(0).DelayAdd(b("timers"), b("t"), DelayAddArgs{Due: f.e.Now() + 1000}); err != nil {
		t.Fatal(err)
	}
	f.set(0, "vol", "v")
	f.e.DB(0).SetExpire(b("vol"), f.e.Now()+2000)
	f.e.SwapDB(0, 1) // 0: one, 1: zero
	f.set(0, "b", "in0")
	f.set(1, "b", "in1")
	f.e.SwapDB(1, 2) // 1: two, 2: zero
	f.set(2, "c", "in2")
	f.e.FlushChanges()
	check := func(g *swapFixture, when string) {
		t.Helper()
		for _, c := range []struct {
			db        int
			key, want string
		}{
			{0, "a", "one"}, {0, "b", "in0"}, {1, "a", "two"}, {1, "b", "(nil)"},
			{2, "a", "zero"}, {2, "b", "in1"}, {2, "c", "in2"}, {2, "vol", "v"},
		} {
			if got := g.get(c.db, c.key); got != c.want {
				t.Errorf("%s: db %d %s = %s, want %s", when, c.db, c.key, got, c.want)
			}
		}
	}
	check(f, "before")
	g := f.restart(500 * time.Millisecond)
	check(g, "after restart")
	if m := g.e.DBMap(); !slices.Equal(m[:3], []int{1, 2, 0}) {
		t.Fatalf("map after restart %v", m)
	}
	g.advance(500 * time.Millisecond)
	if fired, _, _ := g.e.DB(2).DelayPop(b("timers"), 1, 0); len(fired) != 1 {
		t.Fatal("the DELAY timer is not due in database 2")
	}
	g.ev.take()
	g.advance(1000 * time.Millisecond)
	if got := g.ev.take(); got != "expired@2 vol" {
		t.Fatalf("events %q", got)
	}
	// Writes after the restart go under the loaded map, and survive the
	// next restart.
	g.set(0, "d", "after")
	g.e.DB(1).Flush()
	g.e.FlushChanges()
	h := g.restart(0)
	if got := h.get(0, "d"); got != "after" {
		t.Fatalf("db 0 d = %s", got)
	}
	if n := h.e.DB(1).Len(); n != 0 {
		t.Fatalf("db 1 has %d keys after its FLUSHDB", n)
	}
	if got := h.get(2, "a"); got != "zero" {
		t.Fatalf("db 2 a = %s", got)
	}
}

// TestSwapDBLoadMap: a map that is not a permutation of the configured
// databases is refused; a shorter one (more databases configured since)
// leaves the others in place.
func TestSwapDBLoadMap(t *testing.T) {
	e := New(Options{Databases: 4})
	e.Lock()
	defer e.Unlock()
	for _, bad := range [][]byte{{0, 0, 2, 3}, {4, 1, 2, 3}, {1, 2}} {
		if err := e.Loader().LoadServer(b(dbMapRecord), bad); err == nil {
			t.Errorf("map %v accepted", bad)
		}
	}
	if err := e.Loader().LoadServer(b(dbMapRecord), []byte{1, 0}); err != nil {
		t.Fatal(err)
	}
	if m := e.DBMap(); !slices.Equal(m, []int{1, 0, 2, 3}) {
		t.Fatalf("map %v", m)
	}
	if err := e.Loader().LoadServer(b(dbMapRecord), []byte{0, 1, 3, 2, 4, 5}); err != nil {
		t.Fatal(err)
	}
	if m := e.DBMap(); !slices.Equal(m, []int{0, 1, 3, 2}) {
		t.Fatalf("map %v", m)
	}
}

// TestSwapDBQueueReleaseOnDisconnect: a job held with
// RELEASE-ON-DISCONNECT goes back to its queue in the database the queue
// was swapped to when the client disconnects.
func TestSwapDBQueueReleaseOnDisconnect(t *testing.T) {
	f := newSwapFixture(t)
	db0 := f.e.DB(0)
	if _, _, err := db0.QueuePush(b("jobs"), b("p"), QueuePushArgs{}); err != nil {
		t.Fatal(err)
	}
	if got, err := db0.QueuePop(b("jobs"), QueuePopArgs{Consumer: b("c"), Count: 1, Lease: 60_000, Owner: 7}); err != nil || len(got) != 1 {
		t.Fatalf("pop: %v %v", got, err)
	}
	f.e.SwapDB(0, 1)
	f.e.ClientClosed(7)
	s, err := f.e.DB(1).QueueStatsOf(b("jobs"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Ready != 1 || s.Inflight != 0 {
		t.Fatalf("after the disconnect: %+v", s)
	}
}

// BenchmarkSwapDB swaps two databases of 1M keys (half of them with a
// deadline, so the scheduler holds 500k entries) back and forth: the cost
// does not depend on the keys, and each swap writes one record.
func BenchmarkSwapDB(b *testing.B) {
	e := New(Options{})
	e.SetSink(nil) // no records for the fill

	e.Lock()
	defer e.Unlock()
	for i := range 1_000_000 {
		key := []byte("key:" + strconv.Itoa(i))
		db := e.DB(i % 2)
		db.Set(key, NewString(key), false)
		if i%4 < 2 {
			db.SetExpire(key, e.Now()+3_600_000)
		}
	}
	rec := &listRecorder{}
	e.SetSink(rec)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.SwapDB(0, 1)
	}
	b.ReportMetric(float64(len(rec.recs))/float64(b.N), "records/op")
}
