package commands

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/revolver-db/revolver/resp"
)

// Running a script and turning its result into a reply, as Redis 7.0's
// luaCallFunction and luaReplyToRedisReply do.

// runScript calls script s (EVAL and EVALSHA) with KEYS and ARGV under c
// and writes its reply (or its error) to c.W.
func (vm *LuaVM) runScript(c *Ctx, sha string, s *luaScript, keys, args [][]byte, ro bool) {
	run := vm.prepareRun(c, sha, s.flags, ro)
	if run == nil {
		return
	}
	run.eval = true
	L := vm.L
	setProtectedGlobal(L, "KEYS", stringArray(L, keys))
	setProtectedGlobal(L, "ARGV", stringArray(L, args))
	L.Push(s.fn)
	vm.callScript(c, L, vm.errHandler, 0, run)
}

// prepareRun checks a script's flags against the call as Redis's
// scriptPrepareForRun does and returns the run, or nil after replying
// with the refusal.
func (vm *LuaVM) prepareRun(c *Ctx, name string, flags scriptFlags, ro bool) *scriptRun {
	declared := flags&flagEvalCompat == 0
	if declared && flags&flagNoWrites == 0 && ro {
		c.W.Error("ERR Can not execute a script with write flag using *_ro command.")
		return nil
	}
	// Scripts that declare flags and may write are deny-oom commands.
	if declared && flags&(flagNoWrites|flagAllowOOM) == 0 && c.Srv.OverMaxMemory() {
		c.W.Error("OOM command not allowed when used memory > 'maxmemory'.")
		return nil
	}
	run := &scriptRun{ctx: c, db: c.DB, resp: 2, funcname: name,
		readOnly: ro || declared && flags&flagNoWrites != 0,
		allowOOM: declared && flags&flagAllowOOM != 0}
	if !run.allowOOM {
		run.oomAtStart = c.Srv.OverMaxMemory()
	}
	run.conn = scriptConn{Conn: c.Conn, run: run}
	return run
}

// callScript calls the function on L's stack, with nargs arguments above
// it, as run, and replies with its result or its error.
func (vm *LuaVM) callScript(c *Ctx, L *lua.LState, errHandler *lua.LFunction, nargs int, run *scriptRun) {
	vm.run = run
	vm.beginWatch(run)
	watched := true
	defer func() {
		if watched {
			vm.endWatch(run)
		}
		vm.run = nil
		if r := recover(); r != nil {
			// The interpreter panicked (a bug, here or in it): its state
			// cannot be trusted, so the next script gets a new one. The
			// server's handler reports the panic.
			vm.rebuild(L)
			panic(r)
		}
	}()
	err := L.PCall(nargs, 1, errHandler)
	watched = false
	vm.endWatch(run)
	if err != nil {
		if run.killed.Load() {
			err = killedError(err)
		}
		vm.writeScriptError(c, err)
		return
	}
	v := L.Get(-1)
	L.Pop(1)
	luaToReply(c.W, c.Srv, run.resp, v, 0)
}

func stringArray(L *lua.LState, items [][]byte) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for i, it := range items {
		t.RawSetInt(i+1, lua.LString(it))
	}
	return t
}

// errorHandler is Redis's __redis__err__handler: it turns any error
// into a table {err=..., source=..., line=...}, the position being where
// the script was when it failed (the caller of a Go function that raised).
func (sb *sandbox) errorHandler(L *lua.LState) int {
	e := L.Get(1)
	t, ok := e.(*lua.LTable)
	if !ok {
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+luaErrorText(e)))
	}
	for level := 1; level < 4; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 {
			continue
		}
		t.RawSetString("source", lua.LString(sb.source(dbg.Source)))
		t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
		break
	}
	L.Push(t)
	return 1
}

// luaErrorText is an error value as Lua's tostring shows it, with the
// interpreter's "@user_script:" position and its argument errors written
// as Lua writes them.
func luaErrorText(e lua.LValue) string {
	s := e.String()
	if rest, ok := strings.CutPrefix(s, "@"); ok {
		s = rest
	}
	if strings.Contains(s, "bad argument #") {
		s = argErrorRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := argErrorRE.FindStringSubmatch(m)
			name := sub[2]
			if name == "(anonymous)" {
				name = "?"
			}
			return "bad argument #" + sub[1] + " to '" + name + "' ("
		})
	}
	return s
}

var argErrorRE = regexp.MustCompile(`bad argument #(\d+) to ([^ ']+) \(`)

// writeScriptError answers a script that failed, as Redis's
// luaCallFunction does: "-<err> script: f_<sha>, on @user_script:<line>."
func (vm *LuaVM) writeScriptError(c *Ctx, err error) {
	apiErr, ok := err.(*lua.ApiError)
	if !ok {
		c.W.Error(fmt.Sprintf("ERR Error running script %s, %.100s\n", vm.run.funcname, err.Error()))
		return
	}
	t, ok := apiErr.Object.(*lua.LTable)
	if !ok {
		c.W.Error(fmt.Sprintf("ERR Error running script %s, %.100s\n", vm.run.funcname, luaErrorText(apiErr.Object)))
		return
	}
	msg := errField(t)
	if src, line := t.RawGetString("source"), t.RawGetString("line"); src.Type() == lua.LTString &&
		(line.Type() == lua.LTNumber || line.Type() == lua.LTString) {
		msg += fmt.Sprintf(" script: %s, on %s:%s.", vm.run.funcname, src.String(), lua.LVAsString(line))
	}
	writeScriptErrorReply(c.W, c.Srv, msg, errorCounted(t), 0)
}

// errField is an error table's message ("ERR ..." when it has none).
func errField(t *lua.LTable) string {
	if e := t.RawGetString("err"); e.Type() == lua.LTString || e.Type() == lua.LTNumber {
		return lua.LVAsString(e)
	}
	return "ERR unknown error"
}

// luaToReply writes a Lua value as a reply (Redis's luaReplyToRedisReply):
// strings are bulk, numbers integers (truncated), true 1 and false nil (in
// RESP3 booleans), tables arrays up to the first nil, or, by their single
// field, an error, a status, a double, a big number, a verbatim string, a
// map or a set.
func luaToReply(w *resp.Writer, srv Server, proto int, v lua.LValue, depth int) {
	if depth > 1000 {
		writeScriptErrorReply(w, srv, "ERR reached lua stack limit", false, depth)
		return
	}
	switch x := v.(type) {
	case lua.LString:
		w.BulkString(string(x))
	case lua.LBool:
		switch {
		case proto == 3:
			w.Bool(bool(x))
		case bool(x):
			w.Int(1)
		default:
			w.Null()
		}
	case lua.LNumber:
		w.Int(luaNumberToInt(float64(x)))
	case *lua.LTable:
		luaTableToReply(w, srv, proto, x, depth)
	default:
		w.Null()
	}
}

// luaNumberToInt is C's (long long) cast of a Lua number: truncation, and
// Redis's platform behaviour for values out of range.
func luaNumberToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return math.MinInt64
	}
	return int64(f)
}

func luaTableToReply(w *resp.Writer, srv Server, proto int, t *lua.LTable, depth int) {
	if e := t.RawGetString("err"); e.Type() == lua.LTString {
		writeScriptErrorReply(w, srv, errField(t), errorCounted(t), depth)
		return
	}
	if ok := t.RawGetString("ok"); ok.Type() == lua.LTString {
		w.Simple(strings.NewReplacer("\r", " ", "\n", " ").Replace(ok.String()))
		return
	}
	if d := t.RawGetString("double"); d.Type() == lua.LTNumber {
		w.Double(float64(d.(lua.LNumber)))
		return
	}
	if b := t.RawGetString("big_number"); b.Type() == lua.LTString {
		w.BigNumber(strings.NewReplacer("\r", " ", "\n", " ").Replace(b.String()))
		return
	}
	if vs, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		f, s := vs.RawGetString("format"), vs.RawGetString("string")
		if f.Type() == lua.LTString && s.Type() == lua.LTString {
			w.Verbatim(f.String(), s.String())
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		var keys, vals []lua.LValue
		m.ForEach(func(k, v lua.LValue) {
			keys = append(keys, k)
			vals = append(vals, v)
		})
		w.Map(len(keys))
		for i := range keys {
			luaToReply(w, srv, proto, keys[i], depth+1)
			luaToReply(w, srv, proto, vals[i], depth+1)
		}
		return
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		var members []lua.LValue
		s.ForEach(func(k, _ lua.LValue) { members = append(members, k) })
		w.Set(len(members))
		for _, k := range members {
			luaToReply(w, srv, proto, k, depth+1)
		}
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		luaToReply(w, srv, proto, t.RawGetInt(i), depth+1)
	}
}

// replyToLua turns a command's reply into a Lua value (Redis's
// redisProtocolToLuaType): integers numbers, bulk strings strings, a nil
// false, arrays tables, a status {ok=...}, an error {err=...}; RESP3's
// types as tables with their one field, booleans and nulls as themselves.
func replyToLua(L *lua.LState, v resp.Value) lua.LValue {
	switch v.Kind {
	case resp.KindInt:
		return lua.LNumber(v.Int)
	case resp.KindBulk:
		return lua.LString(v.Str)
	case resp.KindSimple:
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(v.Str))
		return t
	case resp.KindError:
		t := luaErrorTable(L, "-"+v.Str)
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return t
	case resp.KindNull:
		if v.Nil2 != 0 {
			return lua.LFalse // RESP2's null bulk and null array
		}
		return lua.LNil
	case resp.KindBool:
		return lua.LBool(v.Int != 0)
	case resp.KindDouble:
		t := L.CreateTable(0, 1)
		f, _ := parseRESPDouble(v.Str)
		t.RawSetString("double", lua.LNumber(f))
		return t
	case resp.KindBigNumber:
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(v.Str))
		return t
	case resp.KindVerbatim:
		format, text := "txt", v.Str
		if len(text) >= 4 && text[3] == ':' {
			format, text = text[:3], text[4:]
		}
		inner := L.CreateTable(0, 2)
		inner.RawSetString("string", lua.LString(text))
		inner.RawSetString("format", lua.LString(format))
		t := L.CreateTable(0, 1)
		t.RawSetString("verbatim_string", inner)
		return t
	case resp.KindMap:
		m := L.CreateTable(0, len(v.Elems)/2)
		for i := 0; i+1 < len(v.Elems); i += 2 {
			m.RawSet(replyToLua(L, v.Elems[i]), replyToLua(L, v.Elems[i+1]))
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("map", m)
		return t
	case resp.KindSet:
		s := L.CreateTable(0, len(v.Elems))
		for _, e := range v.Elems {
			s.RawSet(replyToLua(L, e), lua.LTrue)
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("set", s)
		return t
	case resp.KindArray, resp.KindPush:
		t := L.CreateTable(len(v.Elems), 0)
		for i, e := range v.Elems {
			t.RawSetInt(i+1, replyToLua(L, e))
		}
		return t
	}
	return lua.LFalse
}

func parseRESPDouble(s string) (float64, bool) {
	switch s {
	case "inf":
		return math.Inf(1), true
	case "-inf":
		return math.Inf(-1), true
	}
	var f float64
	_, err := fmt.Sscanf(s, "%g", &f)
	return f, err == nil
}

// luaErrorTable is Redis's luaPushErrorBuff: {err="CODE message"}, the
// code the first word of a "-CODE message" string, or ERR.
func luaErrorTable(L *lua.LState, e string) *lua.LTable {
	msg, code := e, "ERR"
	if rest, ok := strings.CutPrefix(e, "-"); ok {
		if c, m, found := strings.Cut(rest, " "); found {
			code, msg = c, m
		} else {
			msg = rest
		}
	}
	msg = strings.Trim(msg, "\r\n")
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(code+" "+msg))
	return t
}

// killedError is the error of a killed script: Redis's message, at the
// position where the script stopped.
func killedError(err error) error {
	if apiErr, ok := err.(*lua.ApiError); ok {
		if t, ok := apiErr.Object.(*lua.LTable); ok {
			t.RawSetString("err", lua.LString("ERR "+errScriptKilled.Error()))
		}
	}
	return err
}
