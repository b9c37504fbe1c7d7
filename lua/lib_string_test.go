package lua

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// The expected values in these tests were recorded from redis-server
// 7.0.15, calling each function through pcall (so, as here, errors carry
// no position and name the function '?').

// strCase is a call of a string library function and what it gives.
type strCase struct {
	fn   string
	args []Value
	want outcome
}

// outcome is a call's results, its error message, or, for gmatch, the
// outcomes of successive calls of the iterator.
type outcome struct {
	vals  []Value
	err   string
	steps []outcome
}

func toValue(x any) Value {
	switch x := x.(type) {
	case nil:
		return Nil
	case Value:
		return x
	case string:
		return String(x)
	case int:
		return Number(float64(x))
	case float64:
		return Number(x)
	case bool:
		return Bool(x)
	}
	panic(fmt.Sprintf("no Lua value for %T", x))
}

func args(xs ...any) []Value {
	vals := make([]Value, len(xs))
	for i, x := range xs {
		vals[i] = toValue(x)
	}
	return vals
}

func want(xs ...any) outcome               { return outcome{vals: args(xs...)} }
func fails(msg string) outcome             { return outcome{err: msg} }
func iter(steps ...outcome) outcome        { return outcome{steps: steps} }
func libFn(f GoFunction) Value             { return FunctionValue(NewFunction("f", f)) }
func strGoFunc(f func(L *State) int) Value { return libFn(f) }

// negNaN is what 0/0 gives on x86: a NaN with its sign bit set.
var negNaN = math.Float64frombits(0xfff8000000000000)

var (
	goFn           = libFn(strLen)
	countArgs      = strGoFunc(func(L *State) int { L.Push(Number(float64(L.Top()))); return 1 })
	returnsTable   = strGoFunc(func(L *State) int { L.Push(TableValue(NewTable(0, 0))); return 1 })
	returnsFalse   = strGoFunc(func(L *State) int { L.Push(False); return 1 })
	returnsTrue    = strGoFunc(func(L *State) int { L.Push(True); return 1 })
	returnsNothing = strGoFunc(func(L *State) int { return 0 })
)

// tableOf makes a table of keys and values.
func tableOf(kv ...any) Value {
	t := NewTable(0, 0)
	for i := 0; i < len(kv); i += 2 {
		t.Set(toValue(kv[i]), toValue(kv[i+1]))
	}
	return TableValue(t)
}

// upperIndex is an empty table whose __index gives k:upper() .. k.
func upperIndex() Value {
	meta := NewTable(0, 1)
	meta.SetStr("__index", strGoFunc(func(L *State) int {
		k := L.CheckString(2)
		L.Push(String(strings.ToUpper(k) + k))
		return 1
	}))
	t := NewTable(0, 0)
	t.SetMetatable(meta)
	return TableValue(t)
}

// stringLib is a state with the string library open.
func stringLib(t *testing.T) (*State, *Table) {
	t.Helper()
	L := NewState()
	return L, openString(L)
}

func runLibCases(t *testing.T, cases []strCase) {
	L, lib := stringLib(t)
	for _, c := range cases {
		fn := lib.GetStr(c.fn)
		if fn.IsNil() {
			t.Fatalf("no string.%s", c.fn)
		}
		name := fmt.Sprintf("%s%s", c.fn, showStrValues(c.args))
		res, err := L.PCall(fn, c.args, -1, Nil)
		if c.want.steps != nil {
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			it := res[0]
			for i, step := range c.want.steps {
				res, err := L.PCall(it, nil, -1, Nil)
				checkOutcome(t, fmt.Sprintf("%s step %d", name, i+1), res, err, step)
			}
			continue
		}
		checkOutcome(t, name, res, err, c.want)
	}
}

func checkOutcome(t *testing.T, name string, res []Value, err *Error, want outcome) {
	t.Helper()
	if want.err != "" {
		if err == nil {
			t.Errorf("%s = %s, want error %q", name, showStrValues(res), want.err)
		} else if msg, _ := err.Value.AsString(); msg != want.err {
			t.Errorf("%s: error %q, want %q", name, msg, want.err)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: error %q, want %s", name, err.Error(), showStrValues(want.vals))
		return
	}
	ok := len(res) == len(want.vals)
	for i := 0; ok && i < len(res); i++ {
		ok = RawEqual(res[i], want.vals[i])
	}
	if !ok {
		t.Errorf("%s = %s, want %s", name, showStrValues(res), showStrValues(want.vals))
	}
}

func showStrValues(vals []Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		if s, ok := v.AsString(); ok {
			if len(s) > 40 {
				s = s[:40] + "..."
			}
			parts[i] = strconv.Quote(s)
		} else {
			parts[i] = (&State{}).tostring(v)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

var basicCases = []strCase{
	{"len", args(""), want(0)},
	{"len", args("abc"), want(3)},
	{"len", args("a\x00b"), want(3)},
	{"len", args(123), want(3)},
	{"len", args(1.5), want(3)},
	{"len", args(), fails("bad argument #1 to '?' (string expected, got no value)")},
	{"len", args(nil), fails("bad argument #1 to '?' (string expected, got nil)")},
	{"len", args(true), fails("bad argument #1 to '?' (string expected, got boolean)")},
	{"len", args(TableValue(NewTable(0, 0))), fails("bad argument #1 to '?' (string expected, got table)")},
	{"sub", args("hello", 2, 4), want("ell")},
	{"sub", args("hello", 2), want("ello")},
	{"sub", args("hello", -3), want("llo")},
	{"sub", args("hello", -3, -2), want("ll")},
	{"sub", args("hello", 0), want("hello")},
	{"sub", args("hello", 0, 0), want("")},
	{"sub", args("hello", 10), want("")},
	{"sub", args("hello", 3, 2), want("")},
	{"sub", args("hello", -100, 100), want("hello")},
	{"sub", args("hello", "2", "3"), want("el")},
	{"sub", args("hello", 2.9, 3.9), want("el")},
	{"sub", args("hello", -2.5), want("lo")},
	{"sub", args(12345, 2, 3), want("23")},
	{"sub", args("hello"), fails("bad argument #2 to '?' (number expected, got no value)")},
	{"sub", args("hello", "x"), fails("bad argument #2 to '?' (number expected, got string)")},
	{"sub", args("hello", 1, "x"), fails("bad argument #3 to '?' (number expected, got string)")},
	{"sub", args("hello", math.Inf(1)), want("hello")},
	{"sub", args("hello", 2, math.Inf(1)), want("")},
	{"sub", args("hello", negNaN), want("hello")},
	{"sub", args("hello", 9007199254740992), want("")},
	{"sub", args("hello", " 0x2 "), want("ello")},
	{"sub", args("a\x00bc", 2, 3), want("\x00b")},
	{"sub", args("hello", 2, nil), want("ello")},
	{"upper", args("Hello World 123"), want("HELLO WORLD 123")},
	{"upper", args("\xe9\xc9abc{`@["), want("\xe9\xc9ABC{`@[")},
	{"upper", args(42), want("42")},
	{"upper", args(), fails("bad argument #1 to '?' (string expected, got no value)")},
	{"upper", args(""), want("")},
	{"lower", args("Hello World 123"), want("hello world 123")},
	{"lower", args("\xe9\xc9ABC{`@["), want("\xe9\xc9abc{`@[")},
	{"lower", args(1e+100), want("1e+100")},
	{"lower", args(false), fails("bad argument #1 to '?' (string expected, got boolean)")},
	{"rep", args("x", 3), want("xxx")},
	{"rep", args("ab", 0), want("")},
	{"rep", args("ab", -1), want("")},
	{"rep", args("", 5), want("")},
	{"rep", args("x", "3"), want("xxx")},
	{"rep", args("x", 2.7), want("xx")},
	{"rep", args("x", 4294967298), want("xx")},
	{"rep", args("x", 2147483648), want("")},
	{"rep", args("x"), fails("bad argument #2 to '?' (number expected, got no value)")},
	{"rep", args("x", "a"), fails("bad argument #2 to '?' (number expected, got string)")},
	{"rep", args(5, 2), want("55")},
	{"rep", args("a\x00", 2), want("a\x00a\x00")},
	{"rep", args("x", -2.5), want("")},
	{"rep", args(nil, 2), fails("bad argument #1 to '?' (string expected, got nil)")},
	{"reverse", args("abc"), want("cba")},
	{"reverse", args(""), want("")},
	{"reverse", args("a\x00b"), want("b\x00a")},
	{"reverse", args(123), want("321")},
	{"reverse", args(), fails("bad argument #1 to '?' (string expected, got no value)")},
	{"byte", args("ABC"), want(65)},
	{"byte", args("ABC", 2), want(66)},
	{"byte", args("ABC", -1), want(67)},
	{"byte", args("ABC", 1, -1), want(65, 66, 67)},
	{"byte", args("ABC", 0), want()},
	{"byte", args("ABC", 10), want()},
	{"byte", args("ABC", 2, 1), want()},
	{"byte", args("ABC", -10, 10), want(65, 66, 67)},
	{"byte", args("", 1), want()},
	{"byte", args("ABC", "2"), want(66)},
	{"byte", args("\xff\x00"), want(255)},
	{"byte", args("ABC", 1.9, 2.9), want(65, 66)},
	{"byte", args("abc", nil, 2), want(97, 98)},
	{"byte", args(strings.Repeat("a", 7998), 1, -1), fails("stack overflow (string slice too long)")},
	{"byte", args(), fails("bad argument #1 to '?' (string expected, got no value)")},
	{"byte", args("abc", nil, "x"), fails("bad argument #3 to '?' (number expected, got string)")},
	{"byte", args(65), want(54)},
	{"char", args(), want("")},
	{"char", args(65, 66, 67), want("ABC")},
	{"char", args("65"), want("A")},
	{"char", args(0, 255), want("\x00\xff")},
	{"char", args(256), fails("bad argument #1 to '?' (invalid value)")},
	{"char", args(-1), fails("bad argument #1 to '?' (invalid value)")},
	{"char", args(65.7), want("A")},
	{"char", args(4294967361), want("A")},
	{"char", args("x"), fails("bad argument #1 to '?' (number expected, got string)")},
	{"char", args(65, nil), fails("bad argument #2 to '?' (number expected, got nil)")},
	{"char", args(72, 105, 256), fails("bad argument #3 to '?' (invalid value)")},
	{"dump", args(goFn), fails("unable to dump given function")},
	{"dump", args(), fails("bad argument #1 to '?' (function expected, got no value)")},
	{"dump", args("x"), fails("bad argument #1 to '?' (function expected, got string)")},
}

func TestStringBasics(t *testing.T) { runLibCases(t, basicCases) }

func TestOpenString(t *testing.T) {
	L, lib := stringLib(t)
	// pairs(string) in Redis 7.0.15 walks the library in this order.
	var keys []string
	for k, _, _ := lib.Next(Nil); !k.IsNil(); k, _, _ = lib.Next(k) {
		s, _ := k.AsString()
		keys = append(keys, s)
	}
	want := "sub upper len gfind rep find match char dump gmatch reverse byte format gsub lower"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("pairs(string) order %q, want %q", got, want)
	}
	if !RawEqual(lib.GetStr("gfind"), lib.GetStr("gmatch")) {
		t.Error("string.gfind is not string.gmatch")
	}
	if L.Globals().GetStr("string").AsTable() != lib {
		t.Error("string is not the global 'string'")
	}
	meta := L.StringMetatable()
	if meta == nil || meta == lib || meta.GetStr("__index").AsTable() != lib {
		t.Fatal("the string metatable is not a table of its own with __index = string")
	}
	if !lib.GetStr("__index").IsNil() {
		t.Error("the string table has an __index field")
	}
	// ("x"):rep("3"), as a method call looks the function up.
	rep := L.Index(String("x"), String("rep"))
	if res := L.Call(rep, args("x", "3"), -1); len(res) != 1 || !RawEqual(res[0], String("xxx")) {
		t.Errorf(`("x"):rep("3") = %s`, showStrValues(res))
	}
}

func TestStringRepBound(t *testing.T) {
	L, lib := stringLib(t)
	// 2^31 bytes: past what Revolver lets one string.rep build.
	_, err := L.PCall(lib.GetStr("rep"), args("ab", 1<<30), 1, Nil)
	if err == nil || err.Error() != "not enough memory" {
		t.Errorf("rep('ab', 2^30): %v, want not enough memory", err)
	}
	res, err := L.PCall(lib.GetStr("rep"), args("ab", 1<<20), 1, Nil)
	if err != nil || len(res[0].str()) != 2<<20 {
		t.Errorf("rep('ab', 2^20): %v", err)
	}
}

func TestStringByteMany(t *testing.T) {
	L, lib := stringLib(t)
	// 7997 results and the 3 arguments fill Lua's 8000 stack slots.
	res, err := L.PCall(lib.GetStr("byte"), args(strings.Repeat("a", 7997), 1, -1), -1, Nil)
	if err != nil || len(res) != 7997 || !RawEqual(res[7996], Number(97)) {
		t.Errorf("byte(rep('a', 7997), 1, -1): %d results, %v", len(res), err)
	}
}

func TestStringDumpLuaFunction(t *testing.T) {
	L, lib := stringLib(t)
	// function(a, ...) local x = a end on line 2 of a script: Redis
	// dumps it as this header, then its code.
	fn := &Function{proto: &funcProto{source: "@user_script", lineDefined: 2, lastLine: 2, nparams: 1,
		isVararg: true, needsArg: true}}
	res, err := L.PCall(lib.GetStr("dump"), []Value{FunctionValue(fn)}, 1, Nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00" + "\x0d\x00\x00\x00\x00\x00\x00\x00@user_script\x00" +
		"\x02\x00\x00\x00\x02\x00\x00\x00" + "\x00\x01\x07"
	if got := res[0].str(); got != want {
		t.Errorf("dump = %q, want %q", got, want)
	}
}
