package engine

import (
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// Expected texts were produced by redis-server 7.0.15 on x86-64 (SET f a;
// INCRBYFLOAT f b); tests/incrbyfloat_test.go compares random sums against
// a live server.
func TestAddLongDoubleStrings(t *testing.T) {
	cases := []struct{ cur, incr, want string }{
		// float64 would give 10.599999999999999, 0.30000000000000004, ...
		{"10.50", "0.1", "10.6"},
		{"0.1", "0.2", "0.3"},
		{"1.1", "2.2", "3.3"},
		{"0.1", "0.7", "0.8"},
		{"3", "-3", "0"},
		{"-1", "0.5", "-0.5"},
		{"-0.0", "0", "0"}, // never "-0"
		{"1e3", "0", "1000"},
		{"0x10", "0", "16"},
		{"1", "1e-20", "1"},
		{"5e-324", "0", "0"},
		{"1.5", "1e17", "100000000000000001.5"},
		{"123456789012345678", "1", "123456789012345679"},
		{"9007199254740993", "0", "9007199254740993"}, // not representable in float64
		{"1e-17", "0", "0.00000000000000001"},
		{"1e-18", "0", "0"},
		{"5e-18", "0", "0"},
		{"1.5e-17", "0", "0.00000000000000002"},
		{"2.5e-17", "0", "0.00000000000000002"},
		{"1", "-1e-17", "0.99999999999999999"},
		{"100", "0.000000000000000005", "100.00000000000000001"},
		{"0x1p-16445", "0", "0"},
		{"1e308", "1e308", "199999999999999999993371759311691291321120199694831134415594095989843469737676123744200253843777078640893494450108026446304269499187921167194841628860392837535918200039206381557326219209014213335878306791577877829121087126122536729803237260434173178506889763247582601711514636284849020905456510092687857156096"},
		{"", "1.5", "1.5"}, // "" stands for a missing key here (nil)
	}
	for _, c := range cases {
		var cur []byte
		if c.cur != "" {
			cur = []byte(c.cur)
		}
		got, err := AddLongDoubleStrings(cur, []byte(c.incr))
		if err != nil || string(got) != c.want {
			t.Errorf("%s + %s = %q, %v; want %q", c.cur, c.incr, got, err, c.want)
		}
	}
}

func TestAddLongDoubleStringsErrors(t *testing.T) {
	cases := []struct {
		cur, incr string
		want      error
	}{
		{"abc", "1", ErrNotFloat},
		{"", "1", ErrNotFloat}, // an empty stored string is not a number
		{"1", "", ErrNotFloat},
		{"1", " 1", ErrNotFloat},
		{"1", "1 ", ErrNotFloat},
		{"1", "1\x00", ErrNotFloat},
		{"1\x002", "1", ErrNotFloat},
		{"1", "nan", ErrNotFloat},
		{"1", "-nan", ErrNotFloat},
		{"1", "1e", ErrNotFloat},
		{"1", "0x", ErrNotFloat},
		{"1", "0x1p", ErrNotFloat},
		{"1", "1_0", ErrNotFloat},
		{"1", "infinit", ErrNotFloat},
		{"1", "1e5000", ErrNotFloat},                       // overflows long double
		{"1", "1.18973149535723176508e+4932", ErrNotFloat}, // just past the largest value
		{"1", "1e-5000", ErrNotFloat},                      // underflows to zero
		{"abc", "inf", ErrNotFloat},                        // the stored value is parsed first
		{"1", "inf", ErrNaNOrInf},
		{"1", "-Infinity", ErrNaNOrInf},
		{"inf", "1", ErrNaNOrInf},
		{"1.1e4932", "1.1e4932", ErrNaNOrInf},
	}
	for _, c := range cases {
		got, err := AddLongDoubleStrings([]byte(c.cur), []byte(c.incr))
		if err != c.want {
			t.Errorf("%q + %q = %q, %v; want %v", c.cur, c.incr, got, err, c.want)
		}
	}
}

func TestParseLongDoubleSpellings(t *testing.T) {
	ok := []string{"1", "+1", "-1", ".5", "5.", "1e3", "1E+3", "1e-3", "0x10", "0X1a", "0x1p4", "0x1.8p1",
		"0x.8", "00012", "inf", "-INF", "Infinity", "+infinity", "1.18973149535723176502e+4932", "3.6e-4951"}
	for _, s := range ok {
		if _, valid := parseLongDouble([]byte(s)); !valid {
			t.Errorf("parseLongDouble(%q) rejected", s)
		}
	}
	bad := []string{"", ".", "e3", "+", "-", "++1", "+-1", "1..2", "1e3.5", "0b101", "0o7", "0xg", "nan(1)",
		"\t1", "1\n", strings.Repeat("1", maxLongDoubleChars)}
	for _, s := range bad {
		if _, valid := parseLongDouble([]byte(s)); valid {
			t.Errorf("parseLongDouble(%q) accepted", s)
		}
	}
}

func TestMaxLongDouble(t *testing.T) {
	// LDBL_MAX on x86-64 is 1.18973149535723176502e+4932.
	if got := maxLongDouble.Text('e', 20); got != "1.18973149535723176502e+4932" {
		t.Fatalf("maxLongDouble = %s", got)
	}
	if maxLongDouble.Prec() != longDoublePrec {
		t.Fatalf("maxLongDouble has %d bits of precision", maxLongDouble.Prec())
	}
	mant := new(big.Float)
	if exp := maxLongDouble.MantExp(mant); exp != 16384 {
		t.Fatalf("maxLongDouble exponent %d", exp)
	}
}

// The longest text is that of the largest finite value: %.17Lf of it fits
// Redis's 5 KiB buffer, so no finite sum is ever stored as an empty string.
func TestFormatLongDoubleLongest(t *testing.T) {
	got, err := AddLongDoubleStrings([]byte("1.18973149535723176502e+4932"), []byte("0"))
	if err != nil || len(got) != 4933 || !strings.HasPrefix(string(got), "1189731495357231765") {
		t.Fatalf("LDBL_MAX: %d bytes %.20q, %v", len(got), got, err)
	}
	got, err = AddLongDoubleStrings([]byte("-1e4000"), []byte("0"))
	// The long double nearest 1e4000 is a little below it (redis-server:
	// "-99999999999999999999654638730...", 4001 bytes).
	if err != nil || len(got) != 4001 || !strings.HasPrefix(string(got), "-99999999999999999999654638730") {
		t.Fatalf("-1e4000: %d bytes, %v", len(got), err)
	}
}

// TestLongDoubleVsFloat64 checks that the arithmetic is really 64-bit
// mantissa: sums of short decimals that float64 gets visibly wrong come
// out as typed.
func TestLongDoubleVsFloat64(t *testing.T) {
	differ := 0
	for a := 1; a <= 60; a++ {
		for b := 1; b <= 60; b++ {
			x, y := strconv.Itoa(a)+".1", "0."+strconv.Itoa(b)
			got, err := AddLongDoubleStrings([]byte(x), []byte(y))
			if err != nil {
				t.Fatal(err)
			}
			exact := new(big.Rat)
			exact.SetString(x)
			ry, _ := new(big.Rat).SetString(y)
			exact.Add(exact, ry)
			if want := strings.TrimRight(strings.TrimRight(exact.FloatString(17), "0"), "."); string(got) != want {
				t.Fatalf("%s + %s = %s, want %s", x, y, got, want)
			}
			fx, _ := strconv.ParseFloat(x, 64)
			fy, _ := strconv.ParseFloat(y, 64)
			if strconv.FormatFloat(fx+fy, 'f', 17, 64) != exact.FloatString(17) {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Fatal("no case where float64 differs: the test does not test anything")
	}
}
