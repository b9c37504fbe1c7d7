package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ZUNION, ZINTER, ZDIFF (and their STORE forms, and ZINTERCARD) take sorted
// sets and plain sets as inputs; a plain set's members all score 1.

// setMembers is what the sorted-set algebra needs from a plain set
// (TypeSet): its cardinality, its members, and membership. The set type
// implements it in set.go.
type setMembers interface {
	Len() int
	forEachMember(fn func(member string) bool)
	hasMember(member string) bool
}

// ZSource is one input of the algebra: a sorted set, a set, or a missing
// key (empty).
type ZSource struct {
	obj    Object // identity: the same key given twice is the same object
	z      *ZSet
	s      setMembers
	weight float64
}

// ZSources looks the input keys up as a read command does; a key of
// another type than set or sorted set is ErrWrongType.
func (db *DB) ZSources(keys [][]byte) ([]ZSource, error) {
	srcs := make([]ZSource, len(keys))
	for i, k := range keys {
		srcs[i].weight = 1
		obj := db.Read(k)
		switch o := obj.(type) {
		case nil:
		case *ZSet:
			srcs[i].obj, srcs[i].z = o, o
		default:
			if obj.Type() != TypeSet {
				return nil, ErrWrongType
			}
			s, ok := obj.(setMembers)
			if !ok {
				panic(fmt.Sprintf("engine: the set type %T does not implement setMembers (zset_algebra.go)", obj))
			}
			srcs[i].obj, srcs[i].s = obj, s
		}
	}
	return srcs, nil
}

// Len is the input's cardinality.
func (s *ZSource) Len() int {
	switch {
	case s.z != nil:
		return s.z.Len()
	case s.s != nil:
		return s.s.Len()
	}
	return 0
}

// each calls fn for every element of the input, a sorted set from its
// highest element down as Redis walks it, until fn returns false.
func (s *ZSource) each(fn func(member string, score float64) bool) {
	switch {
	case s.z != nil:
		s.z.forEach(true, func(it zitem) bool { return fn(it.member, it.score) })
	case s.s != nil:
		s.s.forEachMember(func(m string) bool { return fn(m, 1) })
	}
}

// find returns member's score in the input.
func (s *ZSource) find(member string) (float64, bool) {
	switch {
	case s.z != nil:
		return s.z.score(member)
	case s.s != nil && s.s.hasMember(member):
		return 1, true
	}
	return 0, false
}

// ZSetOp is the algebra's operation.
type ZSetOp uint8

// Operations.
const (
	ZOpUnion ZSetOp = iota
	ZOpInter
	ZOpDiff
)

// ZAggregate is how ZUNION and ZINTER combine the scores of one member.
type ZAggregate uint8

// Aggregates.
const (
	ZAggSum ZAggregate = iota
	ZAggMin
	ZAggMax
)

func aggregate(target *float64, v float64, agg ZAggregate) {
	switch agg {
	case ZAggSum:
		*target += v
		// inf + -inf: Redis's convention is 0.
		if math.IsNaN(*target) {
			*target = 0
		}
	case ZAggMin:
		if v < *target {
			*target = v
		}
	case ZAggMax:
		if v > *target {
			*target = v
		}
	}
}

// weighted multiplies a score by its input's weight; inf * 0 counts as 0.
func weighted(score, weight float64) float64 {
	v := score * weight
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// ZCombine computes ZUNION, ZINTER or ZDIFF of the inputs and returns the
// result sorted. weights (nil for all 1) belong to the inputs in argument
// order. Like Redis, union and intersection visit the inputs from the
// smallest (so a sum adds in the same order) and the intersection walks the
// smallest; the difference keeps the first input first.
func ZCombine(op ZSetOp, srcs []ZSource, weights []float64, agg ZAggregate) []ScoreMember {
	srcs = slices.Clone(srcs)
	for i := range srcs {
		if weights != nil {
			srcs[i].weight = weights[i]
		}
	}
	var out []ScoreMember
	switch op {
	case ZOpUnion:
		byCardinality(srcs)
		acc := make(map[string]float64, srcs[len(srcs)-1].Len())
		for i := range srcs {
			src := &srcs[i]
			src.each(func(m string, score float64) bool {
				v := weighted(score, src.weight)
				if cur, ok := acc[m]; ok {
					aggregate(&cur, v, agg)
					acc[m] = cur
				} else {
					acc[m] = v
				}
				return true
			})
		}
		out = make([]ScoreMember, 0, len(acc))
		for m, s := range acc {
			out = append(out, ScoreMember{m, s})
		}
	case ZOpInter:
		byCardinality(srcs)
		interEach(srcs, agg, func(m string, score float64) bool {
			out = append(out, ScoreMember{m, score})
			return true
		})
	case ZOpDiff:
		out = diff(srcs)
	}
	slices.SortFunc(out, compareScoreMember)
	return out
}

// ZInterCard is ZINTERCARD: the intersection's size, counting stopped at
// limit (0 for no limit).
func ZInterCard(srcs []ZSource, limit int64) int64 {
	srcs = slices.Clone(srcs)
	byCardinality(srcs)
	var n int64
	interEach(srcs, ZAggSum, func(string, float64) bool {
		n++
		return limit == 0 || n < limit
	})
	return n
}

// byCardinality orders inputs from the smallest, keeping the argument
// order among equals.
func byCardinality(srcs []ZSource) {
	slices.SortStableFunc(srcs, func(a, b ZSource) int { return cmp.Compare(a.Len(), b.Len()) })
}

// interEach calls fn for each member present in every input (sorted by
// cardinality), with its aggregated score, until fn returns false.
func interEach(srcs []ZSource, agg ZAggregate, fn func(m string, score float64) bool) {
	if srcs[0].Len() == 0 {
		return
	}
	first := &srcs[0]
	first.each(func(m string, s0 float64) bool {
		score := weighted(s0, first.weight)
		for j := 1; j < len(srcs); j++ {
			src := &srcs[j]
			var v float64
			if src.obj == first.obj {
				v = s0 * src.weight
			} else if s, ok := src.find(m); ok {
				v = s * src.weight
			} else {
				return true
			}
			aggregate(&score, v, agg)
		}
		return fn(m, score)
	})
}

// diff returns the members of the first input found in no other input.
func diff(srcs []ZSource) []ScoreMember {
	if srcs[0].Len() == 0 {
		return nil
	}
	for _, s := range srcs[1:] {
		if s.obj != nil && s.obj == srcs[0].obj {
			return nil // a set minus itself
		}
	}
	var out []ScoreMember
	srcs[0].each(func(m string, score float64) bool {
		for j := 1; j < len(srcs); j++ {
			if _, ok := srcs[j].find(m); ok {
				return true
			}
		}
		out = append(out, ScoreMember{m, score})
		return true
	})
	return out
}

// compareScoreMember is the sorted-set order.
func compareScoreMember(a, b ScoreMember) int {
	if a.Score != b.Score {
		return cmp.Compare(a.Score, b.Score)
	}
	return strings.Compare(a.Member, b.Member)
}
