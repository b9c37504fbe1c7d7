package persistence

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
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
func listSegments(fsys vfs.FS, logDir string) ([]uint64, error) {
	names, err := fsys.List(logDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(names) // the first unexpected name is reported
	var seqs []uint64
	for _, name := range names {
		seq, ok := parseSegmentName(name)
		if ok {
			fi, err := fsys.Stat(fsys.PathJoin(logDir, name))
			if err != nil {
				return nil, err
			}
			ok = fi.Mode().IsRegular()
		}
		if !ok {
			return nil, fmt.Errorf("unexpected file %s in the change log directory %s", name, logDir)
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
	f    vfs.File
	size atomic.Int64 // bytes written, header included
	// synced is how many bytes the last fsync that returned covered: the
	// size before it began. Each frame records it (logfmt.go).
	synced atomic.Int64
	// dirty is set after every write and cleared before a sync, so a write
	// racing with a sync is caught by the next one.
	dirty  atomic.Bool
	mu     sync.Mutex
	closed bool
	// hist times the fsyncs, for /metrics (nil: not timed).
	hist *fsyncHistogram
}

// createSegment makes a new segment with its header and makes its name
// durable, so a later segment never exists without this one.
func createSegment(fsys vfs.FS, logDir string, seq uint64) (*segment, error) {
	path := fsys.PathJoin(logDir, segmentName(seq))
	// vfs has no O_EXCL; the directory lock leaves no one to race with.
	if _, err := fsys.Stat(path); err == nil {
		return nil, fmt.Errorf("log segment %s: %w", path, os.ErrExist)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	f, err := fsys.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	s := &segment{seq: seq, path: path, f: f}
	_, err = f.WriteAt([]byte(segmentMagic), 0)
	if err == nil {
		err = syncDir(fsys, logDir)
	}
	if err != nil {
		// Remove it so that the next attempt can use the name.
		_ = f.Close()
		_ = fsys.Remove(path)
		return nil, err
	}
	s.size.Store(int64(len(segmentMagic)))
	s.dirty.Store(true)
	return s, nil
}

// truncater is a vfs.File that can be cut back: the OS's files can.
type truncater interface{ Truncate(size int64) error }

// write appends one frame with one pwrite(2). WriteAt, unlike vfs.File's
// Write, may not modify the frame, which the applier reads next; and the
// next frame goes at the end of the last whole one, even after a short
// write, which is also cut back where the file allows.
func (s *segment) write(frame []byte) error {
	size := s.size.Load()
	n, err := s.f.WriteAt(frame, size)
	if err == nil {
		s.size.Add(int64(n))
		s.dirty.Store(true)
		return nil
	}
	if t, ok := s.f.(truncater); ok && n > 0 {
		if terr := t.Truncate(size); terr != nil {
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
	// A write whose size is counted here has returned, so the fsync
	// covers it.
	size := s.size.Load()
	t0 := time.Now()
	err := dataSync(s.f)
	if s.hist != nil {
		s.hist.record(time.Since(t0))
	}
	if err != nil {
		s.dirty.Store(true)
		return false, err
	}
	s.synced.Store(size)
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

// dataSync makes a segment's appended frames durable. On the OS's files
// SyncData is fdatasync on Linux, which skips the journal commit that a
// timestamp-only change costs fsync, as Redis does for its AOF (the size
// change an append makes is still flushed); elsewhere it is File.Sync
// (F_FULLFSYNC on macOS).
func dataSync(f vfs.File) error {
	for {
		err := f.SyncData()
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
