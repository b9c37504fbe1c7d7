package persistence

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/revolver-db/revolver/engine"
)

// CheckpointDir is where SAVE and BGSAVE leave the checkpoint of the data
// directory own.
func CheckpointDir(own string) string { return filepath.Join(own, checkpointName) }

// Checkpoint is a read-only view of the store's records: a checkpoint
// opened read-only, from which BGSAVE writes dump.rdb in the background, or
// a snapshot of the live store as of a point of its change log
// (Store.ViewThen), from which a replica's full sync is written. Either way
// the live keyspace is not held while it is read.
type Checkpoint struct {
	db  pebble.Reader
	dir string
}

// OpenCheckpoint opens the checkpoint in dir read-only (it is never
// modified) on the OS's file system, refusing one that is not Revolver's.
func OpenCheckpoint(dir string, log *slog.Logger) (*Checkpoint, error) {
	opts := pebbleOptions(vfs.Default, log, 0)
	opts.ReadOnly = true
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := checkFormat(db, dir); err != nil {
		db.Close()
		return nil, err
	}
	return &Checkpoint{db: db, dir: dir}, nil
}

// Close closes the checkpoint.
func (c *Checkpoint) Close() error { return c.db.Close() }

// LoadServer feeds l the server records (function libraries, the SWAPDB
// map).
func (c *Checkpoint) LoadServer(l engine.Loader) error {
	return loadServerRecords(c.db, c.dir, l)
}

// LoadKeys feeds the keyspace records in batches of whole keys: begin
// returns the loader of a new batch, end is called once it is complete. A
// batch ends before a key of another database, or once it holds batchBytes
// of records (a single larger key makes a larger batch). It returns the
// number of keys.
func (c *Checkpoint) LoadKeys(batchBytes int, begin func() (engine.Loader, error), end func() error) (int, error) {
	it, err := c.db.NewIter(&pebble.IterOptions{LowerBound: []byte{keyspaceTag}, UpperBound: []byte{keyspaceEnd}})
	if err != nil {
		return 0, fmt.Errorf("checkpoint %s: %w", c.dir, err)
	}
	var l engine.Loader
	keys, size, db := 0, 0, -1
	for valid := it.First(); valid && err == nil; valid = it.Next() {
		k := it.Key()
		var v []byte
		if v, err = it.ValueAndErr(); err != nil {
			break
		}
		var r recordKey
		if r, err = decodeRecordKey(k); err != nil {
			err = fmt.Errorf("checkpoint %s: record %s: %w", c.dir, hexKey(k), err)
			break
		}
		if r.Kind == kindValue && l != nil && (r.DB != db || size >= batchBytes) {
			l, size = nil, 0
			if err = end(); err != nil {
				break
			}
		}
		if l == nil {
			if l, err = begin(); err != nil {
				break
			}
		}
		db, size = r.DB, size+len(k)+len(v)
		if err = loadRecord(l, k, v, &keys); err != nil {
			err = fmt.Errorf("checkpoint %s: record %s: %w", c.dir, hexKey(k), err)
		}
	}
	if err == nil && l != nil {
		err = end()
	}
	return keys, errors.Join(err, it.Error(), it.Close())
}
