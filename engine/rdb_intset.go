package engine

import (
	"encoding/binary"
	"errors"
)

// Intsets as Redis lays them out (intset.c): the width of every member
// (2, 4 or 8 bytes), the count, then the members ascending, all
// little-endian. The width is the smallest that holds every member.

var errBadIntset = errors.New("intset integrity check failed")

// appendIntset writes the members (ascending) of an intset-encoded set.
func appendIntset(dst []byte, ints []int64) []byte {
	width := 2
	for _, v := range ints {
		switch {
		case v < -1<<31 || v > 1<<31-1:
			width = 8
		case (v < -1<<15 || v > 1<<15-1) && width < 4:
			width = 4
		}
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(width))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(ints)))
	for _, v := range ints {
		switch width {
		case 2:
			dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
		case 4:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		default:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		}
	}
	return dst
}

// readIntset validates an intset (a known width, a size that matches the
// count, members strictly ascending) and returns its members.
func readIntset(b []byte) ([]int64, error) {
	if len(b) < 8 {
		return nil, errBadIntset
	}
	width := binary.LittleEndian.Uint32(b)
	count := uint64(binary.LittleEndian.Uint32(b[4:]))
	if (width != 2 && width != 4 && width != 8) || count == 0 || 8+count*uint64(width) != uint64(len(b)) {
		return nil, errBadIntset
	}
	ints := make([]int64, count)
	for i := range ints {
		p := b[8+i*int(width):]
		switch width {
		case 2:
			ints[i] = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			ints[i] = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			ints[i] = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && ints[i] <= ints[i-1] {
			return nil, errBadIntset
		}
	}
	return ints, nil
}
