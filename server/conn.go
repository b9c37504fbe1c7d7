package server

import (
	"errors"
	"net"
	"time"
)

// acceptLoop accepts connections on one listener until it closes, refusing
// them past maxclients with Redis's error, and hands each to an event loop.
func (s *Server) acceptLoop(ln net.Listener) {
	defer s.serveWG.Done()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.shutting.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait and retry, as
			// net/http does, rather than spin or give up.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed", "err", err, "retry_in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if s.shutting.Load() {
			nc.Close()
			continue
		}
		if s.connCount.Add(1) > s.maxClients.Load() {
			s.connCount.Add(-1)
			s.stats.rejectedConns.Add(1)
			nc.Write([]byte("-ERR max number of clients reached\r\n"))
			nc.Close()
			continue
		}
		s.accept(nc)
	}
}

// accept registers a new connection's client and gives its socket to the
// next event loop in turn. The client is complete before register makes it
// visible to CLIENT LIST on other loops.
func (s *Server) accept(nc net.Conn) {
	c := newClient(s, nc, s.nextID.Add(1))
	c.loop = s.loops[s.nextLoop.Add(1)%uint64(len(s.loops))]
	setKeepalive(nc, s.keepalive.Load())
	fd, err := detach(nc)
	if err != nil {
		s.log.Warn("cannot take over a new connection", "id", c.id, "err", err)
		s.connCount.Add(-1)
		return
	}
	c.fd = fd
	c.rd.src = sockReader(fd)
	if !s.register(c) {
		closeSock(fd)
		s.connCount.Add(-1)
		return
	}
	c.loop.adopt(c)
}
