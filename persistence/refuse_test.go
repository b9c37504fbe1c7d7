package persistence

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		// Lock files may appear: ours and Pebble's.
		if base := filepath.Base(path); base != lockName && base != "LOCK" {
			names = append(names, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func wantRefusal(t *testing.T, dir, want string) {
	t.Helper()
	before := listDir(t, dir)
	s, err := Open(Options{Dir: dir, Logger: quiet})
	if err == nil {
		s.Close()
		t.Fatalf("Open succeeded, want an error containing %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
	if after := listDir(t, dir); !slices.Equal(before, after) {
		t.Fatalf("refused Open changed the directory\nbefore: %q\nafter:  %q", before, after)
	}
}

func TestRefuseForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantRefusal(t, dir, "is not a Revolver data directory (found a, b, c, d, e, ...)")
}

func TestAcceptEmptyAndMissingDirectory(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "x", "y")} {
		s := openTest(t, dir, FsyncNo)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		// What a first start leaves behind is not foreign.
		if err := os.RemoveAll(filepath.Join(dir, dbName)); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, newDBName), 0o755); err != nil {
			t.Fatal(err)
		}
		s = openTest(t, dir, FsyncNo)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRefuseCorruptStore(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncNo)
	s.PutValue(0, []byte("k"), 1, []byte("v"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	manifests, err := filepath.Glob(filepath.Join(dir, dbName, "MANIFEST-*"))
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no MANIFEST found: %v", err)
	}
	for _, m := range manifests {
		if err := os.WriteFile(m, []byte("this is not a manifest, not at all"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantRefusal(t, dir, "cannot open store")
}

func TestRefuseEmptyStoreDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, dbName), 0o755); err != nil {
		t.Fatal(err)
	}
	// Pebble may leave its LOCK file; it must not create a store.
	if _, err := Open(Options{Dir: dir, Logger: quiet}); err == nil || !strings.Contains(err.Error(), "cannot open store") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, dbName, "OPTIONS-000001")); err == nil {
		t.Fatal("a store was created in the empty db/")
	}
}

func TestRefuseForeignPebbleStore(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(filepath.Join(dir, dbName), &pebble.Options{Logger: pebbleLogger{quiet}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("someone else's"), []byte("data"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, dir, "holds a Pebble store that was not written by Revolver")
}

func TestRefuseOtherFormat(t *testing.T) {
	for v, want := range map[int]string{
		formatVersion + 1: fmt.Sprintf("was written by a newer Revolver (format %d)", formatVersion+1),
		formatVersion - 1: fmt.Sprintf("was written by an older Revolver (format %d; this build reads format %d)", formatVersion-1, formatVersion),
	} {
		dir := t.TempDir()
		if err := openTest(t, dir, FsyncNo).Close(); err != nil {
			t.Fatal(err)
		}
		db, err := pebble.Open(filepath.Join(dir, dbName), &pebble.Options{Logger: pebbleLogger{quiet}})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Set([]byte(formatKey), formatValue(v), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, dir, want)
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncNo)
	abs, _ := filepath.Abs(dir)
	_, err := Open(Options{Dir: dir, Logger: quiet})
	if err == nil || err.Error() != "data directory "+abs+" is locked by another Revolver process" {
		t.Fatalf("second Open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Released on Close.
	if err := openTest(t, dir, FsyncNo).Close(); err != nil {
		t.Fatal(err)
	}
}
