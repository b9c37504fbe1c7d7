package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/revolver-db/revolver/engine"
)

// model is the store as a map from Pebble key to value, changed the way
// the change calls describe.
type model map[string]string

func (m model) set(db int, key []byte, kind byte, item []byte, val string) {
	m[string(appendRecordKey(nil, db, key, kind, item))] = val
}

func (m model) del(db int, key []byte, kind byte, item []byte) {
	delete(m, string(appendRecordKey(nil, db, key, kind, item)))
}

// patch overwrites bytes of a value record's payload (after its type
// byte), extending it with zeros as far as the patch needs.
func (m model) patch(db int, key []byte, off int, data []byte) {
	k := string(appendRecordKey(nil, db, key, kindValue, nil))
	v, ok := m[k]
	if !ok || v == "" {
		return
	}
	b := []byte(v)
	if end := 1 + off + len(data); end > len(b) {
		b = append(b, make([]byte, end-len(b))...)
	}
	copy(b[1+off:], data)
	m[k] = string(b)
}

func (m model) delRange(start, end []byte) {
	for k := range m {
		if k >= string(start) && k < string(end) {
			delete(m, k)
		}
	}
}

// lines renders m as Load would feed it to fakeLoader.
func (m model) lines(t *testing.T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var l fakeLoader
	n := 0
	for _, k := range keys {
		if err := loadRecord(&l, []byte(k), []byte(m[k]), &n); err != nil {
			t.Fatal(err)
		}
	}
	return l.lines
}

// randomOps applies n random changes to s and m, with barriers at random
// so that windows span batches and batches split windows anywhere.
func randomOps(s *Store, m model, r *rand.Rand, n int) {
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("ab"), []byte(""), []byte("a\x00")}
	items := [][]byte{[]byte("x"), []byte("y"), nil}
	for range n {
		db := r.IntN(3)
		key := keys[r.IntN(len(keys))]
		item := items[r.IntN(len(items))]
		val := fmt.Sprint(r.IntN(1000))
		switch op := r.IntN(100); {
		case op < 20:
			typ := byte(1 + r.IntN(3))
			s.PutValue(db, key, engine.Type(typ), []byte(val))
			m.set(db, key, kindValue, nil, string([]byte{typ})+val)
		case op < 25:
			// A patch of the value's payload, inside it, ending past it
			// or starting past it (APPEND, SETRANGE and SETBIT growing a
			// string).
			off, data := r.IntN(6), []byte(fmt.Sprint(r.IntN(100)))
			s.PatchValue(db, key, off, data)
			m.patch(db, key, off, data)
		case op < 35:
			at := r.Int64N(1 << 40)
			s.PutExpire(db, key, at)
			b := make([]byte, 8)
			putExpire(b, at)
			m.set(db, key, kindExpire, nil, string(b))
		case op < 42:
			s.DeleteExpire(db, key)
			m.del(db, key, kindExpire, nil)
		case op < 65:
			s.PutItem(db, key, item, []byte(val))
			m.set(db, key, kindItem, item, val)
		case op < 72:
			s.DeleteItem(db, key, item)
			m.del(db, key, kindItem, item)
		case op < 75:
			// One item range, or two that touch (as pops off one end
			// make them), in either order.
			bounds := [][]byte{nil, []byte("x"), []byte("xa"), []byte("y"), []byte("z")}
			i := r.IntN(len(bounds) - 1)
			j := i + 1 + r.IntN(len(bounds)-1-i)
			runs := [][2][]byte{{bounds[i], bounds[j]}}
			if j+1 < len(bounds) && r.IntN(2) == 0 {
				runs = append(runs, [2][]byte{bounds[j], bounds[j+1]})
				if r.IntN(2) == 0 {
					runs[0], runs[1] = runs[1], runs[0]
				}
			}
			for _, run := range runs {
				s.DeleteItemRange(db, key, run[0], run[1])
				m.delRange(appendRecordKey(nil, db, key, kindItem, run[0]), appendRecordKey(nil, db, key, kindItem, run[1]))
			}
		case op < 85:
			s.DeleteKey(db, key, false)
			m.del(db, key, kindValue, nil)
			m.del(db, key, kindExpire, nil)
		case op < 95:
			s.DeleteKey(db, key, true)
			m.delRange(appendRecordKey(nil, db, key, kindValue, nil), appendRecordKey(nil, db, key, kindEnd, nil))
		case op < 98:
			s.FlushDB(db)
			start, end := make([]byte, dbStartLen), make([]byte, dbEndLen(db))
			putDBBounds(start, end, db)
			m.delRange(start, end)
		default:
			s.FlushAll()
			m.delRange([]byte{keyspaceTag}, []byte{keyspaceEnd})
		}
		if r.IntN(20) == 0 {
			wait(s)
		}
	}
}

// TestApplyMatchesModel runs random change sequences through the store and
// compares what loads back, after a clean close and after a crash whose
// log is replayed, with the model.
//
// It runs once holding no patched value between windows and once holding
// every one (window.held), whatever its length.
func TestApplyMatchesModel(t *testing.T) {
	for _, hold := range []int{-1, 1} {
		for seed := range uint64(12) {
			t.Run(fmt.Sprintf("hold%d/%d", hold, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 7))
				m := model{}
				s := openTunedTest(t, t.TempDir(), FsyncNo, tuning{holdMin: hold})
				randomOps(s, m, r, 400)
				sameLines(t, load(t, s), m.lines(t))
				randomOps(s, m, r, 400)
				sameLines(t, reopen(t, s), m.lines(t))

				// The same through replay, of a log the applier may have
				// applied any part of.
				dir := t.TempDir()
				s = openTunedTest(t, dir, FsyncNo, tuning{keepLog: true, holdMin: hold})
				m = model{}
				randomOps(s, m, r, 400)
				wait(s)
				crash(t, s)
				s = openTest(t, dir, FsyncNo)
				sameLines(t, reopen(t, s), m.lines(t))
			})
		}
	}
}

func TestWindowDedupAndOrder(t *testing.T) {
	var w window
	b := testBatch(t)
	k := []byte("k")
	w.add(0, k, kindValue, nil, []byte("1"), false)
	w.add(0, k, kindItem, []byte("z"), []byte("z"), false)
	w.add(0, k, kindValue, nil, nil, true)
	w.add(0, k, kindItem, []byte("a"), []byte("a"), false)
	w.add(0, k, kindValue, nil, []byte("2"), false)
	w.add(0, []byte("j"), kindValue, nil, []byte("3"), false)
	if err := w.flush(b); err != nil {
		t.Fatal(err)
	}
	if b.Count() != 4 {
		t.Fatalf("batch has %d operations, want 4 after deduplication", b.Count())
	}
	got := batchLines(t, b, func(_ pebble.InternalKeyKind, rk recordKey, val []byte) string {
		return fmt.Sprintf("%s/%d/%s=%s", rk.Key, rk.Kind, rk.Item, val)
	})
	sameLines(t, got, []string{"j/0/=3", "k/0/=2", "k/2/a=a", "k/2/z=z"})
}

// TestWindowClearSpan checks how a FLUSHALL leaves the window: as a range
// deletion when Pebble holds little in the span or cannot excise it, else
// as an excision after what came before it is applied.
func TestWindowClearSpan(t *testing.T) {
	for _, tc := range []struct {
		name      string
		usage     uint64
		exciseErr error
		applied   []string // what the window applied before excising
		excised   bool
		batch     []string // what the batch holds afterwards
	}{
		{name: "small", usage: exciseMinBytes - 1, batch: []string{"SET k", "RANGEDEL"}},
		{name: "large", usage: exciseMinBytes, applied: []string{"SET k"}, excised: true},
		{name: "excise fails", usage: exciseMinBytes, exciseErr: errors.New("no"), applied: []string{"SET k"}, batch: []string{"RANGEDEL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := testBatch(t)
			show := func(kind pebble.InternalKeyKind, rk recordKey, _ []byte) string {
				if kind == pebble.InternalKeyKindRangeDelete {
					return kind.String()
				}
				return kind.String() + " " + string(rk.Key)
			}
			var applied []string
			excised := false
			w := window{
				apply: func(b *pebble.Batch) error {
					applied = append(applied, batchLines(t, b, show)...)
					b.Reset()
					return nil
				},
				diskUsage: func(start, end []byte) uint64 { return tc.usage },
				excise: func(start, end []byte) error {
					if string(start) != string([]byte{keyspaceTag}) || string(end) != string([]byte{keyspaceEnd}) {
						t.Errorf("excised [%q, %q), want the keyspace", start, end)
					}
					excised = tc.exciseErr == nil
					return tc.exciseErr
				},
			}
			w.add(0, []byte("k"), kindValue, nil, []byte("v"), false)
			if err := w.addChange(b, &change{op: opFlushAll}); err != nil {
				t.Fatal(err)
			}
			sameLines(t, applied, tc.applied)
			if excised != tc.excised {
				t.Errorf("excised: %v, want %v", excised, tc.excised)
			}
			sameLines(t, batchLines(t, b, show), tc.batch)
		})
	}
}

// testBatch is an empty batch of a fresh store, for windows to write into.
func testBatch(t *testing.T) *pebble.Batch {
	s := openTest(t, t.TempDir(), FsyncNo)
	b := s.db.NewBatch()
	t.Cleanup(func() {
		b.Close()
		s.Close()
	})
	return b
}

// batchLines renders each operation of b, in order, with show.
func batchLines(t *testing.T, b *pebble.Batch, show func(kind pebble.InternalKeyKind, rk recordKey, val []byte) string) []string {
	t.Helper()
	r := b.Reader()
	var got []string
	for {
		kind, key, val, ok, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return got
		}
		rk, _ := decodeRecordKey(key)
		got = append(got, show(kind, rk, val))
	}
}

// TestWindowPatches checks how value patches resolve in a window: onto the
// whole value before them in the window, else onto the value Pebble holds
// (after the batch's earlier windows are applied), extending the value when
// they reach past its end, and not at all without a value.
func TestWindowPatches(t *testing.T) {
	b := testBatch(t)
	stored := map[string]string{string(appendRecordKey(nil, 0, []byte("p"), kindValue, nil)): "\x01abc"}
	applied := 0
	w := window{
		base: func(key []byte, _ int) ([]byte, int, bool, error) {
			v, ok := stored[string(key)]
			return []byte(v), len(v), ok, nil
		},
		apply: func(b *pebble.Batch) error {
			applied++
			b.Reset()
			return nil
		},
	}
	key := func(s string) []byte { return []byte(s) }
	w.add(0, key("w"), kindValue, nil, []byte("\x01hello"), false)
	w.addPatch(0, key("w"), 1, []byte("EY"))
	w.addPatch(0, key("w"), 3, []byte("!"))
	w.addPatch(0, key("w"), 4, []byte("??")) // ends past the end
	w.addPatch(0, key("p"), 1, []byte("Z"))  // onto Pebble's value
	w.addPatch(0, key("p"), 5, []byte("G"))  // starts past its end
	w.addPatch(0, key("missing"), 0, []byte("x"))
	w.add(0, key("d"), kindValue, nil, []byte("\x01abc"), false)
	w.add(0, key("d"), kindValue, nil, nil, true)
	w.addPatch(0, key("d"), 0, []byte("x"))
	if err := b.Set([]byte("earlier window"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.flush(b); err != nil {
		t.Fatal(err)
	}
	if applied != 1 {
		t.Fatalf("the batch was applied %d times before reading Pebble's values, want 1", applied)
	}
	got := batchLines(t, b, func(kind pebble.InternalKeyKind, rk recordKey, val []byte) string {
		return fmt.Sprintf("%s %s=%q", kind, rk.Key, val)
	})
	want := []string{"DEL d=\"\"", "SET p=\"\\x01aZc\\x00\\x00G\"", "SET w=\"\\x01hEY!??\""}
	if !slices.Equal(got, want) {
		t.Fatalf("batch holds %q, want %q", got, want)
	}
}

// TestPatchBytes checks patchBytes's cases: a value it does not own is never
// written, spare capacity is zeroed where a patch leaves a gap, and growth
// keeps capacity, so many appends in one window make few copies.
func TestPatchBytes(t *testing.T) {
	record := []byte("\x01abc")
	got, owned := patchBytes(record, false, 2, []byte("X"))
	if string(got) != "\x01aXc" || !owned || string(record) != "\x01abc" {
		t.Fatalf("in place onto a record: %q owned=%v, record now %q", got, owned, record)
	}
	got, _ = patchBytes(record, false, 6, []byte("Z"))
	if string(got) != "\x01abc\x00\x00Z" || string(record) != "\x01abc" {
		t.Fatalf("past the end of a record: %q, record now %q", got, record)
	}
	dirty := append(make([]byte, 0, 16), "\x01abc"...)
	copy(dirty[:16][4:], "garbage!garbage!")
	got, _ = patchBytes(dirty, true, 7, []byte("Q"))
	if string(got) != "\x01abc\x00\x00\x00Q" {
		t.Fatalf("gap in spare capacity: %q", got)
	}

	data := []byte("0123456789abcdef0123456789abcdef")
	cur, own := bytes.Repeat([]byte{1}, 1<<20), false
	allocs := testing.AllocsPerRun(1, func() {
		c, o := cur, own
		for range 10000 {
			c, o = patchBytes(c, o, len(c), data)
		}
		if len(c) != 1<<20+10000*len(data) {
			t.Fatalf("after 10000 appends the value has %d bytes", len(c))
		}
	})
	if allocs > 4 {
		t.Fatalf("10000 appends of 32 bytes to a 1 MB value allocated %v times, want a few", allocs)
	}
}

// TestWindowItemRanges checks how item range deletions and point operations
// of one window combine: a point that arrived before a range covering it is
// dropped, one that arrived after survives, and touching ranges become one.
func TestWindowItemRanges(t *testing.T) {
	var w window
	b := testBatch(t)
	k := []byte("k")
	w.add(0, k, kindItem, []byte("b"), []byte("before"), false)
	w.add(0, k, kindItem, []byte("e"), []byte("outside"), false)
	w.addItemRange(0, k, []byte("c"), []byte("d")) // touches the next one
	w.addItemRange(0, k, []byte("a"), []byte("c"))
	w.add(0, k, kindItem, []byte("c"), []byte("after"), false)
	w.addItemRange(0, k, []byte("x"), []byte("y"))
	w.add(0, k, kindItem, []byte("b"), []byte("b again"), false)
	w.addItemRange(0, k, []byte("b"), []byte("b\x00")) // deletes "b again"
	w.addItemRange(0, k, []byte("d"), []byte("e"))     // touches [a, d) but not in arrival order
	if err := w.flush(b); err != nil {
		t.Fatal(err)
	}
	got := batchLines(t, b, func(kind pebble.InternalKeyKind, rk recordKey, val []byte) string {
		if kind == pebble.InternalKeyKindRangeDelete {
			end, _ := decodeRecordKey(val)
			return fmt.Sprintf("del [%s, %s)", rk.Item, end.Item)
		}
		return fmt.Sprintf("%s=%s", rk.Item, val)
	})
	want := []string{"del [a, e)", "del [x, y)", "c=after", "e=outside"}
	if !slices.Equal(got, want) {
		t.Fatalf("batch holds %q, want %q", got, want)
	}
}

// TestWindowSort checks that a window sorts into plain byte order with
// arrival order kept among equal keys, whatever the keys share, on both
// sides of the radix sort's threshold.
func TestWindowSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for round := range 300 {
		var w window
		prefix := strings.Repeat("p", r.IntN(12))
		n := 1 + r.IntN(50)
		if round%3 == 0 {
			n = radixMinEntries + r.IntN(2000)
		}
		for range n {
			k := []byte(prefix)
			for range r.IntN(12) {
				k = append(k, "\x00\x01ab\xff"[r.IntN(5)])
			}
			w.add(0, k, kindItem, k[:r.IntN(len(k)+1)], nil, true)
		}
		if round%5 == 1 {
			// Positions pushed one after another, up or down (LPUSH,
			// RPUSH), sometimes with a repeat that breaks the run.
			w = window{}
			step := 1 - 2*r.IntN(2)
			for i := range 3 + r.IntN(600) {
				var k [8]byte
				binary.BigEndian.PutUint64(k[:], uint64(1000+step*i))
				w.add(0, []byte("list"), kindItem, k[:], nil, false)
			}
			if r.IntN(2) == 0 {
				last := w.ents[len(w.ents)-1]
				w.add(0, []byte("list"), kindItem, w.key(last)[len(w.key(last))-8:], nil, true)
			}
		}
		want := slices.Clone(w.ents)
		slices.SortStableFunc(want, func(x, y entry) int { return bytes.Compare(w.key(x), w.key(y)) })
		w.sort()
		for i, e := range w.ents {
			if e.idx != want[i].idx {
				t.Fatalf("round %d, position %d: entry %d (%q), want %d (%q)", round, i, e.idx, w.key(e),
					want[i].idx, w.key(want[i]))
			}
		}
	}
}

// TestReplayIdempotent is a crash after Pebble has applied the log but
// before the segments were deleted: the restart replays history Pebble
// already holds, over state that later changes made, and must end where
// the history did.
func TestReplayIdempotent(t *testing.T) {
	dir := t.TempDir()
	s := openTunedTest(t, dir, FsyncNo, tuning{keepLog: true})
	r := rand.New(rand.NewPCG(3, 3))
	m := model{}
	randomOps(s, m, r, 500)
	applied(s)
	crash(t, s)
	if len(segments(t, dir)) == 0 {
		t.Fatal("no segment kept")
	}
	for range 2 {
		s = openTunedTest(t, dir, FsyncNo, tuning{keepLog: true})
		sameLines(t, load(t, s), m.lines(t))
		// Replay deleted the segments it applied; make new ones and crash
		// again after they are applied.
		randomOps(s, m, r, 200)
		applied(s)
		crash(t, s)
	}
	s = openTest(t, dir, FsyncNo)
	sameLines(t, reopen(t, s), m.lines(t))
}

// TestBackpressure stalls the applier: writers must stop at the backlog
// bound, and go on once it catches up.
func TestBackpressure(t *testing.T) {
	const bound = 64 << 10
	release := make(chan struct{})
	s := openTunedTest(t, t.TempDir(), FsyncNo, tuning{
		maxBacklog: bound,
		applyHook:  func() { <-release },
	})
	val := bytes.Repeat([]byte("v"), 1000)
	var done atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 1000 {
			s.PutValue(0, fmt.Appendf(nil, "k%04d", i), 1, val)
			done.Add(1)
		}
	}()
	// The writer blocks once the backlog passes the bound.
	var stuck int64
	for deadline := time.Now().Add(10 * time.Second); ; {
		n := done.Load()
		time.Sleep(100 * time.Millisecond)
		if n == done.Load() && n > 0 {
			stuck = n
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writer never blocked")
		}
	}
	st := s.Stats()
	if stuck >= 1000 || st.ApplyLagBytes > bound+2000 || st.ApplyLagBytes < bound {
		t.Fatalf("writer stopped after %d changes with a backlog of %d bytes (bound %d)", stuck, st.ApplyLagBytes, bound)
	}
	// The backlog waits in the log on disk, not in memory.
	if st.HeldBytes > st.MaxMemory || st.MemoryBytes > st.HeldBytes {
		t.Fatalf("held %d bytes (%d in the Go heap) under a cap of %d", st.HeldBytes, st.MemoryBytes, st.MaxMemory)
	}
	// The change that blocked is encoded too.
	if st.ApplyLag != uint64(stuck)+1 || st.Applied != 0 {
		t.Fatalf("stats %+v after %d changes", st, stuck)
	}
	close(release)
	wg.Wait()
	// Behind by more than half the bound, the applier worked at normal
	// priority (applyInTime).
	if s.urgentApplies.Load() == 0 {
		t.Fatal("a backlog at its bound was applied at the applier's low priority only")
	}
	if got := reopen(t, s); len(got) != 1000 {
		t.Fatalf("loaded %d records", len(got))
	}
}

// TestHeldValues follows a patched value the applier holds between windows:
// Pebble lacks it while it is held, a reader waiting for the store gets it
// written, and a retired segment's held value is in Pebble before the
// segment goes, so a crash right after loses nothing.
func TestHeldValues(t *testing.T) {
	key := appendRecordKey(nil, 0, []byte("k"), kindValue, nil)
	inPebble := func(s *Store) string {
		t.Helper()
		v, closer, err := s.db.Get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			return "(none)"
		}
		if err != nil {
			t.Fatal(err)
		}
		defer closer.Close()
		return string(v)
	}
	idle := func(s *Store) {
		t.Helper()
		wait(s)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			s.w.mu.Lock()
			n := s.w.unapplied
			s.w.mu.Unlock()
			if n == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d records still unapplied", n)
			}
		}
	}

	s := openTunedTest(t, t.TempDir(), FsyncNo, tuning{holdMin: 1})
	s.PutValue(0, []byte("k"), engine.TypeString, []byte("hello"))
	s.PatchValue(0, []byte("k"), 5, []byte("!"))
	idle(s)
	if got := inPebble(s); got != "(none)" {
		t.Fatalf("Pebble holds %q while the value should be held", got)
	}
	sameLines(t, load(t, s), []string{`value 0 "k" 1 "hello!"`})
	if got := inPebble(s); got != "\x01hello!" {
		t.Fatalf("after Load, Pebble holds %q", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Every batch ends its segment (segmentBytes 1), so once the applier
	// is done no segment is left, and Pebble alone has the value.
	dir := t.TempDir()
	s = openTunedTest(t, dir, FsyncNo, tuning{holdMin: 1, segmentBytes: 1})
	s.PutValue(0, []byte("k"), engine.TypeString, []byte("hello"))
	idle(s)
	s.PatchValue(0, []byte("k"), 5, []byte("?"))
	idle(s)
	for deadline := time.Now().Add(10 * time.Second); len(segments(t, dir)) > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("segments not retired: %q", segments(t, dir))
		}
	}
	crash(t, s)
	s = openTest(t, dir, FsyncNo)
	sameLines(t, reopen(t, s), []string{`value 0 "k" 1 "hello?"`})
}

// TestIdleTrim: once the store has been quiet for idleRotate, the buffers a
// burst grew (the applier's read buffer, window and batch, the log's batch
// buffers) are given back.
func TestIdleTrim(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	defer s.Close()
	big := bytes.Repeat([]byte("v"), 1<<20)
	for i := range 20 {
		s.PutValue(0, fmt.Appendf(nil, "k%d", i), engine.TypeString, big)
		wait(s)
	}
	applied(s)
	trimmed := func() bool {
		applier := s.ap.footprint.Load()
		s.w.mu.Lock()
		defer s.w.mu.Unlock()
		return applier <= 16<<10 && cap(s.w.bufs[0].buf) <= initialBatchBytes && cap(s.w.bufs[1].buf) <= initialBatchBytes
	}
	for deadline := time.Now().Add(3 * idleRotate); !trimmed(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v idle, the applier holds %d bytes, or grown batch buffers remain", 3*idleRotate, s.ap.footprint.Load())
		}
	}
	// The store still works after the trim.
	s.PutValue(0, []byte("after"), engine.TypeString, []byte("x"))
	lines := load(t, s)
	if len(lines) != 21 {
		t.Fatalf("loaded %d records, want 21", len(lines))
	}
}
