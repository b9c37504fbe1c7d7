package server

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/persistence"
)

// SAVE and BGSAVE write a checkpoint and dump.rdb (rdb_save.go) with
// persistence on or off, as Redis saves whatever its settings are: with a
// store, the store's checkpoint; without one, the same checkpoint built from
// the engine's state (persistence.Snapshot). saveState is what INFO
// persistence and LASTSAVE report of them, as Redis's fields move.

// saveState is guarded by mu: a background save ends on its own
// goroutine, without the engine lock.
type saveState struct {
	mu          sync.Mutex
	running     bool // a BGSAVE, or BGREWRITEAOF's checkpoint (byRewrite), runs
	byRewrite   bool
	started     time.Time
	dirtyBefore int64     // the change count when the running BGSAVE began
	saved       int64     // changes a finished BGSAVE saved, not yet taken off the count
	scheduled   bool      // BGSAVE SCHEDULE (or in EXEC): the cron starts it
	lastSave    time.Time // the last save that succeeded, else the start
	lastTry     time.Time // the last BGSAVE started (Redis's lastbgsave_try)
	failed      bool      // the last save failed (rdb_last_bgsave_status)
	lastSecs    int64     // how long the last BGSAVE took, -1 before one
	rewriteErr  bool      // the last BGREWRITEAOF checkpoint failed
	rewriteSecs int64     // and how long it took, -1 before one
	// background counts the saves running on their own goroutines (a
	// checkpoint being finished, a dump being written); cancel stops a
	// dump at its next batch when the server closes.
	background    sync.WaitGroup
	cancel        atomic.Bool
	nativeSkipped atomic.Int64 // keys the last dump.rdb left out (INFO)
}

var (
	errBGSaveRunning = errors.New("ERR Background save already in progress")
	errOtherChild    = errors.New("ERR Another child process is active (AOF?): can't BGSAVE right now. " +
		"Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
	errSaveFailed = errors.New("ERR") // Redis's bare error; the log says why
)

func (st *saveState) init(now time.Time) {
	st.lastSave, st.lastSecs, st.rewriteSecs = now, -1, -1
}

// dirty is the change count since the last save (rdb_changes_since_last_save),
// less what a finished BGSAVE saved. Under the engine lock.
func (s *Server) dirty() int64 {
	st := &s.bg
	st.mu.Lock()
	n := st.saved
	st.saved = 0
	st.mu.Unlock()
	if n > 0 {
		s.eng.SavedChanges(n)
	}
	return s.eng.Stats().Dirty
}

// Save implements commands.Server (SAVE): a checkpoint now, under the
// engine lock.
func (s *Server) Save() error {
	st := &s.bg
	st.mu.Lock()
	busy := st.running && !st.byRewrite
	st.mu.Unlock()
	if busy {
		return errBGSaveRunning
	}
	s.saves.Add(1)
	if err := s.saveNow(); err != nil {
		s.log.Error("SAVE failed", "err", err)
		return errSaveFailed
	}
	s.dirty()
	s.eng.MarkSaved()
	st.mu.Lock()
	st.lastSave, st.failed = time.Now(), false
	st.mu.Unlock()
	return nil
}

// saveNow writes the checkpoint and the dump, once a background save that
// runs (of BGSAVE or BGREWRITEAOF, or at SHUTDOWN) has ended. Under the
// engine lock.
func (s *Server) saveNow() error {
	// The lock is held: once the records held back for coalescing are
	// out, every earlier command's records are in the writer.
	s.eng.FlushChanges()
	s.bg.background.Wait()
	own := ""
	if s.store != nil {
		s.store.WaitSave()
		if err := s.store.Save(); err != nil {
			return err
		}
		own = s.store.Dir()
	} else {
		sn, err := s.beginSnapshot()
		if err != nil {
			return err
		}
		s.eng.WriteSnapshot(sn.Sink())
		if err := sn.Finish(); err != nil {
			return err
		}
		own = sn.Dir()
	}
	return s.writeDumpNow(s.newDumpJob(own))
}

// BGSave implements commands.Server (BGSAVE [SCHEDULE]): it replies as
// Redis's bgsaveCommand. Inside EXEC the save is scheduled, as Redis does,
// so that it holds the whole transaction.
func (s *Server) BGSave(schedule, inExec bool) (string, error) {
	st := &s.bg
	st.mu.Lock()
	running, byRewrite := st.running, st.byRewrite
	switch {
	case running && !byRewrite:
		st.mu.Unlock()
		return "", errBGSaveRunning
	case running || inExec:
		defer st.mu.Unlock()
		if schedule || inExec {
			st.scheduled = true
			return "Background saving scheduled", nil
		}
		return "", errOtherChild
	}
	st.mu.Unlock()
	if err := s.startBGSave(false); err != nil {
		return "", errSaveFailed
	}
	return "Background saving started", nil
}

// startBGSave starts a background checkpoint and, for a BGSAVE, the dump
// written from it (rdb_save.go); BGREWRITEAOF's (rewrite) is the checkpoint
// alone, which Redis keeps apart in INFO. Without a store the state is
// written to the snapshot's store now, under the engine lock (Redis forks:
// the save holds the data as of the command), and checkpointed in the
// background. With one, the lock is held only to start it.
func (s *Server) startBGSave(rewrite bool) error {
	before := s.dirty()
	st := &s.bg
	now := time.Now()
	st.mu.Lock()
	st.running, st.byRewrite, st.started = true, rewrite, now
	if !rewrite {
		st.dirtyBefore, st.lastTry, st.scheduled = before, now, false
		s.saves.Add(1)
	}
	st.mu.Unlock()
	s.eng.FlushChanges()
	// then writes the dump once the checkpoint in own is complete.
	then := func(job dumpJob, err error) {
		defer st.background.Done()
		if err == nil && !rewrite {
			err = s.writeDumpFromCheckpoint(job)
		}
		s.bgSaveDone(err)
	}
	var err error
	st.background.Add(1)
	if s.store != nil {
		job := s.newDumpJob(s.store.Dir())
		err = s.store.BGSaveThen(func(err error) { then(job, err) })
	} else {
		var sn *persistence.Snapshot
		if sn, err = s.beginSnapshot(); err == nil {
			job := s.newDumpJob(sn.Dir())
			s.eng.WriteSnapshot(sn.Sink())
			go func() { then(job, sn.Finish()) }()
		}
	}
	if err != nil {
		st.background.Done()
		s.log.Error("background save failed to start", "err", err)
		st.mu.Lock()
		st.running = false
		if rewrite {
			st.rewriteErr = true
		} else {
			st.failed = true
		}
		st.mu.Unlock()
	}
	return err
}

// bgSaveDone records how a background checkpoint ended, as Redis's
// backgroundSaveDoneHandler: a BGSAVE that succeeded moves LASTSAVE and
// takes the changes it saved off the count. Any goroutine.
func (s *Server) bgSaveDone(err error) {
	st := &s.bg
	now := time.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.running = false
	secs := now.Unix() - st.started.Unix()
	if err != nil {
		s.log.Error("background save failed", "err", err)
	}
	if st.byRewrite {
		st.rewriteErr, st.rewriteSecs = err != nil, secs
		return
	}
	st.failed, st.lastSecs = err != nil, secs
	if err == nil {
		st.lastSave = now
		st.saved += st.dirtyBefore
	}
}

// SaveAfterFlushAll is the save Redis's FLUSHALL makes when save points
// are set (flushAllDataAndResetRDB): at once, its outcome only logged, not
// counted in rdb_saves. Under the engine lock.
func (s *Server) SaveAfterFlushAll() {
	if len(s.savePoints()) == 0 {
		return
	}
	if err := s.saveNow(); err != nil {
		s.log.Error("save after FLUSHALL failed", "err", err)
		return
	}
	s.dirty()
	s.eng.MarkSaved()
	s.bg.mu.Lock()
	s.bg.lastSave, s.bg.failed = time.Now(), false
	s.bg.mu.Unlock()
}

// LastSave implements commands.Server.
func (s *Server) LastSave() int64 {
	s.bg.mu.Lock()
	defer s.bg.mu.Unlock()
	return s.bg.lastSave.Unix()
}

// saveCron starts a scheduled BGSAVE, or one the save points call for
// (CONFIG save "seconds changes ..."), as Redis's serverCron: when enough
// changes are older than the last save and the last attempt succeeded or
// is 5 seconds old. It takes the engine lock.
func (s *Server) saveCron(now time.Time) {
	s.eng.Lock()
	defer s.eng.Unlock()
	if yielding, _ := s.lua.Yielding(); yielding || s.shutting.Load() {
		return // a slow script's writes are not all there yet
	}
	st := &s.bg
	st.mu.Lock()
	running, scheduled, lastSave, lastTry, failed := st.running, st.scheduled, st.lastSave, st.lastTry, st.failed
	st.mu.Unlock()
	if running {
		return
	}
	if scheduled {
		s.startBGSave(false)
		return
	}
	points := s.savePoints()
	if len(points) == 0 {
		return
	}
	dirty := s.dirty()
	for _, p := range points {
		if dirty >= p[1] && now.Unix()-lastSave.Unix() > p[0] && (now.Unix()-lastTry.Unix() > 5 || !failed) {
			s.log.Info("saving", "changes", p[1], "seconds", p[0])
			s.startBGSave(false)
			return
		}
	}
}

// due reports whether a scheduled BGSAVE waits to start.
func (st *saveState) due() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.scheduled && !st.running
}

// savePoints reads CONFIG save: (seconds, changes) pairs.
func (s *Server) savePoints() [][2]int64 {
	f := strings.Fields(s.cfg.extraString("save"))
	var out [][2]int64
	for i := 0; i+1 < len(f); i += 2 {
		secs, err1 := strconv.ParseInt(f[i], 10, 64)
		changes, err2 := strconv.ParseInt(f[i+1], 10, 64)
		if err1 == nil && err2 == nil {
			out = append(out, [2]int64{secs, changes})
		}
	}
	return out
}

// saveOnShutdown reports whether SHUTDOWN saves: asked to (SAVE), or save
// points are set and NOSAVE was not given, as Redis decides.
func (s *Server) saveOnShutdown(save, nosave bool) bool {
	return save || !nosave && len(s.savePoints()) > 0
}

// beginSnapshot starts the checkpoint of a server without a store, in
// Revolver's own directory inside dir (persistence.ResolveLayout).
func (s *Server) beginSnapshot() (*persistence.Snapshot, error) {
	lay, err := persistence.ResolveLayout(nil, s.cfg.Dir)
	if err != nil {
		return nil, err
	}
	return persistence.BeginSnapshot(lay.Own, s.log)
}
