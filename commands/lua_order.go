package commands

import (
	"math"
	"math/bits"
	"reflect"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's next() walks a table's array part, then its hash nodes in
// slot order, so the order cjson.encode writes an object's keys in (and
// cmsgpack a map's) is where Lua's hash put them. gopher-lua keeps keys
// in insertion order instead. luaNextOrder replays the table's keys, in
// that order, into a model of Lua 5.1's table (ltable.c as Redis ships it:
// string hashes over every byte, main positions, collision chains, free
// slots taken from the end, rehash on a full node vector) and reads the
// model's order back. The model starts from an empty table, as tables
// built by assignment or by cjson.decode do; a table constructor sizes
// its hash part up front, which only changes the order of keys that
// collide in a table of more than two keys, so markConstructors leaves
// the constructor's size where luaNextOrder finds it.

type luaModelNode struct {
	key    lua.LValue
	hasVal bool
	next   int // -1: end of chain
}

type luaModelTable struct {
	array    []bool // present slots of the array part
	nodes    []luaModelNode
	lastFree int
}

// luaNextOrder returns t's keys and values in the order Lua 5.1's next()
// would give them.
func luaNextOrder(t *lua.LTable) (keys, vals []lua.LValue) {
	byKey := map[lua.LValue]lua.LValue{}
	var m luaModelTable
	if hint := constructorHint(t); hint > 0 {
		m.resize(0, hint)
	}
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		byKey[k] = v
		m.insert(k)
	}
	for i, ok := range m.array {
		if ok {
			k := lua.LNumber(i + 1)
			keys, vals = append(keys, k), append(vals, byKey[k])
		}
	}
	for _, n := range m.nodes {
		if n.hasVal {
			keys, vals = append(keys, n.key), append(vals, byKey[n.key])
		}
	}
	return keys, vals
}

// luaStringHash is Lua's string hash, over every byte (Redis's Lua).
func luaStringHash(s string) uint32 {
	h := uint32(len(s))
	for i := len(s); i > 0; i-- {
		h ^= (h << 5) + (h >> 2) + uint32(s[i-1])
	}
	return h
}

func (m *luaModelTable) mainPosition(k lua.LValue) int {
	size := len(m.nodes)
	switch x := k.(type) {
	case lua.LString:
		return int(luaStringHash(string(x)) & uint32(size-1))
	case lua.LNumber:
		if x == 0 {
			return 0
		}
		b := math.Float64bits(float64(x))
		sum := uint32(b) + uint32(b>>32)
		return int(sum % uint32((size-1)|1))
	case lua.LBool:
		if x {
			return 1 & (size - 1)
		}
		return 0
	}
	return 0 // other keys hash by address in Lua: any slot is as right
}

// arrayIndex is the key's array index, or 0.
func arrayIndex(k lua.LValue) int {
	if n, ok := k.(lua.LNumber); ok && float64(n) == math.Trunc(float64(n)) && n >= 1 && n <= 1<<26 {
		return int(n)
	}
	return 0
}

func (m *luaModelTable) insert(k lua.LValue) {
	if i := arrayIndex(k); i > 0 && i <= len(m.array) {
		m.array[i-1] = true
		return
	}
	m.newKey(k)
}

func (m *luaModelTable) getFreePos() int {
	for m.lastFree > 0 {
		m.lastFree--
		if m.nodes[m.lastFree].key == nil {
			return m.lastFree
		}
	}
	return -1
}

func (m *luaModelTable) newKey(k lua.LValue) {
	if len(m.nodes) == 0 {
		m.rehash(k)
		m.insert(k)
		return
	}
	mp := m.mainPosition(k)
	if m.nodes[mp].hasVal {
		n := m.getFreePos()
		if n < 0 {
			m.rehash(k)
			m.insert(k)
			return
		}
		other := m.mainPosition(m.nodes[mp].key)
		if other != mp { // the colliding node is out of its main position: move it
			for m.nodes[other].next != mp {
				other = m.nodes[other].next
			}
			m.nodes[other].next = n
			m.nodes[n] = m.nodes[mp]
			m.nodes[mp].next = -1
			m.nodes[mp].hasVal = false
		} else { // the new key goes to the free slot, chained after mp
			m.nodes[n].next = m.nodes[mp].next
			m.nodes[mp].next = n
			mp = n
		}
	}
	m.nodes[mp].key = k
	m.nodes[mp].hasVal = true
}

// rehash resizes for the keys present plus extra, as Lua's rehash does.
func (m *luaModelTable) rehash(extra lua.LValue) {
	var nums [27]int
	count := func(k lua.LValue) int {
		if i := arrayIndex(k); i > 0 {
			nums[ceilLog2(i)]++
			return 1
		}
		return 0
	}
	nasize, total := 0, 0
	for i, ok := range m.array {
		if ok {
			nasize += count(lua.LNumber(i + 1))
			total++
		}
	}
	for _, n := range m.nodes {
		if n.hasVal {
			nasize += count(n.key)
			total++
		}
	}
	nasize += count(extra)
	total++
	// computesizes: the largest power of two n with more than n/2 of
	// 1..n present.
	a, na, n := 0, 0, 0
	for i, twoToI := 0, 1; twoToI/2 < nasize; i, twoToI = i+1, twoToI*2 {
		if nums[i] > 0 {
			a += nums[i]
			if a > twoToI/2 {
				n, na = twoToI, a
			}
		}
		if a == nasize {
			break
		}
	}
	m.resize(n, total-na)
}

func (m *luaModelTable) resize(nasize, nhsize int) {
	oldArray, oldNodes := m.array, m.nodes
	if nasize > len(oldArray) {
		m.array = append(append([]bool(nil), oldArray...), make([]bool, nasize-len(oldArray))...)
	}
	size := 0
	if nhsize > 0 {
		size = 1 << ceilLog2(nhsize)
	}
	m.nodes = make([]luaModelNode, size)
	for i := range m.nodes {
		m.nodes[i].next = -1
	}
	m.lastFree = size
	if nasize < len(oldArray) {
		m.array = oldArray[:nasize]
		for i := nasize; i < len(oldArray); i++ {
			if oldArray[i] {
				m.insert(lua.LNumber(i + 1))
			}
		}
	}
	for i := len(oldNodes) - 1; i >= 0; i-- {
		if oldNodes[i].hasVal {
			m.insert(oldNodes[i].key)
		}
	}
}

// ceilLog2 is Lua's ceillog2: the least l with 2^l >= x.
func ceilLog2(x int) int {
	if x <= 1 {
		return 0
	}
	return bits.Len(uint(x - 1))
}

// A record constructor ({a=1, b=2}) compiles to OP_NEWTABLE with B, the
// array size hint, 0 and C, the hash size hint (Lua's "floating point
// byte"). The interpreter only uses the hints as Go capacities, so
// markConstructors copies C into B: the table's (empty) array part then
// has C as its capacity, which constructorHint reads back. Nothing else
// changes: a capacity is not a length.
func markConstructors(p *lua.FunctionProto) {
	for i, inst := range p.Code {
		if int(inst>>26) == lua.OP_NEWTABLE && inst&0x1ff == 0 {
			if c := (inst >> 9) & 0x1ff; c != 0 && c != goTableCap {
				p.Code[i] = inst | c
			}
		}
	}
	for _, sub := range p.FunctionPrototypes {
		markConstructors(sub)
	}
}

// goTableCap is the array capacity of tables made by LState.NewTable
// (from Go: cjson.decode, replies), which are not constructors; a
// constructor whose hint is the same number is left unmarked.
const goTableCap = 32

// tableArrayField is the index of LTable's array part, read (never
// written) through reflection: the one place this depends on the
// interpreter's layout, which TestConstructorHint pins.
var tableArrayField = func() int {
	f, ok := reflect.TypeOf(lua.LTable{}).FieldByName("array")
	if !ok || f.Type.Kind() != reflect.Slice {
		return -1
	}
	return f.Index[0]
}()

// constructorHint is the hash size a record constructor gave t, or 0.
func constructorHint(t *lua.LTable) int {
	if tableArrayField < 0 {
		return 0
	}
	a := reflect.ValueOf(t).Elem().Field(tableArrayField)
	if a.Len() != 0 || a.Cap() == 0 || a.Cap() == goTableCap {
		return 0
	}
	return fb2int(a.Cap())
}

// fb2int decodes Lua's "floating point byte" (eeeeexxx).
func fb2int(x int) int {
	e := (x >> 3) & 31
	if e == 0 {
		return x
	}
	return ((x & 7) + 8) << (e - 1)
}
