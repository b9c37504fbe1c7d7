package lua

import (
	"fmt"
	"math"
	"strings"
)

// Metamethods and the operations that fall back on them, with Lua 5.1's
// error messages (lvm.c and ldebug.c).

// maxTagLoop bounds chains of __index and __newindex tables.
const maxTagLoop = 100

// Events whose absence a metatable caches (Table.noMeta).
const (
	tmIndex uint8 = 1 << iota
	tmNewIndex
	tmEq
)

// fastTM is a metatable's event, using and filling its absence cache.
func fastTM(mt *Table, bit uint8, event string) Value {
	if mt == nil || mt.noMeta&bit != 0 {
		return Nil
	}
	tm := mt.GetStr(event)
	if tm.IsNil() {
		mt.noMeta |= bit
	}
	return tm
}

// metaField is v's metatable's field event, or nil.
func (L *State) metaField(v Value, event string) Value {
	mt := L.metatable(v)
	if mt == nil {
		return Nil
	}
	return mt.GetStr(event)
}

// operand names a value in a message: "local 'x'" and the like (kind
// nameNone: the value has no name).
type operand struct {
	kind nameKind
	name string
}

// typeError raises Lua's "attempt to <op> <name> (a <type> value)".
func (L *State) typeError(v Value, op string, o operand) {
	if o.kind != nameNone {
		L.runtimeError("attempt to %s %s '%s' (a %s value)", op, nameKinds[o.kind], o.name, v.TypeName())
	}
	L.runtimeError("attempt to %s a %s value", op, v.TypeName())
}

// Index is v[k] with metamethods (luaV_gettable).
func (L *State) Index(v, k Value) Value { return L.index(v, k, operand{}) }

func (L *State) index(v, k Value, o operand) Value {
	for loop := 0; loop < maxTagLoop; loop++ {
		var tm Value
		if t := v.AsTable(); t != nil {
			r := t.Get(k)
			if !r.IsNil() {
				return r
			}
			if tm = fastTM(t.meta, tmIndex, "__index"); tm.IsNil() {
				return Nil
			}
		} else if tm = L.metaField(v, "__index"); tm.IsNil() {
			if loop > 0 {
				o = operand{}
			}
			L.typeError(v, "index", o)
		}
		if tm.AsFunction() != nil {
			return L.callTM1(tm, v, k)
		}
		v = tm
	}
	L.runtimeError("loop in gettable")
	return Nil
}

// SetIndex is v[k] = val with metamethods (luaV_settable), read-only
// tables refused.
func (L *State) SetIndex(v, k, val Value) { L.setIndex(v, k, val, operand{}) }

func (L *State) setIndex(v, k, val Value, o operand) {
	for loop := 0; loop < maxTagLoop; loop++ {
		var tm Value
		if t := v.AsTable(); t != nil {
			if t.readonly {
				L.runtimeError(readonlyError)
			}
			// Lua makes the slot first, so a new key takes a node even when
			// __newindex then handles the assignment.
			slot := L.slot(t, k)
			if !slot.IsNil() {
				*slot = val
				return
			}
			if tm = fastTM(t.meta, tmNewIndex, "__newindex"); tm.IsNil() {
				*slot = val
				return
			}
		} else if tm = L.metaField(v, "__newindex"); tm.IsNil() {
			if loop > 0 {
				o = operand{}
			}
			L.typeError(v, "index", o)
		}
		if tm.AsFunction() != nil {
			L.callTM0(tm, v, k, val)
			return
		}
		v = tm
	}
	L.runtimeError("loop in settable")
}

const readonlyError = "Attempt to modify a readonly table"

// slot is t's slot for k, made if new, with Lua's errors for the keys a
// table cannot hold.
func (L *State) slot(t *Table, k Value) *Value {
	switch k.Type() {
	case TypeNil:
		L.runtimeError("table index is nil")
	case TypeNumber:
		if f := k.num(); f != f {
			L.runtimeError("table index is NaN")
		}
	}
	return t.slot(k)
}

// RawSet is rawset(t, k, v): no metamethods, but Lua's errors for nil and
// NaN keys and Redis's for a read-only table (without a position, as the
// library raises them).
func (L *State) RawSet(t *Table, k, v Value) {
	if t.readonly {
		L.Error(String(readonlyError))
	}
	switch k.Type() {
	case TypeNil:
		L.Error(String("table index is nil"))
	case TypeNumber:
		if f := k.num(); f != f {
			L.Error(String("table index is NaN"))
		}
	}
	*t.slot(k) = v
}

// RawSetInt is t[i] = v for a library writing an array (lua_rawseti).
func (L *State) RawSetInt(t *Table, i int, v Value) {
	if t.readonly {
		L.Error(String(readonlyError))
	}
	t.SetInt(i, v)
}

func (L *State) callTM1(tm Value, args ...Value) Value {
	L.nCcalls++
	if L.nCcalls >= maxCCalls {
		L.cStackOverflow()
	}
	n := L.call(tm, args, nil)
	L.nCcalls--
	if n == 0 {
		return Nil
	}
	return L.ret[0]
}

func (L *State) callTM0(tm Value, args ...Value) {
	L.nCcalls++
	if L.nCcalls >= maxCCalls {
		L.cStackOverflow()
	}
	L.call(tm, args, nil)
	L.nCcalls--
}

// arithOp is an arithmetic operator's event and function.
type arithOp struct {
	event string
	fn    func(a, b float64) float64
}

var (
	arithAdd = &arithOp{"__add", func(a, b float64) float64 { return a + b }}
	arithSub = &arithOp{"__sub", func(a, b float64) float64 { return a - b }}
	arithMul = &arithOp{"__mul", func(a, b float64) float64 { return a * b }}
	arithDiv = &arithOp{"__div", func(a, b float64) float64 { return a / b }}
	arithMod = &arithOp{"__mod", luaMod}
	arithPow = &arithOp{"__pow", luaPow}
	arithUnm = &arithOp{"__unm", func(a, _ float64) float64 { return -a }}
)

// luaMod is Lua 5.1's a % b: a - floor(a/b)*b.
func luaMod(a, b float64) float64 { return a - math.Floor(a/b)*b }

// arith is a op b when either is not a number: numeric strings convert,
// else the operands' metamethod, else Lua's error naming the operand at
// fault (the first one that does not convert).
func (L *State) arith(op *arithOp, a, b Value, oa, ob operand) Value {
	if x, ok := a.ToNumber(); ok {
		if y, ok := b.ToNumber(); ok {
			return Number(op.fn(x, y))
		}
	}
	tm := L.metaField(a, op.event)
	if tm.IsNil() {
		tm = L.metaField(b, op.event)
	}
	if tm.IsNil() {
		if _, ok := a.ToNumber(); !ok {
			L.typeError(a, "perform arithmetic on", oa)
		}
		L.typeError(b, "perform arithmetic on", ob)
	}
	return L.callTM1(tm, a, b)
}

// Arith is a op b for the library's use: op is one of "+-*/%^".
func (L *State) Arith(op byte, a, b Value) Value {
	ops := map[byte]*arithOp{'+': arithAdd, '-': arithSub, '*': arithMul, '/': arithDiv, '%': arithMod, '^': arithPow}
	if x, ok := a.AsNumber(); ok {
		if y, ok := b.AsNumber(); ok {
			return Number(ops[op].fn(x, y))
		}
	}
	return L.arith(ops[op], a, b, operand{}, operand{})
}

// Equal is a == b with __eq (luaV_equalval).
func (L *State) Equal(a, b Value) bool {
	if RawEqual(a, b) {
		return true
	}
	ta := a.Type()
	if ta != b.Type() || ta != TypeTable && ta != TypeUserdata {
		return false
	}
	var m1, m2 *Table
	if ta == TypeTable {
		m1, m2 = a.AsTable().meta, b.AsTable().meta
	} else {
		m1, m2 = a.AsUserdata().meta, b.AsUserdata().meta
	}
	tm := L.compTM(m1, m2, "__eq")
	if tm.IsNil() {
		return false
	}
	return L.callTM1(tm, a, b).Truthy()
}

// compTM is the comparison metamethod both metatables share, or nil.
func (L *State) compTM(m1, m2 *Table, event string) Value {
	if m1 == nil {
		return Nil
	}
	tm1 := m1.GetStr(event)
	if tm1.IsNil() {
		return Nil
	}
	if m1 == m2 {
		return tm1
	}
	if m2 == nil {
		return Nil
	}
	if tm2 := m2.GetStr(event); RawEqual(tm1, tm2) {
		return tm1
	}
	return Nil
}

// LessThan is a < b (luaV_lessthan).
func (L *State) LessThan(a, b Value) bool {
	if x, ok := a.AsNumber(); ok {
		if y, ok := b.AsNumber(); ok {
			return x < y
		}
	}
	return L.lessSlow(a, b)
}

func (L *State) lessSlow(a, b Value) bool {
	ta := a.Type()
	if ta != b.Type() {
		L.orderError(a, b)
	}
	switch ta {
	case TypeNumber:
		return a.num() < b.num()
	case TypeString:
		return strcoll(a.str(), b.str()) < 0
	}
	tm := L.compTM(L.metatable(a), L.metatable(b), "__lt")
	if tm.IsNil() {
		L.orderError(a, b)
	}
	return L.callTM1(tm, a, b).Truthy()
}

// LessEqual is a <= b (luaV_lessequal): __le, else not (b < a) by __lt.
func (L *State) LessEqual(a, b Value) bool {
	if x, ok := a.AsNumber(); ok {
		if y, ok := b.AsNumber(); ok {
			return x <= y
		}
	}
	ta := a.Type()
	if ta != b.Type() {
		L.orderError(a, b)
	}
	if ta == TypeString {
		return strcoll(a.str(), b.str()) <= 0
	}
	ma, mb := L.metatable(a), L.metatable(b)
	if tm := L.compTM(ma, mb, "__le"); !tm.IsNil() {
		return L.callTM1(tm, a, b).Truthy()
	}
	if tm := L.compTM(mb, ma, "__lt"); !tm.IsNil() {
		return !L.callTM1(tm, b, a).Truthy()
	}
	L.orderError(a, b)
	return false
}

// strcoll compares as Lua's l_strcmp does in the C locale: bytewise, a
// NUL sorting before everything (C strings compared chunk by chunk).
func strcoll(a, b string) int { return strings.Compare(a, b) }

func (L *State) orderError(a, b Value) {
	t1, t2 := a.TypeName(), b.TypeName()
	if t1[2] == t2[2] {
		L.runtimeError("attempt to compare two %s values", t1)
	}
	L.runtimeError("attempt to compare %s with %s", t1, t2)
}

// concat is a .. b when either is not a string or number: __concat, else
// Lua's error naming the operand at fault.
func (L *State) concat(a, b Value, oa, ob operand) Value {
	x, okA := a.ToString()
	y, okB := b.ToString()
	if okA && okB {
		return String(x + y)
	}
	tm := L.metaField(a, "__concat")
	if tm.IsNil() {
		tm = L.metaField(b, "__concat")
	}
	if tm.IsNil() {
		if okA {
			L.typeError(b, "concatenate", ob)
		}
		L.typeError(a, "concatenate", oa)
	}
	return L.callTM1(tm, a, b)
}

// length is #v.
func (L *State) length(v Value, o operand) Value {
	switch v.Type() {
	case TypeTable:
		return Number(float64(v.AsTable().Len()))
	case TypeString:
		return Number(float64(v.n & lenMask))
	}
	tm := L.metaField(v, "__len")
	if tm.IsNil() {
		L.typeError(v, "get length of", o)
	}
	return L.callTM1(tm, v, Nil)
}

// ToStringMeta is tostring(v): __tostring's result (any value), else the
// value written as Lua writes it.
func (L *State) ToStringMeta(v Value) Value {
	if tm := L.metaField(v, "__tostring"); !tm.IsNil() {
		return L.callTM1(tm, v)
	}
	return String(L.tostring(v))
}

// tostring writes v as tostring does without metamethods.
func (L *State) tostring(v Value) string {
	switch v.Type() {
	case TypeNil:
		return "nil"
	case TypeBoolean:
		if v.Truthy() {
			return "true"
		}
		return "false"
	case TypeNumber:
		return NumberToString(v.num())
	case TypeString:
		return v.str()
	}
	return fmt.Sprintf("%s: %s", v.TypeName(), pointerString(v))
}

// pointerString is glibc's %p of v's object.
func pointerString(v Value) string {
	if u := v.AsUserdata(); u != nil && u.Light {
		if p, ok := u.Value.(uintptr); ok && p != 0 {
			return fmt.Sprintf("0x%x", p)
		}
		return "(nil)"
	}
	return fmt.Sprintf("%p", v.p)
}
