package engine

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// zpack is the compact form of a small sorted set (what Redis calls its
// listpack encoding): one byte slice of entries sorted by (score, member)
// in zless order, each entry
//
//	8-byte score (IEEE 754 bits, big-endian: the persisted record itself)
//	uvarint member length
//	member bytes
//
// A small set is then a single allocation of about 10 bytes plus its
// members. Every operation is a linear scan, as on a listpack; the
// thresholds (zset-max-listpack-entries/-value) keep packs short.
//
// Members handed out (zitem.member, ScoreMember) alias the buffer. A
// change of membership (insert, remove, pops, range removals) builds a new
// buffer of the exact size and never writes to the old one, so members
// read before it, popped and removed ones included, stay valid. Only a
// score update (setScore, the ZINCRBY path) moves entries inside the
// buffer, without allocating: members read from a set must not be held
// across a ZADD to it (no command does).
type zpack struct {
	b []byte
	n int // entries
}

// zpStack is how many entry offsets the reverse walks keep on the stack
// (the default zset-max-listpack-entries); larger packs allocate.
const zpStack = 128

// zpSpan returns the span of the member bytes of the entry at off; end is
// the next entry's offset.
func zpSpan(b []byte, off int) (start, end int) {
	if l := b[off+8]; l < 0x80 { // members of up to 127 bytes
		start = off + 9
		return start, start + int(l)
	}
	l, w := binary.Uvarint(b[off+8:])
	start = off + 8 + w
	return start, start + int(l)
}

// zpScore decodes the score of the entry at off.
func zpScore(b []byte, off int) float64 {
	return math.Float64frombits(binary.BigEndian.Uint64(b[off:]))
}

// zpStr views b[start:end] as a string.
func zpStr(b []byte, start, end int) string {
	if start == end {
		return ""
	}
	return unsafe.String(&b[start], end-start)
}

// zpRead decodes the entry at off and returns it with the next offset.
func zpRead(b []byte, off int) (zitem, int) {
	start, end := zpSpan(b, off)
	return zitem{zpScore(b, off), zpStr(b, start, end)}, end
}

// zpSize is the encoded size of an entry for member.
func zpSize(member string) int {
	var tmp [binary.MaxVarintLen64]byte
	return 8 + binary.PutUvarint(tmp[:], uint64(len(member))) + len(member)
}

// zpPut encodes an entry at the start of dst (at least zpSize bytes) and
// returns its size.
func zpPut(dst []byte, score float64, member string) int {
	binary.BigEndian.PutUint64(dst, math.Float64bits(score))
	w := binary.PutUvarint(dst[8:], uint64(len(member)))
	return 8 + w + copy(dst[8+w:], member)
}

// scan calls fn with the offset, index and item of every entry from offset
// off (the entry of index idx) on, until fn returns false.
func (p *zpack) scan(off, idx int, fn func(off, idx int, it zitem) bool) {
	for off < len(p.b) {
		it, next := zpRead(p.b, off)
		if !fn(off, idx, it) {
			return
		}
		off, idx = next, idx+1
	}
}

// find locates member: its entry's span [off, end), index and score.
func (p *zpack) find(member string) (off, end, idx int, score float64, ok bool) {
	b := p.b
	for off, idx = 0, 0; off < len(b); idx++ {
		start, next := zpSpan(b, off)
		if next-start == len(member) && string(b[start:next]) == member {
			return off, next, idx, zpScore(b, off), true
		}
		off = next
	}
	return 0, 0, 0, 0, false
}

// seek returns the offset and index of the first entry not less than
// pivot (len(b) and n when there is none).
func (p *zpack) seek(pivot zitem) (off, idx int) {
	for off < len(p.b) {
		it, next := zpRead(p.b, off)
		if !zless(it, pivot) {
			return off, idx
		}
		off, idx = next, idx+1
	}
	return off, idx
}

// offsetOf returns the offset of entry i (len(b) for i >= n).
func (p *zpack) offsetOf(i int) int {
	off := 0
	for ; i > 0 && off < len(p.b); i-- {
		_, off = zpRead(p.b, off)
	}
	return off
}

// offsets appends the offsets of the first k entries to dst.
func (p *zpack) offsets(dst []int, k int) []int {
	for off := 0; len(dst) < k && off < len(p.b); {
		dst = append(dst, off)
		_, off = zpRead(p.b, off)
	}
	return dst
}

// descend calls fn for entries i, i-1, ..., 0 until fn returns false.
func (p *zpack) descend(i int, fn func(zitem) bool) {
	if i < 0 {
		return
	}
	var stack [zpStack]int
	offs := p.offsets(stack[:0], i+1)
	for k := len(offs) - 1; k >= 0; k-- {
		it, _ := zpRead(p.b, offs[k])
		if !fn(it) {
			return
		}
	}
}

// splice replaces the bytes [start, end) with an entry for (score, member)
// (none when put is false) in a new buffer.
func (p *zpack) splice(start, end int, put bool, score float64, member string) {
	size := 0
	if put {
		size = zpSize(member)
	}
	nb := make([]byte, len(p.b)-(end-start)+size)
	copy(nb, p.b[:start])
	if put {
		zpPut(nb[start:], score, member)
	}
	copy(nb[start+size:], p.b[end:])
	p.b = nb
}

// insert adds a member known to be absent.
func (p *zpack) insert(member string, score float64) {
	off, _ := p.seek(zitem{score, member})
	p.splice(off, off, true, score, member)
	p.n++
}

// remove deletes member and returns its score; false when absent.
func (p *zpack) remove(member string) (float64, bool) {
	off, end, _, score, ok := p.find(member)
	if !ok {
		return 0, false
	}
	p.splice(off, end, false, 0, "")
	p.n--
	return score, true
}

// setScore moves an existing member to a new score in place: the entry
// keeps its size, so only the entries between its old and new places
// shift. One pass finds both places.
func (p *zpack) setScore(member string, score float64) {
	b := p.b
	pivot := zitem{score, member}
	off, end, pos := -1, -1, -1
	for o := 0; o < len(b) && (off < 0 || pos < 0); {
		start, next := zpSpan(b, o)
		m := zpStr(b, start, next)
		switch {
		case off < 0 && m == member:
			off, end = o, next
		case pos < 0 && !zless(zitem{zpScore(b, o), m}, pivot):
			pos = o
		}
		o = next
	}
	if off < 0 {
		panic("engine: zpack.setScore of an absent member")
	}
	if pos < 0 {
		pos = len(b)
	}
	var tmp [80]byte
	entry := append(tmp[:0], b[off:end]...)
	binary.BigEndian.PutUint64(entry, math.Float64bits(score))
	if pos <= off { // moves down (or stays): [pos, off) shifts up
		copy(b[pos+len(entry):end], b[pos:off])
		copy(b[pos:], entry)
	} else { // moves up: pos >= end, [end, pos) shifts down
		copy(b[off:], b[end:pos])
		copy(b[pos-len(entry):], entry)
	}
}

// cut removes the entries [i, j) in a new buffer and returns their bytes,
// which the old buffer keeps (decode them with zpRead).
func (p *zpack) cut(i, j int) []byte {
	start := p.offsetOf(i)
	end := start
	for k := i; k < j && end < len(p.b); k++ {
		_, end = zpRead(p.b, end)
	}
	removed := p.b[start:end]
	nb := make([]byte, len(p.b)-(end-start))
	copy(nb, p.b[:start])
	copy(nb[start:], p.b[end:])
	p.b = nb
	p.n -= j - i
	return removed
}

// build fills an empty pack with items, sorted and distinct, in one
// allocation.
func (p *zpack) build(items []ScoreMember, score func(float64) float64) {
	size := 0
	for _, it := range items {
		size += zpSize(it.Member)
	}
	p.b = make([]byte, size)
	off := 0
	for _, it := range items {
		off += zpPut(p.b[off:], score(it.Score), it.Member)
	}
	p.n = len(items)
}
