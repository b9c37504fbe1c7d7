package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
)

// SHUTDOWN as Redis 7.0 has it: a master whose replicas have not
// acknowledged its whole stream holds writes, asks them for their offsets,
// and waits up to shutdown-timeout seconds for them before it stops, so
// that a planned stop (Sentinel's, an operator's) loses nothing the
// replicas did not get. NOW skips the wait, ABORT cancels it, FORCE stops
// even if the save fails.

// shutdownWait is a SHUTDOWN waiting for replicas. Under the engine lock.
type shutdownWait struct {
	deadline     time.Time
	save, nosave bool
	force        bool
	blocked      []shutdownClient
}

type shutdownClient struct {
	c *Client
	w *engine.Waiter
}

// Shutdown implements commands.Server.
func (s *Server) Shutdown(o commands.ShutdownOptions) (bool, error) {
	if o.Abort {
		if s.shutdown == nil {
			return false, errors.New("ERR No shutdown in progress.")
		}
		s.log.Warn("shutdown manually aborted")
		s.endShutdownWait()
		return false, nil
	}
	if s.shutdown != nil {
		return true, nil // one more client waits for the same stop
	}
	if yielding, _ := s.lua.Yielding(); yielding {
		// A slow script runs: only SHUTDOWN NOSAVE stops the server, and
		// what the script changed so far is not kept (Redis propagates a
		// script's writes when it ends).
		if !o.NoSave {
			return false, errors.New(s.lua.BusyError())
		}
		s.dropUnsynced.Store(true)
		s.lua.ForceKill()
		s.shutting.Store(true)
		return false, nil
	}
	timeout := s.cfg.extraInt("shutdown-timeout")
	if !o.Now && timeout > 0 && !s.replicasCaughtUp() {
		s.shutdown = &shutdownWait{deadline: time.Now().Add(time.Duration(timeout) * time.Second),
			save: o.Save, nosave: o.NoSave, force: o.Force}
		s.shutdownWaiting.Store(true)
		s.holdWritesForShutdown(true)
		s.feedOwn([]byte("REPLCONF"), []byte("GETACK"), []byte("*"))
		s.log.Info("waiting for replicas before shutting down")
		return true, nil
	}
	return false, s.finishShutdown(o.Save, o.NoSave, o.Force)
}

// WaitForShutdown implements commands.Server: conn, blocked, waits for the
// shutdown in progress.
func (s *Server) WaitForShutdown(conn commands.Conn) {
	if c, ok := conn.(*Client); ok && c.waiter != nil && s.shutdown != nil {
		s.shutdown.blocked = append(s.shutdown.blocked, shutdownClient{c, c.waiter})
	}
}

// replicasCaughtUp reports whether every replica acknowledged the whole
// stream (Redis's isReadyToShutdown).
func (s *Server) replicasCaughtUp() bool {
	for _, c := range s.replm.replicas {
		if c.rp.ackOff != s.repl.offset {
			return false
		}
	}
	return true
}

// shutdownCron stops the server once the replicas caught up or the wait
// timed out. Under the engine lock.
func (s *Server) shutdownCron(now time.Time) {
	w := s.shutdown
	if w == nil {
		return
	}
	caughtUp := s.replicasCaughtUp()
	if !caughtUp && now.Before(w.deadline) {
		return
	}
	if !caughtUp {
		s.log.Warn("replicas did not catch up before shutdown-timeout; shutting down anyway")
	} else {
		s.log.Info("replicas caught up; shutting down")
	}
	if err := s.finishShutdown(w.save, w.nosave, w.force); err != nil {
		s.log.Error("shutdown failed; the server goes on", "err", err)
		s.endShutdownWait()
		return
	}
	s.shutdownWaiting.Store(false)
	if s.closeStarted.CompareAndSwap(false, true) {
		go s.Close()
	}
}

// finishShutdown saves if it should and marks the server shutting down.
func (s *Server) finishShutdown(save, nosave, force bool) error {
	if s.saveOnShutdown(save, nosave) {
		if err := s.saveNow(); err != nil && !force {
			return fmt.Errorf("ERR Errors trying to SHUTDOWN. Check logs. (%v)", err)
		}
	}
	s.shutting.Store(true)
	return nil
}

// endShutdownWait cancels the wait: writes go on, and the clients blocked
// in SHUTDOWN get its error.
func (s *Server) endShutdownWait() {
	w := s.shutdown
	s.shutdown = nil
	s.shutdownWaiting.Store(false)
	s.holdWritesForShutdown(false)
	for _, b := range w.blocked {
		if b.c.waiter == b.w && b.w.Waiting() {
			s.eng.Unblock(b.w)
			s.finishBlocked(b.c, 0, true, false)
			b.c.wakeParked()
		}
	}
}
