package engine

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Listpacks as Redis 7.0 lays them out (listpack.c): a 6-byte header (total
// bytes and element count, little-endian), the entries, and 0xFF. Each
// entry is its encoding with the data, then its own length written
// backwards (the "backlen") so the list can be walked from either end. A
// string that is a canonical integer is stored as the smallest integer
// encoding that holds it, as lpAppend does, so the bytes match Redis's.

const (
	lpHeaderSize = 6
	lpEOF        = 0xFF
	// lpCountUnknown in the header means "count the entries".
	lpCountUnknown = 65535
)

var errBadListpack = errors.New("listpack integrity check failed")

// lpBuilder accumulates a listpack's entries.
type lpBuilder struct {
	b []byte
	n int
}

func newLPBuilder(dst []byte) lpBuilder {
	return lpBuilder{b: append(dst[:0], make([]byte, lpHeaderSize)...)}
}

// size is the listpack's size once finished (lpBytes).
func (lb *lpBuilder) size() int { return len(lb.b) + 1 }

// appendString adds v, as an integer when it is a canonical one.
func (lb *lpBuilder) appendString(v []byte) {
	if len(v) <= 20 {
		if i, ok := ParseInt(v); ok {
			lb.appendInt(i)
			return
		}
	}
	start := len(lb.b)
	switch n := len(v); {
	case n < 64:
		lb.b = append(lb.b, 0x80|byte(n))
	case n < 4096:
		lb.b = append(lb.b, 0xE0|byte(n>>8), byte(n))
	default:
		lb.b = binary.LittleEndian.AppendUint32(append(lb.b, 0xF0), uint32(n))
	}
	lb.b = append(lb.b, v...)
	lb.finishEntry(start)
}

// appendInt adds an integer in the smallest encoding that holds it.
func (lb *lpBuilder) appendInt(v int64) {
	start := len(lb.b)
	switch {
	case v >= 0 && v <= 127:
		lb.b = append(lb.b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		lb.b = append(lb.b, 0xC0|byte(u>>8), byte(u))
	case v >= -32768 && v <= 32767:
		lb.b = binary.LittleEndian.AppendUint16(append(lb.b, 0xF1), uint16(v))
	case v >= -8388608 && v <= 8388607:
		u := uint32(v)
		lb.b = append(lb.b, 0xF2, byte(u), byte(u>>8), byte(u>>16))
	case v >= -1<<31 && v <= 1<<31-1:
		lb.b = binary.LittleEndian.AppendUint32(append(lb.b, 0xF3), uint32(v))
	default:
		lb.b = binary.LittleEndian.AppendUint64(append(lb.b, 0xF4), uint64(v))
	}
	lb.finishEntry(start)
}

// finishEntry writes the backlen of the entry that starts at start.
func (lb *lpBuilder) finishEntry(start int) {
	lb.b = lpAppendBacklen(lb.b, uint64(len(lb.b)-start))
	lb.n++
}

// lpAppendBacklen writes l in 7-bit groups, most significant first, every
// byte but the first marked with the high bit (read right to left, the
// marked bytes say "more to the left").
func lpAppendBacklen(b []byte, l uint64) []byte {
	switch {
	case l <= 127:
		return append(b, byte(l))
	case l < 16383:
		return append(b, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		return append(b, byte(l>>14), byte((l>>7)&127)|128, byte(l&127)|128)
	case l < 268435455:
		return append(b, byte(l>>21), byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	default:
		return append(b, byte(l>>28), byte((l>>21)&127)|128, byte((l>>14)&127)|128,
			byte((l>>7)&127)|128, byte(l&127)|128)
	}
}

func lpBacklenSize(l uint64) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// finish completes the listpack and returns it.
func (lb *lpBuilder) finish() []byte {
	lb.b = append(lb.b, lpEOF)
	binary.LittleEndian.PutUint32(lb.b, uint32(len(lb.b)))
	binary.LittleEndian.PutUint16(lb.b[4:], uint16(min(lb.n, lpCountUnknown)))
	return lb.b
}

// lpEach validates lp entirely (header, every entry's encoding, bounds and
// backlen, the count) while calling fn with each element; integers are
// formatted into a scratch buffer, so an element is only valid during the
// call. It returns the number of elements.
func lpEach(lp []byte, fn func(elem []byte) error) (int, error) {
	if len(lp) < lpHeaderSize+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != lpEOF {
		return 0, errBadListpack
	}
	declared := int(binary.LittleEndian.Uint16(lp[4:]))
	var num [20]byte
	count := 0
	p := lpHeaderSize
	end := len(lp) - 1
	for p < end {
		elem, size, err := lpEntry(lp[p:end], num[:0])
		if err != nil {
			return 0, err
		}
		back := lpBacklenSize(uint64(size))
		if p+size+back > end {
			return 0, errBadListpack
		}
		if got, ok := lpReadBacklen(lp[p+size : p+size+back]); !ok || got != uint64(size) {
			return 0, errBadListpack
		}
		if err := fn(elem); err != nil {
			return 0, err
		}
		p += size + back
		count++
	}
	if p != end || (declared != lpCountUnknown && declared != count) {
		return 0, errBadListpack
	}
	return count, nil
}

// lpEntry decodes the entry at the start of b (the listpack before its
// EOF byte): the element and the size of its encoding plus data.
func lpEntry(b []byte, num []byte) (elem []byte, size int, err error) {
	c := b[0]
	var v int64
	switch {
	case c&0x80 == 0:
		v, size = int64(c), 1
	case c&0xC0 == 0x80:
		n := int(c & 0x3F)
		if 1+n > len(b) {
			return nil, 0, errBadListpack
		}
		return b[1 : 1+n], 1 + n, nil
	case c&0xE0 == 0xC0:
		if len(b) < 2 {
			return nil, 0, errBadListpack
		}
		u := uint64(c&0x1F)<<8 | uint64(b[1])
		v, size = int64(u<<51)>>51, 2
	case c&0xF0 == 0xE0:
		if len(b) < 2 {
			return nil, 0, errBadListpack
		}
		n := int(c&0x0F)<<8 | int(b[1])
		if 2+n > len(b) {
			return nil, 0, errBadListpack
		}
		return b[2 : 2+n], 2 + n, nil
	case c == 0xF0:
		if len(b) < 5 {
			return nil, 0, errBadListpack
		}
		n := uint64(binary.LittleEndian.Uint32(b[1:]))
		if 5+n > uint64(len(b)) {
			return nil, 0, errBadListpack
		}
		return b[5 : 5+n], 5 + int(n), nil
	case c == 0xF1:
		if len(b) < 3 {
			return nil, 0, errBadListpack
		}
		v, size = int64(int16(binary.LittleEndian.Uint16(b[1:]))), 3
	case c == 0xF2:
		if len(b) < 4 {
			return nil, 0, errBadListpack
		}
		u := uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16
		v, size = int64(int32(u<<8)>>8), 4
	case c == 0xF3:
		if len(b) < 5 {
			return nil, 0, errBadListpack
		}
		v, size = int64(int32(binary.LittleEndian.Uint32(b[1:]))), 5
	case c == 0xF4:
		if len(b) < 9 {
			return nil, 0, errBadListpack
		}
		v, size = int64(binary.LittleEndian.Uint64(b[1:])), 9
	default:
		return nil, 0, errBadListpack
	}
	return strconv.AppendInt(num, v, 10), size, nil
}

// lpReadBacklen reads a backlen written by lpAppendBacklen; ok is false
// when its continuation bits do not say it is exactly len(b) bytes.
func lpReadBacklen(b []byte) (uint64, bool) {
	var v uint64
	for i, c := range b {
		if (i == 0) != (c&128 == 0) {
			return 0, false
		}
		v = v<<7 | uint64(c&127)
	}
	return v, true
}
