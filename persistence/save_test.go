package persistence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// restore opens a copy of dir's checkpoint the documented way: as db/ of a
// new data directory.
func restore(t *testing.T, dir string) []string {
	t.Helper()
	target := t.TempDir()
	if err := os.CopyFS(filepath.Join(target, dbName), os.DirFS(filepath.Join(dir, checkpointName))); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, target, FsyncNo)
	defer s.Close()
	return load(t, s)
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncEverySec)
	defer s.Close()
	opened := s.LastSave()
	s.PutValue(0, []byte("a"), 1, []byte("1"))
	s.PutItem(0, []byte("a"), []byte("i"), []byte("x"))
	// No wait: Save must include changes made before it was called.
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if s.LastSaveErr() != nil || s.LastSave().Before(opened) || s.SaveInProgress() {
		t.Fatalf("after Save: last=%v err=%v inprogress=%v", s.LastSave(), s.LastSaveErr(), s.SaveInProgress())
	}
	first := []string{`value 0 "a" 1 "1"`, `item 0 "a" "i" "x"`}
	sameLines(t, restore(t, dir), first)

	// A second save replaces the first; later changes are not in it.
	s.DeleteKey(0, []byte("a"), true)
	s.PutValue(1, []byte("b"), 1, []byte("2"))
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	s.PutValue(1, []byte("c"), 1, []byte("3"))
	sameLines(t, restore(t, dir), []string{`value 1 "b" 1 "2"`})
	for _, leftover := range []string{checkpointName + ".tmp", checkpointName + ".old"} {
		if _, err := os.Stat(filepath.Join(dir, leftover)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s left behind: %v", leftover, err)
		}
	}
}

func TestBGSave(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncAlways)
	var want []string
	for i := range 200 {
		k := fmt.Appendf(nil, "k%03d", i)
		s.PutValue(2, k, 1, k)
		want = append(want, fmt.Sprintf("value 2 %q 1 %q", k, k))
	}
	if err := s.BGSave(); err != nil {
		t.Fatal(err)
	}
	// A second save while one runs is refused, unless the first already
	// finished.
	if err := s.BGSave(); err != nil && !errors.Is(err, ErrSaveInProgress) {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.SaveInProgress() {
		if time.Now().After(deadline) {
			t.Fatal("BGSave never finished")
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.LastSaveErr(); err != nil {
		t.Fatal(err)
	}
	// Close waits for a running BGSave.
	if err := s.BGSave(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sameLines(t, restore(t, dir), want)
}

func TestSaveInProgress(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	defer s.Close()
	if err := s.beginSave(); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(); !errors.Is(err, ErrSaveInProgress) || err.Error() != "Background save already in progress" {
		t.Fatalf("Save during a save: %v", err)
	}
	if err := s.BGSave(); !errors.Is(err, ErrSaveInProgress) {
		t.Fatalf("BGSave during a save: %v", err)
	}
	s.endSave(nil)
}
