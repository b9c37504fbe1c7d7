package lua

// The running Go function's view of its frame, and argument checks with
// Lua 5.1's messages (lapi.c and lauxlib.c).

// Top is the number of values in the running Go function's frame: its
// arguments, then what it pushed.
func (L *State) Top() int { return len(L.stack) - L.base }

// Get is the value at index i of the frame (1 is the first argument); nil
// past the top.
func (L *State) Get(i int) Value {
	if j := L.base + i - 1; i >= 1 && j < len(L.stack) {
		return L.stack[j]
	}
	return Nil
}

// Push pushes v on the frame.
func (L *State) Push(v Value) { L.stack = append(L.stack, v) }

// SetTop makes the frame n values long, dropping values or adding nils.
func (L *State) SetTop(n int) {
	top := L.base + n
	if top <= len(L.stack) {
		clear(L.stack[top:])
		L.stack = L.stack[:top]
		return
	}
	for len(L.stack) < top {
		L.stack = append(L.stack, Nil)
	}
}

// Pop drops n values from the top of the frame.
func (L *State) Pop(n int) { L.SetTop(L.Top() - n) }

// Replace sets the value at index i (1 ≤ i ≤ Top).
func (L *State) Replace(i int, v Value) { L.stack[L.base+i-1] = v }

// Args is the frame's values from index i to the top.
func (L *State) Args(i int) []Value {
	if j := L.base + i - 1; i >= 1 && j < len(L.stack) {
		return L.stack[j:]
	}
	return nil
}

// ArgError raises Lua's "bad argument #n to 'name' (msg)", naming the
// function as its caller's code did ('?' when called from Go), and not
// counting self in a method call.
func (L *State) ArgError(n int, msg string) {
	name := "?"
	if ci := &L.ci[len(L.ci)-1]; ci.site != nil && ci.site.kind != nameNone && len(L.ci) > 1 && L.ci[len(L.ci)-2].fr != nil {
		name = ci.site.name
		if ci.site.kind == nameMethod {
			n--
			if n == 0 {
				L.Errorf("calling '%s' on bad self (%s)", name, msg)
			}
		}
	}
	L.Errorf("bad argument #%d to '%s' (%s)", n, name, msg)
}

// TypeError raises "bad argument #n to 'f' (<tname> expected, got <type>)".
func (L *State) TypeError(n int, tname string) {
	L.ArgError(n, tname+" expected, got "+L.typeNameAt(n))
}

// typeNameAt is the type of argument n, "no value" past the top.
func (L *State) typeNameAt(n int) string {
	if n > L.Top() {
		return "no value"
	}
	return L.Get(n).TypeName()
}

// CheckAny returns argument n, which must be there.
func (L *State) CheckAny(n int) Value {
	if n > L.Top() {
		L.ArgError(n, "value expected")
	}
	return L.Get(n)
}

// CheckTable returns argument n, a table.
func (L *State) CheckTable(n int) *Table {
	t := L.Get(n).AsTable()
	if t == nil {
		L.TypeError(n, "table")
	}
	return t
}

// CheckFunction returns argument n, a function.
func (L *State) CheckFunction(n int) *Function {
	f := L.Get(n).AsFunction()
	if f == nil {
		L.TypeError(n, "function")
	}
	return f
}

// CheckType checks that argument n has type t (luaL_checktype).
func (L *State) CheckType(n int, t Type) {
	if L.Get(n).Type() != t || n > L.Top() {
		L.TypeError(n, t.String())
	}
}

// CheckNumber returns argument n as a number: a number or a string that
// converts (luaL_checknumber).
func (L *State) CheckNumber(n int) float64 {
	f, ok := L.Get(n).ToNumber()
	if !ok {
		L.TypeError(n, "number")
	}
	return f
}

// OptNumber is CheckNumber with a default for nil or absent.
func (L *State) OptNumber(n int, def float64) float64 {
	if L.Get(n).IsNil() {
		return def
	}
	return L.CheckNumber(n)
}

// CheckInteger returns argument n as an integer, truncated toward zero as
// C casts a double to lua_Integer (64 bits; luaL_checkinteger).
func (L *State) CheckInteger(n int) int { return numberToInt(L.CheckNumber(n)) }

// OptInteger is CheckInteger with a default for nil or absent.
func (L *State) OptInteger(n int, def int) int {
	if L.Get(n).IsNil() {
		return def
	}
	return L.CheckInteger(n)
}

// CheckInt is luaL_checkint: CheckInteger cast to C's 32-bit int (which
// keeps the low 32 bits).
func (L *State) CheckInt(n int) int { return int(int32(L.CheckInteger(n))) }

// OptInt is CheckInt with a default for nil or absent.
func (L *State) OptInt(n int, def int) int {
	if L.Get(n).IsNil() {
		return def
	}
	return L.CheckInt(n)
}

// numberToInt is C's (int) cast of a double on x86-64 (lua_Integer is a
// ptrdiff_t there): truncation, and the "integer indefinite" value for
// what does not fit.
func numberToInt(f float64) int {
	if f >= -9.223372036854775808e18 && f < 9.223372036854775808e18 {
		return int(f)
	}
	return -1 << 63
}

// CheckString returns argument n as a string: a string, or a number,
// which is converted in place as lua_tolstring does.
func (L *State) CheckString(n int) string {
	v := L.Get(n)
	if v.IsString() {
		return v.str()
	}
	if v.IsNumber() {
		s := NumberToString(v.num())
		L.Replace(n, String(s))
		return s
	}
	L.TypeError(n, "string")
	return ""
}

// OptString is CheckString with a default for nil or absent.
func (L *State) OptString(n int, def string) string {
	if L.Get(n).IsNil() {
		return def
	}
	return L.CheckString(n)
}

// CheckOption returns the index of argument n (or def when absent) in
// options, raising "invalid option 'x'" otherwise.
func (L *State) CheckOption(n int, def string, options []string) int {
	name := def
	if def == "" || !L.Get(n).IsNil() {
		name = L.CheckString(n)
	}
	for i, o := range options {
		if o == name {
			return i
		}
	}
	L.ArgError(n, "invalid option '"+name+"'")
	return 0
}
