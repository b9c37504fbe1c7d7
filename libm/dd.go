// Package libm computes the C library's math functions as glibc computes
// them, to the last bit: glibc rounds exp, log, pow, sin, cos and asin
// correctly but for rare arguments, and Go's math package differs from it
// in the last bit for a fifth to a half of all arguments, which Redis's
// replies show (a distance, a Lua number). The functions evaluate in
// double-double arithmetic (about 106 bits) and round once; sinh, cosh,
// tanh and log10 follow fdlibm's formulas, which glibc keeps, on top.
// Strtod reads numbers as glibc's strtod does (which text it takes, NaN
// payloads, when it sets ERANGE): ZADD's scores, SORT's weights, Lua's
// tonumber and cjson all go through it.
package libm

import (
	"math"
	"math/big"
)

// dd is a double-double: the unevaluated sum hi+lo, |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

// twoSum is a+b exactly.
func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

// fastTwoSum is a+b exactly, for |a| >= |b|.
func fastTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

// twoProd is a*b exactly.
func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (x dd) add(y dd) dd {
	s := twoSum(x.hi, y.hi)
	t := twoSum(x.lo, y.lo)
	s = fastTwoSum(s.hi, s.lo+t.hi)
	return fastTwoSum(s.hi, s.lo+t.lo)
}

// addFast is add without the separate error of the low parts: enough
// where no cancellation happens (each Horner step of a series adds a
// coefficient larger than the running product).
func (x dd) addFast(y dd) dd {
	s := twoSum(x.hi, y.hi)
	s.lo += x.lo + y.lo
	return fastTwoSum(s.hi, s.lo)
}

// addF is x+b for a float64 b.
func (x dd) addF(b float64) dd {
	s := twoSum(x.hi, b)
	return fastTwoSum(s.hi, s.lo+x.lo)
}

func (x dd) mul(y dd) dd {
	p := twoProd(x.hi, y.hi)
	return fastTwoSum(p.hi, p.lo+(x.hi*y.lo+x.lo*y.hi))
}

// mulF is x*b for a float64 b.
func (x dd) mulF(b float64) dd {
	p := twoProd(x.hi, b)
	return fastTwoSum(p.hi, p.lo+x.lo*b)
}

func (x dd) neg() dd { return dd{-x.hi, -x.lo} }

// fromBig rounds a big.Float to a double-double.
func fromBig(f *big.Float) dd {
	hi, _ := f.Float64()
	rest := new(big.Float).SetPrec(f.Prec()).Sub(f, new(big.Float).SetFloat64(hi))
	lo, _ := rest.Float64()
	return dd{hi, lo}
}

// ratio is a/b as a double-double.
func ratio(a, b float64) dd {
	hi := a / b
	return dd{hi, math.FMA(-hi, b, a) / b}
}
