// Package scripting holds the libraries Redis 7.0 gives scripts beside
// Lua's own — cjson, cmsgpack, struct and bit — written for Revolver's Lua
// interpreter (package lua) to behave as Redis's C libraries do: the same
// encodings, limits, error messages, and the same table layout (so pairs
// walks their tables, and cjson and cmsgpack write keys, in Redis's order).
package scripting

import (
	"math"

	"github.com/revolver-db/revolver/lua"
)

// Open loads the four libraries in the order Redis loads them, which
// decides where their names land in the table of globals.
func Open(L *lua.State) {
	OpenCJSON(L)
	OpenStruct(L)
	OpenCMsgpack(L)
	OpenBit(L)
}

// maxCStack is Lua 5.1's LUAI_MAXCSTACK: the stack slots a C function may
// use. Redis's libraries check for room as they push (lua_checkstack) and
// fail where it runs out, which deep or long input reaches.
const maxCStack = 8000

// stackRoom is lua_checkstack: whether a C function using top slots may
// push n more.
func stackRoom(top, n int) bool { return n <= maxCStack && top+n <= maxCStack }

// checkStack is luaL_checkstack: Lua's "stack overflow (msg)" when a C
// function using top slots may not push n more.
func checkStack(L *lua.State, top, n int, msg string) {
	if !stackRoom(top, n) {
		L.Errorf("stack overflow (%s)", msg)
	}
}

// newModule makes a library table as a C library that fills it with
// lua_setfield makes it: empty, then growing (and rehashing) as each name
// goes in, which decides the order pairs walks it in.
func newModule(funcs []lua.LibFunc) *lua.Table {
	t := lua.NewTable(0, 0)
	lua.SetFuncs(t, funcs)
	return t
}

// The conversions of a double to an integer type that x86-64 code compiled
// by GCC performs: truncation toward zero, and for a value out of range
// (or NaN) the "integer indefinite", the most negative value.

func cInt64(f float64) int64 {
	if f >= -9.223372036854775808e18 && f < 9.223372036854775808e18 {
		return int64(f)
	}
	return math.MinInt64
}

func cInt32(f float64) int32 {
	if f > -2147483649.0 && f < 2147483648.0 {
		return int32(f)
	}
	return math.MinInt32
}

// cUint64 is the cast to an unsigned 64-bit integer: values from 2^63 go
// through the signed conversion shifted down by 2^63, so 2^64 and beyond
// come out as 0.
func cUint64(f float64) uint64 {
	if f >= 9.223372036854775808e18 {
		return uint64(cInt64(f-9.223372036854775808e18)) ^ 1<<63
	}
	return uint64(cInt64(f))
}
