package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// evictFixture is an engine on the manual clock under an eviction policy.
func evictFixture(t *testing.T, p EvictionPolicy, samples int) (*Engine, *ManualClock, *eventLog, *DB) {
	t.Helper()
	e, clock, log := newTestEngine(t)
	e.Lock()
	t.Cleanup(e.Unlock)
	c := DefaultEvictionConfig()
	c.Policy, c.Samples = p, samples
	e.SetEvictionConfig(c)
	return e, clock, log, e.DB(0)
}

func setKeys(t *testing.T, db *DB, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := db.SetString(b(fmt.Sprintf("%s%d", prefix, i)), b("value"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// evictN evicts n keys and returns their names.
func evictN(t *testing.T, e *Engine, log *eventLog, n int) []string {
	t.Helper()
	log.take()
	for i := 0; i < n; i++ {
		if _, _, ok := e.evictOne(); !ok {
			t.Fatalf("eviction %d found nothing to evict", i)
		}
	}
	var keys []string
	for _, ev := range strings.Split(log.take(), ",") {
		name, ok := strings.CutPrefix(ev, "evicted")
		if !ok {
			t.Fatalf("unexpected event %q", ev)
		}
		if _, after, ok := strings.Cut(name, " "); ok { // evicted@db key
			name = after
		}
		keys = append(keys, name)
	}
	return keys
}

func TestEvictLRUPrefersIdleKeys(t *testing.T) {
	e, clock, log, db := evictFixture(t, PolicyAllKeysLRU, 20)
	setKeys(t, db, "old", 50)
	setKeys(t, db, "new", 50)
	clock.Advance(100 * time.Second)
	e.Refresh()
	for i := 0; i < 50; i++ {
		db.Read(b(fmt.Sprintf("new%d", i)))
	}
	if got := db.IdleTime(db.Peek(b("old1"))); got != 100 {
		t.Fatalf("IDLETIME of an untouched key = %d, want 100", got)
	}
	for _, k := range evictN(t, e, log, 25) {
		if !strings.HasPrefix(k, "old") {
			t.Fatalf("LRU evicted %s, read 100 s after the idle keys", k)
		}
	}
	if db.Len() != 75 {
		t.Fatalf("%d keys left, want 75", db.Len())
	}
}

func TestEvictLRUGradedIdleTimes(t *testing.T) {
	// Keys touched at ten different times: the first tenth evicted should
	// come from the oldest touches.
	e, clock, log, db := evictFixture(t, PolicyAllKeysLRU, 10)
	for round := 0; round < 10; round++ {
		setKeys(t, db, fmt.Sprintf("r%d-", round), 20)
		clock.Advance(10 * time.Second)
		e.Refresh()
	}
	old := 0
	for _, k := range evictN(t, e, log, 20) {
		if strings.HasPrefix(k, "r0-") || strings.HasPrefix(k, "r1-") || strings.HasPrefix(k, "r2-") {
			old++
		}
	}
	if old < 18 {
		t.Fatalf("only %d of 20 evictions came from the three oldest rounds", old)
	}
}

func TestEvictLFUPrefersRarelyUsed(t *testing.T) {
	e, _, log, db := evictFixture(t, PolicyAllKeysLFU, 20)
	setKeys(t, db, "hot", 30)
	setKeys(t, db, "cold", 30)
	for i := 0; i < 30; i++ {
		k := b(fmt.Sprintf("hot%d", i))
		for j := 0; j < 200; j++ {
			db.Read(k)
		}
	}
	if f := db.AccessFrequency(db.Peek(b("cold3"))); f != lfuInitVal {
		t.Fatalf("OBJECT FREQ of a new key = %d, want %d", f, lfuInitVal)
	}
	if f := db.AccessFrequency(db.Peek(b("hot3"))); f <= lfuInitVal+2 {
		t.Fatalf("OBJECT FREQ after 200 reads = %d", f)
	}
	for _, k := range evictN(t, e, log, 20) {
		if !strings.HasPrefix(k, "cold") {
			t.Fatalf("LFU evicted %s, read 200 times", k)
		}
	}
}

func TestEvictLFUOverwriteKeepsCounter(t *testing.T) {
	e, _, _, db := evictFixture(t, PolicyAllKeysLFU, 5)
	setKeys(t, db, "k", 1)
	for j := 0; j < 500; j++ {
		db.Read(b("k0"))
	}
	before := db.AccessFrequency(db.Peek(b("k0")))
	db.SetString(b("k0"), b("other"), SetOptions{})
	if after := db.AccessFrequency(db.Peek(b("k0"))); after < before {
		t.Fatalf("overwrite reset the counter: %d -> %d", before, after)
	}
	_ = e
}

func TestEvictVolatileTTLNearestFirst(t *testing.T) {
	e, _, log, db := evictFixture(t, PolicyVolatileTTL, 200)
	order := []int{7, 3, 9, 1, 5, 8, 2, 6, 4, 10}
	for _, s := range order {
		k := b(fmt.Sprintf("ttl%d", s))
		db.SetString(k, b("v"), SetOptions{})
		db.SetExpire(k, e.Now()+int64(s)*1000)
	}
	setKeys(t, db, "persistent", 10)
	got := evictN(t, e, log, 10)
	for i, k := range got {
		if want := fmt.Sprintf("ttl%d", i+1); k != want {
			t.Fatalf("eviction %d took %s, want %s (all: %v)", i, k, want, got)
		}
	}
	if _, _, ok := e.evictOne(); ok {
		t.Fatal("volatile-ttl evicted a key without a deadline")
	}
}

func TestEvictVolatileIgnoresPersistentKeys(t *testing.T) {
	for _, p := range []EvictionPolicy{PolicyVolatileLRU, PolicyVolatileLFU, PolicyVolatileRandom, PolicyVolatileTTL} {
		for _, persistent := range []int{40, 4000} { // dense and sparse deadlines
			t.Run(fmt.Sprintf("%s/%d", p, persistent), func(t *testing.T) {
				e, _, log, db := evictFixture(t, p, 5)
				setKeys(t, db, "p", persistent)
				for i := 0; i < 40; i++ {
					k := b(fmt.Sprintf("v%d", i))
					db.SetString(k, b("v"), SetOptions{})
					db.SetExpire(k, e.Now()+int64(1000+i))
				}
				for _, k := range evictN(t, e, log, 40) {
					if !strings.HasPrefix(k, "v") {
						t.Fatalf("evicted persistent key %s", k)
					}
				}
				if db.Volatile() != 0 || db.Len() != persistent {
					t.Fatalf("volatile %d, keys %d", db.Volatile(), db.Len())
				}
				if _, _, ok := e.evictOne(); ok {
					t.Fatal("evicted with no volatile key left")
				}
			})
		}
	}
}

func TestEvictRandomIsSpread(t *testing.T) {
	e, _, _, db := evictFixture(t, PolicyAllKeysRandom, 5)
	const keys, draws = 40, 40000
	setKeys(t, db, "k", keys)
	counts := map[string]int{}
	for i := 0; i < draws; i++ {
		_, k, _, ok := e.pickVictim()
		if !ok {
			t.Fatal("no victim")
		}
		counts[string(k)]++
	}
	if len(counts) != keys {
		t.Fatalf("drew %d distinct keys of %d", len(counts), keys)
	}
	exp := float64(draws) / keys
	chi := 0.0
	for _, c := range counts {
		d := float64(c) - exp
		chi += d * d / exp
	}
	if bound := chiSquareBound(keys - 1); chi > bound {
		t.Fatalf("chi-square %.1f over %.1f: picks are not uniform", chi, bound)
	}
}

func TestEvictRandomVisitsDatabasesInTurn(t *testing.T) {
	e, _, log, _ := evictFixture(t, PolicyAllKeysRandom, 5)
	for i := 0; i < 3; i++ {
		setKeys(t, e.DB(i), "k", 5)
	}
	evictN(t, e, log, 6)
	for i := 0; i < 3; i++ {
		if n := e.DB(i).Len(); n != 3 {
			t.Fatalf("db %d holds %d keys, want 3 (two evictions each)", i, n)
		}
	}
}

// TestLFULogIncr checks the counter's growth against Redis's formula: an
// access increments counter c (from LFU_INIT_VAL on) with probability
// 1/((c-5)*factor+1), so reaching c from 5 takes, on average,
// sum over k in [5,c) of ((k-5)*factor+1) accesses.
func TestLFULogIncr(t *testing.T) {
	for _, c := range []struct {
		counter uint8
		factor  int
		r       float64
		want    uint8
	}{
		{5, 10, 0.999, 6},       // at or below LFU_INIT_VAL: always
		{0, 10, 0.999, 1},       // base clamped at 0
		{6, 10, 1.0 / 11.5, 7},  // p = 1/11
		{6, 10, 1.0 / 10.5, 6},  // just above
		{15, 100, 0.00099, 16},  // p = 1/1001
		{15, 100, 0.001, 15},    // just above
		{255, 0, 0, 255},        // saturated
		{100, 0, 0.999999, 101}, // factor 0: every access
	} {
		if got := lfuLogIncr(c.counter, c.factor, c.r); got != c.want {
			t.Errorf("lfuLogIncr(%d, %d, %g) = %d, want %d", c.counter, c.factor, c.r, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range []int{1, 10, 100} {
		const target, trials = 15, 2000
		want := 0.0
		for k := 5; k < target; k++ {
			want += float64((k-5)*f + 1)
		}
		total := 0
		for i := 0; i < trials; i++ {
			c := uint8(lfuInitVal)
			for c < target {
				c = lfuLogIncr(c, f, rng.Float64())
				total++
			}
		}
		if mean := float64(total) / trials; mean < want*0.93 || mean > want*1.07 {
			t.Errorf("factor %d: %.1f accesses to reach %d on average, formula says %.1f", f, mean, target, want)
		}
	}
}

func TestLFUDecay(t *testing.T) {
	at := func(minutes uint32, counter uint8) uint32 { return minutes<<8 | uint32(counter) }
	for _, c := range []struct {
		atime, now uint32
		decay      int
		want       uint8
	}{
		{at(100, 10), 100, 1, 10},
		{at(100, 10), 103, 1, 7},
		{at(100, 10), 110, 1, 0},
		{at(100, 10), 500, 1, 0},
		{at(100, 10), 109, 3, 7}, // 9 minutes at 3 a period
		{at(100, 10), 500, 0, 10},
		{at(65530, 20), 5, 1, 10}, // the minute clock wrapped: 10 minutes
	} {
		if got := lfuDecayed(c.atime, c.now, c.decay); got != c.want {
			t.Errorf("lfuDecayed(%d:%d, now %d, decay %d) = %d, want %d",
				c.atime>>8, c.atime&255, c.now, c.decay, got, c.want)
		}
	}
}

func TestLFUFrequencyDecaysOnTheClock(t *testing.T) {
	e, clock, _, db := evictFixture(t, PolicyAllKeysLFU, 5)
	cfg := e.EvictionConfig()
	cfg.LogFactor = 0 // every access counts
	e.SetEvictionConfig(cfg)
	setKeys(t, db, "k", 1)
	for i := 0; i < 20; i++ {
		db.Read(b("k0"))
	}
	if f := db.AccessFrequency(db.Peek(b("k0"))); f != 25 {
		t.Fatalf("FREQ = %d, want 25", f)
	}
	clock.Advance(7 * time.Minute)
	e.Refresh()
	if f := db.AccessFrequency(db.Peek(b("k0"))); f != 18 {
		t.Fatalf("FREQ after 7 minutes = %d, want 18", f)
	}
	db.Read(b("k0")) // decays, then counts the access
	if f := db.AccessFrequency(db.Peek(b("k0"))); f != 19 {
		t.Fatalf("FREQ after a read = %d, want 19", f)
	}
}

func TestLRUClockWraps(t *testing.T) {
	e, clock, _, db := evictFixture(t, PolicyAllKeysLRU, 5)
	// Start two seconds before the 24-bit seconds clock wraps.
	clock.Set(time.Unix((e.Now()/1000)|lruClockMax-1, 0))
	e.Refresh()
	setKeys(t, db, "k", 1)
	clock.Advance(5 * time.Second)
	e.Refresh()
	if got := db.IdleTime(db.Peek(b("k0"))); got != 4 && got != 5 {
		t.Fatalf("IDLETIME across the wrap = %d", got)
	}
}

// meterFixture gives an engine a fake collector whose live heap the test
// sets.
type fakeGC struct {
	gen    uint64
	live   int64
	heap   int64 // the heap now, garbage included
	forced int   // collections eviction asked for
	// keyspace reads the engine's flat memory, which a collection finds
	// among the live bytes.
	keyspace func() int64
}

// collect is a collection measuring live bytes besides the keyspaces'
// flat memory.
func (g *fakeGC) collect(live int64) { g.gen++; g.live = live + g.keyspace() }

func meterFixture(t *testing.T, p EvictionPolicy, limit int64) (*Engine, *eventLog, *DB, *fakeGC) {
	e, _, log, db := evictFixture(t, p, 5)
	// These tests count keys, not time: no wall-clock limit on a cycle
	// (under the race detector on a busy machine, the default tenacity's
	// 500 µs ran out and the write saw EvictRunning).
	cfg := e.EvictionConfig()
	cfg.Tenacity = 100
	e.SetEvictionConfig(cfg)
	e.SetSink(&listRecorder{})
	gc := &fakeGC{keyspace: e.keyspaceHeld}
	m := &e.eviction().meter
	m.liveSource = func() (uint64, int64) { return gc.gen, gc.live }
	m.collect = func() { gc.forced++ }
	m.heapNow = func() int64 { return gc.heap }
	gc.heap = 1 << 40
	e.SetMaxMemory(limit)
	gc.collect(0)
	return e, log, db, gc
}

func TestPerformEvictionsHoldsTheEstimate(t *testing.T) {
	const limit = 1 << 20
	e, log, db, gc := meterFixture(t, PolicyAllKeysLRU, limit)
	rec := e.sink.ChangeSink.(physSink).ChangeSink.(*listRecorder)
	val := strings.Repeat("x", 1000)
	for i := 0; i < 5000; i++ {
		if r := e.PerformEvictions(); r != EvictOK {
			t.Fatalf("write %d: %v", i, r)
		}
		db.SetString(b(fmt.Sprintf("key:%d", i)), b(val), SetOptions{})
		if est := e.MemoryEstimate(); est > limit {
			// One write past the target is allowed; the limit never.
			t.Fatalf("write %d: estimate %d over the limit", i, est)
		}
		if i%1000 == 999 {
			// A collection: the strings are all in the keyspace, which the
			// meter reads exactly.
			gc.collect(0)
		}
	}
	st := e.EvictionStats()
	if st.EvictedKeys == 0 || int64(db.Len())+st.EvictedKeys != 5000 {
		t.Fatalf("evicted %d, %d keys left", st.EvictedKeys, db.Len())
	}
	dels, evicted := 0, strings.Count(log.take(), "evicted ")
	for _, r := range rec.take() {
		if r.op == "delkey" {
			dels++
		}
	}
	if int64(dels) != st.EvictedKeys || int64(evicted) != st.EvictedKeys {
		t.Fatalf("%d evictions, %d delete records, %d evicted events", st.EvictedKeys, dels, evicted)
	}
}

func TestPerformEvictionsFailsWithNothingToEvict(t *testing.T) {
	e, _, db, gc := meterFixture(t, PolicyVolatileLRU, 1<<20)
	setKeys(t, db, "p", 10)
	gc.collect(2 << 20)
	if r := e.PerformEvictions(); r != EvictFail {
		t.Fatalf("volatile-lru without volatile keys: %v, want EvictFail", r)
	}
	if db.Len() != 10 {
		t.Fatal("persistent keys evicted")
	}
	if st := e.EvictionStats(); st.CurrentExceededMs != 0 || st.EvictedKeys != 0 {
		t.Fatalf("stats %+v", st)
	}
	if gc.forced != 1 {
		t.Fatalf("%d collections asked for, want one to correct a stale estimate", gc.forced)
	}
	gc.collect(0)
	if r := e.PerformEvictions(); r != EvictOK {
		t.Fatalf("under the limit: %v", r)
	}
	// Over the target but under maxmemory: nothing to evict is no reason
	// to refuse writes, as in Redis.
	gc.collect(1<<20 - 1000 - e.keyspaceBytes())
	if r := e.PerformEvictions(); r != EvictOK {
		t.Fatalf("under maxmemory, over the target: %v", r)
	}
	// A stale estimate over maxmemory is overruled by the heap measured
	// now, garbage included.
	gc.collect(2 << 20)
	gc.heap = 1<<20 - 1000
	if r := e.PerformEvictions(); r != EvictOK {
		t.Fatalf("heap under maxmemory, stale estimate over it: %v", r)
	}
	gc.heap = 1 << 40
	e.SetEvictionConfig(EvictionConfig{Policy: PolicyNoEviction})
	gc.collect(2 << 20)
	if r := e.PerformEvictions(); r != EvictOK {
		t.Fatalf("noeviction leaves the check to the server: %v", r)
	}
}

func TestEvictionTouchesWatchAndKeepsOthers(t *testing.T) {
	e, _, db, gc := meterFixture(t, PolicyAllKeysRandom, 1<<20)
	setKeys(t, db, "k", 1)
	w := &Watch{}
	e.WatchKey(w, 0, b("k0"))
	gc.collect(2 << 20)
	if r := e.PerformEvictions(); r != EvictFail {
		t.Fatalf("%v", r)
	}
	if !w.Dirty() || db.Len() != 0 {
		t.Fatalf("evicted key: watch dirty %v, keys %d", w.Dirty(), db.Len())
	}
}

func TestEvictionTimeLimit(t *testing.T) {
	for _, c := range []struct {
		tenacity int
		want     time.Duration
	}{{0, 0}, {1, 50 * time.Microsecond}, {10, 500 * time.Microsecond}} {
		if got := evictionTimeLimit(c.tenacity); got != c.want {
			t.Errorf("tenacity %d: %v, want %v", c.tenacity, got, c.want)
		}
	}
	if got := evictionTimeLimit(99); got < 100*time.Second || got > 150*time.Second {
		t.Errorf("tenacity 99: %v, want about 2 minutes", got)
	}
	if got := evictionTimeLimit(100); got < 1000*time.Hour {
		t.Errorf("tenacity 100: %v, want no limit", got)
	}
}

func TestEvictionRunsOnWhenTimeRunsOut(t *testing.T) {
	e, _, db, gc := meterFixture(t, PolicyAllKeysRandom, 1<<20)
	cfg := e.EvictionConfig()
	cfg.Tenacity = 0
	e.SetEvictionConfig(cfg)
	setKeys(t, db, "k", 100)
	gc.collect(1 << 30)
	if r := e.PerformEvictions(); r != EvictRunning {
		t.Fatalf("%v, want EvictRunning", r)
	}
	if n := db.Len(); n != 84 {
		t.Fatalf("%d keys left after one call, want 84 (16 evicted before the time check)", n)
	}
	// The scheduler entry carries on without a command.
	e.Unlock()
	for i := 0; i < 10; i++ {
		e.RunTimers()
	}
	e.Lock()
	if n := db.Len(); n != 0 {
		t.Fatalf("%d keys left after the eviction timer ran", n)
	}
}

func TestEvictNativeKeyLeavesTheScheduler(t *testing.T) {
	e, _, log, db := evictFixture(t, PolicyAllKeysLRU, 5)
	rec := &listRecorder{}
	e.SetSink(rec)
	if _, _, err := db.DelayAdd(b("timers"), b("m"), DelayAddArgs{Due: e.Now() + 60_000}); err != nil {
		t.Fatal(err)
	}
	if e.PendingTimers() != 1 {
		t.Fatalf("%d scheduler entries, want the DELAY key's one", e.PendingTimers())
	}
	if got := evictN(t, e, log, 1); got[0] != "timers" {
		t.Fatalf("evicted %v", got)
	}
	if e.PendingTimers() != 0 {
		t.Fatal("the evicted DELAY key's scheduler entry stayed")
	}
	var del *listRecord
	for _, r := range rec.take() {
		if r.op == "delkey" {
			del = &r
		}
	}
	if del == nil || del.key != "timers" || !del.items {
		t.Fatalf("no delete record with its items for the evicted key: %+v", del)
	}
}
