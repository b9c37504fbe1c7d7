// Package powercut is for durability tests of the store: FS wraps a file
// system (persistence.Options.FS) to count the syncs and writes of the
// change log's files and to hold syncs until released, so a test can see
// what waits for an fsync. A power cut is vfs.NewCrashableMem's CrashClone,
// which keeps exactly what was synced; Cut is that.
package powercut

import (
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Cut returns the file system a power cut at this moment would leave: what
// was synced, nothing else. fs goes on as before; the test stops what
// runs on it and starts again on the result.
func Cut(fs *vfs.MemFS) *vfs.MemFS { return fs.CrashClone(vfs.CrashCloneCfg{}) }

// FS is a vfs.FS that watches the files directly in one directory (the
// store's log/): it counts their syncs and writes and, while held, makes
// their syncs wait. Other files and directories pass through untouched.
type FS struct {
	vfs.FS
	dir string

	mu      sync.Mutex
	syncs   int
	writes  int
	gate    chan struct{} // while held: syncs wait until it is closed
	waiting chan struct{} // a value for every sync that waits at the gate
	watches []watch
}

type watch struct {
	n  int
	ch chan struct{}
}

// Wrap watches the files in dir on inner.
func Wrap(inner vfs.FS, dir string) *FS {
	return &FS{FS: inner, dir: dir, waiting: make(chan struct{}, 1024)}
}

// Syncs is how many syncs of the watched files have finished.
func (f *FS) Syncs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncs
}

// Writes is how many Write and WriteAt calls the watched files took.
func (f *FS) Writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

// SyncedTo returns a channel closed once n syncs have finished.
func (f *FS) SyncedTo(n int) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	if f.syncs >= n {
		close(ch)
	} else {
		f.watches = append(f.watches, watch{n, ch})
	}
	return ch
}

// Hold makes the syncs that start from now on wait until Release.
func (f *FS) Hold() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate == nil {
		f.gate = make(chan struct{})
	}
}

// Release lets the held syncs go on, and those to come.
func (f *FS) Release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gate != nil {
		close(f.gate)
		f.gate = nil
	}
}

// Waiting receives a value whenever a sync starts waiting at the gate.
func (f *FS) Waiting() <-chan struct{} { return f.waiting }

func (f *FS) beforeSync() {
	f.mu.Lock()
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case f.waiting <- struct{}{}:
		default:
		}
		<-gate
	}
}

func (f *FS) afterSync() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs++
	kept := f.watches[:0]
	for _, w := range f.watches {
		if f.syncs >= w.n {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	f.watches = kept
}

func (f *FS) wrote() {
	f.mu.Lock()
	f.writes++
	f.mu.Unlock()
}

func (f *FS) wrap(name string, file vfs.File, err error) (vfs.File, error) {
	if err != nil || f.FS.PathDir(name) != f.dir {
		return file, err
	}
	return &watched{File: file, fs: f}, nil
}

// Create implements vfs.FS.
func (f *FS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, category)
	return f.wrap(name, file, err)
}

// Open implements vfs.FS.
func (f *FS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.Open(name, opts...)
	return f.wrap(name, file, err)
}

// OpenReadWrite implements vfs.FS.
func (f *FS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name, category, opts...)
	return f.wrap(name, file, err)
}

// ReuseForWrite implements vfs.FS.
func (f *FS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.ReuseForWrite(oldname, newname, category)
	return f.wrap(newname, file, err)
}

// Unwrap implements vfs.FS.
func (f *FS) Unwrap() vfs.FS { return f.FS }

// watched is a file in the watched directory. It hides the file's
// Truncate, if any: the store then falls back to what every file system
// can do.
type watched struct {
	vfs.File
	fs *FS
}

func (w *watched) Write(p []byte) (int, error) {
	w.fs.wrote()
	return w.File.Write(p)
}

func (w *watched) WriteAt(p []byte, off int64) (int, error) {
	w.fs.wrote()
	return w.File.WriteAt(p, off)
}

func (w *watched) Sync() error {
	w.fs.beforeSync()
	err := w.File.Sync()
	w.fs.afterSync()
	return err
}

func (w *watched) SyncData() error {
	w.fs.beforeSync()
	err := w.File.SyncData()
	w.fs.afterSync()
	return err
}

func (w *watched) SyncTo(length int64) (bool, error) {
	w.fs.beforeSync()
	full, err := w.File.SyncTo(length)
	w.fs.afterSync()
	return full, err
}
