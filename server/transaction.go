package server

import (
	"strings"

	"github.com/revolver-db/revolver/commands"
)

// queued is a command accepted between MULTI and EXEC.
type queued struct {
	cmd  *commands.Command
	args [][]byte
}

// txControl reports whether cmd runs at once inside MULTI instead of being
// queued, as Redis treats EXEC, DISCARD, MULTI, WATCH, QUIT and RESET.
func txControl(cmd *commands.Command) bool {
	switch cmd.FullName() {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// Multi implements commands.Conn.
func (c *Client) Multi() {
	if c.multi {
		c.w.Error("ERR MULTI calls can not be nested")
		return
	}
	c.multi = true
	c.w.OK()
}

// Discard implements commands.Conn.
func (c *Client) Discard() {
	if !c.multi {
		c.w.Error("ERR DISCARD without MULTI")
		return
	}
	c.discardTransaction()
	c.w.OK()
}

// discardTransaction drops the queue and the watches, as EXEC, DISCARD,
// RESET and a disconnect do.
func (c *Client) discardTransaction() {
	c.multi, c.dirtyExec, c.queueDenyOOM, c.queueMayWrite = false, false, false, false
	c.queueMem = 0
	clear(c.queue)
	c.queue = c.queue[:0]
	c.s.eng.Unwatch(&c.watch)
}

// execAbort answers an EXEC that was itself rejected and ends the
// transaction: "EXECABORT Transaction discarded because of: " and the
// rejection, without the generic ERR code (as Redis formats it).
func (c *Client) execAbort(reason string) {
	c.discardTransaction()
	mark := c.w.Len()
	c.w.Error("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(reason, "ERR "))
	c.s.countError(c.w.Bytes()[mark+1:])
}

// Watch implements commands.Conn.
func (c *Client) Watch(keys [][]byte) {
	if c.multi {
		c.w.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	for _, k := range keys {
		c.s.eng.WatchKey(&c.watch, c.db, k)
	}
	c.w.OK()
}

// Unwatch implements commands.Conn.
func (c *Client) Unwatch() {
	c.s.eng.Unwatch(&c.watch)
	c.w.OK()
}

// Exec implements commands.Conn: it runs the queued commands one after the
// other under the engine lock the batch already holds, so nothing else runs
// in between, and replies with the array of their replies.
func (c *Client) Exec() {
	s := c.s
	if !c.multi {
		c.w.Error("ERR EXEC without MULTI")
		return
	}
	switch {
	case c.dirtyExec:
		c.w.Error("EXECABORT Transaction discarded because of previous errors.")
		c.discardTransaction()
		return
	case c.watch.Dirty() || s.eng.WatchedKeyExpired(&c.watch):
		c.w.NullArray()
		c.discardTransaction()
		return
	}
	s.eng.Unwatch(&c.watch)
	q := c.queue
	c.multi = false
	c.inExec, c.execArgs = true, c.ctx.Args
	c.w.Array(len(q))
	// The engine's time stands still inside EXEC, as Redis's does; the
	// clock still times each command (one read: a start is the previous end).
	start := s.clock.Now()
	for _, qc := range q {
		if u := c.user; u != nil && !u.Unrestricted && !c.master {
			// Checked again: the rules may have changed since it queued.
			if res, idx := u.Check(qc.cmd, qc.args); res != commands.ACLOK {
				s.aclDenied(c, res, idx, qc.cmd, qc.args, "multi")
				c.w.Error("NOPERM ACLs rules changed between the moment the transaction was accumulated and the " +
					"EXEC call. This command is no longer allowed for the following reason: " + execDeniedReason(res))
				continue
			}
		}
		r := s.runCommand(c, qc.cmd, qc.args, start)
		end := s.clock.Now()
		s.account(c, r, end)
		start = end
	}
	c.inExec, c.execArgs = false, nil
	c.discardTransaction()
}
