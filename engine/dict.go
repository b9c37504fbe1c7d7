package engine

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"strings"
	"unsafe"
)

// Dict is a string-keyed hash table built like Redis's dict: power-of-two
// bucket arrays with chaining, incremental rehashing between two tables, and a
// reverse-binary cursor for Scan. Go's map cannot resume an iteration across
// calls; SCAN, HSCAN and SSCAN promise that an element present for a whole
// scan is returned at least once however the table grows or shrinks in
// between, and this cursor is what keeps that promise.
type Dict[V any] struct {
	tables    [2][]*dictNode[V]
	used      [2]int
	rehashIdx int // next bucket of tables[0] to move; -1 when not rehashing
	// chainMax[t] is at least the length of every chain of tables[t]: the
	// longest any of its chains has been since the table was allocated
	// (deletes do not lower it). RandomKey needs it to be fair.
	chainMax [2]int32
}

type dictNode[V any] struct {
	next *dictNode[V]
	val  V
	key  string
	// short holds keys of up to dictShortKey bytes (key then points here),
	// so a lookup finds the key in the node's own cache line instead of
	// following one more pointer. With the keyspace's 24-byte values the
	// node is exactly one 64-byte line.
	short [dictShortKey]byte
}

const dictShortKey = 16

const dictInitialSize = 4

// NewDict returns an empty table.
func NewDict[V any]() *Dict[V] {
	return &Dict[V]{rehashIdx: -1}
}

// One seed per process: tables can then be rebuilt without rehashing keys
// differently, and hashing stays unpredictable to clients.
var dictSeed = maphash.MakeSeed()

func (d *Dict[V]) hash(key string) uint64 { return maphash.String(dictSeed, key) }

// Len is the number of entries.
func (d *Dict[V]) Len() int { return d.used[0] + d.used[1] }

func (d *Dict[V]) rehashing() bool { return d.rehashIdx >= 0 }

// rehashStep moves one bucket (visiting at most a few empty ones) from the
// old table to the new one, spreading the cost of a resize over operations.
func (d *Dict[V]) rehashStep() {
	if !d.rehashing() {
		return
	}
	empty := 10
	t0 := d.tables[0]
	for d.rehashIdx < len(t0) && t0[d.rehashIdx] == nil {
		d.rehashIdx++
		empty--
		if empty == 0 {
			return
		}
	}
	if d.rehashIdx < len(t0) {
		t1 := d.tables[1]
		mask := uint64(len(t1) - 1)
		for n := t0[d.rehashIdx]; n != nil; {
			next := n.next
			i := d.hash(n.key) & mask
			n.next = t1[i]
			t1[i] = n
			d.used[0]--
			d.used[1]++
			n = next
		}
		t0[d.rehashIdx] = nil
		// The chains the bucket's entries joined: in a larger table the
		// buckets whose low bits are its index, in a smaller one the
		// bucket its index masks to. Their nodes were just written.
		if len(t1) > len(t0) {
			for j := d.rehashIdx; j < len(t1); j += len(t0) {
				d.noteChain(1, t1[j])
			}
		} else {
			d.noteChain(1, t1[uint64(d.rehashIdx)&mask])
		}
		d.rehashIdx++
	}
	if d.used[0] == 0 {
		d.tables[0], d.tables[1] = d.tables[1], nil
		d.used[0], d.used[1] = d.used[1], 0
		d.chainMax[0], d.chainMax[1] = d.chainMax[1], 0
		d.rehashIdx = -1
		// Deletes during the rehash may have left the new table sparse
		// too; without this check a table drained in one burst would keep
		// its size until the next delete.
		d.maybeShrink()
	}
}

func (d *Dict[V]) resize(size int) {
	if size < dictInitialSize {
		size = dictInitialSize
	}
	size = 1 << bits.Len(uint(size-1)) // next power of two
	if d.tables[0] == nil {
		d.tables[0] = make([]*dictNode[V], size)
		d.chainMax[0] = 0
		return
	}
	if size == len(d.tables[0]) {
		return
	}
	d.tables[1] = make([]*dictNode[V], size)
	d.chainMax[1] = 0
	d.rehashIdx = 0
}

// noteChain raises table t's chain bound to the length of the chain
// starting at head.
func (d *Dict[V]) noteChain(t int, head *dictNode[V]) {
	var n int32
	for ; head != nil; head = head.next {
		n++
	}
	if n > d.chainMax[t] {
		d.chainMax[t] = n
	}
}

func (d *Dict[V]) find(key string) *dictNode[V] {
	if d.Len() == 0 {
		return nil
	}
	d.rehashStep()
	return d.lookup(key, d.hash(key))
}

// lookup is find after the rehash step, for a key whose hash is h.
func (d *Dict[V]) lookup(key string, h uint64) *dictNode[V] {
	for t := 0; t < 2; t++ {
		tab := d.tables[t]
		if tab == nil {
			break
		}
		for n := tab[h&uint64(len(tab)-1)]; n != nil; n = n.next {
			if n.key == key {
				return n
			}
		}
		if !d.rehashing() {
			break
		}
	}
	return nil
}

// Find returns the stored key (its one long-lived copy, shareable with
// other indexes) and a pointer to its value, or nil. The pointer stays valid
// until the key is deleted.
func (d *Dict[V]) Find(key string) (string, *V) {
	if n := d.find(key); n != nil {
		return n.key, &n.val
	}
	return "", nil
}

// bucketHead is the first node of the bucket key would be found in (nil
// for an empty one or an empty table), without a rehash step: it only
// reads, for prefetching.
func (d *Dict[V]) bucketHead(key string) *dictNode[V] {
	tab := d.tables[0]
	if len(tab) == 0 {
		return nil
	}
	h := d.hash(key)
	i := h & uint64(len(tab)-1)
	if d.rehashing() && int(i) < d.rehashIdx {
		// Buckets below rehashIdx have moved to the new table.
		tab = d.tables[1]
		i = h & uint64(len(tab)-1)
	}
	return tab[i]
}

// Get returns a pointer to key's value, or nil.
func (d *Dict[V]) Get(key string) *V {
	if n := d.find(key); n != nil {
		return &n.val
	}
	return nil
}

// Has reports whether key is present.
func (d *Dict[V]) Has(key string) bool { return d.find(key) != nil }

// Insert returns the stored key and a pointer to its value slot, creating a
// zero value (and cloning key, which may alias a network buffer) when absent;
// created says which happened.
func (d *Dict[V]) Insert(key string) (stored string, val *V, created bool) {
	n, created := d.insertNode(key)
	return n.key, &n.val, created
}

// insertNode is Insert returning the node itself, for indexes inside the
// engine that point at nodes (a node lives until its key is deleted).
func (d *Dict[V]) insertNode(key string) (node *dictNode[V], created bool) {
	h := d.hash(key)
	if d.Len() > 0 {
		d.rehashStep()
		if n := d.lookup(key, h); n != nil {
			return n, false
		}
	}
	if !d.rehashing() {
		if d.tables[0] == nil {
			d.resize(dictInitialSize)
		} else if d.used[0] >= len(d.tables[0]) {
			d.resize(d.used[0] * 2)
		}
	}
	t := 0
	if d.rehashing() {
		t = 1 // new entries go to the new table so the old one only drains
	}
	tab := d.tables[t]
	i := h & uint64(len(tab)-1)
	n := &dictNode[V]{next: tab[i]}
	if len(key) <= dictShortKey && len(key) > 0 {
		copy(n.short[:], key)
		n.key = unsafe.String(&n.short[0], len(key))
	} else {
		n.key = cloneString(key)
	}
	tab[i] = n
	d.used[t]++
	// The rest of the chain was just walked by the lookup.
	d.noteChain(t, n)
	return n, true
}

// Delete removes key and returns its value.
func (d *Dict[V]) Delete(key string) (old V, ok bool) {
	if d.Len() == 0 {
		return old, false
	}
	d.rehashStep()
	h := d.hash(key)
	for t := 0; t < 2; t++ {
		tab := d.tables[t]
		if tab == nil {
			break
		}
		i := h & uint64(len(tab)-1)
		var prev *dictNode[V]
		for n := tab[i]; n != nil; prev, n = n, n.next {
			if n.key != key {
				continue
			}
			if prev == nil {
				tab[i] = n.next
			} else {
				prev.next = n.next
			}
			d.used[t]--
			old = n.val
			if d.Len() == 0 {
				d.Clear() // nothing left to rehash or scan: free both tables
			} else {
				d.maybeShrink()
			}
			return old, true
		}
		if !d.rehashing() {
			break
		}
	}
	return old, false
}

// maybeShrink starts shrinking when fewer than 1 in 8 buckets would be used,
// so a table that once held millions of keys gives its memory back.
func (d *Dict[V]) maybeShrink() {
	if d.rehashing() {
		return
	}
	size := len(d.tables[0])
	if size > dictInitialSize && d.used[0]*8 < size {
		d.resize(d.used[0])
	}
}

// Clear empties the table.
func (d *Dict[V]) Clear() {
	d.tables = [2][]*dictNode[V]{}
	d.used = [2]int{}
	d.chainMax = [2]int32{}
	d.rehashIdx = -1
}

// ForEach calls fn for every entry until fn returns false. fn must not
// insert or delete.
func (d *Dict[V]) ForEach(fn func(key string, val *V) bool) {
	for t := 0; t < 2; t++ {
		for _, n := range d.tables[t] {
			for ; n != nil; n = n.next {
				if !fn(n.key, &n.val) {
					return
				}
			}
		}
	}
}

// Scan visits the buckets named by cursor and returns the next cursor (0
// when the scan is complete). It uses Redis's reverse-binary cursor: the
// cursor's high bits are incremented, so buckets already visited in a smaller
// or larger table map onto buckets already visited in the other. fn must not
// insert or delete.
func (d *Dict[V]) Scan(cursor uint64, fn func(key string, val *V)) uint64 {
	if d.Len() == 0 {
		return 0
	}
	visit := func(tab []*dictNode[V], i uint64) {
		for n := tab[i]; n != nil; n = n.next {
			fn(n.key, &n.val)
		}
	}
	if !d.rehashing() {
		tab := d.tables[0]
		m := uint64(len(tab) - 1)
		visit(tab, cursor&m)
		return nextCursor(cursor, m)
	}
	small, large := d.tables[0], d.tables[1]
	if len(small) > len(large) {
		small, large = large, small
	}
	m0, m1 := uint64(len(small)-1), uint64(len(large)-1)
	visit(small, cursor&m0)
	// Visit every bucket of the large table that expands the small one's.
	for {
		visit(large, cursor&m1)
		cursor = nextCursor(cursor, m1)
		if cursor&(m0^m1) == 0 {
			break
		}
	}
	return cursor
}

// nextCursor increments the cursor's bits above the mask, reversed.
func nextCursor(v, mask uint64) uint64 {
	v |= ^mask
	v = bits.Reverse64(v)
	v++
	return bits.Reverse64(v)
}

// RandomKey returns a random key, every key equally likely, or false when
// empty.
func (d *Dict[V]) RandomKey() (string, bool) {
	k, v := d.RandomEntry()
	return k, v != nil
}

// RandomEntry is RandomKey returning, like Find, the stored key and a
// pointer to its value; the pointer is nil when the dict is empty.
func (d *Dict[V]) RandomEntry() (string, *V) {
	if d.Len() == 0 {
		return "", nil
	}
	for i := 0; i < 4 && d.rehashing(); i++ {
		d.rehashStep()
	}
	n := d.randomNode()
	return n.key, &n.val
}

// randomNode returns an entry, each with the same probability; the dict
// must not be empty. It reads and changes nothing, not even a rehash step.
//
// A random bucket and then a random entry of its chain (Redis's
// dictGetRandomKey) is not fair: an entry alone in its bucket is drawn as
// often as a whole chain of three. Sampling some buckets and choosing among
// the entries found (Redis's dictGetFairRandomKey) is fairer but not fair.
// Here every bucket is seen as chainMax slots, slot j holding the j-th
// entry of the chain if the chain is that long: slots are drawn uniformly,
// from the live buckets of both tables while rehashing, until one holds an
// entry. Each entry is exactly one slot among the same number, so all are
// equally likely. It takes buckets*chainMax/Len draws on average: about 5
// for a table near its growth point (chains of up to 5 in 1024 buckets, 8
// in a million), up to 8*chainMax for one emptied to 1/8 of its size (it
// shrinks below that); each draw reads one bucket and walks at most the
// drawn depth.
func (d *Dict[V]) randomNode() *dictNode[V] {
	depth := uint32(max(d.chainMax[0], d.chainMax[1], 1))
	t0 := d.tables[0]
	if !d.rehashing() && uint64(len(t0)) <= 1<<32 {
		// One 64-bit draw per slot: the low bits pick the bucket (the
		// table's size is a power of two), the high 32 the depth.
		mask := uint64(len(t0) - 1)
		for {
			r := rand.Uint64()
			n := t0[r&mask]
			if n == nil {
				continue // all of the bucket's slots are empty
			}
			for j := uniform32(uint32(r>>32), depth); j > 0 && n != nil; j-- {
				n = n.next
			}
			if n != nil {
				return n
			}
		}
	}
	t1 := d.tables[1]
	lo := 0
	if d.rehashing() {
		lo = d.rehashIdx // buckets below rehashIdx in the old table are empty
	}
	live0 := uint64(len(t0) - lo)
	buckets := live0 + uint64(len(t1))
	for {
		i := rand.Uint64N(buckets)
		var n *dictNode[V]
		if i < live0 {
			n = t0[uint64(lo)+i]
		} else {
			n = t1[i-live0]
		}
		if n == nil {
			continue
		}
		for j := rand.Uint32N(depth); j > 0 && n != nil; j-- {
			n = n.next
		}
		if n != nil {
			return n
		}
	}
}

// uniform32 maps 32 random bits x to a uniform integer below n (Lemire's
// multiply-shift). When x falls in the few values that would make the
// result uneven it draws afresh instead, so the result is exactly uniform.
func uniform32(x, n uint32) uint32 {
	m := uint64(x) * uint64(n)
	if low := uint32(m); low < n && low < -n%n {
		return rand.Uint32N(n)
	}
	return uint32(m >> 32)
}

// Buckets reports the sizes of the two tables (for MEMORY and DEBUG output).
func (d *Dict[V]) Buckets() (int, int) { return len(d.tables[0]), len(d.tables[1]) }

func cloneString(s string) string { return strings.Clone(s) }
