package lua

import (
	"math"
	"strconv"
	"strings"
)

// string.format: lstrlib.c's str_format, whose items C's sprintf writes
// (glibc's, on x86-64); this file writes them as glibc does.

const formatFlags = "-+ #0"

// formatSpec is one "%..." item: its flags, width and precision (-1 for
// none) and conversion.
type formatSpec struct {
	minus, plus, space, alt, zero bool
	width, prec                   int
	conv                          byte
}

func strFormat(L *State) int {
	top := L.Top()
	format := L.CheckString(1)
	// Lua reads the format as a C string within its length: what follows
	// a '%' at the very end is the terminating NUL.
	at := func(i int) byte {
		if i < len(format) {
			return format[i]
		}
		return 0
	}
	var b strings.Builder
	arg := 1
	for i := 0; i < len(format); {
		c := format[i]
		i++
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if at(i) == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		arg++
		if arg > top {
			L.ArgError(arg, "no value")
		}
		var spec formatSpec
		i, spec = scanFormat(L, at, i)
		i++
		switch spec.conv {
		case 'c':
			// sprintf's output is taken up to its first NUL.
			c := byte(cInt(L.CheckNumber(arg)))
			b.WriteString(cString(spec.pad("", string([]byte{c}))))
		case 'd', 'i':
			n := numberToInt(L.CheckNumber(arg))
			b.WriteString(spec.formatInt(uint64(n), n < 0))
		case 'o', 'u', 'x', 'X':
			b.WriteString(spec.formatInt(cUnsignedLong(L.CheckNumber(arg)), false))
		case 'e', 'E', 'f', 'g', 'G':
			b.WriteString(spec.formatFloat(L.CheckNumber(arg)))
		case 'q':
			addQuoted(&b, L.CheckString(arg))
		case 's':
			s := L.CheckString(arg)
			if spec.prec < 0 && len(s) >= 100 {
				// Too long for lstrlib's buffer: copied whole, unpadded.
				b.WriteString(s)
				break
			}
			s = cString(s)
			if spec.prec >= 0 && len(s) > spec.prec {
				s = s[:spec.prec]
			}
			b.WriteString(spec.pad("", s))
		default:
			// The option is read as a C string: a NUL shows as nothing.
			L.Errorf("invalid option '%%%s' to 'format'", cString(string([]byte{spec.conv})))
		}
	}
	L.Push(String(b.String()))
	return 1
}

// scanFormat reads an item's flags, width and precision from i (just
// past its '%') with lstrlib's limits, and returns the index of its
// conversion character.
func scanFormat(L *State, at func(int) byte, i int) (int, formatSpec) {
	spec := formatSpec{prec: -1}
	start := i
	for at(i) != 0 && strings.IndexByte(formatFlags, at(i)) >= 0 {
		switch at(i) {
		case '-':
			spec.minus = true
		case '+':
			spec.plus = true
		case ' ':
			spec.space = true
		case '#':
			spec.alt = true
		case '0':
			spec.zero = true
		}
		i++
	}
	if i-start > len(formatFlags) {
		L.Errorf("invalid format (repeated flags)")
	}
	digits := func() int {
		n := 0
		for k := 0; k < 2 && isDigit(at(i)); k++ {
			n = n*10 + int(at(i)-'0')
			i++
		}
		return n
	}
	spec.width = digits()
	if at(i) == '.' {
		i++
		spec.prec = digits()
	}
	if isDigit(at(i)) {
		L.Errorf("invalid format (width or precision too long)")
	}
	spec.conv = at(i)
	return i, spec
}

// cInt is C's (int) cast of a double on x86-64: truncation, and INT_MIN
// for what does not fit.
func cInt(f float64) int32 {
	if f > math.MinInt32-1 && f < math.MaxInt32+1 {
		return int32(f)
	}
	return math.MinInt32
}

// cUnsignedLong is C's (unsigned long) cast of a double as gcc compiles
// it for x86-64: below 2^63 (NaN included) a signed conversion, else one
// of f-2^63 with the top bit flipped; what does not fit comes out as
// 2^63 (negative or NaN) or 0 (2^64 and more).
func cUnsignedLong(f float64) uint64 {
	const two63 = 1 << 63
	if !(f >= two63) {
		return uint64(numberToInt(f))
	}
	return uint64(numberToInt(f-two63)) ^ two63
}

// pad writes prefix and body in the item's width: left-justified with
// '-', else right-justified with spaces before the prefix.
func (spec *formatSpec) pad(prefix, body string) string {
	n := spec.width - len(prefix) - len(body)
	if n <= 0 {
		return prefix + body
	}
	if spec.minus {
		return prefix + body + strings.Repeat(" ", n)
	}
	return strings.Repeat(" ", n) + prefix + body
}

// padZero is pad where the '0' flag applies: zeros between the prefix
// (sign, "0x") and the digits.
func (spec *formatSpec) padZero(prefix, body string) string {
	if spec.zero && !spec.minus {
		if n := spec.width - len(prefix) - len(body); n > 0 {
			return prefix + strings.Repeat("0", n) + body
		}
	}
	return spec.pad(prefix, body)
}

// formatInt writes an integer conversion of the magnitude u (negative
// for a signed value below zero): precision is the minimum number of
// digits, and a precision turns the '0' flag off.
func (spec *formatSpec) formatInt(u uint64, negative bool) string {
	if negative {
		u = -u
	}
	var digits string
	switch spec.conv {
	case 'o':
		digits = strconv.FormatUint(u, 8)
	case 'x':
		digits = strconv.FormatUint(u, 16)
	case 'X':
		digits = strings.ToUpper(strconv.FormatUint(u, 16))
	default:
		digits = strconv.FormatUint(u, 10)
	}
	if spec.prec == 0 && u == 0 {
		digits = ""
	}
	if len(digits) < spec.prec {
		digits = strings.Repeat("0", spec.prec-len(digits)) + digits
	}
	prefix := ""
	switch spec.conv {
	case 'd', 'i':
		prefix = spec.sign(negative)
	case 'o':
		if spec.alt && !strings.HasPrefix(digits, "0") {
			digits = "0" + digits
		}
	case 'x', 'X':
		if spec.alt && u != 0 {
			prefix = "0" + string(spec.conv)
		}
	}
	if spec.prec >= 0 {
		return spec.pad(prefix, digits)
	}
	return spec.padZero(prefix, digits)
}

// sign is what precedes a signed number's digits.
func (spec *formatSpec) sign(negative bool) string {
	switch {
	case negative:
		return "-"
	case spec.plus:
		return "+"
	case spec.space:
		return " "
	}
	return ""
}

// formatFloat writes %e %E %f %g %G of f; precision 6 when not given.
func (spec *formatSpec) formatFloat(f float64) string {
	upper := spec.conv == 'E' || spec.conv == 'G'
	prefix := spec.sign(math.Signbit(f))
	if math.IsInf(f, 0) || math.IsNaN(f) {
		body := "inf"
		if math.IsNaN(f) {
			body = "nan"
		}
		if upper {
			body = strings.ToUpper(body)
		}
		return spec.pad(prefix, body) // never zero-padded
	}
	f = math.Abs(f)
	prec := spec.prec
	if prec < 0 {
		prec = 6
	}
	var body string
	switch spec.conv {
	case 'e', 'E':
		body = spec.altPoint(strconv.FormatFloat(f, 'e', prec, 64))
	case 'f':
		body = spec.altPoint(strconv.FormatFloat(f, 'f', prec, 64))
	default:
		body = spec.formatG(f, prec)
	}
	if upper {
		body = strings.ToUpper(body)
	}
	return spec.padZero(prefix, body)
}

// altPoint gives a number written without a fraction its decimal point
// when the '#' flag asks for one.
func (spec *formatSpec) altPoint(s string) string {
	if !spec.alt || strings.Contains(s, ".") {
		return s
	}
	if mant, exp, ok := strings.Cut(s, "e"); ok {
		return mant + ".e" + exp
	}
	return s + "."
}

// formatG is C's %g of f ≥ 0: %e when the exponent (after rounding to
// prec digits) is below -4 or at least prec, else %f; trailing zeros
// dropped unless '#'.
func (spec *formatSpec) formatG(f float64, prec int) string {
	if prec == 0 {
		prec = 1
	}
	e := strconv.FormatFloat(f, 'e', prec-1, 64)
	_, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	var s string
	if exp < -4 || exp >= prec {
		s = e
	} else {
		s = strconv.FormatFloat(f, 'f', prec-1-exp, 64)
	}
	if spec.alt {
		return spec.altPoint(s)
	}
	mant, exp2, hasExp := strings.Cut(s, "e")
	if strings.Contains(mant, ".") {
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
	}
	if hasExp {
		return mant + "e" + exp2
	}
	return mant
}

// addQuoted writes s as %q does in Lua 5.1: in double quotes, with '"',
// '\' and newline escaped by a backslash, "\r" for CR and "\000" for NUL.
func addQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\000`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}
