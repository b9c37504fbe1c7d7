package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// White-box tests of QUEUE's structure: the record codec, replay after a
// restart, COPY, and the service order. Behaviour through the network is
// pinned in tests/testdata/golden/queue_*.txt.

type queueFixture struct {
	t     *testing.T
	e     *Engine
	clock *ManualClock
	db    *DB
	rec   *listRecorder
}

func newQueueFixture(t *testing.T) *queueFixture {
	e, clock, _ := newTestEngine(t)
	rec := &listRecorder{}
	e.SetSink(rec)
	e.Lock()
	t.Cleanup(e.Unlock)
	return &queueFixture{t: t, e: e, clock: clock, db: e.DB(0), rec: rec}
}

func (f *queueFixture) push(key, id string, a QueuePushArgs) {
	f.t.Helper()
	a.ID, a.HasID = b(id), true
	if _, ok, err := f.db.QueuePush(b(key), b("payload of "+id), a); err != nil || !ok {
		f.t.Fatalf("push %s: %v %v", id, ok, err)
	}
}

// pop returns "id@attempt" of each delivery, and the receipts.
func (f *queueFixture) pop(key string, count int, lease int64) (string, []string) {
	f.t.Helper()
	jobs, err := f.db.QueuePop(b(key), QueuePopArgs{Consumer: b("c"), Count: count, Lease: lease})
	if err != nil {
		f.t.Fatal(err)
	}
	var got, receipts []string
	for _, j := range jobs {
		got = append(got, fmt.Sprintf("%s@%d", j.ID, j.Attempt))
		receipts = append(receipts, j.Receipt)
	}
	return strings.Join(got, " "), receipts
}

func (f *queueFixture) advance(d time.Duration) {
	f.clock.Advance(d)
	f.e.Unlock()
	f.e.RunTimers()
	f.e.Lock()
}

func TestQueueRecordCodec(t *testing.T) {
	jobs := []queueJob{
		{payload: "p", seq: 1, due: 10, priority: -3, maxAttempts: 16},
		{payload: "", seq: 2, due: 99, attempt: 2, maxAttempts: 3, state: jobDelayed,
			ext: &jobExtra{group: "g", expireAt: 500}},
		{payload: "a\x00b", seq: 3, due: 77, attempt: 1, maxAttempts: 1, state: jobInflight,
			ext: &jobExtra{consumer: "alice", delivery: 42}},
		{payload: "d", seq: 4, due: 88, attempt: 5, maxAttempts: 5, state: jobDead,
			ext: &jobExtra{reason: "max attempts", deadSeq: 7}},
	}
	for _, j := range jobs {
		got, err := decodeJob(encodeJob(nil, &j))
		if err != nil {
			t.Fatalf("%+v: %v", j, err)
		}
		gx, jx := got.ext, j.ext
		got.ext, j.ext = nil, nil
		if got != j || (gx == nil) != (jx == nil) || gx != nil && *gx != *jx {
			t.Errorf("round trip of %+v %+v gave %+v %+v", j, jx, got, gx)
		}
	}
	for _, bad := range []string{"", "\x09\x00", "\x02\x00\x01", "\x00\x04\x01\x02\x03\x04\x05\x06"} {
		if _, err := decodeJob([]byte(bad)); err == nil {
			t.Errorf("decodeJob(%q) accepted", bad)
		}
	}
	q := newQueue()
	q.conf = QueueConfig{Lease: 5, MaxAttempts: 2, DedupeWindow: 3, MaxLen: 4, MaxInflight: 6, GroupInflight: 7,
		RateN: 8, RatePer: 9, Weights: map[int64]int64{-1: 2, 5: 3}, PausePop: true}
	q.stats = QueueCounters{Pushed: 1, Acked: 2, Nacked: 3, Redelivered: 4, DeadLettered: 5, StaleAcks: 6, Expired: 7}
	q.tokenCeil, q.idMs, q.idSeq, q.deadSeq = 2048, 1234, 5, 9
	back, err := decodeQueueMeta(q.appendMeta(nil))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back.conf) != fmt.Sprint(q.conf) || back.stats != q.stats || back.tokens != 2048 ||
		back.idMs != 1234 || back.idSeq != 5 || back.deadSeq != 9 {
		t.Fatalf("meta round trip: %+v %+v %d", back.conf, back.stats, back.tokens)
	}
}

// TestQueueRestartReplay: the records a queue wrote rebuild it whole:
// states, service order, leases ending on time, dead letters, remembered
// ids, and fencing tokens above every one handed out.
func TestQueueRestartReplay(t *testing.T) {
	f := newQueueFixture(t)
	f.db.QueueConfigure(b("q"), func(c *QueueConfig) { c.DedupeWindow = 10_000 })
	f.push("q", "low", QueuePushArgs{})
	f.push("q", "high", QueuePushArgs{Priority: 5, Group: b("g")})
	f.push("q", "later", QueuePushArgs{ReadyAt: f.e.Now() + 2000})
	f.push("q", "leased", QueuePushArgs{Priority: 9})
	f.push("q", "doomed", QueuePushArgs{Priority: 9, MaxAttempts: 1})
	f.push("q", "done", QueuePushArgs{Priority: 9})
	got, receipts := f.pop("q", 3, 5000)
	expect(t, "first pops", got, "leased@1 doomed@1 done@1")
	if ok, _ := f.db.QueueNack(b("q"), b(receipts[1]), 0); !ok {
		t.Fatal("nack")
	}
	if n, _ := f.db.QueueAck(b("q"), [][]byte{b(receipts[2])}); n != 1 {
		t.Fatal("ack")
	}
	store := listStore{}
	store.apply(f.rec.take())

	clock := NewManualClock(time.UnixMilli(f.e.Now() + 1000))
	e := store.loadInto(t, New(Options{Clock: clock}))
	e.Lock()
	e.FinishLoad()
	t.Cleanup(e.Unlock)
	g := &queueFixture{t: t, e: e, clock: clock, db: e.DB(0), rec: &listRecorder{}}
	if dead, _ := g.db.QueueDead(b("q"), 10); len(dead) != 1 || dead[0].ID != "doomed" {
		t.Fatalf("dead after the restart: %+v", dead)
	}
	if _, ok, _ := g.db.QueuePush(b("q"), b("x"), QueuePushArgs{ID: b("done"), HasID: true}); ok {
		t.Fatal("the de-duplication window was lost")
	}
	got, receipts = g.pop("q", 10, 5000)
	expect(t, "ready after the restart", got, "high@1 low@1")
	for _, r := range receipts {
		if tok, _, _ := parseReceipt(b(r)); tok <= 3 {
			t.Fatalf("token %d after the restart, not above the ones handed out before", tok)
		}
	}
	g.advance(999 * time.Millisecond)
	expect(t, "not ripe yet", mustPop(g), "")
	g.advance(time.Millisecond)
	expect(t, "later ripens on time, the lease runs on", mustPop(g), "later@1")
	g.advance(2999 * time.Millisecond)
	expect(t, "the lease still runs", mustPop(g), "")
	g.advance(time.Millisecond)
	expect(t, "the lease ends when it would have", mustPop(g), "leased@2")
}

func mustPop(f *queueFixture) string {
	got, _ := f.pop("q", 10, 60_000)
	return got
}

// TestQueueCloneIsIndependent: COPY's queue has every job in its state,
// and changing one queue leaves the other alone.
func TestQueueCloneIsIndependent(t *testing.T) {
	f := newQueueFixture(t)
	f.push("q", "a", QueuePushArgs{})
	f.push("q", "b", QueuePushArgs{})
	f.push("q", "c", QueuePushArgs{ReadyAt: f.e.Now() + 100})
	_, receipts := f.pop("q", 1, 1000)
	if !f.db.CopyTo(b("q"), f.db, b("q2"), false) {
		t.Fatal("COPY")
	}
	if n, _ := f.db.QueueAck(b("q2"), [][]byte{b(receipts[0])}); n != 1 {
		t.Fatal("the copy lost the delivery")
	}
	if got, _ := f.pop("q2", 10, 1000); got != "b@1" {
		t.Fatalf("the copy's ready jobs: %s", got)
	}
	if s, _ := f.db.QueueStatsOf(b("q")); s.Inflight != 1 || s.Ready != 1 || s.Delayed != 1 {
		t.Fatalf("the original changed: %+v", s)
	}
	f.advance(100 * time.Millisecond)
	if got, _ := f.pop("q2", 10, 1000); got != "c@1" {
		t.Fatalf("the copy's delayed job: %s", got)
	}
}

// TestQueueWeightedShares: with WEIGHTS, each priority with ready jobs
// gets deliveries in proportion to its weight, the lowest included.
func TestQueueWeightedShares(t *testing.T) {
	f := newQueueFixture(t)
	f.db.QueueConfigure(b("q"), func(c *QueueConfig) { c.Weights = map[int64]int64{10: 6, 5: 3} })
	for i := range 300 {
		for _, p := range []int32{10, 5, 0} {
			f.push("q", fmt.Sprintf("p%d-%d", p, i), QueuePushArgs{Priority: p})
		}
	}
	got, _ := f.pop("q", 100, 60_000)
	counts := map[string]int{}
	for _, d := range strings.Fields(got) {
		counts[d[:strings.Index(d, "-")]]++
	}
	if counts["p10"] != 60 || counts["p5"] != 30 || counts["p0"] != 10 {
		t.Fatalf("shares of 100 deliveries with weights 6:3:1: %v", counts)
	}
}

// BenchmarkQueueLoad is start-up's share of a restart with a million jobs
// in one queue, half of them in flight: item records in id order, then
// FinishLoad (the restart suite's "1M jobs" row).
func BenchmarkQueueLoad(b *testing.B) {
	const n = 1_000_000
	items := make([][]byte, n)
	vals := make([][]byte, n)
	for i := range n {
		j := queueJob{seq: uint64(i + 1), due: 1_700_000_000_000, maxAttempts: 16}
		if i%2 == 0 {
			j.state, j.attempt, j.due = jobInflight, 1, 1_800_000_000_000+int64(i)
			j.ext = &jobExtra{consumer: "c", delivery: uint64(i + 1)}
		}
		items[i] = jobItemKey(nil, fmt.Sprintf("timer:%010d", i))
		vals[i] = encodeJob(nil, &j)
	}
	meta := newQueue().appendMeta(nil)
	b.ResetTimer()
	for range b.N {
		e := New(Options{})
		e.Lock()
		l := e.Loader()
		if err := l.LoadValue(0, []byte("jobs"), TypeQueue, meta); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			if err := l.LoadItem(0, []byte("jobs"), items[i], vals[i]); err != nil {
				b.Fatal(err)
			}
		}
		e.FinishLoad()
		e.Unlock()
	}
}

// TestQueueInflightPages: pages of in-flight jobs stay short when delayed
// jobs crowd the timeline ahead of the leases, and together list every
// job in flight exactly once.
func TestQueueInflightPages(t *testing.T) {
	f := newQueueFixture(t)
	for i := range 5 {
		f.push("q", fmt.Sprintf("job%d", i), QueuePushArgs{})
	}
	if got, _ := f.pop("q", 5, 10_000); got == "" {
		t.Fatal("nothing popped")
	}
	for i := range 2000 { // ripen long before the leases end
		f.push("q", fmt.Sprintf("later%d", i), QueuePushArgs{ReadyAt: f.e.Now() + 100})
	}
	seen := map[string]int{}
	var cur InflightCursor
	pages, short := 0, 0
	for {
		next, done, jobs, err := f.db.QueueInflightPage(b("q"), cur, 2)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(jobs) < 2 && !done {
			short++
		}
		for _, j := range jobs {
			seen[j.ID]++
		}
		if done {
			break
		}
		cur = next
	}
	if len(seen) != 5 || short == 0 {
		t.Fatalf("pages %d (%d short) listed %v", pages, short, seen)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", id, n)
		}
	}
}
