package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// An event loop owns a share of the connections, as Redis's single thread
// owns all of them: it waits for any of them to be readable, reads each
// once, runs every complete command it got under one acquisition of the
// engine lock, makes the log durable once for all of them, and writes each
// client's replies with one system call. Compared with a goroutine per
// connection, a request costs no goroutine park and wake-up, no trip
// through Go's scheduler and network poller, and no futex to wake an idle
// thread (server CPU per unpipelined request fell by about a third).
//
// Other goroutines hand a loop work through post: a new connection, a
// blocked client that was served (by a write on another loop, or by the
// scheduler when a timer comes due), pushes for a subscriber, a kill.

// What a posted client wants from its loop (Client.posts).
const (
	postQueued uint32 = 1 << iota // in the loop's posted list
	postResume                    // its blocking command was served or unblocked
	postFlush                     // push-mode output is pending
	postKill                      // close it now, pending output or not
)

type loop struct {
	s     *Server
	poll  *poller
	conns []*Client // by descriptor

	mu       sync.Mutex
	posted   []*Client
	arrived  []*Client
	stopping bool
	sleeping atomic.Bool

	// One iteration's work lists, reused.
	taken   []*Client // posted clients taken from the list
	run     []*Client // clients with commands to run
	resumed []*Client // blocked clients to resume
	wrote   []*Client // clients with output to send
	paused  []*Client // batches held by CLIENT PAUSE
	again   bool      // a client has commands already read: do not sleep
	spin    spinner   // whether to poll a little before sleeping
	led     bool      // execute ran commands whose changes finish commits
	done    chan struct{}
	// unread: TLS clients whose tls.Conn may hold input no socket event
	// will announce (tls.go); read again this iteration.
	unread, unreadSpare []*Client
	// standIn serves the loop while its goroutine runs a slow script
	// (standin.go); nil otherwise.
	standIn *standIn
}

func newLoop(s *Server) (*loop, error) {
	p, err := newPoller()
	if err != nil {
		return nil, err
	}
	return &loop{s: s, poll: p, done: make(chan struct{})}, nil
}

// post hands c to its loop with what it wants, waking the loop if it sleeps.
// It never blocks; any goroutine may call it, the engine lock held or not.
func (l *loop) post(c *Client, what uint32) {
	if c.posts.Or(what|postQueued)&postQueued != 0 {
		return // already listed: the loop reads the flags when it takes it
	}
	l.mu.Lock()
	l.posted = append(l.posted, c)
	l.mu.Unlock()
	l.nudge()
}

// adopt hands the loop a new connection.
func (l *loop) adopt(c *Client) {
	l.mu.Lock()
	l.arrived = append(l.arrived, c)
	l.mu.Unlock()
	l.nudge()
}

// stop makes the loop close its connections and return.
func (l *loop) stop() {
	l.mu.Lock()
	l.stopping = true
	l.mu.Unlock()
	l.poll.wake()
}

// nudge wakes the loop if it is about to sleep or sleeping. The loop sets
// sleeping before its last look at the lists, and a poster adds to a list
// before reading sleeping, so one of the two always sees the other.
func (l *loop) nudge() {
	if l.sleeping.Load() {
		l.poll.wake()
	}
}

func (l *loop) hasWork() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.posted) > 0 || len(l.arrived) > 0 || l.stopping
}

// serve is the loop's goroutine.
func (l *loop) serve() {
	defer close(l.done)
	defer l.poll.close()
	for {
		timeout := time.Duration(-1)
		if l.again {
			timeout = 0
		} else if d, ok := l.nextDeadline(); ok {
			timeout = max(time.Until(d), 0)
		}
		l.sleeping.Store(true)
		if timeout != 0 && l.hasWork() {
			timeout = 0
		}
		events, err := l.await(timeout)
		l.sleeping.Store(false)
		if err != nil {
			l.s.log.Error("event loop wait failed", "err", err)
			time.Sleep(10 * time.Millisecond)
		}
		if l.takePosted() {
			l.closeAll()
			return
		}
		l.again = false
		for _, ev := range events {
			if ev.fd >= len(l.conns) || l.conns[ev.fd] == nil {
				continue
			}
			c := l.conns[ev.fd]
			if ev.flags&pollWrite != 0 && len(c.out) > 0 {
				l.flushOut(c)
			}
			if ev.flags&pollRead != 0 && !c.gone {
				l.read(c)
			}
		}
		if len(l.unread) > 0 {
			l.readUnread()
		}
		l.execute()
		l.finish()
	}
}

// await returns the ready connections: those ready now, or if there are
// none and timeout is not zero, the first to be ready within timeout
// (negative: no limit), after a spin if the spinner says it is worth it.
func (l *loop) await(timeout time.Duration) ([]pollEvent, error) {
	events, woken, err := l.poll.wait(0)
	if timeout == 0 || len(events) > 0 || woken || err != nil {
		return events, err
	}
	start := time.Now()
	if !l.spin.worth() {
		events, _, err = l.poll.wait(timeout)
		l.spin.slept(time.Since(start))
		return events, err
	}
	window := spinWindow
	if timeout > 0 {
		window = min(window, timeout)
	}
	for time.Since(start) < window {
		events, woken, err = l.poll.wait(0)
		if len(events) > 0 || woken || err != nil {
			l.spin.spun(true)
			return events, err
		}
	}
	l.spin.spun(false)
	if timeout > 0 {
		// A deadline that passed while spinning is served by a look.
		timeout = max(timeout-time.Since(start), 0)
	}
	events, _, err = l.poll.wait(timeout)
	return events, err
}

// takePosted takes new connections and posted clients, and reports whether
// the loop must stop.
func (l *loop) takePosted() (stop bool) {
	l.mu.Lock()
	arrived := l.arrived
	l.arrived = nil
	l.taken, l.posted = l.posted, l.taken[:0]
	stop = l.stopping
	l.mu.Unlock()
	for _, c := range arrived {
		l.register(c)
	}
	for _, c := range l.taken {
		what := c.posts.Swap(0)
		switch {
		case c.gone:
		case what&postKill != 0:
			l.closeClient(c)
		default:
			if what&postResume != 0 {
				l.resumed = append(l.resumed, c)
			}
			if what&postFlush != 0 {
				l.wrote = append(l.wrote, c)
			}
		}
	}
	clear(l.taken)
	return stop
}

func (l *loop) register(c *Client) {
	if c.gone {
		return
	}
	for c.fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*Client, len(l.conns)+64)...)
	}
	if err := l.poll.add(c.fd); err != nil {
		l.s.log.Warn("cannot watch a new connection", "id", c.id, "err", err)
		l.closeClient(c)
		return
	}
	l.conns[c.fd] = c
	if c.tls != nil {
		// The handshake's last read may have taken the first commands.
		l.unread = append(l.unread, c)
	}
	if c.rd.pending() && l.parse(c) { // bytes read before it came here (a master link)
		l.again = true
	}
}

// readUnread reads the TLS clients that may have input buffered in their
// tls.Conn. A client the stand-in holds waits for the loop; one whose
// output waits for the socket is read again once it is out (flushOut), as
// a plain socket is not watched for input meanwhile.
func (l *loop) readUnread() {
	list := l.unread
	l.unread = l.unreadSpare[:0]
	for _, c := range list {
		switch {
		case c.gone:
		case c.held:
			l.unread = append(l.unread, c)
		case len(c.out) > 0 && !c.isReplica():
		default:
			l.read(c)
		}
	}
	clear(list)
	l.unreadSpare = list[:0]
}

// read reads what c sent and, unless it is busy with an earlier batch,
// parses it into commands to run.
func (l *loop) read(c *Client) {
	err := c.rd.fill()
	c.rd.publish()
	if c.tls != nil && c.tls.more {
		l.unread = append(l.unread, c)
		l.again = true
	}
	switch err {
	case nil:
		if c.rp != nil {
			c.rp.heard.Store(time.Now().UnixNano()) // a replica's newlines while it loads keep it alive
		}
	case errWouldBlock:
		return
	default:
		// The peer is gone (commands it sent before ran already: a read
		// that brings data and the end reports the end only next time).
		l.closeClient(c)
		return
	}
	c.accountMem()
	if l.parse(c) {
		return
	}
	// Input piles up unparsed while c is busy (blocked, or with an
	// earlier batch): Redis's client-query-buffer-limit bounds it.
	if qbuf, _ := c.rd.queued(); qbuf > l.s.maxQuery.Load() {
		l.s.log.Warn("closing client that reached max query buffer length", "id", c.id, "addr", c.addr, "qbuf", qbuf)
		l.closeClient(c)
	}
}

// parse takes the next batch of commands c sent, if it is ready for one,
// and reports whether it found one.
func (l *loop) parse(c *Client) bool {
	// Output still going out holds a client's next batch, except a
	// replica's: its commands (acknowledgements) answer nothing.
	if c.batch != nil || c.waiter != nil || c.closing || len(c.out) > 0 && !c.isReplica() || c.queuedRun {
		return false
	}
	cmds, err := c.rd.parse()
	c.rd.publish()
	switch {
	case err != nil:
		c.protoErr = err.Error()
	case len(cmds) == 0:
		c.rd.release()
		return false
	default:
		c.batch, c.next = cmds, 0
	}
	c.queuedRun = true
	l.run = append(l.run, c)
	return true
}

// execute runs the iteration's batches and resumed clients under one
// acquisition of the engine lock.
func (l *loop) execute() {
	l.releasePaused()
	if len(l.run) == 0 && len(l.resumed) == 0 {
		return
	}
	s := l.s
	if l.standIn == nil { // a stand-in's commands write nothing to commit
		s.leadLog()
		l.led = true
	}
	s.eng.Lock()
	first := true
	for _, c := range l.run {
		if c.handedOver && l.standIn == nil {
			c.handedOver = false // a stand-in ran it while a script was slow
			continue
		}
		c.queuedRun = false
		if c.gone || c.forgotten { // forgotten: CLIENT KILL, its close is posted
			continue
		}
		if !first {
			s.eng.Refresh()
		}
		first = false
		if c.protoErr != "" {
			s.protocolError(c)
		} else {
			s.runBatch(c)
		}
		l.ran(c)
	}
	// Resuming a client may serve others of this loop, which post
	// themselves: take them while the lock is still held.
	for len(l.resumed) > 0 {
		resumed := l.resumed
		l.resumed = nil
		for _, c := range resumed {
			if c.gone || c.waiter == nil {
				continue
			}
			s.eng.Refresh()
			s.unpark(c)
			l.ran(c)
		}
		l.takeResumes()
	}
	s.requestAcks() // WAITs that started waiting ask the replicas once (repl_master_wait.go)
	s.eng.Unlock()
	clear(l.run)
	l.run = l.run[:0]
}

// ran lists a client whose batch ran for its output, and for the pause
// when CLIENT PAUSE holds the rest of its batch.
func (l *loop) ran(c *Client) {
	l.wrote = append(l.wrote, c)
	if c.paused {
		c.queuedRun = true // its batch is not done: parse takes no other
		l.paused = append(l.paused, c)
	}
}

// takeResumes moves the clients posted for resumption so far to resumed;
// their other posts wait for the next iteration.
func (l *loop) takeResumes() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.posted {
		if c.posts.And(^postResume)&postResume != 0 {
			l.resumed = append(l.resumed, c)
		}
	}
}

// finish makes the iteration's writes durable as the fsync policy says,
// then sends every client its output.
func (l *loop) finish() {
	if len(l.wrote) == 0 && !l.led {
		return
	}
	// Pushes too wait for the log: a keyspace event must not announce a
	// change that could still be lost. (A stand-in runs nothing that
	// writes; committing would commit a slow script's half.)
	if l.standIn == nil {
		l.s.syncLog(l.led)
	}
	l.led = false
	for _, c := range l.wrote {
		if c.gone {
			continue
		}
		if c.killed.Load() {
			// Killed (an output limit, client eviction, CLIENT KILL): as
			// in Redis, what it is owed is not sent.
			l.closeClient(c)
			continue
		}
		c.sendOutput()
		c.accountMem()
		switch {
		case c.broken:
			l.closeClient(c)
		case c.closing && len(c.out) == 0:
			l.closeClient(c)
		case len(c.out) > 0:
			replica := c.isReplica()
			l.poll.watch(c.fd, replica, true)
			if replica && c.rd.pending() && l.parse(c) {
				l.again = true // its acknowledgements do not wait for the stream to drain
			}
		case c.rd.pending() && l.parse(c):
			// Commands read while it was busy, or a frame judged after the
			// commands before it: run them without waiting for input.
			l.again = true
		}
	}
	clear(l.wrote)
	l.wrote = l.wrote[:0]
	if l.s.shutting.Load() && l.s.closeStarted.CompareAndSwap(false, true) {
		go l.s.Close() // SHUTDOWN ran
	}
}

// flushOut sends output the socket refused earlier, and goes back to
// reading once it is all out.
func (l *loop) flushOut(c *Client) {
	c.sendOutput()
	c.accountMem()
	switch {
	case c.broken:
		l.closeClient(c)
	case len(c.out) > 0:
	case c.closing:
		l.closeClient(c)
	default:
		l.poll.watch(c.fd, true, false)
		if c.tls != nil {
			l.unread = append(l.unread, c) // records it held back while its output waited
			l.again = true
		}
		if c.rd.pending() && l.parse(c) {
			l.again = true
		}
	}
}

// closeClient closes c's socket and forgets it everywhere.
func (l *loop) closeClient(c *Client) {
	if c.gone {
		return
	}
	c.gone = true
	l.poll.remove(c.fd)
	if c.fd < len(l.conns) && l.conns[c.fd] == c {
		l.conns[c.fd] = nil
	}
	closeSock(c.fd)
	c.unaccountMem()
	l.s.closed(c)
}

func (l *loop) closeAll() {
	for _, c := range l.conns {
		if c != nil {
			l.closeClient(c)
		}
	}
	for _, c := range l.arrived {
		l.closeClient(c)
	}
}

// releasePaused moves the clients CLIENT PAUSE held back to run once the
// pause ended or changed; runBatch looks at their command again.
func (l *loop) releasePaused() {
	if len(l.paused) == 0 {
		return
	}
	paused, _ := l.s.pause.mode(l.s)
	gen := l.s.pause.gen.Load()
	kept := l.paused[:0]
	for _, c := range l.paused {
		switch {
		case c.gone:
		case paused && c.pauseGen == gen:
			kept = append(kept, c)
		default:
			l.run = append(l.run, c)
		}
	}
	clear(l.paused[len(kept):])
	l.paused = kept
}

// nextDeadline is when the loop must look again without any event: the
// end of a pause holding a batch. (Blocked clients' timeouts are the
// engine scheduler's: it posts the client when one passes.)
func (l *loop) nextDeadline() (time.Time, bool) {
	if len(l.paused) > 0 {
		if end, paused := l.s.pause.ends(); paused {
			return end, true
		}
	}
	return time.Time{}, false
}
