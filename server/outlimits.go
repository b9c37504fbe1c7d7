package server

import (
	"time"
)

// client-output-buffer-limit, as Redis applies it (networking.c,
// checkClientOutputBufferLimits): every client belongs to a class, and a
// client whose pending output reaches its class's hard limit, or stays at
// or over its soft limit for more than the soft seconds, is closed. The
// output counted is what the client is owed and has not taken: replies of
// the batch being run, replies held behind a blocking command, pushes
// queued for it, and what the socket refused, less the first 16 KB for
// the normal and pubsub classes, which Redis's fixed reply buffer holds
// outside its count (decision 0019).
//
// Where the limit is checked: push (everything a subscriber, MONITOR feed,
// replica or tracking client gets goes through it), runBatch after each
// command of a client not in push mode (its pipeline stops there, and the
// batch's replies are dropped, as Redis sends nothing more to a client
// it is closing), and the cron, which closes a client held over its soft
// limit when no more output comes.

// outClass is a client-output-buffer-limit class.
type outClass uint8

const (
	classNormal outClass = iota // also MONITOR feeds, tracking clients and the master link, as in Redis
	classReplica
	classPubsub
)

// outLimit is one class's limits; zero disables each.
type outLimit struct{ hard, soft, secs int64 }

// outLimits are the three classes' limits, by outClass.
type outLimits [3]outLimit

// replyBufBytes is the output of a client the limits leave out, as Redis
// leaves out its fixed reply buffer (PROTO_REPLY_CHUNK_BYTES).
const replyBufBytes = 16 << 10

// applyOutputLimits follows CONFIG SET client-output-buffer-limit.
func (s *Server) applyOutputLimits() {
	var l outLimits
	for class, name := range []string{"normal", "slave", "pubsub"} {
		l[class].hard, l[class].soft, l[class].secs = s.cfg.outputLimit(name)
	}
	s.outLimits.Store(&l)
}

// normalLimited reports whether the normal class has a limit: runBatch
// checks a client's output after each command only then.
func (s *Server) normalLimited() bool {
	l := &s.outLimits.Load()[classNormal]
	return l.hard > 0 || l.soft > 0
}

// limitClass is the class whose limits apply to c, as Redis's
// getClientType: a MONITOR feed is a normal client, a subscriber in
// either protocol a pubsub one. Under the engine lock.
func (c *Client) limitClass() outClass {
	switch {
	case c.isReplica():
		return classReplica
	case c.Subscriptions() > 0:
		return classPubsub
	}
	return classNormal
}

// overOutputLimit applies c's class limits to n bytes of output, noting
// when the soft limit was first reached. Under the engine lock (and outMu
// when called from push).
func (c *Client) overOutputLimit(n int64) bool {
	class := c.limitClass()
	l := c.s.outLimits.Load()[class]
	if class == classReplica {
		// As Redis: a replica's hard limit is never under the backlog,
		// or a partial sync would succeed and then be cut.
		if l.hard > 0 {
			l.hard = max(l.hard, c.s.cfg.extraInt("repl-backlog-size"))
		}
	} else {
		// Redis's limits count the reply list, not the client's fixed
		// reply buffer, which takes the first 16 KB: "normal 1 0 0" cuts
		// no client with a small reply.
		n -= replyBufBytes
		if n <= 0 {
			c.softSince = 0
			return false
		}
	}
	if l.hard > 0 && n >= l.hard {
		return true
	}
	if l.soft == 0 || n < l.soft {
		c.softSince = 0
		return false
	}
	// Redis counts the soft seconds in whole seconds of its clock.
	now := time.Now().Unix()
	if c.softSince == 0 {
		c.softSince = now
		c.s.watchSoftLimit(c)
		return false
	}
	return now-c.softSince > l.secs
}

// watchSoftLimit has the cron look at c while it is over its soft limit,
// so that it is closed once the seconds pass even if no more output comes.
// Under the engine lock.
func (s *Server) watchSoftLimit(c *Client) {
	if s.softOver == nil {
		s.softOver = make(map[*Client]struct{})
	}
	if _, ok := s.softOver[c]; !ok {
		s.softOver[c] = struct{}{}
		s.softOverN.Add(1)
	}
}

// outputLimitReached closes c, over its output limit, as Redis's
// closeClientOnOutputBufferLimitReached: at once from the cron, which
// holds the engine lock and iterates nothing c belongs to, else by its
// loop, as soon as it looks (Redis's freeClientAsync). Either way nothing
// more is sent to it. Under the engine lock.
func (s *Server) outputLimitReached(c *Client, fromCron bool) {
	if fromCron {
		s.log.Warn("Client " + c.Describe() + " closed for overcoming of output buffer limits.")
		c.kill()
		s.forget(c)
		return
	}
	s.log.Warn("Client " + c.Describe() + " scheduled to be closed ASAP for overcoming of output buffer limits.")
	c.kill()
}

// batchOutputOver checks the output of a client not in push mode between
// the commands of its batch: the replies made so far, those held behind
// a blocking command, and what its socket refused. Over the limit, the
// client is closed and its batch ends: nothing more of it runs or is sent.
// Under the engine lock, on the client's loop.
func (s *Server) batchOutputOver(c *Client) bool {
	if c.killed.Load() {
		return true
	}
	if c.master {
		return false // its replies are not sent anyway
	}
	n := int64(c.w.Len()+len(c.parkedOut)) + c.outLen.Load()
	if !c.overOutputLimit(n) {
		return false
	}
	s.outputLimitReached(c, false)
	c.w.Reset()
	c.parkedOut = c.parkedOut[:0]
	return true
}

// outputLimitCron closes the clients held over their soft limit longer
// than its seconds, and forgets those back under it. The cron calls it
// every tick; it costs one atomic load while no client is over a soft
// limit.
func (s *Server) outputLimitCron() {
	if s.softOverN.Load() == 0 {
		return
	}
	s.eng.Lock()
	defer s.eng.Unlock()
	for c := range s.softOver {
		if c.forgotten || c.killed.Load() {
			s.dropSoftWatch(c)
			continue
		}
		// The loop's view of its output (outLen) plus pushes not taken
		// yet: a batch's replies are in out once the loop sent what it
		// could.
		over := c.overOutputLimit(int64(c.pendingLen()))
		if over {
			s.outputLimitReached(c, true)
		}
		if over || c.softSince == 0 {
			s.dropSoftWatch(c)
		}
	}
}

func (s *Server) dropSoftWatch(c *Client) {
	if _, ok := s.softOver[c]; ok {
		delete(s.softOver, c)
		s.softOverN.Add(-1)
	}
}
