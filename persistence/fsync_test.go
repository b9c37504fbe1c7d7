package persistence

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func TestIsWAL(t *testing.T) {
	fs := newWALFS(nil, "/data/db", FsyncNo, quiet)
	for name, want := range map[string]bool{
		"/data/db/000123.log":                true,
		"/data/db/000123-001.log":            true,
		"/data/db/000123.sst":                false,
		"/data/db/MANIFEST-000001":           false,
		"/data/db/OPTIONS-000003":            false,
		"/data/db/notes.log":                 false,
		"/data/checkpoint.tmp/000123.log":    false, // a checkpoint's copy syncs for real
		"/data/db/sub/000123.log":            false,
		"/data/db/../db/000007.log":          true,
		"/data/db/marker.manifest.000001.MA": false,
	} {
		if got := fs.isWAL(name); got != want {
			t.Errorf("isWAL(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestWALRotation flushes to make Pebble rotate, then recycle, WAL files:
// only the live WAL stays tracked, recycled files get the policy too, and
// the everysec tick syncs whatever is live.
func TestWALRotation(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncEverySec)
	for round := range 4 {
		s.PutValue(0, fmt.Appendf(nil, "k%d", round), 1, []byte("v"))
		wait(s)
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	s.fs.mu.Lock()
	var live []string
	for f := range s.fs.open {
		live = append(live, filepath.Base(f.name))
	}
	s.fs.mu.Unlock()
	logs, _ := filepath.Glob(filepath.Join(s.dir, dbName, "*.log"))
	if len(live) != 1 {
		t.Fatalf("tracked WALs %q, files %q", live, logs)
	}
	if s.fs.reused.Load() == 0 {
		t.Fatal("no WAL was recycled; the ReuseForWrite path went untested")
	}

	before := s.Stats().Fsyncs
	s.PutValue(0, []byte("late"), 1, []byte("v"))
	wait(s)
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Fsyncs == before {
		if time.Now().After(deadline) {
			t.Fatal("everysec never fsynced the live WAL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := reopen(t, s); len(got) != 5 {
		t.Fatalf("loaded %q", got)
	}
}
