package persistence

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/revolver-db/revolver/persistence/powercut"
)

// sweepKey and sweepValue are the n-th write of a sweep run: one key each,
// values from a few bytes to 20 KB, so that a cut that keeps random 4 KB
// blocks of what was not synced lands in and between frames.
func sweepKey(n int) []byte { return fmt.Appendf(nil, "k%04d", n) }

func sweepValue(rng *rand.Rand, n int) []byte {
	size := 1 + rng.IntN(300)
	if rng.IntN(5) == 0 {
		size = 4<<10 + rng.IntN(16<<10)
	}
	return bytes.Repeat(fmt.Appendf(nil, "%d.", n), size)[:size]
}

func sweepLine(key, val []byte) string {
	return fmt.Sprintf("value 0 %q 1 %q", key, val)
}

// TestPowerCutSweep cuts the power with CrashClone keeping a random share
// of the blocks that were not synced (0%, 10%, 50%, 90%, 100%), as a disk
// that writes back its cache in any order can, under every policy, with
// one segment or many. Each cut must give a store that starts, holds a
// prefix of the writes (the applier is held, so all of it comes from the
// log), and holds every write acknowledged under always, every write
// acknowledged before the last completed fsync under everysec, and under
// 100% every write.
func TestPowerCutSweep(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 3
	}
	type cut struct {
		name string
		fs   *vfs.MemFS
		all  bool // the cut kept everything
	}
	var droppedAll atomic.Int64
	defer func() {
		// Otherwise the sweep no longer makes the damage it is about.
		if droppedAll.Load() == 0 {
			t.Error("no cut ended the log before bytes other than zeros")
		}
	}()
	for _, policy := range []Fsync{FsyncAlways, FsyncEverySec, FsyncNo} {
		for _, segBytes := range []int64{segmentBytes, 24 << 10} {
			t.Run(fmt.Sprintf("%s/segment-%d", policy, segBytes), func(t *testing.T) {
				mem := vfs.NewCrashableMem()
				fsys := powercut.Wrap(mem, cutLog)
				tick := make(chan time.Time)
				tn, unblock := blockApplier()
				tn.tick = tick
				tn.segmentBytes = segBytes
				s := openOn(t, fsys, policy, tn)
				defer unblock()
				rng := rand.New(rand.NewPCG(uint64(policy), uint64(segBytes)))
				var want []string // the line each write loads as, in order
				write := func(n int) {
					for range n {
						key := sweepKey(len(want))
						val := sweepValue(rng, len(want))
						s.PutValue(0, key, 1, val)
						want = append(want, sweepLine(key, val))
						wait(s)
					}
				}
				unsynced := func() int64 {
					s.commitMu.Lock()
					defer s.commitMu.Unlock()
					if s.seg == nil {
						return 0
					}
					return s.seg.size.Load() - s.seg.synced.Load()
				}
				// tickSync runs one everysec fsync and waits for it.
				tickSync := func() {
					synced := fsys.SyncedTo(fsys.Syncs() + 1)
					tick <- time.Now()
					select {
					case <-synced:
					case <-time.After(10 * time.Second):
						t.Fatal("the everysec tick did not fsync the log")
					}
				}
				write(40)
				durable := 0 // writes that must survive any cut
				switch policy {
				case FsyncAlways:
					durable = len(want)
				case FsyncEverySec:
					tickSync()
					durable = len(want)
				}
				write(40)
				// Under everysec and no, enough unsynced data in the
				// newest segment for a cut to keep a later block and lose
				// an earlier one.
				for policy != FsyncAlways && unsynced() < 12<<10 {
					write(1)
				}
				if policy == FsyncAlways {
					durable = len(want)
				}
				// An fsync in flight at the cut: under always a 20 KB
				// write waiting for its fsync; under everysec the tick's.
				inflight := make(chan struct{})
				switch policy {
				case FsyncAlways:
					fsys.Hold()
					key, val := sweepKey(len(want)), bytes.Repeat([]byte("w"), 20<<10)
					want = append(want, sweepLine(key, val))
					s.PutValue(0, key, 1, val)
					go func() {
						wait(s)
						close(inflight)
					}()
					<-fsys.Waiting()
				case FsyncEverySec:
					fsys.Hold()
					go func() {
						tick <- time.Now()
						close(inflight)
					}()
					<-fsys.Waiting()
				default:
					close(inflight)
				}
				cuts := []cut{
					{"0%", mem.CrashClone(vfs.CrashCloneCfg{}), false},
					{"100%", mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(0, 0))}), true},
				}
				for _, pct := range []int{10, 50, 90} {
					for seed := range seeds {
						rng := rand.New(rand.NewPCG(uint64(seed), uint64(pct)))
						cuts = append(cuts, cut{fmt.Sprintf("%d%% seed %d", pct, seed),
							mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rng}), false})
					}
				}
				fsys.Release()
				<-inflight
				unblock()
				crash(t, s)

				var refused []string
				dropped := 0
				for _, c := range cuts {
					s, err := openTuned(Options{Dir: cutDir, Fsync: FsyncNo, Logger: quiet, FS: c.fs},
						tuning{maxBacklog: maxBacklog, segmentBytes: segmentBytes})
					if err != nil {
						refused = append(refused, fmt.Sprintf("%s: %v", c.name, err))
						continue
					}
					got := load(t, s)
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					if _, err := c.fs.Stat(filepath.Join(cutDir, droppedName)); err == nil {
						dropped++
					}
					switch {
					case len(got) > len(want) || !slices.Equal(got, want[:len(got)]):
						t.Errorf("cut %s: the store holds %d records that are not the first %d writes", c.name, len(got), len(got))
					case len(got) < durable:
						t.Errorf("cut %s: %d writes kept, %d acknowledged as durable", c.name, len(got), durable)
					case c.all && len(got) != len(want):
						t.Errorf("cut %s kept every block, yet %d of %d writes survived", c.name, len(got), len(want))
					}
				}
				t.Logf("%d of %d cuts ended the log before bytes other than zeros, kept in %s", dropped, len(cuts), droppedName)
				droppedAll.Add(int64(dropped))
				if len(refused) > 0 {
					t.Errorf("%d of %d power cuts left a store that would not start:\n%s",
						len(refused), len(cuts), strings.Join(refused, "\n"))
				}
			})
		}
	}
}
