package persistence

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// replayPlan is what start-up found in log/, checked before anything is
// changed: the segments to replay, older ones to drop, and where the log
// ends in the newest segment.
type replayPlan struct {
	segs  []uint64
	stale []uint64 // before a gap: a later segment was deleted, so Pebble holds them
	// valid is the length of the newest segment's readable prefix. When
	// the file goes on past it, the log ends there: cut says why, and
	// cutBytes is what is dropped (saved aside unless cutZero, all zeros).
	valid    int64
	cut      string
	cutBytes int64
	cutZero  bool
	// unfinished: the log ends in a run (logfmt.go) that was never
	// completed, which valid leaves out.
	unfinished bool
	next       uint64 // number for the first new segment
}

// planReplay reads every segment to replay and checks its frames and
// records. The log ends at the first bad frame of the newest segment,
// unless a later frame proves that an fsync covered it; damage anywhere
// else is refused: dropping it would lose acknowledged writes (decision
// 0011).
func planReplay(fsys vfs.FS, logDir string) (replayPlan, error) {
	var p replayPlan
	seqs, err := listSegments(fsys, logDir)
	if err != nil || len(seqs) == 0 {
		p.next = 1
		return p, err
	}
	p.next = seqs[len(seqs)-1] + 1
	// Segments are deleted oldest first once Pebble holds them, so after a
	// crash during deletion only the run after the last gap matters.
	first := len(seqs) - 1
	for first > 0 && seqs[first-1] == seqs[first]-1 {
		first--
	}
	p.stale, p.segs = seqs[:first], seqs[first:]
	// runSeg and runStart are where the run the log is in began; runSeg 0
	// when it is in none.
	var runSeg uint64
	var runStart int64
	for i, seq := range p.segs {
		path := filepath.Join(logDir, segmentName(seq))
		data, err := readFile(fsys, path)
		if err != nil {
			return p, err
		}
		valid, err := scanSegment(data, func(records []byte, end int64, cont bool) error {
			switch {
			case !cont:
				runSeg = 0
			case runSeg == 0:
				runSeg, runStart = seq, end-int64(len(records))-frameHeaderLen
			}
			return checkRecords(records)
		})
		var fe *frameError
		newest := i == len(p.segs)-1
		switch {
		case err == nil:
		case !errors.As(err, &fe) || !fe.cut:
			return p, fmt.Errorf("change log segment %s is damaged at %v; a crash does not leave that, and starting would lose acknowledged writes", path, err)
		case !newest:
			// rotate fsyncs a segment before the next one is created.
			return p, fmt.Errorf("change log segment %s is damaged at %v; it was fsynced whole before a later segment began, so starting would lose acknowledged writes", path, err)
		default:
			if at, synced, ok := syncedPast(data, valid); ok {
				return p, fmt.Errorf("change log segment %s is damaged at %v, which an fsync covered (the frame at offset %d was written after an fsync to offset %d), so starting would lose acknowledged writes", path, err, at, synced)
			}
			p.cut, p.cutBytes, p.cutZero = fe.msg, int64(len(data))-valid, allZero(data[valid:])
		}
		p.valid = valid
		if newest && runSeg != 0 {
			// Writers keep a segment open while a run goes on (commit), so
			// a run the log ends in began in the newest segment.
			if runSeg != seq {
				return p, fmt.Errorf("change log segment %s ends in a run of frames that began in segment %s, which this Revolver never writes", path, segmentName(runSeg))
			}
			p.cut = strings.TrimPrefix(p.cut+"; after "+fmt.Sprint(valid-runStart)+" bytes of a command that never finished", "; ")
			p.valid, p.cutBytes, p.cutZero, p.unfinished = runStart, int64(len(data))-runStart, false, true
		}
	}
	return p, nil
}

func checkRecords(records []byte) error {
	r := recordReader{buf: records}
	for {
		_, ok, err := r.next()
		if !ok {
			return err
		}
	}
}

// replay applies the planned segments to Pebble through the applier's
// windows, makes Pebble durable and deletes them.
func (s *Store) replay(p replayPlan) error {
	for _, seq := range p.stale {
		if err := s.fsys.Remove(filepath.Join(s.logDir, segmentName(seq))); err != nil {
			return err
		}
	}
	if len(p.segs) == 0 {
		return nil
	}
	start := time.Now()
	last := filepath.Join(s.logDir, segmentName(p.segs[len(p.segs)-1]))
	if p.cut != "" {
		// The end of the newest segment that no fsync is known to have
		// covered: a torn append, or pages of unsynced appends a power cut
		// kept after one it lost. Anything but zeros is kept for
		// inspection before the segment is cut.
		saved := ""
		if !p.cutZero {
			var err error
			if saved, err = s.saveDropped(last, p.valid); err != nil {
				return fmt.Errorf("change log segment %s: saving the unreadable end: %w", last, err)
			}
		}
		msg := "the change log ends in data no fsync is known to have covered (a crash or power cut during appends); replaying it up to there"
		if p.unfinished {
			msg = "the change log ends in the records of a command that never finished (a crash while it ran), none of them acknowledged; replaying it up to the command"
		}
		s.log.Warn(msg, "segment", last, "offset", p.valid, "bytes", p.cutBytes, "damage", p.cut, "saved", saved)
		var err error
		if p.valid < int64(len(segmentMagic)) {
			err = s.fsys.Remove(last)
			p.segs = p.segs[:len(p.segs)-1]
		} else {
			err = cutTail(s.fsys, last, p.valid)
		}
		if err != nil {
			return fmt.Errorf("change log segment %s: dropping the unreadable end: %w", last, err)
		}
	}
	var records uint64
	a := &s.ap
	for _, seq := range p.segs {
		data, err := readFile(s.fsys, filepath.Join(s.logDir, segmentName(seq)))
		if err != nil {
			return err
		}
		_, err = scanSegment(data, func(frame []byte, _ int64, _ bool) error {
			// The window goes to Pebble whenever it is full (window.spill).
			n, err := a.win.addRecords(a.batch, frame)
			records += n
			return err
		})
		if err == nil {
			err = a.commit(s.db) // before data, which the window aliases, goes
		}
		if err != nil {
			return fmt.Errorf("change log segment %s: %w", segmentName(seq), err)
		}
	}
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		return err
	}
	for _, seq := range p.segs {
		if err := s.fsys.Remove(filepath.Join(s.logDir, segmentName(seq))); err != nil {
			return err
		}
	}
	if err := syncDir(s.fsys, s.logDir); err != nil {
		return err
	}
	s.log.Info("replayed change log", "segments", len(p.segs), "records", records,
		"elapsed", time.Since(start).Round(time.Millisecond))
	return nil
}

// droppedName is the directory in the data directory that keeps what
// start-up cut off the end of the log.
const droppedName = "log.dropped"

// saveDropped copies the segment's bytes from off on to a file of their
// own in droppedName, named after the segment and the offset, and makes it
// durable. It returns the file's path.
func (s *Store) saveDropped(path string, off int64) (string, error) {
	data, err := readFile(s.fsys, path)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(s.dir, droppedName)
	if err := mkdirSynced(s.fsys, dir); err != nil {
		return "", err
	}
	base := filepath.Join(dir, fmt.Sprintf("%s.%d", filepath.Base(path), off))
	name := base
	// Segment numbers start again at 1 once the log is empty.
	for n := 1; ; n++ {
		if _, err := s.fsys.Stat(name); errors.Is(err, os.ErrNotExist) {
			break
		} else if err != nil {
			return "", err
		}
		name = fmt.Sprintf("%s.%d", base, n)
	}
	f, err := s.fsys.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return "", err
	}
	_, err = f.WriteAt(data[off:], 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(s.fsys, dir)
	}
	return name, err
}

// cutTail truncates a segment to its intact prefix. A file system
// without truncation (the in-memory one of tests) gets the prefix
// rewritten instead.
func cutTail(fsys vfs.FS, path string, valid int64) error {
	f, err := fsys.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	t, ok := f.(truncater)
	if !ok {
		_ = f.Close()
		return rewritePrefix(fsys, path, valid)
	}
	err = t.Truncate(valid)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func rewritePrefix(fsys vfs.FS, path string, valid int64) error {
	data, err := readFile(fsys, path)
	if err != nil {
		return err
	}
	f, err := fsys.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data[:valid], 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(fsys, fsys.PathDir(path))
	}
	return err
}

// readFile is os.ReadFile on fsys.
func readFile(fsys vfs.FS, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return data, nil
}
