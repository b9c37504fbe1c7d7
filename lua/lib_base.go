package lua

import (
	"strings"

	"github.com/revolver-db/revolver/libm"
)

// The base library as Redis 7.0's Lua 5.1 has it (lbaselib.c), less what
// scripts never get (dofile, loadfile, print, getfenv, setfenv, newproxy:
// their names are left dead in the globals, as Redis's allow list leaves
// them); load and loadstring are in lib_load.go.

// maxCStack is LUAI_MAXCSTACK: the values a Go function may have on its
// frame, which bounds unpack's and string.byte's results.
const maxCStack = 8000

// Lua's defaults for collectgarbage's "setpause" and "setstepmul"
// (LUAI_GCPAUSE, LUAI_GCMUL).
const (
	defaultGCPause   = 200
	defaultGCStepMul = 200
)

// libGlobals is the library state every thread of an interpreter shares.
type libGlobals struct {
	gcPause, gcStepMul int
	rand48             uint64 // math.random's generator (lib_math.go)
	// allocated counts the bytes of the tables, closures and strings the
	// running code made since the last collection, and resident the size
	// of what the interpreter holds (its libraries' tables): together
	// they are collectgarbage("count"). Go's collector does the actual
	// work, for the whole process; this is the interpreter's own share.
	allocated, resident int64
}

// openBase sets the base library's globals, inserted in lbaselib.c's
// order, which decides the globals table's layout.
func openBase(L *State) {
	L.g.lib.gcPause, L.g.lib.gcStepMul = defaultGCPause, defaultGCStepMul
	g := L.globals
	g.SetStr("_G", TableValue(g))
	SetFuncs(g, []LibFunc{
		{"assert", baseAssert},
		{"collectgarbage", baseCollectGarbage},
		{"dofile", nil},
		{"error", baseError},
		{"gcinfo", baseGCInfo},
		{"getfenv", nil},
		{"getmetatable", baseGetMetatable},
		{"loadfile", nil},
		{"load", baseLoad},
		{"loadstring", baseLoadString},
		{"next", baseNext},
		{"pcall", basePCall},
		{"print", nil},
		{"rawequal", baseRawEqual},
		{"rawget", baseRawGet},
		{"rawset", baseRawSet},
		{"select", baseSelect},
		{"setfenv", nil},
		{"setmetatable", baseSetMetatable},
		{"tonumber", baseToNumber},
		{"tostring", baseToString},
		{"type", baseType},
		{"unpack", baseUnpack},
		{"xpcall", baseXPCall},
	})
	g.SetStr("_VERSION", String("Lua 5.1"))
	// ipairs and pairs hand out iterators of their own, as Lua's keep
	// them as upvalues: pairs' next is not the global next.
	ipairsIter := FunctionValue(NewFunction("ipairs_aux", ipairsAux))
	g.SetStr("ipairs", FunctionValue(NewFunction("ipairs", func(L *State) int {
		L.CheckType(1, TypeTable)
		L.Push(ipairsIter)
		L.Push(L.Get(1))
		L.Push(Number(0))
		return 3
	})))
	pairsIter := FunctionValue(NewFunction("next", baseNext))
	g.SetStr("pairs", FunctionValue(NewFunction("pairs", func(L *State) int {
		L.CheckType(1, TypeTable)
		L.Push(pairsIter)
		L.Push(L.Get(1))
		L.Push(Nil)
		return 3
	})))
	g.SetStr("newproxy", Nil) // registered, then dropped by Redis (see LibFunc)
}

func baseAssert(L *State) int {
	L.CheckAny(1)
	if !L.Get(1).Truthy() {
		L.Errorf("%s", L.OptString(2, "assertion failed!"))
	}
	return L.Top()
}

var gcOptions = []string{"stop", "restart", "collect", "count", "step", "setpause", "setstepmul"}

// baseCollectGarbage answers as Lua's collector would but drives nothing:
// the interpreter's memory is Go's, which a script must not run.
func baseCollectGarbage(L *State) int {
	opt := gcOptions[L.CheckOption(1, "collect", gcOptions)]
	arg := L.OptInt(2, 0)
	lib := &L.g.lib
	switch opt {
	case "count":
		L.Push(Number(float64(L.memoryInUse()) / 1024))
	case "collect":
		L.CollectGarbage()
		L.Push(Number(0))
	case "step":
		L.Push(True)
	case "setpause":
		L.Push(Number(float64(lib.gcPause)))
		lib.gcPause = arg
	case "setstepmul":
		L.Push(Number(float64(lib.gcStepMul)))
		lib.gcStepMul = arg
	default:
		L.Push(Number(0))
	}
	return 1
}

// memoryInUse is what collectgarbage("count") reports, in bytes.
func (L *State) memoryInUse() int64 {
	lib := &L.g.lib
	if lib.resident == 0 {
		seen := map[*Table]bool{}
		lib.resident = tableGraphBytes(L.g.main.globals, seen) + tableGraphBytes(L.g.stringMeta, seen)
	}
	return lib.resident + lib.allocated
}

// CollectGarbage forgets what the running code allocated, as a full
// collection frees a finished script's garbage (Go's collector reclaims it).
func (L *State) CollectGarbage() { L.g.lib.allocated = 0 }

// noteAlloc counts n bytes the running code allocated.
func (L *State) noteAlloc(n int) { L.g.lib.allocated += int64(n) }

func baseGCInfo(L *State) int {
	L.Push(Number(float64(L.memoryInUse() >> 10)))
	return 1
}

// baseError raises its argument; a message (string or number) first gets
// the position of the function level calls up (1: error's caller).
func baseError(L *State) int {
	level := L.OptInt(2, 1)
	v := L.Get(1)
	if s, ok := v.ToString(); ok && level > 0 {
		v = String(L.Where(level) + s)
	}
	L.Error(v)
	return 0
}

func baseGetMetatable(L *State) int {
	mt := L.Metatable(L.CheckAny(1))
	switch {
	case mt == nil:
		L.Push(Nil)
	case !mt.GetStr("__metatable").IsNil():
		L.Push(mt.GetStr("__metatable"))
	default:
		L.Push(TableValue(mt))
	}
	return 1
}

func baseSetMetatable(L *State) int {
	mtArg := L.Get(2)
	L.CheckType(1, TypeTable)
	if L.Top() < 2 || !mtArg.IsNil() && mtArg.AsTable() == nil {
		L.ArgError(2, "nil or table expected")
	}
	t := L.Get(1).AsTable()
	if old := t.meta; old != nil && !old.GetStr("__metatable").IsNil() {
		L.Errorf("cannot change a protected metatable")
	}
	if t.readonly {
		L.Error(String(readonlyError))
	}
	t.meta = mtArg.AsTable()
	L.SetTop(1)
	return 1
}

func baseNext(L *State) int {
	L.CheckType(1, TypeTable)
	k, v, ok := L.Get(1).AsTable().Next(L.Get(2))
	if !ok {
		L.Error(String("invalid key to 'next'"))
	}
	if k.IsNil() {
		L.Push(Nil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

// ipairsAux is ipairs' iterator: the next index and its value, nothing
// at the first nil.
func ipairsAux(L *State) int {
	i := L.CheckInt(2)
	L.CheckType(1, TypeTable)
	i = int(int32(i + 1)) // C's int wraps
	v := L.Get(1).AsTable().GetInt(i)
	if v.IsNil() {
		return 0
	}
	L.Push(Number(float64(i)))
	L.Push(v)
	return 2
}

func basePCall(L *State) int {
	L.CheckAny(1)
	res, err := L.PCall(L.Get(1), L.Args(2), -1, Nil)
	return L.pushOutcome(res, err)
}

// pushOutcome pushes what pcall returns: true and the results, or false
// and the error.
func (L *State) pushOutcome(res []Value, err *Error) int {
	if err != nil {
		L.Push(False)
		L.Push(err.Value)
		return 2
	}
	L.Push(True)
	for _, v := range res {
		L.Push(v)
	}
	return len(res) + 1
}

// failingHandler stands for an error handler that is not a function: Lua
// does not call it and reports "error in error handling".
var failingHandler = FunctionValue(NewFunction("?", func(L *State) int {
	L.Error(Nil)
	return 0
}))

func baseXPCall(L *State) int {
	L.CheckAny(2)
	handler := L.Get(2)
	if handler.AsFunction() == nil {
		handler = failingHandler
	}
	res, err := L.PCall(L.Get(1), nil, -1, handler)
	return L.pushOutcome(res, err)
}

func baseRawEqual(L *State) int {
	L.CheckAny(1)
	L.CheckAny(2)
	L.Push(Bool(RawEqual(L.Get(1), L.Get(2))))
	return 1
}

func baseRawGet(L *State) int {
	L.CheckType(1, TypeTable)
	L.CheckAny(2)
	L.Push(L.Get(1).AsTable().Get(L.Get(2)))
	return 1
}

func baseRawSet(L *State) int {
	L.CheckType(1, TypeTable)
	L.CheckAny(2)
	L.CheckAny(3)
	L.RawSet(L.Get(1).AsTable(), L.Get(2), L.Get(3))
	L.SetTop(1)
	return 1
}

// baseSelect returns its arguments after the nth (negative: counting from
// the end), or their count for '#'.
func baseSelect(L *State) int {
	n := L.Top()
	if s, ok := L.Get(1).AsString(); ok && strings.HasPrefix(s, "#") {
		L.Push(Number(float64(n - 1)))
		return 1
	}
	i := L.CheckInt(1)
	if i < 0 {
		i += n
	} else if i > n {
		i = n
	}
	if i < 1 {
		L.ArgError(1, "index out of range")
	}
	return n - i
}

func baseToNumber(L *State) int {
	base := L.OptInt(2, 10)
	if base == 10 {
		if f, ok := L.CheckAny(1).ToNumber(); ok {
			L.Push(Number(f))
			return 1
		}
	} else {
		s := L.CheckString(1)
		if base < 2 || base > 36 {
			L.ArgError(2, "base out of range")
		}
		if n, ok := parseUnsigned(s, base); ok {
			L.Push(Number(float64(n)))
			return 1
		}
	}
	L.Push(Nil)
	return 1
}

// parseUnsigned reads s as tonumber does with a base: glibc's strtoul,
// then only spaces. s ends at a NUL, as a C string does.
func parseUnsigned(s string, base int) (uint64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	v, n, _ := libm.Strtoul(s, base)
	if n == 0 {
		return 0, false
	}
	for _, c := range []byte(s[n:]) {
		if !isSpace(c) {
			return 0, false
		}
	}
	return v, true
}

func baseToString(L *State) int {
	L.Push(L.ToStringMeta(L.CheckAny(1)))
	return 1
}

func baseType(L *State) int {
	L.Push(String(L.CheckAny(1).TypeName()))
	return 1
}

// baseUnpack returns t[i..j] (i defaults to 1, j to #t), as many as a Go
// function's frame may hold.
func baseUnpack(L *State) int {
	L.CheckType(1, TypeTable)
	t := L.Get(1).AsTable()
	i := L.OptInt(2, 1)
	e := 0
	if L.Get(3).IsNil() {
		e = t.Len()
	} else {
		e = L.CheckInt(3)
	}
	if i > e {
		return 0
	}
	n := int(int32(e - i + 1)) // C's int arithmetic: overflow shows as n <= 0
	if n <= 0 || n > maxCStack || L.Top()+n > maxCStack {
		L.Errorf("too many results to unpack")
	}
	for k := i; k <= e; k++ {
		L.Push(t.GetInt(k))
	}
	return n
}
