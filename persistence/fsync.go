package persistence

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/wal"
)

// Fsync is the appendfsync policy: when the write-ahead log reaches the disk.
// Every commit reaches the OS (write(2)) before it is acknowledged under any
// policy, so a process crash never loses an acknowledged write.
type Fsync int32

const (
	// FsyncEverySec fsyncs the WAL about once a second: power loss loses at
	// most about a second of writes. The zero value, like Redis's default.
	FsyncEverySec Fsync = iota
	// FsyncAlways fsyncs before a write is acknowledged; concurrent writers
	// share each fsync.
	FsyncAlways
	// FsyncNo leaves flushing to the OS.
	FsyncNo
)

// ParseFsync parses an appendfsync value, case-insensitively like Redis.
func ParseFsync(s string) (Fsync, error) {
	switch strings.ToLower(s) {
	case "always":
		return FsyncAlways, nil
	case "everysec":
		return FsyncEverySec, nil
	case "no":
		return FsyncNo, nil
	}
	return 0, fmt.Errorf("invalid appendfsync value %q (want always, everysec or no)", s)
}

// String returns the appendfsync spelling of f.
func (f Fsync) String() string {
	switch f {
	case FsyncAlways:
		return "always"
	case FsyncEverySec:
		return "everysec"
	case FsyncNo:
		return "no"
	}
	return fmt.Sprintf("Fsync(%d)", int32(f))
}

// walFS applies the fsync policy to Pebble's WAL files and leaves every other
// file alone: sstables, MANIFEST, OPTIONS and directories always sync for
// real, or Pebble's own crash safety would break. Pebble commits with
// pebble.Sync, so a commit returns once the WAL write reached the OS; under
// everysec and no the WAL "sync" it then waits for is a no-op.
type walFS struct {
	vfs.FS
	// dbDir is the only directory whose .log files are the live WAL; the
	// WAL copies a checkpoint writes elsewhere must sync for real.
	dbDir  string
	log    *slog.Logger
	policy atomic.Int32
	fsyncs atomic.Uint64
	reused atomic.Uint64 // WAL files recycled through ReuseForWrite

	mu   sync.Mutex
	open map[*walFile]struct{}
	// scratch is reused by syncOpen; only the syncing goroutine uses it.
	scratch []*walFile
}

func newWALFS(inner vfs.FS, dbDir string, policy Fsync, log *slog.Logger) *walFS {
	fs := &walFS{FS: inner, dbDir: filepath.Clean(dbDir), log: log, open: map[*walFile]struct{}{}}
	fs.policy.Store(int32(policy))
	return fs
}

func (fs *walFS) setPolicy(f Fsync) { fs.policy.Store(int32(f)) }
func (fs *walFS) getPolicy() Fsync  { return Fsync(fs.policy.Load()) }

// isWAL matches Pebble's WAL names ("000123.log", or "000123-001.log" for
// failover segments) directly inside the store directory.
func (fs *walFS) isWAL(name string) bool {
	if filepath.Clean(filepath.Dir(name)) != fs.dbDir {
		return false
	}
	_, _, ok := wal.ParseLogFilename(filepath.Base(name))
	return ok
}

func (fs *walFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !fs.isWAL(name) {
		return f, err
	}
	w := &walFile{File: f, fs: fs, name: name}
	fs.mu.Lock()
	fs.open[w] = struct{}{}
	fs.mu.Unlock()
	return w, nil
}

// Create implements vfs.FS.
func (fs *walFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return fs.wrap(name, f, err)
}

// OpenReadWrite implements vfs.FS.
func (fs *walFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.wrap(name, f, err)
}

// ReuseForWrite implements vfs.FS; Pebble recycles old WAL files through
// it, so recycled WALs get the policy too.
func (fs *walFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if err == nil {
		fs.reused.Add(1)
	}
	return fs.wrap(newname, f, err)
}

// Unwrap implements vfs.FS.
func (fs *walFS) Unwrap() vfs.FS { return fs.FS }

// syncOpen fsyncs every open WAL file that was written since its last sync.
// It is the everysec tick and the last step of Close.
func (fs *walFS) syncOpen() error {
	fs.mu.Lock()
	files := fs.scratch[:0]
	for f := range fs.open {
		files = append(files, f)
	}
	fs.mu.Unlock()
	var first error
	for i, f := range files {
		if err := f.syncNow(); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", f.name, err)
		}
		files[i] = nil
	}
	fs.scratch = files[:0]
	return first
}

// walFile is an open WAL file. Pebble writes and syncs it from one goroutine;
// the everysec tick syncs it from another, so real syncs and Close are
// serialized by mu.
type walFile struct {
	vfs.File
	fs   *walFS
	name string
	// dirty is set after every write and cleared before a real sync, so a
	// write racing with a sync is caught by the next one.
	dirty  atomic.Bool
	mu     sync.Mutex
	closed bool
}

func (f *walFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if n > 0 {
		f.dirty.Store(true)
	}
	return n, err
}

func (f *walFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	if n > 0 {
		f.dirty.Store(true)
	}
	return n, err
}

func (f *walFile) Sync() error {
	if f.fs.getPolicy() != FsyncAlways {
		return nil
	}
	return f.realSync(f.File.Sync)
}

func (f *walFile) SyncData() error {
	if f.fs.getPolicy() != FsyncAlways {
		return nil
	}
	return f.realSync(f.File.SyncData)
}

func (f *walFile) SyncTo(length int64) (bool, error) {
	if f.fs.getPolicy() != FsyncAlways {
		return false, nil
	}
	return f.File.SyncTo(length)
}

func (f *walFile) syncNow() error { return f.realSync(f.File.SyncData) }

func (f *walFile) realSync(sync func() error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncLocked(sync)
}

func (f *walFile) syncLocked(sync func() error) error {
	// Holding mu means a sync that cleared dirty has finished, so a clean
	// file really is on disk.
	if f.closed || !f.dirty.Swap(false) {
		return nil
	}
	if err := sync(); err != nil {
		f.dirty.Store(true)
		return err
	}
	f.fs.fsyncs.Add(1)
	return nil
}

// Close syncs for real under every policy: Pebble closes a WAL when it
// rotates to the next one, and a synced successor after an unsynced
// predecessor would leave a hole on power loss.
func (f *walFile) Close() error {
	f.mu.Lock()
	err := f.syncLocked(f.File.SyncData)
	f.closed = true
	f.mu.Unlock()
	f.fs.mu.Lock()
	delete(f.fs.open, f)
	f.fs.mu.Unlock()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}
