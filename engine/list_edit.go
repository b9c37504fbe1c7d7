package engine

// Searching and editing a list in the middle: LPOS, LSET, LINSERT, LREM,
// LTRIM.

import (
	"slices"
)

// Positions implements LPOS: the indexes of the elements equal to v, from
// the rank-th match on (counting from the tail for a negative rank), at
// most count of them (0 for all, -1 for COUNT not given: one), comparing at
// most maxlen elements (0 for all). The arithmetic wraps like Redis's C
// longs, so RANK -9223372036854775808 behaves as there.
func (l *List) Positions(v []byte, rank, count, maxlen int64) []int64 {
	forward := true
	if rank < 0 {
		rank = -rank
		forward = false
	}
	if l.n == 0 {
		return nil
	}
	var out []int64
	start := 0
	if !forward {
		start = l.n - 1
	}
	cur := l.cursorAt(start, forward)
	var matches int64
	for index := int64(0); index < int64(l.n) && (maxlen == 0 || index < maxlen); index++ {
		var e []byte
		if forward {
			e = cur.next()
		} else {
			e = cur.prev()
		}
		if string(e) != string(v) {
			continue
		}
		matches++
		if matches < rank {
			continue
		}
		at := index
		if !forward {
			at = int64(l.n) - index - 1
		}
		out = append(out, at)
		if count == -1 || (count != 0 && matches-rank+1 >= count) {
			break
		}
	}
	return out
}

// indexOf returns the index of the first element equal to v, or -1.
func (l *List) indexOf(v []byte) int {
	if l.n == 0 {
		return -1
	}
	cur := l.cursorAt(0, true)
	for i := 0; i < l.n; i++ {
		if string(cur.next()) == string(v) {
			return i
		}
	}
	return -1
}

// matchIndexes returns, in ascending order, the indexes LREM removes: the
// first count elements equal to v, the last -count when count is negative,
// all when it is 0. Like Redis's C longs, -count wraps, so the smallest
// count means all, from the tail.
func (l *List) matchIndexes(v []byte, count int64) []int {
	if l.n == 0 {
		return nil
	}
	forward := count >= 0
	limit := count
	if !forward {
		limit = -count
	}
	var idx []int
	start := 0
	if !forward {
		start = l.n - 1
	}
	cur := l.cursorAt(start, forward)
	for k := 0; k < l.n; k++ {
		var e []byte
		i := k
		if forward {
			e = cur.next()
		} else {
			e = cur.prev()
			i = l.n - 1 - k
		}
		if string(e) != string(v) {
			continue
		}
		idx = append(idx, i)
		if limit != 0 && int64(len(idx)) == limit {
			break
		}
	}
	if !forward {
		slices.Reverse(idx)
	}
	return idx
}

// set replaces element i with v.
func (l *List) set(i int, v []byte) {
	ci, ei := l.locate(i)
	c := l.chunkAt(ci)
	off := c.offsetOf(ei)
	_, oldSize := listElemAt(c.b, off)
	need := listElemSize(len(v))
	if c.used()-oldSize+need <= listChunkMax || c.n == 1 {
		off = c.resizeAt(off, oldSize, need)
		listPutElem(c.b[off:], v)
		return
	}
	c.resizeAt(off, oldSize, 0)
	c.n--
	l.n--
	l.insertIn(ci, ei, v)
}

// insert puts v so that it becomes element i (0 <= i <= n).
func (l *List) insert(i int, v []byte) {
	if i == l.n {
		l.pushBack(v)
		return
	}
	ci, ei := l.locate(i)
	l.insertIn(ci, ei, v)
}

// insertIn puts v before element ei of chunk ci (ei may equal the chunk's
// count: after its last element).
func (l *List) insertIn(ci, ei int, v []byte) {
	need := listElemSize(len(v))
	c := l.chunkAt(ci)
	// At a chunk boundary a neighbour with room takes the element, so
	// inserts there do not split a full chunk.
	if ei == 0 && c.used()+need > listChunkMax && ci > 0 {
		if p := l.chunkAt(ci - 1); p.used()+need <= listChunkMax {
			c, ei = p, int(p.n)
		}
	} else if ei == int(c.n) && c.used()+need > listChunkMax && ci < l.nc-1 {
		if nx := l.chunkAt(ci + 1); nx.used()+need <= listChunkMax {
			c, ei = nx, 0
		}
	}
	l.n++
	if c.used()+need <= listChunkMax {
		off := c.offsetOf(ei)
		if ei == int(c.n) && off == int(c.hi) {
			c.room(need, false)
			off = int(c.hi)
			c.hi += int32(need)
		} else if ei == 0 {
			c.room(need, true)
			c.lo -= int32(need)
			off = int(c.lo)
		} else {
			off = c.resizeAt(off, 0, need)
		}
		listPutElem(c.b[off:], v)
		c.n++
		return
	}
	// Split the chunk at the insertion point; the element joins whichever
	// half has room, or sits alone between them.
	off := c.offsetOf(ei)
	rightBytes := c.b[off:c.hi]
	right := listChunk{b: listAlloc(len(rightBytes) + need), n: c.n - int32(ei)}
	lead := len(right.b) - len(rightBytes)
	copy(right.b[lead:], rightBytes)
	right.lo, right.hi = int32(lead), int32(len(right.b))
	c.hi = int32(off)
	c.n = int32(ei)
	var alone *listChunk
	switch {
	case c.used()+need <= listChunkMax:
		c.room(need, false)
		listPutElem(c.b[c.hi:], v)
		c.hi += int32(need)
		c.n++
	case right.used()+need <= listChunkMax:
		right.lo -= int32(need)
		listPutElem(right.b[right.lo:], v)
		right.n++
	default:
		single := listChunk{b: listAlloc(need), n: 1}
		listPutElem(single.b, v)
		single.hi = int32(need)
		alone = &single
	}
	at := ci + 1
	if alone != nil {
		l.insertChunk(at, *alone)
		at++
	}
	if right.n > 0 {
		l.insertChunk(at, right)
	}
	if l.chunkAt(ci).n == 0 {
		l.removeChunk(ci)
	}
}

// removeSorted removes the elements at the given indexes (ascending,
// distinct), compacting each chunk they are in once.
func (l *List) removeSorted(idx []int) {
	if len(idx) == 0 {
		return
	}
	ci, _ := l.locate(idx[0])
	base := 0
	for i := 0; i < ci; i++ {
		base += int(l.chunkAt(i).n)
	}
	firstTouched := ci
	k := 0
	for k < len(idx) {
		c := l.chunkAt(ci)
		end := base + int(c.n)
		if idx[k] >= end {
			base = end
			ci++
			continue
		}
		// Compact: copy the kept elements down over the removed ones.
		r, w := int(c.lo), int(c.lo)
		removed := 0
		for e := base; e < end; e++ {
			_, sz := listElemAt(c.b, r)
			if k < len(idx) && idx[k] == e {
				k++
				removed++
			} else {
				if w != r {
					copy(c.b[w:], c.b[r:r+sz])
				}
				w += sz
			}
			r += sz
		}
		c.hi = int32(w)
		c.n -= int32(removed)
		l.n -= removed
		base = end
		ci++
	}
	l.compactChunks(firstTouched, ci)
}

// compactChunks drops the empty chunks among [from, to), merges small
// neighbours there and shrinks buffers that lost most of their data.
func (l *List) compactChunks(from, to int) {
	for i := from; i < to && i < l.nc; {
		if l.chunkAt(i).n == 0 {
			l.removeChunk(i)
			to--
			continue
		}
		i++
	}
	for i := max(from-1, 0); i < to && i < l.nc-1; {
		a, b := l.chunkAt(i), l.chunkAt(i+1)
		if a.used()+b.used() <= listChunkMax && (a.used() < listChunkMax/2 || b.used() < listChunkMax/2) {
			a.room(b.used(), false)
			copy(a.b[a.hi:], b.data())
			a.hi += int32(b.used())
			a.n += b.n
			l.removeChunk(i + 1)
			to--
			continue
		}
		a.shrink()
		i++
	}
	if i := min(to, l.nc-1); i >= 0 {
		l.chunkAt(i).shrink()
	}
}

// trim drops front elements from the head and back elements from the tail.
func (l *List) trim(front, back int) {
	for front > 0 {
		c := l.chunkAt(0)
		if int(c.n) <= front {
			front -= int(c.n)
			l.n -= int(c.n)
			l.head += int64(c.n)
			l.removeChunk(0)
			continue
		}
		off := c.offsetOf(front)
		c.lo = int32(off)
		c.n -= int32(front)
		l.n -= front
		l.head += int64(front)
		c.shrink()
		front = 0
	}
	for back > 0 {
		c := l.chunkAt(l.nc - 1)
		if int(c.n) <= back {
			back -= int(c.n)
			l.n -= int(c.n)
			l.removeChunk(l.nc - 1)
			continue
		}
		off := c.offsetOf(int(c.n) - back)
		c.hi = int32(off)
		c.n -= int32(back)
		l.n -= back
		c.shrink()
		back = 0
	}
}
