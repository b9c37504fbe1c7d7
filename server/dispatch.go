package server

import (
	"time"

	"github.com/revolver-db/revolver/commands"
	"github.com/tidwall/redcon"
)

// accept registers a new connection, refusing it past maxclients with
// Redis's error.
func (s *Server) accept(conn redcon.Conn) bool {
	if s.shutting.Load() {
		return false
	}
	if s.connCount.Add(1) > s.maxClients.Load() {
		s.connCount.Add(-1)
		s.stats.rejectedConns.Add(1)
		conn.NetConn().Write([]byte("-ERR max number of clients reached\r\n"))
		return false
	}
	c := newClient(s, conn, s.nextID.Add(1))
	if g, ok := conn.NetConn().(*guardConn); ok {
		g.authed = &c.authed
	}
	conn.SetContext(c)
	s.stats.connections.Add(1)
	s.eng.Lock()
	s.clients[c.id] = c
	s.eng.Unlock()
	return true
}

// closed forgets a connection: its subscriptions, its MONITOR feed, its
// registry entry.
func (s *Server) closed(conn redcon.Conn, _ error) {
	c, ok := conn.Context().(*Client)
	if !ok {
		return
	}
	c.killed.Store(true)
	s.eng.Lock()
	s.hub.dropClient(c)
	if c.monitor {
		c.monitor = false
		s.monitors.Add(-1)
	}
	delete(s.clients, c.id)
	s.eng.Unlock()
	c.stopPusher()
	s.connCount.Add(-1)
}

// handle runs everything the client has pipelined so far as one batch: one
// engine lock acquisition, one durability wait, one write.
func (s *Server) handle(conn redcon.Conn, first redcon.Command) {
	c := conn.Context().(*Client)
	batch := append(c.batch[:0], first)
	batch = append(batch, conn.ReadPipeline()...)
	c.lastInteraction.Store(time.Now().UnixNano())
	s.pause.wait(s, batch)

	s.eng.Lock()
	for i := range batch {
		if c.closing || s.shutting.Load() {
			break
		}
		if i > 0 {
			s.eng.Refresh()
		}
		s.exec(c, batch[i].Args)
	}
	if c.pushMode {
		c.queueReplies() // behind pushes already queued, still under the lock
	}
	s.eng.Unlock()

	clear(batch) // do not pin the requests' buffers until the next batch
	c.batch = batch[:0]
	if !c.pushMode {
		if ch := s.barrier(); ch != nil {
			<-ch
		}
		if err := c.writeReplies(); err != nil {
			conn.Close()
			return
		}
	}
	if c.closing {
		c.stopPusher() // flushes the last replies of a push-mode client
		conn.Close()
	}
	if s.shutting.Load() {
		conn.Close()
		go s.Close()
	}
}

// exec runs one command: lookup and arity, then the checks Redis makes
// before calling a command (authentication, protected commands, the
// subscribed context, maxmemory), then the handler, then the bookkeeping
// (stats, MONITOR, SLOWLOG).
func (s *Server) exec(c *Client, args [][]byte) {
	cmd, errMsg := s.table.Resolve(args)
	if errMsg != "" {
		s.reject(c, nil, errMsg)
		return
	}
	switch {
	case !c.authed.Load() && !cmd.Has(commands.FlagNoAuth):
		s.reject(c, cmd, "NOAUTH Authentication required.")
		return
	case cmd.Has(commands.FlagProtected) && !s.debugAllowed(c):
		s.reject(c, cmd, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "+
			"you can run it from a local connection, otherwise you need to set this option in the configuration file, "+
			"and then restart the server.")
		return
	case c.w.Proto() == 2 && c.Subscriptions() > 0 && !allowedWhileSubscribed(cmd):
		s.reject(c, cmd, "ERR Can't execute '"+cmd.FullName()+
			"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
		return
	case cmd.Has(commands.FlagDenyOOM) && s.overMaxMemory():
		s.reject(c, cmd, "OOM command not allowed when used memory > 'maxmemory'.")
		return
	}
	ctx := &c.ctx
	ctx.Args, ctx.Cmd, ctx.DB = args, cmd, s.eng.DB(c.db)
	mark := c.w.Len()
	start := time.Now()
	cmd.Run(ctx)
	elapsed := time.Since(start)
	c.lastCmd = cmd.FullName()
	st := s.cmdStats[cmd]
	if st == nil {
		st = &cmdStat{}
		s.cmdStats[cmd] = st
	}
	st.calls++
	st.usec += elapsed.Microseconds()
	if c.w.Len() > mark && c.w.Bytes()[mark] == '-' {
		st.failed++
		s.stats.errorReplies.Add(1)
	}
	s.stats.commands.Add(1)
	if s.monitors.Load() > 0 && !cmd.Has(commands.FlagSkipMonitor) && !cmd.Has(commands.FlagAdmin) {
		s.feedMonitors(c, args)
	}
	if !cmd.Has(commands.FlagSkipSlowlog) {
		s.slowlog.observe(c, args, start, elapsed)
	}
}

func (s *Server) reject(c *Client, cmd *commands.Command, msg string) {
	c.w.Error(msg)
	s.stats.errorReplies.Add(1)
	if cmd != nil {
		st := s.cmdStats[cmd]
		if st == nil {
			st = &cmdStat{}
			s.cmdStats[cmd] = st
		}
		st.rejected++
	}
}

func allowedWhileSubscribed(cmd *commands.Command) bool {
	switch cmd.FullName() {
	case "ping", "subscribe", "psubscribe", "unsubscribe", "punsubscribe", "quit", "reset":
		return true
	}
	return false
}

// debugAllowed applies enable-debug-command: yes, no, or local (loopback
// connections only).
func (s *Server) debugAllowed(c *Client) bool {
	switch s.cfg.EnableDebugCommand {
	case "yes":
		return true
	case "local":
		return isLoopback(c.addr)
	}
	return false
}

func (s *Server) overMaxMemory() bool {
	max := s.maxMemory.Load()
	return max > 0 && s.usedMemory.Load() > max
}

// feedMonitors sends the command to MONITOR clients, as Redis does after
// running it.
func (s *Server) feedMonitors(from *Client, args [][]byte) {
	line := monitorLine(time.Now(), from.db, from.addr, args)
	for _, c := range s.clients {
		if c.monitor {
			c.push(line)
		}
	}
}
