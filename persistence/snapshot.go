package persistence

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/revolver-db/revolver/engine"
)

// snapshotName is the scratch data directory, inside the data directory,
// where a server without a store builds its checkpoint.
const snapshotName = checkpointName + ".build"

// Snapshot is a checkpoint being written by a server that keeps no store
// (persistence off), so that SAVE leaves what a persistent server's leaves:
// Dir/checkpoint, a valid db/ directory. The caller writes the whole state
// into Sink, as the change records a restart would load, then calls Finish;
// the records go through a fresh store in a scratch directory, whose own
// checkpoint becomes the data directory's.
type Snapshot struct {
	dir     string
	fsys    vfs.FS
	scratch *Store
	lock    io.Closer
}

// BeginSnapshot locks dir (made if missing) for the snapshot, as a
// persistent server locks its data directory, so that it never writes into
// one a server uses, and opens the scratch store. It writes to the OS's
// file system.
func BeginSnapshot(dir string, log *slog.Logger) (*Snapshot, error) {
	fsys := vfs.Default
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := mkdirSynced(fsys, dir); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	lock, err := lockDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	scratchDir := filepath.Join(dir, snapshotName)
	if err := fsys.RemoveAll(scratchDir); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("save: %w", err)
	}
	st, err := Open(Options{Dir: scratchDir, Fsync: FsyncNo, Logger: log, FS: fsys})
	if err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("save: %w", err)
	}
	return &Snapshot{dir: dir, fsys: fsys, scratch: st, lock: lock}, nil
}

// Dir is the data directory the checkpoint goes to.
func (sn *Snapshot) Dir() string { return sn.dir }

// Sink is where the state is written.
func (sn *Snapshot) Sink() engine.ChangeSink { return sn.scratch }

// Finish checkpoints what Sink received and puts it in place of the data
// directory's checkpoint, then removes the scratch store and unlocks.
func (sn *Snapshot) Finish() error {
	fsys := sn.fsys
	err := sn.scratch.Save()
	if err == nil {
		tmp := filepath.Join(sn.dir, checkpointName+".tmp")
		err = errors.Join(fsys.RemoveAll(tmp), fsys.RemoveAll(filepath.Join(sn.dir, checkpointName+".old")))
		if err == nil {
			err = fsys.Rename(filepath.Join(sn.scratch.dir, checkpointName), tmp)
		}
		if err == nil {
			err = installCheckpoint(fsys, sn.dir)
		}
	}
	err = errors.Join(err, sn.scratch.Close(), fsys.RemoveAll(sn.scratch.dir), sn.lock.Close())
	if err != nil {
		return fmt.Errorf("save: %w", err)
	}
	return nil
}
