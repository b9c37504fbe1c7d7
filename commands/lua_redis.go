package commands

import (
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/revolver-db/revolver/resp"
)

// The redis table scripts see, as Redis 7.0 registers it: call and pcall
// through the command table, error_reply and status_reply, sha1hex, log
// with its levels, setresp, set_repl and its constants,
// replicate_commands, breakpoint and debug (no debugger: they do
// nothing), acl_check_cmd, and the version.

// The redis.set_repl flags (Redis's PROPAGATE_*).
const (
	replNone = 0
	replAOF  = 1
	replRepl = 2
	replAll  = replAOF | replRepl
)

// Redis's version as scripts see it: the version this server speaks.
const (
	luaRedisVersion    = "7.0.15"
	luaRedisVersionNum = 0x07000f
)

func (vm *LuaVM) registerRedisAPI(L *lua.LState) {
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return vm.redisCall(L, true) },
		"pcall":              func(L *lua.LState) int { return vm.redisCall(L, false) },
		"sha1hex":            luaSha1hex,
		"error_reply":        luaErrorReply,
		"status_reply":       luaStatusReply,
		"log":                vm.luaLog,
		"setresp":            vm.luaSetResp,
		"set_repl":           vm.luaSetRepl,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
		"acl_check_cmd":      vm.luaACLCheckCmd,
	})
	for name, v := range map[string]int{"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice,
		"LOG_WARNING": LogWarning, "REPL_NONE": replNone, "REPL_AOF": replAOF, "REPL_SLAVE": replRepl,
		"REPL_REPLICA": replRepl, "REPL_ALL": replAll, "REDIS_VERSION_NUM": luaRedisVersionNum} {
		t.RawSetString(name, lua.LNumber(v))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(luaRedisVersion))
	L.SetGlobal("redis", t)
	// Redis 7.0's pcall returns an error table's message, not the table
	// (what scripts written for earlier versions expect).
	L.SetGlobal("pcall", L.NewFunction(luaPcall))
	math := L.GetGlobal("math").(*lua.LTable)
	math.RawSetString("random", L.NewFunction(vm.mathRandom))
	math.RawSetString("randomseed", L.NewFunction(vm.mathRandomseed))
}

// raise raises an error table {err=...} built from e, as luaPushError and
// luaError do together.
func raise(L *lua.LState, e string) int {
	L.Error(luaErrorTable(L, e), 1)
	return 0
}

// redisCall is redis.call (raise) and redis.pcall: it runs a command as
// the script's client and returns its reply as a Lua value; an error reply
// is raised by call and returned by pcall as {err=...}.
func (vm *LuaVM) redisCall(L *lua.LState, raiseErrors bool) int {
	run := vm.run
	if run == nil {
		return raise(L, "redis.call/pcall can only be called inside a script invocation")
	}
	args, errMsg := luaCommandArgs(L)
	if errMsg != "" {
		if raiseErrors {
			return raise(L, errMsg)
		}
		L.Push(luaErrorTable(L, errMsg))
		return 1
	}
	reply, failed := vm.execute(args)
	if failed != "" {
		t := luaErrorTable(L, failed)
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		if raiseErrors {
			L.Error(t, 1)
			return 0
		}
		L.Push(t)
		return 1
	}
	v := replyToLua(L, reply)
	if raiseErrors && reply.Kind == resp.KindError {
		L.Error(v, 1)
		return 0
	}
	L.Push(v)
	return 1
}

// luaCommandArgs reads a command's arguments from the stack: strings, and
// numbers written as "%.17g" (Lua's own formatting loses precision).
func luaCommandArgs(L *lua.LState) ([][]byte, string) {
	n := L.GetTop()
	if n == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	// The arguments are copied into one buffer: the command may keep
	// them (a value it stores), and the script's strings are not ours.
	size := 0
	for i := 1; i <= n; i++ {
		if s, ok := L.Get(i).(lua.LString); ok {
			size += len(s)
		} else {
			size += 24 // a number's "%.17g"
		}
	}
	buf := make([]byte, 0, size)
	args := make([][]byte, n)
	for i := 1; i <= n; i++ {
		start := len(buf)
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			buf = resp.AppendFloat17g(buf, float64(v))
		default:
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
		args[i-1] = buf[start:len(buf):len(buf)]
	}
	L.SetTop(0)
	return args, ""
}

// execute runs one command for the script with Redis's checks (scriptCall):
// arity, scripts-forbidden commands, writes in read-only scripts, OOM. It
// returns the reply, or the text of a refusal.
func (vm *LuaVM) execute(args [][]byte) (resp.Value, string) {
	run := vm.run
	defer vm.unlockAfterCall(run, vm.lockForCall(run))
	c := run.ctx
	cmd, errMsg := c.Srv.Table().Resolve(args)
	switch {
	case cmd == nil && strings.HasPrefix(errMsg, "ERR wrong number"):
		return resp.Value{}, "Wrong number of args calling Redis command from script"
	case cmd == nil:
		return resp.Value{}, "Unknown Redis command called from script"
	case cmd.Has(FlagNoScript):
		return resp.Value{}, "This Redis command is not allowed from script"
	case (cmd.Has(FlagWrite) || cmd.Has(FlagMayReplicate)) && run.readOnly:
		return resp.Value{}, "Write commands are not allowed from read-only scripts."
	case cmd.Has(FlagDenyOOM) && !run.allowOOM && !run.dirty && run.oomAtStart:
		return resp.Value{}, "-OOM command not allowed when used memory > 'maxmemory'."
	}
	if cmd.Has(FlagWrite) {
		run.dirty = true
	}
	vm.callW.Reset()
	vm.callW.SetProto(run.resp)
	run.call = Ctx{Args: args, Cmd: cmd, Eng: c.Eng, DB: run.db, W: &vm.callW, Conn: &run.conn, Srv: c.Srv}
	cmd.Run(&run.call)
	c.Srv.FeedMonitorsFromScript(cmd, run.db.ID(), args)
	if cmd.Has(FlagReadonly) {
		// A tracking caller remembers the keys the script declared, as
		// Redis does on every read inside a script.
		c.Conn.TrackRead(c.Cmd, c.Args)
	}
	vm.replySrc.Reset(vm.callW.Bytes())
	vm.replyRd.Reset(&vm.replySrc)
	v, err := vm.replyRd.Read()
	if err != nil {
		return resp.Value{}, "ERR internal error reading the reply of '" + cmd.FullName() + "'"
	}
	return v, ""
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

func luaSha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, "wrong number of arguments")
	}
	s, _ := luaToString(L.Get(1))
	L.Push(lua.LString(sha1hex([]byte(s))))
	return 1
}

// luaToString is lua_tolstring: strings and numbers, else false.
func luaToString(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return x.String(), true
	}
	return "", false
}

func luaErrorReply(L *lua.LState) int {
	if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
		L.Push(luaErrorTable(L, "wrong number or type of arguments"))
		return 1
	}
	e := L.Get(1).String()
	if !strings.HasPrefix(e, "-") {
		e = "-" + e
	}
	L.Push(luaErrorTable(L, e))
	return 1
}

func luaStatusReply(L *lua.LState) int {
	if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
		L.Push(luaErrorTable(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", L.Get(1))
	L.Push(t)
	return 1
}

func (vm *LuaVM) luaLog(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		return raise(L, "redis.log() requires two arguments or more.")
	}
	lv, ok := L.Get(1).(lua.LNumber)
	if !ok {
		if s, isStr := L.Get(1).(lua.LString); isStr {
			if f, err := strconv.ParseFloat(string(s), 64); err == nil {
				lv, ok = lua.LNumber(f), true
			}
		}
	}
	if !ok {
		return raise(L, "First argument must be a number (log level).")
	}
	level := int(lv)
	if level < LogDebug || level > LogWarning {
		return raise(L, "Invalid debug level.")
	}
	if level < vm.Verbosity || vm.Log == nil {
		return 0
	}
	var parts []string
	for i := 2; i <= n; i++ {
		if s, ok := luaToString(L.Get(i)); ok {
			parts = append(parts, s)
		}
	}
	vm.Log(level, strings.Join(parts, " "))
	return 0
}

func (vm *LuaVM) luaSetResp(L *lua.LState) int {
	if vm.run == nil {
		return raise(L, "redis.setresp can only be called inside a script invocation")
	}
	if L.GetTop() != 1 {
		return raise(L, "redis.setresp() requires one argument.")
	}
	v, _ := L.Get(1).(lua.LNumber)
	if p := int(v); p != 2 && p != 3 {
		return raise(L, "RESP version must be 2 or 3.")
	}
	vm.run.resp = int(v)
	return 0
}

func (vm *LuaVM) luaSetRepl(L *lua.LState) int {
	if vm.run == nil {
		return raise(L, "redis.set_repl can only be called inside a script invocation")
	}
	if L.GetTop() != 1 {
		return raise(L, "redis.set_repl() requires two arguments.")
	}
	v, _ := L.Get(1).(lua.LNumber)
	if int(v)&^replAll != 0 {
		return raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0 // every write is persisted; there are no replicas
}

// luaACLCheckCmd is redis.acl_check_cmd: there are no ACL users beyond the
// default one, which may run every command; an unknown command is an error.
func (vm *LuaVM) luaACLCheckCmd(L *lua.LState) int {
	if vm.run == nil {
		return raise(L, "redis.acl_check_cmd can only be called inside a script invocation")
	}
	args, errMsg := luaCommandArgs(L)
	if errMsg != "" {
		return raise(L, errMsg)
	}
	if cmd, _ := vm.run.ctx.Srv.Table().Resolve(args); cmd == nil {
		if c := vm.run.ctx.Srv.Table().Get(args[0]); c == nil {
			return raise(L, "Invalid command passed to redis.acl_check_cmd()")
		}
	}
	L.Push(lua.LTrue)
	return 1
}

// luaPcall is Redis 7.0's pcall: like Lua's, but an error that is a table
// with an err field comes back as that field's message.
func luaPcall(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		L.ArgError(1, "value expected")
	}
	err := L.PCall(n-1, lua.MultRet, nil)
	if err == nil {
		L.Insert(lua.LTrue, 1)
		return L.GetTop()
	}
	obj := lua.LValue(lua.LString(err.Error()))
	if apiErr, ok := err.(*lua.ApiError); ok {
		obj = apiErr.Object
		switch x := obj.(type) {
		case *lua.LTable:
			if e := x.RawGetString("err"); e.Type() == lua.LTString {
				obj = e
			}
		case lua.LString:
			obj = lua.LString(luaErrorText(x))
		}
	}
	L.SetTop(0)
	L.Push(lua.LFalse)
	L.Push(obj)
	return 2
}
