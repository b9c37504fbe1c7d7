package lua

import (
	"math"
	"strconv"
	"strings"
)

// NumberToString writes f as Lua 5.1 does (LUA_NUMBER_FMT, "%.14g"), with
// glibc's spellings of the special values.
func NumberToString(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return specialFloat(f)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e14 {
		if f == 0 && math.Signbit(f) {
			return "-0"
		}
		return strconv.FormatInt(int64(f), 10)
	}
	return FormatG(f, 14)
}

// specialFloat is glibc's printf of an infinity or a NaN: a NaN with its
// sign bit set (what 0/0 gives on x86) prints as "-nan".
func specialFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.Signbit(f):
		return "-nan"
	}
	return "nan"
}

// FormatG is C's "%.<prec>g" of a finite f.
func FormatG(f float64, prec int) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return specialFloat(f)
	}
	if prec == 0 {
		prec = 1
	}
	s := strconv.FormatFloat(f, 'g', prec, 64)
	// Go writes exponents with at least two digits, as C does, but keeps
	// the trailing zeros %g drops.
	if mant, exp, ok := strings.Cut(s, "e"); ok {
		if strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		return mant + "e" + exp
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// StringToNumber converts s as Lua 5.1's luaO_str2d does on glibc: what
// strtod reads (decimal or hexadecimal, "inf", "nan", leading spaces),
// then only spaces. Lua hands strtod a C string, so s ends at a NUL.
func StringToNumber(s string) (float64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	f, n := strtod(s)
	if n == 0 {
		return 0, false
	}
	for ; n < len(s); n++ {
		if !isSpace(s[n]) {
			return 0, false
		}
	}
	return f, true
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// strtod reads the longest prefix of s that glibc's strtod reads and
// returns its value and length (0 when it reads nothing).
func strtod(s string) (float64, int) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	rest := s[i:]
	var f float64
	var n int
	switch {
	case hasPrefixFold(rest, "infinity"):
		f, n = math.Inf(1), len("infinity")
	case hasPrefixFold(rest, "inf"):
		f, n = math.Inf(1), len("inf")
	case hasPrefixFold(rest, "nan"):
		// glibc's NaN has an empty payload (Go's math.NaN sets its low
		// bit), which shows where a script packs the number's bits.
		f, n = math.Float64frombits(0x7ff8000000000000), len("nan")
		if len(rest) > n && rest[n] == '(' {
			j := n + 1
			for j < len(rest) && (isAlnum(rest[j]) || rest[j] == '_') {
				j++
			}
			if j < len(rest) && rest[j] == ')' {
				n = j + 1
			}
		}
	case len(rest) >= 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X'):
		f, n = hexFloat(rest)
	default:
		f, n = decimalFloat(rest)
	}
	if n == 0 {
		return 0, 0
	}
	if neg {
		f = -f
	}
	return f, i + n
}

func decimalFloat(s string) (float64, int) {
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
		return 0, 0
	}
	i = exponent(s, i, 'e')
	f, err := strconv.ParseFloat(s[:i], 64)
	if err != nil && !isRangeError(err) {
		return 0, 0
	}
	return f, i
}

// hexFloat reads "0x" hex digits, a fraction and a binary exponent; with
// no digit after "0x" strtod reads just the "0".
func hexFloat(s string) (float64, int) {
	i, digits := 2, 0
	for i < len(s) && isHexDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isHexDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, 1
	}
	mant := s[:i]
	j := exponent(s, i, 'p')
	text := mant + "p0"
	if j > i {
		text = s[:j]
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !isRangeError(err) {
		return 0, 0
	}
	return f, j
}

// exponent extends i over an exponent ("e-12", "p+3") if digits follow
// the letter.
func exponent(s string, i int, letter byte) int {
	if i >= len(s) || s[i]|0x20 != letter {
		return i
	}
	j := i + 1
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	if j >= len(s) || !isDigit(s[j]) {
		return i
	}
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	return j
}

func isRangeError(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }
func isAlpha(c byte) bool    { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool    { return isDigit(c) || isAlpha(c) }
