package scripting

import (
	"math"

	"github.com/revolver-db/revolver/lua"
)

// Redis replaces Lua's math.random with its own generator so that a script
// draws the same numbers on every platform: the 48-bit linear congruence of
// the drand48 family (multiplier 0x5DEECE66D, increment 11), its state
// carried from one script to the next as in Redis 7.0, math.randomseed(s)
// resetting it to s's 32 bits above 0x330E.

// Rand is Redis's generator. Redis keeps one per server, shared by EVAL
// scripts and functions.
type Rand struct{ x uint64 }

const (
	rand48Mult = 0x5DEECE66D
	rand48Add  = 0xB
	rand48Mask = 1<<48 - 1
	rand48Init = 0x1234ABCD330E // the state before any seed
	lrand48Max = math.MaxInt32
)

func (r *Rand) seed(s int32) { r.x = uint64(uint32(s))<<16 | 0x330E }

// lrand48 is the next value, 31 bits.
func (r *Rand) lrand48() int32 {
	if r.x == 0 {
		r.x = rand48Init
	}
	r.x = (r.x*rand48Mult + rand48Add) & rand48Mask
	return int32(r.x >> 17)
}

func (rt *Runtime) mathRandom(L *lua.State) int {
	if rt.run == nil {
		L.Errorf("math.random can only be called inside a script invocation")
	}
	r := float64(rt.rand.lrand48()%lrand48Max) / float64(lrand48Max)
	switch L.Top() {
	case 0:
		L.Push(lua.Number(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.Number(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.Number(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.Errorf("wrong number of arguments")
	}
	return 1
}

func (rt *Runtime) mathRandomseed(L *lua.State) int {
	if rt.run == nil {
		L.Errorf("math.randomseed can only be called inside a script invocation")
	}
	rt.rand.seed(int32(L.CheckInt(1)))
	return 0
}
