package engine

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestZSetItemKeyOrder checks that item keys sort as the set does: by
// score, -0 equal to 0, then by member bytes; and that they decode back,
// -0 included.
func TestZSetItemKeyOrder(t *testing.T) {
	scores := append(slices.Clone(zpScores), -math.MaxFloat64, math.MaxFloat64,
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0.1, -0.1)
	var items []zitem
	for _, s := range scores {
		for _, m := range zpMembers {
			items = append(items, zitem{s, m})
		}
	}
	for _, a := range items {
		ka := zsetItemKey(nil, a.score, a.member)
		for _, b := range items {
			kb := zsetItemKey(nil, b.score, b.member)
			if got, want := bytes.Compare(ka, kb) < 0, zless(a, b); got != want {
				t.Fatalf("%v vs %v: keys order %v, set order %v", a, b, got, want)
			}
		}
		s, m, err := decodeZSetItem(ka, zsetItemValue(nil, a.score))
		if err != nil || string(m) != a.member || math.Float64bits(s) != math.Float64bits(a.score) {
			t.Fatalf("%v decoded as %v %q %v", a, s, m, err)
		}
	}
	nan := zsetItemKey(nil, math.NaN(), "m")
	for _, bad := range []struct{ item, val []byte }{
		{[]byte("short"), nil},
		{nan, nil},
		{zsetItemKey(nil, 1, "m"), []byte{1, 2, 3}},
		{zsetItemKey(nil, 1, "m"), zsetItemValue(nil, math.Copysign(0, -1))},
	} {
		if _, _, err := decodeZSetItem(bad.item, bad.val); err == nil {
			t.Fatalf("%x %x decoded", bad.item, bad.val)
		}
	}
}

// TestZSetPersistence runs random sorted-set writes, small (listpack) and
// large (skiplist), and checks after each that the records rebuild the
// same sets, scores bit for bit, and that pops and span removals wrote
// range deletions, not a record per member.
func TestZSetPersistence(t *testing.T) {
	sink := newHSRecordSink()
	e := New(Options{})
	e.SetSink(sink)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	keys := [][]byte{[]byte("small"), []byte("large")}
	r := rand.New(rand.NewPCG(11, 12))
	member := func(k int) []byte {
		if k == 0 || r.IntN(2) == 0 {
			return []byte(zpMembers[r.IntN(len(zpMembers))])
		}
		return fmt.Appendf(nil, "m%d", r.IntN(300))
	}
	score := func() float64 {
		if r.IntN(3) == 0 {
			return zpScores[r.IntN(len(zpScores))]
		}
		return float64(r.IntN(40)) / 4
	}
	ranges := 0
	for step := range 3000 {
		k := r.IntN(2)
		key := keys[k]
		var desc string
		switch op := r.IntN(10); {
		case op < 4:
			n := 1 + r.IntN(4)
			if k == 1 {
				n = 1 + r.IntN(40)
			}
			var ss []float64
			var ms [][]byte
			for range n {
				ss, ms = append(ss, score()), append(ms, member(k))
			}
			f := ZAddFlags{Incr: n == 1 && r.IntN(3) == 0, GT: r.IntN(8) == 0}
			desc = fmt.Sprintf("ZADD %+v %v %q", f, ss, ms)
			_, _ = db.ZAdd(key, f, ss, ms)
		case op < 5:
			ms := [][]byte{member(k), member(k)}
			desc = fmt.Sprintf("ZREM %q", ms)
			_, _, _ = db.ZRem(key, ms)
		case op < 8:
			max, n := r.IntN(2) == 0, 1+r.IntN(3)
			desc = fmt.Sprintf("ZPOP max=%v %d", max, n)
			_, _, _ = db.ZPop(key, max, n)
		case op < 9:
			sr := zpScoreRange(r)
			desc = fmt.Sprintf("ZREMRANGEBYSCORE %+v", sr)
			_, _, _ = db.ZRemRangeByScore(key, sr)
		default:
			a, b := int64(r.IntN(10)), int64(r.IntN(10))
			desc = fmt.Sprintf("ZREMRANGEBYRANK %d %d", a, b)
			_, _, _ = db.ZRemRangeByRank(key, a, b)
			lr, ok := ParseLexRange(zpLexBound(r), zpLexBound(r))
			if ok {
				desc += fmt.Sprintf(", ZREMRANGEBYLEX %+v", lr)
				_, _, _ = db.ZRemRangeByLex(key, lr)
			}
		}
		ranges += sink.counts["delrange"]
		delete(sink.counts, "delrange")
		if step%7 != 0 {
			continue
		}
		re := sink.rebuild(t, DefaultLimits())
		re.Lock()
		for _, key := range keys {
			want, _ := db.ZSetRead(key)
			got, _ := re.DB(0).ZSetRead(key)
			if (want == nil) != (got == nil) {
				t.Fatalf("step %d after %s: key %s present %v, rebuilt %v", step, desc, key, want != nil, got != nil)
			}
			if want == nil {
				continue
			}
			if a, b := zpItems(got, false), zpItems(want, false); !zpSame(a, b) {
				t.Fatalf("step %d after %s: key %s rebuilt\n got  %v\n want %v", step, desc, key, a, b)
			}
		}
		re.Unlock()
	}
	if ranges < 500 {
		t.Fatalf("%d range deletions: pops and span removals should write ranges", ranges)
	}
}

// TestZPopRangesContinue checks that consecutive pops off one end write
// ranges that touch, so the store's window merges them into one.
func TestZPopRangesContinue(t *testing.T) {
	rec := &rangeRecorder{}
	e := New(Options{})
	e.SetSink(rec)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	key := []byte("z")
	for i := range 300 {
		if _, err := db.ZAdd(key, ZAddFlags{}, []float64{float64(i % 50)}, [][]byte{fmt.Appendf(nil, "m%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, max := range []bool{false, true} {
		rec.ranges = nil
		for range 20 {
			db.ZPop(key, max, 1+len(rec.ranges)%3)
		}
		for i := 1; i < len(rec.ranges); i++ {
			prev, cur := rec.ranges[i-1], rec.ranges[i]
			if !max && !bytes.Equal(prev[1], cur[0]) || max && !bytes.Equal(cur[1], prev[0]) {
				t.Fatalf("max=%v: range %d [%x, %x) does not continue [%x, %x)", max, i, cur[0], cur[1], prev[0], prev[1])
			}
		}
		if len(rec.ranges) != 20 {
			t.Fatalf("max=%v: %d ranges for 20 pops", max, len(rec.ranges))
		}
	}
}

// rangeRecorder keeps the item ranges deleted.
type rangeRecorder struct {
	nopSink
	ranges [][2][]byte
}

func (r *rangeRecorder) DeleteItemRange(_ int, _ []byte, from, to []byte) {
	r.ranges = append(r.ranges, [2][]byte{bytes.Clone(from), bytes.Clone(to)})
}
