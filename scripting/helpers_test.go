package scripting

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/revolver-db/revolver/lua"
)

// Test cases call library functions from Go and compare what they return
// with what Redis 7.0.15 returned for the same call made through pcall
// (so that, as from Go, messages carry no position and name the function
// '?'). dump writes results, and its Lua twin (recordPrelude) wrote them in
// Redis: strings quoted (\xHH for control and high bytes), numbers with
// "%.17g", tables as {k=v,...} in pairs order, cjson.null as null, an
// error as "error: <message>", several results joined by ", ".
//
// To record again: SCRIPTING_RECORD=/tmp/cases.lua go test ./scripting
// -run Cases appends one script per case to the file, to run with
// redis-cli eval "<script>" 0 against Redis.

func newState() *lua.State {
	L := lua.NewState()
	Open(L)
	return L
}

// libFunc is the function "lib.name" of L's globals.
func libFunc(t testing.TB, L *lua.State, path string) lua.Value {
	t.Helper()
	lib, name, _ := strings.Cut(path, ".")
	tbl := L.Globals().GetStr(lib).AsTable()
	if tbl == nil {
		t.Fatalf("no library %s", lib)
	}
	f := tbl.GetStr(name)
	if f.AsFunction() == nil {
		t.Fatalf("no function %s", path)
	}
	return f
}

// call calls the function at path with args and dumps its results.
func call(t testing.TB, L *lua.State, path string, args ...lua.Value) string {
	t.Helper()
	res, err := L.PCall(libFunc(t, L, path), args, -1, lua.Nil)
	if err != nil {
		return "error: " + err.Error()
	}
	parts := make([]string, len(res))
	for i, v := range res {
		parts[i] = dump(v)
	}
	return strings.Join(parts, ", ")
}

func dump(v lua.Value) string {
	switch v.Type() {
	case lua.TypeString:
		s, _ := v.AsString()
		return quote(s)
	case lua.TypeNumber:
		f, _ := v.AsNumber()
		return lua.FormatG(f, 17)
	case lua.TypeTable:
		var parts []string
		v.AsTable().ForEach(func(k, x lua.Value) { parts = append(parts, dump(k)+"="+dump(x)) })
		return "{" + strings.Join(parts, ",") + "}"
	case lua.TypeNil:
		return "nil"
	case lua.TypeBoolean:
		return fmt.Sprint(v.Truthy())
	}
	if lua.RawEqual(v, Null) {
		return "null"
	}
	return v.TypeName()
}

// quote writes s in double quotes, with control characters, DEL and bytes
// from 0x80 as \xHH, and a backslash doubled.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// recordPrelude is dump in Lua, for recording cases in Redis.
const recordPrelude = `local function q(s) return '"' .. (s:gsub('[%c\\\128-\255]', function(c) if c == '\\' then return '\\\\' end return string.format('\\x%02x', c:byte()) end)) .. '"' end ` +
	`local function d(v) local t = type(v) if t == 'string' then return q(v) elseif t == 'number' then return string.format('%.17g', v) ` +
	`elseif t == 'table' then local r = {} for k, x in pairs(v) do r[#r+1] = d(k) .. '=' .. d(x) end return '{' .. table.concat(r, ',') .. '}' ` +
	`elseif v == cjson.null then return 'null' elseif t == 'nil' or t == 'boolean' then return tostring(v) end return t end ` +
	`local function res(ok, ...) if not ok then return 'error: ' .. tostring((...)) end local r = {} ` +
	`for i = 1, select('#', ...) do r[i] = d((select(i, ...))) end return table.concat(r, ', ') end ` +
	`local c = cjson.new() `

// luaSource writes v as a Lua expression (scalars, cjson.null, and a
// function standing for any function).
func luaSource(v lua.Value) string {
	switch v.Type() {
	case lua.TypeNil:
		return "nil"
	case lua.TypeBoolean:
		return fmt.Sprint(v.Truthy())
	case lua.TypeNumber:
		f, _ := v.AsNumber()
		switch {
		case math.IsInf(f, 1):
			return "(1/0)"
		case math.IsInf(f, -1):
			return "(-1/0)"
		case math.IsNaN(f) && math.Signbit(f):
			return "(0/0)" // x86's NaN has its sign bit set
		case math.IsNaN(f):
			return "(-(0/0))"
		case f == 0 && math.Signbit(f):
			return "(0/-1)"
		}
		return lua.FormatG(f, 17)
	case lua.TypeString:
		s, _ := v.AsString()
		var b strings.Builder
		b.WriteByte('\'')
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '\'' || c == '\\' || c == '"' {
				fmt.Fprintf(&b, `\%03d`, c)
			} else {
				b.WriteByte(c)
			}
		}
		b.WriteByte('\'')
		return b.String()
	case lua.TypeFunction:
		return "tostring"
	}
	if lua.RawEqual(v, Null) {
		return "c.null"
	}
	panic("no Lua source for a " + v.TypeName())
}

// step is a call of a library function.
type step struct {
	fn   string
	args []lua.Value
}

// libCase is a call whose results are compared with Redis's; pre runs
// first on the same (fresh) state, and src, when set, is the Lua source of
// the arguments (for tables, built in Go by the same steps).
type libCase struct {
	pre []step
	step
	src  string
	want string
}

// luaName is how the recording script names fn: the cjson functions of a
// fresh cjson.new() table, so that settings do not leak between cases.
func luaName(fn string) string {
	if rest, ok := strings.CutPrefix(fn, "cjson."); ok {
		return "c." + rest
	}
	return fn
}

func (c *libCase) luaScript() string {
	var b strings.Builder
	b.WriteString(recordPrelude)
	for _, p := range c.pre {
		fmt.Fprintf(&b, "%s(%s) ", luaName(p.fn), argsSource(p.args))
	}
	args := c.src
	if args == "" {
		args = argsSource(c.args)
	}
	if args != "" {
		args = ", " + args
	}
	fmt.Fprintf(&b, "return res(pcall(%s%s))", luaName(c.fn), args)
	return b.String()
}

func argsSource(args []lua.Value) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = luaSource(a)
	}
	return strings.Join(parts, ", ")
}

// runCases runs cases, each on a fresh state, or writes their recording
// scripts when SCRIPTING_RECORD names a file.
func runCases(t *testing.T, cases []libCase) {
	t.Helper()
	if path := os.Getenv("SCRIPTING_RECORD"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for i := range cases {
			fmt.Fprintln(f, cases[i].luaScript())
		}
		t.Skip("recording")
	}
	for _, c := range cases {
		L := newState()
		for _, p := range c.pre {
			call(t, L, p.fn, p.args...)
		}
		if got := call(t, L, c.fn, c.args...); got != c.want {
			t.Errorf("%s(%s)\n got %s\nwant %s", c.fn, caseArgs(&c), got, c.want)
		}
	}
}

func caseArgs(c *libCase) string {
	if c.src != "" {
		return c.src
	}
	return argsSource(c.args)
}

// Shorthands for building arguments.

func vals(xs ...any) []lua.Value {
	out := make([]lua.Value, len(xs))
	for i, x := range xs {
		out[i] = val(x)
	}
	return out
}

func val(x any) lua.Value {
	switch x := x.(type) {
	case nil:
		return lua.Nil
	case lua.Value:
		return x
	case bool:
		return lua.Bool(x)
	case int:
		return lua.Number(float64(x))
	case float64:
		return lua.Number(x)
	case string:
		return lua.String(x)
	case *lua.Table:
		return lua.TableValue(x)
	}
	panic(fmt.Sprintf("val: %T", x))
}

var (
	inf    = math.Inf(1)
	negNaN = math.Float64frombits(0xfff8000000000000) // what 0/0 gives on x86
)

// fb is the size a table constructor asks for: Lua stores it as a
// "floating point byte" (luaO_int2fb), which rounds it up.
func fb(x int) int {
	e := 0
	for x >= 16 {
		x = (x + 1) >> 1
		e++
	}
	if x < 8 {
		return x
	}
	return (x&7 + 8) << (e)
}

// array is a table built by a constructor of positional items, {a, b, c}.
func array(items ...any) *lua.Table {
	t := lua.NewTable(fb(len(items)), 0)
	for i, x := range items {
		t.SetInt(i+1, val(x))
	}
	return t
}

// record is a table built by a constructor of keyed items, {k = v, ...}
// or {[k] = v, ...}, in their order.
func record(kv ...any) *lua.Table {
	t := lua.NewTable(0, fb(len(kv)/2))
	for i := 0; i < len(kv); i += 2 {
		t.Set(val(kv[i]), val(kv[i+1]))
	}
	return t
}

// assigned is a table built by assignments to an empty table, in order.
func assigned(kv ...any) *lua.Table {
	t := lua.NewTable(0, 0)
	for i := 0; i < len(kv); i += 2 {
		t.Set(val(kv[i]), val(kv[i+1]))
	}
	return t
}
