package commands

import (
	"math/rand"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func newLibState(t *testing.T) *lua.LState {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	openLuaLibraries(L)
	return L
}

// runLua runs code that returns one string and fails on a Go panic.
func runLua(t *testing.T, L *lua.LState, code string, args ...lua.LValue) (string, error) {
	t.Helper()
	fn, err := L.LoadString(code)
	if err != nil {
		t.Fatalf("compile %q: %v", code, err)
	}
	return callLua(t, L, fn, args...)
}

func callLua(t *testing.T, L *lua.LState, fn *lua.LFunction, args ...lua.LValue) (string, error) {
	t.Helper()
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	err := L.PCall(len(args), 1, nil)
	if e, ok := err.(*lua.ApiError); ok && e.Type == lua.ApiErrorPanic {
		t.Fatalf("panicked with %v: %v", args, err)
	}
	if err != nil {
		return "", err
	}
	v := L.Get(-1)
	L.Pop(1)
	return lua.LVAsString(v), nil
}

const hexHelper = `local function hex(s) return (s:gsub('.', function(c) return string.format('%02x', string.byte(c)) end)) end `

func TestCMsgpackEncodings(t *testing.T) {
	L := newLibState(t)
	for _, c := range []struct{ expr, want string }{
		{"nil", "c0"}, {"true", "c3"}, {"127", "7f"}, {"128", "cc80"}, {"-32", "e0"}, {"-33", "d0df"},
		{"65536", "ce00010000"}, {"2^32", "cf0000000100000000"}, {"-2^31-1", "d3ffffffff7fffffff"},
		{"2^63", "ca5f000000"}, {"0.1", "cb3fb999999999999a"}, {"1.5", "ca3fc00000"},
		{"string.rep('x', 32):sub(1, 1)", "a178"}, {"{}", "90"}, {"{1, {a = 2}}", "920181a16102"},
		{"{[2] = 1}", "810201"}, {"1, 'a'", "01a161"},
	} {
		got, err := runLua(t, L, hexHelper+"return hex(cmsgpack.pack("+c.expr+"))")
		if err != nil || got != c.want {
			t.Errorf("pack(%s) = %q, %v; want %q", c.expr, got, err, c.want)
		}
	}
}

func TestStructLayouts(t *testing.T) {
	L := newLibState(t)
	for _, c := range []struct{ expr, want string }{
		{"struct.pack('<h>h', -2, -2)", "fefffffe"},
		{"struct.pack('!bd', 1, 0)", "01000000000000000000000000000000"},
		{"struct.pack('<i3', -3)", "fdffff"},
		{"struct.pack('<i16', -1)", "ffffffffffffffff0000000000000000"},
		{"struct.pack('s', 'ab')", "616200"},
	} {
		got, err := runLua(t, L, hexHelper+"return hex("+c.expr+")")
		if err != nil || got != c.want {
			t.Errorf("%s = %q, %v; want %q", c.expr, got, err, c.want)
		}
	}
	got, err := runLua(t, L, "return table.concat({struct.unpack('<i9', string.char(0x80,0,0,0,0,0,0,0,1))}, ',')")
	if err != nil || got != "-128,10" {
		t.Errorf("unpack i9 = %q, %v", got, err)
	}
}

// TestLibsNoPanic feeds random bytes and formats to every function: each
// call may fail with a Lua error but must never panic in Go.
func TestLibsNoPanic(t *testing.T) {
	L := newLibState(t)
	r := rand.New(rand.NewSource(1))
	fmtChars := "<>!xbBhHlLiIfdsczT 0123456789q"
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
	randFormat := func() string {
		var sb strings.Builder
		for n := r.Intn(8); n > 0; n-- {
			sb.WriteByte(fmtChars[r.Intn(len(fmtChars))])
		}
		return sb.String()
	}
	num := func() lua.LValue {
		return lua.LNumber([]float64{0, 1, -1, 2.5, 1e300, -1e300, 1 << 63, 3}[r.Intn(8)])
	}
	get := func(path string) *lua.LFunction {
		lib, name, _ := strings.Cut(path, ".")
		return L.GetField(L.GetGlobal(lib), name).(*lua.LFunction)
	}
	unpack, unpackOne, unpackLimit := get("cmsgpack.unpack"), get("cmsgpack.unpack_one"), get("cmsgpack.unpack_limit")
	sUnpack, sSize, sPack := get("struct.unpack"), get("struct.size"), get("struct.pack")
	for i := 0; i < 4000; i++ {
		data := lua.LString(randBytes(40))
		callLua(t, L, unpack, data)
		callLua(t, L, unpackLimit, data, num(), num())
		callLua(t, L, unpackOne, data, num())
		f := lua.LString(randFormat())
		callLua(t, L, sUnpack, f, data, num())
		callLua(t, L, sSize, f)
		callLua(t, L, sPack, f, num(), data, num())
	}
	// Valid streams, truncated or with one byte changed.
	var randValue func(depth int) lua.LValue
	randValue = func(depth int) lua.LValue {
		switch k := r.Intn(6); {
		case k == 0 && depth < 4:
			tb := L.NewTable()
			for n := r.Intn(20); n > 0; n-- {
				tb.RawSetInt(n, randValue(depth+1))
			}
			return tb
		case k == 1 && depth < 4:
			tb := L.NewTable()
			for n := r.Intn(5); n > 0; n-- {
				tb.RawSetString(randBytes(5), randValue(depth+1))
			}
			return tb
		case k == 2:
			return lua.LString(randBytes(300))
		}
		return lua.LNumber(r.NormFloat64() * float64(int64(1)<<r.Intn(64)))
	}
	for i := 0; i < 3000; i++ {
		b := mpEncode(nil, randValue(0), 0)
		if r.Intn(2) == 0 {
			b = b[:r.Intn(len(b)+1)]
		} else {
			b[r.Intn(len(b))] = byte(r.Intn(256))
		}
		callLua(t, L, unpack, lua.LString(b))
		callLua(t, L, unpackLimit, lua.LString(b), lua.LNumber(r.Intn(3)), lua.LNumber(r.Intn(3)))
	}
	// Round trips of random packed values survive unpacking.
	trip, err := L.LoadString("local s = ... return cmsgpack.pack(cmsgpack.unpack(cmsgpack.pack({s, #s, {s}})))")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i++ {
		if _, err := callLua(t, L, trip, lua.LString(randBytes(300))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLibsStackLimits checks the counts Redis accepts just below its C
// stack limit (8000 slots), on a state whose registry can hold them.
func TestLibsStackLimits(t *testing.T) {
	L := lua.NewState(lua.Options{RegistryMaxSize: 1 << 20})
	t.Cleanup(L.Close)
	openLuaLibraries(L)
	for _, c := range []struct{ code, want string }{
		{"return #{cmsgpack.unpack(string.rep(string.char(1), 7999))}", "7999"},
		{"return #{cmsgpack.unpack_limit(string.rep(string.char(1), 7998), 7998)}", "7999"},
		{"return #{struct.unpack(string.rep('b', 7997), string.rep('a', 7997))}", "7998"},
		{"return #{cmsgpack.unpack(string.rep(string.char(0x91), 3999) .. string.char(1))}", "1"},
	} {
		if got, err := runLua(t, L, c.code); err != nil || got != c.want {
			t.Errorf("%s = %q, %v; want %s", c.code, got, err, c.want)
		}
	}
	for _, c := range []struct{ code, want string }{
		{"return #{cmsgpack.unpack(string.rep(string.char(1), 8000))}", "stack overflow (too many return values"},
		{"return #{cmsgpack.unpack_limit(string.rep(string.char(1), 7999), 7999)}", "stack overflow (in function mp_unpack_full)"},
		{"return #{struct.unpack(string.rep('b', 7998), string.rep('a', 7998))}", "stack overflow (too many results)"},
	} {
		if _, err := runLua(t, L, c.code); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.code, err, c.want)
		}
	}
}
