package server

import (
	"errors"
	"net"
	"os"
	"sync"
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
	c.blockTimeout, c.timeoutReply, c.unblockErr = timeout, timeoutReply, ""
	c.waiter = c.s.eng.Block(c.db, keys, serve, c.wakeParked)
}

// A parked client waits in its own goroutine, reading its socket: that is
// how it notices a peer that hangs up, and bytes that arrive meanwhile
// (pipelined commands) are kept, in order, for later. Whoever serves or
// unblocks it interrupts the read by moving the read deadline to now. The
// park state is guarded by parkMu so that an interruption can never land
// after the park ended and fail the connection's next ordinary read.
type parkState struct {
	parkMu sync.Mutex
	parked bool // reading with the block's deadline
	woken  bool // served or unblocked; the park must end
}

// wakeParked ends a park (under the engine lock, from another goroutine).
func (c *Client) wakeParked() {
	c.parkMu.Lock()
	c.woken = true
	if c.parked {
		c.netConn.SetReadDeadline(time.Now())
	}
	c.parkMu.Unlock()
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
	var deadline time.Time
	if c.blockTimeout > 0 {
		deadline = time.Now().Add(c.blockTimeout)
	}
	disconnected := c.waitParked(deadline)
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
	c.parkMu.Lock()
	c.woken = false
	c.parkMu.Unlock()
}

// waitParked reads the socket until the park is woken, the deadline (zero:
// none) passes, or the peer goes away, which it reports.
func (c *Client) waitParked(deadline time.Time) (disconnected bool) {
	defer func() {
		c.parkMu.Lock()
		c.parked = false
		c.netConn.SetReadDeadline(time.Time{})
		c.parkMu.Unlock()
	}()
	for {
		c.parkMu.Lock()
		if c.woken {
			c.parkMu.Unlock()
			return false
		}
		c.parked = true
		c.netConn.SetReadDeadline(deadline)
		c.parkMu.Unlock()
		err := c.rd.fill()
		c.rd.publish()
		switch {
		case err == nil:
			// More commands arrived; they wait their turn.
		case errors.Is(err, os.ErrDeadlineExceeded):
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return false // timed out (unless woken meanwhile: park checks)
			}
		default:
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return true
		}
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
	c.wakeParked()
	return true
}
