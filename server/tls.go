package server

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// TLS connections are served by the same event loops as plain ones
// (decision 0018). The handshake runs first on a goroutine of its own, over
// Go's blocking connection; then the socket is detached into a loop like
// any other, and only the two ends of the client's byte stream change: the
// request reader reads plaintext from the tls.Conn, which reads the socket
// without blocking, and replies are sealed into records that the loop
// writes with its usual non-blocking writes. Everything that reaches a
// client through its loop (blocked clients served, pushes, MONITOR, kills,
// pauses, the replication stream) therefore reaches a TLS client unchanged.

// tlsHandshakeTimeout bounds a handshake: a peer that opens the TLS port
// and says nothing holds a goroutine and a descriptor until then.
const tlsHandshakeTimeout = 10 * time.Second

// tlsState is the server's TLS side.
type tlsState struct {
	ctx  atomic.Pointer[tlsContext] // what new connections get; nil until TLS is configured
	auth atomic.Int32               // tls-auth-clients
	// The TLS port's listeners, under listenMu as the plain ones.
	listeners []net.Listener
	addrs     []net.Addr
	// Connections in their handshake, closed when the server stops.
	hsMu        sync.Mutex
	handshaking map[net.Conn]struct{}
}

// errTLSWouldBlock is the socket's "nothing to read now" as crypto/tls
// must see it: a temporary net.Error, which it returns without marking the
// connection failed (a partial record stays buffered in the tls.Conn).
var errTLSWouldBlock net.Error = tlsWouldBlock{}

type tlsWouldBlock struct{}

func (tlsWouldBlock) Error() string   { return "would block" }
func (tlsWouldBlock) Timeout() bool   { return true }
func (tlsWouldBlock) Temporary() bool { return true }

// tlsSock is the transport under a tls.Conn: Go's connection (blocking,
// with deadlines) during the handshake, then the loop's raw socket, read
// without blocking; writes then collect in out for the loop to send.
type tlsSock struct {
	nc            net.Conn // until detached
	fd            int
	local, remote net.Addr
	out           []byte
}

func (t *tlsSock) Read(p []byte) (int, error) {
	if t.nc != nil {
		return t.nc.Read(p)
	}
	n, err := sockReader(t.fd).Read(p)
	if err == errWouldBlock {
		return 0, errTLSWouldBlock
	}
	return n, err
}

func (t *tlsSock) Write(p []byte) (int, error) {
	if t.nc != nil {
		return t.nc.Write(p)
	}
	t.out = append(t.out, p...)
	return len(p), nil
}

// Close closes Go's connection; once detached, the loop closes the socket.
func (t *tlsSock) Close() error {
	if t.nc != nil {
		return t.nc.Close()
	}
	return nil
}

func (t *tlsSock) LocalAddr() net.Addr  { return t.local }
func (t *tlsSock) RemoteAddr() net.Addr { return t.remote }

func (t *tlsSock) SetDeadline(d time.Time) error {
	if t.nc != nil {
		return t.nc.SetDeadline(d)
	}
	return nil
}

func (t *tlsSock) SetReadDeadline(d time.Time) error {
	if t.nc != nil {
		return t.nc.SetReadDeadline(d)
	}
	return nil
}

func (t *tlsSock) SetWriteDeadline(d time.Time) error {
	if t.nc != nil {
		return t.nc.SetWriteDeadline(d)
	}
	return nil
}

// detach hands the socket to an event loop: from now on reads do not
// block and writes are collected.
func (t *tlsSock) detach() (int, error) {
	fd, err := detach(t.nc)
	t.nc = nil
	t.fd = fd
	return fd, err
}

// tlsLink is a TLS client's side of its loop: the request reader's source
// (plaintext) and the sealing of its output.
type tlsLink struct {
	conn *tls.Conn
	sock *tlsSock
	// more: the last read filled the reader's buffer, so the tls.Conn may
	// hold records the socket will not announce again; the loop reads
	// once more without waiting for an event.
	more bool
	// bulk is the plaintext of a replica's RDB chunk (sendBulk).
	bulk []byte
}

// Read fills p with as much plaintext as is there without blocking: a
// tls.Conn read returns one record at a time.
func (l *tlsLink) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := l.conn.Read(p[n:])
		n += k
		if err != nil {
			l.more = false
			if err == errTLSWouldBlock {
				if n > 0 {
					return n, nil
				}
				return 0, errWouldBlock
			}
			return n, err
		}
	}
	l.more = true
	return n, nil
}

// seal encrypts b behind what the link has to send (a record crypto/tls
// wrote while reading, such as a key update), and returns all of it.
func (l *tlsLink) seal(b []byte) ([]byte, error) {
	if len(b) > 0 {
		if _, err := l.conn.Write(b); err != nil {
			return nil, err
		}
	}
	return l.sock.out, nil
}

// sealed drops what seal returned, once it was written or copied.
func (l *tlsLink) sealed() {
	if cap(l.sock.out) > 1<<20 {
		l.sock.out = nil
		return
	}
	l.sock.out = l.sock.out[:0]
}

// sendTLS is send for a TLS client: out holds ciphertext.
func (c *Client) sendTLS(b []byte) {
	ct, err := c.tls.seal(b)
	if err != nil {
		c.broken = true
		c.out = nil
		return
	}
	c.write(ct)
	c.tls.sealed()
}

// acceptTLS runs a new TLS connection's handshake, then serves it as
// accept serves a plain one. Its own goroutine (serveWG counts it).
func (s *Server) acceptTLS(nc net.Conn) {
	defer s.serveWG.Done()
	ctx := s.tls.ctx.Load()
	if ctx == nil || !s.trackHandshake(nc, true) {
		nc.Close()
		s.connCount.Add(-1)
		return
	}
	setKeepalive(nc, s.keepalive.Load())
	sock := &tlsSock{nc: nc, fd: -1, local: nc.LocalAddr(), remote: nc.RemoteAddr()}
	tc := tls.Server(sock, ctx.servers[s.tls.auth.Load()])
	nc.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	err := tc.Handshake()
	s.trackHandshake(nc, false)
	if err != nil {
		s.log.Warn("Error accepting a client connection: "+err.Error(), "addr", sock.remote.String())
		nc.Close()
		s.connCount.Add(-1)
		return
	}
	nc.SetDeadline(time.Time{})
	c := newClient(s, nc, s.nextID.Add(1))
	fd, err := sock.detach()
	if err != nil {
		s.log.Warn("cannot take over a new connection", "id", c.id, "err", err)
		s.connCount.Add(-1)
		return
	}
	c.tls = &tlsLink{conn: tc, sock: sock}
	s.adoptConn(c, fd, c.tls)
}

// trackHandshake records a connection in its handshake (on), or forgets
// it; it refuses one once the server stops.
func (s *Server) trackHandshake(nc net.Conn, on bool) bool {
	s.tls.hsMu.Lock()
	defer s.tls.hsMu.Unlock()
	if !on {
		delete(s.tls.handshaking, nc)
		return true
	}
	if s.shutting.Load() {
		return false
	}
	if s.tls.handshaking == nil {
		s.tls.handshaking = map[net.Conn]struct{}{}
	}
	s.tls.handshaking[nc] = struct{}{}
	return true
}

// stopHandshakes ends the handshakes in progress (the server stops).
func (s *Server) stopHandshakes() {
	s.tls.hsMu.Lock()
	defer s.tls.hsMu.Unlock()
	for nc := range s.tls.handshaking {
		nc.Close()
	}
}

// dialTLS runs the client side of a handshake over nc (a replica to its
// master, tls-replication): the returned connection reads and writes
// through Go's connection until takeOverTLS.
func (s *Server) dialTLS(nc net.Conn, timeout time.Duration) (*tls.Conn, *tlsSock, error) {
	ctx := s.tls.ctx.Load()
	if ctx == nil {
		return nil, nil, errors.New("TLS is not configured")
	}
	sock := &tlsSock{nc: nc, fd: -1, local: nc.LocalAddr(), remote: nc.RemoteAddr()}
	tc := tls.Client(sock, ctx.client)
	nc.SetDeadline(time.Now().Add(timeout))
	if err := tc.Handshake(); err != nil {
		return nil, nil, err
	}
	return tc, sock, nil
}

// listenTLS opens the TLS port's listeners at start-up, configuring TLS
// first when anything uses it (Redis refuses to start otherwise).
func (s *Server) listenTLS() error {
	if !s.cfg.tlsEnabled() {
		return nil
	}
	ctx, err := s.buildTLS()
	if err != nil {
		return errors.New("Failed to configure TLS. Check logs for more info.")
	}
	s.tls.ctx.Store(ctx)
	port := int(s.cfg.extraInt("tls-port"))
	if port == 0 {
		return nil
	}
	lns, err := listenAll(s.bindAddrs(), port)
	if err != nil {
		return err
	}
	s.setTLSListeners(lns)
	return nil
}

func (s *Server) setTLSListeners(lns []net.Listener) {
	s.tls.listeners, s.tls.addrs = lns, nil
	for _, ln := range lns {
		s.tls.addrs = append(s.tls.addrs, ln.Addr())
	}
}

// bindAddrs are the addresses to listen on: bind, or every interface.
func (s *Server) bindAddrs() []string {
	if len(s.cfg.Bind) == 0 {
		return []string{""}
	}
	return s.cfg.Bind
}

// closeTLSListeners closes the TLS port's listeners; listenMu is held.
func (s *Server) closeTLSListeners() {
	for _, ln := range s.tls.listeners {
		ln.Close()
	}
	s.setTLSListeners(nil)
}

// rebindTLS listens on tls-port again (CONFIG SET tls-port, bind); listenMu
// is held. Port 0 leaves no TLS listener.
func (s *Server) rebindTLS() error {
	s.closeTLSListeners()
	port := int(s.cfg.extraInt("tls-port"))
	if port == 0 || s.shutting.Load() {
		return nil
	}
	lns, err := listenAll(s.cfg.Bind, port)
	if err != nil {
		return err
	}
	s.setTLSListeners(lns)
	s.serveTLS(lns)
	return nil
}

// serveTLS starts an accept loop per TLS listener; listenMu is held.
func (s *Server) serveTLS(lns []net.Listener) {
	for _, ln := range lns {
		s.serveWG.Add(1)
		go s.acceptLoop(ln, true)
	}
}

// applyTLSPort follows CONFIG SET tls-port as Redis's applyTLSPort: TLS is
// configured if it was not, then the TLS listeners move to the new port.
func (s *Server) applyTLSPort() error {
	if s.tls.ctx.Load() == nil {
		ctx, err := s.buildTLS()
		if err != nil {
			return errTLSUpdate
		}
		s.tls.ctx.Store(ctx)
	}
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if err := s.rebindTLS(); err != nil {
		s.log.Warn("cannot listen on the TLS port", "err", err)
		return errors.New("Unable to listen on this port. Check server logs.")
	}
	return nil
}

// TLSAddr is the first address the TLS port listens on, "" for none.
func (s *Server) TLSAddr() string {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if len(s.tls.addrs) == 0 {
		return ""
	}
	return s.tls.addrs[0].String()
}
