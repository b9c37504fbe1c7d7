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
	seed      maphash.Seed
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
	return &Dict[V]{rehashIdx: -1, seed: dictSeed}
}

// One seed per process: tables can then be rebuilt without rehashing keys
// differently, and hashing stays unpredictable to clients.
var dictSeed = maphash.MakeSeed()

func (d *Dict[V]) hash(key string) uint64 { return maphash.String(d.seed, key) }

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
		mask := uint64(len(d.tables[1]) - 1)
		for n := t0[d.rehashIdx]; n != nil; {
			next := n.next
			i := d.hash(n.key) & mask
			n.next = d.tables[1][i]
			d.tables[1][i] = n
			d.used[0]--
			d.used[1]++
			n = next
		}
		t0[d.rehashIdx] = nil
		d.rehashIdx++
	}
	if d.used[0] == 0 {
		d.tables[0], d.tables[1] = d.tables[1], nil
		d.used[0], d.used[1] = d.used[1], 0
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
		return
	}
	if size == len(d.tables[0]) {
		return
	}
	d.tables[1] = make([]*dictNode[V], size)
	d.rehashIdx = 0
}

func (d *Dict[V]) find(key string) *dictNode[V] {
	if d.Len() == 0 {
		return nil
	}
	d.rehashStep()
	h := d.hash(key)
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

// Prefetch looks up the buckets and first nodes of several keys at once and
// returns the nodes (nil for an empty bucket) in nodes. Its loads do not
// depend on each other, so the CPU overlaps their cache misses; the lookups
// that follow then find the memory in cache. Pipelined batches use it.
func (d *Dict[V]) Prefetch(keys [][]byte, nodes []*dictNode[V]) []*dictNode[V] {
	nodes = nodes[:0]
	for _, k := range keys {
		nodes = append(nodes, d.bucketHead(str(k)))
	}
	return nodes
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
	if n := d.find(key); n != nil {
		return n, false
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
	i := d.hash(key) & uint64(len(tab)-1)
	n := &dictNode[V]{next: tab[i]}
	if len(key) <= dictShortKey && len(key) > 0 {
		copy(n.short[:], key)
		n.key = unsafe.String(&n.short[0], len(key))
	} else {
		n.key = cloneString(key)
	}
	tab[i] = n
	d.used[t]++
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

// RandomKey returns a random key, or false when empty. Like Redis it picks a
// random non-empty bucket and then a random entry of its chain.
func (d *Dict[V]) RandomKey() (string, bool) {
	if d.Len() == 0 {
		return "", false
	}
	for i := 0; i < 4 && d.rehashing(); i++ {
		d.rehashStep()
	}
	var head *dictNode[V]
	for head == nil {
		if d.rehashing() {
			// Buckets below rehashIdx in the old table are empty.
			n0 := uint64(len(d.tables[0]))
			span := n0 + uint64(len(d.tables[1])) - uint64(d.rehashIdx)
			i := uint64(d.rehashIdx) + rand.Uint64N(span)
			if i >= n0 {
				head = d.tables[1][i-n0]
			} else {
				head = d.tables[0][i]
			}
		} else {
			head = d.tables[0][rand.Uint64N(uint64(len(d.tables[0])))]
		}
	}
	n := 0
	for e := head; e != nil; e = e.next {
		n++
	}
	e := head
	for k := rand.IntN(n); k > 0; k-- {
		e = e.next
	}
	return e.key, true
}

// Buckets reports the sizes of the two tables (for MEMORY and DEBUG output).
func (d *Dict[V]) Buckets() (int, int) { return len(d.tables[0]), len(d.tables[1]) }

func cloneString(s string) string { return strings.Clone(s) }
