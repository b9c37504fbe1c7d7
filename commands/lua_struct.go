package commands

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library as Redis 7.0 ships it (Roberto Ierusalimschy's
// struct 1.7, with Redis's offset check in unpack): pack, unpack and size
// binary records described by a format string. Sizes and alignment are
// those of x86-64 Linux: short 2, int 4, long and size_t 8, float 4,
// double 8, native little-endian, maximum alignment 8.

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
	structIntSize    = 4
)

type structHeader struct {
	little bool
	align  int
}

func openStruct(L *lua.LState) {
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"pack":   structPack,
		"unpack": structUnpack,
		"size":   structSize,
	})
	L.SetGlobal("struct", t)
}

// structFormat is argument 1 as the C library sees it: a C string, so it
// ends at the first NUL.
func structFormat(L *lua.LState) string {
	f := luaCheckLString(L, 1)
	if i := strings.IndexByte(f, 0); i >= 0 {
		f = f[:i]
	}
	return f
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// structGetNum reads an optional decimal count at fmt[*i:], df without one.
func structGetNum(L *lua.LState, fmt string, i *int, df int) int {
	if *i >= len(fmt) || !isDigit(fmt[*i]) {
		return df
	}
	a := 0
	for *i < len(fmt) && isDigit(fmt[*i]) {
		d := int(fmt[*i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			luaRaise(L, "integral size overflow")
		}
		a = a*10 + d
		*i++
	}
	return a
}

// structOptSize is the size of option opt, reading its count if it has
// one; options that need no alignment are 0.
func structOptSize(L *lua.LState, opt byte, fmt string, i *int) uint64 {
	switch opt {
	case 'B', 'b':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'x':
		return 1
	case 'c':
		return uint64(structGetNum(L, fmt, i, 1))
	case 'i', 'I':
		sz := structGetNum(L, fmt, i, structIntSize)
		if sz > structMaxIntSize {
			luaRaise(L, "integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return uint64(sz)
	}
	return 0
}

// structToAlign is the padding before an item of size at position pos;
// sizes that are not powers of two are masked all the same, as in C.
func structToAlign(pos uint64, h *structHeader, opt byte, size uint64) uint64 {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > uint64(h.align) {
		size = uint64(h.align)
	}
	return (size - (pos & (size - 1))) & (size - 1)
}

func structControl(L *lua.LState, opt byte, fmt string, i *int, h *structHeader) {
	switch opt {
	case ' ':
	case '>':
		h.little = false
	case '<':
		h.little = true
	case '!':
		a := structGetNum(L, fmt, i, structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			luaRaise(L, "alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		luaArgError(L, 1, "invalid format option '"+string([]byte{opt})+"'")
	}
}

func structPack(L *lua.LState) int {
	fmt := structFormat(L)
	// C pushes a nil mark after the arguments: a missing one is "nil".
	L.Push(lua.LNil)
	h := structHeader{little: true, align: 1}
	arg := 2
	var total uint64
	var b []byte
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := structOptSize(L, opt, fmt, &i)
		pad := structToAlign(total, &h, opt, size)
		total += pad
		for ; pad > 0; pad-- {
			b = append(b, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			b = structPutInteger(b, luaCheckNumber(L, arg), h.little, int(size))
			arg++
		case 'x':
			b = append(b, 0)
		case 'f':
			u := math.Float32bits(float32(luaCheckNumber(L, arg)))
			arg++
			if h.little {
				b = binary.LittleEndian.AppendUint32(b, u)
			} else {
				b = binary.BigEndian.AppendUint32(b, u)
			}
		case 'd':
			u := math.Float64bits(luaCheckNumber(L, arg))
			arg++
			if h.little {
				b = binary.LittleEndian.AppendUint64(b, u)
			} else {
				b = binary.BigEndian.AppendUint64(b, u)
			}
		case 'c', 's':
			s := luaCheckLString(L, arg)
			arg++
			if size == 0 {
				size = uint64(len(s))
			}
			if uint64(len(s)) < size {
				// The C code names the argument after the string.
				luaArgError(L, arg, "string too short")
			}
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
				size++
			}
		default:
			structControl(L, opt, fmt, &i, &h)
		}
		total += size
	}
	L.Push(lua.LString(b))
	return 1
}

// structPutInteger writes n in size bytes: negatives through a signed
// cast, the rest through an unsigned one; bytes past the eighth are 0.
func structPutInteger(b []byte, n float64, little bool, size int) []byte {
	var v uint64
	if n < 0 {
		v = uint64(cTruncInt64(n))
	} else {
		v = cDoubleToUint64(n)
	}
	var buf [structMaxIntSize]byte
	for k := 0; k < size; k++ {
		idx := size - 1 - k
		if little {
			idx = k
		}
		buf[idx] = byte(v)
		v >>= 8
	}
	return append(b, buf[:size]...)
}

// structGetInteger reads size bytes into a 64-bit accumulator (longer
// sizes keep the last eight bytes shifted in) and sign-extends with the
// mask C computes, whose shift count x86-64 takes modulo 64.
func structGetInteger(data string, little, signed bool, size int) float64 {
	var l uint64
	for k := 0; k < size; k++ {
		idx := k
		if little {
			idx = size - 1 - k
		}
		l = l<<8 | uint64(data[idx])
	}
	if !signed {
		return float64(l)
	}
	mask := ^uint64(0) << (uint(size*8-1) & 63)
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

func structUnpack(L *lua.LState) int {
	fmt := structFormat(L)
	data := luaCheckLString(L, 2)
	ld := uint64(len(data))
	// size_t in C: a negative offset wraps and fails the length check.
	pos := uint64(luaOptInteger(L, 3, 1))
	if pos == 0 {
		luaArgError(L, 3, "offset must be 1 or greater")
	}
	pos--
	nargs := L.GetTop()
	h := structHeader{little: true, align: 1}
	var out []lua.LValue
	tooShort := func(size uint64) {
		if !(size <= ld && pos <= ld-size) {
			luaArgError(L, 2, "data string too short")
		}
	}
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := structOptSize(L, opt, fmt, &i)
		pos += structToAlign(pos, &h, opt, size)
		tooShort(size)
		if nargs+len(out)+2 > luaMaxCStack {
			luaRaise(L, "stack overflow (too many results)")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := opt >= 'a' && opt <= 'z'
			out = append(out, lua.LNumber(structGetInteger(data[pos:], h.little, signed, int(size))))
		case 'x':
		case 'f':
			var u uint32
			if h.little {
				u = binary.LittleEndian.Uint32([]byte(data[pos : pos+4]))
			} else {
				u = binary.BigEndian.Uint32([]byte(data[pos : pos+4]))
			}
			out = append(out, lua.LNumber(math.Float32frombits(u)))
		case 'd':
			var u uint64
			if h.little {
				u = binary.LittleEndian.Uint64([]byte(data[pos : pos+8]))
			} else {
				u = binary.BigEndian.Uint64([]byte(data[pos : pos+8]))
			}
			out = append(out, lua.LNumber(math.Float64frombits(u)))
		case 'c':
			if size == 0 {
				// c0 takes its length from the previous result.
				var f float64
				ok := len(out) > 0
				if ok {
					f, ok = luaToNumber(out[len(out)-1])
				}
				if !ok {
					luaRaise(L, "format 'c0' needs a previous size")
				}
				size = cDoubleToUint64(f)
				out = out[:len(out)-1]
				tooShort(size)
			}
			out = append(out, lua.LString(data[pos:pos+size]))
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				luaRaise(L, "unfinished string in data")
			}
			size = uint64(e) + 1
			out = append(out, lua.LString(data[pos:pos+uint64(e)]))
		default:
			structControl(L, opt, fmt, &i, &h)
		}
		pos += size
	}
	for _, v := range out {
		L.Push(v)
	}
	L.Push(lua.LNumber(int64(pos + 1)))
	return len(out) + 1
}

func structSize(L *lua.LState) int {
	fmt := structFormat(L)
	h := structHeader{little: true, align: 1}
	var pos uint64
	for i := 0; i < len(fmt); {
		opt := fmt[i]
		i++
		size := structOptSize(L, opt, fmt, &i)
		pos += structToAlign(pos, &h, opt, size)
		if opt == 's' {
			luaArgError(L, 1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			luaArgError(L, 1, "option 'c0' has no fixed size")
		}
		// Letters and digits that are no option are skipped here.
		if !isDigit(opt) && !(opt >= 'a' && opt <= 'z') && !(opt >= 'A' && opt <= 'Z') {
			structControl(L, opt, fmt, &i, &h)
		}
		pos += size
	}
	L.Push(lua.LNumber(int64(pos)))
	return 1
}
