package engine

import (
	"encoding/binary"
	"slices"
)

// fieldPack is the compact form of a small hash (what Redis calls its
// listpack encoding): field and value entries alternate in one byte slice,
// each a uvarint length followed by the bytes, in insertion order. A small
// hash is then one allocation, and it iterates in the order Redis replies
// with (new fields at the end, updated ones in place). Lookups are linear,
// as in Redis; the thresholds keep packs short.
type fieldPack struct {
	b []byte
	n int // pairs
}

// fpEntry reads the entry at off and returns its bytes and the offset
// of the next entry.
func fpEntry(b []byte, off int) ([]byte, int) {
	l, w := binary.Uvarint(b[off:])
	start := off + w
	end := start + int(l)
	return b[start:end:end], end
}

// fpAppendEntry appends one entry (length, bytes) to b.
func fpAppendEntry(b []byte, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// fpEntrySize is the bytes an entry of v takes.
func fpEntrySize(v []byte) int {
	n := 1
	for x := len(v); x >= 0x80; x >>= 7 {
		n++
	}
	return n + len(v)
}

// fpReserve makes room for extra more bytes. Packs are kept close to their
// length (an eighth spare, as an allocator's size classes would leave)
// rather than grown by append's doubling, which left a 100-field hash with
// 40% of its pack unused; packs are short, so the extra copies are cheap.
func fpReserve(b []byte, extra int) []byte {
	need := len(b) + extra
	if need <= cap(b) {
		return b
	}
	// slices.Grow rounds up to the allocation's size class, so what the
	// allocator gives is all usable.
	return append(slices.Grow([]byte(nil), need+need/8), b...)
}

// reserve makes room for pairs (field, value, ...) about to be added.
func (p *fieldPack) reserve(pairs [][]byte) {
	extra := 0
	for _, v := range pairs {
		extra += fpEntrySize(v)
	}
	p.b = fpReserve(p.b, extra)
}

// find locates field: the offset of its pair, of its value entry and of
// the pair's end.
func (p *fieldPack) find(field []byte) (pair, val, end int, ok bool) {
	for off := 0; off < len(p.b); {
		f, voff := fpEntry(p.b, off)
		_, next := fpEntry(p.b, voff)
		if string(f) == string(field) {
			return off, voff, next, true
		}
		off = next
	}
	return 0, 0, 0, false
}

func (p *fieldPack) get(field []byte) ([]byte, bool) {
	_, voff, _, ok := p.find(field)
	if !ok {
		return nil, false
	}
	v, _ := fpEntry(p.b, voff)
	return v, true
}

// set stores value under field; created reports a new field (appended at
// the end), otherwise the value is replaced in place.
func (p *fieldPack) set(field, value []byte) (created bool) {
	_, voff, end, ok := p.find(field)
	if !ok {
		p.appendNew(field, value)
		return true
	}
	var tmp [binary.MaxVarintLen64]byte
	hdr := binary.PutUvarint(tmp[:], uint64(len(value)))
	p.b = fpSplice(p.b, voff, end, hdr+len(value))
	copy(p.b[voff:], tmp[:hdr])
	copy(p.b[voff+hdr:], value)
	return false
}

// appendNew adds a field known to be absent (loading).
func (p *fieldPack) appendNew(field, value []byte) {
	p.b = fpReserve(p.b, fpEntrySize(field)+fpEntrySize(value))
	p.b = fpAppendEntry(fpAppendEntry(p.b, field), value)
	p.n++
}

func (p *fieldPack) del(field []byte) bool {
	pair, _, end, ok := p.find(field)
	if !ok {
		return false
	}
	p.b = fpSplice(p.b, pair, end, 0)
	p.n--
	return true
}

// each calls fn for every pair in order until fn returns false.
func (p *fieldPack) each(fn func(f, v []byte) bool) {
	for off := 0; off < len(p.b); {
		f, voff := fpEntry(p.b, off)
		v, next := fpEntry(p.b, voff)
		if !fn(f, v) {
			return
		}
		off = next
	}
}

// offsets returns the offset of every pair, for random access.
func (p *fieldPack) offsets(dst []int) []int {
	dst = dst[:0]
	for off := 0; off < len(p.b); {
		dst = append(dst, off)
		_, voff := fpEntry(p.b, off)
		_, off = fpEntry(p.b, voff)
	}
	return dst
}

// pairAt returns the pair starting at off.
func (p *fieldPack) pairAt(off int) (f, v []byte) {
	f, voff := fpEntry(p.b, off)
	v, _ = fpEntry(p.b, voff)
	return f, v
}

// fpSplice resizes the range [start, end) of b to n bytes, moving the
// tail, and returns the slice; the caller fills the n bytes.
func fpSplice(b []byte, start, end, n int) []byte {
	delta := n - (end - start)
	switch {
	case delta > 0:
		old := len(b)
		b = fpReserve(b, delta)
		b = b[:old+delta]
		copy(b[end+delta:], b[end:old])
	case delta < 0:
		copy(b[start+n:], b[end:])
		b = b[:len(b)+delta]
	}
	return b
}
