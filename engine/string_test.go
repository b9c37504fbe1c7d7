package engine

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// eventLog records keyspace events as "event key" (or "event@db key").
type eventLog struct{ events []string }

func (l *eventLog) KeyspaceEvent(_ NotifyClass, event string, db int, key []byte) {
	s := event
	if db != 0 {
		s += "@" + string(rune('0'+db))
	}
	l.events = append(l.events, s+" "+string(key))
}

func (l *eventLog) take() string {
	s := strings.Join(l.events, ",")
	l.events = nil
	return s
}

// newTestEngine returns an engine on a manual clock with every event class
// (n and m included) recorded. Timers only fire through RunTimers.
func newTestEngine(t *testing.T) (*Engine, *ManualClock, *eventLog) {
	t.Helper()
	clock := NewManualClock(time.UnixMilli(1_700_000_000_000))
	e := New(Options{Clock: clock})
	log := &eventLog{}
	e.SetNotifier(log)
	e.SetNotifyClasses(NotifyAll | NotifyNew | NotifyKeyMiss | NotifyKeyevent)
	return e, clock, log
}

func b(s string) []byte { return []byte(s) }

func mustGet(t *testing.T, db *DB, key string) (string, bool) {
	t.Helper()
	v, ok, err := db.Get(b(key))
	if err != nil {
		t.Fatal(err)
	}
	return string(v), ok
}

func TestSetStringOptions(t *testing.T) {
	e, _, log := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	now := e.Now()

	r, _ := db.SetString(b("k"), b("v1"), SetOptions{})
	if !r.Done || r.HadOld || log.take() != "new k" {
		t.Fatalf("first SET: %+v", r)
	}
	if r, _ = db.SetString(b("k"), b("v2"), SetOptions{NX: true}); r.Done || !r.HadOld {
		t.Fatalf("SET NX on an existing key: %+v", r)
	}
	if r, _ = db.SetString(b("x"), b("v"), SetOptions{XX: true}); r.Done || db.Exists(b("x")) {
		t.Fatalf("SET XX on a missing key: %+v", r)
	}
	r, _ = db.SetString(b("k"), b("v3"), SetOptions{Get: true, ExpireAt: now + 5000})
	if !r.Done || string(r.Old) != "v1" {
		t.Fatalf("SET GET: %+v", r)
	}
	if v, _ := mustGet(t, db, "k"); v != "v3" || db.Expire(b("k")) != now+5000 {
		t.Fatalf("after SET EX: %q, deadline %d", v, db.Expire(b("k")))
	}
	// KEEPTTL keeps the deadline, a plain SET drops it and its timer.
	db.SetString(b("k"), b("v4"), SetOptions{KeepTTL: true})
	if db.Expire(b("k")) != now+5000 || e.PendingTimers() != 1 {
		t.Fatalf("KEEPTTL: deadline %d, %d timers", db.Expire(b("k")), e.PendingTimers())
	}
	db.SetString(b("k"), b("v5"), SetOptions{})
	if db.Expire(b("k")) != 0 || e.PendingTimers() != 0 || db.Volatile() != 0 {
		t.Fatalf("plain SET: deadline %d, %d timers, %d volatile", db.Expire(b("k")), e.PendingTimers(), db.Volatile())
	}
	// SET ... GET on a missing key reads like GET: a miss and a keymiss event.
	log.take()
	misses := e.Stats().KeyspaceMisses
	r, _ = db.SetString(b("fresh"), b("v"), SetOptions{Get: true})
	if r.Old != nil || !r.Done || e.Stats().KeyspaceMisses != misses+1 || log.take() != "keymiss fresh,new fresh" {
		t.Fatalf("SET GET on a missing key: %+v, events %q", r, log.events)
	}
}

func TestSetStringReusesBuffer(t *testing.T) {
	e, _, _ := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	db.SetString(b("k"), b("0123456789"), SetOptions{})
	first := &db.keys.recs.Get(b("k"))[0]
	db.SetString(b("k"), b("abcdefghij"), SetOptions{})
	if &db.keys.recs.Get(b("k"))[0] != first {
		t.Fatal("a same-sized SET wrote a new record")
	}
	key, val := b("k"), b("0123456789")
	allocs := testing.AllocsPerRun(100, func() {
		db.SetString(key, val, SetOptions{})
		db.Get(key)
	})
	if allocs != 0 {
		t.Fatalf("SET over an existing key and GET allocate %v times", allocs)
	}
}

func TestLazyAndScheduledExpiry(t *testing.T) {
	e, clock, log := newTestEngine(t)
	e.Lock()
	db := e.DB(0)
	now := e.Now()
	db.SetString(b("lazy"), b("v"), SetOptions{ExpireAt: now + 100})
	db.SetString(b("timer"), b("v"), SetOptions{ExpireAt: now + 200})
	db.SetString(b("keep"), b("v"), SetOptions{})
	log.take()
	e.Unlock()

	// Before the deadline nothing happens.
	clock.Advance(99 * time.Millisecond)
	e.RunTimers()
	e.Lock()
	if _, ok := mustGet(t, db, "lazy"); !ok || db.Len() != 3 {
		t.Fatalf("expired early: len %d", db.Len())
	}
	e.Unlock()

	// At its deadline a key is gone for a reader even before the
	// scheduler runs (lazy expiry), and announced once.
	clock.Advance(time.Millisecond)
	e.Lock()
	if _, ok := mustGet(t, db, "lazy"); ok {
		t.Fatal("GET returned a key at its deadline")
	}
	if got := log.take(); got != "expired lazy,keymiss lazy" {
		t.Fatalf("events %q", got)
	}
	if e.Stats().ExpiredKeys != 1 || db.Len() != 2 || db.Volatile() != 1 {
		t.Fatalf("stats %+v, len %d, volatile %d", e.Stats(), db.Len(), db.Volatile())
	}
	e.Unlock()

	// A key nobody touches is removed by the scheduler at its deadline.
	clock.Advance(100 * time.Millisecond)
	e.RunTimers()
	e.Lock()
	if got := log.take(); got != "expired timer" {
		t.Fatalf("events %q", got)
	}
	if db.Len() != 1 || e.PendingTimers() != 0 || db.Volatile() != 0 {
		t.Fatalf("len %d, %d timers, %d volatile", db.Len(), e.PendingTimers(), db.Volatile())
	}
	e.Unlock()
}

func TestWriteOverExpiredKey(t *testing.T) {
	e, clock, log := newTestEngine(t)
	e.Lock()
	db := e.DB(0)
	db.SetString(b("k"), b("41"), SetOptions{ExpireAt: e.Now() + 10})
	e.Unlock()
	clock.Advance(20 * time.Millisecond)
	e.Lock()
	defer e.Unlock()
	log.take()
	// INCR does not see the dead value nor inherit its deadline.
	n, err := db.IncrBy(b("k"), 1)
	if err != nil || n != 1 || db.Expire(b("k")) != 0 {
		t.Fatalf("INCR over an expired key = %d, %v, deadline %d", n, err, db.Expire(b("k")))
	}
	if got := log.take(); got != "expired k,new k" {
		t.Fatalf("events %q", got)
	}
}

func TestGetExExpire(t *testing.T) {
	e, _, _ := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	now := e.Now()
	db.SetString(b("k"), b("v"), SetOptions{})
	if act := db.GetExExpire(b("k"), GetExOptions{Persist: true}); act != GetExNothing {
		t.Fatalf("PERSIST without a deadline: %v", act)
	}
	if act := db.GetExExpire(b("k"), GetExOptions{ExpireAt: now + 1000}); act != GetExExpireSet || db.Expire(b("k")) != now+1000 {
		t.Fatalf("EX: %v", act)
	}
	if act := db.GetExExpire(b("k"), GetExOptions{Persist: true}); act != GetExPersisted || db.Expire(b("k")) != 0 {
		t.Fatalf("PERSIST: %v", act)
	}
	if act := db.GetExExpire(b("k"), GetExOptions{ExpireAt: now}); act != GetExDeleted || db.Exists(b("k")) {
		t.Fatalf("a deadline already reached: %v", act)
	}
	if act := db.GetExExpire(b("k"), GetExOptions{ExpireAt: now + 1000}); act != GetExNothing {
		t.Fatalf("missing key: %v", act)
	}
}

func TestRenameMoveCopyCarryDeadline(t *testing.T) {
	e, clock, _ := newTestEngine(t)
	e.Lock()
	db, db1 := e.DB(0), e.DB(1)
	at := e.Now() + 1000
	db.SetString(b("a"), b("v"), SetOptions{ExpireAt: at})
	db.Rename(b("a"), b("b"))
	db.CopyTo(b("b"), db, b("c"), false)
	db.MoveTo(b("c"), db1)
	if db.Expire(b("b")) != at || db1.Expire(b("c")) != at || db.Exists(b("a")) || db.Exists(b("c")) {
		t.Fatalf("deadlines b=%d c@1=%d", db.Expire(b("b")), db1.Expire(b("c")))
	}
	if e.PendingTimers() != 2 || db.Volatile() != 1 || db1.Volatile() != 1 {
		t.Fatalf("%d timers, volatile %d/%d", e.PendingTimers(), db.Volatile(), db1.Volatile())
	}
	e.Unlock()
	clock.Advance(time.Second)
	e.RunTimers()
	e.Lock()
	defer e.Unlock()
	if db.Len() != 0 || db1.Len() != 0 || e.PendingTimers() != 0 {
		t.Fatalf("after the deadline: %d + %d keys, %d timers", db.Len(), db1.Len(), e.PendingTimers())
	}
}

func TestSetExpireAndPersist(t *testing.T) {
	e, _, _ := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	if db.SetExpire(b("nosuch"), e.Now()+10) || db.Persist(b("nosuch")) || db.Expire(b("nosuch")) != -1 {
		t.Fatal("deadline operations on a missing key")
	}
	db.SetString(b("k"), b("v"), SetOptions{})
	if db.Persist(b("k")) {
		t.Fatal("PERSIST of a key without deadline")
	}
	db.SetExpire(b("k"), e.Now()+10)
	db.SetExpire(b("k"), e.Now()+20) // replaces the timer
	if e.PendingTimers() != 1 || db.Expire(b("k")) != e.Now()+20 {
		t.Fatalf("%d timers", e.PendingTimers())
	}
	if !db.Persist(b("k")) || e.PendingTimers() != 0 || db.Volatile() != 0 {
		t.Fatal("PERSIST")
	}
	if !db.SetExpire(b("k"), e.Now()) || db.Exists(b("k")) {
		t.Fatal("a deadline already reached deletes the key")
	}
	// FLUSHDB drops the timers of its keys.
	db.SetString(b("k"), b("v"), SetOptions{ExpireAt: e.Now() + 10})
	db.Flush()
	if e.PendingTimers() != 0 || db.Volatile() != 0 || db.Len() != 0 {
		t.Fatal("FLUSHDB left timers")
	}
}

func TestStringEncodings(t *testing.T) {
	e, _, _ := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	enc := func(k string) string { return db.Peek(b(k)).Encoding() }
	cases := []struct{ v, want string }{
		{"123", "int"}, {"-9223372036854775808", "int"}, {"9223372036854775808", "embstr"},
		{"007", "embstr"}, {"-0", "embstr"}, {"+1", "embstr"}, {"", "embstr"},
		{strings.Repeat("x", 44), "embstr"}, {strings.Repeat("x", 45), "raw"},
	}
	for _, c := range cases {
		db.SetString(b("k"), b(c.v), SetOptions{})
		if got := enc("k"); got != c.want {
			t.Errorf("SET %q: encoding %s, want %s", c.v, got, c.want)
		}
	}
	db.SetString(b("k"), b("12"), SetOptions{})
	db.Append(b("k"), b("3"))
	if enc("k") != "raw" {
		t.Errorf("APPEND: %s", enc("k"))
	}
	db.IncrBy(b("k"), 1)
	if enc("k") != "int" {
		t.Errorf("INCR: %s", enc("k"))
	}
	db.IncrByFloat(b("f"), b("1"))
	if enc("f") != "embstr" {
		t.Errorf("INCRBYFLOAT: %s", enc("f"))
	}
	db.SetRange(b("r"), 0, b("12"))
	if enc("r") != "raw" {
		t.Errorf("SETRANGE: %s", enc("r"))
	}
}

func TestRefCount(t *testing.T) {
	e, _, _ := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	ref := func(k string) int64 { return RefCount(db.Peek(b(k))) }
	for v, want := range map[string]int64{"0": sharedRefCount, "9999": sharedRefCount, "10000": 1, "-1": 1, "abc": 1} {
		db.SetString(b("k"), b(v), SetOptions{})
		if got := ref("k"); got != want {
			t.Errorf("SET %s: refcount %d, want %d", v, got, want)
		}
	}
	db.SetString(b("k"), b("5"), SetOptions{})
	db.CopyTo(b("k"), db, b("c"), false)
	if ref("c") != 1 || ref("k") != sharedRefCount {
		t.Errorf("COPY of a shared integer: %d / %d", ref("c"), ref("k"))
	}
	db.IncrBy(b("c"), 1)
	if ref("c") != sharedRefCount {
		t.Errorf("INCR of the copy: %d", ref("c"))
	}
}

func TestIncrByAndRanges(t *testing.T) {
	e, _, _ := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	db.SetString(b("n"), b("9223372036854775806"), SetOptions{})
	if n, err := db.IncrBy(b("n"), 1); n != maxInt64 || err != nil {
		t.Fatalf("INCR to max: %d, %v", n, err)
	}
	if _, err := db.IncrBy(b("n"), 1); err != ErrOverflow {
		t.Fatalf("INCR past max: %v", err)
	}
	db.SetString(b("s"), b(" 1"), SetOptions{})
	if _, err := db.IncrBy(b("s"), 1); err != ErrNotInt {
		t.Fatalf("INCR of ' 1': %v", err)
	}
	db.SetString(b("g"), b("Hello World"), SetOptions{})
	for _, c := range []struct {
		s, e int64
		want string
	}{{0, 4, "Hello"}, {-5, -1, "World"}, {-1, -5, ""}, {5, 3, ""}, {0, 100, "Hello World"}, {-100, 0, "H"}} {
		got, _ := db.GetRange(b("g"), c.s, c.e)
		if string(got) != c.want {
			t.Errorf("GETRANGE %d %d = %q, want %q", c.s, c.e, got, c.want)
		}
	}
	n, changed, err := db.SetRange(b("g"), 6, b("Redis"))
	if n != 11 || !changed || err != nil {
		t.Fatalf("SETRANGE: %d %v %v", n, changed, err)
	}
	if _, _, err := db.SetRange(b("g"), maxInt64, b("x")); err != ErrStringTooLong {
		t.Fatalf("SETRANGE at the largest offset: %v", err)
	}
	if _, _, err := db.SetRange(b("g"), -1, b("x")); err != ErrOffsetRange {
		t.Fatalf("SETRANGE at a negative offset: %v", err)
	}
	e.SetMaxStringLen(12)
	if _, err := db.Append(b("g"), b("xx")); err != ErrStringTooLong {
		t.Fatalf("APPEND past proto-max-bulk-len: %v", err)
	}
	if n, err := db.Append(b("g"), b("x")); n != 12 || err != nil {
		t.Fatalf("APPEND up to the limit: %d %v", n, err)
	}
}

func TestParseInt(t *testing.T) {
	ok := map[string]int64{"0": 0, "1": 1, "-1": -1, "9223372036854775807": maxInt64, "-9223372036854775808": minInt64}
	for s, want := range ok {
		if got, valid := ParseInt(b(s)); !valid || got != want {
			t.Errorf("ParseInt(%q) = %d, %v", s, got, valid)
		}
	}
	for _, s := range []string{"", "-", "+1", "01", "-0", " 1", "1 ", "1.0", "9223372036854775808",
		"-9223372036854775809", "99999999999999999999", "123456789012345678901", "1\x00"} {
		if _, valid := ParseInt(b(s)); valid {
			t.Errorf("ParseInt(%q) accepted", s)
		}
	}
}

func TestLookupFlags(t *testing.T) {
	e, _, log := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	db.SetString(b("k"), b("v"), SetOptions{})
	log.take()
	before := e.Stats()
	db.Lookup(b("k"), LookupNoTouch)
	db.Lookup(b("nosuch"), LookupNoTouch|LookupNoNotify)
	db.Lookup(b("nosuch"), LookupNoStats)
	st := e.Stats()
	if st.KeyspaceHits != before.KeyspaceHits+1 || st.KeyspaceMisses != before.KeyspaceMisses+1 {
		t.Fatalf("stats %+v -> %+v", before, st)
	}
	if got := log.take(); got != "keymiss nosuch" {
		t.Fatalf("events %q", got)
	}
}

// TestLongStringChangesArePatches: SETBIT, SETRANGE and APPEND on a long
// string record only the bytes they wrote, growth included; on a short
// string, or when they rewrite most of the value, the whole value, once per
// flush. Either way the records rebuild the value exactly.
func TestLongStringChangesArePatches(t *testing.T) {
	e, _, _ := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	sink := newHSRecordSink()
	e.SetSink(sink)
	persisted := func(key string) {
		t.Helper()
		if got := sink.keys[hsSinkKey{0, key}].payload; !bytes.Equal(got, rawValue(t, db, key)) {
			t.Fatalf("%s: the records give %d bytes that differ from the value's %d", key, len(got), len(rawValue(t, db, key)))
		}
	}
	step := func(what, want string, change func()) {
		t.Helper()
		change()
		e.FlushChanges()
		if got := sink.take(); got != want {
			t.Fatalf("%s wrote %s, want %s", what, got, want)
		}
	}
	step("SETBIT creating a bitmap", "[value=1]", func() { db.SetBit(b("bm"), 8*1000, 1) })
	step("SETBITs inside it", "[patch=2]", func() {
		db.SetBit(b("bm"), 8*10+3, 1)
		db.SetBit(b("bm"), 8*999, 1)
	})
	step("SETBIT of a bit already set", "[]", func() { db.SetBit(b("bm"), 8*10+3, 1) })
	step("SETBIT growing it", "[patch=1]", func() { db.SetBit(b("bm"), 8*5000+7, 1) })
	step("SETRANGEs inside and past the end", "[patch=2]", func() {
		db.SetRange(b("bm"), 100, b("hello"))
		db.SetRange(b("bm"), 6000, b("tail"))
	})
	step("APPENDs", "[patch=3]", func() {
		for range 3 {
			db.Append(b("bm"), b("more"))
		}
	})
	persisted("bm")
	step("SETRANGE over most of it", "[value=1]", func() { db.SetRange(b("bm"), 0, make([]byte, 4000)) })
	persisted("bm")

	step("APPEND creating a string", "[value=1]", func() { db.Append(b("short"), b("0123456789")) })
	step("APPENDs to a short string", "[value=1]", func() {
		for range 5 {
			db.Append(b("short"), b("0123456789"))
		}
	})
	step("SETBIT in a short string", "[value=1]", func() { db.SetBit(b("short"), 0, 1) })
	persisted("short")
}
