package persistence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

const segmentExt = ".log"

func segmentName(seq uint64) string { return fmt.Sprintf("%012d%s", seq, segmentExt) }

// parseSegmentName returns the sequence number of a segment file name.
func parseSegmentName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, segmentExt)
	if !ok || len(digits) == 0 || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, err == nil && n > 0
}

// listSegments returns the segment numbers in logDir in ascending order. A
// missing directory has none; any other file is refused, as a directory we
// did not write.
func listSegments(logDir string) ([]uint64, error) {
	entries, err := os.ReadDir(logDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for _, e := range entries {
		seq, ok := parseSegmentName(e.Name())
		if !ok || !e.Type().IsRegular() {
			return nil, fmt.Errorf("unexpected file %s in the change log directory %s", e.Name(), logDir)
		}
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	return seqs, nil
}

// segment is the log file being appended to. The appender goroutine writes
// it; the everysec ticker syncs it from another goroutine, so syncs and
// close are serialized by mu.
type segment struct {
	seq  uint64
	path string
	f    *os.File
	size atomic.Int64 // bytes written, header included
	// dirty is set after every write and cleared before a sync, so a write
	// racing with a sync is caught by the next one.
	dirty  atomic.Bool
	mu     sync.Mutex
	closed bool
}

// createSegment makes a new segment with its header and makes its name
// durable, so a later segment never exists without this one.
func createSegment(logDir string, seq uint64) (*segment, error) {
	path := filepath.Join(logDir, segmentName(seq))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	s := &segment{seq: seq, path: path, f: f}
	_, err = f.Write([]byte(segmentMagic))
	if err == nil {
		err = syncDir(logDir)
	}
	if err != nil {
		// Remove it so that the next attempt can use the name.
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	s.size.Store(int64(len(segmentMagic)))
	s.dirty.Store(true)
	return s, nil
}

// write appends one frame. On a short or failed write the file is cut back
// so that the next frame does not follow garbage.
func (s *segment) write(frame []byte) error {
	n, err := s.f.Write(frame)
	if err == nil {
		s.size.Add(int64(n))
		s.dirty.Store(true)
		return nil
	}
	if n > 0 {
		if terr := s.f.Truncate(s.size.Load()); terr != nil {
			err = errors.Join(err, fmt.Errorf("cutting back the partial frame: %w", terr))
		}
	}
	return err
}

// sync fsyncs the segment if it was written since its last sync and
// reports whether it did.
func (s *segment) sync() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncLocked()
}

func (s *segment) syncLocked() (bool, error) {
	// Holding mu means a sync that cleared dirty has finished, so a clean
	// file really is on disk.
	if s.closed || !s.dirty.Swap(false) {
		return false, nil
	}
	if err := dataSync(s.f); err != nil {
		s.dirty.Store(true)
		return false, err
	}
	return true, nil
}

// close syncs under every policy: a synced successor after an unsynced
// predecessor would leave a hole on power loss.
func (s *segment) close() (synced bool, err error) {
	s.mu.Lock()
	synced, err = s.syncLocked()
	s.closed = true
	s.mu.Unlock()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return synced, err
}
