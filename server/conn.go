package server

import (
	"errors"
	"io"
	"net"
	"time"
)

// acceptLoop accepts connections on one listener until it closes, refusing
// them past maxclients with Redis's error, and hands each to an event loop
// (a TLS one after its handshake).
func (s *Server) acceptLoop(ln net.Listener, isTLS bool) {
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
			if !isTLS { // no handshake yet: the connection just drops, as in Redis
				nc.Write([]byte("-ERR max number of clients reached\r\n"))
			}
			nc.Close()
			continue
		}
		if isTLS {
			s.serveWG.Add(1)
			go s.acceptTLS(nc)
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
	setKeepalive(nc, s.keepalive.Load())
	fd, err := detach(nc)
	if err != nil {
		s.log.Warn("cannot take over a new connection", "id", c.id, "err", err)
		s.connCount.Add(-1)
		return
	}
	s.adoptConn(c, fd, sockReader(fd))
}

// adoptConn registers a new client whose socket is fd, reading its
// requests from src, and gives it to the next event loop in turn; or
// refuses it, with protected mode's message when that is why.
func (s *Server) adoptConn(c *Client, fd int, src io.Reader) {
	c.loop = s.loops[s.nextLoop.Add(1)%uint64(len(s.loops))]
	c.fd = fd
	c.rd.src = src
	if ok, denied := s.register(c); !ok {
		if denied {
			c.send([]byte(protectedModeDenied))
		}
		closeSock(fd)
		s.connCount.Add(-1)
		return
	}
	c.loop.adopt(c)
}

// protectedModeDenied is what protected mode answers a client from
// another host before closing its connection (Redis's text).
const protectedModeDenied = "-DENIED Redis is running in protected mode because protected mode is enabled and no " +
	"password is set for the default user. In this mode connections are only accepted from the loopback " +
	"interface. If you want to connect from external computers to Redis you may adopt one of the following " +
	"solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the " +
	"loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE " +
	"Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change " +
	"permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration " +
	"file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started " +
	"the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an " +
	"authentication password for the default user. NOTE: You only need to do one of the above things in " +
	"order for the server to start accepting connections from the outside.\r\n"

// protectedRefuses is Redis 7.0's protected mode: with protected-mode yes
// and no password for the default user, only loopback clients (and the
// Unix socket's) get in, whatever bind says. Under the engine lock.
func (s *Server) protectedRefuses(c *Client) bool {
	if s.cfg.extraString("protected-mode") != "yes" || !s.DefaultUser().NoPass || isUnixSocket(c.addr) {
		return false
	}
	host, _, err := net.SplitHostPort(c.addr)
	return err != nil || host != "127.0.0.1" && host != "::1"
}
