package lua

import (
	"math"
	"math/bits"
	"unsafe"
)

// Table is a Lua table laid out as Lua 5.1's ltable.c lays it out: an
// array part for the keys 1..n and a hash part of 2^k nodes, where each
// key lives at its main position (its hash modulo the size) or, on a
// collision, in a free node taken from the end and chained from there.
// The layout decides what scripts see: the order next and pairs walk
// keys in (array part, then nodes in slot order), and the border # finds
// in a table with holes. Strings hash as Redis's Lua hashes them (every
// byte), so a table built by the same steps walks in Redis's order.
type Table struct {
	array    []Value
	node     []node // nil: no hash part (Lua's dummy node)
	lastFree int    // nodes at and above lastFree are not free
	meta     *Table
	// noMeta caches which metamethods this table, as a metatable, lacks
	// (bit per tmIndex...): cleared by any write to the table.
	noMeta   uint8
	readonly bool
	// shared: array and node are a constructor's template (a table of
	// constants made once), copied on the first write.
	shared bool
}

type node struct {
	key  Value
	val  Value
	next int32 // the next node of the chain plus one; 0 ends it (a new node needs no setting up)
}

// maxArrayBits bounds the array part to 2^26 slots (Lua's MAXBITS).
const maxArrayBits = 26

// NewTable makes a table sized for narray array items and nhash others,
// as a constructor or lua_createtable does.
func NewTable(narray, nhash int) *Table {
	t := &Table{}
	if narray > 0 {
		t.array = make([]Value, narray)
	}
	t.setNodeVector(nhash)
	return t
}

// own makes a shared table's parts its own before a write.
func (t *Table) own() {
	if !t.shared {
		return
	}
	t.shared = false
	t.array = append([]Value(nil), t.array...)
	t.node = append([]node(nil), t.node...)
}

// Metatable is t's metatable, or nil.
func (t *Table) Metatable() *Table { return t.meta }

// SetMetatable sets t's metatable past any protection (Go's use).
func (t *Table) SetMetatable(m *Table) { t.meta = m }

// ReadOnly reports whether t is read-only (Redis's lua_enablereadonlytable).
func (t *Table) ReadOnly() bool { return t.readonly }

// SetReadOnly marks t read-only, or writable again. Scripts cannot write
// a read-only table by any means (assignment, rawset, setmetatable, the
// table library); Go code can.
func (t *Table) SetReadOnly(ro bool) { t.readonly = ro }

// stringHash is Lua's string hash as Redis's Lua computes it: seeded with
// the length, over every byte from the last.
func stringHash(s string) uint32 {
	h := uint32(len(s))
	for i := len(s); i > 0; i-- {
		h ^= (h << 5) + (h >> 2) + uint32(s[i-1])
	}
	return h
}

// arrayIndex is k as an array index (an integer in C int's range), or 0.
func arrayIndex(f float64) int {
	if f >= 1 && f <= math.MaxInt32 {
		if i := int(f); float64(i) == f {
			return i
		}
	}
	return 0
}

// mainPosition is the node a key hashes to (Lua's mainposition).
func (t *Table) mainPosition(k Value) int {
	size := len(t.node)
	switch k.Type() {
	case TypeString:
		return int(stringHash(k.str()) & uint32(size-1))
	case TypeNumber:
		return numberPosition(k.num(), size)
	case TypeBoolean:
		return int(k.n) & (size - 1)
	}
	// Objects hash by address, as in Lua (Go's heap does not move them).
	return int(uint32(uintptr(k.p)) % uint32((size-1)|1))
}

func numberPosition(f float64, size int) int {
	if f == 0 {
		return 0 // -0 and 0 are one key
	}
	b := math.Float64bits(f)
	return int((uint32(b) + uint32(b>>32)) % uint32((size-1)|1))
}

// Get is t[k], without metamethods.
func (t *Table) Get(k Value) Value {
	switch k.Type() {
	case TypeString:
		return t.GetStr(k.str())
	case TypeNumber:
		f := k.num()
		if i := arrayIndex(f); i > 0 {
			return t.GetInt(i)
		}
		if f != f {
			return Nil
		}
	case TypeNil:
		return Nil
	}
	if i := t.find(k); i >= 0 {
		return t.node[i].val
	}
	return Nil
}

// GetStr is t[s], without metamethods.
func (t *Table) GetStr(s string) Value {
	if t.node == nil {
		return Nil
	}
	return t.getStrHash(s, stringHash(s))
}

// getStrHash is GetStr for a key whose hash is known (a constant).
func (t *Table) getStrHash(s string, h uint32) Value {
	if i := t.findStrHash(s, h); i >= 0 {
		return t.node[i].val
	}
	return Nil
}

// findStrHash is the node of string key s (of hash h), or -1.
func (t *Table) findStrHash(s string, h uint32) int {
	if t.node == nil {
		return -1
	}
	i := int(h & uint32(len(t.node)-1))
	for {
		n := &t.node[i]
		if n.key.IsString() && n.key.str() == s {
			return i
		}
		if n.next == 0 {
			return -1
		}
		i = int(n.next) - 1
	}
}

// GetInt is t[i], without metamethods.
func (t *Table) GetInt(i int) Value {
	if uint(i-1) < uint(len(t.array)) {
		return t.array[i-1]
	}
	if t.node == nil {
		return Nil
	}
	f := float64(i)
	j := numberPosition(f, len(t.node))
	for {
		n := &t.node[j]
		if n.key.p == numberTagP && n.key.num() == f {
			return n.val
		}
		if n.next == 0 {
			return Nil
		}
		j = int(n.next) - 1
	}
}

// find is the node holding key k (its value may be nil), or -1.
func (t *Table) find(k Value) int {
	if t.node == nil {
		return -1
	}
	i := t.mainPosition(k)
	for {
		n := &t.node[i]
		if RawEqual(n.key, k) {
			return i
		}
		if n.next == 0 {
			return -1
		}
		i = int(n.next) - 1
	}
}

// Set is t[k] = v, without metamethods or the read-only mark. k must not
// be nil or NaN (L.RawSet raises Lua's errors for those).
func (t *Table) Set(k, v Value) {
	if k.p == numberTagP {
		if i := arrayIndex(k.num()); i > 0 {
			t.SetInt(i, v)
			return
		}
	}
	*t.slot(k) = v
}

// SetStr is t[s] = v, without metamethods or the read-only mark.
func (t *Table) SetStr(s string, v Value) { t.setStrHash(s, stringHash(s), v) }

// setStrHash is SetStr for a key whose hash is known (a constant).
func (t *Table) setStrHash(s string, h uint32, v Value) {
	t.own()
	t.noMeta = 0
	if i := t.findStrHash(s, h); i >= 0 {
		t.node[i].val = v
		return
	}
	// A new key takes a node even when v is nil, as in Lua: the node
	// stays (dead) until a rehash, which shapes later insertions.
	if t.node != nil {
		*t.newKeyAt(String(s), int(h&uint32(len(t.node)-1))) = v
		return
	}
	*t.newKey(String(s)) = v
}

// SetInt is t[i] = v, without metamethods or the read-only mark.
func (t *Table) SetInt(i int, v Value) {
	t.own()
	if uint(i-1) < uint(len(t.array)) {
		t.array[i-1] = v
		return
	}
	*t.slot(Number(float64(i))) = v
}

// existingSlot is the value slot of key k if k has a node (its value
// may be nil), else nil.
func (t *Table) existingSlot(k Value) *Value {
	t.own()
	if k.p == numberTagP {
		if i := arrayIndex(k.num()); i > 0 && i <= len(t.array) {
			return &t.array[i-1]
		}
	}
	if i := t.find(k); i >= 0 {
		return &t.node[i].val
	}
	return nil
}

// slot is the value slot of key k, made if k is not there yet (luaH_set).
func (t *Table) slot(k Value) *Value {
	t.own()
	t.noMeta = 0
	if k.p == numberTagP {
		if i := arrayIndex(k.num()); i > 0 && i <= len(t.array) {
			return &t.array[i-1]
		}
	}
	if i := t.find(k); i >= 0 {
		return &t.node[i].val
	}
	return t.newKey(k)
}

// newKey inserts a key that is not in the table (Lua's newkey): at its
// main position if that is free; else, if the node there belongs to
// another chain, that node moves to a free slot; else the new key takes
// the free slot, chained after the main position. With no free slot the
// table rehashes and the insertion starts over.
func (t *Table) newKey(k Value) *Value {
	if t.node == nil {
		t.rehash(k)
		return t.slot(k)
	}
	return t.newKeyAt(k, t.mainPosition(k))
}

// newKeyAt is newKey for a key whose main position mp is known.
func (t *Table) newKeyAt(k Value, mp int) *Value {
	if !t.node[mp].val.IsNil() {
		free := t.freePosition()
		if free < 0 {
			t.rehash(k)
			return t.slot(k)
		}
		other := t.mainPosition(t.node[mp].key)
		if other != mp {
			for int(t.node[other].next)-1 != mp {
				other = int(t.node[other].next) - 1
			}
			t.node[other].next = int32(free) + 1
			t.node[free] = t.node[mp]
			t.node[mp].next = 0
			t.node[mp].val = Nil
		} else {
			t.node[free].next = t.node[mp].next
			t.node[mp].next = int32(free) + 1
			mp = free
		}
	}
	t.node[mp].key = k
	return &t.node[mp].val
}

// freePosition takes the highest never-used node below lastFree.
func (t *Table) freePosition() int {
	for t.lastFree > 0 {
		t.lastFree--
		if t.node[t.lastFree].key.IsNil() {
			return t.lastFree
		}
	}
	return -1
}

func (t *Table) setNodeVector(size int) {
	if size <= 0 {
		t.node, t.lastFree = nil, 0
		return
	}
	lsize := ceilLog2(size)
	if lsize > maxArrayBits {
		panic(tableOverflow{})
	}
	size = 1 << lsize
	t.node = make([]node, size)
	t.lastFree = size
}

// tableOverflow is raised (as Lua's "table overflow") by a hash part
// beyond 2^26 nodes.
type tableOverflow struct{}

// ceilLog2 is the least l with 2^l >= x.
func ceilLog2(x int) int {
	if x <= 1 {
		return 0
	}
	return bits.Len(uint(x - 1))
}

// rehash resizes t for its keys plus the key being inserted (Lua's
// rehash): the array part becomes the largest power of two n such that
// more than n/2 of the slots 1..n would be used.
func (t *Table) rehash(extra Value) {
	var nums [maxArrayBits + 1]int
	nasize := t.countArray(&nums)
	total := nasize
	for i := range t.node {
		n := &t.node[i]
		if !n.val.IsNil() {
			if n.key.p == numberTagP {
				nasize += countInt(n.key.num(), &nums)
			}
			total++
		}
	}
	if extra.p == numberTagP {
		nasize += countInt(extra.num(), &nums)
	}
	total++
	na, size := computeSizes(&nums, nasize)
	t.resize(size, total-na)
}

func countInt(f float64, nums *[maxArrayBits + 1]int) int {
	if k := arrayIndex(f); k > 0 && k <= 1<<maxArrayBits {
		nums[ceilLog2(k)]++
		return 1
	}
	return 0
}

// countArray counts the array part's used slots per slice (2^(i-1), 2^i].
func (t *Table) countArray(nums *[maxArrayBits + 1]int) int {
	total := 0
	i := 1
	for lg, ttlg := 0, 1; lg <= maxArrayBits; lg, ttlg = lg+1, ttlg*2 {
		lim := ttlg
		if lim > len(t.array) {
			lim = len(t.array)
			if i > lim {
				break
			}
		}
		lc := 0
		for ; i <= lim; i++ {
			if !t.array[i-1].IsNil() {
				lc++
			}
		}
		nums[lg] += lc
		total += lc
	}
	return total
}

// computeSizes returns how many keys go to the array part and its size.
func computeSizes(nums *[maxArrayBits + 1]int, narray int) (na, size int) {
	a := 0
	for i, twoToI := 0, 1; twoToI/2 < narray; i, twoToI = i+1, twoToI*2 {
		if nums[i] > 0 {
			a += nums[i]
			if a > twoToI/2 {
				size, na = twoToI, a
			}
		}
		if a == narray {
			break
		}
	}
	return na, size
}

// resize gives t an array part of nasize and a hash part for nhsize keys,
// moving what no longer fits (Lua's resize: the old nodes go back in from
// the last).
func (t *Table) resize(nasize, nhsize int) {
	oldArray, oldNodes := t.array, t.node
	if nasize > len(oldArray) {
		grown := make([]Value, nasize)
		copy(grown, oldArray)
		t.array = grown
	}
	t.setNodeVector(nhsize)
	if nasize < len(oldArray) {
		t.array = oldArray[:nasize:nasize]
		for i := nasize; i < len(oldArray); i++ {
			if !oldArray[i].IsNil() {
				*t.slot(Number(float64(i + 1))) = oldArray[i]
			}
		}
		t.array = append([]Value(nil), t.array...)
	}
	for i := len(oldNodes) - 1; i >= 0; i-- {
		if n := &oldNodes[i]; !n.val.IsNil() {
			*t.slot(n.key) = n.val
		}
	}
}

// Len is the border Lua's # operator finds (luaH_getn): in the array part
// by binary search when its last slot is empty, else past it through the
// hash part.
func (t *Table) Len() int {
	j := len(t.array)
	if j > 0 && t.array[j-1].IsNil() {
		i := 0
		for j-i > 1 {
			m := int(uint(i+j) / 2)
			if t.array[m-1].IsNil() {
				j = m
			} else {
				i = m
			}
		}
		return i
	}
	if t.node == nil {
		return j
	}
	return t.unboundSearch(j)
}

func (t *Table) unboundSearch(j int) int {
	i := j
	j++
	for !t.GetInt(j).IsNil() {
		i = j
		j *= 2
		if j > math.MaxInt32 {
			i = 1
			for !t.GetInt(i).IsNil() {
				i++
			}
			return i - 1
		}
	}
	for j-i > 1 {
		m := (i + j) / 2
		if t.GetInt(m).IsNil() {
			j = m
		} else {
			i = m
		}
	}
	return i
}

// Next is Lua's next: the entry after key k (nil: the first), in the
// array part, then the nodes in slot order. ok is false when k is not in
// the table.
func (t *Table) Next(k Value) (key, val Value, ok bool) {
	i, ok := t.index(k)
	if !ok {
		return Nil, Nil, false
	}
	for i++; i < len(t.array); i++ {
		if !t.array[i].IsNil() {
			return Number(float64(i + 1)), t.array[i], true
		}
	}
	for j := i - len(t.array); j < len(t.node); j++ {
		if n := &t.node[j]; !n.val.IsNil() {
			return n.key, n.val, true
		}
	}
	return Nil, Nil, true
}

// index is the position of key k in iteration order (-1 for nil).
func (t *Table) index(k Value) (int, bool) {
	if k.IsNil() {
		return -1, true
	}
	if k.p == numberTagP {
		if i := arrayIndex(k.num()); i > 0 && i <= len(t.array) {
			return i - 1, true
		}
	}
	if i := t.find(k); i >= 0 {
		return len(t.array) + i, true
	}
	return 0, false
}

// ForEach calls f for each entry in next's order.
func (t *Table) ForEach(f func(k, v Value)) {
	for i, v := range t.array {
		if !v.IsNil() {
			f(Number(float64(i+1)), v)
		}
	}
	for i := range t.node {
		if n := &t.node[i]; !n.val.IsNil() {
			f(n.key, n.val)
		}
	}
}

// resizeArray gives the array part n slots, keeping the hash part's
// size (luaH_resizearray: a constructor whose last item is a call).
func (t *Table) resizeArray(n int) {
	t.own()
	t.resize(n, len(t.node))
}

// bytes is t's size in memory.
func (t *Table) bytes() int {
	return int(unsafe.Sizeof(*t)) + len(t.array)*int(unsafe.Sizeof(Value{})) + len(t.node)*int(unsafe.Sizeof(node{}))
}

// tableGraphBytes is the size of t and of the tables it reaches (keys,
// values, metatables), each counted once.
func tableGraphBytes(t *Table, seen map[*Table]bool) int64 {
	if t == nil || seen[t] {
		return 0
	}
	seen[t] = true
	n := int64(t.bytes())
	t.ForEach(func(k, v Value) {
		n += tableGraphBytes(k.AsTable(), seen) + tableGraphBytes(v.AsTable(), seen)
	})
	return n + tableGraphBytes(t.meta, seen)
}

// pointer is t's address, for tostring.
func (t *Table) pointer() uintptr { return uintptr(unsafe.Pointer(t)) }
