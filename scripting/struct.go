package scripting

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/revolver-db/revolver/lua"
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

// OpenStruct makes the global struct.
func OpenStruct(L *lua.State) {
	L.Register("struct", []lua.LibFunc{
		{Name: "pack", Fn: structPack},
		{Name: "unpack", Fn: structUnpack},
		{Name: "size", Fn: structSize},
	})
}

// structFormat reads a format string: a C string to the library, so it
// ends at its first NUL.
type structFormat struct {
	L      *lua.State
	fmt    string
	i      int
	little bool
	align  int
}

func newStructFormat(L *lua.State) *structFormat {
	f := L.CheckString(1)
	if i := strings.IndexByte(f, 0); i >= 0 {
		f = f[:i]
	}
	return &structFormat{L: L, fmt: f, little: true, align: 1}
}

func (f *structFormat) more() bool { return f.i < len(f.fmt) }

// option reads the next option and its size (0 for the options that need
// no alignment), reading the count that follows c and i.
func (f *structFormat) option() (opt byte, size uint64) {
	opt = f.fmt[f.i]
	f.i++
	switch opt {
	case 'B', 'b', 'x':
		return opt, 1
	case 'H', 'h':
		return opt, 2
	case 'L', 'l', 'T', 'd':
		return opt, 8
	case 'f':
		return opt, 4
	case 'c':
		return opt, uint64(f.number(1))
	case 'i', 'I':
		n := f.number(structIntSize)
		if n > structMaxIntSize {
			f.L.Errorf("integral size %d is larger than limit of %d", n, structMaxIntSize)
		}
		return opt, uint64(n)
	}
	return opt, 0
}

// number reads a decimal count, or returns def if none follows.
func (f *structFormat) number(def int) int {
	if !f.more() || !isDigit(f.fmt[f.i]) {
		return def
	}
	a := 0
	for f.more() && isDigit(f.fmt[f.i]) {
		d := int(f.fmt[f.i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			f.L.Errorf("integral size overflow")
		}
		a = a*10 + d
		f.i++
	}
	return a
}

// padding is what aligns an item of size at pos; sizes that are not powers
// of two are masked all the same, as in C.
func (f *structFormat) padding(pos uint64, opt byte, size uint64) uint64 {
	if size == 0 || opt == 'c' {
		return 0
	}
	size = min(size, uint64(f.align))
	return (size - pos&(size-1)) & (size - 1)
}

// control handles the options that set byte order and alignment, and
// refuses any other.
func (f *structFormat) control(opt byte) {
	switch opt {
	case ' ':
	case '>':
		f.little = false
	case '<':
		f.little = true
	case '!':
		a := f.number(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			f.L.Errorf("alignment %d is not a power of 2", a)
		}
		f.align = a
	default:
		f.L.ArgError(1, "invalid format option '"+string([]byte{opt})+"'")
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z' }

func structPack(L *lua.State) int {
	f := newStructFormat(L)
	// The C code pushes a nil to mark the end of its arguments: a missing
	// one is "got nil", not "got no value".
	L.Push(lua.Nil)
	arg := 2
	var b []byte
	for f.more() {
		opt, size := f.option()
		pad := f.padding(uint64(len(b)), opt, size)
		for ; pad > 0; pad-- {
			b = append(b, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			b = putInteger(b, L.CheckNumber(arg), f.little, int(size))
			arg++
		case 'x':
			b = append(b, 0)
		case 'f':
			u := math.Float32bits(float32(L.CheckNumber(arg)))
			arg++
			if f.little {
				b = binary.LittleEndian.AppendUint32(b, u)
			} else {
				b = binary.BigEndian.AppendUint32(b, u)
			}
		case 'd':
			u := math.Float64bits(L.CheckNumber(arg))
			arg++
			if f.little {
				b = binary.LittleEndian.AppendUint64(b, u)
			} else {
				b = binary.BigEndian.AppendUint64(b, u)
			}
		case 'c', 's':
			s := L.CheckString(arg)
			arg++
			if size == 0 {
				size = uint64(len(s))
			}
			if uint64(len(s)) < size {
				L.ArgError(arg, "string too short") // the C code names the next argument
			}
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		default:
			f.control(opt)
		}
	}
	L.Push(lua.String(string(b)))
	return 1
}

// putInteger writes n in size bytes: a negative n through a signed cast,
// others through an unsigned one; bytes past the eighth are 0.
func putInteger(b []byte, n float64, little bool, size int) []byte {
	var v uint64
	if n < 0 {
		v = uint64(cInt64(n))
	} else {
		v = cUint64(n)
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

// getInteger reads size bytes into a 64-bit accumulator (longer sizes
// keep the last eight bytes shifted in) and sign-extends with the mask C
// computes, whose shift count x86-64 takes modulo 64.
func getInteger(data string, little, signed bool, size int) float64 {
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

func structUnpack(L *lua.State) int {
	f := newStructFormat(L)
	data := L.CheckString(2)
	ld := uint64(len(data))
	// size_t in C: a negative offset wraps and fails the length check.
	pos := uint64(L.OptInteger(3, 1))
	if pos == 0 {
		L.ArgError(3, "offset must be 1 or greater")
	}
	pos--
	nargs := L.Top()
	var out []lua.Value
	fits := func(size uint64) {
		if !(size <= ld && pos <= ld-size) {
			L.ArgError(2, "data string too short")
		}
	}
	for f.more() {
		opt, size := f.option()
		pos += f.padding(pos, opt, size)
		fits(size)
		checkStack(L, nargs+len(out), 2, "too many results")
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := opt >= 'a' && opt <= 'z'
			out = append(out, lua.Number(getInteger(data[pos:], f.little, signed, int(size))))
		case 'x':
		case 'f':
			var u uint32
			if f.little {
				u = binary.LittleEndian.Uint32([]byte(data[pos : pos+4]))
			} else {
				u = binary.BigEndian.Uint32([]byte(data[pos : pos+4]))
			}
			out = append(out, lua.Number(float64(math.Float32frombits(u))))
		case 'd':
			var u uint64
			if f.little {
				u = binary.LittleEndian.Uint64([]byte(data[pos : pos+8]))
			} else {
				u = binary.BigEndian.Uint64([]byte(data[pos : pos+8]))
			}
			out = append(out, lua.Number(math.Float64frombits(u)))
		case 'c':
			if size == 0 {
				// c0 takes its length from the result before it.
				var n float64
				ok := len(out) > 0
				if ok {
					n, ok = out[len(out)-1].ToNumber()
				}
				if !ok {
					L.Errorf("format 'c0' needs a previous size")
				}
				size = cUint64(n)
				out = out[:len(out)-1]
				fits(size)
			}
			out = append(out, lua.String(strings.Clone(data[pos:pos+size])))
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				L.Errorf("unfinished string in data")
			}
			size = uint64(e) + 1
			out = append(out, lua.String(strings.Clone(data[pos:pos+uint64(e)])))
		default:
			f.control(opt)
		}
		pos += size
	}
	for _, v := range out {
		L.Push(v)
	}
	L.Push(lua.Number(float64(int64(pos + 1))))
	return len(out) + 1
}

func structSize(L *lua.State) int {
	f := newStructFormat(L)
	var pos uint64
	for f.more() {
		opt, size := f.option()
		pos += f.padding(pos, opt, size)
		if opt == 's' {
			L.ArgError(1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			L.ArgError(1, "option 'c0' has no fixed size")
		}
		// Letters and digits that are no option are skipped here.
		if !isAlnum(opt) {
			f.control(opt)
		}
		pos += size
	}
	L.Push(lua.Number(float64(int64(pos))))
	return 1
}
