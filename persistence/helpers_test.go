package persistence

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/revolver-db/revolver/engine"
)

var quiet = slog.New(slog.DiscardHandler)

func openTest(t testing.TB, dir string, f Fsync) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir, Fsync: f, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeLoader records what Load feeds it as one line per record.
type fakeLoader struct {
	lines []string
	err   error // returned from every call when set
}

func (l *fakeLoader) LoadValue(db int, key []byte, t engine.Type, payload []byte) error {
	l.lines = append(l.lines, fmt.Sprintf("value %d %q %d %q", db, key, t, payload))
	return l.err
}

func (l *fakeLoader) LoadExpire(db int, key []byte, at int64) error {
	l.lines = append(l.lines, fmt.Sprintf("expire %d %q %d", db, key, at))
	return l.err
}

func (l *fakeLoader) LoadItem(db int, key []byte, item, val []byte) error {
	l.lines = append(l.lines, fmt.Sprintf("item %d %q %q %q", db, key, item, val))
	return l.err
}

func (l *fakeLoader) LoadServer(name, val []byte) error {
	l.lines = append(l.lines, fmt.Sprintf("server %q %q", name, val))
	return l.err
}

// load reads everything in s.
func load(t testing.TB, s *Store) []string {
	t.Helper()
	var l fakeLoader
	if _, err := s.Load(&l); err != nil {
		t.Fatal(err)
	}
	return l.lines
}

// reopen closes s and returns what a fresh Open of its directory loads.
func reopen(t testing.TB, s *Store) []string {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, s.Dir(), FsyncNo)
	defer s2.Close()
	return load(t, s2)
}

func wait(s *Store) {
	if ch := s.Barrier(); ch != nil {
		<-ch
	}
}

func sameLines(t testing.TB, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("records differ\n got: %q\nwant: %q", got, want)
	}
}

func openTunedTest(t testing.TB, dir string, f Fsync, tn tuning) *Store {
	t.Helper()
	if tn.maxBacklog == 0 {
		tn.maxBacklog = maxBacklog
	}
	if tn.segmentBytes == 0 {
		tn.segmentBytes = segmentBytes
	}
	s, err := openTuned(Options{Dir: dir, Fsync: f, Logger: quiet}, tn)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// crash stops s as kill -9 would: the open batch is not written, queued
// batches are not applied, and no segment is deleted. Pebble keeps what the
// applier gave it, as its WAL would in the page cache.
func crash(t testing.TB, s *Store) {
	t.Helper()
	s.testKilled.Store(true)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// segments lists the log segments of dir.
func segments(t testing.TB, dir string) []string {
	t.Helper()
	// The applier may delete a segment between listSegments' List and its
	// Stat of the name.
	seqs, err := listSegments(vfs.Default, filepath.Join(dir, logName))
	for errors.Is(err, os.ErrNotExist) {
		seqs, err = listSegments(vfs.Default, filepath.Join(dir, logName))
	}
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, seq := range seqs {
		paths = append(paths, filepath.Join(dir, logName, segmentName(seq)))
	}
	return paths
}

// applied waits until the applier has written every change so far.
func applied(s *Store) { s.waitApplied(s.w.lastNum()) }
