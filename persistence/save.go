package persistence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrSaveInProgress is returned by Save and BGSave while a save runs.
var ErrSaveInProgress = errors.New("Background save already in progress")

var errClosed = errors.New("persistence: store is closed")

// Save writes a consistent checkpoint of everything changed so far to
// Dir/checkpoint, replacing the previous one only once the new one is
// complete and synced. Changes made while it waits for the applier may be
// in it too; the server calls it under the engine lock, where none are.
func (s *Store) Save() error {
	if err := s.beginSave(); err != nil {
		return err
	}
	// Under the engine lock nobody else commits the caller's batch (SAVE
	// pipelined after a write), nor ends a run it is in.
	s.Sync()
	err := s.checkpoint(s.w.lastNum())
	s.endSave(err)
	return err
}

// BGSave starts Save in the background. The checkpoint holds every change
// made before the call, and possibly some made after it.
func (s *Store) BGSave() error { return s.BGSaveThen(nil) }

// BGSaveThen is BGSave calling done, when not nil, with the save's
// outcome once it is recorded (LastSave, SaveInProgress).
func (s *Store) BGSaveThen(done func(error)) error {
	if err := s.beginSave(); err != nil {
		return err
	}
	upto := s.w.lastNum()
	go func() {
		err := s.checkpoint(upto)
		s.endSave(err)
		if done != nil {
			done(err)
		}
	}()
	return nil
}

// LastSave is when the last save succeeded, or when the store was opened.
func (s *Store) LastSave() time.Time {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	return s.lastSave
}

// WaitSave returns once no save runs.
func (s *Store) WaitSave() { s.saveWG.Wait() }

// SaveInProgress reports whether a save runs.
func (s *Store) SaveInProgress() bool {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	return s.saving
}

// LastSaveErr is the error of the last save, nil if it succeeded.
func (s *Store) LastSaveErr() error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	return s.lastSaveErr
}

func (s *Store) beginSave() error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	switch {
	case s.closing:
		return errClosed
	case s.saving:
		return ErrSaveInProgress
	}
	s.saving = true
	s.saveWG.Add(1)
	return nil
}

func (s *Store) endSave(err error) {
	s.saveMu.Lock()
	s.saving = false
	s.lastSaveErr = err
	if err == nil {
		s.lastSave = time.Now()
	}
	s.saveMu.Unlock()
	if err != nil {
		s.log.Error("save failed", "err", err)
	} else {
		s.log.Info("saved checkpoint", "dir", filepath.Join(s.dir, checkpointName))
	}
	s.saveWG.Done()
}

// checkpoint waits until the applier has written every log batch through
// upto to Pebble (so they are in the log too), checkpoints Pebble into
// checkpoint.tmp (Pebble syncs its files and directory), then swaps it in
// with renames and syncs the data directory.
func (s *Store) checkpoint(upto uint64) error {
	start := time.Now()
	s.waitApplied(upto)
	final := filepath.Join(s.dir, checkpointName)
	tmp := final + ".tmp"
	old := final + ".old"
	if err := errors.Join(s.fsys.RemoveAll(tmp), s.fsys.RemoveAll(old)); err != nil {
		return fmt.Errorf("save: %w", err)
	}
	if err := s.db.Checkpoint(tmp, pebble.WithFlushedWAL()); err != nil {
		_ = s.fsys.RemoveAll(tmp)
		return fmt.Errorf("save: %w", err)
	}
	if err := installCheckpoint(s.fsys, s.dir); err != nil {
		return err
	}
	s.log.Debug("checkpoint written", "elapsed", time.Since(start))
	return nil
}

// installCheckpoint makes the complete checkpoint in dir's checkpoint.tmp
// the checkpoint, replacing the previous one only then, and syncs dir.
func installCheckpoint(fsys vfs.FS, dir string) error {
	final := filepath.Join(dir, checkpointName)
	tmp := final + ".tmp"
	old := final + ".old"
	hadOld := true
	if err := fsys.Rename(final, old); errors.Is(err, os.ErrNotExist) {
		hadOld = false
	} else if err != nil {
		return fmt.Errorf("save: %w", err)
	}
	if err := fsys.Rename(tmp, final); err != nil {
		return fmt.Errorf("save: %w", err)
	}
	if err := syncDir(fsys, dir); err != nil {
		return fmt.Errorf("save: %w", err)
	}
	if hadOld {
		if err := fsys.RemoveAll(old); err != nil {
			return fmt.Errorf("save: removing previous checkpoint: %w", err)
		}
	}
	return nil
}
