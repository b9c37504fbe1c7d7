package server

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
)

// register adds a new connection's client to the registry, unless the
// server is shutting down or protected mode refuses it (denied), and
// reports whether it did.
func (s *Server) register(c *Client) (ok, denied bool) {
	s.eng.Lock()
	if s.shutting.Load() {
		s.eng.Unlock()
		return false, false
	}
	if s.protectedRefuses(c) {
		s.eng.Unlock()
		s.stats.rejectedConns.Add(1)
		return false, true
	}
	// The configuration changes under the engine lock (CONFIG SET
	// requirepass).
	c.authed.Store(!s.authRequired())
	c.user = s.DefaultUser()
	s.clients[c.id] = c
	s.eng.Unlock()
	s.stats.connections.Add(1)
	return true, false
}

// closed forgets a connection whose socket its loop closed.
func (s *Server) closed(c *Client) {
	c.killed.Store(true)
	c.dropBulk()
	s.eng.Lock()
	s.forget(c)
	s.eng.ServeBlocked()
	s.eng.Unlock()
	s.connCount.Add(-1)
}

// forget drops a closed or killed client from the server's state: its
// subscriptions, its tracking, its MONITOR feed, its registry entry, a
// blocking command it waited in, and what the families let it hold. Under
// the engine lock; once per client.
func (s *Server) forget(c *Client) {
	if c.forgotten {
		return
	}
	c.forgotten = true
	if s.softOverN.Load() > 0 {
		s.dropSoftWatch(c)
	}
	s.hub.dropClient(c)
	s.trk.disable(c)
	s.eng.Unwatch(&c.watch)
	if c.waiter != nil {
		s.eng.Unblock(c.waiter)
		c.waiter = nil
		c.SetBlocked(false)
	}
	if c.monitor {
		c.monitor = false
		s.monitors.Add(-1)
	}
	delete(s.clients, c.id)
	if c.master {
		s.masterClosed(c)
	}
	if c.isReplica() {
		s.replicaGone(c)
	}
	dirty := s.eng.Dirty()
	s.eng.ClientClosed(c.id) // what the client held goes back (QUEUE's RELEASE-ON-DISCONNECT)
	if s.eng.Dirty() != dirty {
		s.propagateClosed(c.id)
	}
}

// runBatch runs the client's pending commands, from the first or from
// where a blocking command left off, until the batch ends or a command
// blocks. The engine lock is held; the loop sends the replies after it.
func (s *Server) runBatch(c *Client) {
	switch {
	case c.paused:
		c.queryFrom = c.next + 1 // the held command went from the query buffer
	case c.next == 0:
		c.queryFrom = 0
	default:
		c.queryFrom = c.next // resumed after the command that blocked
	}
	if c.paused {
		c.paused = false
		c.SetBlocked(false)
	}
	c.running = true
	defer func() { c.running = false }()
	start := s.eng.NowTime()
	c.lastInteraction.Store(start.UnixNano())
	if c.next == 0 {
		c.batchCmds = s.prefetch(c, c.batch)
	}
	if !c.pushMode && c.aside.Load() {
		// Pushes wait for this client (it is a tracking redirect): its
		// replies from now on queue behind them.
		c.enterPushMode()
	}
	var prev ran
	// A client not in push mode has its output checked against its class
	// limit between commands (push checks the others'), only while the
	// normal class has one: one load per batch otherwise.
	limited := !c.pushMode && s.normalLimited()
	for first := true; c.next < len(c.batch); first = false {
		if c.closing || c.forgotten || s.shutting.Load() {
			break
		}
		if limited && (!first || c.next > 0) && s.batchOutputOver(c) {
			break
		}
		if !first {
			// One clock read both refreshes the engine's time for this
			// command and ends the timing of the previous one.
			start = s.eng.Refresh()
		}
		s.account(c, prev, start)
		i := c.next
		c.next++
		if s.trk.active {
			s.trk.limitTable()
		}
		mark := c.w.Len()
		c.topMark = mark
		if c.master {
			s.eng.SetApplyingMaster(true)
		}
		prev = s.exec(c, c.batchCmds[i], c.batch[i], start)
		if c.master {
			s.eng.SetApplyingMaster(false)
			s.masterApplied(c, i)
		}
		if c.paused {
			// CLIENT PAUSE holds the command: the batch goes on from it
			// once the loop lets it (loop.releasePaused); the replies
			// before it go out now.
			c.next = i
			c.queryLeft = c.rd.batchBytes(i + 1)
			if c.pushMode {
				c.queueReplies()
			}
			return
		}
		blocked := c.waiter != nil
		if blocked || s.eng.HasReady() {
			// Accounted now, before the clients it serves are (SLOWLOG
			// order), or before anything can serve it: a command that
			// blocked counts its execution time, not the wait.
			s.account(c, prev, s.clock.Now())
			prev = ran{}
		}
		s.eng.ServeBlocked()
		if c.waiter == nil && (c.replyMode != 0 || c.trk != nil) {
			c.afterTopCommand(c.batch[i], mark) // a blocked command's, when it is served (unpark)
		}
		if blocked {
			s.park(c)
			c.queryLeft = c.rd.batchBytes(c.next)
			return
		}
	}
	s.account(c, prev, s.clock.Now())
	if limited && !c.pushMode {
		s.batchOutputOver(c)
	}
	clear(c.batch) // the arguments are not pinned until the next batch
	c.batch, c.next, c.queryLeft = nil, 0, 0
	c.ctx.Args = nil // CLIENT LIST's argv-mem; and the batch's buffers are not pinned by it
	if c.pushMode {
		c.queueReplies() // behind pushes already queued, still under the lock
	}
}

// protocolError answers a protocol violation, after the replies of the
// commands before it; the connection then closes. Redis counts it as an
// error reply. Under the engine lock.
func (s *Server) protocolError(c *Client) {
	s.countError([]byte("ERR"))
	if !c.quiet() {
		c.w.Error(c.protoErr)
	}
	if c.pushMode {
		c.queueReplies()
	}
	c.closing = true
}

// holdForPause parks c on a command CLIENT PAUSE holds. Like a client
// blocked in a command it counts in INFO's blocked_clients and shows the
// b flag, the command and its arguments in CLIENT LIST, as in Redis.
func (s *Server) holdForPause(c *Client, cmd *commands.Command, args [][]byte) {
	c.paused = true
	c.pauseGen = s.pause.gen.Load()
	c.ctx.Cmd, c.ctx.Args = cmd, args
	c.SetBlocked(true)
}

// prefetch warms the cache for every key the batch's commands name (by
// their key specs, as COMMAND GETKEYS finds them) when there is more than
// one, so that their cache misses overlap instead of following one another:
// a pipelined batch, or one MSET, MGET or DEL of many keys. A batch that
// names one key only is warmed only if its commands name different members
// inside the value (SADD myset a, SADD myset b...): the key, and a member
// every command names (RPOP mylist, or SADD myset m, sixteen times), are
// looked up by the first command anyway, and warming what is already in
// cache costs 25-35 ns a command (BenchmarkSetBatch16BySize). It returns
// each command's table entry (Table.Get of its name), which exec then does
// not look up again.
func (s *Server) prefetch(c *Client, batch [][][]byte) []*commands.Command {
	refs, found, worth := s.batchKeys(batch, c.prefetchKeys[:0], c.batchCmds[:0])
	if worth {
		s.eng.DB(c.db).Prefetch(refs)
	}
	clear(refs)
	c.prefetchKeys = refs[:0]
	c.batchCmds = found
	return found
}

// batchKeys appends to refs the keys the batch's commands name, and to found
// each command's table entry (nil if unknown), and reports whether warming
// the keys is worth it by the rule above.
func (s *Server) batchKeys(batch [][][]byte, refs []engine.PrefetchKey, found []*commands.Command) ([]engine.PrefetchKey, []*commands.Command, bool) {
	worth := false
	var lead [][]byte // the first command that names a member
	var prevName []byte
	var prevCmd *commands.Command
	for _, args := range batch {
		cmd := prevCmd
		if !bytes.Equal(args[0], prevName) {
			cmd = s.table.Get(args[0])
			prevName, prevCmd = args[0], cmd
		}
		found = append(found, cmd)
		if cmd == nil {
			continue
		}
		first, last, step := cmd.KeyPositions()
		if first <= 0 || step <= 0 {
			continue
		}
		if last < 0 {
			last += len(args)
		}
		for i := first; i <= last && i < len(args); i += step {
			r := engine.PrefetchKey{Key: args[i]}
			if i == 1 {
				r.Args = args
				if !worth && len(args) >= 3 { // a member to warm
					if lead == nil {
						lead = args
					} else {
						worth = !slices.EqualFunc(args[2:], lead[2:], bytes.Equal)
					}
				}
			}
			if !worth && len(refs) > 0 && !bytes.Equal(r.Key, refs[0].Key) {
				worth = true
			}
			refs = append(refs, r)
		}
	}
	return refs, found, worth && len(refs) > 1
}

// ran is a command that executed, awaiting its bookkeeping.
type ran struct {
	cmd    *commands.Command
	args   [][]byte
	start  time.Time
	failed bool
}

// exec runs one command: lookup and arity, then the checks Redis makes
// before calling a command (authentication, transactions, protected
// commands, maxmemory, the subscribed context), then queueing inside MULTI
// or the handler. A command rejected inside MULTI makes EXEC abort.
func (s *Server) exec(c *Client, found *commands.Command, args [][]byte, start time.Time) ran {
	cmd, errMsg := s.table.Lookup(found, args) // cmd set on an arity error too: it counts as rejected
	if errMsg == "" {
		errMsg = s.precheck(c, cmd, args)
	}
	if errMsg != "" {
		if found != nil && found.FullName() == "exec" {
			// EXEC itself rejected (EXEC NX, or over maxmemory with a
			// write queued), inside MULTI or not, ends the transaction
			// and still shows in MONITOR, as Redis's execCommandAbort.
			c.execAbort(errMsg)
			if cmd != nil {
				s.cmdStats[cmd.Index()].rejected++
			}
			if s.monitors.Load() > 0 {
				s.feedMonitors(c, args)
			}
			c.QueueReplies()
			return ran{}
		}
		s.reject(c, cmd, errMsg)
		if c.multi {
			c.dirtyExec = true
		}
		c.QueueReplies() // a push-mode client's error goes in order too
		return ran{}
	}
	if s.pause.end.Load() != 0 && !c.master && !c.isReplica() && s.pauseHolds(c, cmd, args) {
		s.holdForPause(c, cmd, args)
		return ran{}
	}
	if c.multi && !txControl(cmd) {
		c.queue = append(c.queue, queued{cmd, args})
		c.queueDenyOOM = c.queueDenyOOM || cmd.Has(commands.FlagDenyOOM)
		c.queueMayWrite = c.queueMayWrite || s.lua.CallMayWrite(cmd, args)
		for _, a := range args {
			c.queueMem += int64(len(a)) + 8 // and a pointer to it, as Redis counts
		}
		c.w.Simple("QUEUED")
		if c.pushMode {
			c.queueReplies()
		}
		return ran{}
	}
	return s.runCommand(c, cmd, args, start)
}

// precheck returns the error Redis would answer before running cmd, or "".
func (s *Server) precheck(c *Client, cmd *commands.Command, args [][]byte) string {
	switch {
	case !c.authed.Load() && !cmd.Has(commands.FlagNoAuth):
		return "NOAUTH Authentication required."
	case c.multi && cmd.Has(commands.FlagNoMulti):
		return "ERR Command not allowed inside a transaction"
	case cmd.Has(commands.FlagProtected) && !s.protectedAllowed(c, cmd):
		name, option := "DEBUG", "enable-debug-command"
		if isModuleCommand(cmd) {
			name, option = "MODULE", "enable-module-command"
		}
		return "ERR " + name + " command not allowed. If the " + option + " option is set to \"local\", " +
			"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
			"and then restart the server."
	}
	if u := c.user; u != nil && !u.Unrestricted && !c.master {
		// A nil user and Unrestricted (the default user, and any user
		// with every permission) cost this one test.
		if msg := s.aclRefuses(c, u, cmd, args); msg != "" {
			return msg
		}
	}
	if c.master {
		return "" // the master's stream runs whatever this replica's state
	}
	if c.isReplica() && (cmd.Has(commands.FlagWrite) || cmd.Has(commands.FlagReadonly) || cmd.Has(commands.FlagMayReplicate)) {
		return "ERR Replica can't interact with the keyspace"
	}
	if s.replica != nil {
		if msg := s.replicaRefuses(c, cmd); msg != "" {
			return msg
		}
	}
	yielding, _ := s.lua.Yielding() // a slow script runs: Redis's isInsideYieldingLongCommand
	switch {
	case !yielding && s.evictBefore(c) && refusedOverMaxMemory(c, cmd):
		return "OOM command not allowed when used memory > 'maxmemory'."
	case s.refusedForReplicas(c, cmd): // min-replicas-to-write (repl_master_wait.go)
		return "NOREPLICAS Not enough good replicas to write."
	case c.w.Proto() == 2 && c.Subscriptions() > 0 && !allowedWhileSubscribed(cmd):
		return "ERR Can't execute '" + cmd.FullName() +
			"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
	case yielding && !cmd.Has(commands.FlagAllowBusy):
		return s.lua.BusyError()
	}
	return ""
}

// runCommand calls a resolved, checked command's handler.
func (s *Server) runCommand(c *Client, cmd *commands.Command, args [][]byte, start time.Time) ran {
	ctx := &c.ctx
	ctx.Args, ctx.Cmd, ctx.DB = args, cmd, s.eng.DB(c.db)
	mark := c.w.Len()
	tracked := s.trk.active
	var caller *Client
	if tracked {
		caller, s.trk.current = s.trk.current, c
	}
	s.errCounted = false
	s.beginCall()
	dirty, offBefore := s.eng.Dirty(), s.repl.offset
	s.prop.enter()
	s.run(c, cmd, ctx, mark)
	if c.master {
		s.prop.frames = s.prop.frames[:len(s.prop.frames)-1] // a replica passes its master's stream on as it is
	} else {
		s.leaveCommand(c.db, c.id, cmd, args, dirty)
	}
	if s.repl.offset != offBefore {
		c.woff = s.repl.offset // Redis's c->woff: WAIT waits for replicas to reach it
	}
	c.lastCmd = cmd.FullName()
	failed := s.endCall(c.w.Bytes()[min(mark, c.w.Len()):])
	if c.pushMode {
		// Queue each reply as it is made, so the client's own keyspace
		// events and messages keep Redis's order relative to its replies.
		c.queueReplies()
	}
	if s.monitors.Load() > 0 && showsInMonitor(cmd) {
		// Right after it ran, as Redis's call(): before CLIENT REPLY's
		// state moves on, which decides whether a feed takes the line.
		s.feedMonitors(c, args)
	}
	if tracked {
		s.trk.current = caller
		s.trk.afterCommand(c, cmd, args) // after the reply, as Redis
	}
	return ran{cmd: cmd, args: args, start: start, failed: failed}
}

// run calls the handler. A panic is a bug, never the client's fault: it is
// logged with its stack, the client gets an error instead of a half-written
// reply, and the server (and the engine lock) carries on.
func (s *Server) run(c *Client, cmd *commands.Command, ctx *commands.Ctx, mark int) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("command panicked", "cmd", cmd.FullName(), "panic", r, "stack", string(debug.Stack()))
			c.w.Truncate(mark)
			c.w.Error(fmt.Sprintf("ERR internal error in '%s'", cmd.FullName()))
		}
	}()
	cmd.Run(ctx)
}

// account records a command that ran (stats, SLOWLOG, latency) once its
// end time is known. (MONITOR is fed right after the command runs.)
func (s *Server) account(c *Client, r ran, end time.Time) {
	if r.cmd == nil {
		return
	}
	elapsed := end.Sub(r.start)
	s.countCall(r, elapsed)
	if c.waiter != nil {
		// It blocked: Redis logs it and records its histogram once it is
		// unblocked (finishBlocked), with the time it took then.
		c.blockedRan, c.blockedFor = r, elapsed
		return
	}
	s.slowlogCommand(r.cmd, c.addr, c.name, r.args, end, elapsed)
	s.observeHistogram(r.cmd, elapsed)
}

func (s *Server) reject(c *Client, cmd *commands.Command, msg string) {
	mark := c.w.Len()
	c.w.Error(msg)
	s.countError(c.w.Bytes()[mark+1:])
	if cmd != nil {
		s.cmdStats[cmd.Index()].rejected++
	}
}

// evictBefore is overMaxMemory before c's command runs: what it evicts is
// invalidated for tracking clients as Redis does then (tracking.before).
func (s *Server) evictBefore(c *Client) bool {
	if !s.trk.active {
		return s.overMaxMemory()
	}
	s.trk.before = c
	over := s.overMaxMemory()
	s.trk.before = nil
	return over
}

// refusedOverMaxMemory applies Redis's rule for a server over maxmemory:
// commands that may grow memory are refused; inside MULTI every command is,
// as queueing grows memory too, except EXEC, DISCARD, QUIT and RESET; and
// EXEC is, when it would run a queued command that may grow memory.
func refusedOverMaxMemory(c *Client, cmd *commands.Command) bool {
	if cmd.Has(commands.FlagDenyOOM) {
		return true
	}
	if !c.multi {
		return false
	}
	switch cmd.FullName() {
	case "exec":
		return c.queueDenyOOM
	case "discard", "quit", "reset":
		return false
	}
	return true
}

func allowedWhileSubscribed(cmd *commands.Command) bool {
	switch cmd.FullName() {
	case "ping", "subscribe", "psubscribe", "unsubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "quit",
		"reset":
		return true
	}
	return false
}

func isModuleCommand(cmd *commands.Command) bool {
	return cmd.Parent() != nil && cmd.Parent().Name == "module"
}

// protectedAllowed applies enable-debug-command, or enable-module-command
// to MODULE's subcommands: yes, no, or local (loopback connections only).
func (s *Server) protectedAllowed(c *Client, cmd *commands.Command) bool {
	setting := s.cfg.EnableDebugCommand
	if isModuleCommand(cmd) {
		setting = s.cfg.extraString("enable-module-command")
	}
	switch setting {
	case "yes":
		return true
	case "local":
		return isLoopback(c.addr)
	}
	return false
}

// feedMonitors sends the command to MONITOR clients, as Redis does after
// running it.
func (s *Server) feedMonitors(from *Client, args [][]byte) {
	s.feedMonitorLine(from.db, from.addr, args)
}

// FeedMonitors implements commands.Server: EVAL and FCALL (flagged
// skip_monitor) show their own MONITOR line before the script runs, as
// Redis does, so that the commands the script runs follow it. Under the
// engine lock.
func (s *Server) FeedMonitors(conn commands.Conn, db int, args [][]byte) {
	if c, ok := conn.(*Client); ok && s.monitors.Load() > 0 {
		s.feedMonitorLine(db, c.addr, args)
	}
}

// FeedMonitorsFromScript implements commands.Server: a command a script
// ran is shown by the rule for a client's command, from "lua" (Redis's
// script client) and on the database the script is in once it ran.
func (s *Server) FeedMonitorsFromScript(cmd *commands.Command, db int, args [][]byte) {
	if s.monitors.Load() > 0 && showsInMonitor(cmd) {
		s.feedMonitorLine(db, "lua", args)
	}
}

// showsInMonitor reports whether MONITOR shows cmd once it ran: Redis
// hides administrative commands and those that feed MONITOR themselves.
func showsInMonitor(cmd *commands.Command) bool {
	return !cmd.Has(commands.FlagSkipMonitor) && !cmd.Has(commands.FlagAdmin)
}

// feedMonitorLine sends a MONITOR line to every feed but those under
// CLIENT REPLY OFF: to Redis the line is a reply, not a push.
func (s *Server) feedMonitorLine(db int, addr string, args [][]byte) {
	line := monitorLine(time.Now(), db, addr, args)
	for _, c := range s.clients {
		if c.monitor && !c.quiet() {
			c.push(line)
		}
	}
}
