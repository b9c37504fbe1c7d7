package engine

import (
	"math"
)

// Ranks. A packed set answers everything by a linear scan, as a listpack
// does. The B-tree counts the items below each node, which GetAt uses to
// reach an index in O(log n); the library has no way to ask for the index
// of an item, so a rank is a binary search over indexes: O(log n) probes of
// O(log n) each, O(log² n) in all. Ranges by index (GetAt then an in-order
// walk) are O(log n + m), and ranges by score from their first element (a
// seek then a walk) need no rank at all.

// searchIndex returns the smallest index whose item satisfies pred, or
// Len() when none does; pred must be false then true along the order.
func (z *ZSet) searchIndex(pred func(zitem) bool) int {
	if z.packed() {
		i := z.pack.n
		z.pack.scan(0, 0, func(_, idx int, it zitem) bool {
			if pred(it) {
				i = idx
				return false
			}
			return true
		})
		return i
	}
	lo, hi := 0, z.tree.Len()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		it, _ := z.tree.GetAt(mid)
		if pred(it) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// at returns the item at index i (0 <= i < Len()).
func (z *ZSet) at(i int) zitem {
	if z.packed() {
		it, _ := zpRead(z.pack.b, z.pack.offsetOf(i))
		return it
	}
	it, _ := z.tree.GetAt(i)
	return it
}

// Rank is ZRANK (ZREVRANK with reverse); false when member is absent.
func (z *ZSet) Rank(member []byte, reverse bool) (int, bool) {
	var r int
	if z.packed() {
		_, _, idx, _, ok := z.pack.find(str(member))
		if !ok {
			return 0, false
		}
		r = idx
	} else {
		stored, sc := z.dict.Find(str(member))
		if sc == nil {
			return 0, false
		}
		target := zitem{*sc, stored}
		r = z.searchIndex(func(it zitem) bool { return !zless(it, target) })
	}
	if reverse {
		r = z.Len() - 1 - r
	}
	return r, true
}

// walk calls fn for the items from index i on, ascending or descending,
// until fn returns false.
func (z *ZSet) walk(i int, reverse bool, fn func(zitem) bool) {
	if i < 0 || i >= z.Len() {
		return
	}
	if z.packed() {
		if reverse {
			z.pack.descend(i, fn)
		} else {
			z.pack.scan(z.pack.offsetOf(i), i, func(_, _ int, it zitem) bool { return fn(it) })
		}
		return
	}
	pivot := z.at(i)
	if reverse {
		z.tree.Descend(pivot, fn)
	} else {
		z.tree.Ascend(pivot, fn)
	}
}

// ascend calls fn for the items not less than pivot, ascending, until fn
// returns false.
func (z *ZSet) ascend(pivot zitem, fn func(zitem) bool) {
	if z.packed() {
		off, idx := z.pack.seek(pivot)
		z.pack.scan(off, idx, func(_, _ int, it zitem) bool { return fn(it) })
		return
	}
	z.tree.Ascend(pivot, fn)
}

// descend calls fn for the items not greater than pivot, descending,
// until fn returns false.
func (z *ZSet) descend(pivot zitem, fn func(zitem) bool) {
	if z.packed() {
		last := -1
		z.pack.scan(0, 0, func(_, idx int, it zitem) bool {
			if zless(pivot, it) {
				return false
			}
			last = idx
			return true
		})
		z.pack.descend(last, fn)
		return
	}
	z.tree.Descend(pivot, fn)
}

// RangeByRank is ZRANGE by index with Redis's normalization (negative
// indexes count from the end, out-of-range ends are clamped); reverse
// counts from the highest score.
func (z *ZSet) RangeByRank(start, end int64, reverse bool) []ScoreMember {
	from, n := rankSpan(start, end, int64(z.Len()))
	if n == 0 {
		return nil
	}
	out := make([]ScoreMember, 0, n)
	i := from
	if reverse {
		i = z.Len() - 1 - from
	}
	z.walk(i, reverse, func(it zitem) bool {
		out = append(out, ScoreMember{it.member, it.score})
		return len(out) < n
	})
	return out
}

// rankSpan normalizes a start/end index pair over llen elements into a
// first index and a count (0 for an empty range).
func rankSpan(start, end, llen int64) (from, n int) {
	if start < 0 {
		start += llen
	}
	if end < 0 {
		end += llen
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= llen {
		return 0, 0
	}
	if end >= llen {
		end = llen - 1
	}
	return int(start), int(end - start + 1)
}

// scoreSeekFirst finds the first item with a score at or above the
// range's minimum (a tree seek, no rank).
func (z *ZSet) scoreSeekFirst(r *ScoreRange) (zitem, bool) {
	pivot := zitem{score: r.Min}
	if r.MinEx {
		if math.IsInf(r.Min, 1) {
			return zitem{}, false
		}
		pivot.score = math.Nextafter(r.Min, math.Inf(1))
	}
	var found zitem
	ok := false
	z.ascend(pivot, func(it zitem) bool {
		found, ok = it, true
		return false
	})
	return found, ok
}

// scoreSeekLast finds the last item with a score at or below the range's
// maximum.
func (z *ZSet) scoreSeekLast(r *ScoreRange) (zitem, bool) {
	var found zitem
	ok := false
	visit := func(it zitem) bool {
		if !r.lteMax(it.score) {
			return true // the pivot itself, just above the bound
		}
		found, ok = it, true
		return false
	}
	switch {
	case math.IsInf(r.Max, 1) && !r.MaxEx:
		z.forEach(true, visit)
	case r.MaxEx:
		z.descend(zitem{score: r.Max}, visit)
	default:
		z.descend(zitem{score: math.Nextafter(r.Max, math.Inf(1))}, visit)
	}
	return found, ok
}

// Count is ZCOUNT: two rank searches, O(log² n).
func (z *ZSet) Count(r ScoreRange) int {
	lo := z.searchIndex(func(it zitem) bool { return r.gteMin(it.score) })
	hi := z.searchIndex(func(it zitem) bool { return !r.lteMax(it.score) })
	return max(hi-lo, 0)
}

// RangeByScore is ZRANGEBYSCORE (ZREVRANGEBYSCORE with reverse, the
// range then walked from its maximum): skip offset elements of the range,
// then return up to limit (all when limit < 0). As in Redis, a negative
// offset skips everything.
func (z *ZSet) RangeByScore(r ScoreRange, offset, limit int64, reverse bool) []ScoreMember {
	n := int64(z.Len())
	if offset < 0 || (offset > 0 && offset >= n) || limit == 0 {
		return nil
	}
	var out []ScoreMember
	emit := func(it zitem) bool {
		if reverse && !r.gteMin(it.score) || !reverse && !r.lteMax(it.score) {
			return false
		}
		out = append(out, ScoreMember{it.member, it.score})
		return limit < 0 || int64(len(out)) < limit
	}
	if offset == 0 {
		var start zitem
		var ok bool
		if reverse {
			start, ok = z.scoreSeekLast(&r)
		} else {
			start, ok = z.scoreSeekFirst(&r)
		}
		if !ok || !r.contains(start.score) {
			return nil
		}
		if reverse {
			z.descend(start, emit)
		} else {
			z.ascend(start, emit)
		}
		return out
	}
	// With an offset, find the range's end by rank and step over the
	// offset by index instead of element by element.
	if reverse {
		last := z.searchIndex(func(it zitem) bool { return !r.lteMax(it.score) }) - 1
		if last < 0 || !r.gteMin(z.at(last).score) {
			return nil
		}
		z.walk(last-int(offset), true, emit)
	} else {
		first := z.searchIndex(func(it zitem) bool { return r.gteMin(it.score) })
		if first >= int(n) || !r.lteMax(z.at(first).score) {
			return nil
		}
		z.walk(first+int(offset), false, emit)
	}
	return out
}

// Lex ranges assume every member has the same score (the only case Redis
// defines). With mixed scores Redis answers from its encoding: a listpack
// is scanned from an end, a skiplist is searched along its random levels.
// Sets Redis would keep in a listpack are scanned the same way here, so
// they answer exactly as Redis does even then; larger sets use a binary
// search, which is exact whenever the scores are equal.

// lexFirst returns the index of the first element of the range, or -1.
func (z *ZSet) lexFirst(r *LexRange) int {
	n := z.Len()
	if n == 0 {
		return -1
	}
	i := -1
	if z.packed() {
		if !z.lexMayContain(r) {
			return -1
		}
		idx := 0
		z.forEach(false, func(it zitem) bool {
			if r.gteMin(it.member) {
				i = idx
				return false
			}
			idx++
			return true
		})
	} else {
		i = z.searchIndex(func(it zitem) bool { return r.gteMin(it.member) })
	}
	if i < 0 || i >= n || !r.lteMax(z.at(i).member) {
		return -1
	}
	return i
}

// lexLast returns the index of the last element of the range, or -1.
func (z *ZSet) lexLast(r *LexRange) int {
	n := z.Len()
	if n == 0 {
		return -1
	}
	i := -1
	if z.packed() {
		if !z.lexMayContain(r) {
			return -1
		}
		idx := n - 1
		z.forEach(true, func(it zitem) bool {
			if r.lteMax(it.member) {
				i = idx
				return false
			}
			idx--
			return true
		})
	} else {
		i = z.searchIndex(func(it zitem) bool { return !r.lteMax(it.member) }) - 1
	}
	if i < 0 || !r.gteMin(z.at(i).member) {
		return -1
	}
	return i
}

// lexMayContain is Redis's quick rejection: a non-empty range whose
// minimum is not above the last member and whose maximum is not below the
// first.
func (z *ZSet) lexMayContain(r *LexRange) bool {
	if r.empty() {
		return false
	}
	lo, _ := z.first()
	hi, _ := z.last()
	return r.gteMin(hi.member) && r.lteMax(lo.member)
}

// lexSpan is the index span [from, to) of the range: from its first
// element while members stay within the maximum.
func (z *ZSet) lexSpan(r *LexRange) (from, to int) {
	from = z.lexFirst(r)
	if from < 0 {
		return 0, 0
	}
	if !z.packed() {
		to = z.searchIndex(func(it zitem) bool { return !r.lteMax(it.member) })
		return from, max(to, from+1)
	}
	to = from
	z.walk(from, false, func(it zitem) bool {
		if !r.lteMax(it.member) {
			return false
		}
		to++
		return true
	})
	return from, to
}

// LexCount is ZLEXCOUNT.
func (z *ZSet) LexCount(r LexRange) int {
	from, to := z.lexSpan(&r)
	return to - from
}

// RangeByLex is ZRANGEBYLEX (ZREVRANGEBYLEX with reverse), with
// RangeByScore's offset and limit rules.
func (z *ZSet) RangeByLex(r LexRange, offset, limit int64, reverse bool) []ScoreMember {
	if offset < 0 || limit == 0 {
		return nil
	}
	var i int
	if reverse {
		i = z.lexLast(&r)
	} else {
		i = z.lexFirst(&r)
	}
	if i < 0 || offset >= int64(z.Len()) {
		return nil
	}
	if reverse {
		i -= int(offset)
	} else {
		i += int(offset)
	}
	var out []ScoreMember
	z.walk(i, reverse, func(it zitem) bool {
		if reverse && !r.gteMin(it.member) || !reverse && !r.lteMax(it.member) {
			return false
		}
		out = append(out, ScoreMember{it.member, it.score})
		return limit < 0 || int64(len(out)) < limit
	})
	return out
}

// forEach calls fn for every item in order (from the highest with
// reverse) until fn returns false.
func (z *ZSet) forEach(reverse bool, fn func(zitem) bool) {
	if z.packed() {
		if reverse {
			z.pack.descend(z.pack.n-1, fn)
		} else {
			z.pack.scan(0, 0, func(_, _ int, it zitem) bool { return fn(it) })
		}
		return
	}
	if reverse {
		z.tree.Reverse(fn)
	} else {
		z.tree.Scan(fn)
	}
}
