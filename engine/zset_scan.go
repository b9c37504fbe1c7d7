package engine

import (
	"math/rand/v2"
)

// Scan is ZSCAN. A set Redis would keep in a listpack is returned whole
// with cursor 0, as Redis does; a larger one is scanned through its dict,
// whose cursor guarantees that a member present for the whole scan is
// returned at least once however the table grows or shrinks. It visits
// buckets until count members are collected, the scan ends, or ten times
// count buckets came up (Redis's bound for a sparse table).
func (z *ZSet) Scan(cursor uint64, count int, fn func(member string, score float64)) uint64 {
	if z.packed() {
		z.forEach(false, func(it zitem) bool {
			fn(it.member, it.score)
			return true
		})
		return 0
	}
	collected := 0
	for maxIter := count * 2 * 10; ; maxIter-- {
		cursor = z.dict.Scan(cursor, func(m string, sc *float64) {
			fn(m, *sc)
			collected++
		})
		if cursor == 0 || maxIter == 0 || collected >= count {
			return cursor
		}
	}
}

// RandomMember returns one member chosen uniformly (ZRANDMEMBER without a
// count). The set must not be empty.
func (z *ZSet) RandomMember() ScoreMember {
	it := z.at(rand.IntN(z.Len()))
	return ScoreMember{it.member, it.score}
}

// RandomLen is how many elements ZRANDMEMBER with count returns: count
// with repetitions (unique false), else at most the set's size.
func (z *ZSet) RandomLen(count uint64, unique bool) uint64 {
	if !unique || count == 1 {
		return count
	}
	return min(count, uint64(z.Len()))
}

// RandomMembers is ZRANDMEMBER with a count, calling fn RandomLen times:
// with repetitions, each pick uniform; without, distinct members, the
// whole set (from the highest element down, as Redis returns it) when
// count reaches its size.
func (z *ZSet) RandomMembers(count uint64, unique bool, fn func(ScoreMember)) {
	n := z.Len()
	at := z.indexer()
	if !unique || count == 1 {
		for range count {
			it := at(rand.IntN(n))
			fn(ScoreMember{it.member, it.score})
		}
		return
	}
	if count >= uint64(n) {
		z.forEach(true, func(it zitem) bool {
			fn(ScoreMember{it.member, it.score})
			return true
		})
		return
	}
	k := int(count)
	if k*3 > n {
		// Most of the set: shuffle the first k of all indexes.
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		for i := 0; i < k; i++ {
			j := i + rand.IntN(n-i)
			idx[i], idx[j] = idx[j], idx[i]
			it := at(idx[i])
			fn(ScoreMember{it.member, it.score})
		}
		return
	}
	// A small part of a large set: draw until k distinct.
	seen := make(map[int]struct{}, k)
	for len(seen) < k {
		i := rand.IntN(n)
		if _, dup := seen[i]; dup {
			continue
		}
		seen[i] = struct{}{}
		it := at(i)
		fn(ScoreMember{it.member, it.score})
	}
}

// indexer returns the item at an index, for many random accesses: a
// packed set decodes its entries' offsets once.
func (z *ZSet) indexer() func(int) zitem {
	if !z.packed() {
		return z.at
	}
	b := z.pack.b
	offs := z.pack.offsets(make([]int, 0, z.pack.n), z.pack.n)
	return func(i int) zitem {
		it, _ := zpRead(b, offs[i])
		return it
	}
}
