package server

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// Revolver's change log plays the part of Redis's append-only file, and a
// checkpoint is what compacts it: BGREWRITEAOF starts the checkpoint BGSAVE
// starts, and INFO persistence reports it in the aof_rewrite fields.
type aofRewrites struct {
	count atomic.Int64 // rewrites started (INFO aof_rewrites)
}

// BGRewriteAOF implements the server side of BGREWRITEAOF.
func (s *Server) BGRewriteAOF() error {
	if s.store == nil {
		// Nothing is logged, so there is nothing to compact; Redis without
		// AOF also answers that the rewrite started.
		s.aof.count.Add(1)
		return nil
	}
	// A BGSAVE still writing its dump reads the checkpoint a rewrite
	// would replace.
	if s.aofRewriteInProgress() || s.store.SaveInProgress() || s.bgSaveRunning() {
		return errors.New("ERR Background append only file rewriting already in progress")
	}
	if err := s.startBGSave(true); err != nil {
		return fmt.Errorf("ERR %v", err)
	}
	s.aof.count.Add(1)
	return nil
}

// bgSaveRunning reports whether a BGSAVE (its checkpoint or its dump)
// still runs.
func (s *Server) bgSaveRunning() bool {
	s.bg.mu.Lock()
	defer s.bg.mu.Unlock()
	return s.bg.running && !s.bg.byRewrite
}

// aofRewriteInProgress reports whether a checkpoint BGREWRITEAOF started
// still runs.
func (s *Server) aofRewriteInProgress() bool {
	s.bg.mu.Lock()
	defer s.bg.mu.Unlock()
	return s.bg.running && s.bg.byRewrite
}
