package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The packed form (zset_pack.go) is checked against the tree form, which
// the differential tests pin to Redis: the same random operations go to a
// packed set and a tree set, and every query must answer the same after
// each step.

// zpTreeSet returns an empty set in the tree form.
func zpTreeSet() *ZSet {
	z := NewZSet()
	z.toSkiplist()
	return z
}

// zpItems lists a set's items ascending (descending with reverse).
func zpItems(z *ZSet, reverse bool) []zitem {
	var out []zitem
	z.forEach(reverse, func(it zitem) bool {
		out = append(out, it)
		return true
	})
	return out
}

// zpSame reports equal item lists, scores compared bit for bit (-0 is
// kept as given by both forms).
func zpSame(a, b []zitem) bool {
	return slices.EqualFunc(a, b, func(x, y zitem) bool {
		return x.member == y.member && math.Float64bits(x.score) == math.Float64bits(y.score)
	})
}

func zpSameSM(a, b []ScoreMember) bool {
	return slices.EqualFunc(a, b, func(x, y ScoreMember) bool {
		return x.Member == y.Member && math.Float64bits(x.Score) == math.Float64bits(y.Score)
	})
}

var zpMembers = []string{"", "\x00", "\x00\x00", "a", "a\x00", "a\x00b", "ab", "b", "ba", "z",
	"m1", "m2", "m10", "\xff", "\xff\x00", strings.Repeat("x", 64), strings.Repeat("x", 63) + "y",
	strings.Repeat("long", 15)}

var zpScores = []float64{math.Inf(-1), math.Inf(1), math.Copysign(0, -1), 0, 1, -1, 1.5, 2, 3, -2.5, 1e300, -1e-300}

// zpScoreRange returns a random score range over zpScores' values.
func zpScoreRange(r *rand.Rand) ScoreRange {
	a, b := zpScores[r.IntN(len(zpScores))], zpScores[r.IntN(len(zpScores))]
	if r.IntN(4) > 0 && a > b {
		a, b = b, a
	}
	return ScoreRange{Min: a, Max: b, MinEx: r.IntN(3) == 0, MaxEx: r.IntN(3) == 0}
}

func zpLexBound(r *rand.Rand) []byte {
	switch r.IntN(6) {
	case 0:
		return []byte("-")
	case 1:
		return []byte("+")
	}
	m := zpMembers[r.IntN(len(zpMembers))]
	if r.IntN(2) == 0 {
		return []byte("(" + m)
	}
	return []byte("[" + m)
}

// zpCompare checks every query on p (packed) against t (tree).
func zpCompare(t *testing.T, step string, p, tr *ZSet, r *rand.Rand, lexOK bool) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: "+format, append([]any{step}, args...)...)
	}
	if !p.packed() || tr.packed() {
		fail("forms changed: packed %v tree %v", p.packed(), !tr.packed())
	}
	if p.Len() != tr.Len() {
		fail("Len %d vs %d", p.Len(), tr.Len())
	}
	up, ut := zpItems(p, false), zpItems(tr, false)
	if !zpSame(up, ut) {
		fail("ascending\n packed %v\n tree   %v", up, ut)
	}
	if dp, dt := zpItems(p, true), zpItems(tr, true); !zpSame(dp, dt) {
		fail("descending\n packed %v\n tree   %v", dp, dt)
	}
	fp, okp := p.first()
	ft, okt := tr.first()
	lp, _ := p.last()
	lt, _ := tr.last()
	if okp != okt || !zpSame([]zitem{fp, lp}, []zitem{ft, lt}) {
		fail("first/last %v %v vs %v %v", fp, lp, ft, lt)
	}
	for i := range p.Len() {
		if !zpSame([]zitem{p.at(i)}, []zitem{tr.at(i)}) {
			fail("at(%d)", i)
		}
	}
	for _, m := range zpMembers {
		sp, okp := p.Score([]byte(m))
		st, okt := tr.Score([]byte(m))
		if okp != okt || math.Float64bits(sp) != math.Float64bits(st) {
			fail("Score(%q) %v %v vs %v %v", m, sp, okp, st, okt)
		}
		for _, rev := range []bool{false, true} {
			rp, okp := p.Rank([]byte(m), rev)
			rt, okt := tr.Rank([]byte(m), rev)
			if rp != rt || okp != okt {
				fail("Rank(%q, %v) %d vs %d", m, rev, rp, rt)
			}
		}
	}
	for range 8 {
		start, end := int64(r.IntN(24)-12), int64(r.IntN(24)-12)
		rev := r.IntN(2) == 0
		if a, b := p.RangeByRank(start, end, rev), tr.RangeByRank(start, end, rev); !zpSameSM(a, b) {
			fail("RangeByRank(%d, %d, %v)\n packed %v\n tree   %v", start, end, rev, a, b)
		}
		sr := zpScoreRange(r)
		if a, b := p.Count(sr), tr.Count(sr); a != b {
			fail("Count(%+v) %d vs %d", sr, a, b)
		}
		off, lim := int64(r.IntN(4)), int64(r.IntN(6)-1)
		if r.IntN(2) == 0 {
			off = 0
		}
		if a, b := p.RangeByScore(sr, off, lim, rev), tr.RangeByScore(sr, off, lim, rev); !zpSameSM(a, b) {
			fail("RangeByScore(%+v, %d, %d, %v)\n packed %v\n tree   %v", sr, off, lim, rev, a, b)
		}
		if lexOK { // lex ranges are defined only over equal scores
			lr, ok := ParseLexRange(zpLexBound(r), zpLexBound(r))
			if !ok {
				fail("ParseLexRange")
			}
			if a, b := p.LexCount(lr), tr.LexCount(lr); a != b {
				fail("LexCount(%+v) %d vs %d", lr, a, b)
			}
			if a, b := p.RangeByLex(lr, off, lim, rev), tr.RangeByLex(lr, off, lim, rev); !zpSameSM(a, b) {
				fail("RangeByLex(%+v, %d, %d, %v)\n packed %v\n tree   %v", lr, off, lim, rev, a, b)
			}
		}
	}
	// ZSCAN: a packed set comes whole, in order, with cursor 0.
	var scanned []zitem
	if c := p.Scan(0, 1, func(m string, s float64) { scanned = append(scanned, zitem{s, m}) }); c != 0 || !zpSame(scanned, up) {
		fail("Scan: cursor %d, %v", c, scanned)
	}
	// ZRANDMEMBER: the whole set from the top when count reaches its size;
	// otherwise distinct members (unique) or members (repetitions).
	var all []ScoreMember
	if p.Len() > 0 { // commands never ask an empty (absent) set
		p.RandomMembers(uint64(p.Len()+1), true, func(sm ScoreMember) { all = append(all, sm) })
	}
	if len(all) != p.Len() {
		fail("RandomMembers(all): %d members", len(all))
	}
	for i, sm := range all {
		if it := up[len(up)-1-i]; sm.Member != it.member || sm.Score != it.score {
			fail("RandomMembers(all)[%d] = %v", i, sm)
		}
	}
	if p.Len() > 0 {
		for _, unique := range []bool{true, false} {
			seen := map[string]bool{}
			p.RandomMembers(uint64(1+r.IntN(p.Len())), unique, func(sm ScoreMember) {
				s, ok := tr.score(sm.Member)
				if !ok || s != sm.Score || (unique && seen[sm.Member]) {
					fail("RandomMembers(unique %v) gave %v", unique, sm)
				}
				seen[sm.Member] = true
			})
		}
	}
	if got, want := p.MemoryUsage(), 64+roundAlloc(len(p.pack.b)); got != want {
		fail("MemoryUsage %d, want %d", got, want)
	}
}

// TestZPackMatchesTree applies random operations to a packed and a tree
// set and compares every query after each step.
func TestZPackMatchesTree(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			lexOK := seed%4 == 0 // equal scores only (0 and -0)
			pickScore := func() float64 {
				if lexOK {
					return zpScores[2+r.IntN(2)]
				}
				if r.IntN(4) == 0 {
					return float64(r.IntN(5))
				}
				return zpScores[r.IntN(len(zpScores))]
			}
			p, tr := NewZSet(), zpTreeSet()
			for step := range 300 {
				m := zpMembers[r.IntN(len(zpMembers))]
				var desc string
				switch op := r.IntN(10); {
				case op < 6:
					s := pickScore()
					desc = fmt.Sprintf("set %q %v", m, s)
					if old, ok := tr.score(m); ok {
						if s != old {
							p.setScore(m, old, s)
							tr.setScore(m, old, s)
						}
					} else {
						p.insertNew(m, s)
						tr.insertNew(m, s)
					}
				case op < 8:
					desc = fmt.Sprintf("remove %q", m)
					as, a := p.remove(m)
					bs, b := tr.remove(m)
					if a != b || as != bs {
						t.Fatalf("step %d: remove(%q) %v %v vs %v %v", step, m, as, a, bs, b)
					}
				case op == 8:
					max, k := r.IntN(2) == 0, r.IntN(4)
					desc = fmt.Sprintf("pop max=%v %d", max, k)
					var a, b []zitem
					p.popN(max, k, func(it zitem) { a = append(a, it) })
					tr.popN(max, k, func(it zitem) { b = append(b, it) })
					if !zpSame(a, b) {
						t.Fatalf("step %d: %s\n packed %v\n tree   %v", step, desc, a, b)
					}
				default:
					if tr.Len() == 0 {
						continue
					}
					i := r.IntN(tr.Len())
					j := i + r.IntN(tr.Len()-i)
					desc = fmt.Sprintf("removeBetween %d %d", i, j)
					var a, b []zitem
					p.removeBetween(p.at(i), p.at(j), func(it zitem) { a = append(a, it) })
					tr.removeBetween(tr.at(i), tr.at(j), func(it zitem) { b = append(b, it) })
					if !zpSame(a, b) {
						t.Fatalf("step %d: %s\n packed %v\n tree   %v", step, desc, a, b)
					}
				}
				zpCompare(t, fmt.Sprintf("step %d (%s)", step, desc), p, tr, r, lexOK)
			}
		})
	}
}

// TestZPackStableMembers checks that members handed out by a packed set
// keep their bytes while its membership changes (a new buffer each time),
// popped members included.
func TestZPackStableMembers(t *testing.T) {
	z := NewZSet()
	for i := range 50 {
		z.insertNew("member:"+strconv.Itoa(i), float64(i%7))
	}
	before := z.RangeByRank(0, -1, false)
	want := make([]string, len(before))
	for i, sm := range before {
		want[i] = strings.Clone(sm.Member)
	}
	var popped []zitem
	z.popN(false, 5, func(it zitem) { popped = append(popped, it) })
	z.setScore("member:40", 5, -100)
	z.insertNew("aaaaaaaaaaaaaaaaaaaa", 0)
	z.remove("member:10")
	for i, sm := range before {
		if sm.Member != want[i] {
			t.Fatalf("member %d changed to %q, want %q", i, sm.Member, want[i])
		}
	}
	if popped[0].member != want[0] {
		t.Fatalf("popped %q, want %q", popped[0].member, want[0])
	}
}

// TestZSetPackConversion drives a sorted set through the DB across the
// conversion points (entries and member length), checking contents,
// encoding, persistence and a reload after each write.
func TestZSetPackConversion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		member func(i int) string
		convAt int // member count at which the set becomes a skiplist
	}{
		{"entries", func(i int) string { return fmt.Sprintf("m\x00%03d", i) }, 129},
		{"value", func(i int) string {
			if i == 60 {
				return strings.Repeat("v", 65)
			}
			return fmt.Sprintf("m%d", i)
		}, 61},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := newHSRecordSink()
			e := New(Options{})
			e.SetSink(sink)
			e.Lock()
			db := e.DB(0)
			key := []byte("z")
			ref := zpTreeSet()
			r := rand.New(rand.NewPCG(3, 4))
			check := func(step string, n int) {
				t.Helper()
				z, err := db.ZSetRead(key)
				if err != nil || z == nil {
					t.Fatalf("%s: %v %v", step, z, err)
				}
				wantEnc := "listpack"
				if n >= tc.convAt {
					wantEnc = "skiplist"
				}
				if z.Encoding() != wantEnc || z.packed() != (wantEnc == "listpack") {
					t.Fatalf("%s: encoding %s (packed %v), want %s", step, z.Encoding(), z.packed(), wantEnc)
				}
				if a, b := zpItems(z, false), zpItems(ref, false); !zpSame(a, b) {
					t.Fatalf("%s: contents\n got  %v\n want %v", step, a, b)
				}
			}
			for i := range 140 {
				m := tc.member(i)
				s := float64(r.IntN(10) - 5)
				if i%17 == 0 {
					s = math.Copysign(0, -1)
				}
				if _, err := db.ZAdd(key, ZAddFlags{}, []float64{s}, [][]byte{[]byte(m)}); err != nil {
					t.Fatal(err)
				}
				// A listpack stores -0 as 0; a skiplist keeps it.
				if s == 0 && i+1 < tc.convAt {
					s = 0
				}
				ref.insertNew(m, s)
				// An update of an earlier member.
				u := tc.member(r.IntN(i + 1))
				old, _ := ref.score(u)
				nu := old + 1
				db.ZAdd(key, ZAddFlags{}, []float64{nu}, [][]byte{[]byte(u)})
				ref.setScore(u, old, nu)
				check(fmt.Sprintf("add %d", i), i+1)
			}
			// Conversion is one-way.
			for i := range 130 {
				db.ZRem(key, [][]byte{[]byte(tc.member(i))})
				ref.remove(tc.member(i))
			}
			check("after removals", 1000)
			e.Unlock()

			// A reload derives the encoding from the contents.
			re := sink.rebuild(t, DefaultLimits())
			re.Lock()
			defer re.Unlock()
			z, _ := re.DB(0).ZSetRead(key)
			if z == nil || !z.packed() {
				t.Fatalf("reloaded set of %d: %v", ref.Len(), z)
			}
			// Scores survive bit for bit, -0 included.
			if a, b := zpItems(z, false), zpItems(ref, false); !zpSame(a, b) {
				t.Fatalf("reloaded\n got  %v\n want %v", a, b)
			}
		})
	}
}

// TestZPackCloneLoad checks Clone and a persist/load round trip of a
// packed set, and that loading past the limits converts.
func TestZPackCloneLoad(t *testing.T) {
	z := NewZSet()
	for i, m := range zpMembers {
		z.insertNew(m, zpScores[i%len(zpScores)])
	}
	c := z.Clone().(*ZSet)
	if !c.packed() || !zpSame(zpItems(c, false), zpItems(z, false)) {
		t.Fatal("clone differs")
	}
	c.remove("a")
	if _, ok := z.score("a"); !ok {
		t.Fatal("clone shares the original's state")
	}
	for _, tc := range []struct {
		entries int64
		packed  bool
	}{{128, true}, {int64(len(zpMembers)), true}, {int64(len(zpMembers)) - 1, false}} {
		sink := newHSRecordSink()
		z.persist(sink, 0, []byte("k"))
		lim := DefaultLimits()
		lim.ZSetMaxListpackEntries = tc.entries
		l := NewZSet()
		l.loadLimits(&lim)
		items := sink.keys[hsSinkKey{0, "k"}].items
		ms := make([]string, 0, len(items))
		for m := range items {
			ms = append(ms, m)
		}
		slices.Sort(ms)
		for _, m := range ms {
			if err := l.loadItem([]byte(m), items[m]); err != nil {
				t.Fatal(err)
			}
		}
		if l.packed() != tc.packed || !zpSame(zpItems(l, false), zpItems(z, false)) {
			t.Fatalf("entries %d: loaded packed=%v\n got  %v\n want %v", tc.entries, l.packed(), zpItems(l, false), zpItems(z, false))
		}
	}
}

// TestZPackStore checks ZStore's packed destination from items in any
// order (ZRANGESTORE ... REV gives them from the top), -0 stored as 0.
func TestZPackStore(t *testing.T) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	items := []ScoreMember{{"c", 3}, {"b", math.Copysign(0, -1)}, {"a\x00", 0}, {"a", 0}, {"z", math.Inf(-1)}}
	db.ZStore([]byte("d"), items)
	z, _ := db.ZSetRead([]byte("d"))
	want := []zitem{{math.Inf(-1), "z"}, {0, "a"}, {0, "a\x00"}, {0, "b"}, {3, "c"}}
	if got := zpItems(z, false); !z.packed() || !zpSame(got, want) {
		t.Fatalf("packed %v: %v, want %v", z.packed(), got, want)
	}
}

// zpBenchSet returns an engine holding key "z" with 100 members, packed or
// (with the listpack thresholds at 0) in the tree form.
func zpBenchSet(b *testing.B, packed bool) (*Engine, *DB, [][]byte) {
	e := New(Options{})
	if !packed {
		lim := DefaultLimits()
		lim.ZSetMaxListpackEntries = 0
		e.SetLimits(lim)
	}
	e.Lock()
	db := e.DB(0)
	members := make([][]byte, 100)
	for i := range members {
		members[i] = []byte("member:" + strconv.Itoa(i))
		db.ZAdd([]byte("z"), ZAddFlags{}, []float64{float64(i * 3)}, [][]byte{members[i]})
	}
	if z, _ := db.ZSetRead([]byte("z")); z.packed() != packed {
		b.Fatalf("packed %v", z.packed())
	}
	return e, db, members
}

func zpForms(b *testing.B, fn func(b *testing.B, db *DB, members [][]byte)) {
	for _, packed := range []bool{true, false} {
		name := "packed"
		if !packed {
			name = "tree"
		}
		b.Run(name, func(b *testing.B) {
			e, db, members := zpBenchSet(b, packed)
			defer e.Unlock()
			b.ReportAllocs()
			b.ResetTimer()
			fn(b, db, members)
		})
	}
}

// BenchmarkZSet100Add is ZADD updating a random member's score (a
// ZINCRBY-style workload) in a 100-member set.
func BenchmarkZSet100Add(b *testing.B) {
	zpForms(b, func(b *testing.B, db *DB, members [][]byte) {
		r := rand.New(rand.NewPCG(1, 2))
		key := []byte("z")
		for i := 0; i < b.N; i++ {
			db.ZAdd(key, ZAddFlags{}, []float64{float64(r.IntN(300))}, [][]byte{members[r.IntN(len(members))]})
		}
	})
}

// BenchmarkZSet100Score is ZSCORE of a random member.
func BenchmarkZSet100Score(b *testing.B) {
	zpForms(b, func(b *testing.B, db *DB, members [][]byte) {
		r := rand.New(rand.NewPCG(1, 2))
		z, _ := db.ZSetRead([]byte("z"))
		for i := 0; i < b.N; i++ {
			z.Score(members[r.IntN(len(members))])
		}
	})
}

// BenchmarkZSet100Range is ZRANGE z 40 49 (ten members from the middle).
func BenchmarkZSet100Range(b *testing.B) {
	zpForms(b, func(b *testing.B, db *DB, members [][]byte) {
		z, _ := db.ZSetRead([]byte("z"))
		for i := 0; i < b.N; i++ {
			z.RangeByRank(40, 49, false)
		}
	})
}
