package scripting

import (
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/revolver-db/revolver/lua"
)

var posNaN = math.Float64frombits(0x7ff8000000000000) // -(0/0) in Lua

func TestCMsgpackPackCases(t *testing.T) {
	// t = {} t[3] = 'c' t[1] = 'a' t[2] = 'b'
	backwards := assigned(3, "c", 1, "a", 2, "b")
	holed := array(1, 2, 3)
	holed.SetInt(2, lua.Nil)
	mixed := lua.NewTable(3, 1) // {1, 2, 3, x = 1}
	mixed.SetStr("x", lua.Number(1))
	for i := 1; i <= 3; i++ {
		mixed.SetInt(i, lua.Number(float64(i)))
	}
	keys17 := lua.NewTable(0, 0)
	for i := 1; i <= 17; i++ {
		keys17.SetStr("k"+strconv.Itoa(i), lua.Number(float64(i)))
	}
	chain := func(n int, key lua.Value) *lua.Table { // c[key] = {} n times down
		root := lua.NewTable(0, 0)
		c := root
		for i := 0; i < n; i++ {
			next := lua.NewTable(0, 0)
			c.Set(key, lua.TableValue(next))
			c = next
		}
		return root
	}
	self := lua.NewTable(0, 0)
	self.SetInt(1, lua.TableValue(self))
	runCases(t, []libCase{
		{step: st("cmsgpack.pack", nil), want: `"\xc0"`},
		{step: st("cmsgpack.pack", true), want: `"\xc3"`},
		{step: st("cmsgpack.pack", false), want: `"\xc2"`},
		{step: st("cmsgpack.pack", goFunc), want: `"\xc0"`},
		{step: st("cmsgpack.pack", Null), want: `"\xc0"`},
		{step: st("cmsgpack.pack", 0, 1, 127, 128, 255), want: `"\x00\x01\x7f\xcc\x80\xcc\xff"`},
		{step: st("cmsgpack.pack", 256, 65535, 65536, 4294967295.0, 4294967296.0), want: `"\xcd\x01\x00\xcd\xff\xff\xce\x00\x01\x00\x00\xce\xff\xff\xff\xff\xcf\x00\x00\x00\x01\x00\x00\x00\x00"`},
		{step: st("cmsgpack.pack", 9007199254740992.0, 4611686018427387904.0, 9223372036854774784.0, 9223372036854775808.0, 18446744073709551616.0), want: `"\xcf\x00 \x00\x00\x00\x00\x00\x00\xcf@\x00\x00\x00\x00\x00\x00\x00\xcf\x7f\xff\xff\xff\xff\xff\xfc\x00\xca_\x00\x00\x00\xca_\x80\x00\x00"`},
		{step: st("cmsgpack.pack", -1, -32, -33, -128, -129), want: `"\xff\xe0\xd0\xdf\xd0\x80\xd1\xff\x7f"`},
		{step: st("cmsgpack.pack", -32768, -32769, -2147483648.0, -2147483649.0, -9007199254740992.0), want: `"\xd1\x80\x00\xd2\xff\xff\x7f\xff\xd2\x80\x00\x00\x00\xd3\xff\xff\xff\xff\x7f\xff\xff\xff\xd3\xff\xe0\x00\x00\x00\x00\x00\x00"`},
		{step: st("cmsgpack.pack", -9223372036854775808.0, -9223372036854779904.0, math.Copysign(0, -1), 1e19, -1e19), want: "\"\\xd3\\x80\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\xcb\\xc3\\xe0\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xcbC\\xe1X\\xe4`\\x91=\\x00\\xcb\\xc3\\xe1X\\xe4`\\x91=\\x00\""},
		{step: st("cmsgpack.pack", 0.5, 1.5, -0.25, 0.1, 3.14159), want: `"\xca?\x00\x00\x00\xca?\xc0\x00\x00\xca\xbe\x80\x00\x00\xcb?\xb9\x99\x99\x99\x99\x99\x9a\xcb@\x09!\xf9\xf0\x1b\x86n"`},
		{step: st("cmsgpack.pack", 1e300, -1e-300, 1267650600228229401496703205376.0, inf, -inf), want: `"\xcb~7\xe4<\x88\x00u\x9c\xcb\x81\xa5n\x1f\xc2\xf8\xf3Y\xcaq\x80\x00\x00\xca\x7f\x80\x00\x00\xca\xff\x80\x00\x00"`},
		{step: st("cmsgpack.pack", math.Ldexp(1, -149), math.Ldexp(1, -150), 3.4028234663852886e38, 3.5e38), want: `"\xca\x00\x00\x00\x01\xcb6\x90\x00\x00\x00\x00\x00\x00\xca\x7f\x7f\xff\xff\xcbG\xf0t\xf8\xc4\xd3\xcd{"`},
		{step: st("cmsgpack.pack", negNaN, posNaN), want: `"\xcb\xff\xf8\x00\x00\x00\x00\x00\x00\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00"`},
		{step: st("cmsgpack.pack", "", "a", "12", "\x00\xff"), want: `"\xa0\xa1a\xa212\xa2\x00\xff"`},
		{step: st("cmsgpack.pack", strings.Repeat("x", 31), strings.Repeat("y", 32)), want: `"\xbfxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\xd9 yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"`},
		{step: st("cmsgpack.pack", 1, "a", array(2), nil, true, -1.5), src: "1, 'a', {2}, nil, true, -1.5", want: `"\x01\xa1a\x91\x02\xc0\xc3\xca\xbf\xc0\x00\x00"`},
		{step: st("cmsgpack.pack", nil, nil), want: `"\xc0\xc0"`},
		{step: st("cmsgpack.pack"), want: "error: bad argument #0 to '?' (MessagePack pack needs input.)"},
		{step: st("cmsgpack.pack", lua.NewTable(0, 0)), src: "{}", want: `"\x90"`},
		{step: st("cmsgpack.pack", array(1, 2, 3), array("a", true, false)), src: "{1, 2, 3}, {'a', true, false}", want: `"\x93\x01\x02\x03\x93\xa1a\xc3\xc2"`},
		{step: st("cmsgpack.pack", array(array(), array(array()))), src: "{{}, {{}}}", want: `"\x92\x90\x91\x90"`},
		{step: st("cmsgpack.pack", backwards), src: "(function() local t = {} t[3] = 'c' t[1] = 'a' t[2] = 'b' return t end)()", want: `"\x93\xa1a\xa1b\xa1c"`},
		{step: st("cmsgpack.pack", record("a", 1), record(0, 1), record(-1, 1), record(1.5, 1), record(2, "x")), src: "{a = 1}, {[0] = 1}, {[-1] = 1}, {[1.5] = 1}, {[2] = 'x'}", want: `"\x81\xa1a\x01\x81\x00\x01\x81\xff\x01\x81\xca?\xc0\x00\x00\x01\x81\x02\xa1x"`},
		{step: st("cmsgpack.pack", record(2147483648.0, 1), record(2147483647.0, 1), record(true, false)), src: "{[2^31] = 1}, {[2^31 - 1] = 1}, {[true] = false}", want: `"\x81\xce\x80\x00\x00\x00\x01\x81\xce\x7f\xff\xff\xff\x01\x81\xc3\xc2"`},
		{step: st("cmsgpack.pack", record(array(1), record("b", 2))), src: "{[{1}] = {b = 2}}", want: `"\x81\x91\x01\x81\xa1b\x02"`},
		{step: st("cmsgpack.pack", array(1, 2, nil, 4)), src: "{1, 2, nil, 4}", want: `"\x83\x01\x01\x02\x02\x04\x04"`},
		{step: st("cmsgpack.pack", holed), src: "(function() local t = {1, 2, 3} t[2] = nil return t end)()", want: `"\x82\x01\x01\x03\x03"`},
		{step: st("cmsgpack.pack", assigned(1.0, "a", 2, "b")), src: "(function() local u = {} u[1.0] = 'a' u[2] = 'b' return u end)()", want: `"\x92\xa1a\xa1b"`},
		{step: st("cmsgpack.pack", mixed), src: "{1, 2, 3, x = 1}", want: `"\x84\x01\x01\x02\x02\x03\x03\xa1x\x01"`},
		{step: st("cmsgpack.pack", keys17), src: "(function() local t = {} for i = 1, 17 do t['k' .. i] = i end return t end)()", want: `"\xde\x00\x11\xa3k16\x10\xa3k11\x0b\xa3k17\x11\xa3k10\x0a\xa2k8\x08\xa2k1\x01\xa3k12\x0c\xa2k3\x03\xa2k2\x02\xa2k9\x09\xa3k13\x0d\xa3k15\x0f\xa3k14\x0e\xa2k6\x06\xa2k7\x07\xa2k4\x04\xa2k5\x05"`},
		{step: st("cmsgpack.pack", record("a", record("b", record("c", array(1, 2, record("d", "e")))))), src: "{a = {b = {c = {1, 2, {d = 'e'}}}}}", want: `"\x81\xa1a\x81\xa1b\x81\xa1c\x93\x01\x02\x81\xa1d\xa1e"`},
		{step: st("cmsgpack.pack", chain(20, lua.Number(1))), src: "(function() local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return t end)()", want: `"\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\xc0"`},
		{step: st("cmsgpack.pack", chain(20, lua.String("k"))), src: "(function() local t = {} local c = t for i = 1, 20 do c.k = {} c = c.k end return t end)()", want: `"\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\x81\xa1k\xc0"`},
		{step: st("cmsgpack.pack", chain(15, lua.Number(1))), src: "(function() local t = {} local c = t for i = 1, 15 do c[1] = {} c = c[1] end return t end)()", want: `"\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x90"`},
		{step: st("cmsgpack.pack", self), src: "(function() local t = {} t[1] = t return t end)()", want: `"\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\x91\xc0"`},
		{step: st("cmsgpack.pack", record("alpha", 1, "beta", 2, "gamma", 3, "delta", 4, "epsilon", 5)), src: "{alpha=1, beta=2, gamma=3, delta=4, epsilon=5}", want: `"\x85\xa4beta\x02\xa7epsilon\x05\xa5delta\x04\xa5alpha\x01\xa5gamma\x03"`},
	})
}

func TestCMsgpackUnpackCases(t *testing.T) {
	b := func(bs ...byte) string { return string(bs) }
	stream := "\x01\xa3abc\x92\x01\x02\xc0\x05" // pack(1, 'abc', {1, 2}, nil, 5)
	runCases(t, []libCase{
		{step: st("cmsgpack.unpack", b(0x01, 0xa3)+"two"+b(0x03)), want: `1, "two", 3`},
		{step: st("cmsgpack.unpack", b(0xc3, 0xc2, 0xca, 0x3f, 0xc0, 0, 0, 0xa1)+"s"), want: `true, false, 1.5, "s"`},
		{step: st("cmsgpack.unpack", ""), want: ""},
		{step: st("cmsgpack.unpack", 123), want: "49, 50, 51"},
		{step: st("cmsgpack.unpack", b(0xcf, 255, 255, 255, 255, 255, 255, 255, 255)), want: "-1"},
		{step: st("cmsgpack.unpack", b(0xcf, 128, 0, 0, 0, 0, 0, 0, 0)), want: "-9.2233720368547758e+18"},
		{step: st("cmsgpack.unpack", b(0xd3, 255, 255, 255, 255, 255, 255, 255, 254, 0xd2, 128, 0, 0, 0, 0xd1, 128, 1, 0xd0, 128)), want: "-2, -2147483648, -32767, -128"},
		{step: st("cmsgpack.unpack", b(0xcc, 200, 0xcd, 1, 2, 0xce, 255, 0, 0, 1, 0xe0, 0x7f)), want: "200, 258, 4278190081, -32, 127"},
		{step: st("cmsgpack.unpack", b(0xca, 0x3d, 0xcc, 0xcc, 0xcd, 0xcb, 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a)), want: "0.10000000149011612, 0.10000000000000001"},
		{step: st("cmsgpack.unpack", b(0xcb, 0xff, 0xf8, 0, 0, 0, 0, 0, 1)), want: "-nan"},
		{step: st("cmsgpack.unpack", b(0xd9, 3)+"abc"+b(0xda, 0, 2)+"de"+b(0xdb, 0, 0, 0, 1)+"f"+b(0xa2)+"gh"), want: `"abc", "de", "f", "gh"`},
		{step: st("cmsgpack.unpack", b(0xdc, 0, 2, 1, 2, 0xdd, 0, 0, 0, 1, 7, 0xde, 0, 1, 0xa1, 0x61, 5, 0xdf, 0, 0, 0, 1, 1, 0xa1, 0x62)), want: `{1=1,2=2}, {1=7}, {"a"=5}, {1="b"}`},
		{step: st("cmsgpack.unpack", b(0x93, 1, 0xc0, 3, 0x82, 1, 0xc0, 2, 0xc3)), want: "{1=1,3=3}, {2=true}"},
		{step: st("cmsgpack.unpack", b(0x81, 0x91, 1, 2)), want: "{{1=1}=2}"},
		{step: st("cmsgpack.unpack", b(0x85, 0xa1, 'a', 1, 0xa1, 'b', 2, 0xa1, 'c', 3, 0xa1, 'd', 4, 0xa1, 'e', 5)), want: `{"a"=1,"c"=3,"b"=2,"e"=5,"d"=4}`},
		{step: st("cmsgpack.unpack", "\x01\x02", 1, 2, 3), want: "1, 2"},
		{step: st("cmsgpack.unpack_one", stream), want: "1, 1"},
		{step: st("cmsgpack.unpack_one", stream, 1), want: `5, "abc"`},
		{step: st("cmsgpack.unpack_one", stream, 5), want: "8, {1=1,2=2}"},
		{step: st("cmsgpack.unpack_one", stream, 8), want: "9, nil"},
		{step: st("cmsgpack.unpack_one", stream, 9), want: "-1, 5"},
		{step: st("cmsgpack.unpack_one", stream, 10), want: "-1"},
		{step: st("cmsgpack.unpack_one", ""), want: "-1"},
		{step: st("cmsgpack.unpack_one", "\x01\x02\x03", 1.9), want: "2, 2"},
		{step: st("cmsgpack.unpack_one", "\x01\x02\x03", "1"), want: "2, 2"},
		{step: st("cmsgpack.unpack_one", "\x01\x02\x03", nil), want: "1, 1"},
		{step: st("cmsgpack.unpack_one", "ab", "0x1"), want: "-1, 98"},
		{step: st("cmsgpack.unpack_one", "ab", " 1 "), want: "-1, 98"},
		{step: st("cmsgpack.unpack_one", "ab", negNaN), want: "error: Invalid request to unpack with offset of 0 and limit of 2."},
		{step: st("cmsgpack.unpack_one", "ab", "1x"), want: "error: bad argument #2 to '?' (number expected, got string)"},
		{step: st("cmsgpack.unpack_limit", "\x01\x02\x03\x04\x05", 2), want: "2, 1, 2"},
		{step: st("cmsgpack.unpack_limit", "\x01\x02\x03\x04\x05", 2, 3), want: "-1, 4, 5"},
		{step: st("cmsgpack.unpack_limit", "\x01\x02\x03\x04\x05", 10, 1), want: "-1, 2, 3, 4, 5"},
		{step: st("cmsgpack.unpack_limit", "\x01\x02\x03\x04\x05", 0), want: "1, 2, 3, 4, 5"},
		{step: st("cmsgpack.unpack_limit", "\x01\x02\x03\x04\x05", 0, 2), want: "2"},
		{step: st("cmsgpack.unpack_limit", "\x01\x02\x03\x04\x05", 0, 5), want: "-1"},
		{step: st("cmsgpack.unpack_limit", "ab", 4611686018427387904.0), want: "-1, 97, 98"},
		{step: st("cmsgpack.unpack_limit", "ab", 9223372036854775808.0), want: "error: Invalid request to unpack with offset of 0 and limit of 2."},
		{step: st("cmsgpack.unpack"), want: "error: bad argument #1 to '?' (string expected, got no value)"},
		{step: st("cmsgpack.unpack", lua.NewTable(0, 0)), src: "{}", want: "error: bad argument #1 to '?' (string expected, got table)"},
		{step: st("cmsgpack.unpack", nil), want: "error: bad argument #1 to '?' (string expected, got nil)"},
		{step: st("cmsgpack.unpack_one"), want: "error: bad argument #1 to '?' (string expected, got no value)"},
		{step: st("cmsgpack.unpack_one", "abc", "x"), want: "error: bad argument #2 to '?' (number expected, got string)"},
		{step: st("cmsgpack.unpack_one", true), want: "error: bad argument #1 to '?' (string expected, got boolean)"},
		{step: st("cmsgpack.unpack_limit", "abc"), want: "error: bad argument #2 to '?' (number expected, got no value)"},
		{step: st("cmsgpack.unpack_limit", "abc", 1, "z"), want: "error: bad argument #3 to '?' (number expected, got string)"},
		{step: st("cmsgpack.unpack_one", "abc", -1), want: "error: Invalid request to unpack with offset of -1 and limit of 3."},
		{step: st("cmsgpack.unpack_limit", "abcd", -2, 1), want: "error: Invalid request to unpack with offset of 1 and limit of 4."},
		{step: st("cmsgpack.unpack_one", "abc", 4), want: "error: Start offset 4 greater than input length 3."},
		{step: st("cmsgpack.unpack_one", "abc", 4294967301.0), want: "error: Start offset 5 greater than input length 3."},
		{step: st("cmsgpack.unpack", b(0xcd, 1)), want: "error: Missing bytes in input."},
		{step: st("cmsgpack.unpack", b(0x92, 1)), want: "error: Missing bytes in input."},
		{step: st("cmsgpack.unpack", b(0x82, 1, 2, 3)), want: "error: Missing bytes in input."},
		{step: st("cmsgpack.unpack", b(0xa5)+"ab"), want: "error: Missing bytes in input."},
		{step: st("cmsgpack.unpack", b(0xdb, 0, 1, 0, 0)+"ab"), want: "error: Missing bytes in input."},
		{step: st("cmsgpack.unpack", b(0xdd, 255, 255, 255, 255, 1, 2)), want: "error: Missing bytes in input."},
		{step: st("cmsgpack.unpack", b(0xc1)), want: "error: Bad data format in input."},
		{step: st("cmsgpack.unpack", b(0xc4, 1, 0)), want: "error: Bad data format in input."},
		{step: st("cmsgpack.unpack", b(1, 2, 0xc7)), want: "error: Bad data format in input."},
		{step: st("cmsgpack.unpack", b(0x91, 0xc1)), want: "error: Bad data format in input."},
		{step: st("cmsgpack.unpack_one", b(1, 0xc1)), want: "1, 1"},
		{step: st("cmsgpack.unpack_limit", b(1, 2, 0xcd), 2), want: "2, 1, 2"},
		{step: st("cmsgpack.unpack_limit", b(1, 2, 0xcd), 3), want: "error: Missing bytes in input."},
		{step: st("cmsgpack.unpack", b(0x81, 0xc0, 1)), want: "error: table index is nil"},
		{step: st("cmsgpack.unpack", b(0x81, 0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0, 1)), want: "error: table index is NaN"},
		{step: st("cmsgpack.unpack", b(0x81, 0xc0)), want: "error: Missing bytes in input."},
	})
}

// TestCMsgpackLong checks long strings, arrays and maps: their headers and
// lengths as Redis packs them, and the round trip.
func TestCMsgpackLong(t *testing.T) {
	L := newState()
	packed := func(v lua.Value) string {
		s, _ := L.Call1(libFunc(t, L, "cmsgpack.pack"), v).AsString()
		return s
	}
	// Recorded from Redis: local p = cmsgpack.pack(x) return {#p, p:sub(1, 6)}
	for _, c := range []struct {
		n, size int
		head    string
	}{ // x = string.rep('x', n)
		{255, 257, "\xd9\xffxxxx"}, {256, 259, "\xda\x01\x00xxx"}, {65535, 65538, "\xda\xff\xffxxx"},
		{65536, 65541, "\xdb\x00\x01\x00\x00x"}, {100000, 100005, "\xdb\x00\x01\x86\xa0x"},
	} {
		s := strings.Repeat("x", c.n)
		p := packed(lua.String(s))
		if len(p) != c.size || p[:6] != c.head {
			t.Errorf("string of %d: %d bytes, %q", c.n, len(p), p[:6])
		}
		if got := L.Call1(libFunc(t, L, "cmsgpack.unpack"), lua.String(p)); !lua.RawEqual(got, lua.String(s)) {
			t.Errorf("string of %d does not come back", c.n)
		}
	}
	for _, c := range []struct {
		n, size int
		head    string
	}{ // x = {} with x[i] = i % 3 for i = 1, n
		{15, 16, "\x9f\x01\x02\x00\x01\x02"}, {16, 19, "\xdc\x00\x10\x01\x02\x00"},
		{65535, 65538, "\xdc\xff\xff\x01\x02\x00"}, {65536, 65541, "\xdd\x00\x01\x00\x00\x01"},
	} {
		tb := lua.NewTable(0, 0)
		for i := 1; i <= c.n; i++ {
			tb.SetInt(i, lua.Number(float64(i%3)))
		}
		p := packed(lua.TableValue(tb))
		if len(p) != c.size || p[:6] != c.head {
			t.Errorf("array of %d: %d bytes, %q", c.n, len(p), p[:6])
		}
	}
	// local t = {} for i = 1, 65536 do t['k' .. i] = 1 end: #p, p:sub(1, 5)
	tb := lua.NewTable(0, 0)
	for i := 1; i <= 65536; i++ {
		tb.SetStr("k"+strconv.Itoa(i), lua.Number(1))
	}
	if p := packed(lua.TableValue(tb)); len(p) != 513187 || p[:5] != "\xdf\x00\x01\x00\x00" {
		t.Errorf("map of 65536: %d bytes, %q", len(p), p[:5])
	}
	// local t = {} for i = 1, 70000 do t[i] = i end: the round trip.
	tb = lua.NewTable(0, 0)
	for i := 1; i <= 70000; i++ {
		tb.SetInt(i, lua.Number(float64(i)))
	}
	u := L.Call1(libFunc(t, L, "cmsgpack.unpack"), lua.String(packed(lua.TableValue(tb)))).AsTable()
	if u.Len() != 70000 || !lua.RawEqual(u.GetInt(65536), lua.Number(65536)) {
		t.Errorf("array of 70000: length %d", u.Len())
	}
}

// TestCMsgpackStackLimits checks the counts Redis accepts just below its C
// stack limit (8000 slots) and the errors just past it (recorded from
// Redis: the number of results of a pcall, or its error).
func TestCMsgpackStackLimits(t *testing.T) {
	L := newState()
	count := func(path string, args ...lua.Value) string {
		res, err := L.PCall(libFunc(t, L, path), args, -1, lua.Nil)
		if err != nil {
			return "error: " + err.Error()
		}
		return strconv.Itoa(len(res))
	}
	ones := func(n int) lua.Value { return lua.String(strings.Repeat("\x01", n)) }
	for _, c := range []struct {
		got, want string
	}{
		{count("cmsgpack.unpack", ones(7999)), "7999"},
		{count("cmsgpack.unpack", ones(8000)), "error: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"},
		{count("cmsgpack.unpack", append([]lua.Value{ones(7990)}, vals(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)...)...), "error: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"},
		{count("cmsgpack.unpack_limit", ones(7998), lua.Number(7998)), "7999"},
		{count("cmsgpack.unpack_limit", ones(7999), lua.Number(7999)), "error: stack overflow (in function mp_unpack_full)"},
		{count("cmsgpack.unpack_limit", ones(9000), lua.Number(8500)), "error: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"},
		{count("cmsgpack.unpack", lua.String(strings.Repeat("\x91", 3000)+"\x01")), "1"},
		{count("cmsgpack.unpack", lua.String(strings.Repeat("\x91", 5000)+"\x01")), "error: stack overflow (in function mp_decode_to_lua_array)"},
		{count("cmsgpack.unpack", lua.String(strings.Repeat("\x81", 5000)+"\x01")), "error: Missing bytes in input."},
		{count("cmsgpack.unpack", lua.String(strings.Repeat("\x81\x01", 3999)+"\x01")), "1"},
		{count("cmsgpack.unpack", lua.String(strings.Repeat("\x81\x01", 4000)+"\x01")), "error: stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"},
		{count("cmsgpack.unpack", lua.String(strings.Repeat("\x92\x01", 3999)+"\x01\x02")), "2"},
		{count("cmsgpack.unpack", lua.String(strings.Repeat("\x92\x01", 4000)+"\x01\x02")), "error: stack overflow (in function mp_decode_to_lua_array)"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	// pack: 4000 arguments at most, and the packed strings pile up on the
	// stack, leaving less room for a table's checks with each argument.
	args := func(n int, last lua.Value) []lua.Value {
		a := make([]lua.Value, n)
		for i := range a {
			a[i] = lua.Number(1)
		}
		a[n-1] = last
		return a
	}
	for _, c := range []struct {
		got, want string
	}{
		{count("cmsgpack.pack", args(4000, lua.Number(1))...), "1"},
		{count("cmsgpack.pack", args(4001, lua.Number(1))...), "error: bad argument #0 to '?' (Too many arguments for MessagePack pack.)"},
		{count("cmsgpack.pack", args(4000, lua.TableValue(array(1)))...), "error: stack overflow (in function table_is_an_array)"},
		{count("cmsgpack.pack", args(3999, lua.TableValue(array(1)))...), "1"},
		{count("cmsgpack.pack", args(3998, lua.TableValue(record("a", 1)))...), "1"},
		{count("cmsgpack.pack", args(3999, lua.TableValue(record("a", 1)))...), "error: stack overflow (in function mp_encode_lua_table_as_map)"},
		{count("cmsgpack.pack", args(3999, lua.TableValue(array(array(1))))...), "error: stack overflow (in function table_is_an_array)"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

// TestLibsNoPanic feeds random bytes and formats to the decoding
// functions: each call may fail with a Lua error but must not panic in Go.
func TestLibsNoPanic(t *testing.T) {
	L := newState()
	r := rand.New(rand.NewSource(1))
	randBytes := func(n int) string {
		b := make([]byte, r.Intn(n))
		for i := range b {
			if r.Intn(3) == 0 {
				b[i] = byte(0x80 + r.Intn(0x80))
			} else {
				b[i] = byte(r.Intn(256))
			}
		}
		return string(b)
	}
	const fmtChars = "<>!xbBhHlLiIfdsczT 0123456789q"
	randFormat := func() lua.Value {
		var sb strings.Builder
		for n := r.Intn(8); n > 0; n-- {
			sb.WriteByte(fmtChars[r.Intn(len(fmtChars))])
		}
		return lua.String(sb.String())
	}
	num := func() lua.Value {
		return lua.Number([]float64{0, 1, -1, 2.5, 1e300, -1e300, 1 << 63, 3}[r.Intn(8)])
	}
	const jsonChars = `{}[],:"\u0123456789abcdef-+.eEtrunlsINa xX` + "\x00\t\n"
	randJSON := func() lua.Value {
		var sb strings.Builder
		for n := r.Intn(20); n > 0; n-- {
			sb.WriteByte(jsonChars[r.Intn(len(jsonChars))])
		}
		return lua.String(sb.String())
	}
	pcall := func(path string, args ...lua.Value) { L.PCall(libFunc(t, L, path), args, -1, lua.Nil) }
	for i := 0; i < 4000; i++ {
		data := lua.String(randBytes(40))
		pcall("cmsgpack.unpack", data)
		pcall("cmsgpack.unpack_limit", data, num(), num())
		pcall("cmsgpack.unpack_one", data, num())
		f := randFormat()
		pcall("struct.unpack", f, data, num())
		pcall("struct.size", f)
		pcall("struct.pack", f, num(), data, num())
		pcall("cjson.decode", randJSON())
		pcall("cjson.decode", data)
	}
	// Valid streams, cut short or with one byte changed.
	var randValue func(depth int) lua.Value
	randValue = func(depth int) lua.Value {
		switch k := r.Intn(6); {
		case k == 0 && depth < 4:
			tb := lua.NewTable(0, 0)
			for n := r.Intn(20); n > 0; n-- {
				tb.SetInt(n, randValue(depth+1))
			}
			return lua.TableValue(tb)
		case k == 1 && depth < 4:
			tb := lua.NewTable(0, 0)
			for n := r.Intn(5); n > 0; n-- {
				tb.SetStr(randBytes(5), randValue(depth+1))
			}
			return lua.TableValue(tb)
		case k == 2:
			return lua.String(randBytes(300))
		}
		return lua.Number(r.NormFloat64() * float64(int64(1)<<r.Intn(64)))
	}
	for i := 0; i < 3000; i++ {
		v := randValue(0)
		p, _ := L.Call1(libFunc(t, L, "cmsgpack.pack"), v).AsString()
		b := []byte(p)
		if r.Intn(2) == 0 {
			b = b[:r.Intn(len(b)+1)]
		} else {
			b[r.Intn(len(b))] = byte(r.Intn(256))
		}
		pcall("cmsgpack.unpack", lua.String(string(b)))
		pcall("cmsgpack.unpack_limit", lua.String(string(b)), lua.Number(float64(r.Intn(3))), lua.Number(float64(r.Intn(3))))
		// Whatever cjson encodes, it decodes.
		if res, err := L.PCall(libFunc(t, L, "cjson.encode"), []lua.Value{v}, 1, lua.Nil); err == nil {
			if _, err := L.PCall(libFunc(t, L, "cjson.decode"), res, 1, lua.Nil); err != nil {
				t.Fatalf("decode(encode(v)): %v", err)
			}
		}
	}
}

// TestNaNBits checks the bits of the NaNs strtod reads, as packing shows
// them (recorded from Redis: cmsgpack.pack(cjson.decode('nan'))).
func TestNaNBits(t *testing.T) {
	L := newState()
	for in, want := range map[string]string{"nan": "\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00", "-nan": "\xcb\xff\xf8\x00\x00\x00\x00\x00\x00"} {
		v := L.Call1(libFunc(t, L, "cjson.decode"), lua.String(in))
		if got := call(t, L, "cmsgpack.pack", v); got != quote(want) {
			t.Errorf("pack(decode(%q)) = %s, want %s", in, got, quote(want))
		}
	}
}
