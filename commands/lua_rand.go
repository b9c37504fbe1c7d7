package commands

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// Redis replaces Lua's math.random with its own generator so that a script
// draws the same numbers on every platform: the 48-bit linear congruence of
// the drand48 family (multiplier 0x5DEECE66D, increment 11), its state
// carried from one script to the next as in Redis 7.0, math.randomseed(s)
// resetting it to s's 32 bits above 0x330E.

type rand48 struct{ x uint64 }

const (
	rand48Mult = 0x5DEECE66D
	rand48Add  = 0xB
	rand48Mask = 1<<48 - 1
	rand48Init = 0x1234ABCD330E // the state before any seed
	lrand48Max = math.MaxInt32
)

func (r *rand48) seed(s int32) { r.x = uint64(uint32(s))<<16 | 0x330E }

// lrand48 is the next value, 31 bits.
func (r *rand48) lrand48() int32 {
	if r.x == 0 {
		r.x = rand48Init
	}
	r.x = (r.x*rand48Mult + rand48Add) & rand48Mask
	return int32(r.x >> 17)
}

func (vm *LuaVM) mathRandom(L *lua.LState) int {
	if vm.run == nil {
		L.RaiseError("math.random can only be called inside a script invocation")
	}
	r := float64(vm.rand.lrand48()%lrand48Max) / float64(lrand48Max)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (vm *LuaVM) mathRandomseed(L *lua.LState) int {
	if vm.run == nil {
		L.RaiseError("math.randomseed can only be called inside a script invocation")
	}
	vm.rand.seed(int32(L.CheckInt(1)))
	return 0
}
