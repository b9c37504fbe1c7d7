package server

import (
	"errors"
	"net"
	"time"
)

// Block implements commands.Conn: it parks the client once the current
// command returns (see park).
func (c *Client) Block(keys [][]byte, timeout time.Duration, serve func(key []byte) bool, timeoutReply func()) {
	if c.inExec {
		// Redis never blocks inside a transaction: the command answers as
		// if it had timed out.
		timeoutReply()
		return
	}
	if c.wake == nil {
		c.wake = make(chan struct{}, 1)
	}
	c.blockTimeout, c.timeoutReply, c.unblockErr = timeout, timeoutReply, ""
	c.waiter = c.s.eng.Block(c.db, keys, serve, func() {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	})
}

// park waits for a blocked client to be served, to time out, to be
// unblocked by CLIENT UNBLOCK or to disconnect. It is called with the engine
// lock held and returns with it held; in between, the replies of the
// commands before the blocking one go out, and other clients run.
func (s *Server) park(c *Client) {
	// The replies so far leave c.w before the lock is released: from then
	// on the client that serves the waiter writes its reply into c.w.
	var out []byte
	if c.pushMode {
		c.queueReplies()
	} else {
		out = append(c.parkedOut[:0], c.w.Bytes()...)
		c.w.Reset()
	}
	s.eng.Unlock()
	if len(out) > 0 {
		s.syncLog()
		if _, err := c.netConn.Write(out); err != nil {
			c.closing = true
		}
		c.parkedOut = out[:0]
	}
	c.SetBlocked(true)
	gone, stopWatch := watchDisconnect(c)
	var timer <-chan time.Time
	if c.blockTimeout > 0 {
		t := time.NewTimer(c.blockTimeout)
		defer t.Stop()
		timer = t.C
	}
	disconnected := false
	select {
	case <-c.wake:
	case <-timer:
	case <-gone:
		disconnected = true
	}
	stopWatch()
	c.SetBlocked(false)

	s.eng.Lock()
	s.eng.Refresh()
	w := c.waiter
	c.waiter = nil
	if !w.Served() {
		s.eng.Unblock(w)
		switch {
		case disconnected:
		case c.unblockErr != "":
			c.w.Error(c.unblockErr)
		default:
			c.timeoutReply()
		}
	}
	c.timeoutReply = nil
	if disconnected {
		c.closing = true
	}
	// Drain a wake that raced with the timeout.
	select {
	case <-c.wake:
	default:
	}
}

// ClientUnblock implements commands.Server (CLIENT UNBLOCK): under the
// engine lock, it releases a blocked client with a timeout reply or an
// UNBLOCKED error.
func (s *Server) ClientUnblock(id int64, withError bool) bool {
	c, ok := s.clients[id]
	if !ok || c.waiter == nil || c.waiter.Served() {
		return false
	}
	s.eng.Unblock(c.waiter)
	if withError {
		c.unblockErr = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// watchDisconnect notices a peer that closes its connection while its
// client is blocked (the connection's own goroutine is not reading then).
// It reads the socket itself, into the client's request buffer: bytes that
// arrive meanwhile (pipelined commands) are parsed later, in order. stop
// ends the watch and returns once the reader is gone.
func watchDisconnect(c *Client) (gone <-chan struct{}, stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			err := c.rd.fill()
			c.rd.publish()
			if err != nil {
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					close(done)
				}
				return
			}
		}
	}()
	return done, func() {
		c.netConn.SetReadDeadline(time.Now())
		<-exited
		c.netConn.SetReadDeadline(time.Time{})
	}
}
