package libm

import (
	"math"
	"testing"
)

// The expected values come from glibc's strtod (Debian 12, C locale): the
// result's bits, how many bytes it read, and whether it set ERANGE.
var strtodCases = []struct {
	in     string
	bits   uint64
	n      int
	erange bool
}{
	{"0", 0x0000000000000000, 1, false},
	{"1", 0x3ff0000000000000, 1, false},
	{"-1", 0xbff0000000000000, 2, false},
	{"  42", 0x4045000000000000, 4, false},
	{"\t\n 7x", 0x401c000000000000, 4, false},
	{"1e5", 0x40f86a0000000000, 3, false},
	{"1E-5", 0x3ee4f8b588e368f1, 4, false},
	{"1e", 0x3ff0000000000000, 1, false},
	{"1e+", 0x3ff0000000000000, 1, false},
	{".5", 0x3fe0000000000000, 2, false},
	{"5.", 0x4014000000000000, 2, false},
	{".", 0x0000000000000000, 0, false},
	{"-.5e1", 0xc014000000000000, 5, false},
	{"0x10", 0x4030000000000000, 4, false},
	{"0X1p4", 0x4030000000000000, 5, false},
	{"0x1.8p1", 0x4008000000000000, 7, false},
	{"0x", 0x0000000000000000, 1, false},
	{"0x.", 0x0000000000000000, 1, false},
	{"0xg", 0x0000000000000000, 1, false},
	{"0x1P", 0x3ff0000000000000, 3, false},
	{"0x1e", 0x403e000000000000, 4, false},
	{"0x0.0p-5", 0x0000000000000000, 8, false},
	{"inf", 0x7ff0000000000000, 3, false},
	{"-Inf", 0xfff0000000000000, 4, false},
	{"infinity", 0x7ff0000000000000, 8, false},
	{"INFINITYx", 0x7ff0000000000000, 8, false},
	{"infin", 0x7ff0000000000000, 3, false},
	{"nan", 0x7ff8000000000000, 3, false},
	{"-nan", 0xfff8000000000000, 4, false},
	{"nan(123)", 0x7ff800000000007b, 8, false},
	{"nan(abc", 0x7ff8000000000000, 3, false},
	{"NaN()", 0x7ff8000000000000, 5, false},
	{"1e400", 0x7ff0000000000000, 5, true},
	{"-1e400", 0xfff0000000000000, 6, true},
	{"1e-400", 0x0000000000000000, 6, true},
	{"0.000e-400", 0x0000000000000000, 10, false},
	{"4.9e-324", 0x0000000000000001, 8, true},
	{"2.4e-324", 0x0000000000000000, 8, true},
	{"0x1p-1080", 0x0000000000000000, 9, true},
	{"+", 0x0000000000000000, 0, false},
	{"-", 0x0000000000000000, 0, false},
	{"", 0x0000000000000000, 0, false},
	{"   ", 0x0000000000000000, 0, false},
	{"12abc", 0x4028000000000000, 2, false},
	{"1.2.3", 0x3ff3333333333333, 3, false},
	{"0000.000e0", 0x0000000000000000, 10, false},
	{"9007199254740993", 0x4340000000000000, 16, false},
	{"1_0", 0x3ff0000000000000, 1, false},
	{"+-1", 0x0000000000000000, 0, false},
	{"0e1000", 0x0000000000000000, 6, false},
	{"0x0p99999", 0x0000000000000000, 9, false},
	{"0x1p-1074", 0x0000000000000001, 9, false},
	{"4.9406564584124654e-324", 0x0000000000000001, 23, true},
	{"0x1.8p-1070", 0x0000000000000018, 11, false},
	{"0x1.0000000000001p-1060", 0x0000000000004000, 23, true},
	{"2.2250738585072014e-308", 0x0010000000000000, 23, false},
	{"2.2250738585072011e-308", 0x000fffffffffffff, 23, true},
	{"-1e-310", 0x800012688b70e62b, 7, true},
	{"1.7976931348623157e308", 0x7fefffffffffffff, 22, false},
	{"1.7976931348623159e308", 0x7ff0000000000000, 22, true},
	{"0x1.fffffffffffffp1023", 0x7fefffffffffffff, 22, false},
	{"nan(0x10)", 0x7ff8000000000010, 9, false},
	{"nan(010)", 0x7ff8000000000008, 8, false},
	{"nan(99999999999999999999999)", 0x7fffffffffffffff, 28, true},
	{"nan(1_)", 0x7ff8000000000000, 7, false},
	{"nan(0x)", 0x7ff8000000000000, 7, false},
	{"nan()", 0x7ff8000000000000, 5, false},
	{"nan(0xfffffffffffff)", 0x7fffffffffffffff, 20, false},
	{"nan(08)", 0x7ff8000000000000, 7, false},
	{"-nan(5)", 0xfff8000000000005, 7, false},
	{"nan(0X1f)", 0x7ff800000000001f, 9, false},
	{"nan(0)", 0x7ff8000000000000, 6, false},
}

func TestStrtodMatchesGlibc(t *testing.T) {
	for _, c := range strtodCases {
		v, n, erange := Strtod(c.in)
		if math.Float64bits(v) != c.bits || n != c.n || erange != c.erange {
			t.Errorf("Strtod(%q) = %#016x, %d, %v; glibc %#016x, %d, %v",
				c.in, math.Float64bits(v), n, erange, c.bits, c.n, c.erange)
		}
		if vb, nb, eb := Strtod([]byte(c.in)); math.Float64bits(vb) != math.Float64bits(v) || nb != n || eb != erange {
			t.Errorf("Strtod([]byte(%q)) differs from the string form", c.in)
		}
	}
}

// From glibc's strtoul (Debian 12, 64-bit).
var strtoulCases = []struct {
	in     string
	base   int
	v      uint64
	n      int
	erange bool
}{
	{"0", 10, 0, 1, false},
	{"  -1", 10, 18446744073709551615, 4, false},
	{"+12z", 10, 12, 3, false},
	{"0x1f", 16, 31, 4, false},
	{"0X", 16, 0, 1, false},
	{"0xg", 16, 0, 1, false},
	{"0x1f", 0, 31, 4, false},
	{"017", 0, 15, 3, false},
	{"08", 0, 0, 1, false},
	{"0", 0, 0, 1, false},
	{"0x", 0, 0, 1, false},
	{"zz", 36, 1295, 2, false},
	{"ZZ", 36, 1295, 2, false},
	{"102", 2, 2, 2, false},
	{"18446744073709551615", 10, 18446744073709551615, 20, false},
	{"18446744073709551616", 10, 18446744073709551615, 20, true},
	{"-18446744073709551616", 10, 18446744073709551615, 21, true},
	{"  \t", 10, 0, 0, false},
	{"-", 10, 0, 0, false},
	{"ff", 15, 0, 0, false},
	{"0x10", 10, 0, 1, false},
	{"1e", 16, 30, 2, false},
}

func TestStrtoulMatchesGlibc(t *testing.T) {
	for _, c := range strtoulCases {
		if v, n, erange := Strtoul(c.in, c.base); v != c.v || n != c.n || erange != c.erange {
			t.Errorf("Strtoul(%q, %d) = %d, %d, %v; glibc %d, %d, %v", c.in, c.base, v, n, erange, c.v, c.n, c.erange)
		}
	}
}
