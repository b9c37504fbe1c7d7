package scripting

import (
	"math"
	"math/bits"

	"github.com/revolver-db/revolver/lua"
)

// The bit library (LuaBitOp 1.0): operations on 32-bit integers, results
// as signed 32-bit numbers.

// OpenBit makes the global bit.
func OpenBit(L *lua.State) {
	L.Register("bit", []lua.LibFunc{
		{Name: "tobit", Fn: bitUnary(func(x uint32) uint32 { return x })},
		{Name: "bnot", Fn: bitUnary(func(x uint32) uint32 { return ^x })},
		{Name: "band", Fn: bitFold(func(a, b uint32) uint32 { return a & b })},
		{Name: "bor", Fn: bitFold(func(a, b uint32) uint32 { return a | b })},
		{Name: "bxor", Fn: bitFold(func(a, b uint32) uint32 { return a ^ b })},
		{Name: "lshift", Fn: bitShift(func(x uint32, n int) uint32 { return x << n })},
		{Name: "rshift", Fn: bitShift(func(x uint32, n int) uint32 { return x >> n })},
		{Name: "arshift", Fn: bitShift(func(x uint32, n int) uint32 { return uint32(int32(x) >> n) })},
		{Name: "rol", Fn: bitShift(func(x uint32, n int) uint32 { return bits.RotateLeft32(x, n) })},
		{Name: "ror", Fn: bitShift(func(x uint32, n int) uint32 { return bits.RotateLeft32(x, -n) })},
		{Name: "bswap", Fn: bitUnary(bits.ReverseBytes32)},
		{Name: "tohex", Fn: bitToHex},
	})
}

// bitArg reads argument i as LuaBitOp does: it adds 2^52+2^51 to the
// number and keeps the low 32 bits of the double, which for numbers below
// 2^51 is the integer nearest (ties to even) modulo 2^32, and for larger
// ones whatever those bits hold. Numeric strings are numbers.
func bitArg(L *lua.State, i int) uint32 {
	return uint32(math.Float64bits(L.CheckNumber(i) + 6755399441055744.0))
}

func bitResult(L *lua.State, b uint32) int {
	L.Push(lua.Number(float64(int32(b))))
	return 1
}

func bitUnary(f func(uint32) uint32) lua.GoFunction {
	return func(L *lua.State) int { return bitResult(L, f(bitArg(L, 1))) }
}

// bitFold folds the arguments from the last, as LuaBitOp does (which
// decides which bad argument is reported).
func bitFold(f func(a, b uint32) uint32) lua.GoFunction {
	return func(L *lua.State) int {
		b := bitArg(L, 1)
		for i := L.Top(); i > 1; i-- {
			b = f(b, bitArg(L, i))
		}
		return bitResult(L, b)
	}
}

func bitShift(f func(x uint32, n int) uint32) lua.GoFunction {
	return func(L *lua.State) int {
		x := bitArg(L, 1)
		n := bitArg(L, 2) & 31
		return bitResult(L, f(x, int(n)))
	}
}

// bitToHex writes n hex digits of x (8 when n is absent; upper case when
// n is negative; at most 8).
func bitToHex(L *lua.State) int {
	x := bitArg(L, 1)
	n := int64(8)
	if L.Top() >= 2 {
		n = int64(int32(bitArg(L, 2)))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		n, digits = -n, "0123456789ABCDEF"
	}
	n = min(n, 8)
	buf := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[x&15]
		x >>= 4
	}
	L.Push(lua.String(string(buf)))
	return 1
}
