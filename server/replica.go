package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
)

// The replica role (REPLICAOF host port): a goroutine of its own connects
// to the master, does the handshake, takes the full sync's RDB onto disk
// and loads it, or continues where the last link ended (PSYNC); then the
// connection becomes a client of an event loop, the master client, whose
// commands run like anyone's but answer nothing, may write on a read-only
// replica, and move the replication offset by their bytes. When the master
// client closes, the goroutine connects again and asks to continue from
// that offset.

// Replication link states, as ROLE names them.
const (
	linkConnect    = "connect"
	linkConnecting = "connecting"
	linkSync       = "sync"
	linkConnected  = "connected"
)

// replicaLink is the replica role's state; Server.replica is nil on a
// master. Fields are under the engine lock.
type replicaLink struct {
	host string
	port int
	stop chan struct{} // closed when REPLICAOF moves on: the goroutine ends
	// lost is signalled when the master client closes.
	lost chan struct{}

	state     string
	conn      net.Conn // the link while the goroutine owns it, closed by stop
	master    *Client  // the master client once the stream runs
	lastIO    time.Time
	downSince time.Time
	ackedAt   time.Time
	// streamDB is the database the master's stream is in: the RDB's
	// repl-stream-db, then where the last master client left it, which a
	// partial resync continues in.
	streamDB int

	// The transfer in progress: bytes expected (-1: an EOF-marked
	// stream) and read so far.
	syncTotal, syncRead int64
	syncLastIO          time.Time
}

// replState is what a server knows of its replication history whatever its
// role: the ID and offset of the stream it follows or would serve, and the
// previous ID it can still continue (after REPLICAOF NO ONE). Under the
// engine lock.
type replState struct {
	id, id2   string
	offset    int64
	secondOff int64 // the offset up to which id2 is valid + 1, -1 for none
	known     bool  // id and offset describe a master's stream this server holds
}

var errLinkStopped = errors.New("replication link stopped")

// ReplicaOf implements commands.Server: REPLICAOF host port. Under the
// engine lock.
func (s *Server) ReplicaOf(host string, port int) string {
	if r := s.replica; r != nil && strings.EqualFold(r.host, host) && r.port == port {
		return "OK Already connected to specified master"
	}
	s.stopReplica()
	if !s.repl.known {
		// A master becoming a replica offers its own history, so that it
		// can continue from a promoted sibling (PSYNC2).
		s.repl.known = true
	}
	r := &replicaLink{host: host, port: port, stop: make(chan struct{}), lost: make(chan struct{}, 1),
		state: linkConnect, downSince: time.Now()}
	s.replica = r
	s.eng.SetReplica(true)
	s.log.Info("connecting to master", "host", host, "port", port)
	go s.runReplicaLink(r)
	return "OK"
}

// ReplicaOfNoOne implements commands.Server: REPLICAOF NO ONE. The stream
// followed so far becomes this master's history: a new ID, the old one
// kept as the second (so replicas of the old master can continue here).
func (s *Server) ReplicaOfNoOne() {
	if s.replica == nil {
		return
	}
	s.stopReplica()
	s.eng.SetReplica(false)
	s.repl.id2, s.repl.secondOff = s.repl.id, s.repl.offset+1
	s.repl.id = newRunID()
	s.promoted() // its replicas continue with the old ID (repl_master.go)
	s.log.Info("replication stopped: this server is a master now")
}

// stopReplica ends the replica role's link, if any. Under the engine lock.
func (s *Server) stopReplica() {
	r := s.replica
	if r == nil {
		return
	}
	s.replica = nil
	close(r.stop)
	if r.conn != nil {
		r.conn.Close()
	}
	if r.master != nil {
		r.master.master = false
		r.master.kill()
		r.master = nil
	}
}

// IsReplica reports whether the server follows a master.
func (s *Server) IsReplica() bool { return s.replica != nil }

// runReplicaLink is the link's goroutine: sync, follow until the link
// breaks, and again a second later, until REPLICAOF moves on.
func (s *Server) runReplicaLink(r *replicaLink) {
	for {
		err := s.syncWithMaster(r)
		if errors.Is(err, errLinkStopped) {
			return
		}
		if err != nil {
			s.log.Warn("replication: sync with master failed", "host", r.host, "port", r.port, "err", err)
			s.setLinkState(r, linkConnect, nil)
		} else {
			select { // streaming: wait for the master client to close
			case <-r.lost:
			case <-r.stop:
				return
			}
			s.log.Warn("replication: connection with master lost", "host", r.host, "port", r.port)
		}
		select {
		case <-r.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// setLinkState moves the link to state, keeping conn as the connection to
// close on stop; errLinkStopped when REPLICAOF moved on.
func (s *Server) setLinkState(r *replicaLink, state string, conn net.Conn) error {
	s.eng.Lock()
	defer s.eng.Unlock()
	if s.replica != r {
		if conn != nil {
			conn.Close()
		}
		return errLinkStopped
	}
	if state != linkConnected && r.state == linkConnected {
		r.downSince = time.Now()
	}
	r.state, r.conn = state, conn
	return nil
}

// masterConn is the handshake's side of the link: commands sent, single
// line replies read, every step under repl-timeout.
type masterConn struct {
	nc      net.Conn
	br      *bufio.Reader
	timeout time.Duration
	tls     *tls.Conn // with tls-replication, nc is this connection
	sock    *tlsSock  // its transport, for the loop to take over
}

func (m *masterConn) send(args ...string) error {
	var b []byte
	b = fmt.Appendf(b, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	m.nc.SetDeadline(time.Now().Add(m.timeout))
	_, err := m.nc.Write(b)
	return err
}

// line reads one reply line, skipping the newlines a master sends to keep
// the link alive while it prepares a transfer.
func (m *masterConn) line() (string, error) {
	for {
		m.nc.SetDeadline(time.Now().Add(m.timeout))
		l, err := m.br.ReadString('\n')
		if err != nil {
			return "", err
		}
		if l = strings.TrimRight(l, "\r\n"); l != "" {
			return l, nil
		}
	}
}

// ask sends a command and returns its reply line.
func (m *masterConn) ask(args ...string) (string, error) {
	if err := m.send(args...); err != nil {
		return "", err
	}
	return m.line()
}

// syncWithMaster connects, does the handshake and the full or partial
// sync, and hands the link to an event loop. It returns once the master
// client runs (nil) or on failure.
func (s *Server) syncWithMaster(r *replicaLink) error {
	s.eng.Lock()
	user, pass := s.cfg.extraString("masteruser"), s.cfg.extraString("masterauth")
	tlsRepl := s.cfg.extraString("tls-replication") == "yes"
	listenPort := s.listeningPort()
	if tlsPort := int(s.cfg.extraInt("tls-port")); tlsRepl && tlsPort != 0 {
		listenPort = tlsPort // the master's replicas reach this one by TLS, as Redis announces it
	}
	timeout := time.Duration(max(s.cfg.extraInt("repl-timeout"), 1)) * time.Second
	replID, offset, known := s.repl.id, s.repl.offset, s.repl.known
	s.eng.Unlock()
	if err := s.setLinkState(r, linkConnecting, nil); err != nil {
		return err
	}
	nc, err := net.DialTimeout("tcp", net.JoinHostPort(r.host, strconv.Itoa(r.port)), timeout)
	if err != nil {
		return err
	}
	if err := s.setLinkState(r, linkConnecting, nc); err != nil {
		return err
	}
	m := &masterConn{nc: nc, timeout: timeout}
	fail := func(err error) error { nc.Close(); return err }
	if tlsRepl {
		if m.tls, m.sock, err = s.dialTLS(nc, timeout); err != nil {
			return fail(fmt.Errorf("TLS handshake with master: %w", err))
		}
		m.nc = m.tls
	}
	m.br = bufio.NewReaderSize(m.nc, 64<<10)

	reply, err := m.ask("PING")
	if err != nil {
		return fail(err)
	}
	// A master that wants a password answers NOAUTH to PING; AUTH comes next.
	if strings.HasPrefix(reply, "-") && !strings.HasPrefix(reply, "-NOAUTH") && !strings.HasPrefix(reply, "-NOPERM") &&
		!strings.HasPrefix(reply, "-ERR operation not permitted") {
		return fail(fmt.Errorf("error reply to PING from master: %s", reply))
	}
	if pass != "" {
		args := []string{"AUTH", pass}
		if user != "" {
			args = []string{"AUTH", user, pass}
		}
		if reply, err = m.ask(args...); err != nil {
			return fail(err)
		}
		if strings.HasPrefix(reply, "-") {
			return fail(fmt.Errorf("unable to AUTH to master: %s", reply))
		}
	}
	if reply, err = m.ask("REPLCONF", "listening-port", strconv.Itoa(listenPort)); err != nil {
		return fail(err)
	}
	if reply, err = m.ask("REPLCONF", "capa", "eof", "capa", "psync2", "capa", "revolver"); err != nil {
		return fail(err)
	}
	psyncID, psyncOff := "?", "-1"
	if known {
		psyncID, psyncOff = replID, strconv.FormatInt(offset+1, 10)
	}
	if reply, err = m.ask("PSYNC", psyncID, psyncOff); err != nil {
		return fail(err)
	}
	switch {
	case strings.HasPrefix(reply, "+FULLRESYNC"):
		f := strings.Fields(reply)
		if len(f) != 3 {
			return fail(fmt.Errorf("bad FULLRESYNC reply from master: %q", reply))
		}
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fail(fmt.Errorf("bad FULLRESYNC offset from master: %q", reply))
		}
		if err := s.setLinkState(r, linkSync, nc); err != nil {
			return err
		}
		s.log.Info("replication: full resync from master", "replid", f[1], "offset", off)
		if err := s.fullSync(r, m, f[1], off); err != nil {
			return fail(err)
		}
	case strings.HasPrefix(reply, "+CONTINUE"):
		f := strings.Fields(reply)
		s.eng.Lock()
		idChanged := len(f) == 2 && f[1] != s.repl.id
		if idChanged {
			// The master's history has a new ID (it was promoted): ours
			// up to here is the old one's.
			s.repl.id2, s.repl.secondOff = s.repl.id, s.repl.offset+1
			s.repl.id = f[1]
		}
		s.masterContinued(idChanged) // our replicas learn the new ID (repl_master.go)
		s.eng.Unlock()
		s.log.Info("replication: partial resync accepted", "offset", offset)
	default:
		return fail(fmt.Errorf("unexpected reply to PSYNC from master: %s", reply))
	}
	return s.startMasterClient(r, m)
}

// fullSync receives the master's RDB into a file, then replaces the
// dataset with it under the engine lock.
func (s *Server) fullSync(r *replicaLink, m *masterConn, replID string, offset int64) error {
	f, err := s.syncFile()
	if err != nil {
		return err
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	if err := s.receiveRDB(r, m, f); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	s.eng.Lock()
	defer s.eng.Unlock()
	if s.replica != r {
		return errLinkStopped
	}
	start := time.Now()
	// A newline a second tells the master we are alive while we load, as
	// Redis's replicas do: a load longer than its repl-timeout would
	// otherwise cost the link, and the sync would start over.
	loading, alive := make(chan struct{}), make(chan struct{})
	go func() { keepMasterAlive(m, loading); close(alive) }()
	defer func() { close(loading); <-alive }() // before the link is handed on
	s.eng.FlushAll()
	var libraries []string
	res, err := s.eng.LoadRDB(bufio.NewReaderSize(f, 1<<20), engine.RDBLoadOptions{KeepExpired: true,
		Function: func(code []byte) error { libraries = append(libraries, string(code)); return nil }})
	if err == nil {
		err = s.lua.ReplaceLibraries(s.eng, libraries)
	}
	if err != nil {
		s.eng.FlushAll() // nothing half loaded stays; the next attempt syncs again
		return fmt.Errorf("loading the master's RDB: %w", err)
	}
	s.repl.id, s.repl.offset, s.repl.known = replID, offset, true
	s.repl.id2, s.repl.secondOff = strings.Repeat("0", 40), -1
	r.streamDB, _ = strconv.Atoi(res.Aux["repl-stream-db"])
	s.masterHistoryReplaced() // our replicas sync again, from a new backlog (repl_master.go)
	s.log.Info("replication: master's data loaded", "keys", res.Keys, "secs", time.Since(start).Seconds())
	return nil
}

// keepMasterAlive sends the master a newline every second until done is
// closed. Nothing else writes to the link meanwhile.
func keepMasterAlive(m *masterConn, done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			m.nc.SetWriteDeadline(time.Now().Add(m.timeout))
			if _, err := m.nc.Write([]byte("\n")); err != nil {
				return
			}
		}
	}
}

// syncFile is where a transfer goes: Revolver's own directory inside the
// data directory when persistence keeps one (the store tolerates it there),
// else the temp dir.
func (s *Server) syncFile() (*os.File, error) {
	dir := os.TempDir()
	if s.store != nil {
		dir = s.store.Dir()
	}
	return os.CreateTemp(dir, "temp-replica-*.rdb")
}

// receiveRDB copies the transfer to w: a bulk of known length, or (a
// diskless master) a stream ended by a 40-byte mark.
func (s *Server) receiveRDB(r *replicaLink, m *masterConn, w io.Writer) error {
	header, err := m.line()
	if err != nil {
		return err
	}
	if !strings.HasPrefix(header, "$") {
		return fmt.Errorf("bad protocol from master: %q", header)
	}
	var mark []byte
	total := int64(-1)
	if rest, ok := strings.CutPrefix(header, "$EOF:"); ok {
		if len(rest) != 40 {
			return fmt.Errorf("bad EOF mark from master: %q", header)
		}
		mark = []byte(rest)
	} else if total, err = strconv.ParseInt(header[1:], 10, 64); err != nil || total < 0 {
		return fmt.Errorf("bad transfer length from master: %q", header)
	}
	s.eng.Lock()
	r.syncTotal, r.syncRead, r.syncLastIO = total, 0, time.Now()
	s.eng.Unlock()
	buf := make([]byte, 256<<10)
	// With a mark, the last len(mark) bytes read are held back until more
	// comes: they may be the mark, which is not part of the file.
	var held []byte
	for read := int64(0); ; {
		want := len(buf)
		if total >= 0 {
			if read == total {
				return nil
			}
			want = int(min(int64(want), total-read))
		}
		m.nc.SetDeadline(time.Now().Add(m.timeout))
		n, err := m.br.Read(buf[:want])
		if n > 0 {
			read += int64(n)
			chunk := buf[:n]
			if mark != nil {
				held = append(held, chunk...)
				if bytes.HasSuffix(held, mark) {
					_, err := w.Write(held[:len(held)-len(mark)])
					return err
				}
				keep := min(len(held), len(mark))
				chunk = held[:len(held)-keep]
				if _, err := w.Write(chunk); err != nil {
					return err
				}
				held = append(held[:0], held[len(held)-keep:]...)
			} else if _, err := w.Write(chunk); err != nil {
				return err
			}
			s.eng.Lock()
			r.syncRead, r.syncLastIO = read, time.Now()
			s.eng.Unlock()
		}
		if err != nil {
			return err
		}
	}
}

// startMasterClient makes the link's connection the master client of an
// event loop, bytes already read included, and tells the master where this
// replica stands (which also starts a diskless master's stream).
func (s *Server) startMasterClient(r *replicaLink, m *masterConn) error {
	s.eng.Lock()
	offset := s.repl.offset
	s.eng.Unlock()
	if err := m.send("REPLCONF", "ACK", strconv.FormatInt(offset, 10)); err != nil {
		m.nc.Close()
		return err
	}
	m.nc.SetDeadline(time.Time{})
	leftover, _ := m.br.Peek(m.br.Buffered())
	leftover = bytes.Clone(leftover)
	c := newClient(s, m.nc, s.nextID.Add(1))
	c.loop = s.loops[s.nextLoop.Add(1)%uint64(len(s.loops))]
	var fd int
	var err error
	if m.tls != nil {
		fd, err = m.sock.detach()
		c.tls = &tlsLink{conn: m.tls, sock: m.sock}
		c.rd.src = c.tls
	} else {
		fd, err = detach(m.nc)
		c.rd.src = sockReader(fd)
	}
	if err != nil {
		return err
	}
	c.fd = fd
	c.rd.prefill(leftover)
	c.master = true
	c.replyMode = replyOff
	c.db = r.streamDB
	c.enterPushMode()
	s.eng.Lock()
	if s.replica != r || s.shutting.Load() {
		s.eng.Unlock()
		closeSock(fd)
		return errLinkStopped
	}
	c.authed.Store(true)
	s.clients[c.id] = c
	s.connCount.Add(1)
	r.master, r.conn, r.state = c, nil, linkConnected
	r.lastIO, r.ackedAt = time.Now(), time.Now()
	s.eng.Unlock()
	c.loop.adopt(c)
	s.log.Info("replication: connected to master, streaming", "host", r.host, "port", r.port)
	return nil
}

// masterApplied moves the offset past the master client's command i of
// its batch, once it ran. Under the engine lock.
func (s *Server) masterApplied(c *Client, i int) {
	if r := s.replica; r != nil && r.master == c {
		s.feedFromMaster(c.batch[i], c.rd.sizes[i]) // to our own replicas (repl_master.go)
		s.repl.offset += int64(c.rd.sizes[i])
		r.lastIO = time.Now()
	}
}

// masterClosed ends the stream when the master client goes. Under the
// engine lock.
func (s *Server) masterClosed(c *Client) {
	r := s.replica
	if r == nil || r.master != c {
		return
	}
	r.master, r.state, r.downSince, r.streamDB = nil, linkConnect, time.Now(), c.db
	select {
	case r.lost <- struct{}{}:
	default:
	}
}

// MasterAck implements commands.Server for REPLCONF GETACK: the master
// client gets REPLCONF ACK with the offset before this command. It reports
// whether conn is the master client.
func (s *Server) MasterAck(conn any) bool {
	c, ok := conn.(*Client)
	if !ok || !c.master || s.replica == nil || s.replica.master != c {
		return false
	}
	s.sendAck(c)
	return true
}

func (s *Server) sendAck(c *Client) {
	off := strconv.FormatInt(s.repl.offset, 10)
	c.push(fmt.Appendf(nil, "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n", len(off), off))
	s.replica.ackedAt = time.Now()
}

// replicaCron acknowledges the offset to the master every second, as a
// Redis replica does. Takes the engine lock.
func (s *Server) replicaCron(now time.Time) {
	s.eng.Lock()
	defer s.eng.Unlock()
	r := s.replica
	if r == nil || r.master == nil {
		return
	}
	if timeout := time.Duration(s.cfg.extraInt("repl-timeout")) * time.Second; now.Sub(r.lastIO) > timeout {
		// The master pings every repl-ping-replica-period: a silent link
		// is a dead one.
		s.log.Warn("replication: MASTER timeout, no data nor PING received", "secs", int64(timeout/time.Second))
		r.master.kill()
		return
	}
	if now.Sub(r.ackedAt) >= time.Second {
		s.sendAck(r.master)
	}
}

// replicaInfo adds INFO replication's fields for a replica.
func (s *Server) replicaInfo(ib *infoBuilder) {
	r := s.replica
	now := time.Now()
	ib.add("role", "slave")
	ib.add("master_host", r.host)
	ib.add("master_port", r.port)
	up := r.state == linkConnected
	ib.add("master_link_status", map[bool]string{true: "up", false: "down"}[up])
	lastIO := int64(-1)
	if up {
		lastIO = int64(now.Sub(r.lastIO) / time.Second)
	}
	ib.add("master_last_io_seconds_ago", lastIO)
	ib.add("master_sync_in_progress", b2i(r.state == linkSync))
	ib.add("slave_read_repl_offset", s.repl.offset)
	ib.add("slave_repl_offset", s.repl.offset)
	if r.state == linkSync {
		ib.add("master_sync_total_bytes", r.syncTotal)
		ib.add("master_sync_read_bytes", r.syncRead)
		left, perc := int64(-1), 0.0
		if r.syncTotal > 0 {
			left = r.syncTotal - r.syncRead
			perc = float64(r.syncRead) * 100 / float64(r.syncTotal)
		}
		ib.add("master_sync_left_bytes", left)
		ib.add("master_sync_perc", fmt.Sprintf("%.2f", perc))
		ib.add("master_sync_last_io_seconds_ago", int64(now.Sub(r.syncLastIO)/time.Second))
	}
	if !up {
		ib.add("master_link_down_since_seconds", int64(now.Sub(r.downSince)/time.Second))
	}
	ib.add("slave_priority", s.cfg.extraInt("replica-priority"))
	ib.add("slave_read_only", b2i(s.cfg.extraString("replica-read-only") == "yes"))
	ib.add("replica_announced", b2i(s.cfg.extraString("replica-announced") == "yes"))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Role implements commands.Server: ROLE's reply parts for a replica
// (host, port, state, offset); ok false on a master.
func (s *Server) Role() (host string, port int, state string, offset int64, ok bool) {
	r := s.replica
	if r == nil {
		return "", 0, "", 0, false
	}
	return r.host, r.port, r.state, s.repl.offset, true
}

// removeSyncLeftovers deletes transfer files a killed replica left in the
// data directory.
func removeSyncLeftovers(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, "temp-replica-*.rdb"))
	for _, n := range names {
		os.Remove(n)
	}
}

// replicaRefuses is what a replica answers instead of running cmd for a
// client, or "": while the link is down with replica-serve-stale-data no,
// everything but the commands flagged stale is refused; on a read-only
// replica, writes are (EXEC too when a queued command writes).
func (s *Server) replicaRefuses(c *Client, cmd *commands.Command) string {
	if s.replica.state != linkConnected && !cmd.Has(commands.FlagStale) &&
		s.cfg.extraString("replica-serve-stale-data") == "no" {
		return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	}
	if s.cfg.extraString("replica-read-only") == "yes" &&
		(cmd.Has(commands.FlagWrite) || cmd.FullName() == "exec" && c.queueMayWrite) {
		return "READONLY You can't write against a read only replica."
	}
	return ""
}

// MasterOffset implements commands.Server: a master's ROLE offset.
func (s *Server) MasterOffset() int64 { return s.repl.offset }

// replicaOfAtStart follows the master the configuration names (replicaof
// host port), as Redis does from its start.
func (s *Server) replicaOfAtStart() {
	s.eng.Lock() // clients may already CONFIG SET
	f := strings.Fields(s.cfg.extraString("replicaof"))
	s.eng.Unlock()
	if len(f) != 2 {
		return
	}
	port, err := strconv.Atoi(f[1])
	if err != nil {
		s.log.Warn("replicaof: bad port", "value", f[1])
		return
	}
	if s.store != nil {
		removeSyncLeftovers(s.store.Dir())
	}
	s.eng.Lock()
	s.ReplicaOf(f[0], port)
	s.eng.Unlock()
}

// RefusesWrites implements commands.Server (scripts' writes on a replica).
func (s *Server) RefusesWrites(conn commands.Conn) bool {
	if s.replica == nil || s.cfg.extraString("replica-read-only") != "yes" {
		return false
	}
	c, ok := conn.(*Client)
	return !ok || !c.master
}
