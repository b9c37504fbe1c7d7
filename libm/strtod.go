package libm

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Strtod reads the longest prefix of s that glibc's strtod reads in the C
// locale and returns its value and length (0 when nothing parses: strtod
// then leaves its end pointer at the start): leading spaces, a sign, a
// decimal or hexadecimal number (with a binary exponent), "inf",
// "infinity" or "nan(chars)". erange reports ERANGE: an overflow (the value
// is then an infinity) or an underflow to zero. Go's ParseFloat does the
// arithmetic; this decides which text strtod would have consumed.
func Strtod[T ~string | ~[]byte](s T) (v float64, n int, erange bool) {
	i, neg := spaceAndSign(s)
	sign := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	rest := s[i:]
	switch {
	case hasPrefixFold(rest, "infinity"):
		return sign(math.Inf(1)), i + 8, false
	case hasPrefixFold(rest, "inf"):
		return sign(math.Inf(1)), i + 3, false
	case hasPrefixFold(rest, "nan"):
		j, nan, erange := i+3, quietNaN, false
		if j < len(s) && s[j] == '(' {
			k := j + 1
			for k < len(s) && (isAlnum(s[k]) || s[k] == '_') {
				k++
			}
			if k < len(s) && s[k] == ')' {
				var payload uint64
				payload, erange = nanPayload(string(s[j+1 : k]))
				nan = math.Float64frombits(math.Float64bits(quietNaN) | payload)
				j = k + 1
			}
		}
		return sign(nan), j, erange
	}
	if len(rest) > 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
		if m, e, ok := scanHexFloat(rest[2:]); ok {
			text := "0x" + string(rest[2:2+m])
			if e > 0 {
				text += string(rest[2+m : 2+m+e])
			} else {
				text += "p0"
			}
			f, err := strconv.ParseFloat(text, 64)
			return sign(f), i + 2 + m + e, rangeError(f, err, text, true)
		}
		// "0x" with no hex digits after it: strtod takes the "0".
	}
	m, e := scanDecFloat(rest)
	if m == 0 {
		return 0, 0, false
	}
	text := string(rest[:m+e])
	f, err := strconv.ParseFloat(text, 64)
	return sign(f), i + m + e, rangeError(f, err, text, false)
}

// quietNaN is the NaN glibc's strtod gives for "nan": the quiet bit only
// (Go's math.NaN sets a payload bit besides, which cmsgpack would show).
var quietNaN = math.Float64frombits(0x7ff8000000000000)

// nanPayload reads the chars of "nan(chars)" as glibc does: strtoull in
// base 0, used only when it reads them all, and kept to the mantissa's 51
// bits below the quiet bit. An overflow leaves ERANGE set either way.
func nanPayload(chars string) (payload uint64, erange bool) {
	v, n, erange := Strtoul(chars, 0)
	if n != len(chars) {
		return 0, erange
	}
	return v & (1<<51 - 1), erange
}

// Strtoul reads the longest prefix of s that glibc's strtoul (strtoull:
// the same on 64-bit Linux) reads in base 2 to 36, or 0 to take the base
// from the prefix ("0x" hex, "0" octal): leading spaces, a sign, digits.
// Out of range reads as the largest value with erange set; a minus
// negates in unsigned arithmetic. n is 0 when there are no digits.
func Strtoul[T ~string | ~[]byte](s T, base int) (v uint64, n int, erange bool) {
	i, neg := spaceAndSign(s)
	hexPrefix := i+2 < len(s) && s[i] == '0' && s[i+1]|0x20 == 'x' && isHexDigit(s[i+2])
	switch {
	case (base == 0 || base == 16) && hexPrefix:
		base, i = 16, i+2
	case base == 0 && i < len(s) && s[i] == '0':
		base = 8
	case base == 0:
		base = 10
	}
	start := i
	for ; i < len(s); i++ {
		d := uint64(digitValue(s[i]))
		if d >= uint64(base) {
			break
		}
		if v > (math.MaxUint64-d)/uint64(base) {
			erange = true
		}
		v = v*uint64(base) + d
	}
	switch {
	case i == start:
		return 0, 0, false
	case erange:
		v = math.MaxUint64
	case neg:
		v = -v
	}
	return v, i, erange
}

// rangeError reports ERANGE as glibc sets it: an overflow (ParseFloat
// says so), a number with a non-zero digit that came out as zero, or an
// inexact subnormal result.
func rangeError(f float64, err error, text string, hex bool) bool {
	if err != nil {
		return true
	}
	if f == 0 {
		digits, marker := text, byte('e')
		if hex {
			digits, marker = text[2:], 'p'
		}
		for i := 0; i < len(digits) && digits[i]|0x20 != marker; i++ {
			if c := digits[i]; c >= '1' && c <= '9' || hex && isHexDigit(c) && c != '0' {
				return true
			}
		}
		return false
	}
	if math.Abs(f) >= 0x1p-1022 {
		return false
	}
	exact, ok := new(big.Rat).SetString(text)
	return !ok || exact.Cmp(new(big.Rat).SetFloat64(f)) != 0
}

// scanDecFloat measures digits[.digits] (at least one digit) and an
// optional exponent that has at least one digit.
func scanDecFloat[T ~string | ~[]byte](s T) (mant, exp int) {
	mant, digits := scanDigits(s, isDigit)
	if digits == 0 {
		return 0, 0
	}
	return mant, scanExponent(s[mant:], 'e')
}

// scanHexFloat measures hexdigits[.hexdigits] after "0x" (at least one
// digit) and an optional binary exponent.
func scanHexFloat[T ~string | ~[]byte](s T) (mant, exp int, ok bool) {
	mant, digits := scanDigits(s, isHexDigit)
	if digits == 0 {
		return 0, 0, false
	}
	return mant, scanExponent(s[mant:], 'p'), true
}

// scanDigits measures digits[.digits]: its length (the point only with a
// digit) and how many digits.
func scanDigits[T ~string | ~[]byte](s T, digit func(byte) bool) (n, digits int) {
	i := 0
	for i < len(s) && digit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && digit(s[j]) {
			j++
			digits++
		}
		if digits > 0 {
			i = j
		}
	}
	return i, digits
}

// scanExponent measures an exponent marker (either case), an optional
// sign and digits; 0 when there is no complete exponent.
func scanExponent[T ~string | ~[]byte](s T, marker byte) int {
	if len(s) == 0 || s[0]|0x20 != marker {
		return 0
	}
	i := 1
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == start {
		return 0
	}
	return i
}

func isSpace(c byte) bool    { return c == ' ' || c >= '\t' && c <= '\r' }
func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

// spaceAndSign measures the leading white space and sign the C library's
// number readers skip.
func spaceAndSign[T ~string | ~[]byte](s T) (i int, neg bool) {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	return i, neg
}

// digitValue is c as a digit of bases up to 36, or 36 if it is none.
func digitValue(c byte) int {
	switch {
	case isDigit(c):
		return int(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'z':
		return int(c|0x20-'a') + 10
	}
	return 36
}
func isAlnum(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z' }

func hasPrefixFold[T ~string | ~[]byte](s T, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(string(s[:len(prefix)]), prefix)
}
