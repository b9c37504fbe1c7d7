package engine

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Readers for the encodings of Redis 6 and older that Redis 7.0 still
// accepts in a dump: ziplists (lists, hashes and sorted sets up to 6.2)
// and zipmaps (hashes up to 2.4). They are only read, and validated as
// strictly as Redis's deep sanitization does.

var (
	errBadZiplist = errors.New("ziplist integrity check failed")
	errBadZipmap  = errors.New("zipmap integrity check failed")
)

// zlEach validates a ziplist (header sizes, each entry's prevlen and
// encoding, the tail offset, the count unless it is the 65535 "unknown")
// and calls fn with each element, valid only during the call.
func zlEach(zl []byte, fn func(elem []byte) error) (int, error) {
	const header = 10
	if len(zl) < header+1 || int(binary.LittleEndian.Uint32(zl)) != len(zl) || zl[len(zl)-1] != 0xFF {
		return 0, errBadZiplist
	}
	tail := int(binary.LittleEndian.Uint32(zl[4:]))
	declared := int(binary.LittleEndian.Uint16(zl[8:]))
	var num [20]byte
	p, end, prevSize, lastStart, count := header, len(zl)-1, 0, header, 0
	for p < end {
		start := p
		var prev int
		if zl[p] < 254 {
			prev = int(zl[p])
			p++
		} else {
			if zl[p] != 254 || p+5 > end {
				return 0, errBadZiplist
			}
			prev = int(binary.LittleEndian.Uint32(zl[p+1:]))
			p += 5
		}
		if prev != prevSize || p >= end {
			return 0, errBadZiplist
		}
		elem, n, err := zlEntry(zl[p:end], num[:0])
		if err != nil {
			return 0, err
		}
		if err := fn(elem); err != nil {
			return 0, err
		}
		p += n
		prevSize, lastStart = p-start, start
		count++
	}
	if p != end || (count > 0 && tail != lastStart) || (count == 0 && tail != header) ||
		(declared != 65535 && declared != count) {
		return 0, errBadZiplist
	}
	return count, nil
}

// zlEntry decodes an entry's encoding and data at the start of b.
func zlEntry(b []byte, num []byte) ([]byte, int, error) {
	c := b[0]
	str := func(hdr, n int) ([]byte, int, error) {
		if n < 0 || hdr+n > len(b) {
			return nil, 0, errBadZiplist
		}
		return b[hdr : hdr+n], hdr + n, nil
	}
	need := func(n int) bool { return len(b) >= n }
	var v int64
	var size int
	switch {
	case c>>6 == 0:
		return str(1, int(c&0x3F))
	case c>>6 == 1:
		if !need(2) {
			return nil, 0, errBadZiplist
		}
		return str(2, int(c&0x3F)<<8|int(b[1]))
	case c == 0x80:
		if !need(5) {
			return nil, 0, errBadZiplist
		}
		n := binary.BigEndian.Uint32(b[1:])
		if uint64(n) > uint64(len(b)) {
			return nil, 0, errBadZiplist
		}
		return str(5, int(n))
	case c == 0xC0 && need(3):
		v, size = int64(int16(binary.LittleEndian.Uint16(b[1:]))), 3
	case c == 0xD0 && need(5):
		v, size = int64(int32(binary.LittleEndian.Uint32(b[1:]))), 5
	case c == 0xE0 && need(9):
		v, size = int64(binary.LittleEndian.Uint64(b[1:])), 9
	case c == 0xF0 && need(4):
		u := uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16
		v, size = int64(int32(u<<8)>>8), 4
	case c == 0xFE && need(2):
		v, size = int64(int8(b[1])), 2
	case c >= 0xF1 && c <= 0xFD:
		v, size = int64(c&0x0F)-1, 1
	default:
		return nil, 0, errBadZiplist
	}
	return strconv.AppendInt(num, v, 10), size, nil
}

// zmEach validates a zipmap and calls fn with each field and value.
func zmEach(zm []byte, fn func(field, value []byte) error) error {
	if len(zm) < 2 || zm[len(zm)-1] != 0xFF {
		return errBadZipmap
	}
	p, end := 1, len(zm)-1
	readLen := func() (int, bool) {
		if p >= end {
			return 0, false
		}
		if zm[p] < 254 {
			p++
			return int(zm[p-1]), true
		}
		if zm[p] != 254 || p+5 > end {
			return 0, false
		}
		n := binary.LittleEndian.Uint32(zm[p+1:])
		p += 5
		return int(n), uint64(n) <= uint64(end)
	}
	for p < end {
		fl, ok := readLen()
		if !ok || p+fl > end {
			return errBadZipmap
		}
		field := zm[p : p+fl]
		p += fl
		vl, ok := readLen()
		if !ok || p >= end {
			return errBadZipmap
		}
		free := int(zm[p])
		p++
		if p+vl+free > end {
			return errBadZipmap
		}
		value := zm[p : p+vl]
		p += vl + free
		if err := fn(field, value); err != nil {
			return err
		}
	}
	return nil
}
