package server

import (
	"time"

	"github.com/revolver-db/revolver/commands"
)

// While a slow script runs past busy-reply-threshold, its loop's goroutine
// is inside the script. A stand-in goroutine then serves the loop's other
// connections, as Redis processes events while a script is slow: commands
// are answered BUSY except the few allowed (SCRIPT KILL, FUNCTION KILL,
// FUNCTION STATS, SHUTDOWN NOSAVE, AUTH, HELLO...). The clients the
// interrupted iteration has run (the script's own among them) are held:
// their replies wait for the log, so the stand-in neither reads them nor
// sends them anything, and their sockets are not watched meanwhile; the
// batches it has not reached yet are handed over to the stand-in. The
// stand-in has its own work lists and never commits the log (nothing it
// runs writes). When the script ends, the loop's goroutine stops the
// stand-in, waits for it, and takes its lists and connections back.

type standIn struct {
	saved struct {
		run, resumed, wrote, paused []*Client
		again, led                  bool
	}
	held     []*Client
	deferred []deferredPost // posts for held clients, handed over at the end
	stop     chan struct{}
	done     chan struct{}
}

type deferredPost struct {
	c    *Client
	what uint32
}

// ScriptYieldBegin implements commands.Server: the script of c yields, so
// its loop gets a stand-in. It runs with the engine lock held for the
// script, which is in Lua code.
func (s *Server) ScriptYieldBegin(c *commands.Ctx) {
	cl, ok := c.Conn.(*Client)
	if !ok || cl.loop == nil {
		return
	}
	cl.loop.startStandIn()
}

// ScriptYieldEnd implements commands.Server: the script ends; its loop's
// goroutine takes the loop back.
func (s *Server) ScriptYieldEnd(c *commands.Ctx) {
	if cl, ok := c.Conn.(*Client); ok && cl.loop != nil && cl.loop.standIn != nil {
		cl.loop.stopStandIn()
	}
}

func (l *loop) startStandIn() {
	si := &standIn{stop: make(chan struct{}), done: make(chan struct{})}
	si.saved.run, si.saved.resumed, si.saved.wrote, si.saved.paused = l.run, l.resumed, l.wrote, l.paused
	si.saved.again, si.saved.led = l.again, l.led
	l.run, l.resumed, l.wrote, l.paused = nil, nil, nil, nil
	l.again, l.led = false, false
	for _, c := range si.saved.run {
		// A batch the iteration has not started yet is the stand-in's to
		// run (Redis reads and runs other clients' commands meanwhile);
		// the loop's goroutine skips it when the script ends.
		if c.queuedRun && !c.gone && !c.held {
			c.handedOver = true
			l.run = append(l.run, c)
		}
	}
	for _, list := range [][]*Client{si.saved.run, si.saved.resumed, si.saved.wrote, si.saved.paused} {
		for _, c := range list {
			if !c.held && !c.gone && !c.handedOver {
				c.held = true
				si.held = append(si.held, c)
				_ = l.poll.watch(c.fd, false, false)
			}
		}
	}
	l.again = len(l.run) > 0 // run the handed-over batches before waiting
	l.standIn = si
	go l.serveStandIn(si)
}

func (l *loop) stopStandIn() {
	si := l.standIn
	close(si.stop)
	l.poll.wake()
	<-si.done
	l.standIn = nil
	// The stand-in ends between iterations: its lists are empty but for
	// batches CLIENT PAUSE holds and clients it made ready.
	l.paused = append(si.saved.paused, l.paused...)
	l.run = append(si.saved.run, l.run...)
	l.resumed, l.wrote = si.saved.resumed, si.saved.wrote
	l.again = si.saved.again || l.again || len(l.unread) > 0
	l.led = si.saved.led
	for _, c := range si.held {
		c.held = false
		if !c.gone {
			_ = l.poll.watch(c.fd, true, len(c.out) > 0)
		}
	}
	for _, p := range si.deferred {
		l.post(p.c, p.what)
	}
}

// serveStandIn is the stand-in's goroutine: serve without the log.
func (l *loop) serveStandIn(si *standIn) {
	defer close(si.done)
	for {
		select {
		case <-si.stop:
			return
		default:
		}
		l.sleeping.Store(true)
		timeout := time.Duration(-1)
		if l.again || l.hasWork() {
			timeout = 0
		}
		events, _, err := l.poll.wait(timeout)
		l.sleeping.Store(false)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
		}
		if l.takePostedStandIn(si) {
			return // the server stops: the loop's goroutine closes everything
		}
		l.again = false
		skipped := 0
		for _, ev := range events {
			if ev.fd >= len(l.conns) || l.conns[ev.fd] == nil {
				continue
			}
			c := l.conns[ev.fd]
			if c.held {
				skipped++ // a hung-up held socket reports itself until the end
				continue
			}
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
		if skipped > 0 && skipped == len(events) {
			time.Sleep(time.Millisecond)
		}
	}
}

// takePostedStandIn is takePosted for the stand-in: new connections join,
// kills happen, and everything else waits for the loop's own goroutine.
func (l *loop) takePostedStandIn(si *standIn) (stop bool) {
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
		case what&postKill != 0 && !c.held:
			l.closeClient(c)
		default:
			si.deferred = append(si.deferred, deferredPost{c, what})
		}
	}
	clear(l.taken)
	return stop
}
