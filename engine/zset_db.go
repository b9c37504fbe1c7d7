package engine

import (
	"errors"
	"math"
	"slices"
)

// Database operations on sorted sets. Each mutation persists exactly the
// members it changed (zset_persist.go: a record per member, a run of
// members as one range), calls
// modified() once per changed member (WATCH, and the dirty counter as Redis
// counts it), deletes a key it empties, and signals the key ready when it
// added members so blocked BZPOPMIN/BZMPOP clients are served.

// ErrScoreNaN is Redis's reply when an increment leaves a NaN score.
var ErrScoreNaN = errors.New("ERR resulting score is not a number (NaN)")

// zsetAt returns key's sorted set, nil when absent. read looks it up as a
// read command does (statistics, keymiss event), otherwise as a write.
func (db *DB) zsetAt(key []byte, read bool) (*ZSet, error) {
	return lookupAs[*ZSet](db, key, read)
}

// ZSetRead looks key up for a read command: nil when absent,
// ErrWrongType when it holds another type.
func (db *DB) ZSetRead(key []byte) (*ZSet, error) { return db.zsetAt(key, true) }

// ZSetWrite looks key up for a write command (no hit/miss counted).
func (db *DB) ZSetWrite(key []byte) (*ZSet, error) { return db.zsetAt(key, false) }

// ZAddFlags are ZADD's options (ZINCRBY is ZADD INCR).
type ZAddFlags struct {
	NX, XX, GT, LT, Incr bool
}

// ZAddResult tells what ZADD did.
type ZAddResult struct {
	Added, Updated int
	// Processed counts members neither NX, XX, GT nor LT skipped; Score
	// is the last one's resulting score (ZINCRBY's reply).
	Processed int
	Score     float64
}

// ZAdd adds or updates members with scores, creating the key unless XX.
func (db *DB) ZAdd(key []byte, f ZAddFlags, scores []float64, members [][]byte) (ZAddResult, error) {
	var r ZAddResult
	z, err := db.zsetAt(key, false)
	if err != nil || (z == nil && (f.XX || len(members) == 0)) {
		return r, err
	}
	lim := &db.e.limits
	if z == nil {
		z = NewZSet()
		// The first member is always added to a new key, so its length
		// decides the encoding at creation, as in Redis.
		if exceedsListpack(lim, 1, len(members[0])) {
			z.toSkiplist()
		}
		db.Set(key, z, true)
	}
	for i, m := range members {
		score := scores[i]
		cur, exists := z.score(str(m))
		if exists {
			if f.NX {
				continue
			}
			if f.Incr {
				score += cur
				if math.IsNaN(score) {
					return r, ErrScoreNaN
				}
			}
			if (f.LT && score >= cur) || (f.GT && score <= cur) {
				continue
			}
			r.Processed++
			r.Score = score
			if score != cur {
				score = z.storedScore(score)
				z.setScore(str(m), cur, score)
				r.Updated++
				db.deleteZItem(key, cur, str(m))
				db.putZItem(key, score, str(m))
				db.modified(key)
			}
			continue
		}
		if f.XX {
			continue
		}
		db.zsetGrow(z, len(m))
		r.Added++
		r.Processed++
		r.Score = score
		score = z.storedScore(score)
		z.insertNew(str(m), score)
		db.putZItem(key, score, str(m))
		db.modified(key)
	}
	if r.Added > 0 {
		db.signalReady(key)
	}
	return r, nil
}

// zsetGrow applies Redis's conversion rule before a new member of
// memberLen bytes is added: past the listpack limits the set becomes a
// skiplist for good. (Nothing to persist: a restart derives the encoding
// from the contents, as Redis does loading a dump.)
func (db *DB) zsetGrow(z *ZSet, memberLen int) {
	if z.packed() && exceedsListpack(&db.e.limits, z.Len()+1, memberLen) {
		z.toSkiplist()
	}
}

// ZRem removes members and returns how many were there; keyRemoved
// reports that the set became empty and the key was deleted.
func (db *DB) ZRem(key []byte, members [][]byte) (removed int, keyRemoved bool, err error) {
	z, err := db.zsetAt(key, false)
	if z == nil || err != nil {
		return 0, false, err
	}
	for _, m := range members {
		if score, ok := z.remove(str(m)); ok {
			removed++
			db.deleteZItem(key, score, str(m))
			db.modified(key)
		}
		if z.Len() == 0 {
			db.Delete(key)
			return removed, true, nil
		}
	}
	return removed, false, nil
}

// ZPop removes and returns up to count members from the low end (the high
// end with max). nil when the key is absent; deleted reports that the key
// was emptied and deleted.
func (db *DB) ZPop(key []byte, max bool, count int) (out []ScoreMember, deleted bool, err error) {
	z, err := db.zsetAt(key, false)
	if z == nil || err != nil || count <= 0 {
		return nil, false, err
	}
	count = min(count, z.Len())
	out = make([]ScoreMember, 0, count)
	z.popN(max, count, func(it zitem) {
		db.modified(key)
		out = append(out, ScoreMember{it.member, it.score})
	})
	if z.Len() == 0 {
		db.Delete(key)
		return out, true, nil
	}
	// One range from the first member popped to the new end of the set,
	// which the next pop's range then continues.
	top := zitem{out[0].Score, out[0].Member}
	if max {
		end, _ := z.last()
		db.deleteZRange(key, end, true, top, true)
	} else {
		end, _ := z.first()
		db.deleteZRange(key, top, false, end, false)
	}
	return out, false, nil
}

// ZRemRangeByRank is ZREMRANGEBYRANK.
func (db *DB) ZRemRangeByRank(key []byte, start, end int64) (int, bool, error) {
	return db.zremSpan(key, func(z *ZSet) (int, int) {
		from, n := rankSpan(start, end, int64(z.Len()))
		return from, from + n
	})
}

// ZRemRangeByScore is ZREMRANGEBYSCORE.
func (db *DB) ZRemRangeByScore(key []byte, r ScoreRange) (int, bool, error) {
	z, err := db.zsetAt(key, false)
	if z == nil || err != nil {
		return 0, false, err
	}
	// Both ends by seeking, no rank: O(log n + m).
	lo, ok1 := z.scoreSeekFirst(&r)
	hi, ok2 := z.scoreSeekLast(&r)
	if !ok1 || !ok2 || !r.contains(lo.score) || zless(hi, lo) {
		return 0, false, nil
	}
	return db.zremItems(key, z, lo, hi)
}

// ZRemRangeByLex is ZREMRANGEBYLEX.
func (db *DB) ZRemRangeByLex(key []byte, r LexRange) (int, bool, error) {
	return db.zremSpan(key, func(z *ZSet) (int, int) { return z.lexSpan(&r) })
}

// zremSpan removes the index span [from, to) that span computes.
func (db *DB) zremSpan(key []byte, span func(z *ZSet) (int, int)) (int, bool, error) {
	z, err := db.zsetAt(key, false)
	if z == nil || err != nil {
		return 0, false, err
	}
	from, to := span(z)
	if to <= from {
		return 0, false, nil
	}
	return db.zremItems(key, z, z.at(from), z.at(to-1))
}

// zremItems removes every item from lo to hi inclusive in one bulk
// deletion (one splice of a pack, DeleteRange of a tree), then each member
// from the store.
func (db *DB) zremItems(key []byte, z *ZSet, lo, hi zitem) (int, bool, error) {
	n := 0
	z.removeBetween(lo, hi, func(zitem) {
		db.modified(key)
		n++
	})
	if z.Len() == 0 {
		db.Delete(key)
		return n, true, nil
	}
	db.deleteZRange(key, lo, false, hi, true)
	return n, false, nil
}

// ZStore replaces dst, whatever it held, with a sorted set of items
// (distinct, in any order), as ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE and
// ZRANGESTORE do; no items deletes dst instead. The encoding is chosen from
// the result, as Redis chooses it for these destinations. deleted reports
// that an empty result deleted an existing dst.
func (db *DB) ZStore(dst []byte, items []ScoreMember) (deleted bool) {
	if len(items) == 0 {
		return db.Delete(dst)
	}
	longest := 0
	for _, it := range items {
		longest = max(longest, len(it.Member))
	}
	z := NewZSet()
	if exceedsListpack(&db.e.limits, len(items), longest) {
		z.toSkiplist()
		for _, it := range items {
			z.appendSorted(it.Member, it.Score)
		}
	} else {
		if !slices.IsSortedFunc(items, compareScoreMember) {
			// ZRANGESTORE ... REV gives its range from the top.
			items = slices.Clone(items)
			slices.SortFunc(items, compareScoreMember)
		}
		z.pack.build(items, z.storedScore)
	}
	db.Set(dst, z, false)
	db.signalReady(dst)
	return false
}
