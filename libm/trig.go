package libm

import (
	"math"
	"math/big"
)

// Sine, cosine and arcsine, correctly rounded (Redis's geo distances).

// trigTerms is the most Taylor terms a series takes: |r| <= pi/4 needs 11
// to reach 2^-75. Smaller arguments take fewer (seriesTerms): a geo search
// over a few kilometres sums series of arguments around 1e-3, where four
// terms reach that precision.
const trigTerms = 12

// Where a series may stop, and which of its first terms must be summed in
// double-double, by r^2: the term k is dropped when every term from k on
// is below 2^-76 of the sum (sums are at least 0.7 for |r| <= pi/4), and
// evaluated in plain doubles when below 2^-17 of it, so that its rounding
// error stays below 2^-70.
const (
	trigDropBelow  = 0x1p-76
	trigPlainBelow = 0x1p-17
)

var (
	// halfPi as three doubles for the argument reduction.
	halfPi1, halfPi2, halfPi3 float64
	// sinCoef[k] = (-1)^k/(2k+1)!, cosCoef[k] = (-1)^k/(2k)!.
	sinCoef, cosCoef [trigTerms]dd
	// sinDrop[k] is the largest r^2 at which the sine series may stop
	// before term k, sinPlain[k] the largest at which term k may be plain;
	// likewise for the cosine.
	sinDrop, sinPlain, cosDrop, cosPlain [trigTerms]float64
)

func init() {
	const piDigits = "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798214808651"
	const prec = 300
	pi, _, _ := big.ParseFloat(piDigits, 10, prec, big.ToNearestEven)
	h := new(big.Float).SetPrec(prec).Quo(pi, big.NewFloat(2))
	halfPi1, _ = h.Float64()
	h.Sub(h, new(big.Float).SetFloat64(halfPi1))
	halfPi2, _ = h.Float64()
	h.Sub(h, new(big.Float).SetFloat64(halfPi2))
	halfPi3, _ = h.Float64()
	fact := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(0); n < 2*trigTerms; n++ {
		if n > 0 {
			fact.Mul(fact, new(big.Float).SetInt64(n))
		}
		c := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1), fact)
		if (n/2)%2 == 1 {
			c.Neg(c)
		}
		if n%2 == 0 {
			cosCoef[n/2] = fromBig(c)
		} else {
			sinCoef[n/2] = fromBig(c)
		}
	}
	seriesBounds(&sinCoef, &sinDrop, &sinPlain)
	seriesBounds(&cosCoef, &cosDrop, &cosPlain)
}

// seriesBounds fills the r^2 bounds below which the terms from k on are
// small enough to drop or to evaluate in plain doubles. The terms
// decrease with k for |r| <= pi/4, so the term k bounds those after it
// (its bound is taken 1% lower for the rounding of Pow).
func seriesBounds(coef *[trigTerms]dd, drop, plain *[trigTerms]float64) {
	for k := 1; k < trigTerms; k++ {
		c := math.Abs(coef[k].hi)
		drop[k] = 0.99 * math.Pow(trigDropBelow/c, 1/float64(k))
		plain[k] = 0.99 * math.Pow(trigPlainBelow/c, 1/float64(k))
	}
}

// seriesTerms returns how many terms of a series to sum at r2 and how many
// of the first ones in double-double.
func seriesTerms(drop, plain *[trigTerms]float64, r2 float64) (terms, exact int) {
	terms = trigTerms
	for k := 1; k < trigTerms; k++ {
		if r2 <= drop[k] {
			terms = k
			break
		}
	}
	exact = terms
	for k := 1; k < terms; k++ {
		if r2 <= plain[k] {
			exact = k
			break
		}
	}
	return terms, exact
}

// trigMaxArg bounds the arguments reduced here; larger ones (huge search
// boxes only) use the math package.
const trigMaxArg = 1 << 20

// reduceHalfPi returns r = x - k*pi/2 with |r| <= ~pi/4, and k mod 4.
func reduceHalfPi(x float64) (dd, int) {
	k := math.RoundToEven(x / halfPi1)
	if k == 0 {
		return dd{x, 0}, 0 // what the steps below give, without them
	}
	r := twoSum(x, -k*halfPi1)
	r.lo -= math.FMA(k, halfPi1, -k*halfPi1) // the exact product's tail
	r = fastTwoSum(r.hi, r.lo)
	r = r.add(dd{-k * halfPi2, -math.FMA(k, halfPi2, -k*halfPi2)})
	r = r.add(dd{-k * halfPi3, 0})
	return r, int(int64(k) & 3)
}

// sinReduced and cosReduced evaluate the Taylor series of a reduced
// argument: the leading terms in double-double, the tail (terms below
// 2^-17 of the result, whose rounding errors stay below 2^-70 of it) in
// plain doubles.
func sinReduced(r dd) dd {
	r2 := r.mul(r)
	terms, exact := seriesTerms(&sinDrop, &sinPlain, r2.hi)
	return taylor(&sinCoef, r2, terms, exact).mul(r)
}

func cosReduced(r dd) dd {
	r2 := r.mul(r)
	terms, exact := seriesTerms(&cosDrop, &cosPlain, r2.hi)
	return taylor(&cosCoef, r2, terms, exact)
}

// taylor evaluates sum coef[k] * r2^k over the first terms, the first
// exact of them in double-double and the rest in plain doubles.
func taylor(coef *[trigTerms]dd, r2 dd, terms, exact int) dd {
	x := r2.hi
	t := 0.0
	for k := terms - 1; k >= exact; k-- {
		t = t*x + coef[k].hi
	}
	v := dd{t, 0}
	for k := exact - 1; k >= 0; k-- {
		v = v.mul(r2).addFast(coef[k])
	}
	return v
}

func ddSin(x float64) dd {
	r, q := reduceHalfPi(x)
	switch q {
	case 1:
		return cosReduced(r)
	case 2:
		return sinReduced(r).neg()
	case 3:
		return cosReduced(r).neg()
	}
	return sinReduced(r)
}

func ddCos(x float64) dd {
	r, q := reduceHalfPi(x)
	switch q {
	case 1:
		return sinReduced(r).neg()
	case 2:
		return cosReduced(r).neg()
	case 3:
		return sinReduced(r)
	}
	return cosReduced(r)
}

// Sin is sin(x) correctly rounded.
func Sin(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > trigMaxArg {
		return math.Sin(x)
	}
	return ddSin(x).hi
}

// Cos is cos(x) correctly rounded.
func Cos(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > trigMaxArg {
		return math.Cos(x)
	}
	return ddCos(x).hi
}

// Asin is asin(x) correctly rounded: one Newton step, in double-double,
// from the math package's value.
func Asin(x float64) float64 {
	y := math.Asin(x)
	if x == 0 || math.IsNaN(y) || math.Abs(x) == 1 {
		return y
	}
	// y' = y - (sin y - x)/cos y; sin y - x is computed exactly enough
	// in double-double, and the step is tiny, so its own rounding error
	// (and that of a double cos) is far below the last bit.
	diff := ddSin(y).add(dd{-x, 0})
	step := diff.hi / math.Cos(y)
	return twoSum(y, -step).hi
}
