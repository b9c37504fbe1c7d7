package server

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
)

// SYNC and PSYNC: a partial resync sends the backlog from the replica's
// offset; a full one writes the dataset as of the offset it reports as an
// RDB into an unlinked temp file (from a view of the store, off the engine
// lock, when there is a store: repl_master_view.go), and the replica's loop
// sends it, then the stream that was fed meanwhile.

// ReplConf implements commands.Server: an option a replica announces with
// REPLCONF, already checked.
func (s *Server) ReplConf(conn commands.Conn, option string, value []byte) {
	c, ok := conn.(*Client)
	if !ok {
		return
	}
	rp := c.peer()
	switch option {
	case "listening-port":
		rp.listeningPort, _ = engine.ParseInt(value)
	case "ip-address":
		rp.ipAddress = string(value)
	case "capa":
		switch strings.ToLower(string(value)) {
		case "eof":
			rp.capaEOF = true
		case "psync2":
			rp.capaPSYNC2 = true
		case "revolver":
			rp.capaRevolver = true
		}
	case "rdb-only":
		rp.rdbOnly = string(value) == "1"
	case "rdb-filter-only":
		rp.filtered = true
		for _, f := range strings.Fields(string(value)) {
			rp.withFunctions = rp.withFunctions || strings.EqualFold(f, "functions")
		}
	}
}

// IsReplicaConn implements commands.Server.
func (s *Server) IsReplicaConn(conn commands.Conn) bool {
	c, ok := conn.(*Client)
	return ok && c.isReplica()
}

// Sync implements commands.Server: SYNC and PSYNC (Redis's syncCommand).
// It returns an error to reply, or "" when the connection became a replica
// (its output is the sync from now on) or already was one.
func (s *Server) Sync(conn commands.Conn, args [][]byte) string {
	c, ok := conn.(*Client)
	if !ok {
		return "ERR SYNC and PSYNC are not allowed here"
	}
	if c.isReplica() {
		return ""
	}
	psync := strings.EqualFold(string(args[0]), "psync")
	if psync && len(args) > 3 && strings.EqualFold(string(args[3]), "failover") {
		s.log.Warn("failover request received", "replid", string(args[1]))
		if s.replica == nil {
			return "ERR PSYNC FAILOVER can't be sent to a master."
		}
		if !strings.EqualFold(string(args[1]), s.repl.id) {
			return "ERR PSYNC FAILOVER replid must match my replid."
		}
		s.ReplicaOfNoOne()
		s.log.Info("MASTER MODE enabled (failover request)", "client", c.addr)
	}
	if s.replica != nil && s.replica.state != linkConnected {
		return "NOMASTERLINK Can't SYNC while not connected with my master"
	}
	if c.w.Len() > 0 || c.pendingLen() > 0 {
		return "ERR SYNC and PSYNC are invalid with pending output"
	}
	rp := c.peer()
	if rp.filtered && !rp.capaEOF {
		return "ERR Filtered replica requires EOF capability"
	}
	s.log.Info("replica asks for synchronization", "replica", c.replicaName())
	m := &s.replm
	if psync {
		offset, ok := engine.ParseInt(args[2])
		if !ok {
			s.log.Warn("replica asks for synchronization but with a wrong offset", "replica", c.replicaName())
			return "ERR value is not an integer or out of range"
		}
		if s.partialResync(c, string(args[1]), offset) {
			m.syncPartialOK++
			return ""
		}
		if string(args[1]) != "?" {
			m.syncPartialErr++
		}
	} else {
		rp.preSync = true
	}
	m.syncFull++
	s.attachReplica(c)
	if err := s.startFullSync(c, psync); err != nil {
		s.log.Warn("BGSAVE for replication failed", "replica", c.replicaName(), "err", err)
		rp.attached = false
		s.replicaGone(c)
		c.CloseAfterReply()
		return "ERR BGSAVE failed, replication can't continue"
	}
	return ""
}

// partialResync continues a replica's stream from offset when this server
// holds that history (Redis's masterTryPartialResynchronization): the ID is
// ours, or our previous one up to where it was valid, and the backlog
// still has the bytes from offset on.
func (s *Server) partialResync(c *Client, replID string, offset int64) bool {
	m := &s.replm
	if !strings.EqualFold(replID, s.repl.id) && (!strings.EqualFold(replID, s.repl.id2) || offset > s.repl.secondOff) {
		switch {
		case replID == "?":
			s.log.Info("full resync requested by replica", "replica", c.replicaName())
		case !strings.EqualFold(replID, s.repl.id) && !strings.EqualFold(replID, s.repl.id2):
			s.log.Info("partial resynchronization not accepted: replication ID mismatch", "replica", c.replicaName(),
				"asked", replID, "replid", s.repl.id, "replid2", s.repl.id2)
		default:
			s.log.Info("partial resynchronization not accepted: requested offset for second ID is past it",
				"replica", c.replicaName(), "offset", offset, "second_repl_offset", s.repl.secondOff)
		}
		return false
	}
	if m.backlog == nil || offset < s.backlogFirstByte() || offset > s.repl.offset+1 {
		s.log.Info("unable to partial resync for lack of backlog", "replica", c.replicaName(), "offset", offset)
		if offset > s.repl.offset+1 {
			s.log.Warn("replica tried to PSYNC with an offset greater than the master replication offset",
				"replica", c.replicaName())
		}
		return false
	}
	rp := c.rp
	rp.attached = true
	rp.ackTime = time.Now()
	m.replicas = append(m.replicas, c)
	c.enterPushMode()
	reply := "+CONTINUE\r\n"
	if rp.capaPSYNC2 {
		reply = "+CONTINUE " + s.repl.id + "\r\n"
	}
	n := s.repl.offset + 1 - offset
	tail := m.backlog.appendTail(nil, n)
	if !rp.capaRevolver {
		tail = s.maskNative(tail)
	}
	c.push(append([]byte(reply), tail...))
	s.log.Info("partial resynchronization request accepted", "replica", c.replicaName(), "bytes", n, "offset", offset)
	return true
}

// bulkTransfer is a full sync's RDB on its way to the replica: the
// +FULLRESYNC line, then, once the file is written, its header, the file,
// and the EOF mark of a diskless-style transfer.
type bulkTransfer struct {
	pre, post []byte
	f         *os.File
	left      int64 // file bytes not read yet
	name      string
	eof       bool
	// file is the written RDB, set by whoever wrote it; dropped once the
	// connection is gone, so that a file written after that is closed.
	file atomic.Pointer[syncFile]
	// lastSent is when the loop last sent the replica anything: a newline
	// a second keeps the link alive while the file is written.
	lastSent time.Time
}

// syncFile is a written RDB, rewound, or why writing it failed.
type syncFile struct {
	f    *os.File
	size int64
	err  error
}

var droppedTransfer = &syncFile{}

// ready hands the written file (or the error) to the transfer. Any
// goroutine.
func (t *bulkTransfer) ready(f *os.File, size int64) { t.finish(&syncFile{f: f, size: size}) }

func (t *bulkTransfer) finish(sf *syncFile) {
	if !t.file.CompareAndSwap(nil, sf) && sf.f != nil {
		sf.f.Close() // the replica is gone
	}
}

// drop closes the transfer's file, now or once it is written.
func (t *bulkTransfer) drop() {
	if sf := t.file.Swap(droppedTransfer); sf != nil && sf.f != nil {
		sf.f.Close()
	}
}

// bulkChunk is how much of the file one read takes; bulkBudget how much
// one turn of the loop sends before others get theirs.
const (
	bulkChunk  = 256 << 10
	bulkBudget = 4 << 20
)

// startFullSync starts a full sync: +FULLRESYNC at the current offset
// goes out at once, then the RDB of the dataset as of that offset, then
// the stream fed meanwhile. With a store, the RDB is written from a view of
// it as of now, off the engine lock (repl_master_view.go); without one,
// here, under the lock. Under the engine lock.
func (s *Server) startFullSync(c *Client, psync bool) error {
	rp := c.rp
	eof := rp.capaEOF && (s.cfg.extraString("repl-diskless-sync") == "yes" || rp.filtered)
	job := s.newSyncJob(rp)
	t := &bulkTransfer{name: c.replicaName(), eof: eof}
	if psync {
		t.pre = fmt.Appendf(t.pre, "+FULLRESYNC %s %d\r\n", s.repl.id, s.repl.offset)
	}
	if s.store != nil && !rp.filtered {
		if err := s.writeSyncFromView(c, t, job); err != nil {
			return err
		}
	} else {
		f, size, err := s.writeSyncRDB(job, func(w io.Writer) (engine.RDBWriteResult, error) {
			if rp.filtered {
				return engine.RDBWriteResult{}, writeKeylessRDB(w, job.opts.Aux, job.opts.Functions)
			}
			return s.eng.WriteRDB(w, job.opts)
		})
		if err != nil {
			return err
		}
		t.ready(f, size)
	}
	// The replica's stream starts with SELECT: it does not know which
	// database the stream is in.
	s.replm.seldb = -1
	rp.eof = eof
	rp.bulk = t
	rp.sending.Store(true)
	rp.holdStream.Store(eof)
	c.enterPushMode()
	s.log.Info("starting BGSAVE for SYNC", "replica", c.replicaName(), "target", map[bool]string{true: "replicas sockets", false: "disk"}[eof],
		"offset", s.repl.offset)
	return nil
}

// syncJob is what a full sync's RDB is written with, taken under the
// engine lock as of the sync's offset.
type syncJob struct {
	opts      engine.RDBWriteOptions
	limits    engine.Limits
	databases int
}

// newSyncJob describes the RDB for rp as of now. Under the engine lock.
func (s *Server) newSyncJob(rp *replicaPeer) syncJob {
	streamDB := max(s.replm.seldb, 0)
	if r := s.replica; r != nil && r.master != nil {
		streamDB = r.master.db
	}
	aux := [][2]string{
		{"redis-ver", commands.Version},
		{"redis-bits", strconv.Itoa(32 << (^uint(0) >> 63))},
		{"ctime", strconv.FormatInt(time.Now().Unix(), 10)},
		{"used-mem", strconv.FormatInt(s.usedMemory.Load(), 10)},
		{"repl-stream-db", strconv.Itoa(streamDB)},
		{"repl-id", s.repl.id},
		{"repl-offset", strconv.FormatInt(s.repl.offset, 10)},
		{"aof-base", "0"},
	}
	var functions [][]byte
	if !rp.filtered || rp.withFunctions {
		for _, code := range s.lua.LibraryCodes() {
			functions = append(functions, []byte(code))
		}
	}
	return syncJob{
		opts: engine.RDBWriteOptions{Aux: aux, Functions: functions,
			Compress: s.cfg.extraString("rdbcompression") == "yes", SkipNative: !rp.capaRevolver},
		limits:    s.engineLimits(),
		databases: s.cfg.Databases,
	}
}

// writeSyncRDB writes the RDB a replica loads into a temp file that is
// already unlinked, and returns it rewound with its size. Any goroutine.
func (s *Server) writeSyncRDB(j syncJob, write func(io.Writer) (engine.RDBWriteResult, error)) (*os.File, int64, error) {
	dir := os.TempDir()
	if s.store != nil {
		dir = s.cfg.Dir
	}
	f, err := os.CreateTemp(dir, "temp-master-*.rdb")
	if err != nil {
		return nil, 0, err
	}
	os.Remove(f.Name()) // the open file is all the transfer needs; a crash leaves nothing
	fail := func(err error) (*os.File, int64, error) { f.Close(); return nil, 0, err }
	w := bufio.NewWriterSize(f, 1<<20)
	res, err := write(w)
	if res.SkippedNative > 0 {
		s.replm.skippedNative.Add(res.SkippedNative)
		s.log.Warn("full sync to a replica that is not Revolver: keys of Revolver's own types left out of its RDB",
			"keys", res.SkippedNative)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fail(err)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return fail(err)
	}
	return f, size, nil
}

// writeKeylessRDB writes an RDB without keys (REPLCONF rdb-filter-only):
// the header, aux fields, the functions asked for, EOF and the checksum.
func writeKeylessRDB(w io.Writer, aux [][2]string, functions [][]byte) error {
	const opFunction2, opAux, opEOF = 245, 250, 255
	b := []byte("REDIS0010")
	for _, a := range aux {
		b = appendRDBString(append(b, opAux), []byte(a[0]))
		b = appendRDBString(b, []byte(a[1]))
	}
	for _, code := range functions {
		b = appendRDBString(append(b, opFunction2), code)
	}
	b = append(b, opEOF)
	crc := ^crc64.Update(^uint64(0), crcJones, b)
	_, err := w.Write(binary.LittleEndian.AppendUint64(b, crc))
	return err
}

// crcJones is Redis's CRC-64 (Jones polynomial, reflected).
var crcJones = crc64.MakeTable(0x95AC9329AC4BC9B5)

// appendRDBString appends s as an RDB string: its length, then its bytes.
func appendRDBString(b, s []byte) []byte {
	switch n := len(s); {
	case n < 1<<6:
		b = append(b, byte(n))
	case n < 1<<14:
		b = append(b, 0x40|byte(n>>8), byte(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return append(b, s...)
}

// streamHeld runs the replica's transfer and reports whether the stream
// must still wait: the RDB is not all out, or, after an EOF-marked one, the
// replica has not acknowledged yet. The loop calls it as it sends a
// push-mode client's output.
func (c *Client) streamHeld() bool {
	rp := c.rp
	if rp == nil {
		return false
	}
	if rp.bulk != nil && !c.sendBulk() {
		return true
	}
	return rp.holdStream.Load()
}

// sendBulk sends the transfer on as far as the socket and the budget let
// it, and reports whether it is all out. A chunk the socket refused stays
// in out, for the loop to send when the socket can take more.
func (c *Client) sendBulk() bool {
	t := c.rp.bulk
	if t.f == nil && !t.opened(c) {
		return false
	}
	budget := bulkBudget
	for {
		if len(c.out) > 0 {
			c.send(nil)
			if c.broken || len(c.out) > 0 {
				return false
			}
		}
		buf := c.out[:0]
		if c.tls != nil {
			buf = c.tls.bulk[:0] // out holds records, not the file's bytes
		}
		chunk, err := t.next(buf)
		if err != nil {
			c.s.log.Warn("SYNC failed: reading the RDB to send", "replica", t.name, "err", err)
			c.broken = true
			return false
		}
		if len(chunk) == 0 {
			c.bulkSent()
			return true
		}
		if c.tls != nil {
			c.tls.bulk = chunk[:0]
			c.send(chunk)
			if budget -= len(chunk); budget <= 0 && len(c.out) == 0 && !c.broken {
				c.loop.post(c, postFlush) // nothing to wait for: come back next iteration
				return false
			}
			continue
		}
		c.out = chunk
		if budget -= len(chunk); budget <= 0 {
			return false // out is not empty: the loop comes back when the socket is writable
		}
	}
}

// opened takes the file once it is written, with its header; until then
// it sends +FULLRESYNC, then a newline a second, which Redis's replicas
// and redis-cli take as the master being alive. It reports whether the
// file is there.
func (t *bulkTransfer) opened(c *Client) bool {
	sf := t.file.Load()
	switch {
	case sf == nil:
		if len(t.pre) > 0 {
			c.send(t.pre)
			t.pre = nil
			t.lastSent = time.Now()
		} else if time.Since(t.lastSent) >= time.Second {
			c.send([]byte("\n"))
			t.lastSent = time.Now()
		}
		return false
	case sf.err != nil:
		c.s.log.Warn("SYNC failed: writing the RDB", "replica", t.name, "err", sf.err)
		c.broken = true
		return false
	}
	t.f, t.left = sf.f, sf.size
	if t.eof {
		mark := make([]byte, 20)
		rand.Read(mark)
		t.post = []byte(hex.EncodeToString(mark))
		t.pre = fmt.Appendf(t.pre, "$EOF:%s\r\n", t.post)
	} else {
		t.pre = fmt.Appendf(t.pre, "$%d\r\n", sf.size)
	}
	c.rp.preparing.Store(false)
	return true
}

// next appends the transfer's next piece to b: the header with the first
// bytes of the file, more of the file, then the mark.
func (t *bulkTransfer) next(b []byte) ([]byte, error) {
	b = append(b, t.pre...)
	t.pre = nil
	if t.left > 0 {
		n := int(min(t.left, bulkChunk))
		start := len(b)
		b = slices.Grow(b, n)[:start+n]
		if _, err := io.ReadFull(t.f, b[start:]); err != nil {
			return nil, err
		}
		t.left -= int64(n)
	}
	if t.left == 0 {
		b = append(b, t.post...)
		t.post = nil
	}
	return b, nil
}

// bulkSent ends a transfer that is all out: the replica is online (its
// stream flows now, or at its first ACK after an EOF-marked RDB), or, when
// it wanted the RDB only, done.
func (c *Client) bulkSent() {
	rp := c.rp
	t := rp.bulk
	rp.bulk = nil
	t.drop()
	rp.sentAt.Store(time.Now().UnixNano())
	rp.sending.Store(false)
	if rp.rdbOnly {
		c.s.log.Info("RDB transfer completed, rdb only replica should be disconnected asap", "replica", t.name)
		c.kill()
		return
	}
	c.s.log.Info("synchronization with replica succeeded", "replica", t.name)
}

// dropBulk closes the file of a transfer its connection's end cut short.
// On the connection's loop.
func (c *Client) dropBulk() {
	if c.rp != nil && c.rp.bulk != nil {
		c.rp.bulk.drop()
		c.rp.bulk = nil
		c.rp.sending.Store(false)
	}
}

// replicaReplied closes a replica whose command made a reply: its output
// is the stream, which a reply would corrupt (Redis does the same). Under
// the engine lock.
func (c *Client) replicaReplied() {
	c.w.Reset()
	c.s.log.Warn(fmt.Sprintf("Replica generated a reply to command '%s', disconnecting it", c.lastCmd),
		"replica", c.replicaName())
	c.kill()
}
