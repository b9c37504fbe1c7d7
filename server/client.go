package server

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// Client is one connection's state. Fields other than the atomics and the
// output buffer are read and written under the engine lock only (commands
// run under it, and CLIENT LIST reads under it), so they need no lock.
type Client struct {
	s       *Server
	id      int64
	fd      int      // the socket, owned by loop once adopted
	loop    *loop    // the event loop serving the connection (loop.go)
	tls     *tlsLink // a TLS connection's stream (tls.go); nil for plain TCP
	rd      *reader
	addr    string
	laddr   string
	created time.Time

	db      int
	name    string
	libName string
	libVer  string
	authed  atomic.Bool       // read by the request reader without the lock
	user    *commands.ACLUser // the ACL user, under the engine lock
	lastCmd string
	noEvict bool
	closing bool // close once the pending replies are out (QUIT)
	monitor bool
	master  bool // the replication link to this replica's master (replica.go)
	// replCaller is the master's client whose native command the master
	// link runs (REVOLVER.REPL AT).
	replCaller int64
	channels   map[string]struct{}
	patterns   map[string]struct{}
	shard      map[string]struct{} // sharded channels (SSUBSCRIBE), apart from channels
	// CLIENT TRACKING state, nil when never on, and CLIENT REPLY's
	// (tracking.go).
	trk       *clientTracking
	replyMode uint8
	topMark   int // where the reply of the command the client sent begins in w

	// Transactions (transaction.go) and blocking commands (blocking.go).
	multi        bool
	dirtyExec    bool // a command was rejected while queueing: EXEC aborts
	queueDenyOOM bool // a queued command may grow memory (EXEC's maxmemory check)
	// queueMayWrite: a queued command may write, so CLIENT PAUSE WRITE
	// holds EXEC.
	queueMayWrite bool
	// paused: CLIENT PAUSE holds the batch's next command (runBatch); the
	// loop keeps the client aside until the pause ends or changes
	// (pauseGen is the pause it saw).
	paused   bool
	pauseGen uint64
	// queueMem is CLIENT LIST's multi-mem: the queued commands' argument
	// bytes and headers, as Redis counts them; execArgs are EXEC's while
	// it runs them.
	queueMem int64
	execArgs [][]byte
	// What CLIENT LIST's qbuf counts besides the bytes not parsed yet: the
	// whole batch while it runs (running), else the commands of the batch
	// after the one it stopped at (blocked or held by CLIENT PAUSE).
	running      bool
	queryFrom    int // the first command of the batch Redis would still hold
	queryLeft    int64
	inExec       bool
	queue        []queued
	watch        engine.Watch
	waiter       *engine.Waiter
	timeoutReply func()
	unblockErr   string
	blockedRan   ran           // the blocked command, accounted when it is unblocked (callstats.go)
	blockedFor   time.Duration // its run time before it blocked

	lastInteraction atomic.Int64 // unix nanos
	w               resp.Writer  // replies of the batch being run
	parkedOut       []byte       // replies of the commands before a blocking one
	ctx             commands.Ctx // reused per command: no allocation per call
	prefetchKeys    []engine.PrefetchKey
	batchCmds       []*commands.Command // prefetch's lookups, by batch index

	// The loop's view of the connection (loop.go); only the loop touches
	// these, so they need no lock.
	batch     [][][]byte // the commands being run; nil between batches
	next      int        // the next command of batch to run
	queuedRun bool       // in the loop's run or paused list
	held      bool       // its loop's iteration runs a slow script: a stand-in leaves it alone
	// handedOver: its batch, queued behind a slow script, went to the
	// stand-in; the loop's own iteration skips it.
	handedOver bool
	protoErr   string // a protocol error to answer, then close
	out        []byte // output the socket did not take yet
	gone       bool   // closed
	broken     bool   // a write failed: close
	posts      atomic.Uint32

	// blocked is set while the client waits in a blocking command (BLPOP,
	// DELAY.POP ...): INFO counts it in blocked_clients and the idle
	// timeout spares it, as Redis does.
	blocked atomic.Bool

	// Push mode (subscribed or MONITOR): every byte for this client goes
	// through pending, which its loop sends, so messages from other clients
	// interleave with replies in the right order.
	outMu     sync.Mutex
	pending   []byte
	spare     []byte // pending's other buffer
	pushMode  bool
	softSince int64        // when (unix seconds) the output reached the soft limit, under the engine lock
	outLen    atomic.Int64 // len(out), for the output limits and CLIENT LIST
	killed    atomic.Bool
	forgotten bool // dropped from the server's state (forget), under the engine lock
	// The client's memory as its loop last measured it (clientmem.go):
	// memSeen the loop's copy, memAcct the same for client eviction.
	memSeen int64
	memAcct atomic.Int64
	aside   atomic.Bool // pushes wait in pending though not in push mode (tracking.go)

	// rp is what the connection announced with REPLCONF and, once it sent
	// SYNC or PSYNC, its state as a replica (repl_master.go).
	rp *replicaPeer
	// woff is the replication offset after the client's last command that
	// fed the stream: what its WAIT waits for replicas to acknowledge.
	woff int64
}

func newClient(s *Server, nc net.Conn, id int64) *Client {
	var addr, laddr string
	if ra := nc.RemoteAddr(); ra != nil {
		addr = ra.String()
	}
	if la := nc.LocalAddr(); la != nil {
		laddr = la.String()
	}
	if ua, ok := nc.LocalAddr().(*net.UnixAddr); ok { // both ends are the socket's path, as Redis shows it
		addr, laddr = ua.Name+":0", ua.Name+":0"
	}
	return newClientAt(s, addr, laddr, id)
}

// newClientAt makes a client whose peer and local addresses are addr and
// laddr (the console's clients take their HTTP request's).
func newClientAt(s *Server, addr, laddr string, id int64) *Client {
	now := time.Now()
	c := &Client{
		s:       s,
		id:      id,
		fd:      -1,
		created: now,
		addr:    addr,
		laddr:   laddr,
	}
	c.rd = newReader(nil, &s.maxBulkLen, &c.authed)
	c.w.SetProto(2)
	c.lastInteraction.Store(now.UnixNano())
	c.ctx = commands.Ctx{Eng: s.eng, W: &c.w, Conn: c, Srv: s}
	return c
}

// setKeepalive applies tcp-keepalive (seconds, 0 for none) to a new
// connection, as Redis does when it accepts one; listenTCP accepts with
// keepalive off.
func setKeepalive(nc net.Conn, secs int64) {
	tc, ok := nc.(*net.TCPConn)
	if !ok || secs <= 0 {
		return
	}
	tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: time.Duration(secs) * time.Second,
		Interval: time.Duration(max(secs/3, 1)) * time.Second, Count: 3})
}

// ID implements commands.Conn.
// The master link answers with the client of the master a native command
// came from (REVOLVER.REPL AT), which is whose leases it takes.
func (c *Client) ID() int64 {
	if c.master && c.replCaller != 0 {
		return c.replCaller
	}
	return c.id
}

// SelectDB implements commands.Conn.
func (c *Client) SelectDB(i int) { c.db = i }

// Proto implements commands.Conn.
func (c *Client) Proto() int { return c.w.Proto() }

// SetProto implements commands.Conn.
func (c *Client) SetProto(p int) { c.w.SetProto(p) }

// Name implements commands.Conn.
func (c *Client) Name() string { return c.name }

// SetName implements commands.Conn.
func (c *Client) SetName(n string) { c.name = n }

// SetLibInfo implements commands.Conn; "\x00" leaves a field unchanged.
func (c *Client) SetLibInfo(name, ver string) {
	if name != "\x00" {
		c.libName = name
	}
	if ver != "\x00" {
		c.libVer = ver
	}
}

// Authenticated implements commands.Conn.
func (c *Client) Authenticated() bool { return c.authed.Load() }

// SetAuthenticated implements commands.Conn.
func (c *Client) SetAuthenticated(ok bool) { c.authed.Store(ok) }

// CloseAfterReply implements commands.Conn.
func (c *Client) CloseAfterReply() { c.closing = true }

// SetNoEvict implements commands.Conn.
func (c *Client) SetNoEvict(v bool) { c.noEvict = v }

// Subscriptions is the number of channels, patterns and shard channels
// subscribed: any of them puts a RESP2 connection in the subscribed context.
func (c *Client) Subscriptions() int { return len(c.channels) + len(c.patterns) + len(c.shard) }

// Reset implements commands.Conn (RESET).
func (c *Client) Reset() {
	c.discardTransaction()
	c.s.hub.unsubscribeAll(c, false, false)
	c.s.hub.unsubscribeAll(c, true, false)
	c.s.hub.shardUnsubscribeAll(c, false)
	if c.monitor {
		c.monitor = false
		c.s.monitors.Add(-1)
	}
	c.s.trk.disable(c)
	c.replyMode &^= replyOff | replySkipNext
	c.db = 0
	c.name = ""
	c.w.SetProto(2)
	c.user = c.s.DefaultUser()
	c.authed.Store(!c.s.authRequired())
}

// SetBlocked records that the client waits in a blocking command.
func (c *Client) SetBlocked(b bool) { c.blocked.Store(b) }

// Monitoring reports whether the connection is a MONITOR feed.
func (c *Client) Monitoring() bool { return c.monitor }

// Monitor implements commands.Conn.
func (c *Client) Monitor() {
	if c.monitor {
		return
	}
	c.monitor = true
	c.s.monitors.Add(1)
	c.enterPushMode()
}

// Describe implements commands.Conn: one CLIENT LIST line.
func (c *Client) Describe() string {
	now := time.Now()
	flags := ""
	if c.master {
		flags += "M"
	}
	if c.isReplica() {
		flags += "S"
	}
	if c.monitor {
		flags += "O"
	}
	if c.Subscriptions() > 0 {
		flags += "P"
	}
	if c.multi || c.inExec {
		flags += "x"
	}
	if c.waiter != nil && c.waiter.Waiting() || c.paused {
		flags += "b" // gone the moment it is served or times out, as in Redis
	}
	flags += c.trackingFlags()
	if c.watch.Dirty() {
		flags += "d" // a watched key changed: EXEC will fail
	}
	if c.closing {
		flags += "c"
	}
	if isUnixSocket(c.addr) {
		flags += "U"
	}
	if c.noEvict {
		flags += "e"
	}
	if flags == "" {
		flags = "N"
	}
	// The command being run (CLIENT LIST shows itself), else the last one;
	// inside a transaction, EXEC, as Redis's lastcmd.
	cmd := "NULL"
	args := c.ctx.Args
	switch {
	case c.inExec:
		cmd, args = "exec", c.execArgs
	case c.ctx.Cmd != nil:
		cmd = c.ctx.Cmd.FullName()
	}
	idle := now.Sub(time.Unix(0, c.lastInteraction.Load())) / time.Second
	// argv-mem: the arguments of the command running (or blocked) now;
	// the ctx forgets them when a batch ends.
	argv := 0
	for _, a := range args {
		argv += len(a)
	}
	// qbuf: as Redis's query buffer, the bytes of the commands received
	// and not yet run; while the client's own batch runs, the whole batch
	// (Redis trims its buffer once a read's commands ran).
	qbuf, qfree := c.rd.queued()
	obl := 0
	if c.running {
		qbuf += c.rd.queryBytes(c.queryFrom, c.next-1)
		obl = c.w.Len() // the replies so far, not sent yet
	} else {
		qbuf += c.queryLeft
	}
	omem := c.pendingLen()
	rbs := c.rd.rbs.Load()
	totMem := int64(clientSize) + rbs + int64(obl+omem+argv+8*len(args)) + c.queueMem
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=%d "+
		"multi=%d qbuf=%d qbuf-free=%d argv-mem=%d multi-mem=%d rbs=%d rbp=%d obl=%d oll=0 omem=%d tot-mem=%d "+
		"events=r cmd=%s user=%s redir=%d resp=%d lib-name=%s lib-ver=%s",
		c.id, c.addr, c.laddr, c.fd, c.name, int64(now.Sub(c.created)/time.Second), int64(idle), flags, c.db,
		len(c.channels), len(c.patterns), len(c.shard), c.multiCount(), qbuf, qfree, argv, c.queueMem,
		rbs, c.rd.rbp.Load(), obl, omem, totMem, cmd, c.userName(), c.TrackingRedirect(), c.w.Proto(), c.libName, c.libVer)
}

// clientSize is the fixed part of tot-mem: the connection's own state.
const clientSize = unsafe.Sizeof(Client{})

// multiCount is CLIENT LIST's multi field: queued commands (also while
// EXEC runs them), or -1.
func (c *Client) multiCount() int {
	if !c.multi && !c.inExec {
		return -1
	}
	return len(c.queue)
}

func (c *Client) pendingLen() int {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	return len(c.pending) + int(c.outLen.Load())
}

// clientType names the client's class as CLIENT LIST TYPE and CLIENT KILL
// TYPE see it.
func (c *Client) clientType() string {
	if c.master {
		return "master"
	}
	if c.isReplica() {
		return "replica"
	}
	if c.Subscriptions() > 0 {
		return "pubsub"
	}
	return "normal"
}

// enterPushMode routes all the client's output through pending. Called
// under the engine lock.
func (c *Client) enterPushMode() { c.pushMode = true }

// push queues bytes for a push-mode client and asks its loop to send them.
// Called under the engine lock (publishers, keyspace events, the client's
// own replies); never blocks. Output past the client's class limit
// closes it (outlimits.go).
func (c *Client) push(b []byte) {
	if c.killed.Load() {
		return
	}
	c.outMu.Lock()
	c.pending = append(c.pending, b...)
	over := c.overOutputLimit(int64(len(c.pending)) + c.outLen.Load())
	c.outMu.Unlock()
	if over {
		c.s.outputLimitReached(c, false)
		return
	}
	c.loop.post(c, postFlush)
}

// kill has the client's loop close the connection, dropping its output.
func (c *Client) kill() {
	if c.killed.Swap(true) {
		return
	}
	c.loop.post(c, postKill)
}

// queueReplies queues a push-mode client's replies behind the pushes
// already pending; the caller still holds the engine lock.
func (c *Client) queueReplies() {
	if c.w.Len() == 0 {
		return
	}
	if c.replyMode != 0 && c.quiet() { // CLIENT REPLY OFF or SKIP
		c.w.Reset()
		return
	}
	if c.isReplica() {
		c.replicaReplied()
		return
	}
	c.push(c.w.Bytes())
	c.w.Reset()
}

// QueueReplies queues the replies written so far in this batch behind the
// pushes already pending, for a push-mode client, so that a push that
// follows (a subscriber's own PUBLISH) keeps Redis's order.
func (c *Client) QueueReplies() {
	if c.pushMode {
		c.queueReplies()
	}
}

// sendOutput writes what the client is owed (replies, pushes, and what
// the socket refused before) as far as the socket takes it, keeping the
// rest in out. Its loop calls it, after the durability barrier, without
// the engine lock: a parked client's reply buffer is not touched, as
// whoever serves it may be writing there.
func (c *Client) sendOutput() {
	switch {
	case c.pushMode && c.streamHeld():
		// A replica's RDB goes first; the stream waits (repl_master_sync.go).
	case c.pushMode:
		c.outMu.Lock()
		b := c.pending
		c.pending = c.spare[:0]
		c.outMu.Unlock()
		c.send(b)
		if cap(b) > 1<<20 {
			b = nil
		}
		c.spare = b[:0]
	case len(c.parkedOut) > 0:
		c.send(c.parkedOut)
		c.parkedOut = c.parkedOut[:0]
		if c.waiter == nil {
			c.send(c.w.Bytes())
			c.w.Reset()
		}
	case c.waiter == nil:
		c.send(c.w.Bytes())
		c.w.Reset()
	default:
		c.send(nil) // what out still holds
	}
	if c.aside.Load() {
		c.sendAside()
	}
	c.outLen.Store(int64(len(c.out)))
}

// send writes b behind what out holds, keeping what the socket does not
// take now.
func (c *Client) send(b []byte) {
	if c.broken {
		return
	}
	if c.tls != nil {
		c.sendTLS(b)
		return
	}
	c.write(b)
}

// write sends b, bytes for the socket, behind what out holds.
func (c *Client) write(b []byte) {
	if len(c.out) > 0 {
		c.out = append(c.out, b...)
		b = c.out
	}
	if len(b) == 0 {
		return
	}
	n, err := writeSock(c.fd, b)
	if err != nil {
		c.broken = true
		c.out = nil
		return
	}
	rest := b[n:]
	switch {
	case len(rest) == 0:
		if cap(c.out) > 1<<20 {
			c.out = nil
		}
		c.out = c.out[:0]
	case len(c.out) > 0:
		c.out = c.out[:copy(c.out, rest)]
	default:
		c.out = append(c.out[:0], rest...)
	}
}

var redacted = []byte("(redacted)")

// redactArgs hides the secrets MONITOR and SLOWLOG must not show, as Redis
// does: AUTH's user name and password, HELLO's AUTH pair, MIGRATE's AUTH
// and AUTH2 credentials, ACL SETUSER's arguments, CONFIG SET requirepass's value. It returns args itself when nothing is hidden.
func redactArgs(args [][]byte) [][]byte {
	var hide []int
	switch name := strings.ToLower(string(args[0])); {
	case name == "auth" && len(args) <= 3:
		for i := 1; i < len(args); i++ {
			hide = append(hide, i)
		}
	case name == "hello":
		for j := 2; j < len(args); j++ {
			more := len(args) - 1 - j
			switch a := strings.ToLower(string(args[j])); {
			case a == "auth" && more >= 2:
				hide = append(hide, j+1, j+2)
				j += 2
			case a == "setname" && more >= 1:
				j++
			default:
				j = len(args)
			}
		}
	case name == "migrate": // its AUTH and AUTH2 credentials, up to KEYS
		for j := 6; j < len(args); j++ {
			more := len(args) - 1 - j
			switch a := strings.ToLower(string(args[j])); {
			case a == "copy" || a == "replace":
			case a == "auth" && more >= 1:
				hide = append(hide, j+1)
				j++
			case a == "auth2" && more >= 2:
				hide = append(hide, j+1, j+2)
				j += 2
			default:
				j = len(args)
			}
		}
	case name == "acl" && len(args) > 2 && strings.EqualFold(string(args[1]), "setuser"):
		for j := 2; j < len(args); j++ { // the user name and its rules (>password)
			hide = append(hide, j)
		}
	case name == "config" && len(args) > 1 && strings.EqualFold(string(args[1]), "set"):
		for j := 2; j+1 < len(args); j += 2 {
			if strings.EqualFold(string(args[j]), "requirepass") {
				hide = append(hide, j+1)
			}
		}
	}
	if len(hide) == 0 {
		return args
	}
	out := append([][]byte(nil), args...)
	for _, i := range hide {
		out[i] = redacted
	}
	return out
}

// monitorLine formats a command for MONITOR feeds.
func monitorLine(now time.Time, db int, addr string, args [][]byte) []byte {
	args = redactArgs(args)
	var b strings.Builder
	fmt.Fprintf(&b, "+%d.%06d [%d %s]", now.Unix(), now.Nanosecond()/1000, db, addr)
	for _, a := range args {
		b.WriteString(" \"")
		for _, ch := range a {
			switch {
			case ch == '\\' || ch == '"':
				b.WriteByte('\\')
				b.WriteByte(ch)
			case ch == '\n':
				b.WriteString("\\n")
			case ch == '\r':
				b.WriteString("\\r")
			case ch == '\t':
				b.WriteString("\\t")
			case ch == '\a':
				b.WriteString("\\a")
			case ch == '\b':
				b.WriteString("\\b")
			case ch < 32 || ch > 126:
				fmt.Fprintf(&b, "\\x%02x", ch)
			default:
				b.WriteByte(ch)
			}
		}
		b.WriteByte('"')
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}
