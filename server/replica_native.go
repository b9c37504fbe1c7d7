package server

import (
	"errors"

	"github.com/revolver-db/revolver/commands"
)

var errNotMaster = errors.New("ERR REVOLVER.REPL is sent only by a master to its replicas")

// MasterEvent implements commands.Server: the native events of the master's
// stream (server/propagate.go), applied on the master's clock. Under the
// engine lock.
func (s *Server) MasterEvent(conn commands.Conn, event string, ms, client int64) error {
	c, ok := conn.(*Client)
	if !ok || !c.master || s.replica == nil || s.replica.master != c {
		return errNotMaster
	}
	s.eng.SetMasterClock(ms)
	switch event {
	case "AT":
		c.replCaller = client
	case "TICK":
		s.eng.FireNativeTimer(ms)
	case "CLOSED":
		s.eng.ClientClosedByMaster(client)
	}
	return nil
}
