package lua

import (
	"math"
	"math/big"
	"sync"
)

// exp, log, log10, pow, sinh, cosh and tanh as Redis's Lua computes them
// on glibc, closer than Go's math package (whose pow is off in the last
// bit for about half of all arguments, and sometimes in the 14 digits
// tostring shows). glibc's exp, log and pow are correctly rounded but for
// rare arguments; here they are computed in double-double arithmetic to
// about 2^-85 and rounded once, which agrees with them but for rarer
// ones still. log10, sinh, cosh and tanh follow fdlibm's formulas, which
// glibc keeps, on top of those (and of math.Expm1, fdlibm's expm1).

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

func ddAdd(a, b dd) dd {
	s := twoSum(a.hi, b.hi)
	t := twoSum(a.lo, b.lo)
	s = fastTwoSum(s.hi, s.lo+t.hi)
	return fastTwoSum(s.hi, s.lo+t.lo)
}

// ddAddF is a+b for a float64 b.
func ddAddF(a dd, b float64) dd {
	s := twoSum(a.hi, b)
	return fastTwoSum(s.hi, s.lo+a.lo)
}

func ddMul(a, b dd) dd {
	p := twoProd(a.hi, b.hi)
	return fastTwoSum(p.hi, p.lo+(a.hi*b.lo+a.lo*b.hi))
}

func ddMulF(a dd, b float64) dd {
	p := twoProd(a.hi, b)
	return fastTwoSum(p.hi, p.lo+a.lo*b)
}

// Tables of log(1+i/128) and exp(j/64), and the constants, to 2^-106,
// made from math/big on first use.
const (
	logTableMin, logTableMax = -40, 54
	expTableMax              = 24
)

type libmConsts struct {
	once       sync.Once
	ln2        dd
	third      dd
	sixth      dd
	twentyfour dd // 1/24
	log        [logTableMax - logTableMin + 1]dd
	exp        [2*expTableMax + 1]dd
}

var libmTables libmConsts

func libm() *libmConsts {
	t := &libmTables
	t.once.Do(func() {
		t.ln2 = bigToDD(bigLog(big.NewFloat(2).SetPrec(bigPrec)))
		t.third = ratioDD(1, 3)
		t.sixth = ratioDD(1, 6)
		t.twentyfour = ratioDD(1, 24)
		for i := logTableMin; i <= logTableMax; i++ {
			c := new(big.Float).SetPrec(bigPrec).SetFloat64(1 + float64(i)/128)
			t.log[i-logTableMin] = bigToDD(bigLog(c))
		}
		for j := -expTableMax; j <= expTableMax; j++ {
			q := new(big.Float).SetPrec(bigPrec).SetFloat64(float64(j) / 64)
			t.exp[j+expTableMax] = bigToDD(bigExp(q))
		}
	})
	return t
}

const bigPrec = 200

func ratioDD(a, b float64) dd {
	hi := a / b
	return dd{hi, math.FMA(-hi, b, a) / b}
}

func bigToDD(x *big.Float) dd {
	hi, _ := x.Float64()
	rest := new(big.Float).SetPrec(bigPrec).Sub(x, new(big.Float).SetFloat64(hi))
	lo, _ := rest.Float64()
	return dd{hi, lo}
}

// bigLog is log(c) for c near 1: 2·atanh((c-1)/(c+1)) by its series.
func bigLog(c *big.Float) *big.Float {
	one := big.NewFloat(1).SetPrec(bigPrec)
	num := new(big.Float).SetPrec(bigPrec).Sub(c, one)
	den := new(big.Float).SetPrec(bigPrec).Add(c, one)
	s := new(big.Float).SetPrec(bigPrec).Quo(num, den)
	s2 := new(big.Float).SetPrec(bigPrec).Mul(s, s)
	sum := new(big.Float).SetPrec(bigPrec).Set(s)
	pow := new(big.Float).SetPrec(bigPrec).Set(s)
	term := new(big.Float).SetPrec(bigPrec)
	for n := 3; n < 400; n += 2 {
		pow.Mul(pow, s2)
		term.Quo(pow, big.NewFloat(float64(n)))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -bigPrec {
			break
		}
	}
	return sum.Mul(sum, big.NewFloat(2))
}

// bigExp is exp(q) for small q by its series.
func bigExp(q *big.Float) *big.Float {
	sum := big.NewFloat(1).SetPrec(bigPrec)
	term := big.NewFloat(1).SetPrec(bigPrec)
	for n := 1; n < 200; n++ {
		term.Mul(term, q)
		term.Quo(term, big.NewFloat(float64(n)))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -bigPrec {
			break
		}
	}
	return sum
}

// logDD is log(x) for finite x > 0: x = 2^k·m with m in [√½, √2), m
// near c = 1+i/128, log(x) = k·log 2 + log c + 2·atanh((m-c)/(m+c)).
func logDD(x float64) dd {
	t := libm()
	m, k := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m *= 2
		k--
	}
	i := int(math.Round((m - 1) * 128))
	c := 1 + float64(i)/128
	num := m - c // exact: m and c are within a factor of 2
	den := twoSum(m, c)
	sh := num / den.hi
	sl := (math.FMA(-sh, den.hi, num) - sh*den.lo) / den.hi
	s := fastTwoSum(sh, sl) // |s| < 2^-8.5
	s2 := ddMul(s, s)
	h := s2.hi
	// atanh(s) = s + s³·(1/3 + s²/5 + s⁴/7 + ...)
	p := ddAddF(t.third, h*(1.0/5+h*(1.0/7+h*(1.0/9+h*(1.0/11+h/13)))))
	at := ddAdd(s, ddMul(ddMul(s2, p), s))
	r := ddAdd(t.log[i-logTableMin], dd{2 * at.hi, 2 * at.lo})
	if k == 0 {
		return r
	}
	kf := float64(k)
	return ddAdd(ddAddF(twoProd(kf, t.ln2.hi), kf*t.ln2.lo), r)
}

// expDD is exp(z) for z.hi in about [-746, 710], rounded to a float64:
// z = k·log 2 + j/64 + r, exp(z) = 2^k·exp(j/64)·exp(r), |r| <= 1/128.
func expDD(z dd) float64 {
	t := libm()
	k := math.Round(z.hi / t.ln2.hi)
	kln2 := ddAddF(twoProd(k, t.ln2.hi), k*t.ln2.lo)
	r := ddAdd(z, dd{-kln2.hi, -kln2.lo})
	j := math.Round(r.hi * 64)
	r = ddAddF(r, -j/64)
	h := r.hi
	// exp(r) = 1 + r(1 + r(1/2 + r(1/6 + r(1/24 + r/120 + ...))))
	e := ddAddF(t.twentyfour, h*(1.0/120+h*(1.0/720+h*(1.0/5040+h*(1.0/40320+h/362880)))))
	e = ddAdd(ddMul(e, r), t.sixth)
	e = ddAddF(ddMul(e, r), 0.5)
	e = ddAddF(ddMul(e, r), 1)
	e = ddAddF(ddMul(e, r), 1)
	e = ddMul(t.exp[int(j)+expTableMax], e)
	return math.Ldexp(e.hi, int(k))
}

// Where exp overflows to infinity and underflows to zero.
const (
	expOverflow  = 709.782712893384
	expUnderflow = -745.1332191019412
)

// libmExp is exp.
func libmExp(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > expOverflow:
		return math.Inf(1)
	case x < expUnderflow:
		return 0
	}
	return expDD(dd{x, 0})
}

// libmLog is log.
func libmLog(x float64) float64 {
	switch {
	case x != x || math.IsInf(x, 1):
		return x
	case x == 0:
		return math.Inf(-1)
	case x < 0:
		return defaultNaN
	}
	return logDD(x).hi
}

// libmLog10 is fdlibm's log10: x = 2^n·y with y in [1,2) (in [½,1) for
// n < 0), log10(x) = n·log10(2) + log(y)/ln(10).
func libmLog10(x float64) float64 {
	switch {
	case x != x || math.IsInf(x, 1):
		return x
	case x == 0:
		return math.Inf(-1)
	case x < 0:
		return positiveNaN
	}
	const (
		ivln10    = 4.34294481903251816668e-01
		log10_2hi = 3.01029995663611771306e-01
		log10_2lo = 3.69423907715893078616e-13
	)
	b := math.Float64bits(x)
	k := 0
	if b>>52 == 0 { // subnormal
		x *= 1 << 54
		b = math.Float64bits(x)
		k -= 54
	}
	k += int(b>>52) - 1023
	i := 0
	if k < 0 {
		i = 1
	}
	y := math.Float64frombits(b&(1<<52-1) | uint64(1023-i)<<52)
	n := float64(k + i)
	z := float64(n*log10_2lo) + float64(ivln10*libmLog(y))
	return z + float64(n*log10_2hi)
}

// libmPow is pow: C99's special cases (as Go's math.Pow has them), else
// exp(y·log|x|) with the sign of an odd power of a negative x.
func libmPow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case x != x || y != y:
		return math.NaN()
	case x == 0 || math.IsInf(x, 0) || math.IsInf(y, 0) || x == -1:
		return math.Pow(x, y)
	}
	neg := false
	if x < 0 {
		if y != math.Trunc(y) {
			return defaultNaN
		}
		neg = math.Abs(y) < 1<<53 && int64(y)%2 != 0
		x = -x
	}
	z := ddMulF(logDD(x), y)
	var r float64
	switch {
	case z.hi > expOverflow+1:
		r = math.Inf(1)
	case z.hi < expUnderflow-1:
		r = 0
	default:
		r = expDD(z)
	}
	if neg {
		r = -r
	}
	return r
}

// luaPow is Lua's x^y and math.pow: pow with glibc's NaNs.
func luaPow(x, y float64) float64 { return glibcNaN(libmPow(x, y), defaultNaN, x, y) }

// highWord is the top 32 bits of |x|, which fdlibm's range tests read.
func highWord(x float64) uint32 { return uint32(math.Float64bits(x) >> 32 & 0x7fffffff) }

// libmSinh is fdlibm's sinh.
func libmSinh(x float64) float64 {
	ix := highWord(x)
	if ix >= 0x7ff00000 {
		return x + x
	}
	h := 0.5
	if x < 0 {
		h = -0.5
	}
	ax := math.Abs(x)
	switch {
	case ix < 0x40360000: // |x| < 22
		if ix < 0x3e300000 { // |x| < 2^-28
			return x
		}
		t := math.Expm1(ax)
		if ix < 0x3ff00000 {
			return h * (2*t - t*t/(t+1))
		}
		return h * (t + t/(t+1))
	case ix < 0x40862e42: // |x| < log(MaxFloat64)
		return h * libmExp(ax)
	case math.Float64bits(ax) <= 0x408633ce8fb9f87d: // the overflow threshold
		w := libmExp(0.5 * ax)
		t := h * w
		return t * w
	}
	return x * math.Inf(1)
}

// libmCosh is fdlibm's cosh.
func libmCosh(x float64) float64 {
	ix := highWord(x)
	ax := math.Abs(x)
	switch {
	case ix >= 0x7ff00000:
		return x * x
	case ix < 0x3fd62e43: // |x| < ln2/2
		if ix < 0x3c800000 {
			return 1
		}
		t := math.Expm1(ax)
		w := 1 + t
		return 1 + (t*t)/(w+w)
	case ix < 0x40360000: // |x| < 22
		t := libmExp(ax)
		return 0.5*t + 0.5/t
	case ix < 0x40862e42:
		return 0.5 * libmExp(ax)
	case math.Float64bits(ax) <= 0x408633ce8fb9f87d:
		w := libmExp(0.5 * ax)
		t := 0.5 * w
		return t * w
	}
	return math.Inf(1)
}

// libmTanh is fdlibm's tanh.
func libmTanh(x float64) float64 {
	ix := highWord(x)
	if ix >= 0x7ff00000 {
		if x != x {
			return x
		}
		return math.Copysign(1, x)
	}
	var z float64
	switch {
	case x == 0:
		return x
	case ix < 0x3c800000: // |x| < 2^-55
		return x * (1 + x)
	case ix >= 0x40360000: // |x| >= 22
		z = 1
	case ix >= 0x3ff00000: // |x| >= 1
		t := math.Expm1(2 * math.Abs(x))
		z = 1 - 2/(t+2)
	default:
		t := math.Expm1(-2 * math.Abs(x))
		z = -t / (t + 2)
	}
	if x < 0 {
		return -z
	}
	return z
}
