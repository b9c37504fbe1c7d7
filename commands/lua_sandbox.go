package commands

import (
	"runtime/metrics"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Redis 7.0's sandbox: the globals table, every table reachable from it
// and their metatables are read-only, for every script of every client
// shares them. Reading a global that does not exist is an error ("Script
// attempted to access nonexistent global variable"), and so is any write
// ("Attempt to modify a readonly table"); only the server sets KEYS and
// ARGV. Redis marks the tables read-only inside its Lua; the interpreter
// here has no such mark, so each protected table is replaced by an empty
// proxy that reads through to it and refuses writes, and every library
// function that could write to a table past its metatable (rawset,
// setmetatable, table.insert...) or read one past it (rawget, next,
// getmetatable) is replaced by one that knows the proxies.

const readonlyTableError = "Attempt to modify a readonly table"

// sandbox is one Lua state's protection: the proxies and what they stand
// for, and the environment its code runs in.
type sandbox struct {
	// proxies maps each read-only proxy to the table it shows.
	proxies map[*lua.LTable]*lua.LTable
	// shown maps a proxy to the metatable getmetatable returns for it:
	// the globals' error metatable (itself protected); none for the
	// library tables, which have none in Redis.
	shown map[*lua.LTable]lua.LValue
	// stringMeta is what getmetatable returns for a string: a protected
	// view whose __index is the string library as scripts see it.
	stringMeta lua.LValue
	// env is the environment of code the state runs: chunks loaded by
	// loadstring and load get it, as do the library functions.
	env *lua.LTable
	// collectgarbage's settings, which the interpreter does not have
	// (Go's collector runs the heap): kept so that they read back.
	gcPause, gcStepMul float64
	// chunkSources maps the name messages give a chunk loadstring made
	// ([string "..."]) back to its source, which Redis's error replies
	// show after "on"; bounded, as scripts may load chunks without end.
	chunkSources map[string]string
}

const maxChunkSources = 256

// protectState locks the state's globals as Redis does and returns the
// proxy scripts see as _G. Call it once every library is loaded.
func protectState(L *lua.LState) (*sandbox, *lua.LTable) {
	sb := &sandbox{proxies: map[*lua.LTable]*lua.LTable{}, shown: map[*lua.LTable]lua.LValue{},
		gcPause: 200, gcStepMul: 200, chunkSources: map[string]string{}}
	real := L.G.Global
	separateStringMetatable(L, real.RawGetString("string").(*lua.LTable))
	sb.installBaseFunctions(L, real)
	errMeta := setErrorMetatable(L, real)
	globals := sb.protect(L, real)
	real.RawSetString("_G", globals)
	sb.shown[globals] = sb.protect(L, errMeta)

	// The string metatable the interpreter uses keeps the real library
	// (method calls stay one lookup); scripts see a protected copy whose
	// __index is the library's proxy, as string is.
	view := L.NewTable()
	view.RawSetString("__index", real.RawGetString("string"))
	sb.stringMeta = sb.protect(L, view)
	sb.setEnv(L, globals)
	return sb, globals
}

// separateStringMetatable gives strings a metatable of their own: the
// interpreter uses the string library itself, so the library would show
// an __index field.
func separateStringMetatable(L *lua.LState, strLib *lua.LTable) {
	strLib.RawSetString("__index", lua.LNil)
	mt := L.NewTable()
	mt.RawSetString("__index", strLib)
	L.SetMetatable(lua.LString(""), mt)
}

// protect returns the read-only proxy of t, protecting the tables t holds
// first (in place: t's entry becomes the proxy of the inner table).
func (sb *sandbox) protect(L *lua.LState, t *lua.LTable) *lua.LTable {
	for p, target := range sb.proxies {
		if target == t {
			return p
		}
	}
	p := L.NewTable()
	sb.proxies[p] = t
	var inner []lua.LValue
	t.ForEach(func(k, v lua.LValue) {
		if tv, ok := v.(*lua.LTable); ok && tv != t {
			if _, isProxy := sb.proxies[tv]; !isProxy {
				inner = append(inner, k)
			}
		}
	})
	for _, k := range inner {
		t.RawSet(k, sb.protect(L, t.RawGet(k).(*lua.LTable)))
	}
	meta := L.NewTable()
	meta.RawSetString("__index", t)
	meta.RawSetString("__newindex", L.NewFunction(readonlyAssign))
	L.SetMetatable(p, meta)
	if _, ok := sb.shown[p]; !ok {
		sb.shown[p] = lua.LNil
	}
	return p
}

// setEnv makes env the environment of the state's code: every library
// function (the chunks loadstring makes take their creator's) and the
// state itself (coroutines and functions made later).
func (sb *sandbox) setEnv(L *lua.LState, env *lua.LTable) {
	sb.env = env
	L.Env = env
	seen := map[*lua.LTable]bool{}
	var walk func(t *lua.LTable)
	walk = func(t *lua.LTable) {
		if seen[t] {
			return
		}
		seen[t] = true
		t.ForEach(func(_, v lua.LValue) {
			switch x := v.(type) {
			case *lua.LFunction:
				x.Env = env
			case *lua.LTable:
				walk(x)
			}
		})
	}
	walk(L.G.Global)
	for _, target := range sb.proxies {
		walk(target)
	}
}

// target is the table a script's table argument stands for: the real one
// behind a proxy.
func (sb *sandbox) target(t *lua.LTable) *lua.LTable {
	if real, ok := sb.proxies[t]; ok {
		return real
	}
	return t
}

// checkWritable raises Redis's error when t is read-only. The error has no
// position, as Redis raises it from inside the library function.
func (sb *sandbox) checkWritable(L *lua.LState, t *lua.LTable) {
	if _, ok := sb.proxies[t]; ok {
		L.Error(lua.LString(readonlyTableError), 0)
	}
}

// setErrorMetatable makes reading a missing field of t an error, as
// Redis's luaSetErrorMetatable does for the globals; it returns the
// metatable.
func setErrorMetatable(L *lua.LState, t *lua.LTable) *lua.LTable {
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(nonexistentGlobal))
	L.SetMetatable(t, mt)
	return mt
}

// nonexistentGlobal is the error metatable's __index.
func nonexistentGlobal(L *lua.LState) int {
	name, _ := luaToString(L.Get(2))
	L.RaiseError("Script attempted to access nonexistent global variable '%s'", name)
	return 0
}

// readonlyAssign is a proxy's __newindex: an assignment in the script, so
// the error carries the script's position.
func readonlyAssign(L *lua.LState) int {
	L.RaiseError(readonlyTableError)
	return 0
}

// installBaseFunctions replaces the interpreter's functions that reach
// past metatables with ones that respect the proxies, removes what Redis
// 7.0 does not give scripts, and adds the Lua 5.1 functions the
// interpreter lacks.
func (sb *sandbox) installBaseFunctions(L *lua.LState, g *lua.LTable) {
	// Not in Redis 7.0: file and module loading, printing, environments
	// (an escape from the globals' protection), the interpreter's own.
	for _, name := range []string{"dofile", "loadfile", "require", "module", "print", "newproxy",
		"getfenv", "setfenv", "_printregs", "_GOPHER_LUA_VERSION"} {
		g.RawSetString(name, lua.LNil)
	}
	origRawget := g.RawGetString("rawget").(*lua.LFunction)
	origNext := g.RawGetString("next").(*lua.LFunction)
	next := L.NewFunction(func(L *lua.LState) int {
		sb.retarget(L)
		return origNext.GFunction(L)
	})
	funcs := map[string]lua.LGFunction{
		"rawset": func(L *lua.LState) int {
			t := L.CheckTable(1)
			sb.checkWritable(L, t)
			L.RawSet(t, L.CheckAny(2), L.CheckAny(3))
			L.SetTop(1)
			return 1
		},
		"rawget": func(L *lua.LState) int {
			sb.retarget(L)
			return origRawget.GFunction(L)
		},
		"setmetatable": sb.setmetatable,
		"getmetatable": sb.getmetatable,
		"pairs": func(L *lua.LState) int {
			t := L.CheckTable(1)
			L.SetTop(0)
			L.Push(next)
			L.Push(t)
			L.Push(lua.LNil)
			return 3
		},
		"loadstring":     sb.loadstring,
		"load":           sb.load,
		"collectgarbage": sb.collectgarbage,
		"gcinfo": func(L *lua.LState) int {
			L.Push(lua.LNumber(int64(luaHeapBytes() / 1024)))
			return 1
		},
	}
	for name, f := range funcs {
		g.RawSetString(name, L.NewFunction(f))
	}
	g.RawSetString("next", next)
	sb.installTableFunctions(L, g.RawGetString("table").(*lua.LTable))
	str := g.RawGetString("string").(*lua.LTable)
	str.RawSetString("gfind", str.RawGetString("gmatch"))
	str.RawSetString("dump", L.NewFunction(stringDump))
	math := g.RawGetString("math").(*lua.LTable)
	math.RawSetString("mod", math.RawGetString("fmod"))
}

// retarget replaces a proxy in the first argument by the table it shows.
func (sb *sandbox) retarget(L *lua.LState) {
	if t, ok := L.Get(1).(*lua.LTable); ok {
		if real, isProxy := sb.proxies[t]; isProxy {
			L.Replace(1, real)
		}
	}
}

// setmetatable is Lua 5.1's: tables only, a protected metatable refused,
// and a read-only table refused as Redis refuses it.
func (sb *sandbox) setmetatable(L *lua.LState) int {
	t := L.CheckTable(1)
	mt := L.Get(2)
	if mt != lua.LNil {
		if _, ok := mt.(*lua.LTable); !ok {
			L.ArgError(2, "nil or table expected")
		}
	}
	sb.checkWritable(L, t)
	if old, ok := t.Metatable.(*lua.LTable); ok && old.RawGetString("__metatable") != lua.LNil {
		L.RaiseError("cannot change a protected metatable")
	}
	t.Metatable = mt
	L.SetTop(1)
	return 1
}

// getmetatable shows a proxy's metatable as Redis has it, and the string
// metatable as a protected view.
func (sb *sandbox) getmetatable(L *lua.LState) int {
	v := L.CheckAny(1)
	switch x := v.(type) {
	case *lua.LTable:
		if shown, ok := sb.shown[x]; ok {
			L.Push(shown)
			return 1
		}
		L.Push(L.GetMetatable(x))
	case lua.LString:
		L.Push(sb.stringMeta)
	default:
		// Nothing else has a metatable a script could reach: userdata
		// (cjson.null) is shared by every state and stays without one.
		L.Push(lua.LNil)
	}
	return 1
}

// loadstring is Lua 5.1's: the chunk named by its text, in the state's
// environment. Redis's Lua reads only text, so a binary chunk is a syntax
// error at its first byte.
func (sb *sandbox) loadstring(L *lua.LState) int {
	src := L.CheckString(1)
	return sb.loadChunk(L, src, L.OptString(2, src))
}

// load is Lua 5.1's load: the chunk's pieces come from a function.
func (sb *sandbox) load(L *lua.LState) int {
	fn := L.CheckFunction(1)
	name := L.OptString(2, "=(load)")
	var b strings.Builder
	for {
		L.Push(fn)
		L.Call(0, 1)
		piece := L.Get(-1)
		L.Pop(1)
		if piece == lua.LNil {
			break
		}
		s, ok := piece.(lua.LString)
		if !ok {
			if n, isNum := piece.(lua.LNumber); isNum {
				s = lua.LString(n.String())
			} else {
				L.Push(lua.LNil)
				L.Push(lua.LString("reader function must return a string"))
				return 2
			}
		}
		if s == "" {
			break
		}
		b.WriteString(string(s))
	}
	return sb.loadChunk(L, b.String(), name)
}

func (sb *sandbox) loadChunk(L *lua.LState, src, name string) int {
	id := luaChunkID(name)
	if strings.HasPrefix(src, "\x1b") {
		L.Push(lua.LNil)
		L.Push(lua.LString(id + ":1: unexpected symbol near 'char(27)'"))
		return 2
	}
	if id != name {
		if len(sb.chunkSources) >= maxChunkSources {
			clear(sb.chunkSources)
		}
		sb.chunkSources[id] = name
	}
	fn, err := L.Load(strings.NewReader(src), id)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(compileError(err, 1+strings.Count(src, "\n"))))
		return 2
	}
	prepareChunk(fn.Proto)
	fn.Env = sb.env
	L.Push(fn)
	return 1
}

// luaChunkID is how Lua 5.1 names a chunk in messages (luaO_chunkid): "="
// names without the "=", "@" names as they are (the position's "@" is
// dropped when the message is read), any other source as [string "its
// first line"], cut to fit Lua's 60 bytes. Lua reads the name as a C
// string: it ends at a NUL.
func luaChunkID(name string) string {
	const idSize = 60
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	switch {
	case strings.HasPrefix(name, "="):
		return truncate(name[1:], idSize-1)
	case strings.HasPrefix(name, "@"):
		return name
	}
	line := name
	if i := strings.IndexAny(name, "\r\n"); i >= 0 {
		line = name[:i]
	}
	line = truncate(line, idSize-len(` [string "..."] `)-1)
	if len(line) < len(name) {
		return `[string "` + line + `..."]`
	}
	return `[string "` + line + `"]`
}

// source is the source of the chunk messages name id.
func (sb *sandbox) source(id string) string {
	if src, ok := sb.chunkSources[id]; ok {
		return src
	}
	return id
}

// stringDump is Lua 5.1's string.dump as far as a script can use it: Lua
// functions only. Redis's Lua cannot load the result back (it reads only
// text); here it is Lua 5.1's header and the function's source name.
func stringDump(L *lua.LState) int {
	fn := L.CheckFunction(1)
	if fn.IsG {
		L.RaiseError("unable to dump given function")
	}
	// ESC "Lua", version 5.1, official format, little endian, sizes of
	// int, size_t, Instruction and lua_Number, numbers not integral.
	b := []byte{0x1b, 'L', 'u', 'a', 0x51, 0, 1, 4, 8, 4, 8, 0}
	b = append(b, fn.Proto.SourceName...)
	L.Push(lua.LString(b))
	return 1
}

// collectgarbage is Lua 5.1's, over Go's collector: a script cannot run
// or stop the process's collector, so "collect" and "step" do nothing,
// and "count" is the heap's size.
func (sb *sandbox) collectgarbage(L *lua.LState) int {
	opt := L.OptString(1, "collect")
	arg := float64(L.OptNumber(2, 0))
	switch opt {
	case "stop", "restart", "collect":
		L.Push(lua.LNumber(0))
	case "count":
		L.Push(lua.LNumber(float64(luaHeapBytes()) / 1024))
	case "step":
		L.Push(lua.LFalse)
	case "setpause":
		L.Push(lua.LNumber(sb.gcPause))
		sb.gcPause = arg
	case "setstepmul":
		L.Push(lua.LNumber(sb.gcStepMul))
		sb.gcStepMul = arg
	default:
		L.ArgError(1, "invalid option '"+opt+"'")
	}
	return 1
}

// luaHeapBytes is the size of the heap's live objects, read without
// stopping the world.
func luaHeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return s[0].Value.Uint64()
	}
	return 0
}

// installTableFunctions makes the table library's writers refuse
// read-only tables and adds Lua 5.1's foreach, foreachi and setn.
func (sb *sandbox) installTableFunctions(L *lua.LState, tab *lua.LTable) {
	insert := tab.RawGetString("insert").(*lua.LFunction)
	remove := tab.RawGetString("remove").(*lua.LFunction)
	sort := tab.RawGetString("sort").(*lua.LFunction)
	funcs := map[string]lua.LGFunction{
		"insert": func(L *lua.LState) int {
			sb.checkWritable(L, L.CheckTable(1))
			return insert.GFunction(L)
		},
		// A read-only table has no array part: nothing to remove or sort,
		// so Redis writes nothing and raises nothing.
		"remove": func(L *lua.LState) int {
			if _, ok := sb.proxies[L.CheckTable(1)]; ok {
				return 0
			}
			return remove.GFunction(L)
		},
		"sort": func(L *lua.LState) int {
			if _, ok := sb.proxies[L.CheckTable(1)]; ok {
				return 0
			}
			return sort.GFunction(L)
		},
		"setn": func(L *lua.LState) int {
			L.RaiseError("'setn' is obsolete")
			return 0
		},
		"foreach": func(L *lua.LState) int {
			t := sb.target(L.CheckTable(1))
			f := L.CheckFunction(2)
			for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
				L.Push(f)
				L.Push(k)
				L.Push(v)
				L.Call(2, 1)
				if r := L.Get(-1); r != lua.LNil {
					return 1
				}
				L.Pop(1)
			}
			return 0
		},
		"foreachi": func(L *lua.LState) int {
			t := sb.target(L.CheckTable(1))
			f := L.CheckFunction(2)
			n := t.Len()
			for i := 1; i <= n; i++ {
				L.Push(f)
				L.Push(lua.LNumber(i))
				L.Push(t.RawGetInt(i))
				L.Call(2, 1)
				if r := L.Get(-1); r != lua.LNil {
					return 1
				}
				L.Pop(1)
			}
			return 0
		},
	}
	for name, f := range funcs {
		tab.RawSetString(name, L.NewFunction(f))
	}
}

// setProtectedGlobal sets a global past the protection (KEYS, ARGV).
func setProtectedGlobal(L *lua.LState, name string, v lua.LValue) {
	L.G.Global.RawSetString(name, v)
}
