package commands

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The cmsgpack library as Redis 7.0 ships it (lua-cmsgpack 0.4.0, built
// against Lua 5.1 on a 64-bit host): pack any number of values into one
// MessagePack stream, unpack a whole stream, or a bounded number of values
// from a byte offset.

// mpMaxNesting is the depth at which a table is packed as nil, so that
// circular references terminate.
const mpMaxNesting = 16

// luaMaxCStack is Lua 5.1's LUAI_MAXCSTACK: the stack slots a C function
// may use. Redis's C libraries fail with "stack overflow (...)" past it.
const luaMaxCStack = 8000

func openCMsgpack(L *lua.LState) {
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"pack":   mpPack,
		"unpack": func(L *lua.LState) int { return mpUnpackFull(L, 0, 0, L.GetTop()) },
		"unpack_one": func(L *lua.LState) int {
			offset := luaOptInteger(L, 2, 0)
			return mpUnpackFull(L, 1, offset, 1)
		},
		"unpack_limit": func(L *lua.LState) int {
			limit := luaCheckInteger(L, 2)
			offset := luaOptInteger(L, 3, 0)
			return mpUnpackFull(L, limit, offset, 1)
		},
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	L.SetGlobal("cmsgpack", t)
}

// ---- Encoding ----

func mpPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		luaArgError(L, 0, "MessagePack pack needs input.")
	}
	var buf []byte
	for i := 1; i <= n; i++ {
		buf = mpEncode(buf, L.Get(i), 0)
	}
	L.Push(lua.LString(buf))
	return 1
}

func mpEncode(buf []byte, v lua.LValue, level int) []byte {
	switch x := v.(type) {
	case lua.LString:
		return mpEncodeBytes(buf, string(x))
	case lua.LBool:
		if x {
			return append(buf, 0xc3)
		}
		return append(buf, 0xc2)
	case lua.LNumber:
		f := float64(x)
		// Lua 5.1 has only doubles: those that survive a round trip
		// through int64 are written as integers.
		if !math.IsInf(f, 0) && float64(cTruncInt64(f)) == f {
			return mpEncodeInt(buf, cTruncInt64(f))
		}
		return mpEncodeDouble(buf, f)
	case *lua.LTable:
		if level == mpMaxNesting {
			return append(buf, 0xc0)
		}
		return mpEncodeTable(buf, x, level)
	}
	return append(buf, 0xc0)
}

func mpEncodeBytes(buf []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		buf = append(buf, 0xa0|byte(n))
	case n <= 0xff:
		buf = append(buf, 0xd9, byte(n))
	case n <= 0xffff:
		buf = append(buf, 0xda, byte(n>>8), byte(n))
	default:
		buf = append(buf, 0xdb)
		buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	}
	return append(buf, s...)
}

func mpEncodeDouble(buf []byte, d float64) []byte {
	if f := float32(d); float64(f) == d {
		buf = append(buf, 0xca)
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(f))
	}
	buf = append(buf, 0xcb)
	return binary.BigEndian.AppendUint64(buf, math.Float64bits(d))
}

func mpEncodeInt(buf []byte, n int64) []byte {
	u := uint64(n)
	if n >= 0 {
		switch {
		case n <= 127:
			return append(buf, byte(n))
		case n <= 0xff:
			return append(buf, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(buf, 0xcd), uint16(u))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(buf, 0xce), uint32(u))
		}
		return binary.BigEndian.AppendUint64(append(buf, 0xcf), u)
	}
	switch {
	case n >= -32:
		return append(buf, byte(n))
	case n >= -128:
		return append(buf, 0xd0, byte(n))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(buf, 0xd1), uint16(u))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(buf, 0xd2), uint32(u))
	}
	return binary.BigEndian.AppendUint64(append(buf, 0xd3), u)
}

// mpEncodeTable writes t as an array when its keys are exactly 1..n, as a
// map otherwise (an empty table is an empty array).
func mpEncodeTable(buf []byte, t *lua.LTable, level int) []byte {
	count, max, array := 0, 0, true
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		// lua_Number keys must be positive and equal to their C int cast.
		if !ok || n <= 0 || float64(cTruncInt32(float64(n))) != float64(n) {
			array = false
			break
		}
		if int(n) > max {
			max = int(n)
		}
		count++
	}
	if array && max == count {
		buf = mpEncodeHeader(buf, 0x90, 0xdc, count)
		for j := 1; j <= count; j++ {
			buf = mpEncode(buf, t.RawGetInt(j), level+1)
		}
		return buf
	}
	keys, vals := luaNextOrder(t) // Lua 5.1's order, as Redis writes maps
	buf = mpEncodeHeader(buf, 0x80, 0xde, len(keys))
	for i, k := range keys {
		buf = mpEncode(buf, k, level+1)
		buf = mpEncode(buf, vals[i], level+1)
	}
	return buf
}

// mpEncodeHeader writes an array or map header: fix (n <= 15), 16 or 32
// bit count; the 32 bit code follows the 16 bit one.
func mpEncodeHeader(buf []byte, fix, code16 byte, n int) []byte {
	switch {
	case n <= 15:
		return append(buf, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(buf, code16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(buf, code16+1), uint32(n))
}

// ---- Decoding ----

const (
	mpErrEOF = 1 + iota
	mpErrBadFormat
)

// mpDecoder reads values from s at pos. stack counts the Lua stack slots
// the C decoder would hold, to fail where it fails on deep or long input.
type mpDecoder struct {
	L     *lua.LState
	s     string
	pos   int
	err   int
	stack int
}

func (d *mpDecoder) need(n int) bool {
	if len(d.s)-d.pos < n {
		d.err = mpErrEOF
		return false
	}
	return true
}

func (d *mpDecoder) checkStack(msg string) {
	if d.stack+1 > luaMaxCStack {
		luaRaise(d.L, "stack overflow (%s)", msg)
	}
}

// uint reads an n-byte big-endian count after the type byte.
func (d *mpDecoder) uint(n int) uint64 {
	var u uint64
	for _, c := range []byte(d.s[d.pos+1 : d.pos+1+n]) {
		u = u<<8 | uint64(c)
	}
	return u
}

// str reads a string whose length takes hdr bytes after the type byte.
func (d *mpDecoder) str(hdr int) lua.LValue {
	if !d.need(1 + hdr) {
		return lua.LNil
	}
	return d.strBody(1+hdr, d.uint(hdr))
}

// strBody reads l bytes of string starting skip bytes past pos.
func (d *mpDecoder) strBody(skip int, l uint64) lua.LValue {
	if uint64(len(d.s)-d.pos-skip) < l {
		d.err = mpErrEOF
		return lua.LNil
	}
	start := d.pos + skip
	d.pos = start + int(l)
	return lua.LString(d.s[start:d.pos])
}

// number reads a fixed-size number (n bytes after the type byte).
func (d *mpDecoder) number(n int, conv func(uint64) float64) lua.LValue {
	if !d.need(1 + n) {
		return lua.LNil
	}
	v := conv(d.uint(n))
	d.pos += 1 + n
	return lua.LNumber(v)
}

// collection reads the count (hdr bytes) of an array or map.
func (d *mpDecoder) collection(hdr int, isMap bool) lua.LValue {
	if !d.need(1 + hdr) {
		return lua.LNil
	}
	n := d.uint(hdr)
	d.pos += 1 + hdr
	return d.elements(n, isMap)
}

func (d *mpDecoder) elements(n uint64, isMap bool) lua.LValue {
	if isMap {
		return d.hash(n)
	}
	return d.array(n)
}

// value decodes one value; on success it takes one more stack slot.
func (d *mpDecoder) value() lua.LValue {
	if !d.need(1) {
		return lua.LNil
	}
	d.checkStack("too many return values at once; use unpack_one or unpack_limit instead.")
	v := d.decode()
	d.stack++
	return v
}

func (d *mpDecoder) decode() lua.LValue {
	c := d.s[d.pos]
	switch c {
	case 0xcc:
		return d.number(1, func(u uint64) float64 { return float64(u) })
	case 0xd0:
		return d.number(1, func(u uint64) float64 { return float64(int8(u)) })
	case 0xcd:
		return d.number(2, func(u uint64) float64 { return float64(u) })
	case 0xd1:
		return d.number(2, func(u uint64) float64 { return float64(int16(u)) })
	case 0xce:
		return d.number(4, func(u uint64) float64 { return float64(u) })
	case 0xd2:
		return d.number(4, func(u uint64) float64 { return float64(int32(u)) })
	case 0xcf, 0xd3:
		// uint 64 goes through lua_pushinteger too: past 2^63 it wraps.
		return d.number(8, func(u uint64) float64 { return float64(int64(u)) })
	case 0xc0:
		d.pos++
		return lua.LNil
	case 0xc3:
		d.pos++
		return lua.LTrue
	case 0xc2:
		d.pos++
		return lua.LFalse
	case 0xca:
		return d.number(4, func(u uint64) float64 { return float64(math.Float32frombits(uint32(u))) })
	case 0xcb:
		return d.number(8, math.Float64frombits)
	case 0xd9:
		return d.str(1)
	case 0xda:
		return d.str(2)
	case 0xdb:
		return d.str(4)
	case 0xdc:
		return d.collection(2, false)
	case 0xdd:
		return d.collection(4, false)
	case 0xde:
		return d.collection(2, true)
	case 0xdf:
		return d.collection(4, true)
	}
	switch {
	case c&0x80 == 0:
		d.pos++
		return lua.LNumber(c)
	case c&0xe0 == 0xe0:
		d.pos++
		return lua.LNumber(int8(c))
	case c&0xe0 == 0xa0:
		return d.strBody(1, uint64(c&0x1f))
	case c&0xf0 == 0x90, c&0xf0 == 0x80:
		d.pos++
		return d.elements(uint64(c&0x0f), c&0xf0 == 0x80)
	}
	d.err = mpErrBadFormat
	return lua.LNil
}

func (d *mpDecoder) array(n uint64) lua.LValue {
	t := d.L.CreateTable(int(min(n, uint64(len(d.s)-d.pos))), 0)
	d.stack++ // the table
	d.checkStack("in function mp_decode_to_lua_array")
	for i := uint64(1); i <= n; i++ {
		d.stack++ // the index
		v := d.value()
		if d.err != 0 {
			return lua.LNil
		}
		t.RawSetInt(int(i), v)
		d.stack -= 2
	}
	d.stack--
	return t
}

func (d *mpDecoder) hash(n uint64) lua.LValue {
	t := d.L.NewTable()
	d.stack++
	for ; n > 0; n-- {
		k := d.value()
		if d.err != 0 {
			return lua.LNil
		}
		v := d.value()
		if d.err != 0 {
			return lua.LNil
		}
		// lua_settable's own errors, raised without a position.
		if k == lua.LNil {
			d.L.Error(lua.LString("table index is nil"), 0)
		}
		if f, ok := k.(lua.LNumber); ok && math.IsNaN(float64(f)) {
			d.L.Error(lua.LString("table index is NaN"), 0)
		}
		t.RawSet(k, v)
		d.stack -= 2
	}
	d.stack--
	return t
}

// mpUnpackFull decodes up to limit values from offset (all of them when
// both are 0). Bounded calls return the next offset first (-1 at the end).
// stack is how many arguments the C function left on its stack.
func mpUnpackFull(L *lua.LState, limit, offset int64, stack int) int {
	s := luaCheckLString(L, 1)
	decodeAll := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		// Redis prints the input length where it says limit.
		luaRaise(L, "Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(s)))
	} else if offset > int64(len(s)) {
		luaRaise(L, "Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	d := &mpDecoder{L: L, s: s, pos: int(offset), stack: stack}
	var out []lua.LValue
	for cnt := int64(0); d.pos < len(s) && cnt < limit; cnt++ {
		v := d.value()
		switch d.err {
		case mpErrEOF:
			luaRaise(L, "Missing bytes in input.")
		case mpErrBadFormat:
			luaRaise(L, "Bad data format in input.")
		}
		out = append(out, v)
	}
	if !decodeAll {
		d.checkStack("in function mp_unpack_full")
		next := lua.LNumber(-1)
		if d.pos < len(s) {
			next = lua.LNumber(d.pos)
		}
		L.Push(next)
	}
	for _, v := range out {
		L.Push(v)
	}
	if decodeAll {
		return len(out)
	}
	return len(out) + 1
}

// ---- Lua 5.1 auxiliary-library behaviour shared by cmsgpack and struct ----

// luaArgError is luaL_argerror: "bad argument #n to 'name' (msg)", the
// name being the one the caller used (Lua 5.1 writes '?' when unknown).
func luaArgError(L *lua.LState, n int, msg string) {
	name := "?"
	if dbg, ok := L.GetStack(0); ok {
		if _, err := L.GetInfo("n", dbg, lua.LNil); err == nil && dbg.Name != "" &&
			dbg.Name != "(anonymous)" && !strings.HasPrefix(dbg.Name, "<") {
			name = dbg.Name
		}
	}
	luaRaise(L, "bad argument #%d to '%s' (%s)", n, name, msg)
}

// luaRaise is luaL_error: the message after the position of the caller
// when that is Lua code (none when called from pcall and the like).
func luaRaise(L *lua.LState, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.What != "G" && dbg.CurrentLine > 0 {
			msg = fmt.Sprintf("%s:%d: %s", strings.TrimPrefix(dbg.Source, "@"), dbg.CurrentLine, msg)
		}
	}
	L.Error(lua.LString(msg), 0)
}

// luaTypeError is luaL_typerror; a missing argument is "no value".
func luaTypeError(L *lua.LState, n int, want string) {
	got := "no value"
	if n <= L.GetTop() {
		got = L.Get(n).Type().String()
	}
	luaArgError(L, n, want+" expected, got "+got)
}

// luaCheckLString is luaL_checklstring: numbers become strings as Lua 5.1
// writes them ("%.14g").
func luaCheckLString(L *lua.LState, n int) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return luaNumberString(float64(v))
	}
	luaTypeError(L, n, "string")
	return ""
}

// luaToNumber is lua_tonumber's conversion: numbers, and strings that
// strtod reads whole (a C string, so up to a NUL; spaces around allowed;
// hexadecimal too).
func luaToNumber(v lua.LValue) (float64, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		s := string(x)
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		s = strings.Trim(s, " \t\n\v\f\r")
		if s == "" || strings.Contains(s, "_") {
			return 0, false
		}
		body := strings.TrimLeft(s, "+-")
		if len(body) < len(s)-1 {
			return 0, false
		}
		if strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X") {
			if !strings.ContainsAny(body, "pP") {
				s += "p0" // strtod does not need the binary exponent
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			if e, ok := err.(*strconv.NumError); !ok || e.Err != strconv.ErrRange {
				return 0, false
			}
		}
		return f, true
	}
	return 0, false
}

func luaCheckNumber(L *lua.LState, n int) float64 {
	f, ok := luaToNumber(L.Get(n))
	if !ok {
		luaTypeError(L, n, "number")
	}
	return f
}

// luaCheckInteger is luaL_checkinteger: the number truncated as x86-64's
// C cast does.
func luaCheckInteger(L *lua.LState, n int) int64 {
	return cTruncInt64(luaCheckNumber(L, n))
}

func luaOptInteger(L *lua.LState, n int, def int64) int64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return luaCheckInteger(L, n)
}

// cTruncInt64 is a C cast of a double to int64 on x86-64: NaN and values
// out of range become the "integer indefinite" INT64_MIN.
func cTruncInt64(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// cTruncInt32 is the same for a C int.
func cTruncInt32(f float64) int32 {
	if math.IsNaN(f) || f >= 2147483648.0 || f <= -2147483649.0 {
		return math.MinInt32
	}
	return int32(f)
}

// cDoubleToUint64 is the cast to an unsigned 64-bit integer as GCC emits
// it for x86-64: values from 2^63 are shifted into signed range first.
func cDoubleToUint64(f float64) uint64 {
	if f >= 9223372036854775808.0 {
		return uint64(cTruncInt64(f-9223372036854775808.0)) ^ (1 << 63)
	}
	return uint64(cTruncInt64(f))
}
