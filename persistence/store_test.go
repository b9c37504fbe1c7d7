package persistence

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revolver-db/revolver/engine"
)

func TestPersistRoundTrip(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncAlways)
	s.PutValue(0, []byte("b"), engine.TypeString, []byte("2"))
	s.PutValue(0, []byte("a"), engine.TypeString, []byte("1"))
	s.PutExpire(0, []byte("a"), 1700000000123)
	s.PutValue(3, []byte("h"), 9, []byte("hdr"))
	s.PutItem(3, []byte("h"), []byte("f2"), []byte("v2"))
	s.PutItem(3, []byte("h"), []byte("f1"), []byte("v1"))
	s.PutItem(3, []byte("h"), []byte("f3"), []byte("v3"))
	s.DeleteItem(3, []byte("h"), []byte("f3"))
	s.PutValue(0, []byte("long"), engine.TypeString, nil)
	s.PutExpire(0, []byte("long"), 5)
	s.DeleteExpire(0, []byte("long"))
	s.PutValue(maxDB, []byte("last"), engine.TypeString, []byte("x"))
	sameLines(t, reopen(t, s), []string{
		`value 0 "a" 1 "1"`,
		`expire 0 "a" 1700000000123`,
		`value 0 "b" 1 "2"`,
		`value 0 "long" 1 ""`,
		`value 3 "h" 9 "hdr"`,
		`item 3 "h" "f1" "v1"`,
		`item 3 "h" "f2" "v2"`,
		`value 255 "last" 1 "x"`,
	})
}

func TestLoadCountsKeys(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	defer s.Close()
	for i := range 10 {
		s.PutValue(i%3, fmt.Appendf(nil, "k%d", i), engine.TypeString, []byte("v"))
		s.PutExpire(i%3, fmt.Appendf(nil, "k%d", i), int64(i))
	}
	wait(s)
	n, err := s.Load(&fakeLoader{})
	if err != nil || n != 10 {
		t.Fatalf("Load = %d, %v; want 10 keys", n, err)
	}
}

func TestDeleteKey(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	for _, k := range []string{"s", "c"} {
		s.PutValue(0, []byte(k), 1, []byte("v"))
		s.PutExpire(0, []byte(k), 42)
		s.PutItem(0, []byte(k), []byte("i"), []byte("x"))
	}
	s.PutValue(0, []byte("keep"), 1, []byte("v"))
	// Without items the sub-records stay: the engine only asks for that
	// when the value has none.
	s.DeleteKey(0, []byte("s"), false)
	s.DeleteKey(0, []byte("c"), true)
	sameLines(t, reopen(t, s), []string{
		`item 0 "s" "i" "x"`,
		`value 0 "keep" 1 "v"`,
	})
}

func TestFlush(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	for db := range 4 {
		s.PutValue(db, []byte("k"), 1, []byte("v"))
		s.PutItem(db, []byte("k"), []byte("i"), []byte("x"))
	}
	s.PutValue(maxDB, []byte("k"), 1, []byte("v"))
	s.FlushDB(1)
	s.FlushDB(maxDB)
	sameLines(t, reopen(t, s), []string{
		`value 0 "k" 1 "v"`, `item 0 "k" "i" "x"`,
		`value 2 "k" 1 "v"`, `item 2 "k" "i" "x"`,
		`value 3 "k" 1 "v"`, `item 3 "k" "i" "x"`,
	})

	s = openTest(t, t.TempDir(), FsyncNo)
	s.PutValue(0, []byte("gone"), 1, []byte("v"))
	s.PutServer([]byte("kept"), []byte("lib"))
	s.FlushAll()
	s.PutValue(5, []byte("new"), 1, []byte("v"))
	sameLines(t, reopen(t, s), []string{`value 5 "new" 1 "v"`, `server "kept" "lib"`})
}

// TestServerRecords: server records are written, replaced and deleted
// through the log, survive a restart with or without a replay, and sit
// outside every database.
func TestServerRecords(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncAlways)
	s.PutServer([]byte("function:a"), []byte("v1"))
	s.PutServer([]byte("function:b"), []byte("x"))
	s.PutValue(maxDB, []byte("k"), 1, []byte("v"))
	s.PutServer([]byte("function:a"), []byte("v2"))
	s.DeleteServer([]byte("function:b"))
	s.FlushDB(maxDB)
	want := []string{`server "function:a" "v2"`}
	sameLines(t, reopen(t, s), want)
	s = openTest(t, dir, FsyncAlways)
	s.DeleteServer([]byte("function:a"))
	s.PutServer([]byte("function:c"), nil)
	s.Sync()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir, FsyncAlways)
	sameLines(t, load(t, s), []string{`server "function:c" ""`})
	s.Close()
}

// TestFlushAllFreesTables checks that FLUSHALL and FLUSHDB give the space of
// the tables they empty back at once, instead of leaving a range deletion
// over them for compactions to act on.
func TestFlushAllFreesTables(t *testing.T) {
	for _, replayed := range []bool{false, true} {
		t.Run(fmt.Sprintf("replayed=%v", replayed), func(t *testing.T) {
			testFlushAllFreesTables(t, replayed)
		})
	}
}

// testFlushAllFreesTables runs the flushes, then, if replayed, crashes
// with the whole log kept, so that start-up applies all of it again onto a
// store that already holds it.
func testFlushAllFreesTables(t *testing.T, replayed bool) {
	dir := t.TempDir()
	s := openTunedTest(t, dir, FsyncNo, tuning{keepLog: replayed})
	r := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 200) // random, so that compression keeps its size
	fill := func(db int) {
		for i := range 50000 {
			for j := range val {
				val[j] = byte(r.Uint32())
			}
			s.PutItem(db, []byte("list"), binary.BigEndian.AppendUint64(nil, uint64(i)), val)
		}
		applied(s)
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	tables := func() int64 { return s.db.Metrics().Total().TablesSize }
	fill(0)
	one := tables()
	fill(1)
	if two := tables(); one < exciseMinBytes || two < 2*one-one/10 {
		t.Fatalf("50,000 items of 200 random bytes left %d bytes of tables, 100,000 %d", one, two)
	}
	s.FlushDB(0)
	applied(s)
	if size := tables(); size > one+one/10 {
		t.Fatalf("after FLUSHDB 0: %d bytes of tables; one database's is %d", size, one)
	}
	s.FlushAll()
	applied(s)
	if size := tables(); size > 64<<10 {
		t.Fatalf("after FLUSHALL: %d bytes of tables", size)
	}
	s.PutValue(0, []byte("after"), 1, []byte("v"))
	want := []string{`value 0 "after" 1 "v"`}
	if replayed {
		wait(s)
		crash(t, s)
		s = openTest(t, dir, FsyncNo)
	}
	sameLines(t, reopen(t, s), want)
}

// TestSmallFlushAllsDeleteRanges checks that flushing a small store many
// times over writes range deletions: an excision each time would flush a
// memtable each time and stall Pebble.
func TestSmallFlushAllsDeleteRanges(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	defer s.Close()
	flushes := s.db.Metrics().Flush.Count
	for i := range 200 {
		s.PutValue(0, []byte("k"), 1, []byte(fmt.Sprint(i)))
		s.FlushAll()
		applied(s)
	}
	if m := s.db.Metrics(); m.Flush.Count > flushes || m.MemTable.Count > 1 {
		t.Fatalf("200 small FLUSHALLs made %d flushes and left %d memtables", m.Flush.Count-flushes, m.MemTable.Count)
	}
}

func TestOrderWithinAndAcrossBatches(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	// One batch: put then delete, delete then put.
	s.PutValue(0, []byte("a"), 1, []byte("v"))
	s.DeleteKey(0, []byte("a"), true)
	s.DeleteKey(0, []byte("b"), true)
	s.PutValue(0, []byte("b"), 1, []byte("v"))
	wait(s)
	// Across batches.
	s.PutValue(0, []byte("c"), 1, []byte("v"))
	wait(s)
	s.DeleteKey(0, []byte("c"), false)
	wait(s)
	for i := range 100 {
		s.PutValue(0, []byte("d"), 1, fmt.Appendf(nil, "%d", i))
		if i%7 == 0 {
			wait(s)
		}
	}
	sameLines(t, reopen(t, s), []string{`value 0 "b" 1 "v"`, `value 0 "d" 1 "99"`})
}

func TestBarrier(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncAlways)
	defer s.Close()
	if ch := s.Barrier(); ch != nil {
		t.Fatal("Barrier of an idle store is not nil")
	}
	// The writer may commit before Barrier is called, and then nil is
	// right; try until a channel is caught.
	caught := false
	for i := uint64(1); i <= 1000 && !caught; i++ {
		s.PutValue(0, []byte("k"), 1, []byte("v"))
		ch := s.Barrier()
		if ch != nil {
			caught = true
			select {
			case <-ch:
			case <-time.After(10 * time.Second):
				t.Fatal("Barrier never closed")
			}
		}
		if st := s.Stats(); st.Records != i || st.Fsyncs == 0 {
			t.Fatalf("after change %d and its barrier: %+v", i, st)
		}
	}
	if !caught {
		t.Fatal("Barrier never returned a channel")
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Barrier() != nil {
		if time.Now().After(deadline) {
			t.Fatal("store never became idle")
		}
		time.Sleep(time.Millisecond)
	}
	if st := s.Stats(); st.Pending != 0 {
		t.Fatalf("pending %d when idle", st.Pending)
	}
}

// TestConcurrentWriters has writers, each after its change, wait on the
// barrier like the server does before replying; everything acknowledged
// must load back.
func TestConcurrentWriters(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncAlways)
	var engineLock sync.Mutex
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				engineLock.Lock()
				s.PutValue(w, fmt.Appendf(nil, "k%03d", i), 1, fmt.Appendf(nil, "%d-%d", w, i))
				ch := s.Barrier()
				engineLock.Unlock()
				// nil: the writer already committed the change.
				if ch != nil {
					<-ch
				}
				_ = s.Stats()
			}
		}()
	}
	wg.Wait()
	st := s.Stats()
	if st.Records != writers*each {
		t.Fatalf("records %d, want %d", st.Records, writers*each)
	}
	t.Logf("%d records in %d commits", st.Records, st.Commits)
	if got := reopen(t, s); len(got) != writers*each {
		t.Fatalf("loaded %d records, want %d", len(got), writers*each)
	}
}

func TestSetFsync(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.SetFsync(Fsync(i % 3))
			_ = s.Fsync()
		}
	}()
	for i := range 200 {
		s.PutValue(0, fmt.Appendf(nil, "k%03d", i), 1, nil)
		wait(s)
	}
	close(stop)
	wg.Wait()

	s.SetFsync(FsyncNo)
	// An everysec tick that read the policy just before the switch may
	// still sync once, so allow a retry.
	var before uint64
	for try := 0; ; try++ {
		before = s.Stats().Fsyncs
		s.PutValue(0, []byte("x"), 1, nil)
		wait(s)
		if s.Stats().Fsyncs == before {
			break
		}
		if try == 2 {
			t.Fatal("policy no fsynced the WAL")
		}
	}
	s.SetFsync(FsyncAlways)
	s.PutValue(0, []byte("y"), 1, nil)
	wait(s)
	if got := s.Stats().Fsyncs; got == before {
		t.Fatal("policy always did not fsync the WAL")
	}
	if got := reopen(t, s); len(got) != 202 {
		t.Fatalf("loaded %d records, want 202", len(got))
	}
}

func TestParseFsync(t *testing.T) {
	for _, f := range []Fsync{FsyncAlways, FsyncEverySec, FsyncNo} {
		got, err := ParseFsync(strings.ToUpper(f.String()))
		if err != nil || got != f {
			t.Fatalf("ParseFsync(%q) = %v, %v", f, got, err)
		}
	}
	if _, err := ParseFsync("sometimes"); err == nil {
		t.Fatal("ParseFsync accepted nonsense")
	}
	var zero Options
	if zero.Fsync != FsyncEverySec {
		t.Fatal("the default policy must be everysec")
	}
}

func TestRejectedChanges(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	s.PutValue(256, []byte("k"), 1, nil)
	s.PutValue(-1, []byte("k"), 1, nil)
	if s.Barrier() != nil || s.Stats().LastCommitErr == nil {
		t.Fatal("a change for database 256 was accepted")
	}
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// After Close changes are dropped, never a panic.
	s.PutValue(0, []byte("late"), 1, nil)
	s.FlushAll()
	if s.Barrier() != nil {
		t.Fatal("closed store has a pending barrier")
	}
	if err := s.Save(); err == nil {
		t.Fatal("Save on a closed store succeeded")
	}
	s2 := openTest(t, dir, FsyncNo)
	defer s2.Close()
	sameLines(t, load(t, s2), nil)
}

func TestLoadErrors(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	defer s.Close()
	s.PutValue(0, []byte("k"), 1, []byte("v"))
	wait(s)
	l := &fakeLoader{err: fmt.Errorf("boom")}
	if _, err := s.Load(l); err == nil || !strings.Contains(err.Error(), "boom") ||
		!strings.Contains(err.Error(), fmt.Sprintf("%x", appendRecordKey(nil, 0, []byte("k"), kindValue, nil))) {
		t.Fatalf("loader error not reported with the record key: %v", err)
	}

	bad := [][2]string{
		{"k\x00\x00\x00\x00\x01k\x07", "v"},     // unknown kind
		{"k\x00\x00\x00\x00\x09k\x00", "v"},     // length past the end
		{"k\x00\x00\x00\x00\x01k\x01", "short"}, // expire not 8 bytes
		{"k\x00\x00\x00\x00\x01k\x00", ""},      // empty value record
		{"k\x00\x00\x00", "v"},                  // truncated header
	}
	for _, kv := range bad {
		if err := s.db.Set([]byte(kv[0]), []byte(kv[1]), nil); err != nil {
			t.Fatal(err)
		}
		_, err := s.Load(&fakeLoader{})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%x", kv[0])) {
			t.Fatalf("record %x: got %v", kv[0], err)
		}
		if err := s.db.Delete([]byte(kv[0]), nil); err != nil {
			t.Fatal(err)
		}
	}
}
