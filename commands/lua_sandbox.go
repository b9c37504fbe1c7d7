package commands

import (
	lua "github.com/yuin/gopher-lua"
)

// Redis 7.0 locks a script's globals: reading a global that does not exist
// is an error ("Script attempted to access nonexistent global variable"),
// and so is creating one or changing a library table ("Attempt to modify a
// readonly table"); only KEYS and ARGV are set, by the server, before each
// run. The interpreter has no read-only tables, so each library table is
// replaced by an empty proxy that reads through to it and refuses writes.

// protectGlobals makes the library tables read-only and sets the
// metatable of the globals table.
func protectGlobals(L *lua.LState) {
	g := L.Get(lua.GlobalsIndex).(*lua.LTable)
	var names []lua.LValue
	g.ForEach(func(k, v lua.LValue) {
		if t, ok := v.(*lua.LTable); ok && t != g {
			names = append(names, k)
		}
	})
	for _, k := range names {
		g.RawSet(k, readOnlyProxy(L, g.RawGet(k).(*lua.LTable)))
	}
	setErrorMetatable(L, g)
}

// setErrorMetatable makes reading a missing field of t and adding one
// errors, as Redis's luaSetErrorMetatable and read-only tables do.
func setErrorMetatable(L *lua.LState, t *lua.LTable) {
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		name, _ := luaToString(L.Get(2))
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", name)
		return 0
	}))
	mt.RawSetString("__newindex", L.NewFunction(readOnlyError))
	L.SetMetatable(t, mt)
}

// readOnlyProxy is an empty table reading through to t and refusing
// writes.
func readOnlyProxy(L *lua.LState, t *lua.LTable) *lua.LTable {
	p := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(readOnlyError))
	L.SetMetatable(p, mt)
	return p
}

func readOnlyError(L *lua.LState) int {
	L.RaiseError("Attempt to modify a readonly table")
	return 0
}

// setProtectedGlobal sets a global past the protection (KEYS, ARGV).
func setProtectedGlobal(L *lua.LState, name string, v lua.LValue) {
	L.Get(lua.GlobalsIndex).(*lua.LTable).RawSetString(name, v)
}
