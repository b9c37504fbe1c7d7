package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// decodeSegment renders a segment's records, one line each.
func decodeSegment(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	_, err = scanSegment(data, func(records []byte, _ int64, _ bool) error {
		r := recordReader{buf: records}
		for {
			c, ok, err := r.next()
			if !ok {
				return err
			}
			lines = append(lines, fmt.Sprintf("%d %d %q %q %q", c.op, c.db, c.key, c.item, c.val))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestLogFrames(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNo)
	defer s.Close()
	s.PutValue(1, []byte("k"), 7, []byte("payload"))
	s.PutExpire(1, []byte("k"), 0x0102030405060708)
	wait(s)
	s.DeleteExpire(2, []byte("k"))
	s.PutItem(3, []byte("h"), []byte("f"), []byte("v"))
	s.DeleteItem(3, []byte("h"), []byte("f"))
	s.PutItem(3, []byte(""), nil, nil)
	wait(s)
	s.DeleteKey(4, []byte("a"), false)
	s.DeleteKey(4, []byte("b"), true)
	s.FlushDB(maxDB)
	s.FlushAll()
	wait(s)
	segs := segments(t, s.Dir())
	if len(segs) != 1 {
		t.Fatalf("segments %q", segs)
	}
	sameLines(t, decodeSegment(t, segs[0]), []string{
		`1 1 "k" "" "\apayload"`,
		`2 1 "k" "" "\x01\x02\x03\x04\x05\x06\a\b"`,
		`3 2 "k" "" ""`,
		`4 3 "h" "f" "v"`,
		`5 3 "h" "f" ""`,
		`4 3 "" "" ""`,
		`6 4 "a" "" ""`,
		`7 4 "b" "" ""`,
		`8 255 "" "" ""`,
		`9 0 "" "" ""`,
	})
	// Each barrier commits at least once; the appender may also commit a
	// batch between two puts on its own (a loaded machine makes it likely),
	// so only the lower bound is exact.
	if st := s.Stats(); st.Commits < 3 || st.Records != 10 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRecordReaderErrors(t *testing.T) {
	good := appendBytes(appendHead(nil, opPutItem, 0, []byte("key")), []byte("item"))
	good = appendBytes(good, []byte("val"))
	for i := range len(good) - 1 {
		r := recordReader{buf: good[:i+1]}
		if _, _, err := r.next(); err == nil {
			t.Fatalf("record cut to %d bytes decoded", i+1)
		}
	}
	for _, bad := range [][]byte{{0, 0}, {42, 0}, appendBytes(appendHead(nil, opPutValue, 0, []byte("k")), nil)} {
		r := recordReader{buf: bad}
		if _, _, err := r.next(); err == nil {
			t.Fatalf("record %x decoded", bad)
		}
	}
}

// writeKeys writes n keys as separate group commits.
func writeKeys(s *Store, from, n int) {
	for i := from; i < from+n; i++ {
		s.PutValue(0, fmt.Appendf(nil, "k%03d", i), 1, []byte("v"))
		wait(s)
	}
}

func keyLines(from, n int) []string {
	var want []string
	for i := from; i < from+n; i++ {
		want = append(want, fmt.Sprintf(`value 0 "k%03d" 1 "v"`, i))
	}
	return want
}

func TestTornTail(t *testing.T) {
	cases := map[string]struct {
		damage func(data []byte) []byte
		keep   int // keys that survive
	}{
		"partial header": {func(d []byte) []byte { return append(d, 9, 0, 0) }, 10},
		"partial frame":  {func(d []byte) []byte { return d[:len(d)-3] }, 9},
		"zero tail":      {func(d []byte) []byte { return append(d, make([]byte, 4096)...) }, 10},
		"bad checksum":   {func(d []byte) []byte { d[len(d)-1] ^= 0xff; return d }, 9},
		"garbage frame": {func(d []byte) []byte {
			return append(d, 0x10, 0, 0, 0, 1, 2, 3, 4, 'g', 'a', 'r', 'b', 'a', 'g', 'e', '!', '!', '!', '!', '!')
		}, 10},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTunedTest(t, dir, FsyncAlways, tuning{keepLog: true})
			writeKeys(s, 0, 10)
			crash(t, s)
			segs := segments(t, dir)
			last := segs[len(segs)-1]
			data, err := os.ReadFile(last)
			if err != nil {
				t.Fatal(err)
			}
			damaged := c.damage(data)
			if err := os.WriteFile(last, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			s, err = Open(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			sameLines(t, load(t, s), keyLines(0, c.keep))
			warn := logs.String()
			if !strings.Contains(warn, "level=WARN") || !strings.Contains(warn, filepath.Base(last)) || !strings.Contains(warn, "bytes=") {
				t.Fatalf("no warning naming the segment and bytes dropped:\n%s", warn)
			}
			// The start-up after the torn one continues from there.
			writeKeys(s, 10, 2)
			sameLines(t, reopen(t, s), append(keyLines(0, c.keep), keyLines(10, 2)...))
		})
	}
}

// twoSegments leaves dir with at least two segments, k000-k004 in the
// first and k005-k009 in the last, all applied to Pebble but not deleted.
func twoSegments(t *testing.T, dir string, policy Fsync) []string {
	s := openTunedTest(t, dir, policy, tuning{keepLog: true})
	writeKeys(s, 0, 5)
	s.rotateReq <- struct{}{}
	for len(segments(t, dir)) == 1 {
		s.PutValue(0, []byte("k005"), 1, []byte("v"))
		wait(s)
		time.Sleep(time.Millisecond)
	}
	writeKeys(s, 5, 5)
	applied(s)
	crash(t, s)
	return segments(t, dir)
}

// reseal recomputes the checksum of the format 2 frame at off, so that a
// frame edited on purpose checks.
func reseal(data []byte, off int) {
	n := int(binary.LittleEndian.Uint32(data[off:]))
	h := data[off : off+frameHeaderLen]
	binary.LittleEndian.PutUint32(h[4:8], frameCRC(h[0:4], h[8:12], data[off+frameHeaderLen:off+frameHeaderLen+n]))
}

// TestCorruptSegmentRefused: damage that a crash or power cut cannot
// leave is refused, and the directory left as it was: any damage in a
// segment before the newest (fsynced whole when the next one began), a
// frame that checks but does not decode or records an impossible fsync,
// and damage in the newest segment that a later frame proves was synced,
// however the damage hides the frames after it.
func TestCorruptSegmentRefused(t *testing.T) {
	const first = len(segmentMagic)
	cases := []struct {
		name   string
		policy Fsync
		older  bool // damage the first segment, not the newest
		damage func(data []byte)
		want   string
	}{
		{"older segment", FsyncNo, true, func(d []byte) { d[first+frameHeaderLen+1] ^= 0x40 },
			"is damaged at offset 8: frame checksum mismatch; it was fsynced whole before a later segment began"},
		{"record in a frame that checks", FsyncNo, false, func(d []byte) { d[first+frameHeaderLen] = 0x2a; reseal(d, first) },
			"is damaged at offset 8: record at frame offset 0: unknown op 0x2a; a crash does not leave that"},
		{"foreign header", FsyncNo, false, func(d []byte) { copy(d, "RVLOG99\n") },
			"is damaged at offset 0: not a Revolver log segment; a crash does not leave that"},
		{"fsync past the frame", FsyncNo, false, func(d []byte) { binary.LittleEndian.PutUint32(d[first+8:], 9); reseal(d, first) },
			"is damaged at offset 8: frame records an fsync to offset 9, past its own start"},
		{"synced frame", FsyncAlways, false, func(d []byte) { d[first+frameHeaderLen+1] ^= 0x40 },
			"is damaged at offset 8: frame checksum mismatch, which an fsync covered (the frame at offset "},
		{"synced length", FsyncAlways, false, func(d []byte) { d[first+2] ^= 0x10 },
			"is damaged at offset 8: frame of 1048586 bytes cut short, which an fsync covered"},
		{"synced frames zeroed", FsyncAlways, false, func(d []byte) {
			// The first two frames, length fields and all.
			n := int(binary.LittleEndian.Uint32(d[first:]))
			n += frameHeaderLen + int(binary.LittleEndian.Uint32(d[first+frameHeaderLen+n:]))
			clear(d[first : first+n+frameHeaderLen])
		}, "is damaged at offset 8: frame checksum mismatch, which an fsync covered"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			segs := twoSegments(t, dir, c.policy)
			path := segs[len(segs)-1]
			if c.older {
				path = segs[0]
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c.damage(data)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			wantRefusal(t, dir, "change log segment "+path+" "+c.want)
			if c.policy == FsyncAlways {
				wantRefusal(t, dir, "so starting would lose acknowledged writes")
			}
		})
	}
}

// writeFileOn replaces path on fsys with data, synced. WriteAt, as Write
// may scribble over data (pebble's files do in race builds).
func writeFileOn(t *testing.T, fsys vfs.FS, path string, data []byte) {
	t.Helper()
	f, err := fsys.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Sync()
	}
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
}

// TestUnsyncedEndDropped: damage in the newest segment that no later frame
// proves was synced ends the log there, as a power cut that kept later
// pages of unsynced appends but not an earlier one leaves it: the store
// starts with the writes before it, logs a warning with the byte counts,
// and keeps the bytes it dropped in log.dropped, beside any kept before.
func TestUnsyncedEndDropped(t *testing.T) {
	for _, policy := range []Fsync{FsyncEverySec, FsyncNo} {
		t.Run(policy.String(), func(t *testing.T) {
			// The applier is held and the everysec tick never comes, so
			// the writes are only in the log and never synced; the cut
			// keeps all of it.
			mem := vfs.NewCrashableMem()
			tn, unblock := blockApplier()
			tn.tick = make(chan time.Time)
			s := openOn(t, mem, policy, tn)
			defer unblock()
			writeKeys(s, 0, 10)
			fsys := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(0, 0))})
			unblock()
			crash(t, s)
			path := filepath.Join(cutLog, segmentName(1))
			data, err := readFile(fsys, path)
			if err != nil {
				t.Fatal(err)
			}
			// Frame 3 loses a byte; frames 4-9 are intact after it.
			off := len(segmentMagic)
			for range 3 {
				off += frameHeaderLen + int(binary.LittleEndian.Uint32(data[off:]))
			}
			data[off+frameHeaderLen+2] ^= 0x01
			writeFileOn(t, fsys, path, data)
			dropped := filepath.Join(cutDir, droppedName, fmt.Sprintf("%s.%d", filepath.Base(path), off))
			if err := fsys.MkdirAll(filepath.Dir(dropped), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFileOn(t, fsys, dropped, []byte("an earlier one"))

			var logs bytes.Buffer
			s, err = openTuned(Options{Dir: cutDir, Logger: slog.New(slog.NewTextHandler(&logs, nil)), FS: fsys},
				tuning{maxBacklog: maxBacklog, segmentBytes: segmentBytes})
			if err != nil {
				t.Fatal(err)
			}
			sameLines(t, load(t, s), keyLines(0, 3))
			if kept, err := readFile(fsys, dropped); err != nil || string(kept) != "an earlier one" {
				t.Fatalf("the file kept before: %q, %v", kept, err)
			}
			saved, err := readFile(fsys, dropped+".1")
			if err != nil || !bytes.Equal(saved, data[off:]) {
				t.Fatalf("dropped bytes not kept in %s.1 (%v)", dropped, err)
			}
			warn := logs.String()
			for _, want := range []string{"level=WARN", filepath.Base(path), fmt.Sprintf("offset=%d", off),
				fmt.Sprintf("bytes=%d", len(data)-off), "saved=" + dropped + ".1"} {
				if !strings.Contains(warn, want) {
					t.Fatalf("warning without %q:\n%s", want, warn)
				}
			}
			writeKeys(s, 10, 2)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openOn(t, fsys, FsyncNo, tuning{})
			defer s.Close()
			sameLines(t, load(t, s), append(keyLines(0, 3), keyLines(10, 2)...))
		})
	}
}

// v1Segment is a format 1 segment holding k000 to k(n-1), one frame each.
func v1Segment(n int) []byte {
	data := []byte(segmentMagicV1)
	for i := range n {
		rec := appendBytes(appendHead(nil, opPutValue, 0, fmt.Appendf(nil, "k%03d", i)), []byte("\x01v"))
		h := binary.LittleEndian.AppendUint32(nil, uint32(len(rec)))
		h = binary.LittleEndian.AppendUint32(h, frameCRC(h, nil, rec))
		data = append(append(data, h...), rec...)
	}
	return data
}

// TestFormat1Segments: segments of the format before frames recorded
// their fsync are replayed; damage in the newest ends the log, as nothing
// in them can prove it was synced.
func TestFormat1Segments(t *testing.T) {
	for _, damaged := range []bool{false, true} {
		dir := t.TempDir()
		if err := openTest(t, dir, FsyncNo).Close(); err != nil {
			t.Fatal(err)
		}
		data := v1Segment(5)
		keep := 5
		if damaged {
			frame := (len(data) - len(segmentMagicV1)) / 5 // all the same size
			data[len(segmentMagicV1)+2*frame+frameHeaderLenV1+1] ^= 0x40
			keep = 2
		}
		if err := os.WriteFile(filepath.Join(dir, logName, segmentName(1)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := openTest(t, dir, FsyncNo)
		sameLines(t, load(t, s), keyLines(0, keep))
		writeKeys(s, 10, 1)
		sameLines(t, reopen(t, s), append(keyLines(0, keep), keyLines(10, 1)...))
	}
}

func TestForeignLogFileRefused(t *testing.T) {
	dir := t.TempDir()
	if err := openTest(t, dir, FsyncNo).Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, logName, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, dir, "unexpected file notes.txt in the change log directory")

	dir = t.TempDir()
	twoSegments(t, dir, FsyncNo)
	if err := os.RemoveAll(filepath.Join(dir, dbName)); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, dir, "is not a Revolver data directory (found log)")
}

// TestGapDropsOlderSegments is a crash while deleting applied segments
// oldest first, where the directory kept a later deletion but not an
// earlier one: the older segment is stale and must not be replayed over
// what followed it.
func TestGapDropsOlderSegments(t *testing.T) {
	dir := t.TempDir()
	segs := twoSegments(t, dir, FsyncNo)
	stale, last := segs[0], segs[len(segs)-1]
	lastSeq, _ := parseSegmentName(filepath.Base(last))
	next := filepath.Join(dir, logName, segmentName(lastSeq+2))
	// The first segment now overwrites k000, and the last is renamed as if
	// the one before it had been deleted.
	s := openTunedTest(t, t.TempDir(), FsyncNo, tuning{keepLog: true})
	s.PutValue(0, []byte("k000"), 1, []byte("old"))
	wait(s)
	crash(t, s)
	old := segments(t, s.Dir())[0]
	data, _ := os.ReadFile(old)
	if err := os.WriteFile(stale, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(last, next); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir, FsyncNo)
	sameLines(t, load(t, s), keyLines(0, 10))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := segments(t, dir); len(left) != 0 {
		t.Fatalf("segments left: %q", left)
	}
}

func TestSegmentRotation(t *testing.T) {
	dir := t.TempDir()
	s := openTunedTest(t, dir, FsyncEverySec, tuning{segmentBytes: 1024})
	for i := range 200 {
		s.PutValue(0, fmt.Appendf(nil, "k%03d", i), 1, bytes.Repeat([]byte("v"), 40))
		wait(s)
	}
	if s.nextSeg < 5 {
		t.Fatalf("only %d segments for 200 frames of 1 KB segments", s.nextSeg-1)
	}
	// Applied segments go; after a quiet second the applier asks for the
	// active one to be closed, and it goes too.
	deadline := time.Now().Add(10 * time.Second)
	for len(segments(t, dir)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("segments never deleted: %q", segments(t, dir))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := s.Stats(); st.Applied != 200 || st.ApplyLag != 0 || st.Fsyncs == 0 {
		t.Fatalf("stats %+v", st)
	}
	if got := reopen(t, s); len(got) != 200 {
		t.Fatalf("loaded %d records", len(got))
	}
}

// TestEverySec checks the ticker fsyncs the active segment.
func TestEverySec(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncEverySec)
	defer s.Close()
	s.PutValue(0, []byte("k"), 1, []byte("v"))
	wait(s)
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Fsyncs == 0 {
		if time.Now().After(deadline) {
			t.Fatal("everysec never fsynced the log")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), logName, segmentName(1))); err != nil {
		t.Fatal(err)
	}
}
