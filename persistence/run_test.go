package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/revolver-db/revolver/engine"
)

// writeScript makes changes as one command, as an event loop runs a
// script, until the open batch has been committed by its share of the cap
// n times: the frames form a run. It returns the keys.
func writeScript(s *Store, name string, commits int) [][]byte {
	var keys [][]byte
	val := bytes.Repeat([]byte("v"), 100)
	for i := 0; ; i++ {
		before := s.capCommits.Load()
		key := fmt.Appendf(nil, "%s:%d", name, i)
		s.PutValue(0, key, engine.TypeString, val)
		keys = append(keys, key)
		if s.capCommits.Load() > before {
			if commits--; commits == 0 {
				return keys
			}
		}
	}
}

func inPebble(t *testing.T, s *Store, key []byte) bool {
	t.Helper()
	v, closer, err := s.db.Get(appendRecordKey(nil, 0, key, kindValue, nil))
	if errors.Is(err, pebble.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = v
	closer.Close()
	return true
}

// TestRunIsAllOrNothing: a command whose changes pass a log batch's share
// of the cap is written in several frames, a run. The applier gets none of
// it before the run ends; a crash before the loop's Sync drops all of it
// at start-up (none of it was acknowledged), keeping the bytes aside in
// log.dropped, while what was acknowledged before stays; after the Sync
// all of it is kept.
func TestRunIsAllOrNothing(t *testing.T) {
	for _, synced := range []bool{false, true} {
		t.Run(fmt.Sprintf("synced=%v", synced), func(t *testing.T) {
			dir := t.TempDir()
			s := openTunedTest(t, dir, FsyncAlways, tuning{maxMemory: MinMaxMemory, keepLog: true})
			s.Lead()
			s.PutValue(0, []byte("before"), engine.TypeString, []byte("x"))
			s.Sync()
			s.EndLead()

			s.Lead()
			keys := writeScript(s, "script", 3)
			if !s.w.inRun() {
				t.Fatal("no run after three commits by the cap")
			}
			// Give the applier every chance: it must not take the run.
			s.ap.hurry()
			time.Sleep(50 * time.Millisecond)
			if inPebble(t, s, keys[0]) {
				t.Fatal("the applier applied a run that is still open")
			}
			if synced {
				s.Sync()
			}
			s.EndLead()
			if synced {
				applied(s)
				if !inPebble(t, s, keys[0]) || !inPebble(t, s, keys[len(keys)-1]) {
					t.Fatal("the run is not in Pebble once ended")
				}
			}
			crash(t, s)

			s = openTest(t, dir, FsyncNo)
			lines := reopen(t, s)
			want := 1
			if synced {
				want += len(keys)
			}
			if len(lines) != want || lines[0] != `value 0 "before" 1 "x"` {
				t.Fatalf("loaded %d records (want %d): %.3q", len(lines), want, lines)
			}
			dropped, _ := os.ReadDir(filepath.Join(dir, droppedName))
			if synced != (len(dropped) == 0) {
				t.Fatalf("log.dropped holds %d files", len(dropped))
			}
		})
	}
}

// TestRunEndsWithEmptyFrame: when a command's last change fills the batch,
// nothing is left for the Sync after it but to end the run, with a frame
// of no records; a crash after that Sync keeps the command.
func TestRunEndsWithEmptyFrame(t *testing.T) {
	dir := t.TempDir()
	s := openTunedTest(t, dir, FsyncAlways, tuning{maxMemory: MinMaxMemory})
	s.Lead()
	keys := writeScript(s, "script", 2)
	if st := s.Stats(); st.Pending != 0 || !s.w.inRun() {
		t.Fatalf("the last change did not end with a commit: %+v", st)
	}
	s.Sync()
	s.EndLead()
	if s.w.inRun() {
		t.Fatal("Sync left the run open")
	}
	crash(t, s)
	s = openTest(t, dir, FsyncNo)
	if lines := reopen(t, s); len(lines) != len(keys) {
		t.Fatalf("loaded %d records, want %d", len(lines), len(keys))
	}
}

// TestRunEndedForOthers: a Sync by another event loop, whose changes came
// before a command that is still running, ends the run at once (its
// changes may be in the run's first frame, and must survive a crash once
// it replies); so does a Barrier, and a save, which waits for Pebble, and
// a writer that does not lead ends up ended by the appender.
func TestRunEndedForOthers(t *testing.T) {
	for _, how := range []string{"sync", "barrier", "save", "unled"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			s := openTunedTest(t, dir, FsyncAlways, tuning{maxMemory: MinMaxMemory})
			s.Lead() // loop B: its change, then loop A's command
			s.PutValue(0, []byte("b"), engine.TypeString, []byte("x"))
			if how == "unled" {
				s.EndLead()
			} else {
				s.Lead() // loop A
			}
			keys := writeScript(s, "a", 2)
			switch how {
			case "sync":
				s.Sync()
			case "barrier":
				if ch := s.Barrier(); ch != nil {
					<-ch
				}
			case "save":
				if err := s.Save(); err != nil {
					t.Fatal(err)
				}
			case "unled":
				for deadline := time.Now().Add(5 * time.Second); s.w.inRun(); time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the appender never ended the run")
					}
				}
			}
			if s.w.inRun() {
				t.Fatal("the run is still open")
			}
			crash(t, s)
			s = openTest(t, dir, FsyncNo)
			if lines := reopen(t, s); len(lines) != 1+len(keys) {
				t.Fatalf("loaded %d records, want %d", len(lines), 1+len(keys))
			}
		})
	}
}

// TestRunNeverSpansSegments: a run keeps its segment open past
// segmentBytes; the segment is rotated by the commit that ends it.
func TestRunNeverSpansSegments(t *testing.T) {
	dir := t.TempDir()
	s := openTunedTest(t, dir, FsyncNo, tuning{maxMemory: MinMaxMemory, segmentBytes: 64 << 10, keepLog: true})
	defer s.Close()
	s.Lead()
	writeScript(s, "script", 4) // 4 x 128 KB
	if n := len(segments(t, dir)); n != 1 {
		t.Fatalf("%d segments during a run", n)
	}
	s.PutValue(0, []byte("last"), engine.TypeString, []byte("x"))
	s.Sync()
	s.EndLead()
	s.PutValue(0, []byte("next"), engine.TypeString, []byte("x"))
	wait(s)
	if n := len(segments(t, dir)); n != 2 {
		t.Fatalf("%d segments after the run", n)
	}
}

// TestReplayRefusesRunFromEarlierSegment: a run the log ends in must have
// begun in its newest segment, which is all start-up cuts.
func TestReplayRefusesRunFromEarlierSegment(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncNo)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	frame := func(synced int64, cont bool) []byte {
		b := appendHead(make([]byte, frameHeaderLen), opPutValue, 0, []byte("k"))
		b = appendBytes(b, []byte{1, 'v'})
		sealFrame(b, synced, cont)
		return b
	}
	for seq, cont := range map[uint64]bool{1: true, 2: true} {
		data := append([]byte(segmentMagic), frame(0, cont)...)
		if err := os.WriteFile(filepath.Join(dir, logName, segmentName(seq)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(Options{Dir: dir, Logger: quiet}); err == nil || !bytes.Contains([]byte(err.Error()), []byte("began in segment 000000000001.log")) {
		t.Fatalf("open: %v", err)
	}
}
