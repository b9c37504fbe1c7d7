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
	count   atomic.Int64 // rewrites started (INFO aof_rewrites)
	running atomic.Bool  // the running checkpoint was started by BGREWRITEAOF
}

// BGRewriteAOF implements the server side of BGREWRITEAOF.
func (s *Server) BGRewriteAOF() error {
	if s.store == nil {
		// Nothing is logged, so there is nothing to compact; Redis without
		// AOF also answers that the rewrite started.
		s.aof.count.Add(1)
		return nil
	}
	if s.store.SaveInProgress() {
		return errors.New("ERR Background append only file rewriting already in progress")
	}
	s.eng.FlushChanges()
	if err := s.store.BGSave(); err != nil {
		return fmt.Errorf("ERR %v", err)
	}
	s.aof.count.Add(1)
	s.aof.running.Store(true)
	s.eng.MarkSaved()
	return nil
}

// aofRewriteInProgress reports whether a checkpoint BGREWRITEAOF started
// still runs.
func (s *Server) aofRewriteInProgress() bool {
	return s.store != nil && s.aof.running.Load() && s.store.SaveInProgress()
}
