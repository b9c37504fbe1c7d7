package server

import "time"

// Block implements commands.Conn: the client parks once the current command
// returns (see park).
func (c *Client) Block(keys [][]byte, timeout time.Duration, serve func(key []byte) bool, timeoutReply func()) {
	if c.inExec || c.master {
		// Redis never blocks inside a transaction, nor its master's
		// stream: the command answers as if it had timed out.
		timeoutReply()
		return
	}
	c.timeoutReply, c.unblockErr = timeoutReply, ""
	serve = c.s.propagateServedNative(c, serve)
	c.waiter = c.s.eng.Block(c.db, keys, blockDeadline(c.s.eng.NowTime(), timeout), c.watchServe(serve), c.wakeParked)
}

// blockDeadline is when a wait of timeout from now ends, in unix ms rounded
// up (the scheduler's resolution): never early. 0 waits forever.
func blockDeadline(now time.Time, timeout time.Duration) int64 {
	if timeout <= 0 {
		return 0
	}
	const ms = int64(time.Millisecond)
	return (now.Add(timeout).UnixNano() + ms - 1) / ms
}

// A parked client stays with its loop, which goes on reading its socket:
// that is how it notices a peer that hangs up, and commands that arrive
// meanwhile are kept, in order, for later. Whoever serves the waiter (a
// write on any loop, or the scheduler when a timer comes due) writes the
// reply into the client's reply buffer under the engine lock and posts the
// client back to its loop, which runs the rest of its batch.

// wakeParked ends a park: the waiter was served, timed out or unblocked
// (under the engine lock, from any goroutine).
func (c *Client) wakeParked() { c.loop.post(c, postResume) }

// park is called under the engine lock when the command just run blocked.
// The replies of the commands before it leave the reply buffer, which from
// now on belongs to whoever serves the waiter; the loop sends them at once.
func (s *Server) park(c *Client) {
	if c.pushMode {
		c.queueReplies()
	} else {
		c.parkedOut = append(c.parkedOut, c.w.Bytes()...)
		c.w.Reset()
	}
	c.SetBlocked(true)
}

// unpark ends a park that was served, unblocked or timed out, and runs the
// rest of the client's batch. Under the engine lock, on the client's loop.
func (s *Server) unpark(c *Client) {
	w := c.waiter
	c.waiter = nil
	c.SetBlocked(false)
	if !w.Served() {
		s.eng.Unblock(w)
		if c.unblockErr != "" {
			c.w.Error(c.unblockErr) // counted by ClientUnblock
		} else {
			c.timeoutReply()
		}
	}
	c.timeoutReply, c.unblockErr = nil, ""
	c.blockedRan = ran{} // a timeout records nothing more
	if c.replyMode != 0 || c.trk != nil {
		// The reply buffer holds only this command's reply (park moved
		// the earlier ones out): CLIENT REPLY OFF or SKIP drop it.
		if c.replyMode != 0 && c.quiet() {
			c.w.Reset()
		}
		c.afterTopCommand(c.batch[c.next-1], c.w.Len())
	}
	s.runBatch(c)
}

// ClientUnblock implements commands.Server (CLIENT UNBLOCK): under the
// engine lock, it releases a blocked client with a timeout reply or an
// UNBLOCKED error.
func (s *Server) ClientUnblock(id int64, withError bool) bool {
	c, ok := s.clients[id]
	if !ok || c.waiter == nil || !c.waiter.Waiting() {
		return false
	}
	s.eng.Unblock(c.waiter)
	if withError {
		c.unblockErr = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
		// Redis writes it now, so it counts while CLIENT UNBLOCK runs.
		s.countError([]byte(c.unblockErr))
	}
	// Redis counts the command failed either way (updateStatsOnUnblock).
	s.finishBlocked(c, 0, true, true)
	c.wakeParked()
	return true
}
