package engine

import (
	"errors"
	"math"
	"math/big"
)

// INCRBYFLOAT (and later HINCRBYFLOAT) compute in C's long double: on
// x86-64, the 80-bit extended format with a 64-bit mantissa. That is why
// "SET k 10.50; INCRBYFLOAT k 0.1" answers "10.6" in Redis where float64
// would give "10.599999999999999". big.Float with 64 bits of precision and
// round-to-nearest-even performs the same arithmetic, and formatting it with
// %.17Lf's rules reproduces Redis's text.

// ErrNaNOrInf is Redis's reply when an increment leaves the finite range.
var ErrNaNOrInf = errors.New("ERR increment would produce NaN or Infinity")

const (
	longDoublePrec = 64
	// maxLongDoubleChars bounds Redis's formatting buffer; a longer %.17Lf
	// text makes Redis store an empty string.
	maxLongDoubleChars = 5 * 1024
)

// Largest finite 80-bit extended value: (2^64 - 1) * 2^16320.
var maxLongDouble = func() *big.Float {
	mant := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), longDoublePrec), big.NewInt(1))
	f := new(big.Float).SetPrec(longDoublePrec).SetInt(mant)
	return f.SetMantExp(f, 16384-longDoublePrec)
}()

// Half the smallest subnormal extended magnitude (2^-16446): strtold rounds
// anything at or below it to zero and reports underflow, which Redis rejects.
var minLongDouble = new(big.Float).SetPrec(longDoublePrec).SetMantExp(big.NewFloat(0.5), -16445)

// longDouble is a parsed operand: a finite value or an infinity.
type longDouble struct {
	v   *big.Float
	inf int // +1, -1, or 0 for finite
}

// parseLongDouble accepts what Redis's string2ld accepts: strtold syntax
// (decimal or hex, optional exponent, inf/infinity) with no leading space,
// nothing trailing, and no overflow or underflow to zero. NaN is rejected.
func parseLongDouble(b []byte) (longDouble, bool) {
	if len(b) == 0 || len(b) >= maxLongDoubleChars {
		return longDouble{}, false
	}
	// Redis hands strtold a C string and then checks that the parse
	// consumed every byte, so an embedded NUL makes the text invalid.
	for _, c := range b {
		if c == 0 {
			return longDouble{}, false
		}
	}
	s := string(b)
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	rest := s[i:]
	if equalFold(rest, "inf") || equalFold(rest, "infinity") {
		if neg {
			return longDouble{inf: -1}, true
		}
		return longDouble{inf: 1}, true
	}
	base := 10
	if len(rest) > 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
		base = 16
		rest = rest[2:]
	}
	if !validFloatSyntax(rest, base) {
		return longDouble{}, false
	}
	num := rest
	if base == 16 {
		num = "0x" + rest
	}
	f, _, err := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Parse(num, 0)
	if err != nil {
		return longDouble{}, false
	}
	if neg {
		f.Neg(f)
	}
	abs := new(big.Float).Abs(f)
	if abs.Cmp(maxLongDouble) > 0 {
		return longDouble{}, false // ERANGE overflow
	}
	if f.Sign() != 0 && abs.Cmp(minLongDouble) <= 0 {
		return longDouble{}, false // ERANGE underflow
	}
	return longDouble{v: f}, true
}

// validFloatSyntax checks digits [. digits] [exponent] with at least one
// mantissa digit; the exponent is e/E for decimal and p/P for hex.
func validFloatSyntax(s string, base int) bool {
	isDigit := func(c byte) bool {
		if c >= '0' && c <= '9' {
			return true
		}
		return base == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
	}
	i, digits := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i == len(s) {
		return true
	}
	exp := byte('e')
	if base == 16 {
		exp = 'p'
	}
	if lowerASCII(s[i]) != exp {
		return false
	}
	i++
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > start && i == len(s)
}

// AddLongDoubleStrings returns cur+incr formatted as Redis stores it; cur
// nil counts as 0.
func AddLongDoubleStrings(cur, incr []byte) ([]byte, error) {
	a := longDouble{v: new(big.Float).SetPrec(longDoublePrec)}
	if cur != nil {
		var ok bool
		if a, ok = parseLongDouble(cur); !ok {
			return nil, ErrNotFloat
		}
	}
	b, ok := parseLongDouble(incr)
	if !ok {
		return nil, ErrNotFloat
	}
	if a.inf != 0 || b.inf != 0 {
		return nil, ErrNaNOrInf // inf+x is inf, inf-inf is NaN
	}
	sum := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Add(a.v, b.v)
	if new(big.Float).Abs(sum).Cmp(maxLongDouble) > 0 {
		return nil, ErrNaNOrInf
	}
	return formatLongDoubleHuman(sum), nil
}

// formatLongDoubleHuman is %.17Lf with trailing zeros (and a bare point)
// removed and "-0" written as "0".
func formatLongDoubleHuman(f *big.Float) []byte {
	out := f.Append(nil, 'f', 17)
	if len(out)+1 > maxLongDoubleChars {
		return []byte{}
	}
	out = trimTrailingZeros(out)
	if len(out) == 2 && out[0] == '-' && out[1] == '0' {
		return []byte{'0'}
	}
	return out
}

func trimTrailingZeros(b []byte) []byte {
	dot := false
	for _, c := range b {
		if c == '.' {
			dot = true
			break
		}
	}
	if !dot {
		return b
	}
	end := len(b)
	for b[end-1] == '0' {
		end--
	}
	if b[end-1] == '.' {
		end--
	}
	return b[:end]
}

// ParseLongDouble parses b with Redis's string2ld rules (as INCRBYFLOAT and
// blocking timeouts do) and returns the value rounded to a float64;
// infinities are returned as such.
func ParseLongDouble(b []byte) (float64, bool) {
	v, ok := parseLongDouble(b)
	if !ok {
		return 0, false
	}
	if v.inf != 0 {
		return math.Inf(v.inf), true
	}
	f, _ := v.v.Float64()
	return f, true
}
