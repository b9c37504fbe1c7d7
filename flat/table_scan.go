package flat

import "math/rand/v2"

// Scan calls fn with the handles of some keys and returns the cursor to
// pass next; 0 starts a scan and 0 is returned when it is complete. Like
// Redis's SCAN, every key present from the first call to the last is
// returned at least once, however the table grows or shrinks in between;
// keys may be returned more than once. fn must not change the table.
//
// The cursor is a position in hash space: every key whose hash is below it
// has been returned. Within a segment the home slots follow hash order, and
// splits and merges only regroup ranges of hash space, so a position keeps
// its meaning. Linear probing may push a key past its home slot, never past
// an empty slot: a call therefore stops only at an empty slot, having
// returned every key whose home lies before it, and a home range that ends
// a segment is followed round to the end of its cluster at the segment's
// start. count bounds the keys per call loosely (Redis's COUNT): a call
// stops at the first empty slot after count keys, or after visiting
// 10*count slots per key the table holds on average (Redis visits up to
// 10*count buckets, and its tables hold about a key per bucket): a sparse
// table, such as a small keyspace in its one 1024-slot segment, is walked
// to the end in one call, as Redis's small tables are.
func (t *Table) Scan(cursor uint64, count int, fn func(Handle)) uint64 {
	if t.count == 0 {
		return 0
	}
	count = max(count, 1)
	budget := 10 * count * max(1, len(t.segs)*t.segSize()/t.count)
	emitted, visited := 0, 0
	segBits := uint(t.segBits)
	homeShift := HandleBits + relBits - segBits
	for {
		s := &t.segs[t.segmentOf(cursor)]
		depth := uint(s.depth)
		size := len(s.slots)
		m := size - 1
		p0 := int((cursor << depth) >> (64 - segBits))
		for p := p0; ; p++ {
			v := s.slots[p&m]
			if v == 0 {
				if p >= size {
					break // every home slot done, and the wrapped cluster
				}
				if emitted >= count || visited >= budget {
					return s.prefix<<(64-depth) | uint64(p)<<(64-depth-segBits)
				}
			} else if home := int(v >> homeShift); home >= p0 && (home > p&m) == (p >= size) {
				// Only keys whose home is in the range this call covers: one
				// below p0 was returned by an earlier call, and one that
				// wrapped round from the segment's end is returned with
				// the end. A table that does not change returns each key once.
				fn(Handle(v & handleMask))
				emitted++
			}
			visited++
		}
		if s.prefix+1 == 1<<depth {
			return 0
		}
		cursor = (s.prefix + 1) << (64 - depth)
		if emitted >= count || visited >= budget {
			return cursor
		}
	}
}

// ForEach calls fn with every handle until fn returns false. fn must not
// change the table.
func (t *Table) ForEach(fn func(Handle) bool) {
	for i := range t.segs {
		for _, v := range t.segs[i].slots {
			if v != 0 && !fn(Handle(v&handleMask)) {
				return
			}
		}
	}
}

func randN(r *rand.Rand, n int) int {
	if r == nil {
		return rand.IntN(n)
	}
	return r.IntN(n)
}

func randU64(r *rand.Rand) uint64 {
	if r == nil {
		return rand.Uint64()
	}
	return r.Uint64()
}

// RandomHandle returns a key's handle, every key equally likely, or 0 when
// the table is empty (RANDOMKEY). r may be nil for the global source.
//
// Every segment has the same number of slots, so drawing a segment and a
// slot uniformly until the slot is full picks each key with the same
// probability. That takes slots/keys draws on average: 1.3 to 2.3 while a
// table grows (its load swings between ~0.45 and ~0.78), about 5 at most
// after deletes spread over it (merges keep it above ~3/16), more for one
// sparse segment, which is therefore counted through instead.
func (t *Table) RandomHandle(r *rand.Rand) Handle {
	if t.count == 0 {
		return 0
	}
	size := t.segSize()
	if len(t.segs) == 1 && t.count*16 < size {
		k := randN(r, t.count)
		for _, v := range t.segs[0].slots {
			if v != 0 {
				if k == 0 {
					return Handle(v & handleMask)
				}
				k--
			}
		}
	}
	for {
		s := &t.segs[randN(r, len(t.segs))]
		if v := s.slots[randU64(r)&uint64(size-1)]; v != 0 {
			return Handle(v & handleMask)
		}
	}
}

// Sample appends up to n distinct handles to dst, for eviction: the keys
// in the slots following a random slot, as Redis's dictGetSomeKeys takes
// neighbouring buckets. Neighbours in hash order are unrelated keys, and one
// cache line holds eight slots. It looks at no more than max(64n, one
// segment) slots; if that finds no key it falls back to RandomHandle.
func (t *Table) Sample(r *rand.Rand, n int, dst []Handle) []Handle {
	if t.count == 0 || n <= 0 {
		return dst
	}
	size := t.segSize()
	total := len(t.segs) * size
	limit := min(total, max(64*n, size))
	si := randN(r, len(t.segs))
	i := int(randU64(r) & uint64(size-1))
	found := 0
	for v := 0; v < limit && found < n; v++ {
		if x := t.segs[si].slots[i]; x != 0 {
			dst = append(dst, Handle(x&handleMask))
			found++
		}
		if i++; i == size {
			i = 0
			if si++; si == len(t.segs) {
				si = 0
			}
		}
	}
	if found == 0 {
		dst = append(dst, t.RandomHandle(r))
	}
	return dst
}
