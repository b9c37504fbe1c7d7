package persistence

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/revolver-db/revolver/engine"
)

// TestResolveLayout: a new or foreign directory gets Revolver's files in
// revolver/; one an earlier Revolver laid out (revolver.lock in it, no
// revolver/) keeps them where they are; revolver/ wins when both exist.
func TestResolveLayout(t *testing.T) {
	fresh := t.TempDir()
	redisDir := t.TempDir()
	os.WriteFile(filepath.Join(redisDir, "dump.rdb"), []byte("REDIS0010"), 0o644)
	legacy := t.TempDir()
	s := openTest(t, legacy, FsyncNo) // Open lays its files directly in dir
	s.PutValue(0, []byte("k"), 1, []byte("v"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	both := t.TempDir()
	os.WriteFile(filepath.Join(both, lockName), nil, 0o644)
	os.Mkdir(filepath.Join(both, OwnDirName), 0o755)
	for _, tc := range []struct {
		dir, own string
		legacy   bool
	}{
		{fresh, filepath.Join(fresh, OwnDirName), false},
		{filepath.Join(fresh, "missing"), filepath.Join(fresh, "missing", OwnDirName), false},
		{redisDir, filepath.Join(redisDir, OwnDirName), false},
		{legacy, legacy, true},
		{both, filepath.Join(both, OwnDirName), false},
	} {
		l, err := ResolveLayout(nil, tc.dir)
		if err != nil || l.Own != tc.own || l.Legacy != tc.legacy || l.Dir != tc.dir {
			t.Errorf("%s: %+v %v, want own %s legacy %v", tc.dir, l, err, tc.own, tc.legacy)
		}
	}
	// The legacy directory still opens with its data.
	l, _ := ResolveLayout(nil, legacy)
	s = openTest(t, l.Own, FsyncNo)
	sameLines(t, load(t, s), []string{`value 0 "k" 1 "v"`})
	s.Close()
	// A file in the way is refused.
	file := t.TempDir()
	os.WriteFile(filepath.Join(file, OwnDirName), nil, 0o644)
	if _, err := ResolveLayout(nil, file); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file named %s: %v", OwnDirName, err)
	}
}

// TestCheckpointLoadKeys: a checkpoint read in batches gives every record
// once, whole keys per batch, never two databases in one, and batches of
// about the size asked for.
func TestCheckpointLoadKeys(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncNo)
	var want []string
	for db := range 3 {
		for i := range 50 {
			k := fmt.Appendf(nil, "k%03d", i)
			s.PutValue(db, k, 2, []byte("vvvvvvvvvvvvvvvvvvvv"))
			want = append(want, fmt.Sprintf("value %d %q 2 %q", db, k, "vvvvvvvvvvvvvvvvvvvv"))
			s.PutItem(db, k, []byte("i1"), []byte("x"))
			s.PutItem(db, k, []byte("i2"), []byte("y"))
			want = append(want, fmt.Sprintf("item %d %q %q %q", db, k, "i1", "x"), fmt.Sprintf("item %d %q %q %q", db, k, "i2", "y"))
		}
	}
	s.PutServer([]byte("function:lib"), []byte("code"))
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cp, err := OpenCheckpoint(CheckpointDir(dir), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	var batches []*fakeLoader
	keys, err := cp.LoadKeys(400, func() (engine.Loader, error) {
		batches = append(batches, &fakeLoader{})
		return batches[len(batches)-1], nil
	}, func() error { return nil })
	if err != nil || keys != 150 {
		t.Fatalf("LoadKeys: %d keys, %v", keys, err)
	}
	var all []string
	for i, b := range batches {
		dbs := map[string]bool{}
		for _, line := range b.lines {
			dbs[strings.Fields(line)[1]] = true
		}
		if len(dbs) != 1 || !strings.HasPrefix(b.lines[0], "value ") || len(b.lines)%3 != 0 {
			t.Errorf("batch %d: %q", i, b.lines)
		}
		all = append(all, b.lines...)
	}
	if len(batches) < 6 || len(batches) > 30 {
		t.Errorf("%d batches of 400 bytes for 150 keys of ~60 bytes of records", len(batches))
	}
	if !slices.Equal(all, want) {
		t.Errorf("loaded %d records, want %d", len(all), len(want))
	}
	var l fakeLoader
	if err := cp.LoadServer(&l); err != nil || !slices.Equal(l.lines, []string{`server "function:lib" "code"`}) {
		t.Errorf("LoadServer: %q %v", l.lines, err)
	}
}

// TestSyncNowAndImportMarker: under everysec, SyncNow makes every change
// so far survive a power cut (what an import needs before its marker goes),
// and the marker itself survives one once BeginImport returns, and is gone
// after EndImport.
func TestSyncNowAndImportMarker(t *testing.T) {
	mem := vfs.NewCrashableMem()
	if err := BeginImport(mem, cutDir); err != nil {
		t.Fatal(err)
	}
	if pending, err := ImportPending(mem.CrashClone(vfs.CrashCloneCfg{}), cutDir); !pending || err != nil {
		t.Fatalf("the marker after a cut: %v %v", pending, err)
	}
	tn, unblock := blockApplier()
	tn.tick = make(chan time.Time) // the everysec fsync never comes
	s := openOn(t, mem, FsyncEverySec, tn)
	defer unblock()
	for i := range 50 {
		put(s, "k"+strconv.Itoa(i))
		if i%10 == 9 {
			s.Sync() // several commits, none fsynced
		}
	}
	if len(keysAfterCut(t, mem.CrashClone(vfs.CrashCloneCfg{}))) == 50 {
		t.Fatal("the writes survived a cut before SyncNow: the test proves nothing")
	}
	if err := s.SyncNow(); err != nil {
		t.Fatal(err)
	}
	if err := EndImport(mem, cutDir); err != nil {
		t.Fatal(err)
	}
	cut := mem.CrashClone(vfs.CrashCloneCfg{})
	if n := len(keysAfterCut(t, cut)); n != 50 {
		t.Errorf("%d keys survive a cut after SyncNow, want 50", n)
	}
	if pending, _ := ImportPending(cut, cutDir); pending {
		t.Error("the marker survives EndImport")
	}
	if s.Fsync() != FsyncEverySec {
		t.Errorf("SyncNow left the policy %s", s.Fsync())
	}
	unblock()
	crash(t, s)
}
