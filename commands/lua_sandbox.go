package commands

import (
	lua "github.com/yuin/gopher-lua"
)

// Redis 7.0 locks a script's globals: reading a global that does not exist
// is an error ("Script attempted to access nonexistent global variable"),
// and so is creating one ("Attempt to modify a readonly table"); only KEYS
// and ARGV are set, by the server, before each run.

// protectGlobals sets the metatable of the globals table.
func protectGlobals(L *lua.LState) {
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		name, _ := luaToString(L.Get(2))
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", name)
		return 0
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	}))
	L.SetMetatable(L.Get(lua.GlobalsIndex), mt)
}

// setProtectedGlobal sets a global past the protection (KEYS, ARGV).
func setProtectedGlobal(L *lua.LState, name string, v lua.LValue) {
	L.Get(lua.GlobalsIndex).(*lua.LTable).RawSetString(name, v)
}
