package persistence

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/revolver-db/revolver/persistence/powercut"
)

// Power-cut tests (issue 31 item 7). kill -9 keeps the page cache, so the
// crash tests cannot tell always from everysec; here the store runs on
// vfs.NewCrashableMem and powercut.Cut keeps only what was synced.

const cutDir = "/data"

var cutLog = filepath.Join(cutDir, logName)

func openOn(t testing.TB, fsys vfs.FS, f Fsync, tn tuning) *Store {
	t.Helper()
	if tn.maxBacklog == 0 {
		tn.maxBacklog = maxBacklog
	}
	if tn.segmentBytes == 0 {
		tn.segmentBytes = segmentBytes
	}
	s, err := openTuned(Options{Dir: cutDir, Fsync: f, Logger: quiet, FS: fsys}, tn)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keysAfterCut opens the store on what the cut left and returns its keys.
func keysAfterCut(t *testing.T, cut vfs.FS) map[string]bool {
	t.Helper()
	s := openOn(t, cut, FsyncNo, tuning{})
	defer s.Close()
	keys := map[string]bool{}
	for _, l := range load(t, s) {
		if k, ok := strings.CutPrefix(l, "value 0 "); ok {
			k, err := strconv.Unquote(strings.Fields(k)[0])
			if err != nil {
				t.Fatal(err)
			}
			keys[k] = true
		}
	}
	return keys
}

func put(s *Store, key string) {
	s.PutValue(0, []byte(key), 1, []byte(key))
}

// blockApplier holds the applier before its first batch until the returned
// func runs: nothing reaches Pebble, and the applier never closes (and so
// syncs) the active segment after a quiet second.
func blockApplier() (tuning, func()) {
	ch := make(chan struct{})
	var once sync.Once
	return tuning{applyHook: func() { <-ch }}, func() { once.Do(func() { close(ch) }) }
}

// TestPowerCutAlways: under always, every write acknowledged before the
// cut survives it, while writers keep going, segments rotate every 4 KB and
// the applier has synced Pebble and deleted the first ones.
func TestPowerCutAlways(t *testing.T) {
	mem := vfs.NewCrashableMem()
	// The hook runs before each batch the applier applies: once it runs
	// after applied(s), the pass that retired the first segments is done.
	var armed atomic.Bool
	nextPass := make(chan struct{}, 1)
	hook := func() {
		if armed.Load() {
			select {
			case nextPass <- struct{}{}:
			default:
			}
		}
	}
	s := openOn(t, mem, FsyncAlways, tuning{segmentBytes: 4 << 10, applyHook: hook})
	const enough = 1000
	var engineLock, ackMu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	reached := []chan struct{}{make(chan struct{}), make(chan struct{})}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("w%d-%d", w, i)
				engineLock.Lock()
				put(s, key)
				ch := s.Barrier()
				engineLock.Unlock()
				if ch != nil {
					<-ch
				}
				ackMu.Lock()
				if acked = append(acked, key); len(acked)%enough == 0 && len(acked)/enough <= len(reached) {
					close(reached[len(acked)/enough-1])
				}
				ackMu.Unlock()
			}
		}()
	}
	<-reached[0]
	applied(s)
	armed.Store(true)
	<-nextPass
	<-reached[1]
	ackMu.Lock()
	before := slices.Clone(acked) // acknowledged before the cut
	ackMu.Unlock()
	cut := powercut.Cut(mem)
	close(stop)
	wg.Wait()
	crash(t, s)
	if st := s.Stats(); st.Fsyncs < 100 {
		t.Fatalf("%d fsyncs for %d acknowledged writes", st.Fsyncs, len(before))
	}
	segs, err := listSegments(cut, cutLog)
	if err != nil || len(segs) == 0 || segs[0] == 1 {
		t.Fatalf("segments left by the cut: %v, %v; want the first ones applied and deleted", segs, err)
	}
	keys := keysAfterCut(t, cut)
	for _, k := range before {
		if !keys[k] {
			t.Fatalf("acknowledged write %s lost in the power cut (%d of %d kept)", k, len(keys), len(before))
		}
	}
}

// TestPowerCutEverySec: the ticker's fsync keeps everything acknowledged
// before it; what is acknowledged after it and before the next is lost,
// which shows the cut drops what was not synced.
func TestPowerCutEverySec(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fsys := powercut.Wrap(mem, cutLog)
	tick := make(chan time.Time)
	tn, unblock := blockApplier()
	tn.tick = tick
	s := openOn(t, fsys, FsyncEverySec, tn)
	defer unblock()
	for i := range 100 {
		put(s, fmt.Sprint("a", i))
		wait(s)
	}
	synced := fsys.SyncedTo(fsys.Syncs() + 1)
	tick <- time.Now()
	select {
	case <-synced:
	case <-time.After(10 * time.Second):
		t.Fatal("the everysec tick did not fsync the log")
	}
	for i := range 100 {
		put(s, fmt.Sprint("b", i))
		wait(s)
	}
	cut := powercut.Cut(mem)
	unblock()
	crash(t, s)
	keys := keysAfterCut(t, cut)
	for i := range 100 {
		if k := fmt.Sprint("a", i); !keys[k] {
			t.Fatalf("%s, acknowledged before the fsync tick, lost", k)
		}
		if k := fmt.Sprint("b", i); keys[k] {
			t.Fatalf("%s, acknowledged after the last fsync tick, survived: the power cut keeps unsynced data", k)
		}
	}
}

// TestPowerCutNoFsync: with appendfsync no and nothing else syncing,
// everything acknowledged is lost, and the store still opens.
func TestPowerCutNoFsync(t *testing.T) {
	mem := vfs.NewCrashableMem()
	tn, unblock := blockApplier()
	s := openOn(t, mem, FsyncNo, tn)
	defer unblock()
	for i := range 100 {
		put(s, fmt.Sprint("k", i))
		wait(s)
	}
	cut := powercut.Cut(mem)
	unblock()
	crash(t, s)
	if keys := keysAfterCut(t, cut); len(keys) != 0 {
		t.Fatalf("%d unsynced writes survived the power cut", len(keys))
	}
}

// TestAlwaysAckWaitsForFsync: under always, a write is acknowledged (its
// Barrier channel closed, or Sync returned) only once its fsync returned.
func TestAlwaysAckWaitsForFsync(t *testing.T) {
	dir := t.TempDir()
	fsys := powercut.Wrap(vfs.Default, filepath.Join(dir, logName))
	s, err := Open(Options{Dir: dir, Fsync: FsyncAlways, Logger: quiet, FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer fsys.Release()
	held := func(t *testing.T, acked <-chan struct{}) {
		t.Helper()
		defer fsys.Release() // a failure must not leave Close waiting
		select {
		case <-fsys.Waiting():
		case <-acked:
			t.Fatal("acknowledged without waiting for an fsync")
		case <-time.After(10 * time.Second):
			t.Fatal("no fsync")
		}
		select {
		case <-acked:
			t.Fatal("acknowledged while its fsync is held")
		default:
		}
		fsys.Release()
		select {
		case <-acked:
		case <-time.After(10 * time.Second):
			t.Fatal("not acknowledged once its fsync returned")
		}
	}
	t.Run("Barrier", func(t *testing.T) {
		fsys.Hold()
		put(s, "barrier")
		held(t, s.Barrier())
	})
	t.Run("Sync", func(t *testing.T) {
		fsys.Hold()
		s.Lead()
		put(s, "sync")
		done := make(chan struct{})
		go func() {
			s.Sync()
			s.EndLead()
			close(done)
		}()
		held(t, done)
	})
	lines := reopen(t, s)
	if len(lines) != 2 {
		t.Fatalf("records after reopening: %q", lines)
	}
}

// TestOneWritePerCommit: a group commit is one write to the log on the OS's
// file system, and under always one fsync, which Stats counts.
func TestOneWritePerCommit(t *testing.T) {
	for _, policy := range []Fsync{FsyncAlways, FsyncEverySec} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := t.TempDir()
			fsys := powercut.Wrap(vfs.Default, filepath.Join(dir, logName))
			s, err := Open(Options{Dir: dir, Fsync: policy, Logger: quiet, FS: fsys})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i := range 50 {
				for j := range 10 {
					put(s, fmt.Sprint(i, "-", j))
				}
				wait(s)
			}
			st := s.Stats()
			s.commitMu.Lock()
			segs := s.nextSeg - 1 // each began with a write of its header
			s.commitMu.Unlock()
			if w := fsys.Writes(); uint64(w) != st.Commits+segs {
				t.Fatalf("%d writes for %d commits in %d segments", w, st.Commits, segs)
			}
			if policy == FsyncAlways && (uint64(fsys.Syncs()) != st.Fsyncs || st.Fsyncs != st.Commits) {
				t.Fatalf("%d fsyncs counted, %d made, for %d commits", st.Fsyncs, fsys.Syncs(), st.Commits)
			}
		})
	}
}

// TestTornTailWithoutTruncate: on a file system whose files cannot be
// truncated (the in-memory one), a torn end of the log is still dropped
// and what comes before it replayed.
func TestTornTailWithoutTruncate(t *testing.T) {
	mem := vfs.NewCrashableMem()
	s := openOn(t, mem, FsyncAlways, tuning{keepLog: true})
	put(s, "a")
	wait(s)
	crash(t, s)
	path := filepath.Join(cutLog, segmentName(1))
	f, err := mem.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err == nil {
		_, err = f.WriteAt([]byte("torn"), fi.Size()) // half a frame header
	}
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	if keys := keysAfterCut(t, mem); !keys["a"] || len(keys) != 1 {
		t.Fatalf("keys after replaying a torn log: %v", keys)
	}
}
