package engine

import (
	"encoding/binary"
	"slices"
)

// List is a list value. Its elements are packed into chunks, each one byte
// buffer holding up to listChunkMax bytes of encoded elements, and the chunks sit
// in a ring so both ends grow and shrink in O(1) amortized time. An element
// costs its bytes plus a length before and after it (one byte each up to
// 127 bytes), as in a Redis listpack, so the list can be walked in both
// directions without an index.
//
// Every element also has a persistent position: element i is at head+i.
// Positions are what the change records are keyed by (see list_db.go), so a
// push or pop writes one record.
type List struct {
	objHeader
	ring  []listChunk // power-of-two length
	first int         // ring index of chunk 0
	nc    int         // chunks in use
	n     int         // elements
	head  int64       // persistent position of element 0
}

// listChunk is a run of encoded elements in b[lo:hi]; the bytes around that
// range are room to grow at either end.
type listChunk struct {
	b      []byte // len(b) == cap(b)
	lo, hi int32
	n      int32 // elements
}

// listChunkMax is the size a chunk fills up to before a new one starts, Redis's
// list-max-listpack-size -2 (8 KB). An element larger than that gets a chunk
// of its own.
const listChunkMax = 8192

// NewList returns an empty list; push elements before storing it.
func NewList() *List { return &List{} }

// Type implements Object.
func (l *List) Type() Type { return TypeList }

// Encoding implements Object: Redis 7.0 stores every list as a quicklist.
func (l *List) Encoding() string { return "quicklist" }

// Len is the number of elements.
func (l *List) Len() int { return l.n }

// MemoryUsage implements Object.
func (l *List) MemoryUsage() int {
	size := 64 + roundAlloc(len(l.ring)*40)
	for i := 0; i < l.nc; i++ {
		size += roundAlloc(len(l.chunkAt(i).b))
	}
	return size
}

// Clone implements Object.
func (l *List) Clone() Object {
	c := &List{head: l.head, n: l.n, nc: l.nc, ring: make([]listChunk, len(l.ring))}
	for i := 0; i < l.nc; i++ {
		src := l.chunkAt(i)
		buf := listAlloc(src.used())
		copy(buf, src.data())
		c.ring[i] = listChunk{b: buf, hi: int32(src.used()), n: src.n}
	}
	return c
}

func (l *List) hasItems() bool { return true }

// ---- element encoding ----

// listVarintLen is the number of bytes binary.PutUvarint uses for n.
func listVarintLen(n int) int {
	k := 1
	for n >= 0x80 {
		n >>= 7
		k++
	}
	return k
}

// listElemSize is the bytes an element of n bytes takes in a chunk.
func listElemSize(n int) int { return n + 2*listVarintLen(n) }

// listPutElem encodes v at the start of dst: its length as a uvarint, the
// bytes, and the uvarint's bytes again in reverse order, so the length can
// be read backwards from the element's end.
func listPutElem(dst []byte, v []byte) int {
	h := binary.PutUvarint(dst, uint64(len(v)))
	t := h + copy(dst[h:], v)
	for i := 0; i < h; i++ {
		dst[t+i] = dst[h-1-i]
	}
	return t + h
}

// listElemAt decodes the element starting at off: its bytes and its encoded
// size.
func listElemAt(b []byte, off int) ([]byte, int) {
	n, h := binary.Uvarint(b[off:])
	start := off + h
	end := start + int(n)
	return b[start:end], end + h - off
}

// listElemBefore decodes the element ending at end: its bytes and its encoded
// size.
func listElemBefore(b []byte, end int) ([]byte, int) {
	var n uint64
	var shift uint
	i := end - 1
	for {
		c := b[i]
		n |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
		shift += 7
		i--
	}
	h := end - i
	start := i - int(n)
	return b[start:i], int(n) + 2*h
}

// ---- chunks ----

// listAlloc returns a buffer of at least n bytes, using the whole size
// class the allocator gives.
func listAlloc(n int) []byte {
	b := slices.Grow([]byte(nil), max(n, 8))
	return b[:cap(b)]
}

func (c *listChunk) used() int    { return int(c.hi - c.lo) }
func (c *listChunk) data() []byte { return c.b[c.lo:c.hi] }

// relayout moves the data into a buffer of size (a new one when size
// differs from the current one) leaving front bytes of room before it.
func (c *listChunk) relayout(size, front int) {
	used := c.used()
	if size == len(c.b) {
		copy(c.b[front:], c.b[c.lo:c.hi])
	} else {
		nb := listAlloc(size)
		copy(nb[front:], c.b[c.lo:c.hi])
		c.b = nb
	}
	c.lo = int32(front)
	c.hi = int32(front + used)
}

// room makes sure need bytes are free before the data (front) or after it.
// The data is re-centred in its buffer when the buffer has enough spare
// room, else moved to a bigger one; either way the spare room is shared
// between the two sides, so alternating pushes at both ends stay cheap.
func (c *listChunk) room(need int, front bool) {
	if front && int(c.lo) >= need || !front && len(c.b)-int(c.hi) >= need {
		return
	}
	total := c.used() + need
	size := len(c.b)
	if total > size || (size < listChunkMax && (size-total)*4 < size) {
		size = max(total, min(2*size, listChunkMax))
	}
	spare := size - total
	lead := spare / 2
	if front {
		lead += need
	}
	c.relayout(size, lead)
}

// resizeAt changes the encoded element at absolute offset off from oldSize
// to newSize bytes (0 for an insertion or a removal), moving whichever side
// is cheaper, and returns the element's new offset. The bytes of the
// resized region are left for the caller to write.
func (c *listChunk) resizeAt(off, oldSize, newSize int) int {
	delta := newSize - oldSize
	left := off - int(c.lo)
	right := int(c.hi) - off - oldSize
	switch {
	case delta == 0:
	case delta < 0:
		d := -delta
		if left < right {
			copy(c.b[int(c.lo)+d:], c.b[c.lo:off])
			c.lo += int32(d)
			off += d
		} else {
			copy(c.b[off+newSize:], c.b[off+oldSize:c.hi])
			c.hi -= int32(d)
		}
	default:
		canLeft := int(c.lo) >= delta
		canRight := len(c.b)-int(c.hi) >= delta
		switch {
		case canLeft && (left <= right || !canRight):
			copy(c.b[int(c.lo)-delta:], c.b[c.lo:off])
			c.lo -= int32(delta)
			off -= delta
		case canRight:
			copy(c.b[off+newSize:], c.b[off+oldSize:c.hi])
			c.hi += int32(delta)
		default:
			total := c.used() + delta
			nb := listAlloc(max(total, min(2*len(c.b), listChunkMax)))
			lo := (len(nb) - total) / 2
			copy(nb[lo:], c.b[c.lo:off])
			noff := lo + left
			copy(nb[noff+newSize:], c.b[off+oldSize:c.hi])
			c.b, c.lo, c.hi = nb, int32(lo), int32(lo+total)
			off = noff
		}
	}
	return off
}

// offsetOf returns the absolute offset of element ei of the chunk, walking
// from the nearer end.
func (c *listChunk) offsetOf(ei int) int {
	if ei <= int(c.n)/2 {
		off := int(c.lo)
		for ; ei > 0; ei-- {
			_, sz := listElemAt(c.b, off)
			off += sz
		}
		return off
	}
	end := int(c.hi)
	for k := int(c.n) - ei; k > 0; k-- {
		_, sz := listElemBefore(c.b, end)
		end -= sz
	}
	return end
}

// shrink gives a chunk that lost most of its elements a smaller buffer.
func (c *listChunk) shrink() {
	if used := c.used(); len(c.b) > 256 && used*4 < len(c.b) {
		c.relayout(2*used, used/2)
	}
}

// ---- the ring of chunks ----

func (l *List) chunkAt(i int) *listChunk { return &l.ring[(l.first+i)&(len(l.ring)-1)] }

// resizeRing lays the chunks out from index 0 of a ring of size slots.
func (l *List) resizeRing(size int) {
	nr := make([]listChunk, size)
	for i := 0; i < l.nc; i++ {
		nr[i] = *l.chunkAt(i)
	}
	l.ring, l.first = nr, 0
}

// insertChunk puts c at chunk index i (0 <= i <= nc).
func (l *List) insertChunk(i int, c listChunk) {
	if l.nc == len(l.ring) {
		l.resizeRing(max(1, 2*len(l.ring)))
	}
	mask := len(l.ring) - 1
	if i == 0 {
		l.first = (l.first - 1) & mask
	} else {
		for j := l.nc; j > i; j-- {
			l.ring[(l.first+j)&mask] = l.ring[(l.first+j-1)&mask]
		}
	}
	l.ring[(l.first+i)&mask] = c
	l.nc++
}

// removeChunk drops chunk i.
func (l *List) removeChunk(i int) {
	mask := len(l.ring) - 1
	if i == 0 {
		l.ring[l.first] = listChunk{}
		l.first = (l.first + 1) & mask
	} else {
		for j := i; j < l.nc-1; j++ {
			l.ring[(l.first+j)&mask] = l.ring[(l.first+j+1)&mask]
		}
		l.ring[(l.first+l.nc-1)&mask] = listChunk{}
	}
	l.nc--
	if len(l.ring) > 4 && l.nc*4 < len(l.ring) {
		l.resizeRing(len(l.ring) / 2)
	}
}

// newEndChunk returns a chunk holding v, with its spare room on the side
// the list grows from (the front for a push at the head).
func (l *List) newEndChunk(v []byte, front bool) listChunk {
	need := listElemSize(len(v))
	size := need
	if l.nc > 0 {
		// The list already filled a chunk: it is a long one, so give the
		// new chunk its full size at once rather than growing it.
		size = max(need, listChunkMax)
	}
	c := listChunk{b: listAlloc(size), n: 1}
	at := 0
	if front {
		at = len(c.b) - need
	}
	listPutElem(c.b[at:], v)
	c.lo, c.hi = int32(at), int32(at+need)
	return c
}

// ---- element operations ----

// pushFront adds v before element 0 and returns its position.
func (l *List) pushFront(v []byte) int64 {
	need := listElemSize(len(v))
	if l.nc > 0 {
		if c := l.chunkAt(0); c.used()+need <= listChunkMax {
			c.room(need, true)
			c.lo -= int32(need)
			listPutElem(c.b[c.lo:], v)
			c.n++
			l.n++
			l.head--
			return l.head
		}
	}
	l.insertChunk(0, l.newEndChunk(v, true))
	l.n++
	l.head--
	return l.head
}

// pushBack adds v after the last element and returns its position.
func (l *List) pushBack(v []byte) int64 {
	need := listElemSize(len(v))
	pos := l.head + int64(l.n)
	if l.nc > 0 {
		if c := l.chunkAt(l.nc - 1); c.used()+need <= listChunkMax {
			c.room(need, false)
			listPutElem(c.b[c.hi:], v)
			c.hi += int32(need)
			c.n++
			l.n++
			return pos
		}
	}
	l.insertChunk(l.nc, l.newEndChunk(v, false))
	l.n++
	return pos
}

// push adds v at the head (left) or the tail and returns its position.
func (l *List) push(v []byte, left bool) int64 {
	if left {
		return l.pushFront(v)
	}
	return l.pushBack(v)
}

// popFront removes element 0 and returns it. The bytes stay valid until
// the list is next written.
func (l *List) popFront() []byte {
	c := l.chunkAt(0)
	v, sz := listElemAt(c.b, int(c.lo))
	c.lo += int32(sz)
	c.n--
	l.n--
	l.head++
	if c.n == 0 {
		l.removeChunk(0)
	}
	return v
}

// popBack removes the last element and returns it (see popFront).
func (l *List) popBack() []byte {
	c := l.chunkAt(l.nc - 1)
	v, sz := listElemBefore(c.b, int(c.hi))
	c.hi -= int32(sz)
	c.n--
	l.n--
	if c.n == 0 {
		l.removeChunk(l.nc - 1)
	}
	return v
}

func (l *List) pop(left bool) []byte {
	if left {
		return l.popFront()
	}
	return l.popBack()
}

// locate finds element i (0 <= i < n): its chunk and its index there,
// skipping whole chunks from the nearer end.
func (l *List) locate(i int) (ci, ei int) {
	if i < l.n/2 {
		for ci = 0; ; ci++ {
			n := int(l.chunkAt(ci).n)
			if i < n {
				return ci, i
			}
			i -= n
		}
	}
	j := l.n - 1 - i
	for ci = l.nc - 1; ; ci-- {
		n := int(l.chunkAt(ci).n)
		if j < n {
			return ci, n - 1 - j
		}
		j -= n
	}
}

// listCursor walks the elements one by one in either direction. For a
// forward walk off is where the next element starts; for a backward one,
// where the next element ends.
type listCursor struct {
	l   *List
	ci  int
	off int
}

// cursorAt returns a cursor on element i (0 <= i < n) for a walk towards
// the tail (forward) or the head.
func (l *List) cursorAt(i int, forward bool) listCursor {
	ci, ei := l.locate(i)
	c := l.chunkAt(ci)
	off := c.offsetOf(ei)
	if !forward {
		_, sz := listElemAt(c.b, off)
		off += sz
	}
	return listCursor{l: l, ci: ci, off: off}
}

// next returns the element under a forward cursor and moves past it.
func (cur *listCursor) next() []byte {
	c := cur.l.chunkAt(cur.ci)
	if cur.off == int(c.hi) {
		cur.ci++
		c = cur.l.chunkAt(cur.ci)
		cur.off = int(c.lo)
	}
	v, sz := listElemAt(c.b, cur.off)
	cur.off += sz
	return v
}

// prev returns the element under a backward cursor and moves before it.
func (cur *listCursor) prev() []byte {
	c := cur.l.chunkAt(cur.ci)
	if cur.off == int(c.lo) {
		cur.ci--
		c = cur.l.chunkAt(cur.ci)
		cur.off = int(c.hi)
	}
	v, sz := listElemBefore(c.b, cur.off)
	cur.off -= sz
	return v
}

// Index returns element i, counting from the tail when negative (LINDEX).
// The bytes alias the list: use them before it is next written.
func (l *List) Index(i int64) ([]byte, bool) {
	if i < 0 {
		i += int64(l.n)
	}
	if i < 0 || i >= int64(l.n) {
		return nil, false
	}
	ci, ei := l.locate(int(i))
	c := l.chunkAt(ci)
	v, _ := listElemAt(c.b, c.offsetOf(ei))
	return v, true
}

// RangeBounds converts LRANGE's start and stop (negative ones counting
// from the tail) into the first index and the number of elements.
func (l *List) RangeBounds(start, stop int64) (from, count int) {
	n := int64(l.n)
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= n {
		return 0, 0
	}
	if stop >= n {
		stop = n - 1
	}
	return int(start), int(stop - start + 1)
}

// Each calls fn for count elements from index from towards the tail, or,
// with reverse, from index from towards the head. The bytes alias the list.
func (l *List) Each(from, count int, reverse bool, fn func(v []byte)) {
	if count <= 0 {
		return
	}
	cur := l.cursorAt(from, !reverse)
	for ; count > 0; count-- {
		if reverse {
			fn(cur.prev())
		} else {
			fn(cur.next())
		}
	}
}
