package lua

import (
	"math"

	"github.com/revolver-db/revolver/libm"
)

// The math library of Lua 5.1 (lmathlib.c), with Redis's math.random.
//
// Redis's Lua runs on glibc, whose NaNs a script can tell apart: tostring
// writes a NaN with its sign bit set as "-nan". A NaN argument comes back
// as it is; a NaN made from ordinary arguments is the x86 default NaN
// ("-nan") for most functions, but a positive one for acos, asin and
// log10. Go's math package returns positive NaNs throughout, so the
// functions below restore glibc's.
//
// exp, log, log10, pow and the hyperbolic functions come from libm.go,
// which matches glibc's values; the trigonometric ones are Go's, which
// differ from glibc's in the last bit for some arguments (rarely in the
// 14 digits tostring shows).

// openMath registers the math library in lmathlib.c's order, then pi,
// huge and Lua 5.0's mod (the very function value of fmod).
func openMath(L *State) *Table {
	L.g.lib.rand48 = rand48Initial
	t := L.register("math", []LibFunc{
		{"abs", mathAbs},
		{"acos", unary(math.Acos, positiveNaN)},
		{"asin", unary(math.Asin, positiveNaN)},
		{"atan2", binaryMath(math.Atan2)},
		{"atan", unary(math.Atan, defaultNaN)},
		{"ceil", unary(math.Ceil, defaultNaN)},
		{"cosh", unary(libm.Cosh, defaultNaN)},
		{"cos", unary(math.Cos, defaultNaN)},
		{"deg", unary(func(x float64) float64 { return x / radiansPerDegree }, defaultNaN)},
		{"exp", unary(libm.Exp, defaultNaN)},
		{"floor", unary(math.Floor, defaultNaN)},
		{"fmod", binaryMath(math.Mod)},
		{"frexp", mathFrexp},
		{"ldexp", mathLdexp},
		{"log10", unary(libm.Log10, positiveNaN)},
		{"log", unary(libm.Log, defaultNaN)},
		{"max", mathMax},
		{"min", mathMin},
		{"modf", mathModf},
		{"pow", binaryMath(libm.Pow)},
		{"rad", unary(func(x float64) float64 { return x * radiansPerDegree }, defaultNaN)},
		{"random", mathRandom},
		{"randomseed", mathRandomseed},
		{"sinh", unary(libm.Sinh, defaultNaN)},
		{"sin", unary(math.Sin, defaultNaN)},
		{"sqrt", unary(math.Sqrt, defaultNaN)},
		{"tanh", unary(libm.Tanh, defaultNaN)},
		{"tan", unary(math.Tan, defaultNaN)},
	})
	t.SetStr("pi", Number(math.Pi))
	t.SetStr("huge", Number(math.Inf(1)))
	t.SetStr("mod", t.GetStr("fmod"))
	return t
}

// radiansPerDegree is lmathlib.c's RADIANS_PER_DEGREE; deg divides by it.
const radiansPerDegree = math.Pi / 180.0

var (
	defaultNaN  = libm.NaN // x86's, "-nan"
	positiveNaN = math.Float64frombits(0x7ff8000000000000)
)

// glibcNaN is r as glibc gives it: NaN arguments pass through (the first
// one, quieted), and a NaN made from other arguments is made.
func glibcNaN(r, made float64, args ...float64) float64 {
	if r == r {
		return r
	}
	for _, a := range args {
		if a != a {
			return math.Float64frombits(math.Float64bits(a) | 1<<51)
		}
	}
	return made
}

func unary(f func(float64) float64, made float64) GoFunction {
	return func(L *State) int {
		x := L.CheckNumber(1)
		L.Push(Number(glibcNaN(f(x), made, x)))
		return 1
	}
}

func binaryMath(f func(x, y float64) float64) GoFunction {
	return func(L *State) int {
		x, y := L.CheckNumber(1), L.CheckNumber(2)
		L.Push(Number(glibcNaN(f(x, y), defaultNaN, x, y)))
		return 1
	}
}

// mathAbs is fabs, which clears a NaN's sign too.
func mathAbs(L *State) int {
	L.Push(Number(math.Abs(L.CheckNumber(1))))
	return 1
}

func mathFrexp(L *State) int {
	x := L.CheckNumber(1)
	frac, exp := math.Frexp(x)
	L.Push(Number(glibcNaN(frac, defaultNaN, x)))
	L.Push(Number(float64(exp)))
	return 2
}

func mathLdexp(L *State) int {
	x := L.CheckNumber(1)
	e := L.CheckInt(2)
	L.Push(Number(glibcNaN(math.Ldexp(x, e), defaultNaN, x)))
	return 1
}

// mathModf is C's modf: the integral part and the fraction, both with
// x's sign; an infinity's fraction is 0.
func mathModf(L *State) int {
	x := L.CheckNumber(1)
	var ip, fp float64
	switch {
	case x != x:
		ip, fp = x, x
	case math.IsInf(x, 0):
		ip, fp = x, math.Copysign(0, x)
	default:
		ip, fp = math.Modf(x)
	}
	L.Push(Number(ip))
	L.Push(Number(fp))
	return 2
}

func mathMax(L *State) int {
	m := L.CheckNumber(1)
	for i := 2; i <= L.Top(); i++ {
		if d := L.CheckNumber(i); d > m {
			m = d
		}
	}
	L.Push(Number(m))
	return 1
}

func mathMin(L *State) int {
	m := L.CheckNumber(1)
	for i := 2; i <= L.Top(); i++ {
		if d := L.CheckNumber(i); d < m {
			m = d
		}
	}
	L.Push(Number(m))
	return 1
}

// math.random draws from the generator Redis gives scripts (rand.c): the
// 48-bit linear congruential generator of POSIX's lrand48, its state
// shared by every thread of the interpreter.
const (
	rand48Mul     = 0x5DEECE66D
	rand48Add     = 0xB
	rand48Mask    = 1<<48 - 1
	rand48Initial = 0x1234ABCD330E // the state before any seeding
	rand48Max     = math.MaxInt32  // REDIS_LRAND48_MAX
)

// nextRand48 advances the generator and returns its top 31 bits.
func (L *State) nextRand48() int32 {
	g := &L.g.lib
	g.rand48 = (rand48Mul*g.rand48 + rand48Add) & rand48Mask
	return int32(g.rand48 >> 17)
}

// mathRandom is Lua 5.1's math.random on Redis's generator: a float in
// [0,1), an integer in [1,m] or in [m,n] (C ints, so m-n+1 may wrap).
func mathRandom(L *State) int {
	r := float64(L.nextRand48()%rand48Max) / rand48Max
	switch L.Top() {
	case 0:
		L.Push(Number(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(Number(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(Number(math.Floor(r*float64(int32(u-l+1))) + float64(l)))
	default:
		L.Errorf("wrong number of arguments")
	}
	return 1
}

// mathRandomseed seeds as srand48 does: the seed's 32 bits above 0x330E.
func mathRandomseed(L *State) int {
	seed := uint32(int32(L.CheckInt(1)))
	L.g.lib.rand48 = uint64(seed)<<16 | 0x330E
	return 0
}

// luaPow is Lua's x^y and math.pow: pow with glibc's NaNs.
func luaPow(x, y float64) float64 { return glibcNaN(libm.Pow(x, y), defaultNaN, x, y) }
