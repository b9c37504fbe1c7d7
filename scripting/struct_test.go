package scripting

import (
	"strconv"
	"strings"
	"testing"

	"github.com/revolver-db/revolver/lua"
)

func TestStructPackCases(t *testing.T) {
	runCases(t, []libCase{
		{step: st("struct.pack", "bbBBB", -1, 200, 255, 256, -2), want: `"\xff\xc8\xff\x00\xfe"`},
		{step: st("struct.pack", "<h>h<H>Hh", -2, -2, 65535, 258, 70000), want: `"\xfe\xff\xff\xfe\xff\xff\x01\x02\x11p"`},
		{step: st("struct.pack", "<i>i<I>Iii", -2, 16909060, 4294967295.0, 4294967296.0, 1.9, -1.9), want: `"\xfe\xff\xff\xff\x01\x02\x03\x04\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x01\xff\xff\xff\xff"`},
		{step: st("struct.pack", "<l>l<L>L<T", -2, 9007199254740992.0, 9223372036854775808.0, 18446744073709549568.0, 513), want: `"\xfe\xff\xff\xff\xff\xff\xff\xff\x00 \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\xff\xff\xff\xff\xff\xff\xf8\x00\x01\x02\x00\x00\x00\x00\x00\x00"`},
		{step: st("struct.pack", "<L<L<l<l<L<L", 18446744073709551616.0, 1e30, -1e30, -9223372036854775808.0, -0.5, negNaN), want: `"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x00\x00\x00\x00\x00\x00\x00\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"`},
		{step: st("struct.pack", "<i1>i2<i3>I3<I8>i8", 300, -3, -3, 66051, -1, -2), want: `",\xff\xfd\xfd\xff\xff\x01\x02\x03\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfe"`},
		{step: st("struct.pack", "<i16>I12<i32i0", -1, 1099511627777.0, 5, 7), want: `"\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x01\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"`},
		{step: st("struct.pack", "i>i<hb", "10", "0x10", " 7 ", "-1e1"), want: `"\x0a\x00\x00\x00\x00\x00\x00\x10\x07\x00\xf6"`},
		{step: st("struct.pack", ">d>d>d>d>d>d>d", "0x1.8", "-0x10", "0x1p1", "1e400", "-inf", " 0X1F", "+.5e1"), want: `"?\xf8\x00\x00\x00\x00\x00\x00\xc00\x00\x00\x00\x00\x00\x00@\x00\x00\x00\x00\x00\x00\x00\x7f\xf0\x00\x00\x00\x00\x00\x00\xff\xf0\x00\x00\x00\x00\x00\x00@?\x00\x00\x00\x00\x00\x00@\x14\x00\x00\x00\x00\x00\x00"`},
		{step: st("struct.pack", "d", "1\x00z"), want: `"\x00\x00\x00\x00\x00\x00\xf0?"`},
		{step: st("struct.pack", "d", "0x"), want: "error: bad argument #2 to '?' (number expected, got string)"},
		{step: st("struct.pack", "d", "--1"), want: "error: bad argument #2 to '?' (number expected, got string)"},
		{step: st("struct.pack", "<f>f<f>f<f", 1.5, 1.5, 0.1, 1e40, -inf), want: `"\x00\x00\xc0??\xc0\x00\x00\xcd\xcc\xcc=\x7f\x80\x00\x00\x00\x00\x80\xff"`},
		{step: st("struct.pack", "<d>dd>d", 1.5, 0.1, -5e-324, inf), want: `"\x00\x00\x00\x00\x00\x00\xf8??\xb9\x99\x99\x99\x99\x99\x9a\x80\x00\x00\x00\x00\x00\x00\x01\x7f\xf0\x00\x00\x00\x00\x00\x00"`},
		{step: st("struct.pack", "bxb", 1, 2), want: `"\x01\x00\x02"`},
		{step: st("struct.pack", "xxx"), want: `"\x00\x00\x00"`},
		{step: st("struct.pack", "< > < b", 1), want: `"\x01"`},
		{step: st("struct.pack", ""), want: `""`},
		{step: st("struct.pack", "ssc3c0cc0s", "abc", "", "abcdef", "hello", "xyz", "", "z"), want: `"abc\x00\x00abchelloxz\x00"`},
		{step: st("struct.pack", "sc2bsb", 1.5, 123, 1, "a\x00b", 2), want: `"1.5\x0012\x01a\x00b\x00\x02"`},
		{step: st("struct.pack", "b\x00q", 1), want: `"\x01"`},
		{step: st("struct.pack", "!bd!4bd!2bi!bh!1bi", 1, 0, 1, 0, 1, 2, 1, 2, 1, 2), want: `"\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x02\x00\x00\x00\x01\x00\x02\x00\x01\x02\x00\x00\x00"`},
		{step: st("struct.pack", "!4 b i3", 1, 2), want: `"\x01\x00\x00\x02\x00\x00"`},
		{step: st("struct.pack", "!8 b i6", 1, 2), want: `"\x01\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00"`},
		{step: st("struct.pack", "!b c3 h", 1, "abc", 2), want: `"\x01abc\x02\x00"`},
		{step: st("struct.pack", "!b s h", 1, "ab", 2), want: `"\x01ab\x00\x02\x00"`},
		{step: st("struct.pack", "!bxh", 1, 2), want: `"\x01\x00\x02\x00"`},
		{step: st("struct.pack", "!4 b f", 1, 1), want: `"\x01\x00\x00\x00\x00\x00\x80?"`},
		{step: st("struct.pack", "!16 b d", 1, 1), want: `"\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xf0?"`},
		{step: st("struct.pack", "b!2h", 1, 2), want: `"\x01\x00\x02\x00"`},
		{step: st("struct.pack", "!2b!4i", 1, 2), want: `"\x01\x00\x00\x00\x02\x00\x00\x00"`},
		{step: st("struct.pack"), want: "error: bad argument #1 to '?' (string expected, got no value)"},
		{step: st("struct.pack", lua.NewTable(0, 0)), src: "{}", want: "error: bad argument #1 to '?' (string expected, got table)"},
		{step: st("struct.pack", "i"), want: "error: bad argument #2 to '?' (number expected, got nil)"},
		{step: st("struct.pack", "i", "x"), want: "error: bad argument #2 to '?' (number expected, got string)"},
		{step: st("struct.pack", "bi", 1, lua.NewTable(0, 0)), src: "'bi', 1, {}", want: "error: bad argument #3 to '?' (number expected, got table)"},
		{step: st("struct.pack", "d", true), want: "error: bad argument #2 to '?' (number expected, got boolean)"},
		{step: st("struct.pack", "s"), want: "error: bad argument #2 to '?' (string expected, got nil)"},
		{step: st("struct.pack", "c5", "ab"), want: "error: bad argument #3 to '?' (string too short)"},
		{step: st("struct.pack", "bc5", 1, "ab"), want: "error: bad argument #4 to '?' (string too short)"},
		{step: st("struct.pack", "q"), want: "error: bad argument #1 to '?' (invalid format option 'q')"},
		{step: st("struct.pack", "bq", 1), want: "error: bad argument #1 to '?' (invalid format option 'q')"},
		{step: st("struct.pack", "s5", "abcdef"), want: "error: bad argument #1 to '?' (invalid format option '5')"},
		{step: st("struct.pack", "i33", 1), want: "error: integral size 33 is larger than limit of 32"},
		{step: st("struct.pack", "I99999999999", 1), want: "error: integral size overflow"},
		{step: st("struct.pack", "c2147483648", "a"), want: "error: integral size overflow"},
		{step: st("struct.pack", "!3b", 1), want: "error: alignment 3 is not a power of 2"},
		{step: st("struct.pack", "!0b", 1), want: "error: alignment 0 is not a power of 2"},
		{step: st("struct.pack", "%", 1), want: "error: bad argument #1 to '?' (invalid format option '%')"},
		{step: st("struct.pack", "b\xc8", 1), want: "error: bad argument #1 to '?' (invalid format option '\xc8')"},
		{step: st("struct.pack", 42), want: "error: bad argument #1 to '?' (invalid format option '4')"},
	})
}

func TestStructUnpackCases(t *testing.T) {
	runCases(t, []libCase{
		{step: st("struct.unpack", "<h", "\xfe\xff"), want: "-2, 3"},
		{step: st("struct.unpack", ">hH", "\xfe\xd4\xfd\xe8"), want: "-300, 65000, 5"},
		{step: st("struct.unpack", "bBhHiIlLT", "\xff\xff\xfd\xff\x04\x00\xfb\xff\xff\xff\x06\x00\x00\x00\xf9\xff\xff\xff\xff\xff\xff\xff\x08\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00"), want: "-1, 255, -3, 4, -5, 6, -7, 8, 9, 39"},
		{step: st("struct.unpack", "b", "abc", 2), want: "98, 3"},
		{step: st("struct.unpack", "bb", "abc", 2), want: "98, 99, 4"},
		{step: st("struct.unpack", "xb", "abc"), want: "98, 3"},
		{step: st("struct.unpack", "<fd", "\xcd\xcc\xcc\x3d\x9a\x99\x99\x99\x99\x99\xb9\x3f"), want: "0.10000000149011612, 0.10000000000000001, 13"},
		{step: st("struct.unpack", ">fd", "\xbf\xc0\x00\x00\x7f\xf0\x00\x00\x00\x00\x00\x00"), want: "-1.5, inf, 13"},
		{step: st("struct.unpack", "<I8<i8>I8", strings.Repeat("\xff", 16)+"\x80\x00\x00\x00\x00\x00\x00\x01"), want: "1.8446744073709552e+19, -1, 9.2233720368547758e+18, 25"},
		{step: st("struct.unpack", "<i9<i9<I9", strings.Repeat("\xff", 9)+"\x80\x00\x00\x00\x00\x00\x00\x00\x01"+"\x80\x00\x00\x00\x00\x00\x00\x00\x01"), want: "-1, -128, 128, 28"},
		{step: st("struct.unpack", "<i16>i16<i0", "\x80"+strings.Repeat("\x00", 14)+"\x80"+strings.Repeat("\x00", 14)+"\x01\x02x"), want: "128, 258, 0, 33"},
		{step: st("struct.unpack", ">i3", "\xff\xff\xfe"), want: "-2, 4"},
		{step: st("struct.unpack", ">I3 <i3", "\x01\x02\x03\x01\x02\x03"), want: "66051, 197121, 7"},
		{step: st("struct.unpack", "s", "abc\x00de"), want: `"abc", 5`},
		{step: st("struct.unpack", "ss", "a\x00\x00"), want: `"a", "", 4`},
		{step: st("struct.unpack", "c2c", "abcdef"), want: `"ab", "c", 4`},
		{step: st("struct.unpack", "bc0", "\x03abcdef"), want: `"abc", 5`},
		{step: st("struct.unpack", "c1c0", "2abcdef"), want: `"ab", 4`},
		{step: st("struct.unpack", "bc0", "\x00abc"), want: `"", 2`},
		{step: st("struct.unpack", "dc0", "\x33\x33\x33\x33\x33\x33\xfb\x3fabc"), want: `"a", 10`},
		{step: st("struct.unpack", "sc0", " 2 \x00abc"), want: `"ab", 7`},
		{step: st("struct.unpack", "sc0", "0x2\x00abc"), want: `"ab", 7`},
		{step: st("struct.unpack", "b", "abc", 1.5), want: "97, 2"},
		{step: st("struct.unpack", "b", "abc", "2"), want: "98, 3"},
		{step: st("struct.unpack", "!bd", "\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x40"), want: "7, 2.5, 17"},
		{step: st("struct.unpack", "!4bi", "\x07\x00\x00\x00\x09\x00\x00\x00"), want: "7, 9, 9"},
		{step: st("struct.unpack", "!4i", "zzz\x09\x00\x00\x00", 4), want: "error: bad argument #2 to '?' (data string too short)"},
		{step: st("struct.unpack", "!4i", "zzzz\x09\x00\x00\x00", 2), want: "9, 9"},
		{step: st("struct.unpack", "", "abc"), want: "1"},
		{step: st("struct.unpack", "", "abc", 4), want: "4"},
		{step: st("struct.unpack", "", "abc", -1), want: "-1"},
		{step: st("struct.unpack", "<", "abc", 3), want: "3"},
		{step: st("struct.unpack", "i", "ab"), want: "error: bad argument #2 to '?' (data string too short)"},
		{step: st("struct.unpack", "b"), want: "error: bad argument #2 to '?' (string expected, got no value)"},
		{step: st("struct.unpack"), want: "error: bad argument #1 to '?' (string expected, got no value)"},
		{step: st("struct.unpack", "b", "abc", 0), want: "error: bad argument #3 to '?' (offset must be 1 or greater)"},
		{step: st("struct.unpack", "b", "abc", -1), want: "error: bad argument #2 to '?' (data string too short)"},
		{step: st("struct.unpack", "b", "abc", 4), want: "error: bad argument #2 to '?' (data string too short)"},
		{step: st("struct.unpack", "b", "abc", "x"), want: "error: bad argument #3 to '?' (number expected, got string)"},
		{step: st("struct.unpack", "c0", "abc"), want: "error: format 'c0' needs a previous size"},
		{step: st("struct.unpack", "c1c0", "xabc"), want: "error: format 'c0' needs a previous size"},
		{step: st("struct.unpack", "bc0", "\x09abc"), want: "error: bad argument #2 to '?' (data string too short)"},
		{step: st("struct.unpack", "bc0", "\xffabc"), want: "error: bad argument #2 to '?' (data string too short)"},
		{step: st("struct.unpack", "dc0", "\x00\x00\x00\x00\x00\x00\xf0\xbfabc"), want: "error: bad argument #2 to '?' (data string too short)"},
		{step: st("struct.unpack", "sc0", "x\x00abc"), want: "error: format 'c0' needs a previous size"},
		{step: st("struct.unpack", "xc0", "abc"), want: "error: format 'c0' needs a previous size"},
		{step: st("struct.unpack", "s", "abc"), want: "error: unfinished string in data"},
		{step: st("struct.unpack", "bs", "a"), want: "error: unfinished string in data"},
		{step: st("struct.unpack", "q", "abc"), want: "error: bad argument #1 to '?' (invalid format option 'q')"},
		{step: st("struct.unpack", "q", "abc", 5), want: "error: bad argument #2 to '?' (data string too short)"},
		{step: st("struct.unpack", "!5", "abc"), want: "error: alignment 5 is not a power of 2"},
		{step: st("struct.unpack", "i40", "abc"), want: "error: integral size 40 is larger than limit of 32"},
		{step: st("struct.unpack", 42, 4242), want: "error: bad argument #1 to '?' (invalid format option '4')"},
	})
}

func TestStructSizeCases(t *testing.T) {
	var cases []libCase
	for _, c := range []struct{ format, want string }{
		{format: "b", want: "1"},
		{format: "h", want: "2"},
		{format: "i", want: "4"},
		{format: "l", want: "8"},
		{format: "T", want: "8"},
		{format: "f", want: "4"},
		{format: "d", want: "8"},
		{format: "x", want: "1"},
		{format: "c", want: "1"},
		{format: "c7", want: "7"},
		{format: "bhilTfd", want: "35"},
		{format: "!bhilTfd", want: "40"},
		{format: "!bd", want: "16"},
		{format: "!4bd", want: "12"},
		{format: "<i8 >I3 !2 b i2", want: "14"},
		{format: "", want: "0"},
		{format: "q", want: "0"},
		{format: "zzz", want: "0"},
		{format: "i2 5 b", want: "3"},
		{format: "  ", want: "0"},
		{format: "!", want: "0"},
		{format: "!16d", want: "8"},
		{format: "c99999", want: "99999"},
		{format: "!4 b i3 c2 h", want: "10"},
		{format: "i33", want: "error: integral size 33 is larger than limit of 32"},
		{format: "s", want: "error: bad argument #1 to '?' (option 's' has no fixed size)"},
		{format: "bc0", want: "error: bad argument #1 to '?' (option 'c0' has no fixed size)"},
		{format: "#", want: "error: bad argument #1 to '?' (invalid format option '#')"},
		{format: "!3", want: "error: alignment 3 is not a power of 2"},
		{format: "b\xe9", want: "error: bad argument #1 to '?' (invalid format option '\xe9')"},
	} {
		cases = append(cases, libCase{step: st("struct.size", c.format), want: c.want})
	}
	cases = append(cases,
		libCase{step: st("struct.size"), want: "error: bad argument #1 to '?' (string expected, got no value)"},
		libCase{step: st("struct.size", 42), want: "0"},
	)
	runCases(t, cases)
}

// TestStructStackLimits checks unpack's limit on results (the C stack's
// 8000 slots, less the arguments), recorded from Redis.
func TestStructStackLimits(t *testing.T) {
	L := newState()
	for _, c := range []struct {
		n     int
		extra []lua.Value
		want  string
	}{
		{7997, nil, "7998"},
		{7998, nil, "error: stack overflow (too many results)"},
		{7996, vals(1, 2), "error: stack overflow (too many results)"},
		{7995, vals(1, 2), "7996"},
	} {
		args := append([]lua.Value{lua.String(strings.Repeat("b", c.n)), lua.String(strings.Repeat("a", c.n))}, c.extra...)
		got := ""
		if res, err := L.PCall(libFunc(t, L, "struct.unpack"), args, -1, lua.Nil); err != nil {
			got = "error: " + err.Error()
		} else {
			got = strconv.Itoa(len(res))
		}
		if got != c.want {
			t.Errorf("unpack of %d: %s, want %s", c.n, got, c.want)
		}
	}
}
