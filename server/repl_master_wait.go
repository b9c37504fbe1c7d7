package server

import (
	"time"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
)

// Acknowledgements: replicas report the offset they applied (REPLCONF ACK,
// every second and when asked with REPLCONF GETACK); WAIT blocks until
// enough of them reached the offset of its client's last write, and
// min-replicas-to-write refuses writes while too few replicas acknowledged
// recently.

// ReplicaAck implements commands.Server: REPLCONF ACK from a replica, which
// gets no reply. It reports whether conn is a replica.
func (s *Server) ReplicaAck(conn commands.Conn, offset []byte) bool {
	c, ok := conn.(*Client)
	if !ok || !c.isReplica() {
		return false
	}
	off, ok := engine.ParseInt(offset)
	if !ok {
		return true
	}
	rp := c.rp
	rp.ackOff = max(rp.ackOff, off)
	rp.ackTime = time.Now()
	if rp.holdStream.Load() && !rp.sending.Load() {
		// The replica has loaded its EOF-marked RDB: the stream queued
		// meanwhile can follow it now.
		rp.holdStream.Store(false)
		c.loop.post(c, postFlush)
	}
	s.serveAckWaiters()
	return true
}

// acksFor counts the online replicas that acknowledged offset.
func (s *Server) acksFor(offset int64) int64 {
	var n int64
	for _, c := range s.replm.replicas {
		if c.rp.online() && c.rp.ackOff >= offset {
			n++
		}
	}
	return n
}

// ReplicasAcked implements commands.Server: the replicas that applied
// conn's writes so far.
func (s *Server) ReplicasAcked(conn commands.Conn) int64 {
	c, ok := conn.(*Client)
	if !ok {
		return 0
	}
	return s.acksFor(c.woff)
}

// WaitForAcks implements commands.Server: conn blocked in WAIT for num
// replicas; replicas are asked for their offset before the loop goes on.
func (s *Server) WaitForAcks(conn commands.Conn, num int64) {
	c, ok := conn.(*Client)
	if !ok || c.waiter == nil {
		return
	}
	s.replm.waiting = append(s.replm.waiting, ackWaiter{c: c, w: c.waiter, num: num})
	s.replm.getAck = true
}

// requestAcks sends REPLCONF GETACK * to the replicas when a WAIT started
// waiting since the last time: once per turn of a loop at most, as Redis
// sends it once before it sleeps. Under the engine lock.
func (s *Server) requestAcks() {
	if s.replm.getAck {
		s.replm.getAck = false
		s.feedOwn([]byte("REPLCONF"), []byte("GETACK"), []byte("*"))
	}
}

// serveAckWaiters answers the WAITs enough replicas acknowledged: each is
// unblocked, and its reply (the count, as on a timeout) is made on its
// loop. Under the engine lock.
func (s *Server) serveAckWaiters() {
	m := &s.replm
	kept := m.waiting[:0]
	for _, aw := range m.waiting {
		switch {
		case aw.c.waiter != aw.w || !aw.w.Waiting():
		case s.acksFor(aw.c.woff) >= aw.num:
			s.eng.Unblock(aw.w)
			s.finishBlocked(aw.c, 0, false, false)
			aw.c.wakeParked()
		default:
			kept = append(kept, aw)
		}
	}
	clear(m.waiting[len(kept):])
	m.waiting = kept
}

// pruneAckWaiters forgets WAITs that ended otherwise (timeout, CLIENT
// UNBLOCK, disconnect).
func (s *Server) pruneAckWaiters() {
	m := &s.replm
	kept := m.waiting[:0]
	for _, aw := range m.waiting {
		if aw.c.waiter == aw.w && aw.w.Waiting() {
			kept = append(kept, aw)
		}
	}
	clear(m.waiting[len(kept):])
	m.waiting = kept
}

// goodReplicas counts the online replicas whose last acknowledgement is at
// most min-replicas-max-lag seconds old (Redis's refreshGoodSlavesCount).
func (s *Server) goodReplicas(now time.Time) int64 {
	var n int64
	for _, c := range s.replm.replicas {
		if c.rp.online() && now.Unix()-c.rp.lastAck().Unix() <= s.replm.maxLag {
			n++
		}
	}
	return n
}

// NoGoodReplicas implements commands.Server: min-replicas-to-write
// refuses writes now (Redis's checkGoodReplicasStatus, negated). A replica
// never refuses for this reason.
func (s *Server) NoGoodReplicas() bool {
	m := &s.replm
	return s.replica == nil && m.minToWrite > 0 && m.maxLag > 0 && s.goodReplicas(time.Now()) < m.minToWrite
}

// refusedForReplicas applies min-replicas-to-write to c's command: a write
// command, or EXEC of a transaction that writes. Under the engine lock.
func (s *Server) refusedForReplicas(c *Client, cmd *commands.Command) bool {
	if s.replm.minToWrite == 0 {
		return false
	}
	writes := cmd.Has(commands.FlagWrite) || cmd.FullName() == "exec" && c.queueMayWrite
	return writes && s.NoGoodReplicas()
}
