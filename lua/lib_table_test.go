package lua

import (
	"fmt"
	"strings"
	"testing"
)

func TestTableCases(t *testing.T) { runCases(t, tableCases) }

// TestSortComparisons sorts with comparators, consistent or not, and
// checks every comparison made, in order, and the table afterwards (also
// after "invalid order function for sorting"), as recorded from Redis.
func TestSortComparisons(t *testing.T) {
	input := []float64{5, 2, 8, 2, 9, 1, 5, 5, 3, 7, 4, 6}
	cases := []struct {
		name  string
		input []float64
		cmp   func(a, b float64) Value
		want  string // ok|error|table afterwards|comparisons
	}{
		{"less", input, func(a, b float64) Value { return Bool(a < b) },
			"true|nil|1 2 2 3 4 5 5 5 6 7 8 9|6<5 1<5 2<5 8<5 5<7 5<3 2<5 9<5 5<5 4<5 5<5 5<5 9<5 5<4 6<8 7<6 8<7 9<7 7<9 7<6 8<9 5<1 2<1 5<2 2<2 2<5 2<4 2<3 2<2 3<2 2<1 2<1 5<4 5<4 5<5 3<5 5<5 5<3 3<4"},
		{"greater", input, func(a, b float64) Value { return Bool(a > b) },
			"true|nil|9 8 7 6 5 5 5 4 3 2 2 1|6<5 1<6 5<1 2<5 5<7 8<5 2<5 5<3 5<5 9<5 4<5 5<5 4<5 5<5 1<2 2<2 1<2 3<2 4<2 2<2 2<4 4<2 3<4 2<3 5<6 8<6 7<6 9<6 5<6 6<5 6<9 5<5 9<8 7<9 8<7"},
		{"less or equal", input, func(a, b float64) Value { return Bool(a <= b) },
			"true|nil|1 2 4 2 3 5 5 5 6 7 8 9|6<5 1<5 2<5 8<5 5<7 5<3 2<5 9<5 5<5 5<5 5<4 9<5 5<4 4<1 3<1 4<3 2<3 2<3 3<3 4<3 3<2 4<1 2<1 4<2 2<2 2<2 4<2 2<2 2<1 4<1 2<1 4<2 6<5 8<5 6<8 5<6 9<6 6<7 6<9 6<5 5<5 8<7 9<7 8<9"},
		{"always true", []float64{3, 1, 2, 5, 4}, func(a, b float64) Value { return True },
			"false|invalid order function for sorting|2 1 5 4 3|4<3 2<4 1<4 5<4 4<4 3<4 nil<4"},
		{"always false", []float64{3, 1, 2, 5, 4}, func(a, b float64) Value { return False },
			"true|nil|3 5 2 1 4|4<3 2<3 4<2 1<2 2<5 1<2 2<5 4<1 5<3"},
		{"inconsistent", input, func(a, b float64) Value { return Bool(luaMod(a*7+b*3, 5) < 2) },
			"true|nil|5 9 5 5 7 4 6 1 2 3 2 8|6<5 1<5 6<1 2<6 6<7 8<6 6<3 6<5 2<6 6<5 9<6 4<6 2<6 6<4 1<8 2<1 8<2 3<2 2<2 2<3 2<2 2<2 8<2 2<1 8<1 3<1 8<3 2<8 8<2 8<8 3<8 2<8 8<1 3<1 2<1 3<2 2<2 2<2 3<2 2<2 2<1 3<1 2<1 3<2 4<5 5<5 7<5 5<5 5<9 7<5 5<9 9<5 4<5 7<5 4<7"},
		{"always true, 2", []float64{1, 2}, func(a, b float64) Value { return True }, "true|nil|2 1|2<1"},
		{"always true, 3", []float64{1, 2, 3}, func(a, b float64) Value { return True }, "true|nil|2 3 1|3<1 2<3"},
		{"always true, 4", []float64{4, 3, 2, 1}, func(a, b float64) Value { return True },
			"false|invalid order function for sorting|3 2 1 4|1<4 3<1 2<1 1<1 4<1 nil<1"},
		{"zero is true", input, func(a, b float64) Value { return N(0) },
			"false|invalid order function for sorting|1 2 8 2 9 4 5 5 3 7 6 5|6<5 1<6 2<6 8<6 2<6 9<6 4<6 5<6 5<6 3<6 7<6 6<6 5<6 nil<6"},
	}
	for _, c := range cases {
		L := newLibState()
		tbl := NewTable(len(c.input), 0)
		for i, f := range c.input {
			tbl.SetInt(i+1, N(f))
		}
		var log []string
		cmp := goFunc(func(L *State) int {
			a, b := L.Get(1), L.Get(2)
			log = append(log, showValue(a)+"<"+showValue(b))
			x, _ := a.AsNumber()
			y, _ := b.AsNumber()
			L.Push(c.cmp(x, y))
			return 1
		})
		ok, msg := "true", "nil"
		if _, err := L.PCall(lookup(t, L, "table.sort"), []Value{TableValue(tbl), cmp}, 0, Nil); err != nil {
			ok, msg = "false", showValue(err.Value)
		}
		arr := make([]string, len(c.input))
		for i := range arr {
			arr[i] = showValue(tbl.GetInt(i + 1))
		}
		got := strings.Join([]string{ok, msg, strings.Join(arr, " "), strings.Join(log, " ")}, "|")
		if got != c.want {
			t.Errorf("sort with %s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestSortMeta sorts tables by their __lt, and passes a comparator's
// error through.
func TestSortMeta(t *testing.T) {
	L := newLibState()
	sort := lookup(t, L, "table.sort")
	mt := NewTable(0, 1)
	mt.SetStr("__lt", goFunc(func(L *State) int {
		a, _ := L.Get(1).AsTable().GetStr("v").AsNumber()
		b, _ := L.Get(2).AsTable().GetStr("v").AsNumber()
		L.Push(Bool(a < b))
		return 1
	}))
	tbl := NewTable(5, 0)
	for i, v := range []float64{3, 1, 2, 5, 4} {
		obj := NewTable(0, 1)
		obj.SetStr("v", N(v))
		obj.SetMetatable(mt)
		tbl.SetInt(i+1, TableValue(obj))
	}
	L.Call(sort, []Value{TableValue(tbl)}, 0)
	var got []string
	for i := 1; i <= 5; i++ {
		got = append(got, showValue(tbl.GetInt(i).AsTable().GetStr("v")))
	}
	if s := strings.Join(got, " "); s != "1 2 3 4 5" {
		t.Errorf("sort by __lt: %s", s)
	}
	// A comparator's extra results are dropped.
	twoResults := goFunc(func(L *State) int {
		a, _ := L.Get(1).AsNumber()
		b, _ := L.Get(2).AsNumber()
		L.Push(Bool(a > b))
		L.Push(S("extra"))
		return 2
	})
	desc := T(N(1), N(3), N(2))
	L.Call(sort, []Value{desc, twoResults}, 0)
	if got := dumpTable(desc.AsTable()); got != "#3 1:3 2:2 3:1" {
		t.Errorf("sort with a two-result comparator: %s", got)
	}
	boom := goFunc(func(L *State) int { L.Error(S("boom")); return 0 })
	if got := pcallShow(L, sort, T(N(1), N(2), N(3)), boom); got != "false,boom" {
		t.Errorf("sort with a failing comparator = %q", got)
	}
}

// TestSortFromLua checks the position luaL_error gives sort's message:
// the caller's.
func TestSortFromLua(t *testing.T) {
	L := newLibState()
	always := goFunc(func(L *State) int { L.Push(True); return 1 })
	got := pcallShow(L, luaCaller(4, "sort", lookup(t, L, "table.sort")), T(N(3), N(1), N(2), N(5), N(4)), always)
	if want := "false,user_script:4: invalid order function for sorting"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = pcallShow(L, luaCaller(2, "concat", lookup(t, L, "table.concat")), T(N(1), T()))
	if want := "false,user_script:2: invalid value (table) at index 2 in table for 'concat'"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestForeach(t *testing.T) {
	L := newLibState()
	foreach, foreachi := lookup(t, L, "table.foreach"), lookup(t, L, "table.foreachi")
	var log []string
	logger := func(stopAt string, ret Value) Value {
		return goFunc(func(L *State) int {
			k := showValue(L.Get(1))
			log = append(log, k+"="+showValue(L.Get(2)))
			if k == stopAt {
				L.Push(ret)
				return 1
			}
			return 0
		})
	}
	// {10, 20, x = 1, y = 2} as its constructor makes it.
	mixed := func() Value {
		tbl := NewTable(2, 2)
		tbl.SetStr("x", N(1))
		tbl.SetStr("y", N(2))
		tbl.SetInt(1, N(10))
		tbl.SetInt(2, N(20))
		return TableValue(tbl)
	}
	cases := []struct {
		fn   Value
		args []Value
		want string // result|calls
	}{
		{foreachi, []Value{T(N(10), N(20), Nil, N(40)), logger("", Nil)}, "true|1=10 2=20 3=nil 4=40"},
		{foreachi, []Value{T(N(10), N(20), N(30)), logger("2", False)}, "true,false|1=10 2=20"},
		{foreach, []Value{mixed(), logger("", Nil)}, "true|1=10 2=20 y=2 x=1"},
		{foreach, []Value{mixed(), logger("x", S("stop"))}, "true,stop|1=10 2=20 y=2 x=1"},
	}
	for _, c := range cases {
		log = nil
		got := pcallShow(L, c.fn, c.args...) + "|" + strings.Join(log, " ")
		if got != c.want {
			t.Errorf("%s(%s) = %q, want %q", c.fn.AsFunction().name, showValues(c.args), got, c.want)
		}
	}
	// foreachi takes #t once: elements appended meanwhile are not visited.
	tbl := NewTable(3, 0)
	for i := 1; i <= 3; i++ {
		tbl.SetInt(i, N(float64(i)))
	}
	var visited []string
	grow := goFunc(func(L *State) int {
		tbl.SetInt(tbl.Len()+1, L.Get(2))
		visited = append(visited, showValue(L.Get(1)))
		return 0
	})
	L.Call(foreachi, []Value{TableValue(tbl), grow}, 0)
	if got := fmt.Sprintf("%s|%d", strings.Join(visited, " "), tbl.Len()); got != "1 2 3|6" {
		t.Errorf("foreachi over a growing table: %s", got)
	}
}

func TestTableMaxn(t *testing.T) {
	L := newLibState()
	tbl := NewTable(0, 5)
	tbl.Set(N(1.5), N(1))
	tbl.Set(N(-1), N(2))
	tbl.Set(N(3), N(3))
	tbl.SetStr("x", N(4))
	tbl.Set(N(1e10), N(5))
	if got := pcallShow(L, lookup(t, L, "table.maxn"), TableValue(tbl)); got != "true,10000000000" {
		t.Errorf("maxn = %q", got)
	}
}

// TestTableReadOnly: the writers refuse read-only tables at their first
// write (lua_rawseti's check in Redis), readers and no-op calls do not.
func TestTableReadOnly(t *testing.T) {
	L := newLibState()
	ro := func(items ...Value) Value {
		v := T(items...)
		v.AsTable().SetReadOnly(true)
		return v
	}
	const refused = "false,Attempt to modify a readonly table"
	cases := []struct {
		fn   string
		args []Value
		want string
	}{
		{"table.insert", []Value{ro(), N(1)}, refused},
		{"table.insert", []Value{ro(N(1)), N(1), N(2)}, refused},
		{"table.remove", []Value{ro(N(1))}, refused},
		{"table.remove", []Value{ro()}, "true"},
		{"table.remove", []Value{ro(N(1)), N(5)}, "true"},
		{"table.sort", []Value{ro(N(2), N(1))}, refused},
		{"table.sort", []Value{ro(N(1), N(2), N(3))}, "true"},
		{"table.sort", []Value{ro(N(1), N(2), N(3), N(4))}, refused}, // the pivot moves
		{"table.concat", []Value{ro(N(1), N(2)), S("+")}, "true,1+2"},
		{"table.getn", []Value{ro(N(1), N(2))}, "true,2"},
		{"rawset", []Value{ro(), N(1), N(2)}, refused},
		{"setmetatable", []Value{ro(), Nil}, refused},
		{"rawget", []Value{ro(N(7)), N(1)}, "true,7"},
	}
	for _, c := range cases {
		if got := pcallShow(L, lookup(t, L, c.fn), c.args...); got != c.want {
			t.Errorf("%s(%s) = %q, want %q", c.fn, showValues(c.args), got, c.want)
		}
	}
}

// TestTableOrder checks the library table's layout: pairs walks it in
// Redis's order.
func TestTableOrder(t *testing.T) {
	L := NewState()
	tbl := openTable(L)
	var keys []string
	tbl.ForEach(func(k, _ Value) { keys = append(keys, showValue(k)) })
	if got, want := strings.Join(keys, " "), "setn insert getn foreachi maxn foreach concat sort remove"; got != want {
		t.Errorf("pairs(table): %s, want %s", got, want)
	}
	if L.Globals().GetStr("table").AsTable() != tbl {
		t.Error("no global table")
	}
}
