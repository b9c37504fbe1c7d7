package persistence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// OwnDirName is the subdirectory of the configured dir where Revolver keeps
// its files (the data directory Open takes), so that dir itself can be a
// Redis data directory, or hold the config file and logs: Revolver never
// writes anything else there but what Redis would (dump.rdb).
const OwnDirName = "revolver"

// Layout is where Revolver's files are inside a configured dir.
type Layout struct {
	// Dir is the configured directory (absolute).
	Dir string
	// Own is the data directory Open and BeginSnapshot take: Dir/revolver,
	// or Dir itself for a legacy layout.
	Own string
	// Legacy: an earlier Revolver kept its files in Dir itself, and this
	// one keeps using it that way. Nothing is moved: a move of db/ and
	// log/ is two renames, and a crash between them would split the store
	// from its unapplied log.
	Legacy bool
}

// ResolveLayout finds where Revolver's files are in dir, on fsys (nil is
// the OS's). A dir holding revolver.lock but no revolver/ was laid out by
// an earlier Revolver (every one of them created the lock file in its data
// directory, persistent or only saving): it stays as it is. Anything else
// uses dir/revolver. Nothing is created.
func ResolveLayout(fsys vfs.FS, dir string) (Layout, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Layout{}, fmt.Errorf("data directory %s: %w", dir, err)
	}
	l := Layout{Dir: abs, Own: filepath.Join(abs, OwnDirName)}
	fi, err := fsys.Stat(l.Own)
	switch {
	case err == nil && !fi.IsDir():
		return l, fmt.Errorf("data directory %s: %s is not a directory (Revolver keeps its files there)", abs, l.Own)
	case err == nil:
		return l, nil
	case !errors.Is(err, os.ErrNotExist):
		return l, fmt.Errorf("data directory %s: %w", abs, err)
	}
	if _, err := fsys.Stat(filepath.Join(abs, lockName)); err == nil {
		l.Own, l.Legacy = abs, true
	} else if !errors.Is(err, os.ErrNotExist) {
		return l, fmt.Errorf("data directory %s: %w", abs, err)
	}
	return l, nil
}

// HasStore reports whether the data directory own holds a store (db/):
// Revolver has data of its own there.
func HasStore(fsys vfs.FS, own string) (bool, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	_, err := fsys.Stat(filepath.Join(own, dbName))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Files the server keeps in the data directory beside the store, which
// Open counts as Revolver's own.
const (
	// ImportMarker says an import of a Redis dump (--import-rdb) began and
	// has not finished: the next start imports again, from empty.
	ImportMarker = "import-rdb.pending"
	// DumpRecord identifies the last dump.rdb this server wrote or
	// imported, so that a save replaces only those without keeping a copy.
	DumpRecord = "dump.written"
)

// BeginImport records durably, in the data directory own (made if
// missing), that an import of a Redis dump into it begins: until
// EndImport, every start knows the store may hold only part of it.
func BeginImport(fsys vfs.FS, own string) error {
	if fsys == nil {
		fsys = vfs.Default
	}
	if err := mkdirSynced(fsys, own); err != nil {
		return err
	}
	f, err := fsys.Create(filepath.Join(own, ImportMarker), vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(fsys, own)
	}
	return err
}

// ImportPending reports whether an import into own began and did not end.
func ImportPending(fsys vfs.FS, own string) (bool, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	_, err := fsys.Stat(filepath.Join(own, ImportMarker))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// EndImport records durably that the import into own is complete: call it
// once what it wrote is durable (Store.SyncNow).
func EndImport(fsys vfs.FS, own string) error {
	if fsys == nil {
		fsys = vfs.Default
	}
	if err := fsys.Remove(filepath.Join(own, ImportMarker)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return syncDir(fsys, own)
}
