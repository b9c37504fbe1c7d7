package engine

import (
	"unsafe"

	"github.com/tidwall/btree"
)

// ZSet is a sorted set: members ordered by (score, member), as in Redis.
// Like Redis it has two forms:
//
//   - while small (what OBJECT ENCODING reports as "listpack"), a zpack:
//     one byte slice of (score, member) entries in order, scanned linearly
//     (zset_pack.go);
//   - once an insert makes the set exceed zset-max-listpack-entries or
//     brings a member longer than zset-max-listpack-value ("skiplist"), for
//     good, as Redis never converts back on its own, two indexes sharing
//     each member's bytes:
//     tree, a counted B-tree of (score, member) pairs: ordered iteration,
//     index access (GetAt) for rank ranges, bulk range deletion;
//     dict, member -> score: O(1) ZSCORE and membership, and ZSCAN's
//     cursor with Redis's guarantee (see Dict.Scan).
//
// The methods below and in zset_range.go (score, insertNew, remove,
// setScore, at, walk, ascend, descend, forEach, searchIndex, popN,
// removeBetween) hide the form from the commands.
//
// Persistence writes one item record per member, keyed by score then
// member (zset_persist.go), so a write persists only the members it changed
// and a run of members removed together is one range deletion; the value
// record is empty. A restart rebuilds the set from the item records, packed
// while it stays within the thresholds.
type ZSet struct {
	objHeader
	pack zpack // the listpack form, used while tree is nil
	tree *btree.BTreeG[zitem]
	dict *Dict[float64]
	// longBytes is the memory of members too long to live inside their
	// dict node (MemoryUsage without a walk).
	longBytes int
	// lim is the engine's thresholds while the set loads at start-up.
	lim *Limits
}

// zitem is one element of the tree. member is the dict's stored key, so
// the bytes exist once.
type zitem struct {
	score  float64
	member string
}

// zless orders by score, then member bytes (memcmp, shorter first): Redis's
// skiplist order. -0 and 0 compare equal, as they do there.
func zless(a, b zitem) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.member < b.member
}

// zsetDegree sets the B-tree's fan-out: nodes of up to 31 items. Smaller
// nodes make GetAt (which scans child counts linearly) cheaper, so ranks
// cost less, at a small cost in per-node overhead.
const zsetDegree = 16

// NewZSet returns an empty sorted set, in the listpack form.
func NewZSet() *ZSet { return &ZSet{} }

// packed reports the listpack form.
func (z *ZSet) packed() bool { return z.tree == nil }

// toSkiplist converts the set to the tree and dict form, for good (a no-op
// when it has it already).
func (z *ZSet) toSkiplist() {
	if !z.packed() {
		return
	}
	p := z.pack
	z.pack = zpack{}
	z.tree = btree.NewBTreeGOptions(zless, btree.Options{NoLocks: true, Degree: zsetDegree})
	z.dict = NewDict[float64]()
	p.scan(0, 0, func(_, _ int, it zitem) bool {
		z.appendSorted(it.member, it.score)
		return true
	})
}

// ScoreMember is one element as commands see it. Member aliases the set's
// own bytes: a tree member's never change, a packed member's stay valid
// until a score update of the set (see zpack).
type ScoreMember struct {
	Member string
	Score  float64
}

// Type implements Object.
func (z *ZSet) Type() Type { return TypeZSet }

// Len is the number of members.
func (z *ZSet) Len() int {
	if z.packed() {
		return z.pack.n
	}
	return z.tree.Len()
}

// Encoding implements Object.
func (z *ZSet) Encoding() string {
	if z.packed() {
		return "listpack"
	}
	return "skiplist"
}

// Clone implements Object: an independent copy with the same encoding, as
// Redis's COPY keeps it.
func (z *ZSet) Clone() Object {
	c := NewZSet()
	if z.packed() {
		// The buffer is copy-on-write, but a copy keeps the clone's
		// memory its own.
		c.pack = zpack{b: append([]byte(nil), z.pack.b...), n: z.pack.n}
		return c
	}
	c.toSkiplist()
	z.tree.Scan(func(it zitem) bool {
		c.appendSorted(it.member, it.score)
		return true
	})
	return c
}

// appendSorted adds a member known to be absent and greater than every
// member present to the tree form (copies and loads of ordered data).
func (z *ZSet) appendSorted(member string, score float64) {
	stored, sc, _ := z.dict.Insert(member)
	*sc = score
	z.noteMember(stored, 1)
	z.tree.Load(zitem{score, stored})
}

// MemoryUsage implements Object. Packed: the struct and the buffer.
// Otherwise the struct, the dict's buckets and nodes, the tree's items
// (half-full nodes on average after splits) and members stored outside
// their node.
func (z *ZSet) MemoryUsage() int {
	if z.packed() {
		return 64 + roundAlloc(cap(z.pack.b))
	}
	b0, b1 := z.dict.Buckets()
	n := z.Len()
	return 64 + 8*(b0+b1) + n*(48+36) + z.longBytes
}

// noteMember keeps longBytes: d is +1 for an added member, -1 for a
// removed one.
func (z *ZSet) noteMember(member string, d int) {
	if len(member) > dictShortKey {
		z.longBytes += d * roundAlloc(len(member))
	}
}

// insertNew adds a member known to be absent, copying its bytes.
func (z *ZSet) insertNew(member string, score float64) {
	if z.packed() {
		z.pack.insert(member, score)
		return
	}
	stored, sc, _ := z.dict.Insert(member)
	*sc = score
	z.noteMember(stored, 1)
	z.tree.Set(zitem{score, stored})
}

// Score returns member's score (ZSCORE).
func (z *ZSet) Score(member []byte) (float64, bool) { return z.score(str(member)) }

func (z *ZSet) score(member string) (float64, bool) {
	if z.packed() {
		_, _, _, score, ok := z.pack.find(member)
		return score, ok
	}
	sc := z.dict.Get(member)
	if sc == nil {
		return 0, false
	}
	return *sc, true
}

// remove deletes member and returns its score; false when absent.
func (z *ZSet) remove(member string) (float64, bool) {
	if z.packed() {
		return z.pack.remove(member)
	}
	stored, sc := z.dict.Find(member)
	if sc == nil {
		return 0, false
	}
	score := *sc
	z.tree.Delete(zitem{score, stored})
	z.noteMember(stored, -1)
	z.dict.Delete(stored)
	return score, true
}

// setScore moves an existing member to a new score.
func (z *ZSet) setScore(member string, old, score float64) {
	if z.packed() {
		z.pack.setScore(member, score)
		return
	}
	stored, sc := z.dict.Find(member)
	z.tree.Delete(zitem{old, stored})
	*sc = score
	z.tree.Set(zitem{score, stored})
}

// popN removes the count lowest members (highest with max), calling fn
// for each in that order.
func (z *ZSet) popN(max bool, count int, fn func(zitem)) {
	count = min(count, z.Len())
	if z.packed() {
		from := 0
		if max {
			from = z.pack.n - count
		}
		removed := z.pack.cut(from, from+count)
		if !max {
			for off := 0; off < len(removed); {
				var it zitem
				it, off = zpRead(removed, off)
				fn(it)
			}
			return
		}
		p := zpack{b: removed, n: count}
		p.descend(count-1, func(it zitem) bool { fn(it); return true })
		return
	}
	for range count {
		var it zitem
		if max {
			it, _ = z.tree.PopMax()
		} else {
			it, _ = z.tree.PopMin()
		}
		z.noteMember(it.member, -1)
		z.dict.Delete(it.member)
		fn(it)
	}
}

// removeBetween removes every item from lo to hi inclusive (both present),
// calling fn for each in order.
func (z *ZSet) removeBetween(lo, hi zitem, fn func(zitem)) {
	if z.packed() {
		_, i := z.pack.seek(lo)
		_, j := z.pack.seek(hi)
		removed := z.pack.cut(i, j+1)
		for off := 0; off < len(removed); {
			var it zitem
			it, off = zpRead(removed, off)
			fn(it)
		}
		return
	}
	deleted := z.tree.DeleteRange(lo, hi, &btreeMaxInclusive)
	deleted.Scan(func(it zitem) bool {
		z.noteMember(it.member, -1)
		z.dict.Delete(it.member)
		fn(it)
		return true
	})
}

// storedScore is the score as the set's encoding keeps it. A listpack
// stores an integral score as an integer, so -0 comes back as 0 there; a
// skiplist keeps the double as it is.
func (z *ZSet) storedScore(score float64) float64 {
	if score == 0 && z.packed() {
		return 0
	}
	return score
}

// first and last are the extremes; ok is false when empty.
func (z *ZSet) first() (zitem, bool) {
	if z.packed() {
		if z.pack.n == 0 {
			return zitem{}, false
		}
		it, _ := zpRead(z.pack.b, 0)
		return it, true
	}
	return z.tree.Min()
}

func (z *ZSet) last() (zitem, bool) {
	if z.packed() {
		if z.pack.n == 0 {
			return zitem{}, false
		}
		return z.at(z.pack.n - 1), true
	}
	return z.tree.Max()
}

// exceedsListpack reports whether a set of n members whose longest member
// has maxLen bytes is past the listpack thresholds.
func exceedsListpack(l *Limits, n int, maxLen int) bool {
	return int64(n) > l.ZSetMaxListpackEntries || int64(maxLen) > l.ZSetMaxListpackValue
}

// btreeMaxInclusive makes DeleteRange include its upper bound.
var btreeMaxInclusive = btree.DeleteRangeOptions{MaxInclusive: true}

// bytesOf views s as bytes for a callee that only reads them during the
// call (change sinks copy what they keep).
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
