package resp

import (
	"math"
	"strconv"
	"testing"
)

// The expectations are C's printf("%.17g") (glibc), which Redis 7.0 uses
// for doubles.
func TestAppendFloat17g(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{0.1, "0.10000000000000001"},
		{1e21, "1e+21"},
		{1e22, "1e+22"},
		{1e-5, "1.0000000000000001e-05"},
		{0.0001, "0.0001"},
		{0.000123, "0.00012300000000000001"},
		{123456789012345678, "1.2345678901234568e+17"},
		{12345678901234567890, "1.2345678901234567e+19"},
		{99999999999999999, "1e+17"}, // rounding to 17 digits moves the exponent
		{9.999999999999999e16, "99999999999999984"},
		{1.5, "1.5"},
		{2.5, "2.5"},
		{-2.5e-300, "-2.5e-300"},
		{math.Copysign(0, -1), "-0"},
		{0, "0"},
		{1, "1"},
		{-1, "-1"},
		{100, "100"},
		{1e15, "1000000000000000"},
		{1e16, "10000000000000000"},
		{1e17, "1e+17"},
		{1e100, "1e+100"},
		{3.14159, "3.1415899999999999"},
		{123456.789, "123456.789"},
		{0.30000000000000004, "0.30000000000000004"},
		{5e-324, "4.9406564584124654e-324"},
		{2.2250738585072014e-308, "2.2250738585072014e-308"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
	}
	for _, c := range cases {
		if got := string(AppendFloat17g(nil, c.f)); got != c.want {
			t.Errorf("AppendFloat17g(%v) = %q, want %q", c.f, got, c.want)
		}
		// It appends: a prefix is kept.
		if got := string(AppendFloat17g([]byte("x="), c.f)); got != "x="+c.want {
			t.Errorf("AppendFloat17g with a prefix = %q", got)
		}
	}
}

// Every %.17g text reads back as the same double.
func TestAppendFloat17gRoundTrip(t *testing.T) {
	for i := 0; i < 2000; i++ {
		f := math.Float64frombits(uint64(i)*0x9E3779B97F4A7C15 + 12345)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := string(AppendFloat17g(nil, f))
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || back != f {
			t.Fatalf("%v formatted as %q reads back as %v (%v)", f, s, back, err)
		}
	}
}

func TestDouble(t *testing.T) {
	w := NewWriter()
	w.Double(1.5)
	w.Double(math.Inf(-1))
	if got := string(w.Bytes()); got != "$3\r\n1.5\r\n$4\r\n-inf\r\n" {
		t.Fatalf("RESP2 doubles: %q", got)
	}
	w.Reset()
	w.SetProto(3)
	w.Double(0.1)
	w.Double(math.Inf(1))
	if got := string(w.Bytes()); got != ",0.10000000000000001\r\n,inf\r\n" {
		t.Fatalf("RESP3 doubles: %q", got)
	}
}

// A nil or empty slice is the empty bulk string, never a null: only Null
// and NullArray write those (issue 20).
func TestBulkEmptyIsNotNull(t *testing.T) {
	for _, proto := range []int{2, 3} {
		w := NewWriter()
		w.SetProto(proto)
		w.Bulk(nil)
		w.Bulk([]byte{})
		w.BulkString("")
		if got, want := string(w.Bytes()), "$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n"; got != want {
			t.Errorf("RESP%d: %q, want %q", proto, got, want)
		}
	}
}

func TestAppendCommand(t *testing.T) {
	got := string(AppendCommand([]byte("x"), []byte("SET"), []byte("k"), []byte("")))
	if want := "x*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"; got != want {
		t.Errorf("AppendCommand: %q, want %q", got, want)
	}
}
