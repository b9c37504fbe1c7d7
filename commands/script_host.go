package commands

import (
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/engine"
)

// scriptRun is one script's execution: the caller's context, the database
// the script's commands use (SELECT in a script changes only this), and
// the rules the run obeys. It is the Host through which the script's
// redis.call reaches the server.
type scriptRun struct {
	vm       *LuaVM
	ctx      *Ctx
	db       *engine.DB
	readOnly bool
	allowOOM bool
	// oomAtStart: the server was over maxmemory when the script started,
	// so its first write that may grow memory is refused (a later one
	// cannot be: the script already changed data).
	oomAtStart bool
	dirty      bool // a write command ran
	replicaRO  bool // the server is a read-only replica and the caller not its master
	noReplicas bool // min-replicas-to-write refuses writes
	eval       bool // EVAL and its family, not a function
	start      time.Time
	killed     atomic.Bool
	funcname   string // the script's SHA1 or the function's name
	aclRefusal string
	// call and conn are the context of the command the script calls now,
	// reused from one call to the next.
	call Ctx
	conn scriptConn
}

// reset clears the run for the next script.
func (run *scriptRun) reset() {
	run.killed.Store(false)
	run.dirty, run.eval, run.oomAtStart, run.replicaRO, run.noReplicas = false, false, false, false, false
	run.call = Ctx{}
}

// Call runs one command for the script with Redis's checks (scriptCall):
// arity, scripts-forbidden commands, writes in read-only scripts, OOM. It
// returns the reply in proto, or the text of a refusal.
func (run *scriptRun) Call(args [][]byte, proto int) ([]byte, string) {
	vm := run.vm
	defer vm.unlockAfterCall(run, vm.lockForCall(run))
	c := run.ctx
	// cmd is known on an arity error too: the refusal is its rejected call.
	cmd, errMsg := c.Srv.Table().Lookup(c.Srv.Table().Get(args[0]), args)
	refusal := ""
	switch {
	case cmd == nil:
		refusal = "Unknown Redis command called from script"
	case errMsg != "":
		refusal = "Wrong number of args calling Redis command from script"
	case cmd.Has(FlagNoScript):
		refusal = "This Redis command is not allowed from script"
	case !run.aclAllows(cmd, args):
		refusal = run.aclRefusal
	case (cmd.Has(FlagWrite) || cmd.Has(FlagMayReplicate)) && run.readOnly:
		refusal = "Write commands are not allowed from read-only scripts."
	case cmd.Has(FlagWrite) && run.replicaRO:
		refusal = "-READONLY You can't write against a read only replica."
	case cmd.Has(FlagWrite) && run.noReplicas:
		refusal = "-NOREPLICAS Not enough good replicas to write."
	case cmd.Has(FlagDenyOOM) && !run.allowOOM && !run.dirty && run.oomAtStart:
		refusal = "-OOM command not allowed when used memory > 'maxmemory'."
	}
	if refusal != "" {
		refuseScriptCommand(c.Srv, cmd, refusal)
		return nil, refusal
	}
	if cmd.Has(FlagWrite) {
		run.dirty = true
	}
	w := &vm.callW
	w.Reset()
	w.SetProto(proto)
	run.call = Ctx{Args: args, Cmd: cmd, Eng: c.Eng, DB: run.db, W: w, Conn: &run.conn, Srv: c.Srv}
	runScriptCommand(&run.call)
	// MONITOR shows it on the script's database after it ran, as Redis.
	c.Srv.FeedMonitorsFromScript(cmd, run.db.ID(), args)
	if cmd.Has(FlagReadonly) {
		// A tracking caller remembers the keys the script declared, as
		// Redis does on every read inside a script.
		c.Conn.TrackRead(c.Cmd, c.Args)
	}
	return w.Bytes(), ""
}

// aclAllows checks a script's command against the calling user's
// permissions (Redis's scriptVerifyACL); a denial is logged in the "lua"
// context and its text kept in aclRefusal.
func (run *scriptRun) aclAllows(cmd *Command, args [][]byte) bool {
	res, idx := run.ctx.Conn.ACLCheck(cmd, args)
	if res == ACLOK {
		return true
	}
	run.ctx.Conn.ACLDeniedInScript(res, idx, cmd, args)
	run.aclRefusal = ScriptDeniedText(res)
	return false
}

// ACLCheck is redis.acl_check_cmd: whether the calling user may run the
// command; an unknown command is an error.
func (run *scriptRun) ACLCheck(args [][]byte) (bool, string) {
	tbl := run.ctx.Srv.Table()
	cmd := tbl.Get(args[0])
	if cmd != nil && cmd.HasSubs() && len(args) > 1 {
		cmd = cmd.Sub(args[1])
	}
	if cmd == nil {
		return false, "Invalid command passed to redis.acl_check_cmd()"
	}
	res, _ := run.ctx.Conn.ACLCheck(cmd, args)
	return res == ACLOK, ""
}

// scriptConn is the connection a script's commands see: the caller's,
// except that nothing blocks (a blocking command answers as if it timed
// out) and SELECT changes only the script's database.
type scriptConn struct {
	Conn
	run *scriptRun
}

func (s scriptConn) Block(keys [][]byte, timeout time.Duration, serve func(key []byte) bool, timeoutReply func()) {
	timeoutReply()
}

func (s scriptConn) SelectDB(i int) { s.run.db = s.run.ctx.Eng.DB(i) }
