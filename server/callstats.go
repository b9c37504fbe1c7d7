package server

import (
	"bytes"
	"time"

	"github.com/revolver-db/revolver/commands"
)

// Command statistics as Redis 7.0 keeps them (INFO commandstats and
// errorstats, total_error_replies, SLOWLOG, the latency monitor and
// histograms):
//   - every error reply counts once, where it is made: at the head of a
//     command's reply, nested in a script's reply, or sent to a blocked
//     client (afterErrorReply);
//   - a command is a failed call when an error was counted while it ran
//     (incrCommandStatsOnError's moving mark), so CLIENT UNBLOCK ... ERROR
//     fails for the error it sends to another client, and a script does not
//     for the errors of the commands it called, which are theirs;
//   - a blocking command counts its call when it blocks, and is timed,
//     logged and counted as failed when it is unblocked
//     (updateStatsOnUnblock); a timeout records nothing more.

// countError counts an error reply (msg, after its '-') for INFO
// errorstats and total_error_replies. Its code is its first word, as
// Redis reads it: ERR when no space ends a word within the reply's first
// 32 bytes, the '-' included.
func (s *Server) countError(msg []byte) {
	if i := bytes.IndexByte(msg, '\r'); i >= 0 {
		msg = msg[:i]
	}
	code := []byte("ERR")
	if i := bytes.IndexByte(msg[:min(len(msg), 31)], ' '); i >= 0 {
		code = msg[:i]
	}
	s.errStats[string(code)]++
	s.stats.errorReplies.Add(1)
}

// beginCall starts a command's error count.
func (s *Server) beginCall() { s.errMark = s.stats.errorReplies.Load() }

// endCall counts the error at the head of the command's reply, unless the
// command said it was counted already (errCounted), and reports whether
// the command failed.
func (s *Server) endCall(reply []byte) bool {
	if len(reply) > 0 && reply[0] == '-' && !s.errCounted {
		s.countError(reply[1:])
	}
	n := s.stats.errorReplies.Load()
	failed := n > s.errMark || s.errCounted
	s.errMark, s.errCounted = n, false
	return failed
}

// countCall counts a call in INFO commandstats and total_commands_processed
// and samples its time for the latency monitor.
func (s *Server) countCall(r ran, elapsed time.Duration) {
	st := &s.cmdStats[r.cmd.Index()]
	st.calls++
	st.usec += elapsed.Microseconds()
	if r.failed {
		st.failed++
	}
	s.stats.commands.Add(1)
	s.observeLatency(r.cmd, elapsed)
}

// slowlogCommand logs a command that took elapsed, ending at end, for the
// client at addr named name.
func (s *Server) slowlogCommand(cmd *commands.Command, addr, name string, args [][]byte, end time.Time, elapsed time.Duration) {
	if !cmd.Has(commands.FlagSkipSlowlog) {
		s.slowlog.observe(addr, name, args, end, elapsed)
	}
}

// watchServe has the engine call serve for a parked client through a
// wrapper that does, under the engine lock, what Redis does as it serves
// a blocked client: the client is the current one, so the invalidations of
// keys it tracks that its own command changes (BLMOVE's destination) come
// after its reply; its reply goes out in order before anything later; the
// call is timed and counted (finishBlocked).
func (c *Client) watchServe(serve func(key []byte) bool) func(key []byte) bool {
	return func(key []byte) bool {
		s := c.s
		mark := c.w.Len()
		start := s.clock.Now()
		var prev trackingScope
		if s.trk.active {
			prev = s.trk.enter(c)
		}
		ok := serve(key)
		var pending [][]byte
		if prev.active {
			pending = s.trk.leave(c, prev)
		}
		if !ok {
			return false
		}
		reply := c.w.Bytes()[min(mark, c.w.Len()):]
		failed := len(reply) > 0 && reply[0] == '-'
		if failed {
			s.countError(reply[1:])
		}
		s.finishBlocked(c, s.clock.Now().Sub(start), failed, false)
		if c.pushMode {
			c.queueReplies()
		}
		s.trk.sendPending(c, pending)
		return true
	}
}

// finishBlocked is Redis's updateStatsOnUnblock for a client whose blocking
// command was served or unblocked: the command's time (its call, and the
// reply's making, which Redis adds again) and its failure in commandstats,
// its histogram, its SLOWLOG entry as the client sent it, and the
// "command-unblocking" latency event. Under the engine lock.
//
// CLIENT UNBLOCK (byUnblock) logs the entry without arguments: Redis has
// reset the client, and freed them, by then.
func (s *Server) finishBlocked(c *Client, reply time.Duration, failed, byUnblock bool) {
	r := c.blockedRan
	if r.cmd == nil {
		return
	}
	c.blockedRan = ran{}
	total := c.blockedFor + reply
	st := &s.cmdStats[r.cmd.Index()]
	st.usec += total.Microseconds()
	if failed {
		st.failed++
	}
	s.observeHistogram(r.cmd, total)
	args := r.args
	if byUnblock {
		args = nil
	}
	s.slowlogCommand(r.cmd, c.addr, c.name, args, s.clock.Now(), total)
	s.addLatencySample("command-unblocking", reply)
}

// scriptClientAddr is how SLOWLOG shows the client of a script's commands
// (Redis's Lua client has no connection); its name is empty.
const scriptClientAddr = "?:0"

// RunScriptCommand runs a command a script called, accounted as Redis's
// call() accounts it (commands/script_stats.go).
func (s *Server) RunScriptCommand(call *commands.Ctx) {
	outer := s.errCounted
	s.errCounted = false
	start := s.clock.Now()
	s.beginCall()
	mark := call.W.Len()
	dirty := s.eng.Dirty()
	s.prop.enter()
	call.Cmd.Run(call)
	s.leaveCommand(call.DB.ID(), call.Conn.ID(), call.Cmd, call.Args, dirty)
	end := s.clock.Now()
	failed := s.endCall(call.W.Bytes()[min(mark, call.W.Len()):])
	s.errCounted = outer
	elapsed := end.Sub(start)
	s.countCall(ran{cmd: call.Cmd, args: call.Args, start: start, failed: failed}, elapsed)
	s.slowlogCommand(call.Cmd, scriptClientAddr, "", call.Args, end, elapsed)
	s.observeHistogram(call.Cmd, elapsed)
}

// RefuseScriptCommand counts a command a script called that was refused
// before it ran (Redis's scriptCall error path).
func (s *Server) RefuseScriptCommand(cmd *commands.Command, msg string) {
	if len(msg) > 1 && msg[0] == '-' {
		s.countError([]byte(msg[1:]))
	} else {
		s.countError([]byte("ERR"))
	}
	if cmd != nil {
		s.cmdStats[cmd.Index()].rejected++
	}
	s.errMark = s.stats.errorReplies.Load() // the refusal is not the script's failure
}

// NestedErrorReply counts an error inside the running command's reply.
func (s *Server) NestedErrorReply(msg string) { s.countError([]byte(msg)) }

// ErrorReplyCounted says the running command's error reply was counted
// already.
func (s *Server) ErrorReplyCounted() { s.errCounted = true }
