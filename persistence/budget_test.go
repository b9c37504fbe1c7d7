package persistence

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/revolver-db/revolver/engine"
)

// TestBudgetShares: the shares of every cap leave room for what passes a
// share by one record, and Pebble's batches stay under the size from which
// Pebble keeps a batch whole instead of copying it into a memtable.
func TestBudgetShares(t *testing.T) {
	for _, total := range []int64{0, MinMaxMemory, 5 << 20, DefaultMaxMemory, 1 << 30, 64 << 30} {
		b := newBudget(total, 0)
		// The log's buffers and the Pebble batch grow by doubling or a
		// quarter at a time.
		sum := int64(2*b.logBatch*5/4+b.read+b.window+2*b.batch+b.held) + memTableStopWrites*b.memTable
		if sum > b.total*7/8 {
			t.Errorf("cap %d: shares add up to %d", b.total, sum)
		}
		if b.total < MinMaxMemory || b.memTable > 1<<30 || int64(b.batch)*2 >= b.memTable {
			t.Errorf("cap %d: %+v", total, b)
		}
	}
	// A runtime change keeps the memtable size the store was opened with.
	if b := newBudget(DefaultMaxMemory, 1<<20); b.memTable != 1<<20 || b.batch != (1<<20)*2/5 {
		t.Errorf("%+v", b)
	}
}

// TestMemoryCap drives writes faster than the applier (which sleeps before
// every frame) from four writers that lead their commits as event loops
// do, one of them running "scripts" of thousands of changes under the
// engine lock, with values from a few bytes to 100 KB and patches of held
// values. A sampler reads what the store holds every millisecond: it must
// never pass the cap by more than the largest record (a log batch, the
// frame read back and the window each take the record that fills them
// whole). Then every change must be in the store.
func TestMemoryCap(t *testing.T) {
	const total = MinMaxMemory
	// Twelve times the cap; three times under -short (the race run, where
	// the full volume took three minutes).
	volume := int64(48 << 20)
	if testing.Short() {
		volume = 12 << 20
	}
	s := openTunedTest(t, t.TempDir(), FsyncNo, tuning{
		maxMemory: total,
		applyHook: func() { time.Sleep(50 * time.Microsecond) },
	})
	const maxVal = 100 << 10
	var (
		engineLock sync.Mutex
		m          = model{}
		written    atomic.Int64
		stop       = make(chan struct{})
	)
	var peak, samples, maxLag atomic.Int64
	var parts string
	var samplerDone sync.WaitGroup
	samplerDone.Add(1)
	go func() {
		defer samplerDone.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			st := s.Stats()
			if st.MemoryBytes > st.HeldBytes || st.MaxMemory != total {
				t.Errorf("stats %+v", st)
			}
			samples.Add(1)
			if lag := int64(st.ApplyLagBytes); lag > maxLag.Load() {
				maxLag.Store(lag)
			}
			for n := int64(st.HeldBytes); ; {
				p := peak.Load()
				if n <= p {
					break
				}
				if peak.CompareAndSwap(p, n) {
					parts = memoryParts(s)
					break
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for written.Load() < volume {
				changes := 1 + r.IntN(100)
				if w == 0 && r.IntN(4) == 0 {
					changes = 5000 + r.IntN(20000) // a script
				}
				s.Lead()
				engineLock.Lock()
				for range changes {
					key := fmt.Appendf(nil, "k%d", r.IntN(20000))
					switch op := r.IntN(100); {
					case op < 2:
						// A large value, then patches that keep it held.
						val := make([]byte, holdMinBytes+r.IntN(maxVal-holdMinBytes))
						s.PutValue(0, key, engine.TypeString, val)
						m.set(0, key, kindValue, nil, string(append([]byte{byte(engine.TypeString)}, val...)))
						written.Add(int64(len(val)))
					case op < 10:
						off, data := r.IntN(2*holdMinBytes), fmt.Appendf(nil, "%d", r.Uint32())
						s.PatchValue(0, key, off, data)
						m.patch(0, key, off, data)
					case op < 15:
						s.DeleteKey(0, key, false)
						m.del(0, key, kindValue, nil)
						m.del(0, key, kindExpire, nil)
					default:
						val := make([]byte, r.IntN(200))
						for i := range val {
							val[i] = byte(r.Uint32())
						}
						s.PutValue(0, key, engine.TypeString, val)
						m.set(0, key, kindValue, nil, string(append([]byte{byte(engine.TypeString)}, val...)))
						written.Add(int64(len(val) + len(key)))
					}
				}
				engineLock.Unlock()
				s.Sync()
				s.EndLead()
			}
		}()
	}
	wg.Wait()
	applied(s)
	close(stop)
	samplerDone.Wait()
	// A failed apply is only logged, and the next start would replay the
	// kept log and hide it.
	if err := s.Stats().LastCommitErr; err != nil {
		t.Fatal(err)
	}
	// What may pass a share: the record that fills a log batch (its
	// buffer, up to a quarter more by append's growth), the frame read
	// back whole, the record a window takes before it spills. Each is at
	// most maxVal plus its key and header.
	const tolerance = 2 * (maxVal + 64)
	if p := peak.Load(); p > total+tolerance || samples.Load() < 100 {
		t.Fatalf("held %d bytes at peak (%s) over %d samples, cap %d", p, parts, samples.Load(), total)
	}
	// The writers outran the applier: the backlog passed the cap, in the
	// log on disk.
	if maxLag.Load() <= total {
		t.Fatalf("the apply lag peaked at %d bytes, under the cap", maxLag.Load())
	}
	t.Logf("apply lag up to %d bytes; peak %d bytes held (cap %d; %s) over %d samples, %d bytes written", maxLag.Load(), peak.Load(), total, parts, samples.Load(), written.Load())
	sameLines(t, reopen(t, s), m.lines(t))
}

// memoryParts is what Stats adds up, part by part.
func memoryParts(s *Store) string {
	s.w.mu.Lock()
	logBufs := cap(s.w.open.buf) + s.w.otherCap
	s.w.mu.Unlock()
	return fmt.Sprintf("log batches %d, applier %d, copies %d, held values %d, flushable batches %d, memtables %d",
		logBufs, s.ap.footprint.Load(), s.ap.copies.Load(), s.ap.heldValues.Load(), s.ap.pebble.bytes.Load(), s.ap.memTables.Load())
}

// TestApplierReadsPieces: the applier reads the log back in pieces of
// budget.read bytes; frames of every small size cut by a piece's end
// anywhere (in the header too), and frames larger than a piece, all
// arrive whole and in order.
func TestApplierReadsPieces(t *testing.T) {
	s := openTunedTest(t, t.TempDir(), FsyncNo, tuning{maxMemory: MinMaxMemory})
	piece := s.ap.budget.Load().read
	r := rand.New(rand.NewPCG(3, 4))
	m := model{}
	written := 0
	for i := 0; written < 8*piece; i++ {
		key := fmt.Appendf(nil, "k%04d", i%5000)
		// First frames of 30 bytes, after the segment's 8-byte header: a
		// piece of 2^17 bytes ends 2 bytes into a frame's header. Then
		// frames of random sizes.
		n := 8
		switch {
		case written >= 3*piece && i%4000 == 3999:
			n = piece + r.IntN(piece) // a frame larger than a piece
		case written >= 3*piece:
			n = r.IntN(40)
		}
		val := make([]byte, n)
		for j := range val {
			val[j] = byte(i + j)
		}
		s.Lead()
		s.PutValue(0, key, engine.TypeString, val)
		m.set(0, key, kindValue, nil, string(append([]byte{byte(engine.TypeString)}, val...)))
		s.Sync() // one frame each
		s.EndLead()
		written += frameHeaderLen + 4 + len(key) + n + (n+1)/128
	}
	applied(s)
	if err := s.Stats().LastCommitErr; err != nil {
		t.Fatal(err)
	}
	sameLines(t, reopen(t, s), m.lines(t))
}

// TestDeferredPatches: the patches of a value Pebble holds that is too
// large for half the held share are kept, not applied (only the value's
// size is read, once), until writeHeld reads it back once and applies them
// all; a value patched in the window that set it, too large, is written
// and its next patches deferred too. Another operation on the key,
// or a range deletion over it, drops them (they are older).
func TestDeferredPatches(t *testing.T) {
	key := func(s string) []byte { return appendRecordKey(nil, 0, []byte(s), kindValue, nil) }
	stored := map[string]string{
		string(key("log")):  "\x01" + strings.Repeat("a", 100),
		string(key("gone")): "\x01" + strings.Repeat("a", 100),
	}
	reads := 0
	w := window{
		holdMin: 10,
		maxHeld: 100, // values over 50 bytes are large
		base: func(k []byte, limit int) ([]byte, int, bool, error) {
			reads++
			v, ok := stored[string(k)]
			if limit >= 0 && len(v) > limit {
				return nil, len(v), ok, nil
			}
			return []byte(v), len(v), ok, nil
		},
		apply: func(b *pebble.Batch) error {
			for _, kv := range batchKVs(t, b) {
				if kv[1] == nil {
					delete(stored, *kv[0])
				} else {
					stored[*kv[0]] = *kv[1]
				}
			}
			b.Reset()
			return nil
		},
	}
	b := testBatch(t)
	flush := func() {
		t.Helper()
		if err := w.flush(b); err != nil {
			t.Fatal(err)
		}
		if err := w.apply(b); err != nil {
			t.Fatal(err)
		}
	}
	w.addPatch(0, []byte("log"), 100, []byte("b"))
	w.addPatch(0, []byte("gone"), 100, []byte("b"))
	flush() // too large to hold (only the size is read): marked large, patches deferred
	if reads != 2 || stored[string(key("log"))] != "\x01"+strings.Repeat("a", 100) || len(w.large) != 2 {
		t.Fatalf("%d reads, large %v, stored %q", reads, w.large, stored[string(key("log"))])
	}
	// A value patched in the window where it was set, and then too large,
	// is written and marked large.
	w.add(0, []byte("new"), kindValue, nil, []byte("\x01"+strings.Repeat("n", 40)), false)
	w.addPatch(0, []byte("new"), 40, []byte(strings.Repeat("m", 20)))
	flush()
	if _, ok := w.large[string(key("new"))]; !ok || len(stored[string(key("new"))]) != 61 {
		t.Fatalf("large %v, stored %q", w.large, stored[string(key("new"))])
	}
	w.dropHeld(key("new"))
	for i := range 3 {
		w.addPatch(0, []byte("log"), 101+i, []byte("c"))
		w.addPatch(0, []byte("gone"), 101+i, []byte("c"))
		flush()
	}
	// Patches one after another (APPENDs) are kept as one.
	if d := w.deferred[string(key("log"))]; len(d.patches) != 1 || string(d.data) != "bccc" {
		t.Fatalf("deferred %+v", d)
	}
	w.add(0, []byte("gone"), kindValue, nil, nil, true) // its patches are older
	flush()
	if n := w.deferred[string(key("log"))].bytes(); w.heldBytes != n {
		t.Fatalf("held bytes %d, the deferred patches' %d", w.heldBytes, n)
	}
	if reads != 2 || stored[string(key("log"))] != "\x01"+strings.Repeat("a", 100) || len(w.deferred) != 1 || w.heldBytes == 0 {
		t.Fatalf("after deferring: %d reads, %d keys deferred (%d bytes), stored %q", reads, len(w.deferred), w.heldBytes, stored[string(key("log"))])
	}
	if err := w.writeHeld(b); err != nil {
		t.Fatal(err)
	}
	if err := w.apply(b); err != nil {
		t.Fatal(err)
	}
	if want := "\x01" + strings.Repeat("a", 100) + "bccc"; reads != 3 || stored[string(key("log"))] != want || w.heldBytes != 0 || w.holding() {
		t.Fatalf("after writeHeld: %d reads, held %d bytes, stored %q, want %q", reads, w.heldBytes, stored[string(key("log"))], want)
	}
	if _, ok := stored[string(key("gone"))]; ok {
		t.Fatal("the deleted key came back")
	}
	// Still large: the next patch is deferred again; a range deletion
	// over the key drops it, and the mark.
	w.addPatch(0, []byte("log"), 0, []byte("x"))
	flush()
	w.dropHeldSpan(key("log"), append(key("log"), 0xff))
	if w.holding() || len(w.large) != 0 || w.heldBytes != 0 {
		t.Fatalf("after a range deletion: %d deferred, %d large, %d bytes", len(w.deferred), len(w.large), w.heldBytes)
	}
}

// batchKVs is b's operations as key and value; a deletion's value is nil.
func batchKVs(t *testing.T, b *pebble.Batch) [][2]*string {
	t.Helper()
	r := b.Reader()
	var kvs [][2]*string
	for {
		kind, key, val, ok, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return kvs
		}
		k, v := string(key), string(val)
		kv := [2]*string{&k, &v}
		if kind == pebble.InternalKeyKindDelete {
			kv[1] = nil
		}
		kvs = append(kvs, kv)
	}
}

// TestDeferredPatchesThroughStore: APPENDs and patches anywhere (inside
// the value, past its end) to a value too large to hold
// under the cap, through the store, with windows cut by the applier's
// passes and segments retired as they fill: the loaded value is the
// model's, also after a crash once the store was idle.
func TestDeferredPatchesThroughStore(t *testing.T) {
	dir := t.TempDir()
	s := openTunedTest(t, dir, FsyncNo, tuning{maxMemory: MinMaxMemory, segmentBytes: 256 << 10})
	m := model{}
	big := []byte(strings.Repeat("a", 600<<10)) // over half the 1 MB held share
	s.PutValue(0, []byte("log"), engine.TypeString, big)
	s.PutValue(0, []byte("small"), engine.TypeString, []byte("x"))
	m.set(0, []byte("small"), kindValue, nil, "\x01x")
	want := append([]byte{byte(engine.TypeString)}, big...)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20000 {
		data := fmt.Appendf(nil, "line %d\n", i)
		off := len(want) - 1 // APPEND
		if i%3 == 0 {
			off = r.IntN(len(want) + 100) // SETRANGE or SETBIT, possibly past the end
		}
		s.Lead()
		s.PatchValue(0, []byte("log"), off, data)
		s.Sync()
		s.EndLead()
		if end := 1 + off + len(data); end > len(want) {
			want = append(want, make([]byte, end-len(want))...)
		}
		copy(want[1+off:], data)
		if i%2000 == 0 {
			time.Sleep(300 * time.Millisecond) // a pass of its own
		}
	}
	m.set(0, []byte("log"), kindValue, nil, string(want))
	applied(s)
	if err := s.Stats().LastCommitErr; err != nil {
		t.Fatal(err)
	}
	sameLines(t, load(t, s), m.lines(t))
	crash(t, s)
	s = openTest(t, dir, FsyncNo)
	sameLines(t, reopen(t, s), m.lines(t))
}
