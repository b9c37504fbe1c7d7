package lua

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// Helpers shared by the library tests. The expected values come from
// redis-server 7.0.15: a case (fn, args) was run there as
// show(pcall(fn, args...)), so the function is called from a C function,
// as here from Go: messages carry no position and name the function '?'.

var (
	inf  = math.Inf(1)
	ninf = math.Inf(-1)
	nan  = math.Float64frombits(0xfff8000000000000) // 0/0 on x86: "-nan"
	pnan = math.Float64frombits(0x7ff8000000000000) // -(0/0): "nan"
	nz   = math.Copysign(0, -1)
)

// N, S and T make numbers, strings and tables (T as a constructor with
// its items in the array part) for the cases.
func N(f float64) Value { return Number(f) }
func S(s string) Value  { return String(s) }
func T(items ...Value) Value {
	t := NewTable(len(items), 0)
	for i, v := range items {
		t.SetInt(i+1, v)
	}
	return TableValue(t)
}

// libCase is a library call and what Redis answered: want is the pcall's
// results as show writes them, dump the first argument (a table)
// afterwards, when recorded.
type libCase struct {
	fn   string
	args []Value
	want string
	dump string
}

func newLibState() *State {
	L := NewState()
	openBase(L)
	openTable(L)
	openMath(L)
	return L
}

// lookup finds a library function by its path ("table.sort").
func lookup(t *testing.T, L *State, path string) Value {
	t.Helper()
	v := TableValue(L.Globals())
	for _, name := range strings.Split(path, ".") {
		v = v.AsTable().GetStr(name)
	}
	if v.AsFunction() == nil {
		t.Fatalf("no function %s", path)
	}
	return v
}

// showValue writes v as the recording script did: tostring, with
// "table" and "function" for objects and NUL and newline escaped.
func showValue(v Value) string {
	switch v.Type() {
	case TypeTable, TypeFunction:
		return v.TypeName()
	case TypeString:
		s, _ := v.AsString()
		return strings.NewReplacer("\x00", `\0`, "\n", `\n`).Replace(s)
	}
	return NewState().tostring(v)
}

// showValues joins values with commas; past ten, the first three and the
// count.
func showValues(vals []Value) string {
	parts := make([]string, 0, len(vals))
	lim := len(vals)
	if lim > 10 {
		lim = 3
	}
	for _, v := range vals[:lim] {
		parts = append(parts, showValue(v))
	}
	s := strings.Join(parts, ",")
	if len(vals) > 10 {
		s += fmt.Sprintf(",...(%d)", len(vals))
	}
	return s
}

// pcallShow calls fn in protected mode and shows what pcall would return.
func pcallShow(L *State, fn Value, args ...Value) string {
	res, err := L.PCall(fn, args, -1, Nil)
	if err != nil {
		return showValues([]Value{False, err.Value})
	}
	return showValues(append([]Value{True}, res...))
}

// dumpTable writes #t and t[-2..12] as the recording script did.
func dumpTable(t *Table) string {
	parts := []string{fmt.Sprintf("#%d", t.Len())}
	for i := -2; i <= 12; i++ {
		if v := t.GetInt(i); !v.IsNil() {
			parts = append(parts, fmt.Sprintf("%d:%s", i, showValue(v)))
		}
	}
	return strings.Join(parts, " ")
}

func runCases(t *testing.T, cases []libCase) {
	t.Helper()
	L := newLibState()
	for _, c := range cases {
		args := append([]Value(nil), c.args...)
		got := pcallShow(L, lookup(t, L, c.fn), args...)
		if got != c.want {
			t.Errorf("%s(%s) = %q, want %q", c.fn, showValues(c.args), got, c.want)
		}
		if c.dump != "" {
			if d := dumpTable(c.args[0].AsTable()); d != c.dump {
				t.Errorf("%s(%s): table afterwards %q, want %q", c.fn, showValues(c.args), d, c.dump)
			}
		}
	}
}

func TestBaseCases(t *testing.T) { runCases(t, baseCases) }

// luaCaller makes a stand-in for Lua code: a function of chunk
// "@user_script" that, at line, calls fn through a call site naming it
// name (as a global) and returns its results. It lets the tests see the
// positions and names messages get when Lua code calls the library.
func luaCaller(line int, name string, fn Value) Value {
	site := &callSite{line: int32(line), kind: nameGlobal, name: name}
	p := &funcProto{source: "@user_script", lineDefined: 1, isVararg: true}
	p.body = func(f *frame) ctrl {
		f.line = int32(line)
		L := f.L
		n := L.call(fn, f.varargs, site)
		L.ret = L.ret[:n]
		return ctrlReturn
	}
	return FunctionValue(&Function{proto: p})
}

// TestBaseFromLua checks messages as Lua code calling the library sees
// them: with the caller's position and the function's name.
func TestBaseFromLua(t *testing.T) {
	L := newLibState()
	cases := []struct {
		name string
		args []Value
		want string
	}{
		{"assert", []Value{False}, "false,user_script:1: assertion failed!"},
		{"assert", []Value{False, S("m")}, "false,user_script:1: m"},
		{"assert", []Value{False, N(12.5)}, "false,user_script:1: 12.5"},
		{"select", []Value{N(0), S("a")}, "false,user_script:1: bad argument #1 to 'select' (index out of range)"},
		{"select", []Value{S("x"), N(1)}, "false,user_script:1: bad argument #1 to 'select' (number expected, got string)"},
		{"select", []Value{}, "false,user_script:1: bad argument #1 to 'select' (number expected, got no value)"},
		{"error", []Value{S("x"), S("a")}, "false,user_script:1: bad argument #2 to 'error' (number expected, got string)"},
		{"unpack", []Value{T(), N(1), N(7999)}, "false,user_script:1: too many results to unpack"},
		{"type", []Value{}, "false,user_script:1: bad argument #1 to 'type' (value expected)"},
		{"next", []Value{T(), S("nokey")}, "false,invalid key to 'next'"},
		{"rawset", []Value{T(), Nil, N(1)}, "false,table index is nil"},
		{"setmetatable", []Value{T(), N(1)}, "false,user_script:1: bad argument #2 to 'setmetatable' (nil or table expected)"},
	}
	for _, c := range cases {
		got := pcallShow(L, luaCaller(1, c.name, lookup(t, L, c.name)), c.args...)
		if got != c.want {
			t.Errorf("%s(%s) from Lua = %q, want %q", c.name, showValues(c.args), got, c.want)
		}
	}
}

// TestErrorLevels calls error from stand-ins for Lua functions at known
// lines: level 1 names error's caller, 2 the caller's caller, 0 nothing;
// a level pointing at Go code (pcall) or past the stack adds nothing.
func TestErrorLevels(t *testing.T) {
	L := newLibState()
	errorFn := lookup(t, L, "error")
	// f, at line 3, calls error(msg, level); g, at line 7, calls f.
	raise := func(msg, level Value) string {
		f := luaCaller(3, "error", errorFn)
		g := luaCaller(7, "f", f)
		return pcallShow(L, g, msg, level)
	}
	cases := []struct {
		msg, level Value
		want       string
	}{
		{S("x"), Nil, "false,user_script:3: x"},
		{S("x"), N(1), "false,user_script:3: x"},
		{S("x"), N(2), "false,user_script:7: x"},
		{S("x"), N(3), "false,x"}, // pcall, a Go function
		{S("x"), N(50), "false,x"},
		{S("x"), N(0), "false,x"},
		{S("x"), N(-1), "false,x"},
		{N(42), N(1), "false,user_script:3: 42"},
		{N(42), N(0), "false,42"},
		{True, N(1), "false,true"},
		{Nil, N(1), "false,nil"},
	}
	for _, c := range cases {
		if got := raise(c.msg, c.level); got != c.want {
			t.Errorf("error(%s, %s) = %q, want %q", showValue(c.msg), showValue(c.level), got, c.want)
		}
	}
	// A number message stays a number only without a position.
	_, err := L.PCall(errorFn, []Value{N(42), N(0)}, -1, Nil)
	if !err.Value.IsNumber() {
		t.Errorf("error(42, 0) raised a %s", err.Value.TypeName())
	}
	_, err = L.PCall(errorFn, []Value{N(42)}, -1, Nil)
	if !err.Value.IsString() {
		t.Errorf("error(42) raised a %s", err.Value.TypeName())
	}
	// A table is raised as it is.
	tbl := T()
	_, err = L.PCall(errorFn, []Value{tbl, N(1)}, -1, Nil)
	if err.Value != tbl {
		t.Errorf("error({}) raised %s", showValue(err.Value))
	}
}

func goFunc(fn GoFunction) Value { return FunctionValue(NewFunction("f", fn)) }

func TestPCallXPCall(t *testing.T) {
	L := newLibState()
	pcall, xpcall, errorFn := lookup(t, L, "pcall"), lookup(t, L, "xpcall"), lookup(t, L, "error")
	ret12 := goFunc(func(L *State) int { L.Push(N(1)); L.Push(N(2)); return 2 })
	countArgs := goFunc(func(L *State) int { L.Push(N(float64(L.Top()))); return 1 })
	fail := goFunc(func(L *State) int { L.Errorf("x"); return 0 })
	prefix := goFunc(func(L *State) int { L.Push(S("h:" + showValue(L.Get(1)))); return 1 })
	var handled int
	rethrow := goFunc(func(L *State) int { handled++; L.Error(L.Get(1)); return 0 })
	innerPCall := goFunc(func(L *State) int {
		res := L.Call(pcall, []Value{errorFn, S("inner")}, -1)
		L.Push(S("caught:" + showValues(res)))
		return 1
	})
	cases := []struct {
		fn   Value
		args []Value
		want string
	}{
		{pcall, []Value{ret12}, "true,true,1,2"},
		{pcall, []Value{countArgs, N(1), Nil, N(3)}, "true,true,3"},
		{pcall, []Value{errorFn, S("m")}, "true,false,m"},
		{pcall, []Value{errorFn, T()}, "true,false,table"},
		{pcall, []Value{Nil}, "true,false,attempt to call a nil value"},
		{pcall, []Value{N(42)}, "true,false,attempt to call a number value"},
		{pcall, []Value{}, "false,bad argument #1 to '?' (value expected)"},
		{xpcall, []Value{ret12, prefix}, "true,true,1,2"},
		{xpcall, []Value{countArgs, prefix, N(1), N(2)}, "true,true,0"}, // 5.1: no arguments for f
		{xpcall, []Value{errorFn, prefix}, "true,false,h:nil"},
		{xpcall, []Value{fail, prefix}, "true,false,h:x"},
		{xpcall, []Value{fail, Nil}, "true,false,error in error handling"},
		{xpcall, []Value{fail, N(42)}, "true,false,error in error handling"},
		{xpcall, []Value{fail, rethrow}, "true,false,error in error handling"},
		{xpcall, []Value{innerPCall, prefix}, "true,true,caught:false,inner"},
		{xpcall, []Value{Nil, prefix}, "true,false,h:attempt to call a nil value"},
		{xpcall, []Value{fail}, "false,bad argument #2 to '?' (value expected)"},
	}
	for _, c := range cases {
		if got := pcallShow(L, c.fn, c.args...); got != c.want {
			t.Errorf("%s(%s) = %q, want %q", c.fn.AsFunction().name, showValues(c.args), got, c.want)
		}
	}
	if handled == 0 {
		t.Error("xpcall's failing handler never ran")
	}
}

func TestMetatables(t *testing.T) {
	L := newLibState()
	getmt, setmt := lookup(t, L, "getmetatable"), lookup(t, L, "setmetatable")
	tbl, mt := NewTable(0, 0), NewTable(0, 0)
	if got := pcallShow(L, setmt, TableValue(tbl), TableValue(mt)); got != "true,table" {
		t.Fatalf("setmetatable = %q", got)
	}
	if L.Call1(getmt, TableValue(tbl)).AsTable() != mt {
		t.Error("getmetatable does not return the metatable")
	}
	mt.SetStr("__metatable", S("locked"))
	cases := []struct {
		fn   Value
		args []Value
		want string
	}{
		{getmt, []Value{TableValue(tbl)}, "true,locked"},
		{setmt, []Value{TableValue(tbl), T()}, "false,cannot change a protected metatable"},
		{setmt, []Value{TableValue(tbl), Nil}, "false,cannot change a protected metatable"},
	}
	ro := NewTable(0, 0)
	ro.SetReadOnly(true)
	cases = append(cases, []struct {
		fn   Value
		args []Value
		want string
	}{
		{setmt, []Value{TableValue(ro), T()}, "false,Attempt to modify a readonly table"},
		{lookup(t, L, "rawset"), []Value{TableValue(ro), S("x"), N(1)}, "false,Attempt to modify a readonly table"},
		{getmt, []Value{S("abc")}, "true,nil"}, // no string metatable in this state
	}...)
	for _, c := range cases {
		if got := pcallShow(L, c.fn, c.args...); got != c.want {
			t.Errorf("%s(%s) = %q, want %q", c.fn.AsFunction().name, showValues(c.args), got, c.want)
		}
	}
	// __metatable = false protects as well, and getmetatable returns it.
	mt.SetStr("__metatable", False)
	if got := pcallShow(L, getmt, TableValue(tbl)); got != "true,false" {
		t.Errorf("getmetatable with __metatable=false = %q", got)
	}
	// A string's metatable.
	smt := NewTable(0, 1)
	L.SetStringMetatable(smt)
	if L.Call1(getmt, S("abc")).AsTable() != smt {
		t.Error("getmetatable('abc') is not the string metatable")
	}
}

func TestToStringMeta(t *testing.T) {
	L := newLibState()
	tostring := lookup(t, L, "tostring")
	tbl, mt := NewTable(0, 0), NewTable(0, 1)
	mt.SetStr("__tostring", goFunc(func(L *State) int { L.Push(N(7)); return 1 }))
	tbl.SetMetatable(mt)
	if got := pcallShow(L, tostring, TableValue(tbl)); got != "true,7" {
		t.Errorf("tostring with __tostring = %q", got)
	}
	s, _ := L.Call1(tostring, T()).AsString()
	if !strings.HasPrefix(s, "table: 0x") {
		t.Errorf("tostring({}) = %q", s)
	}
}

// TestPairsIpairs checks the iterators: pairs' next is its own function,
// and both walk as Redis's Lua does.
func TestPairsIpairs(t *testing.T) {
	L := newLibState()
	pairs, ipairs, next := lookup(t, L, "pairs"), lookup(t, L, "ipairs"), lookup(t, L, "next")
	tbl := T(S("a"), S("b"), Nil, S("d"))
	res := append([]Value(nil), L.Call(pairs, []Value{tbl}, -1)...)
	if len(res) != 3 || res[0].AsFunction() == nil || res[0] == next || res[1] != tbl || !res[2].IsNil() {
		t.Fatalf("pairs(t) = %s", showValues(res))
	}
	var walked []string
	for k := Nil; ; {
		r := L.Call(res[0], []Value{tbl, k}, 2)
		if r[0].IsNil() {
			break
		}
		walked = append(walked, showValue(r[0])+"="+showValue(r[1]))
		k = r[0]
	}
	if got := strings.Join(walked, " "); got != "1=a 2=b 4=d" {
		t.Errorf("pairs walked %q", got)
	}
	res = append([]Value(nil), L.Call(ipairs, []Value{tbl}, -1)...)
	if got := showValues(res); got != "function,table,0" {
		t.Fatalf("ipairs(t) = %q", got)
	}
	iter := res[0]
	cases := []struct {
		args []Value
		want string
	}{
		{[]Value{tbl, N(0)}, "true,1,a"},
		{[]Value{tbl, N(1)}, "true,2,b"},
		{[]Value{tbl, N(2)}, "true"},
		{[]Value{tbl, N(3)}, "true,4,d"},
		{[]Value{tbl, N(1.7)}, "true,2,b"},
		{[]Value{tbl, S("x")}, "false,bad argument #2 to '?' (number expected, got string)"},
		{[]Value{N(1), N(0)}, "false,bad argument #1 to '?' (table expected, got number)"},
	}
	for _, c := range cases {
		if got := pcallShow(L, iter, c.args...); got != c.want {
			t.Errorf("ipairs' iterator(%s) = %q, want %q", showValues(c.args), got, c.want)
		}
	}
	if got := pcallShow(L, pairs); got != "false,bad argument #1 to '?' (table expected, got no value)" {
		t.Errorf("pairs() = %q", got)
	}
	if got := pcallShow(L, ipairs, N(1)); got != "false,bad argument #1 to '?' (table expected, got number)" {
		t.Errorf("ipairs(1) = %q", got)
	}
}

// TestGlobalsOrder checks the base library's globals in lbaselib.c's
// order (the base functions Revolver leaves out aside).
func TestGlobalsOrder(t *testing.T) {
	L := NewState()
	openBase(L)
	var keys []string
	L.Globals().ForEach(func(k, _ Value) { keys = append(keys, showValue(k)) })
	if len(keys) != 23 {
		t.Errorf("%d globals: %v", len(keys), keys)
	}
	if g := L.Globals().GetStr("_G"); g.AsTable() != L.Globals() {
		t.Error("_G is not the globals table")
	}
	if v, _ := L.Globals().GetStr("_VERSION").AsString(); v != "Lua 5.1" {
		t.Errorf("_VERSION = %q", v)
	}
}

func TestCollectGarbage(t *testing.T) {
	L := newLibState()
	cg, gcinfo := lookup(t, L, "collectgarbage"), lookup(t, L, "gcinfo")
	// Recorded in one EVAL: setpause and setstepmul return the previous
	// value, 200 at first; the argument defaults to 0.
	steps := []struct {
		args []Value
		want string
	}{
		{[]Value{S("setpause"), N(100)}, "true,200"},
		{[]Value{S("setpause"), N(150)}, "true,100"},
		{[]Value{S("setpause"), N(200)}, "true,150"},
		{[]Value{S("setstepmul")}, "true,200"},
		{[]Value{S("setstepmul"), N(200)}, "true,0"},
		{[]Value{S("step")}, "true,true"},
	}
	for _, s := range steps {
		if got := pcallShow(L, cg, s.args...); got != s.want {
			t.Errorf("collectgarbage(%s) = %q, want %q", showValues(s.args), got, s.want)
		}
	}
	kb, _ := L.Call1(cg, S("count")).AsNumber()
	info, _ := L.Call1(gcinfo).AsNumber()
	if kb <= 0 || info <= 0 || info != math.Trunc(info) || math.Abs(kb-info) > 1024 {
		t.Errorf("count %v KB, gcinfo %v KB", kb, info)
	}
}

func TestParseUnsigned(t *testing.T) {
	cases := []struct {
		s    string
		base int
		n    uint64
		ok   bool
	}{
		{"101", 2, 5, true},
		{"-1", 10, 1<<64 - 1, true},
		{"-10", 16, 1<<64 - 16, true},
		{"18446744073709551615", 10, 1<<64 - 1, true},
		{"18446744073709551616", 10, 1<<64 - 1, true},
		{"-99999999999999999999", 10, 1<<64 - 1, true},
		{"0x", 16, 0, false},
		{"0x10", 10, 0, false},
		{"\v9 \f", 10, 9, true},
		{"9\x00x", 10, 9, true},
		{"- 1", 10, 0, false},
	}
	for _, c := range cases {
		n, ok := parseUnsigned(c.s, c.base)
		if n != c.n || ok != c.ok {
			t.Errorf("parseUnsigned(%q, %d) = %d, %v; want %d, %v", c.s, c.base, n, ok, c.n, c.ok)
		}
	}
}
