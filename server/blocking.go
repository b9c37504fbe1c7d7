package server

import (
	"container/heap"
	"time"
)

// Block implements commands.Conn: the client parks once the current command
// returns (see park).
func (c *Client) Block(keys [][]byte, timeout time.Duration, serve func(key []byte) bool, timeoutReply func()) {
	if c.inExec {
		// Redis never blocks inside a transaction: the command answers as
		// if it had timed out.
		timeoutReply()
		return
	}
	c.blockTimeout, c.timeoutReply, c.unblockErr = timeout, timeoutReply, ""
	c.waiter = c.s.eng.Block(c.db, keys, serve, c.wakeParked)
}

// A parked client stays with its loop, which goes on reading its socket:
// that is how it notices a peer that hangs up, and commands that arrive
// meanwhile are kept, in order, for later. Whoever serves the waiter (a
// write on any loop, or the scheduler when a timer comes due) writes the
// reply into the client's reply buffer under the engine lock and posts the
// client back to its loop, which runs the rest of its batch.

// wakeParked ends a park: the waiter was served or unblocked (under the
// engine lock, from any goroutine).
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
	if c.blockTimeout > 0 {
		c.loop.timers.add(c, time.Now().Add(c.blockTimeout))
	}
}

// unpark ends a park that was served, unblocked or timed out, and runs the
// rest of the client's batch. Under the engine lock, on the client's loop.
func (s *Server) unpark(c *Client) {
	w := c.waiter
	c.waiter = nil
	c.SetBlocked(false)
	c.loop.timers.remove(c)
	if !w.Served() {
		s.eng.Unblock(w)
		if c.unblockErr != "" {
			c.w.Error(c.unblockErr)
		} else {
			c.timeoutReply()
		}
	}
	c.timeoutReply, c.unblockErr, c.unblocked = nil, "", false
	s.runBatch(c)
}

// ClientUnblock implements commands.Server (CLIENT UNBLOCK): under the
// engine lock, it releases a blocked client with a timeout reply or an
// UNBLOCKED error.
func (s *Server) ClientUnblock(id int64, withError bool) bool {
	c, ok := s.clients[id]
	if !ok || c.waiter == nil || c.waiter.Served() || c.unblocked {
		return false
	}
	s.eng.Unblock(c.waiter)
	c.unblocked = true
	if withError {
		c.unblockErr = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
	}
	c.wakeParked()
	return true
}

// blockTimers orders a loop's parked clients by their timeout: a heap with
// each client's index in it, so a client served early leaves at once.
type blockTimers []*Client

func (t blockTimers) Len() int           { return len(t) }
func (t blockTimers) Less(i, j int) bool { return t[i].blockDeadline.Before(t[j].blockDeadline) }
func (t blockTimers) Swap(i, j int) {
	t[i], t[j] = t[j], t[i]
	t[i].timerIndex, t[j].timerIndex = i, j
}

func (t *blockTimers) Push(x any) {
	c := x.(*Client)
	c.timerIndex = len(*t)
	*t = append(*t, c)
}

func (t *blockTimers) Pop() any {
	old := *t
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*t = old[:len(old)-1]
	c.timerIndex = -1
	return c
}

func (t *blockTimers) add(c *Client, at time.Time) {
	t.remove(c)
	c.blockDeadline = at
	heap.Push(t, c)
}

func (t *blockTimers) remove(c *Client) {
	if c.timerIndex >= 0 {
		heap.Remove(t, c.timerIndex)
	}
}

func (t blockTimers) first() *Client { return t[0] }
