package server

import "github.com/revolver-db/revolver/commands"

// PROVISIONAL, replaced at merge time by server/propagate.go: until the
// propagation work lands, a client's command that changed the dataset is
// fed to the replication stream as it was sent. Only deterministic
// commands replicate correctly this way (no EXPIRE, SPOP, scripts' effects,
// MULTI/EXEC framing), which is all the replication tests use.
func (s *Server) propagateProvisional(c *Client, cmd *commands.Command, args [][]byte, dirtyBefore int64) {
	if c.master || cmd.FullName() == "exec" || s.eng.Stats().Dirty == dirtyBefore {
		return // EXEC's commands were fed one by one as they ran
	}
	s.replFeed(c.db, args)
}
