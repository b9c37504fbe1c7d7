package lua

import (
	"math"
	"strconv"
	"strings"

	"github.com/revolver-db/revolver/libm"
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
	f, n, _ := libm.Strtod(s)
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

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }
func isAlpha(c byte) bool    { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool    { return isDigit(c) || isAlpha(c) }
