package server

import (
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// The master role (Redis's replication.c, master side). A connection that
// sends SYNC or PSYNC becomes a replica client: it gets the dataset as an
// RDB (repl_master_sync.go), then the replication stream, which every
// command to propagate feeds (replFeed), together with the backlog that
// lets a replica continue after a dropped link. Replicas acknowledge the
// offset they applied (REPLCONF ACK), which WAIT and min-replicas-to-write
// count (repl_master_wait.go). A replica that has replicas of its own
// feeds them its master's stream as it is, at the same offsets.

// replMaster is the master role's state, under the engine lock.
type replMaster struct {
	replicas []*Client    // attached by SYNC or PSYNC, in that order
	backlog  *replBacklog // nil until a replica attaches (or this server syncs from a master)
	// seldb is the database the stream's commands run in; -1 makes the
	// next command select one (after a full sync, or a promotion).
	seldb           int
	noReplicasSince time.Time // for repl-backlog-ttl
	cronTicks       int64
	getAck          bool // WAIT waits: REPLCONF GETACK goes out before the lock is released
	waiting         []ackWaiter
	selScratch      []byte // the SELECT fed before it
	scratch         []byte // the encoding of the command being fed
	oddEncoding     bool   // a master's command whose re-encoding changed its size was reported

	minToWrite, maxLag int64 // min-replicas-to-write, min-replicas-max-lag

	syncFull, syncPartialOK, syncPartialErr int64
	// writers are the full syncs' RDBs being written from a view of the
	// store; the store closes after them.
	writers       sync.WaitGroup
	skippedNative atomic.Int64 // native keys left out of RDBs for non-Revolver replicas
}

// replicaPeer is what a connection announced with REPLCONF and, once it
// sent SYNC or PSYNC, its state as a replica. Fields are under the engine
// lock, except those the connection's loop owns.
type replicaPeer struct {
	listeningPort int64
	ipAddress     string
	capaEOF       bool // understands the $EOF:<mark> transfer
	capaPSYNC2    bool // understands +CONTINUE <new id>
	capaRevolver  bool // loads Revolver's own types
	rdbOnly       bool // REPLCONF rdb-only 1: the RDB and nothing more
	filtered      bool // REPLCONF rdb-filter-only: no keys in the RDB
	withFunctions bool // ... but the functions named in the filter

	attached bool // SYNC or PSYNC made the connection a replica
	preSync  bool // SYNC: an old protocol client that never acknowledges
	eof      bool // its RDB went EOF-marked: the stream starts at its first ACK
	ackOff   int64
	ackTime  time.Time

	// The transfer: the loop sends bulk before anything else, then, once
	// holdStream is clear, the stream queued behind it.
	bulk       *bulkTransfer // the loop's
	sending    atomic.Bool   // the RDB is being sent
	preparing  atomic.Bool   // the RDB is being written
	sentAt     atomic.Int64  // when it was sent (unix nanos), a fresh start for the timeout
	heard      atomic.Int64  // when the replica last sent anything (unix nanos)
	holdStream atomic.Bool
}

// ackWaiter is a client blocked in WAIT.
type ackWaiter struct {
	c   *Client
	w   *engine.Waiter
	num int64
}

func (s *Server) initReplMaster() {
	s.replm.seldb = -1
	s.replm.noReplicasSince = time.Now()
	s.applyReplication()
}

// applyReplication follows the replication settings CONFIG SET changes:
// the backlog's size and min-replicas-to-write. Under the engine lock.
func (s *Server) applyReplication() {
	m := &s.replm
	m.minToWrite = s.cfg.extraInt("min-replicas-to-write")
	m.maxLag = s.cfg.extraInt("min-replicas-max-lag")
	if size := s.cfg.extraInt("repl-backlog-size"); m.backlog != nil && int64(m.backlog.size) != max(size, replBacklogMin) {
		m.backlog = m.backlog.resized(size)
	}
}

// peer returns c's replica side, made on first use.
func (c *Client) peer() *replicaPeer {
	if c.rp == nil {
		c.rp = &replicaPeer{}
	}
	return c.rp
}

// isReplica reports whether c is a replica (SYNC or PSYNC ran).
func (c *Client) isReplica() bool { return c.rp != nil && c.rp.attached }

// fed reports whether the stream goes to the replica: not to one that
// wants the RDB only.
func (rp *replicaPeer) fed() bool { return rp.attached && !rp.rdbOnly }

// online reports whether the replica has its RDB and takes the stream
// (Redis's SLAVE_STATE_ONLINE).
func (rp *replicaPeer) online() bool { return rp.fed() && !rp.sending.Load() }

// lastAck is when the replica last acknowledged, was put online, or sent
// anything (Redis takes a replica's newline as a sign of life too: it
// sends them while it loads a large RDB).
func (rp *replicaPeer) lastAck() time.Time {
	last := rp.ackTime
	for _, t := range []int64{rp.sentAt.Load(), rp.heard.Load()} {
		if at := time.Unix(0, t); at.After(last) {
			last = at
		}
	}
	return last
}

// replicaName is how logs name a replica, as Redis's
// replicationGetSlaveName: its address and listening port.
func (c *Client) replicaName() string {
	host := c.replicaIP()
	if c.rp != nil && c.rp.listeningPort != 0 {
		return net.JoinHostPort(host, strconv.FormatInt(c.rp.listeningPort, 10))
	}
	return c.addr
}

// replicaIP is the replica's announced address, else its peer address.
func (c *Client) replicaIP() string {
	if c.rp != nil && c.rp.ipAddress != "" {
		return c.rp.ipAddress
	}
	host, _, err := net.SplitHostPort(c.addr)
	if err != nil {
		return c.addr
	}
	return host
}

// replFeed propagates a command: it goes to the backlog and to every
// replica, after SELECT when the stream is in another database. Under the
// engine lock, in the order the commands took effect. A replica proxies
// its master's stream instead (feedFromMaster), and a master that never had
// a replica keeps nothing: its offset stays.
func (s *Server) replFeed(db int, args [][]byte) {
	m := &s.replm
	if s.replica != nil || m.backlog == nil && len(m.replicas) == 0 {
		return
	}
	m.scratch = resp.AppendCommand(m.scratch[:0], args...)
	s.replFeedEncoded(db, m.scratch)
}

// replFeedEncoded is replFeed of a command already encoded.
func (s *Server) replFeedEncoded(db int, cmd []byte) {
	m := &s.replm
	if s.replica != nil || m.backlog == nil && len(m.replicas) == 0 {
		return
	}
	if db >= 0 && db != m.seldb {
		sel := resp.AppendCommand(m.selScratch[:0], []byte("SELECT"), []byte(strconv.Itoa(db)))
		m.selScratch = sel
		m.seldb = db
		s.feedStream(sel)
		s.repl.offset += int64(len(sel))
	}
	s.feedStream(cmd)
	s.repl.offset += int64(len(cmd))
}

// feedOwn feeds a command of the master role itself (PING, REPLCONF
// GETACK), in whatever database the stream is.
func (s *Server) feedOwn(args ...[]byte) { s.replFeed(-1, args) }

// feedFromMaster passes the master's command on to this replica's backlog
// and replicas, as it came: the offset, which masterApplied moves by the
// command's size in the master's stream, stays the master's.
func (s *Server) feedFromMaster(args [][]byte, size int) {
	m := &s.replm
	if m.backlog == nil && len(m.replicas) == 0 {
		return
	}
	b := resp.AppendCommand(m.scratch[:0], args...)
	m.scratch = b
	if len(b) != size && !m.oddEncoding {
		// A master that encodes commands otherwise than Redis's
		// multibulk: the chained replicas' offsets drift from ours.
		m.oddEncoding = true
		s.log.Warn("replication: a command from the master is not in canonical multibulk form; "+
			"chained replicas may need a full sync after a disconnection", "size", size, "reencoded", len(b))
	}
	s.feedStream(b)
}

// feedStream appends b to the backlog and to the replicas' output.
func (s *Server) feedStream(b []byte) {
	m := &s.replm
	if m.backlog != nil {
		m.backlog.write(b)
	}
	var masked []byte // for replicas that are not Revolver (repl_master_mask.go)
	for _, c := range m.replicas {
		switch {
		case !c.rp.fed():
		case c.rp.capaRevolver:
			c.push(b)
		default:
			if masked == nil {
				masked = s.maskNative(b)
			}
			c.push(masked)
		}
	}
}

// createBacklog starts keeping the stream from the current offset on.
func (s *Server) createBacklog() {
	s.replm.backlog = newReplBacklog(s.cfg.extraInt("repl-backlog-size"))
}

// backlogFirstByte is the offset of the backlog's first byte (Redis's
// repl_backlog->offset).
func (s *Server) backlogFirstByte() int64 {
	return s.repl.offset - s.replm.backlog.histlen + 1
}

// attachReplica makes c a replica; the first one on a master without a
// backlog starts a new history (Redis: a new ID, no second one).
func (s *Server) attachReplica(c *Client) {
	m := &s.replm
	c.rp.attached = true
	c.rp.ackTime = time.Now()
	m.replicas = append(m.replicas, c)
	if len(m.replicas) == 1 && m.backlog == nil {
		if s.replica == nil {
			s.repl.id = newRunID()
			s.clearReplID2()
		}
		s.createBacklog()
		s.log.Info("replication backlog created", "replid", s.repl.id, "replid2", s.repl.id2)
	}
}

func (s *Server) clearReplID2() {
	s.repl.id2, s.repl.secondOff = zeroReplID, -1
}

var zeroReplID = "0000000000000000000000000000000000000000"

// replicaGone forgets a replica that closed or was killed. Under the engine
// lock.
func (s *Server) replicaGone(c *Client) {
	m := &s.replm
	for i, r := range m.replicas {
		if r == c {
			m.replicas = slices.Delete(m.replicas, i, i+1)
			break
		}
	}
	if len(m.replicas) == 0 {
		m.noReplicasSince = time.Now()
	}
	s.log.Info("connection with replica lost", "replica", c.replicaName())
}

// disconnectReplicas closes every replica, which then syncs again: after
// this server's history changed (a full sync from its master, a new ID).
func (s *Server) disconnectReplicas() {
	for _, c := range append([]*Client(nil), s.replm.replicas...) {
		c.kill()
		s.forget(c)
	}
}

// masterHistoryReplaced follows a full sync from this replica's master: the
// replicas' history is gone (Redis's replicationAttachToNewMaster), and the
// backlog restarts at the new offset. Under the engine lock.
func (s *Server) masterHistoryReplaced() {
	s.disconnectReplicas()
	s.createBacklog()
}

// masterContinued follows a partial resync with this replica's master:
// replicas must learn a new ID, and a backlog must exist.
func (s *Server) masterContinued(idChanged bool) {
	if idChanged {
		s.disconnectReplicas()
	}
	if s.replm.backlog == nil {
		s.createBacklog()
	}
}

// promoted follows REPLICAOF NO ONE: replicas reconnect to learn the new
// ID (and continue with the old one as the second), the stream starts with
// SELECT, and the backlog's time to live starts now.
func (s *Server) promoted() {
	s.disconnectReplicas()
	s.replm.seldb = -1
	s.replm.noReplicasSince = time.Now()
}

// replMasterCron is the master role's once-a-second work: PING replicas
// every repl-ping-replica-period, drop those silent past repl-timeout, free
// the backlog repl-backlog-ttl after the last replica left.
func (s *Server) replMasterCron(now time.Time) {
	s.eng.Lock()
	defer s.eng.Unlock()
	m := &s.replm
	period := max(s.cfg.extraInt("repl-ping-replica-period"), 1)
	if m.cronTicks%period == 0 && len(m.replicas) > 0 {
		s.feedOwn([]byte("PING"))
	}
	m.cronTicks++
	for _, c := range m.replicas {
		if c.rp.preparing.Load() {
			c.loop.post(c, postFlush) // its keepalive newline
		}
	}
	timeout := time.Duration(s.cfg.extraInt("repl-timeout")) * time.Second
	for _, c := range append([]*Client(nil), m.replicas...) {
		if c.rp.online() && !c.rp.preSync && now.Sub(c.rp.lastAck()) > timeout {
			s.log.Warn("Disconnecting timedout replica (streaming sync)", "replica", c.replicaName())
			c.kill()
			s.forget(c)
		}
	}
	ttl := s.cfg.extraInt("repl-backlog-ttl")
	if len(m.replicas) == 0 && ttl > 0 && m.backlog != nil && s.replica == nil &&
		now.Sub(m.noReplicasSince) > time.Duration(ttl)*time.Second {
		// Without a backlog the offset stops moving: the history must not
		// be continued by anyone, hence a new ID.
		s.repl.id = newRunID()
		s.clearReplID2()
		m.backlog = nil
		s.log.Info("replication backlog freed after seconds without connected replicas", "secs", ttl)
	}
	s.pruneAckWaiters()
}

// replMemory is what the backlog's buffer and the replicas' pending output
// take, for INFO memory. Under the engine lock.
func (s *Server) replMemory() (backlog, replicas int64) {
	if b := s.replm.backlog; b != nil {
		backlog = int64(cap(b.buf))
	}
	for _, c := range s.replm.replicas {
		replicas += int64(c.pendingLen())
	}
	return backlog, replicas
}

// RoleReplicas implements commands.Server: ROLE's online replicas.
func (s *Server) RoleReplicas() []commands.ReplicaRole {
	var out []commands.ReplicaRole
	for _, c := range s.replm.replicas {
		if c.rp.online() {
			out = append(out, commands.ReplicaRole{IP: c.replicaIP(), Port: c.rp.listeningPort, Offset: c.rp.ackOff})
		}
	}
	return out
}

// replicationInfo is INFO replication, for either role.
func (s *Server) replicationInfo(ib *infoBuilder) {
	m := &s.replm
	if s.replica != nil {
		s.replicaInfo(ib)
	} else {
		ib.add("role", "master")
	}
	ib.add("connected_slaves", len(m.replicas))
	if m.minToWrite > 0 && m.maxLag > 0 {
		ib.add("min_slaves_good_slaves", s.goodReplicas(time.Now()))
	}
	now := time.Now()
	n := 0
	for _, c := range m.replicas {
		rp := c.rp
		state, lag := "online", int64(0)
		switch {
		case rp.sending.Load() && (rp.eof || rp.preparing.Load()):
			state = "wait_bgsave" // Redis's state while a diskless transfer runs
		case rp.sending.Load():
			state = "send_bulk"
		case rp.rdbOnly:
			continue
		default:
			lag = now.Unix() - rp.lastAck().Unix()
		}
		ib.add("slave"+strconv.Itoa(n), "ip="+c.replicaIP()+",port="+strconv.FormatInt(rp.listeningPort, 10)+
			",state="+state+",offset="+strconv.FormatInt(rp.ackOff, 10)+",lag="+strconv.FormatInt(lag, 10))
		n++
	}
	ib.add("master_failover_state", "no-failover")
	ib.add("master_replid", s.repl.id)
	ib.add("master_replid2", s.repl.id2)
	ib.add("master_repl_offset", s.repl.offset)
	ib.add("second_repl_offset", s.repl.secondOff)
	var first, histlen int64
	if m.backlog != nil {
		first, histlen = s.backlogFirstByte(), m.backlog.histlen
	}
	ib.add("repl_backlog_active", b2i(m.backlog != nil))
	ib.add("repl_backlog_size", max(s.cfg.extraInt("repl-backlog-size"), replBacklogMin))
	ib.add("repl_backlog_first_byte_offset", first)
	ib.add("repl_backlog_histlen", histlen)
	ib.add("rdb_skipped_native_keys", m.skippedNative.Load())
}
