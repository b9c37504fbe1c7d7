package server

import (
	"strconv"
	"strings"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/resp"
)

var (
	encodedMulti = resp.AppendCommand(nil, []byte("MULTI"))
	encodedExec  = resp.AppendCommand(nil, []byte("EXEC"))
)

// Propagation decides what a master sends its replicas, as Redis 7.0 does:
// every command that changed data, in the order it ran, as its arguments
// or as what it rewrote itself into (commands.Ctx.PropagateAs: SET EX as
// SET PXAT, SPOP as SREM, a served BLPOP as LPOP...); keys the engine
// deleted by itself as DEL or UNLINK, when it deleted them. What one
// client command causes (its own change, the commands of its transaction
// or script, the keys it found expired) is collected and sent when it
// ends, inside MULTI/EXEC when there is more than one; expiry between
// commands and eviction go out one by one.

// propOp is one command to propagate, in database db: its encoding,
// enc[from:to] of the propagation. Commands are encoded as they are
// collected, which copies them out of the query buffer in one append.
type propOp struct {
	db       int
	from, to int
}

// cmdOp is one command to propagate as its arguments.
type cmdOp struct {
	db   int
	args [][]byte
}

// propFrame is a command running, perhaps inside another (EXEC's and
// scripts' commands).
type propFrame struct {
	rewrite   []propOp // what it propagates instead of itself
	rewritten bool     // PropagateAs or PreventPropagation was called
	forced    bool     // propagate even though no data changed (PUBLISH)
}

// propagation is the server's state for it, under the engine lock.
type propagation struct {
	frames []propFrame
	ops    []propOp // what the running client command propagates so far
	enc    []byte   // their encodings
}

// encode encodes a command of the running client command.
func (p *propagation) encode(db int, args [][]byte) propOp {
	from := len(p.enc)
	p.enc = resp.AppendCommand(p.enc, args...)
	return propOp{db, from, len(p.enc)}
}

// add adds a command to what the running client command propagates.
func (p *propagation) add(db int, args [][]byte) {
	p.ops = append(p.ops, p.encode(db, args))
}

// enter starts a command's frame.
func (p *propagation) enter() {
	p.frames = append(p.frames, propFrame{})
}

// top is the running command's frame, nil between commands.
func (p *propagation) top() *propFrame {
	if len(p.frames) == 0 {
		return nil
	}
	return &p.frames[len(p.frames)-1]
}

// leave ends the running command's frame: what it propagates is added,
// and the outermost command sends everything collected.
func (s *Server) leaveCommand(db int, caller int64, cmd *commands.Command, args [][]byte, dirtyBefore int64) {
	p := &s.prop
	f := p.frames[len(p.frames)-1]
	p.frames = p.frames[:len(p.frames)-1]
	if !s.replicating() {
		return // nothing would keep it: no copy, no garbage
	}
	switch {
	case f.rewritten:
		p.ops = append(p.ops, f.rewrite...)
	case cmd.FullName() == "exec":
		// Its commands added themselves.
	case isNative(cmd) && s.eng.Dirty() != dirtyBefore:
		for _, op := range s.nativeOps(db, caller, args) {
			p.add(op.db, op.args)
		}
	case f.forced || s.eng.Dirty() != dirtyBefore:
		p.add(db, args)
	}
	if len(p.frames) == 0 {
		s.flushPropagation(!touchesArbitraryKeys(cmd))
	}
}

// flushPropagation sends the collected commands, wrapped in MULTI/EXEC
// when there are several and wrap allows it.
func (s *Server) flushPropagation(wrap bool) {
	p := &s.prop
	if len(p.ops) == 0 {
		return
	}
	wrap = wrap && len(p.ops) > 1
	if wrap {
		s.replFeedEncoded(p.ops[0].db, encodedMulti)
	}
	for _, op := range p.ops {
		s.replFeedEncoded(op.db, p.enc[op.from:op.to])
	}
	if wrap {
		s.replFeedEncoded(p.ops[len(p.ops)-1].db, encodedExec)
	}
	p.ops = p.ops[:0]
	if cap(p.enc) > 1<<20 {
		p.enc = nil // a large script's effects: not kept for every command after
	}
	p.enc = p.enc[:0]
}

// keyDeleted is the engine's deletion hook: a key it expired or evicted
// by itself goes to replicas as DEL or UNLINK, with the running command's
// propagation if one runs, else at once.
func (s *Server) keyDeleted(db int, key []byte, lazy bool) {
	if !s.replicating() {
		return
	}
	name := "DEL"
	if lazy {
		name = "UNLINK"
	}
	args := [][]byte{[]byte(name), key}
	if len(s.prop.frames) == 0 {
		s.replFeed(db, args)
		return
	}
	s.prop.add(db, args)
}

// PropagateAs implements commands.Server: the running command propagates
// args (one more command each call) instead of its own arguments; with no
// args, nothing. Outside any command (a blocked client served later), args
// go out at once.
func (s *Server) PropagateAs(db int, args [][]byte) {
	if !s.replicating() {
		return
	}
	f := s.prop.top()
	if f == nil {
		// A blocked command served after its own call returned: its
		// effect is a unit of its own.
		if len(args) > 0 {
			s.replFeed(db, args)
		}
		return
	}
	f.rewritten = true
	if len(args) > 0 {
		f.rewrite = append(f.rewrite, s.prop.encode(db, args))
	}
}

// Replicating implements commands.Server: whether what commands propagate
// is kept (a backlog or a replica), so that they can skip building it.
func (s *Server) Replicating() bool { return s.replicating() }

func (s *Server) replicating() bool {
	m := &s.replm
	return s.replica == nil && (m.backlog != nil || len(m.replicas) > 0)
}

// ForcePropagation implements commands.Server: the running command is
// propagated even though it changed no data.
func (s *Server) ForcePropagation() {
	if f := s.prop.top(); f != nil {
		f.forced = true
	}
}

// copyArgs copies arguments that point into a query buffer.
func copyArgs(args [][]byte) [][]byte {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		out[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	return out
}

// touchesArbitraryKeys: commands that may find any key expired (Redis's
// CMD_TOUCHES_ARBITRARY_KEYS) send those deletions without MULTI.
func touchesArbitraryKeys(cmd *commands.Command) bool {
	switch cmd.FullName() {
	case "randomkey", "scan":
		return true
	}
	return false
}

// Revolver's own types (engine/replica_native.go) run on a replica exactly
// as on the master when it is told the time and caller of each of their
// commands (REVOLVER.REPL AT, right before it), each native timer that fires
// (TICK) and each disconnect that changed what clients held (CLOSED); their
// commands go without BLOCK, which a replica never waits in.

var replCmd = []byte("REVOLVER.REPL")

// isNative reports a native family's command.
func isNative(cmd *commands.Command) bool {
	switch cmd.Group {
	case "delay", "queue", "numpool", "room", "uv":
		return true
	}
	return false
}

// nativeOps is a native command as replicas get it: its time and caller,
// then its arguments without BLOCK.
func (s *Server) nativeOps(db int, caller int64, args [][]byte) []cmdOp {
	at := cmdOp{db, [][]byte{replCmd, []byte("AT"), itoaBytes(s.eng.Now()), itoaBytes(caller)}}
	cmd := make([][]byte, 0, len(args))
	for i := 0; i < len(args); i++ {
		if i > 0 && i+1 < len(args) && strings.EqualFold(string(args[i]), "BLOCK") {
			i++
			continue
		}
		cmd = append(cmd, args[i])
	}
	return []cmdOp{at, {db, cmd}}
}

// propagateServedNative wraps a blocked native command's serve so that,
// when a later write serves it, replicas run it then.
func (s *Server) propagateServedNative(c *Client, serve func(key []byte) bool) func(key []byte) bool {
	cmd := c.ctx.Cmd
	if cmd == nil || !isNative(cmd) || len(s.prop.frames) > 1 {
		return serve
	}
	db, caller, args := c.db, c.id, copyArgs(c.ctx.Args)
	return func(key []byte) bool {
		dirty := s.eng.Dirty()
		served := serve(key)
		if served && s.eng.Dirty() != dirty {
			s.feedOps(s.nativeOps(db, caller, args))
		}
		return served
	}
}

// propagateClosed tells replicas a client is gone, after the families
// released what it held.
func (s *Server) propagateClosed(client int64) {
	if !s.replicating() {
		return
	}
	s.feedOps([]cmdOp{{0, [][]byte{replCmd, []byte("CLOSED"), itoaBytes(client), itoaBytes(s.eng.Now())}}})
}

// nativeTimerFired is the engine's hook: a native timer fires at at.
func (s *Server) nativeTimerFired(at int64) {
	if !s.replicating() {
		return
	}
	s.feedOps([]cmdOp{{0, [][]byte{replCmd, []byte("TICK"), itoaBytes(at)}}})
}

// feedOps sends ops with the running command's if one runs, else at once.
func (s *Server) feedOps(ops []cmdOp) {
	if !s.replicating() {
		return
	}
	if len(s.prop.frames) > 0 {
		for _, op := range ops {
			s.prop.add(op.db, op.args)
		}
		return
	}
	for _, op := range ops {
		s.replFeed(op.db, op.args)
	}
}

func itoaBytes(n int64) []byte { return strconv.AppendInt(nil, n, 10) }
