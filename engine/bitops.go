package engine

import "math/bits"

// GetBit returns the bit at offset (0 beyond the end).
func GetBit(p []byte, offset uint64) int {
	i := offset >> 3
	if i >= uint64(len(p)) {
		return 0
	}
	return int(p[i]>>(7-offset&7)) & 1
}

// SetBit is SETBIT: it grows (or creates) the string as needed and returns
// the bit's previous value. changed reports whether the value was created,
// grown or flipped (Redis only announces and persists those).
func (db *DB) SetBit(key []byte, offset uint64, on int) (old int, changed bool, err error) {
	s, err := db.stringAt(key, false)
	if err != nil {
		return 0, false, err
	}
	i, shift := offset>>3, 7-offset&7
	need := int(i) + 1
	if s == nil {
		s = newZeroString(need)
		s.b[i] = byte(on) << shift
		db.Set(key, s, false)
		return 0, true, nil
	}
	// Redis unshares the value before looking at it, which makes it raw
	// even when the bit already has the wanted value.
	db.markRaw(key, s)
	if len(s.b) < need {
		s.b = growZero(s.b, need)
		changed = true
	}
	old = int(s.b[i]>>shift) & 1
	if old != on {
		s.b[i] = s.b[i]&^(1<<shift) | byte(on)<<shift
		changed = true
	}
	if changed {
		// The byte holding the bit; bytes a growth added before it are
		// zeros, which the patch implies.
		db.ChangedBytes(key, s, int(i), need)
	}
	return old, changed, nil
}

// BitRange is a BITCOUNT/BITPOS range: byte or bit indexes, negative ones
// counting from the end.
type BitRange struct {
	Start, End int64
	Bit        bool // indexes are bits (BIT), not bytes (BYTE)
}

// resolve clamps the range to p as Redis does and returns byte bounds plus
// masks of the bits outside a BIT range in the first and last byte.
func (r BitRange) resolve(n int64) (start, end int64, firstMask, lastMask byte) {
	total := n
	if r.Bit {
		total <<= 3
	}
	start, end = clampByteRange(r.Start, r.End, total)
	if r.Bit && start <= end {
		firstMask = ^byte((1 << (8 - start&7)) - 1)
		lastMask = byte((1 << (7 - end&7)) - 1)
		start >>= 3
		end >>= 3
	}
	return start, end, firstMask, lastMask
}

// BitCount counts set bits in p within r (nil r: the whole string).
func BitCount(p []byte, r *BitRange) int64 {
	start, end := int64(0), int64(len(p))-1
	var firstMask, lastMask byte
	if r != nil {
		if r.Start < 0 && r.End < 0 && r.Start > r.End {
			return 0
		}
		start, end, firstMask, lastMask = r.resolve(int64(len(p)))
	}
	if start > end {
		return 0
	}
	n := popcount(p[start : end+1])
	n -= int64(bits.OnesCount8(p[start] & firstMask))
	n -= int64(bits.OnesCount8(p[end] & lastMask))
	return n
}

func popcount(p []byte) int64 {
	var n int
	for len(p) >= 8 {
		n += bits.OnesCount64(uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
			uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56)
		p = p[8:]
	}
	for _, c := range p {
		n += bits.OnesCount8(c)
	}
	return int64(n)
}

// BitPos finds the first bit equal to bit in p within r (nil r: the whole
// string). endGiven is whether the caller named an end: without one, a
// search for 0 may answer the first bit past the string.
func BitPos(p []byte, bit int, r *BitRange, endGiven bool) int64 {
	start, end := int64(0), int64(len(p))-1
	var firstMask, lastMask byte
	if r != nil {
		rr := *r
		if !endGiven {
			if rr.Bit {
				rr.End = int64(len(p))<<3 + 7
			} else {
				rr.End = int64(len(p)) - 1
			}
		}
		start, end, firstMask, lastMask = rr.resolve(int64(len(p)))
	}
	if start > end {
		return -1
	}
	bytes := end - start + 1
	var pos int64
	edge := func(c byte, mask byte) byte {
		if bit == 1 {
			return c &^ mask
		}
		return c | mask
	}
	done := false
	if firstMask != 0 {
		c := edge(p[start], firstMask)
		if lastMask != 0 && bytes == 1 {
			c = edge(c, lastMask)
		}
		pos = bitpos([]byte{c}, bit)
		if bytes == 1 || (pos != -1 && pos != 8) {
			done = true
		} else {
			start++
			bytes--
		}
	}
	if !done {
		cur := bytes
		if lastMask != 0 {
			cur--
		}
		if cur > 0 {
			pos = bitpos(p[start:start+cur], bit)
			if bytes == cur || (pos != -1 && pos != cur<<3) {
				done = true
			} else {
				start += cur
				bytes -= cur
			}
		}
		if !done {
			pos = bitpos([]byte{edge(p[end], lastMask)}, bit)
		}
	}
	if endGiven && bit == 0 && pos == bytes<<3 {
		return -1
	}
	if pos != -1 {
		pos += start << 3
	}
	return pos
}

// bitpos returns the first bit equal to bit in p; for 0 with none found it
// returns len(p)*8 (the string is seen as zero-padded), for 1 it returns -1.
func bitpos(p []byte, bit int) int64 {
	skip := byte(0)
	if bit == 0 {
		skip = 0xff
	}
	for i, c := range p {
		if c == skip {
			continue
		}
		if bit == 0 {
			c = ^c
		}
		return int64(i)<<3 + int64(bits.LeadingZeros8(c))
	}
	if bit == 1 {
		return -1
	}
	return int64(len(p)) << 3
}
