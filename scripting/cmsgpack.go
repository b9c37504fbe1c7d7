package scripting

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/revolver-db/revolver/lua"
)

// The cmsgpack library as Redis 7.0 ships it (lua-cmsgpack 0.4.0, built
// against Lua 5.1 on a 64-bit host): pack any number of values into one
// MessagePack stream, unpack a whole stream, or a bounded number of values
// from a byte offset. Tables nested deeper than 16 pack as nil (so cycles
// end); functions and userdata pack as nil too.

// mpMaxNesting is the depth at which a table packs as nil.
const mpMaxNesting = 16

// OpenCMsgpack makes the global cmsgpack.
func OpenCMsgpack(L *lua.State) {
	t := newModule([]lua.LibFunc{
		{Name: "pack", Fn: mpPack},
		{Name: "unpack", Fn: mpUnpack},
		{Name: "unpack_one", Fn: mpUnpackOne},
		{Name: "unpack_limit", Fn: mpUnpackLimit},
	})
	t.SetStr("_NAME", lua.String("cmsgpack"))
	t.SetStr("_VERSION", lua.String("lua-cmsgpack 0.4.0"))
	t.SetStr("_COPYRIGHT", lua.String("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.SetStr("_DESCRIPTION", lua.String("MessagePack C implementation for Lua"))
	L.Globals().SetStr("cmsgpack", lua.TableValue(t))
}

// ---- Encoding ----

// mpEncoder packs values. top counts the values lua-cmsgpack would hold
// on the C stack: a call with thousands of arguments runs out of room.
type mpEncoder struct {
	L   *lua.State
	buf []byte
	top int
}

func mpPack(L *lua.State) int {
	nargs := L.Top()
	if nargs == 0 {
		L.ArgError(0, "MessagePack pack needs input.")
	}
	if !stackRoom(nargs, nargs) {
		L.ArgError(0, "Too many arguments for MessagePack pack.")
	}
	e := &mpEncoder{L: L, top: nargs}
	for i := 1; i <= nargs; i++ {
		checkStack(L, e.top, 1, "in function mp_check")
		e.top++
		e.value(L.Get(i), 0)
		e.top++ // the packed string, concatenated with the others at the end
	}
	L.Push(lua.String(string(e.buf)))
	return 1
}

// value packs v, which the caller counted on the stack.
func (e *mpEncoder) value(v lua.Value, level int) {
	switch v.Type() {
	case lua.TypeString:
		s, _ := v.AsString()
		e.bytes(s)
	case lua.TypeBoolean:
		if v.Truthy() {
			e.buf = append(e.buf, 0xc3)
		} else {
			e.buf = append(e.buf, 0xc2)
		}
	case lua.TypeNumber:
		f, _ := v.AsNumber()
		// Lua 5.1 has only doubles: those that survive a round trip
		// through int64 are written as integers.
		if n := cInt64(f); !math.IsInf(f, 0) && float64(n) == f {
			e.integer(n)
		} else {
			e.double(f)
		}
	case lua.TypeTable:
		if level == mpMaxNesting {
			e.buf = append(e.buf, 0xc0)
		} else {
			e.table(v.AsTable(), level)
		}
	default:
		e.buf = append(e.buf, 0xc0)
	}
	e.top--
}

func (e *mpEncoder) bytes(s string) {
	n := len(s)
	switch {
	case n < 32:
		e.buf = append(e.buf, 0xa0|byte(n))
	case n <= 0xff:
		e.buf = append(e.buf, 0xd9, byte(n))
	case n <= 0xffff:
		e.buf = binary.BigEndian.AppendUint16(append(e.buf, 0xda), uint16(n))
	default:
		e.buf = binary.BigEndian.AppendUint32(append(e.buf, 0xdb), uint32(n))
	}
	e.buf = append(e.buf, s...)
}

// double writes d as a float when that loses nothing.
func (e *mpEncoder) double(d float64) {
	if f := float32(d); float64(f) == d {
		e.buf = binary.BigEndian.AppendUint32(append(e.buf, 0xca), math.Float32bits(f))
		return
	}
	e.buf = binary.BigEndian.AppendUint64(append(e.buf, 0xcb), math.Float64bits(d))
}

func (e *mpEncoder) integer(n int64) {
	b, u := e.buf, uint64(n)
	switch {
	case n >= 0 && n <= 127, n < 0 && n >= -32:
		b = append(b, byte(n))
	case n >= 0 && n <= 0xff:
		b = append(b, 0xcc, byte(n))
	case n >= 0 && n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(u))
	case n >= 0 && n <= 0xffffffff:
		b = binary.BigEndian.AppendUint32(append(b, 0xce), uint32(u))
	case n >= 0:
		b = binary.BigEndian.AppendUint64(append(b, 0xcf), u)
	case n >= -128:
		b = append(b, 0xd0, byte(n))
	case n >= -32768:
		b = binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(u))
	case n >= -2147483648:
		b = binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(u))
	default:
		b = binary.BigEndian.AppendUint64(append(b, 0xd3), u)
	}
	e.buf = b
}

// table packs t as an array when its keys are exactly 1..n (an empty
// table too), as a map otherwise, in next's order.
func (e *mpEncoder) table(t *lua.Table, level int) {
	checkStack(e.L, e.top, 2, "in function table_is_an_array")
	if isArray(t) {
		n := t.Len()
		e.header(0x90, 0xdc, n)
		checkStack(e.L, e.top, 1, "in function mp_encode_lua_table_as_array")
		for j := 1; j <= n; j++ {
			e.top++
			e.value(t.GetInt(j), level+1)
		}
		return
	}
	checkStack(e.L, e.top, 3, "in function mp_encode_lua_table_as_map")
	n := 0
	t.ForEach(func(_, _ lua.Value) { n++ })
	e.header(0x80, 0xde, n)
	e.top++ // lua_next's key
	t.ForEach(func(k, v lua.Value) {
		e.top += 2 // the value, and a copy of the key to pack
		e.value(k, level+1)
		e.value(v, level+1)
	})
	e.top--
}

// isArray reports whether t's keys are exactly 1..n: positive numbers that
// a C int holds exactly, as many as the largest.
func isArray(t *lua.Table) bool {
	var count, max int32
	for k, _, _ := t.Next(lua.Nil); !k.IsNil(); k, _, _ = t.Next(k) {
		f, ok := k.AsNumber()
		if !ok || f <= 0 || math.IsInf(f, 0) || float64(cInt32(f)) != f {
			return false
		}
		max = int32(math.Max(f, float64(max)))
		count++
	}
	return max == count
}

// header writes an array or map count: fix (up to 15), 16 or 32 bits (the
// 32-bit code follows the 16-bit one).
func (e *mpEncoder) header(fix, code16 byte, n int) {
	switch {
	case n <= 15:
		e.buf = append(e.buf, fix|byte(n))
	case n <= 0xffff:
		e.buf = binary.BigEndian.AppendUint16(append(e.buf, code16), uint16(n))
	default:
		e.buf = binary.BigEndian.AppendUint32(append(e.buf, code16+1), uint32(n))
	}
}

// ---- Decoding ----

func mpUnpack(L *lua.State) int { return mpUnpackFull(L, 0, 0, L.Top()) }

func mpUnpackOne(L *lua.State) int {
	offset := L.OptInteger(2, 0)
	return mpUnpackFull(L, 1, int64(offset), 1)
}

func mpUnpackLimit(L *lua.State) int {
	limit := L.CheckInteger(2)
	offset := L.OptInteger(3, 0)
	return mpUnpackFull(L, int64(limit), int64(offset), 1)
}

// mpUnpackFull decodes up to limit values from offset (all of them when
// both are 0); bounded calls return the next offset first (-1 at the
// end). top is how many arguments the C function keeps on its stack.
func mpUnpackFull(L *lua.State, limit, offset int64, top int) int {
	s := L.CheckString(1)
	decodeAll := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		// lua-cmsgpack prints the input's length where it says limit.
		L.Errorf("Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(s)))
	} else if offset > int64(len(s)) {
		L.Errorf("Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	d := &mpDecoder{L: L, s: s, pos: int(offset), top: top}
	var out []lua.Value
	for n := int64(0); d.pos < len(s) && n < limit; n++ {
		v := d.value()
		switch d.err {
		case mpErrEOF:
			L.Errorf("Missing bytes in input.")
		case mpErrBadFormat:
			L.Errorf("Bad data format in input.")
		}
		out = append(out, v)
	}
	if !decodeAll {
		checkStack(L, d.top, 1, "in function mp_unpack_full")
		next := -1
		if d.pos < len(s) {
			next = d.pos
		}
		L.Push(lua.Number(float64(next)))
	}
	for _, v := range out {
		L.Push(v)
	}
	if decodeAll {
		return len(out)
	}
	return len(out) + 1
}

const (
	mpErrEOF = 1 + iota
	mpErrBadFormat
)

// mpDecoder reads values from s at pos. top counts the values the C
// decoder would hold on its stack, to fail where it fails on deep or long
// input.
type mpDecoder struct {
	L   *lua.State
	s   string
	pos int
	err int
	top int
}

func (d *mpDecoder) need(n int) bool {
	if len(d.s)-d.pos < n {
		d.err = mpErrEOF
		return false
	}
	return true
}

// uint reads an n-byte big-endian number after the type byte.
func (d *mpDecoder) uint(n int) uint64 {
	var u uint64
	for i := d.pos + 1; i <= d.pos+n; i++ {
		u = u<<8 | uint64(d.s[i])
	}
	return u
}

// value decodes one value, which then takes a slot on the stack.
func (d *mpDecoder) value() lua.Value {
	if !d.need(1) {
		return lua.Nil
	}
	checkStack(d.L, d.top, 1, "too many return values at once; use unpack_one or unpack_limit instead.")
	v := d.decode()
	d.top++
	return v
}

func (d *mpDecoder) decode() lua.Value {
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
		// uint 64 is pushed as a lua_Integer too: from 2^63 it wraps.
		return d.number(8, func(u uint64) float64 { return float64(int64(u)) })
	case 0xca:
		return d.number(4, func(u uint64) float64 { return float64(math.Float32frombits(uint32(u))) })
	case 0xcb:
		return d.number(8, math.Float64frombits)
	case 0xc0:
		d.pos++
		return lua.Nil
	case 0xc3:
		d.pos++
		return lua.True
	case 0xc2:
		d.pos++
		return lua.False
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
		return lua.Number(float64(c))
	case c&0xe0 == 0xe0:
		d.pos++
		return lua.Number(float64(int8(c)))
	case c&0xe0 == 0xa0:
		return d.strBody(1, uint64(c&0x1f))
	case c&0xf0 == 0x90:
		d.pos++
		return d.array(uint64(c & 0x0f))
	case c&0xf0 == 0x80:
		d.pos++
		return d.hash(uint64(c & 0x0f))
	}
	d.err = mpErrBadFormat
	return lua.Nil
}

// number reads a number of n bytes after the type byte.
func (d *mpDecoder) number(n int, conv func(uint64) float64) lua.Value {
	if !d.need(1 + n) {
		return lua.Nil
	}
	v := conv(d.uint(n))
	d.pos += 1 + n
	return lua.Number(v)
}

// str reads a string whose length takes hdr bytes after the type byte.
func (d *mpDecoder) str(hdr int) lua.Value {
	if !d.need(1 + hdr) {
		return lua.Nil
	}
	return d.strBody(1+hdr, d.uint(hdr))
}

// strBody reads l bytes of string starting skip bytes past pos.
func (d *mpDecoder) strBody(skip int, l uint64) lua.Value {
	if uint64(len(d.s)-d.pos-skip) < l {
		d.err = mpErrEOF
		return lua.Nil
	}
	start := d.pos + skip
	d.pos = start + int(l)
	// A copy, as Lua makes: a small string must not keep the input alive.
	return lua.String(strings.Clone(d.s[start:d.pos]))
}

// collection reads the count (hdr bytes) of an array or a map, then its
// items.
func (d *mpDecoder) collection(hdr int, isMap bool) lua.Value {
	if !d.need(1 + hdr) {
		return lua.Nil
	}
	n := d.uint(hdr)
	d.pos += 1 + hdr
	if isMap {
		return d.hash(n)
	}
	return d.array(n)
}

func (d *mpDecoder) array(n uint64) lua.Value {
	t := lua.NewTable(0, 0)
	d.top++ // the table
	checkStack(d.L, d.top, 1, "in function mp_decode_to_lua_array")
	for i := uint64(1); i <= n; i++ {
		d.top++ // the index
		v := d.value()
		if d.err != 0 {
			return lua.Nil
		}
		t.SetInt(int(i), v)
		d.top -= 2
	}
	d.top--
	return lua.TableValue(t)
}

func (d *mpDecoder) hash(n uint64) lua.Value {
	t := lua.NewTable(0, 0)
	d.top++
	for ; n > 0; n-- {
		k := d.value()
		if d.err != 0 {
			return lua.Nil
		}
		v := d.value()
		if d.err != 0 {
			return lua.Nil
		}
		d.L.RawSet(t, k, v) // lua_settable's errors for a nil or NaN key
		d.top -= 2
	}
	d.top--
	return lua.TableValue(t)
}
