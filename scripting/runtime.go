// Package scripting is Redis's script runtime on Revolver's Lua (package
// lua), as Redis keeps script_lua.c and function_lua.c apart from eval.c
// and functions.c: the interpreter set up as Redis sets one up (its
// libraries, the redis table, Redis's math.random, the sandbox), running
// a script or function and turning its result or its error into a reply,
// redis.call's replies into Lua values, and FUNCTION libraries' loading.
// Commands reach the server through a Host; nothing here knows the
// engine.
package scripting

import (
	"github.com/revolver-db/revolver/lua"
)

// Runtime is one Lua interpreter for scripts: EVAL's, or FUNCTION's.
type Runtime struct {
	L          *lua.State
	errHandler lua.Value
	rand       *Rand
	run        *run // the script running now; nil between scripts

	// Log writes redis.log's lines; nil drops them. Verbosity is the
	// least level written (LogDebug...).
	Log       func(level int, msg string)
	Verbosity int

	lib *libraryEngine // FUNCTION's runtime only
}

// Redis's log levels (redis.LOG_*).
const (
	LogDebug = iota
	LogVerbose
	LogNotice
	LogWarning
)

// NewEval makes the interpreter EVAL scripts run in: Redis's libraries and
// redis table (with the debugger's no-op entries), the error handler as
// the global __redis__err__handler, and the globals locked. math.random
// draws from r.
func NewEval(r *Rand) *Runtime {
	rt := &Runtime{Verbosity: LogNotice, rand: r}
	L := rt.newState()
	redis := L.Globals().GetStr("redis").AsTable()
	lua.SetFuncs(redis, []lua.LibFunc{
		{Name: "breakpoint", Fn: func(L *lua.State) int { L.Push(lua.False); return 1 }},
		{Name: "debug", Fn: func(*lua.State) int { return 0 }},
		{Name: "replicate_commands", Fn: func(L *lua.State) int { L.Push(lua.True); return 1 }},
	})
	rt.installErrorHandler(true)
	lockGlobals(L)
	return rt
}

// newState makes an interpreter with what both kinds share: Lua's and
// Redis's libraries (loaded in Redis's order, so tables walk in its
// order), Redis's pcall, the redis table and Redis's math.random.
func (rt *Runtime) newState() *lua.State {
	L := lua.NewState()
	rt.L = L
	// Lua's libraries leave out what Redis does not give scripts (dofile,
	// loadfile, print, getfenv, setfenv, newproxy).
	L.OpenLibs()
	g := L.Globals()
	g.SetStr("debug", lua.TableValue(lua.NewTable(0, 0))) // Redis loads it, then drops it
	Open(L)
	g.SetStr("pcall", lua.FunctionValue(lua.NewFunction("pcall", redisPcall)))
	rt.registerRedisAPI(L)
	return L
}

// installErrorHandler makes Redis's error handler; for EVAL it is the
// global __redis__err__handler. Redis's code drops the debug library
// right before, leaving the globals as its interpreter has them.
func (rt *Runtime) installErrorHandler(global bool) {
	g := rt.L.Globals()
	g.SetStr("debug", lua.Nil)
	h := lua.FunctionValue(lua.NewFunction("__redis__err__handler", rt.errorHandler))
	if global {
		g.SetStr("__redis__err__handler", h)
	}
	rt.errHandler = h
}

// lockGlobals makes reading a missing global an error and every table
// reachable from the globals read-only, metatables included (Redis's
// luaSetErrorMetatable and luaSetTableProtectionRecursively). Strings'
// metatable is locked too.
func lockGlobals(L *lua.State) {
	g := L.Globals()
	setErrorMetatable(g)
	protect(g)
	if mt := L.StringMetatable(); mt != nil {
		protect(mt)
	}
}

// setErrorMetatable gives t a metatable whose __index raises Redis's
// error for a missing name.
func setErrorMetatable(t *lua.Table) {
	mt := lua.NewTable(0, 1)
	mt.SetStr("__index", lua.FunctionValue(lua.NewFunction("__index", nonexistentGlobal)))
	t.SetMetatable(mt)
}

func nonexistentGlobal(L *lua.State) int {
	if L.Top() != 2 {
		L.Errorf("Wrong number of arguments to luaProtectedTableError")
	}
	name, ok := L.Get(2).ToString()
	if !ok {
		L.Errorf("Second argument to luaProtectedTableError must be a string or number")
	}
	L.Errorf("Script attempted to access nonexistent global variable '%s'", name)
	return 0
}

// protect marks t and everything it reaches read-only.
func protect(t *lua.Table) {
	if t.ReadOnly() {
		return
	}
	t.SetReadOnly(true)
	t.ForEach(func(_, v lua.Value) {
		if inner := v.AsTable(); inner != nil {
			protect(inner)
		}
	})
	if mt := t.Metatable(); mt != nil {
		protect(mt)
	}
}
