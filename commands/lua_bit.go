package commands

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// openLuaLibraries loads the libraries Redis 7.0 gives scripts beside
// Lua's own: bit (LuaBitOp), cjson, cmsgpack and struct.
func openLuaLibraries(L *lua.LState) {
	openBit(L)
	openCJSON(L)
	openCMsgpack(L)
	openStruct(L)
}

// The bit library (LuaBitOp 1.0's interface): operations on 32-bit
// integers, arguments normalized as LuaBitOp does (modulo 2^32, read as
// signed), results signed 32-bit numbers.
func openBit(L *lua.LState) {
	t := L.NewTable()
	un := func(f func(x int32) int32) lua.LGFunction {
		return func(L *lua.LState) int {
			L.Push(lua.LNumber(f(bitArg(L, 1))))
			return 1
		}
	}
	fold := func(f func(a, b int32) int32) lua.LGFunction {
		return func(L *lua.LState) int {
			x := bitArg(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				x = f(x, bitArg(L, i))
			}
			L.Push(lua.LNumber(x))
			return 1
		}
	}
	shift := func(f func(x uint32, n uint) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			x, n := bitArg(L, 1), bitArg(L, 2)
			L.Push(lua.LNumber(int32(f(uint32(x), uint(n)&31))))
			return 1
		}
	}
	L.SetFuncs(t, map[string]lua.LGFunction{
		"tobit":  un(func(x int32) int32 { return x }),
		"bnot":   un(func(x int32) int32 { return ^x }),
		"bswap":  un(func(x int32) int32 { return int32(bits.ReverseBytes32(uint32(x))) }),
		"band":   fold(func(a, b int32) int32 { return a & b }),
		"bor":    fold(func(a, b int32) int32 { return a | b }),
		"bxor":   fold(func(a, b int32) int32 { return a ^ b }),
		"lshift": shift(func(x uint32, n uint) uint32 { return x << n }),
		"rshift": shift(func(x uint32, n uint) uint32 { return x >> n }),
		"arshift": shift(func(x uint32, n uint) uint32 {
			return uint32(int32(x) >> n)
		}),
		"rol":   shift(func(x uint32, n uint) uint32 { return bits.RotateLeft32(x, int(n)) }),
		"ror":   shift(func(x uint32, n uint) uint32 { return bits.RotateLeft32(x, -int(n)) }),
		"tohex": bitToHex,
	})
	L.SetGlobal("bit", t)
}

// bitArg reads argument i as LuaBitOp normalizes a number: the integer
// part modulo 2^32, as a signed 32-bit value.
func bitArg(L *lua.LState, i int) int32 {
	f := float64(L.CheckNumber(i))
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	// LuaBitOp adds 2^52+2^51 and keeps the low word, which rounds to the
	// nearest integer (ties to even) before the modulo.
	r := math.RoundToEven(f)
	m := math.Mod(r, 4294967296)
	if m < 0 {
		m += 4294967296
	}
	return int32(uint32(m))
}

func bitToHex(L *lua.LState) int {
	x := uint32(bitArg(L, 1))
	n := int32(8)
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		n = bitArg(L, 2)
	}
	upper := false
	if n < 0 {
		n, upper = -n, true
	}
	if n > 8 {
		n = 8
	}
	s := fmt.Sprintf("%08x", x)
	if upper {
		s = strings.ToUpper(s)
	}
	L.Push(lua.LString(s[8-n:]))
	return 1
}
