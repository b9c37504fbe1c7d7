package flat

// Growing and shrinking a Table a segment at a time.

// dirRange is the first directory entry and the number of entries that
// name a segment of the given depth and prefix.
func (t *Table) dirRange(depth uint8, prefix uint64) (start, n int) {
	shift := t.global - depth
	return int(prefix << shift), 1 << shift
}

// split divides segment si in two by the next bit of its keys' hashes: si
// keeps the 0 half, a new segment takes the 1 half. It costs one segment's
// slots (and the directory's, when it must double first).
func (t *Table) split(si uint32) {
	depth := t.segs[si].depth
	if int(depth)+1+relBits > 64 {
		panic("flat: segment split past the hash's bits") // 2^40 segments: only a broken hash gets here
	}
	if depth == t.global {
		t.growDir()
	}
	if t.scratch == nil {
		t.scratch = make([]uint64, t.segSize())
	}
	old := t.scratch
	copy(old, t.segs[si].slots)
	clear(t.segs[si].slots)

	fp := t.segs[si].fp - 1
	rehash := int(fp) < int(t.segBits)+fpSpare
	if rehash {
		fp = relBits
	}
	bi := uint32(len(t.segs))
	prefix := t.segs[si].prefix
	t.segs = append(t.segs, segment{slots: t.newSlots(), prefix: prefix<<1 | 1, depth: depth + 1, fp: fp})
	a, b := &t.segs[si], &t.segs[bi]
	a.prefix, a.depth, a.fp, a.count = prefix<<1, depth+1, fp, 0

	for _, v := range old {
		if v == 0 {
			continue
		}
		hd := v & handleMask
		rel := v >> HandleBits
		var one bool
		if rehash {
			h := hashKey(t.keyOf(Handle(hd)))
			one = (h<<depth)>>63 == 1
			rel = (h << (depth + 1)) >> relShift
		} else {
			one = rel>>(relBits-1) == 1
			rel = rel << 1 & relMask
		}
		if one {
			t.place(b, rel<<HandleBits|hd)
		} else {
			t.place(a, rel<<HandleBits|hd)
		}
	}
	t.depths[depth]--
	t.depths[depth+1] += 2
	start, n := t.dirRange(depth, prefix)
	for j := start + n/2; j < start+n; j++ {
		t.dir[j] = bi
	}
	t.account()
}

// growDir doubles the directory: each entry becomes two naming the same
// segment. It is the one step whose cost grows with the table: 4 bytes per
// segment, 64-256 KiB at 10M keys.
func (t *Table) growDir() {
	d := make([]uint32, 2*len(t.dir))
	for i, s := range t.dir {
		d[2*i], d[2*i+1] = s, s
	}
	t.dir = d
	t.global++
}

// shrinkDir halves the directory while no segment needs its last bit.
func (t *Table) shrinkDir() {
	if t.global == 0 || t.depths[t.global] != 0 {
		return
	}
	g := t.global
	for g > 0 && t.depths[g] == 0 {
		g--
	}
	d := make([]uint32, 1<<g)
	step := 1 << (t.global - g)
	for i := range d {
		d[i] = t.dir[i*step]
	}
	t.dir = d
	t.global = g
}

func (t *Table) newSlots() []uint64 {
	if s := t.spare; s != nil {
		t.spare = nil
		return s
	}
	return make([]uint64, t.segSize())
}

// maybeMerge merges segment si with its sibling (same depth, prefix
// differing in the last bit) while the two fit in one segment at a low
// load, so a table that empties shrinks back to one segment.
func (t *Table) maybeMerge(si uint32) {
	for {
		s := &t.segs[si]
		if s.depth == 0 {
			return
		}
		start, _ := t.dirRange(s.depth, s.prefix^1)
		bi := t.dir[start]
		b := &t.segs[bi]
		if b.depth != s.depth || s.count+b.count > t.mergeMax() {
			return
		}
		lo, hi := si, bi
		if s.prefix&1 == 1 {
			lo, hi = bi, si
		}
		si = t.merge(lo, hi)
		t.account()
	}
}

// merge folds segment hi (prefix ending in 1) into its sibling lo and
// returns the merged segment's index (segments are kept dense: the last one
// moves into hi's place).
func (t *Table) merge(lo, hi uint32) uint32 {
	a, b := &t.segs[lo], &t.segs[hi]
	depth := a.depth
	if t.scratch == nil {
		t.scratch = make([]uint64, t.segSize())
	}
	copy(t.scratch, a.slots)
	clear(a.slots)
	fp := min(a.fp, b.fp) + 1
	if fp > relBits {
		fp = relBits
	}
	a.prefix, a.depth, a.fp, a.count = a.prefix>>1, depth-1, fp, 0
	// The merged segment's hash bits start one bit earlier: the bit that
	// told the siblings apart.
	for _, v := range t.scratch {
		if v != 0 {
			t.place(a, (v>>HandleBits>>1)<<HandleBits|v&handleMask)
		}
	}
	for _, v := range b.slots {
		if v != 0 {
			t.place(a, ((v>>HandleBits>>1)|1<<(relBits-1))<<HandleBits|v&handleMask)
		}
	}
	start, n := t.dirRange(depth, b.prefix)
	for j := start; j < start+n; j++ {
		t.dir[j] = lo
	}
	t.depths[depth] -= 2
	t.depths[depth-1]++
	clear(b.slots)
	t.spare = b.slots

	last := uint32(len(t.segs) - 1)
	if hi != last {
		t.segs[hi] = t.segs[last]
		m := &t.segs[hi]
		start, n := t.dirRange(m.depth, m.prefix)
		for j := start; j < start+n; j++ {
			t.dir[j] = hi
		}
		if lo == last {
			lo = hi
		}
	}
	t.segs[last] = segment{}
	t.segs = t.segs[:last]
	t.shrinkDir()
	return lo
}
