package persistence

import (
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/revolver-db/revolver/engine"
)

// TestPebbleHeapFollowsFlushableBatches: a batch of half a memtable or more
// is counted from its apply until a flush writes it out; a small one, which
// Pebble copies into its memtable, never is.
func TestPebbleHeapFollowsFlushableBatches(t *testing.T) {
	ph := &pebbleHeap{}
	opts := pebbleOptions(vfs.Default, slog.New(slog.DiscardHandler), 0)
	opts.ErrorIfNotExists = false
	opts.EventListener.FlushEnd = ph.flushed
	db, err := pebble.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	fill := func(b *pebble.Batch, bytes int) {
		val := make([]byte, 1000)
		for i := 0; i*len(val) < bytes; i++ {
			if err := b.Set(fmt.Appendf(nil, "k%08d", i), val, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	small := db.NewBatch()
	fill(small, 1<<20)
	if err := ph.apply(db, small); err != nil {
		t.Fatal(err)
	}
	if n := ph.bytes.Load(); n != 0 {
		t.Fatalf("a 1 MB batch, copied into the memtable, counted as %d bytes", n)
	}
	for round := 0; round < 2; round++ {
		large := db.NewBatch()
		fill(large, int(opts.MemTableSize)*3/5)
		want := int64(cap(large.Repr()))
		if err := ph.apply(db, large); err != nil {
			t.Fatal(err)
		}
		if n := ph.bytes.Load(); n != want {
			t.Fatalf("round %d: a flushable batch of %d bytes counted as %d", round, want, n)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		// The listener runs on Pebble's flush goroutine.
		deadline := time.Now().Add(10 * time.Second)
		for ph.bytes.Load() != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := ph.bytes.Load(); n != 0 {
			t.Fatalf("round %d: %d bytes still counted after a flush", round, n)
		}
	}
}

// TestIdleReleasesKeptBatch: a value larger than half a memtable goes to
// Pebble as a batch it keeps; flushed, it still stays reachable through
// Pebble's memtable queue until the queue is reallocated. Once the store
// is idle the applier makes Pebble let go of it.
func TestIdleReleasesKeptBatch(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	defer s.Close()
	live := func() int64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	start := live()
	s.PutValue(0, []byte("big"), engine.TypeString, make([]byte, 32<<20))
	applied(s)
	if !s.ap.pebble.kept.Load() {
		t.Fatal("Pebble did not keep the batch of a 32 MB value")
	}
	for deadline := time.Now().Add(4 * idleRotate); live() > start+8<<20; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d MB of heap left after %v idle (%d MB at the start)", live()>>20, 4*idleRotate, start>>20)
		}
	}
}
