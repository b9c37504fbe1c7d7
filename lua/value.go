// Package lua is a Lua 5.1 interpreter written for Revolver's scripting:
// the language, its standard libraries (base, string, table, math,
// coroutine) and the details scripts can observe in Redis's Lua, matched
// exactly: Lua 5.1's table layout (so pairs and next walk keys in Redis's
// order), its error messages (with the variable names Lua derives from
// the code), its number formatting and conversions, and Redis's read-only
// tables. Chunks compile to a tree of Go closures rather than to Lua's
// bytecode; nothing else about that is visible to a script.
package lua

import (
	"math"
	"unsafe"
)

// Type is a Lua type.
type Type uint8

// Lua's types, in the order of lua.h's LUA_T* constants.
const (
	TypeNil Type = iota
	TypeBoolean
	TypeLightUserdata
	TypeNumber
	TypeString
	TypeTable
	TypeFunction
	TypeUserdata
	TypeThread
	typeCell // a captured local's box: never a script's value
)

var typeNames = [...]string{"nil", "boolean", "userdata", "number", "string", "table", "function",
	"userdata", "thread", "cell"}

// String is the type's name as type() gives it.
func (t Type) String() string { return typeNames[t] }

// Value is a Lua value in two words, without allocation for numbers,
// booleans and strings. p is nil for nil; for numbers and booleans it is
// the address of a tag and n holds the bits; for the other types p is the
// object (a string's bytes, a *Table, ...) and n holds the type in its top
// byte and, for a string, its length below.
type Value struct {
	p unsafe.Pointer
	n uint64
}

var (
	numberTag, boolTag, emptyString byte
	numberTagP                      = unsafe.Pointer(&numberTag)
	boolTagP                        = unsafe.Pointer(&boolTag)
	emptyStringP                    = unsafe.Pointer(&emptyString)
)

const (
	typeShift = 56
	lenMask   = 1<<typeShift - 1
)

// Nil is Lua's nil.
var Nil Value

// True and False are Lua's booleans.
var (
	True  = Value{boolTagP, 1}
	False = Value{boolTagP, 0}
)

// Number makes a number.
func Number(f float64) Value { return Value{numberTagP, math.Float64bits(f)} }

// Bool makes a boolean.
func Bool(b bool) Value {
	if b {
		return True
	}
	return False
}

// String makes a string. The Value shares s's bytes.
func String(s string) Value {
	if len(s) == 0 {
		return Value{emptyStringP, uint64(TypeString) << typeShift}
	}
	return Value{unsafe.Pointer(unsafe.StringData(s)), uint64(TypeString)<<typeShift | uint64(len(s))}
}

// TableValue makes a value of t.
func TableValue(t *Table) Value {
	if t == nil {
		return Nil
	}
	return Value{unsafe.Pointer(t), uint64(TypeTable) << typeShift}
}

// FunctionValue makes a value of f.
func FunctionValue(f *Function) Value {
	if f == nil {
		return Nil
	}
	return Value{unsafe.Pointer(f), uint64(TypeFunction) << typeShift}
}

// UserdataValue makes a value of u: a full userdata, or a light one (no
// metatable of its own, as cjson.null).
func UserdataValue(u *Userdata) Value {
	if u == nil {
		return Nil
	}
	t := TypeUserdata
	if u.Light {
		t = TypeLightUserdata
	}
	return Value{unsafe.Pointer(u), uint64(t) << typeShift}
}

func threadValue(L *State) Value { return Value{unsafe.Pointer(L), uint64(TypeThread) << typeShift} }

func cellValue(c *cell) Value { return Value{unsafe.Pointer(c), uint64(typeCell) << typeShift} }

// Type is v's type.
func (v Value) Type() Type {
	switch v.p {
	case nil:
		return TypeNil
	case numberTagP:
		return TypeNumber
	case boolTagP:
		return TypeBoolean
	}
	return Type(v.n >> typeShift)
}

// TypeName is the name of v's type.
func (v Value) TypeName() string { return typeNames[v.Type()] }

// IsNil reports whether v is nil.
func (v Value) IsNil() bool { return v.p == nil }

// IsNumber reports whether v is a number (not a string that converts).
func (v Value) IsNumber() bool { return v.p == numberTagP }

// IsString reports whether v is a string.
func (v Value) IsString() bool {
	return v.p != nil && v.p != numberTagP && v.p != boolTagP && v.n>>typeShift == uint64(TypeString)
}

// Truthy is Lua's truth: all but nil and false.
func (v Value) Truthy() bool { return v.p != nil && (v.p != boolTagP || v.n != 0) }

// AsNumber returns v's number, if v is one.
func (v Value) AsNumber() (float64, bool) {
	if v.p != numberTagP {
		return 0, false
	}
	return math.Float64frombits(v.n), true
}

// num is v's number; v must be one.
func (v Value) num() float64 { return math.Float64frombits(v.n) }

// AsString returns v's string, if v is one.
func (v Value) AsString() (string, bool) {
	if !v.IsString() {
		return "", false
	}
	return v.str(), true
}

// str is v's string; v must be one.
func (v Value) str() string {
	n := v.n & lenMask
	if n == 0 {
		return ""
	}
	return unsafe.String((*byte)(v.p), int(n))
}

// AsBool returns v's boolean, if v is one.
func (v Value) AsBool() (bool, bool) {
	if v.p != boolTagP {
		return false, false
	}
	return v.n != 0, true
}

// AsTable returns v's table, or nil.
func (v Value) AsTable() *Table {
	if v.p == nil || v.p == numberTagP || v.p == boolTagP || v.n>>typeShift != uint64(TypeTable) {
		return nil
	}
	return (*Table)(v.p)
}

// AsFunction returns v's function, or nil.
func (v Value) AsFunction() *Function {
	if v.p == nil || v.p == numberTagP || v.p == boolTagP || v.n>>typeShift != uint64(TypeFunction) {
		return nil
	}
	return (*Function)(v.p)
}

// AsUserdata returns v's userdata (full or light), or nil.
func (v Value) AsUserdata() *Userdata {
	if v.p == nil || v.p == numberTagP || v.p == boolTagP {
		return nil
	}
	if t := Type(v.n >> typeShift); t != TypeUserdata && t != TypeLightUserdata {
		return nil
	}
	return (*Userdata)(v.p)
}

// asThread returns v's thread, or nil.
func (v Value) asThread() *State {
	if v.Type() != TypeThread {
		return nil
	}
	return (*State)(v.p)
}

func (v Value) asCell() *cell { return (*cell)(v.p) }

// RawEqual is Lua's rawequal: same type and value, strings by content,
// objects by identity.
func RawEqual(a, b Value) bool {
	if a.p == numberTagP {
		return b.p == numberTagP && a.num() == b.num()
	}
	if a == b {
		return true
	}
	if a.p == nil || b.p == nil || a.p == boolTagP || b.p == boolTagP || b.p == numberTagP {
		return false
	}
	ta := a.n >> typeShift
	if ta != b.n>>typeShift || ta != uint64(TypeString) {
		return false
	}
	return a.str() == b.str()
}

// ToNumber converts v as Lua's arithmetic does: a number, or a string
// holding one (lua_tonumber).
func (v Value) ToNumber() (float64, bool) {
	if v.p == numberTagP {
		return v.num(), true
	}
	if v.IsString() {
		return StringToNumber(v.str())
	}
	return 0, false
}

// ToString converts v as Lua's concatenation does: a string, or a number
// written with "%.14g" (lua_tolstring).
func (v Value) ToString() (string, bool) {
	if v.p == numberTagP {
		return NumberToString(v.num()), true
	}
	if v.IsString() {
		return v.str(), true
	}
	return "", false
}

// cell is a local variable that a closure captured: every function that
// sees it shares the box.
type cell struct{ v Value }

// Userdata is a Go value a script can hold. A light userdata (Light) has
// no metatable of its own, as a C pointer in Lua.
type Userdata struct {
	Value any
	Light bool
	meta  *Table
}

// Metatable is u's metatable, or nil.
func (u *Userdata) Metatable() *Table { return u.meta }

// SetMetatable sets u's metatable (nil removes it).
func (u *Userdata) SetMetatable(t *Table) { u.meta = t }
