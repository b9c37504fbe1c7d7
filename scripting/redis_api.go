package scripting

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"

	"github.com/revolver-db/revolver/lua"
	"github.com/revolver-db/revolver/resp"
)

// The redis table scripts see, as Redis 7.0 registers it: call and pcall,
// log and its levels, the version, setresp, sha1hex, error_reply and
// status_reply, set_repl and its flags, acl_check_cmd.

// Host runs what a script asks of the server. The commands package
// implements it for each run.
type Host interface {
	// Call runs a command for redis.call and redis.pcall, with Redis's
	// checks for scripts. It returns the command's reply encoded in proto
	// (2 or 3), or the text of a refusal ("-CODE message" or a message
	// that gets the ERR code).
	Call(args [][]byte, proto int) (reply []byte, refusal string)
	// ACLCheck is redis.acl_check_cmd: whether the user may run args; a
	// non-empty refusal is raised instead ("Invalid command passed...").
	ACLCheck(args [][]byte) (allowed bool, refusal string)
	// ReplyError is told of each error the script's reply holds, for the
	// error statistics: counted when a command counted it already (its
	// table carries ignore_error_stats_update, as Redis marks it), nested
	// when it is inside the reply rather than the reply itself.
	ReplyError(msg string, counted, nested bool)
}

// The redis.set_repl flags (Redis's PROPAGATE_*).
const (
	replNone = 0
	replAOF  = 1
	replRepl = 2
	replAll  = replAOF | replRepl
)

// Redis's version as scripts see it: the version this server speaks.
const (
	redisVersion    = "7.0.15"
	redisVersionNum = 0x07000f
)

func (rt *Runtime) registerRedisAPI(L *lua.State) {
	t := lua.NewTable(0, 0)
	set := func(name string, v lua.Value) { t.SetStr(name, v) }
	fn := func(name string, f lua.GoFunction) { set(name, lua.FunctionValue(lua.NewFunction(name, f))) }
	fn("call", func(L *lua.State) int { return rt.redisCall(L, true) })
	fn("pcall", func(L *lua.State) int { return rt.redisCall(L, false) })
	rt.registerLog(t)
	registerVersion(t)
	fn("setresp", rt.setResp)
	fn("sha1hex", sha1hexFn)
	fn("error_reply", errorReply)
	fn("status_reply", statusReply)
	fn("set_repl", rt.setRepl)
	for _, f := range []struct {
		name string
		v    int
	}{{"REPL_NONE", replNone}, {"REPL_AOF", replAOF}, {"REPL_SLAVE", replRepl}, {"REPL_REPLICA", replRepl},
		{"REPL_ALL", replAll}} {
		set(f.name, lua.Number(float64(f.v)))
	}
	fn("acl_check_cmd", rt.aclCheckCmd)
	L.Globals().SetStr("redis", lua.TableValue(t))
	math := L.Globals().GetStr("math").AsTable()
	math.SetStr("random", lua.FunctionValue(lua.NewFunction("random", rt.mathRandom)))
	math.SetStr("randomseed", lua.FunctionValue(lua.NewFunction("randomseed", rt.mathRandomseed)))
}

// registerLog sets redis.log and its levels into t.
func (rt *Runtime) registerLog(t *lua.Table) {
	t.SetStr("log", lua.FunctionValue(lua.NewFunction("log", rt.log)))
	for _, l := range []struct {
		name string
		v    int
	}{{"LOG_DEBUG", LogDebug}, {"LOG_VERBOSE", LogVerbose}, {"LOG_NOTICE", LogNotice}, {"LOG_WARNING", LogWarning}} {
		t.SetStr(l.name, lua.Number(float64(l.v)))
	}
}

func registerVersion(t *lua.Table) {
	t.SetStr("REDIS_VERSION_NUM", lua.Number(redisVersionNum))
	t.SetStr("REDIS_VERSION", lua.String(redisVersion))
}

// errorTable is Redis's luaPushError: {err="CODE message"}, the code the
// first word of a "-CODE message" text, else ERR.
func errorTable(e string) *lua.Table {
	msg, code := e, "ERR"
	if rest, ok := strings.CutPrefix(e, "-"); ok {
		if c, m, found := strings.Cut(rest, " "); found {
			code, msg = c, m
		} else {
			msg = rest
		}
	}
	msg = strings.Trim(msg, "\r\n")
	t := lua.NewTable(0, 1)
	t.SetStr("err", lua.String(code+" "+msg))
	return t
}

// raise raises an error table made from e, as luaPushError and luaError.
func raise(L *lua.State, e string) int {
	L.Error(lua.TableValue(errorTable(e)))
	return 0
}

// redisCall is redis.call (raiseErrors) and redis.pcall: it runs a command
// and returns its reply as a Lua value; an error reply is raised by call,
// returned as {err=...} by pcall.
func (rt *Runtime) redisCall(L *lua.State, raiseErrors bool) int {
	r := rt.run
	if r == nil {
		return raise(L, "redis.call/pcall can only be called inside a script invocation")
	}
	args, errMsg := commandArgs(L)
	if errMsg != "" {
		if raiseErrors {
			return raise(L, errMsg)
		}
		L.Push(lua.TableValue(errorTable(errMsg)))
		return 1
	}
	reply, refusal := r.host.Call(args, r.proto)
	if refusal != "" {
		t := errorTable(refusal)
		t.SetStr("ignore_error_stats_update", lua.True)
		if raiseErrors {
			L.Error(lua.TableValue(t))
		}
		L.Push(lua.TableValue(t))
		return 1
	}
	v, isErr := replyToLua(reply)
	if raiseErrors && isErr {
		L.Error(v)
	}
	L.Push(v)
	return 1
}

// commandArgs reads a command's arguments: strings, and numbers written as
// "%.17g" (Lua's own formatting would lose precision).
func commandArgs(L *lua.State) ([][]byte, string) {
	n := L.Top()
	if n == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	// One buffer for all: the command may keep an argument (a value it
	// stores), and the script's strings are not ours to keep.
	size := 0
	for i := 1; i <= n; i++ {
		if s, ok := L.Get(i).AsString(); ok {
			size += len(s)
		} else {
			size += 24
		}
	}
	buf := make([]byte, 0, size)
	args := make([][]byte, n)
	for i := 1; i <= n; i++ {
		start := len(buf)
		v := L.Get(i)
		if s, ok := v.AsString(); ok {
			buf = append(buf, s...)
		} else if f, ok := v.AsNumber(); ok {
			buf = resp.AppendFloat17g(buf, f)
		} else {
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
		args[i-1] = buf[start:len(buf):len(buf)]
	}
	return args, ""
}

func sha1hexFn(L *lua.State) int {
	if L.Top() != 1 {
		return raise(L, "wrong number of arguments")
	}
	s, _ := L.Get(1).ToString()
	sum := sha1.Sum([]byte(s))
	L.Push(lua.String(hex.EncodeToString(sum[:])))
	return 1
}

func errorReply(L *lua.State) int {
	s, ok := L.Get(1).AsString()
	if L.Top() != 1 || !ok {
		L.Push(lua.TableValue(errorTable("wrong number or type of arguments")))
		return 1
	}
	if !strings.HasPrefix(s, "-") {
		s = "-" + s
	}
	L.Push(lua.TableValue(errorTable(s)))
	return 1
}

func statusReply(L *lua.State) int {
	if _, ok := L.Get(1).AsString(); L.Top() != 1 || !ok {
		L.Push(lua.TableValue(errorTable("wrong number or type of arguments")))
		return 1
	}
	t := lua.NewTable(0, 1)
	t.SetStr("ok", L.Get(1))
	L.Push(lua.TableValue(t))
	return 1
}

func (rt *Runtime) log(L *lua.State) int {
	n := L.Top()
	if n < 2 {
		return raise(L, "redis.log() requires two arguments or more.")
	}
	lv, ok := L.Get(1).ToNumber()
	if !ok {
		return raise(L, "First argument must be a number (log level).")
	}
	level := int(lv)
	if level < LogDebug || level > LogWarning {
		return raise(L, "Invalid debug level.")
	}
	if level < rt.Verbosity || rt.Log == nil {
		return 0
	}
	var parts []string
	for i := 2; i <= n; i++ {
		if s, ok := L.Get(i).ToString(); ok {
			parts = append(parts, s)
		}
	}
	rt.Log(level, strings.Join(parts, " "))
	return 0
}

func (rt *Runtime) setResp(L *lua.State) int {
	if rt.run == nil {
		return raise(L, "redis.setresp can only be called inside a script invocation")
	}
	if L.Top() != 1 {
		return raise(L, "redis.setresp() requires one argument.")
	}
	v, _ := L.Get(1).ToNumber()
	if p := int(v); p != 2 && p != 3 {
		return raise(L, "RESP version must be 2 or 3.")
	}
	rt.run.proto = int(v)
	return 0
}

func (rt *Runtime) setRepl(L *lua.State) int {
	if rt.run == nil {
		return raise(L, "redis.set_repl can only be called inside a script invocation")
	}
	if L.Top() != 1 {
		return raise(L, "redis.set_repl() requires two arguments.")
	}
	v, _ := L.Get(1).ToNumber()
	if int(v)&^replAll != 0 {
		return raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0 // every write is persisted; there are no replicas
}

func (rt *Runtime) aclCheckCmd(L *lua.State) int {
	if rt.run == nil {
		return raise(L, "redis.acl_check_cmd can only be called inside a script invocation")
	}
	args, errMsg := commandArgs(L)
	if errMsg != "" {
		return raise(L, errMsg)
	}
	ok, refusal := rt.run.host.ACLCheck(args)
	if refusal != "" {
		return raise(L, refusal)
	}
	L.Push(lua.Bool(ok))
	return 1
}

// redisPcall is Redis 7.0's pcall: Lua's, except that an error that is a
// table with an err field comes back as that field.
func redisPcall(L *lua.State) int {
	if L.Top() == 0 {
		// Redis's version calls its own result placeholder, true.
		L.Push(lua.False)
		L.Push(lua.String("attempt to call a boolean value"))
		return 2
	}
	results, err := L.PCall(L.Get(1), L.Args(2), -1, lua.Nil)
	if err != nil {
		v := err.Value
		if t := v.AsTable(); t != nil {
			if e := t.GetStr("err"); e.IsString() || e.IsNumber() {
				v = e
			}
		}
		L.Push(lua.False)
		L.Push(v)
		return 2
	}
	L.Push(lua.True)
	for _, r := range results {
		L.Push(r)
	}
	return len(results) + 1
}
