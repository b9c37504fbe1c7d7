package lua

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestMathCases(t *testing.T) { runCases(t, mathCases) }

// TestMathRandom replays sequences recorded from Redis: math.random on
// its generator (rand48), seeded by math.randomseed or not at all.
func TestMathRandom(t *testing.T) {
	L := newLibState()
	random, seed := lookup(t, L, "math.random"), lookup(t, L, "math.randomseed")
	g17 := func(v Value) string {
		f, _ := v.AsNumber()
		return strconv.FormatFloat(f, 'g', 17, 64)
	}
	// The generator's state before any seeding.
	if got := g17(L.Call1(random)); got != "0.39646477363839039" {
		t.Errorf("first math.random() = %s", got)
	}
	if res := L.Call(seed, []Value{N(42)}, -1); len(res) != 0 {
		t.Errorf("math.randomseed returned %d values", len(res))
	}
	calls := []struct {
		args []Value
		want string
	}{
		{nil, "0.74452500033403046"},
		{[]Value{N(100)}, "35"},
		{[]Value{N(-5), N(10)}, "-4"},
		{[]Value{N(2.9)}, "1"},
		{[]Value{N(-2147483648), N(2147483647)}, "-2147483648"}, // the range's size wraps to 0
		{[]Value{N(3), N(3.5)}, "3"},
		{[]Value{N(4294967297)}, "1"},
		{nil, "0.47881429059375741"},
		{[]Value{N(1000000)}, "690813"},
		{[]Value{N(-3), N(-1)}, "-1"},
	}
	for i, c := range calls {
		if got := g17(L.Call1(random, c.args...)); got != c.want {
			t.Errorf("call %d: math.random(%s) = %s, want %s", i, showValues(c.args), got, c.want)
		}
	}
	// Seeds are C ints: truncated, then their low 32 bits.
	for _, c := range []struct {
		seed Value
		want string
	}{
		{N(-7.9), "0.075211875175690224"},
		{N(4294967338), "0.74452500033403046"},
		{S("12"), "0.62045574030860129"},
	} {
		L.Call(seed, []Value{c.seed}, 0)
		if got := g17(L.Call1(random)); got != c.want {
			t.Errorf("after randomseed(%s): %s, want %s", showValue(c.seed), got, c.want)
		}
	}
	// Coroutines share the generator with the main thread.
	L.Call(seed, []Value{N(42)}, 0)
	th := L.newThread(random)
	if got := g17(th.Call1(random)); got != "0.74452500033403046" {
		t.Errorf("another thread's math.random() = %s", got)
	}
}

func TestMathFromLua(t *testing.T) {
	L := newLibState()
	cases := []struct {
		path, name string
		args       []Value
		want       string
	}{
		{"math.random", "random", []Value{N(0)}, "false,user_script:1: bad argument #1 to 'random' (interval is empty)"},
		{"math.random", "random", []Value{N(3), N(2)}, "false,user_script:1: bad argument #2 to 'random' (interval is empty)"},
		{"math.random", "random", []Value{N(1), N(2), N(3)}, "false,user_script:1: wrong number of arguments"},
		{"math.max", "max", []Value{}, "false,user_script:1: bad argument #1 to 'max' (number expected, got no value)"},
		{"math.floor", "floor", []Value{S("x")}, "false,user_script:1: bad argument #1 to 'floor' (number expected, got string)"},
	}
	for _, c := range cases {
		got := pcallShow(L, luaCaller(1, c.name, lookup(t, L, c.path)), c.args...)
		if got != c.want {
			t.Errorf("%s(%s) from Lua = %q, want %q", c.path, showValues(c.args), got, c.want)
		}
	}
}

// TestMathTable checks the library's layout (pairs' order in Redis), its
// constants, and that mod is fmod itself.
func TestMathTable(t *testing.T) {
	L := NewState()
	m := openMath(L)
	var keys []string
	m.ForEach(func(k, _ Value) { keys = append(keys, showValue(k)) })
	want := "log max acos huge ldexp pi cos tanh pow deg tan cosh sinh random randomseed frexp ceil floor " +
		"rad abs sqrt modf asin min mod fmod log10 atan2 exp sin atan"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("pairs(math):\n got %s\nwant %s", got, want)
	}
	if m.GetStr("mod") != m.GetStr("fmod") {
		t.Error("math.mod is not math.fmod")
	}
	if pi, _ := m.GetStr("pi").AsNumber(); pi != math.Pi {
		t.Errorf("math.pi = %v", pi)
	}
	if h, _ := m.GetStr("huge").AsNumber(); !math.IsInf(h, 1) {
		t.Errorf("math.huge = %v", h)
	}
}

// TestMathNaNSign checks glibc's NaN signs directly on the bits, past
// what tostring shows.
func TestMathNaNSign(t *testing.T) {
	L := newLibState()
	negative := func(path string, args ...Value) bool {
		f, _ := L.Call1(lookup(t, L, path), args...).AsNumber()
		if f == f {
			t.Fatalf("%s(%s) = %v, not a NaN", path, showValues(args), f)
		}
		return math.Signbit(f)
	}
	cases := []struct {
		path string
		args []Value
		neg  bool
	}{
		{"math.sqrt", []Value{N(-1)}, true},
		{"math.log10", []Value{N(-1)}, false},
		{"math.acos", []Value{N(2)}, false},
		{"math.abs", []Value{N(nan)}, false},
		{"math.sin", []Value{N(pnan)}, false},
		{"math.sin", []Value{N(nan)}, true},
		{"math.pow", []Value{N(-8), N(1.0 / 3)}, true},
		{"math.fmod", []Value{N(pnan), N(nan)}, false},
		{"math.modf", []Value{N(nan)}, true},
	}
	for _, c := range cases {
		if got := negative(c.path, c.args...); got != c.neg {
			t.Errorf("%s(%s): sign bit %v, want %v", c.path, showValues(c.args), got, c.neg)
		}
	}
}

// TestMathGlibcValues checks values recorded from Redis where Go's math
// package answers differently (in the last bit, or with an overflow).
func TestMathGlibcValues(t *testing.T) {
	L := newLibState()
	cases := []string{
		"sinh 0.0209256588118821 0.020927186011047434",
		"sinh 0.63941645622253418 0.68388715523639731",
		"sinh -0.055192907036047109 -0.055220933267577793",
		"sinh 710 1.1169973830808557e+308",
		"sinh -710.4758600739439 -1.7976931348621744e+308",
		"cosh 0.0209256588118821 1.0002189495877094",
		"cosh -102.7360725402832 2.073382368043869e+44",
		"cosh 15.646419525146484 3119777.8164903224",
		"cosh 710 1.1169973830808557e+308",
		"tanh -0.35837888717651367 -0.3437853154482558",
		"tanh 0.059140005717707396 0.059071153856986497",
		"tanh -0.0011179063966767597 -0.0011179059309889693",
		"exp 267.3189103603363 1.2448805394039905e+116",
		"exp 33.567239191581194 378500758051150.56",
		"exp 709.78 1.7928227943945155e+308",
		"exp -745.1 4.9406564584124654e-324",
		"log 5.8960977375238075 1.7742907316702314",
		"log 0.0020115464128079357 -6.2088514931106049",
		"log 0.16103711825170211 -1.8261203924225959",
		"log10 30.934356028522824 1.4904410795876328",
		"log10 0.069428453133915755 -1.1584625107176421",
		"log10 5e-324 -323.30621534311581",
		"pow 0.0209256588118821 -20 3.8584884150610685e+33",
		"pow 1.0038317206501961 414.54768180847168 4.8812212888563895",
		"pow -0.0209256588118821 9 -7.6932927662030359e-16",
		"pow 4.483370732438659e+143 -0.24338740110397339 1.0889533599127167e-35",
		"pow -12.209 10 73586972789.130508",
		"pow 1e300 0.37 9.9999999999999689e+110",
		"pow 2 10 1024",
		"pow 10 -2 0.01",
		"pow -2 -3 -0.125",
	}
	for _, c := range cases {
		f := strings.Fields(c)
		var args []Value
		for _, a := range f[1 : len(f)-1] {
			x, _ := strconv.ParseFloat(a, 64)
			args = append(args, N(x))
		}
		want, _ := strconv.ParseFloat(f[len(f)-1], 64)
		got, _ := L.Call1(lookup(t, L, "math."+f[0]), args...).AsNumber()
		if got != want {
			t.Errorf("math.%s(%s) = %s, want %s", f[0], showValues(args), strconv.FormatFloat(got, 'g', 17, 64), f[len(f)-1])
		}
	}
}

// TestPowOperator: Lua's ^ computes as math.pow does (recorded from
// Redis: (-8)^(1/3), (-(0/0))^1, (-12.209)^10, 2^0.5).
func TestPowOperator(t *testing.T) {
	L := newLibState()
	cases := []struct {
		x, y float64
		want string
	}{
		{-8, 1.0 / 3, "-nan"},
		{pnan, 1, "nan"},
		{-12.209, 10, "73586972789.130508"},
		{2, 0.5, "1.4142135623730951"},
	}
	for _, c := range cases {
		f, _ := L.Arith('^', N(c.x), N(c.y)).AsNumber()
		got := strconv.FormatFloat(f, 'g', 17, 64)
		if f != f {
			got = NumberToString(f)
		}
		if got != c.want {
			t.Errorf("%v ^ %v = %s, want %s", c.x, c.y, got, c.want)
		}
	}
}
