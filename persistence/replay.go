package persistence

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// replayPlan is what start-up found in log/, checked before anything is
// changed: the segments to replay, older ones to drop, and the torn tail of
// the last segment.
type replayPlan struct {
	segs  []uint64
	stale []uint64 // before a gap: a later segment was deleted, so Pebble holds them
	// valid is the length of the last segment's intact prefix; torn is the
	// damage after it, empty when the segment is whole.
	valid     int64
	torn      string
	tornBytes int64
	next      uint64 // number for the first new segment
}

// planReplay reads every segment to replay and checks its frames and
// records. Damage anywhere but at the end of the last segment is refused:
// dropping it would silently lose acknowledged writes.
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
	for i, seq := range p.segs {
		path := filepath.Join(logDir, segmentName(seq))
		data, err := readFile(fsys, path)
		if err != nil {
			return p, err
		}
		valid, err := scanSegment(data, checkRecords)
		var fe *frameError
		switch {
		case err == nil:
		case errors.As(err, &fe) && fe.torn && i == len(p.segs)-1:
			p.torn, p.tornBytes = fe.msg, int64(len(data))-valid
		default:
			return p, fmt.Errorf("change log segment %s is damaged at %v; it is not the torn end of the log, so starting would lose acknowledged writes", path, err)
		}
		p.valid = valid
	}
	return p, nil
}

func checkRecords(records []byte, _ int64) error {
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
	if p.torn != "" {
		s.log.Warn("the change log ends with a torn write (a crash during an append); dropping it",
			"segment", last, "offset", p.valid, "bytes", p.tornBytes, "damage", p.torn)
		var err error
		if p.valid < int64(len(segmentMagic)) {
			err = s.fsys.Remove(last)
			p.segs = p.segs[:len(p.segs)-1]
		} else {
			err = cutTail(s.fsys, last, p.valid)
		}
		if err != nil {
			return fmt.Errorf("change log segment %s: dropping the torn end: %w", last, err)
		}
	}
	var records uint64
	a := &s.ap
	for _, seq := range p.segs {
		data, err := readFile(s.fsys, filepath.Join(s.logDir, segmentName(seq)))
		if err != nil {
			return err
		}
		_, err = scanSegment(data, func(frame []byte, _ int64) error {
			n, err := a.win.addRecords(a.batch, frame)
			records += n
			if err == nil && a.batch.Len()+a.win.size() >= applyChunkBytes {
				err = a.commit(s.db)
			}
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

// cutTail truncates a torn segment to its intact prefix. A file system
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
