package libm

import (
	"math"
	"math/big"
	"sync"
)

// exp, log, log10, pow, sinh, cosh and tanh as glibc computes them.

// NaN is the NaN glibc returns for an invalid argument (x86's default:
// its sign bit set, printed "-nan").
var NaN = math.Float64frombits(0xfff8000000000000)

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
		t.ln2 = fromBig(bigLog(big.NewFloat(2).SetPrec(bigPrec)))
		t.third = ratio(1, 3)
		t.sixth = ratio(1, 6)
		t.twentyfour = ratio(1, 24)
		for i := logTableMin; i <= logTableMax; i++ {
			c := new(big.Float).SetPrec(bigPrec).SetFloat64(1 + float64(i)/128)
			t.log[i-logTableMin] = fromBig(bigLog(c))
		}
		for j := -expTableMax; j <= expTableMax; j++ {
			q := new(big.Float).SetPrec(bigPrec).SetFloat64(float64(j) / 64)
			t.exp[j+expTableMax] = fromBig(bigExp(q))
		}
	})
	return t
}

const bigPrec = 200

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
	s2 := s.mul(s)
	h := s2.hi
	// atanh(s) = s + s³·(1/3 + s²/5 + s⁴/7 + ...)
	p := t.third.addF(h * (1.0/5 + h*(1.0/7+h*(1.0/9+h*(1.0/11+h/13)))))
	at := s.add(s2.mul(p).mul(s))
	r := t.log[i-logTableMin].add(dd{2 * at.hi, 2 * at.lo})
	if k == 0 {
		return r
	}
	kf := float64(k)
	return twoProd(kf, t.ln2.hi).addF(kf * t.ln2.lo).add(r)
}

// expDD is exp(z) for z.hi in about [-746, 710], rounded to a float64:
// z = k·log 2 + j/64 + r, exp(z) = 2^k·exp(j/64)·exp(r), |r| <= 1/128.
func expDD(z dd) float64 {
	t := libm()
	k := math.Round(z.hi / t.ln2.hi)
	kln2 := twoProd(k, t.ln2.hi).addF(k * t.ln2.lo)
	r := z.add(kln2.neg())
	j := math.Round(r.hi * 64)
	r = r.addF(-j / 64)
	h := r.hi
	// exp(r) = 1 + r(1 + r(1/2 + r(1/6 + r(1/24 + r/120 + ...))))
	e := t.twentyfour.addF(h * (1.0/120 + h*(1.0/720+h*(1.0/5040+h*(1.0/40320+h/362880)))))
	e = e.mul(r).add(t.sixth)
	e = e.mul(r).addF(0.5)
	e = e.mul(r).addF(1)
	e = e.mul(r).addF(1)
	e = t.exp[int(j)+expTableMax].mul(e)
	return math.Ldexp(e.hi, int(k))
}

// Where exp overflows to infinity and underflows to zero.
const (
	expOverflow  = 709.782712893384
	expUnderflow = -745.1332191019412
)

// Exp is exp.
func Exp(x float64) float64 {
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

// Log is log.
func Log(x float64) float64 {
	switch {
	case x != x || math.IsInf(x, 1):
		return x
	case x == 0:
		return math.Inf(-1)
	case x < 0:
		return NaN
	}
	return logDD(x).hi
}

// Log10 is fdlibm's log10: x = 2^n·y with y in [1,2) (in [½,1) for
// n < 0), log10(x) = n·log10(2) + log(y)/ln(10).
func Log10(x float64) float64 {
	switch {
	case x != x || math.IsInf(x, 1):
		return x
	case x == 0:
		return math.Inf(-1)
	case x < 0:
		return math.NaN() // fdlibm's 0/0 here: a positive NaN
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
	z := float64(n*log10_2lo) + float64(ivln10*Log(y))
	return z + float64(n*log10_2hi)
}

// Pow is pow: C99's special cases (as Go's math.Pow has them), else
// exp(y·log|x|) with the sign of an odd power of a negative x.
func Pow(x, y float64) float64 {
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
			return NaN
		}
		neg = math.Abs(y) < 1<<53 && int64(y)%2 != 0
		x = -x
	}
	z := logDD(x).mulF(y)
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

// highWord is the top 32 bits of |x|, which fdlibm's range tests read.
func highWord(x float64) uint32 { return uint32(math.Float64bits(x) >> 32 & 0x7fffffff) }

// Sinh is fdlibm's sinh.
func Sinh(x float64) float64 {
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
		return h * Exp(ax)
	case math.Float64bits(ax) <= 0x408633ce8fb9f87d: // the overflow threshold
		w := Exp(0.5 * ax)
		t := h * w
		return t * w
	}
	return x * math.Inf(1)
}

// Cosh is fdlibm's cosh.
func Cosh(x float64) float64 {
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
		t := Exp(ax)
		return 0.5*t + 0.5/t
	case ix < 0x40862e42:
		return 0.5 * Exp(ax)
	case math.Float64bits(ax) <= 0x408633ce8fb9f87d:
		w := Exp(0.5 * ax)
		t := 0.5 * w
		return t * w
	}
	return math.Inf(1)
}

// Tanh is fdlibm's tanh.
func Tanh(x float64) float64 {
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
