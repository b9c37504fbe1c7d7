package engine

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestSortBounds(t *testing.T) {
	const maxI, minI = int64(^uint64(0) >> 1), -int64(^uint64(0)>>1) - 1
	cases := []struct{ off, cnt, n, start, end int64 }{
		{0, -1, 10, 0, 9},
		{2, 3, 10, 2, 4},
		{-5, 3, 10, 0, 2},
		{0, 0, 10, 0, -1},
		{9, 5, 10, 9, 9},
		{10, 5, 10, 9, 8}, // past the end: nothing
		{maxI, maxI, 10, 9, 8},
		{minI, minI, 10, 0, 9}, // a negative count is "all"
		{3, maxI, 10, 3, 9},
		{0, -1, 0, -1, -2},
		{0, 5, 0, -1, -2},
	}
	for _, c := range cases {
		s, e := sortBounds(c.off, c.cnt, c.n)
		if s != c.start || e != c.end {
			t.Errorf("sortBounds(%d, %d, %d) = %d, %d; want %d, %d", c.off, c.cnt, c.n, s, e, c.start, c.end)
		}
	}
}

func TestParseSortWeight(t *testing.T) {
	good := map[string]float64{"1": 1, "-2.5": -2.5, " 3": 3, "": 0, "0x10": 16, "1e3": 1000, ".5": 0.5, "5.": 5,
		"+7": 7, "inf": inf, "-Infinity": -inf, "4\x00junk": 4, "\x00": 0, "0x1p-1070": 0x1p-1070,
		"2.2250738585072014e-308": 0x1p-1022}
	for in, want := range good {
		if got, ok := parseSortWeight([]byte(in)); !ok || got != want {
			t.Errorf("parseSortWeight(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"abc", "1x", "1 ", "  ", "nan", "1e400", "-1e400", "1e-400", "1e-310", "4.9e-324", "0x"} {
		if got, ok := parseSortWeight([]byte(in)); ok {
			t.Errorf("parseSortWeight(%q) = %v, accepted", in, got)
		}
	}
}

var inf = 1 / zeroFloat()

func zeroFloat() float64 { return 0 }

func TestLookupSortPattern(t *testing.T) {
	f := newEngineFixture(t)
	db := f.db
	db.SetString(b("w_1"), b("one"), SetOptions{})
	db.SetString(b("w_1->"), b("arrow"), SetOptions{})
	db.SetString(b("empty_1"), b(""), SetOptions{})
	if _, err := db.HSet(b("h_1"), [][]byte{b("f"), b("hv"), b("f->g"), b("deep"), b("e"), b("")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SAdd(b("s_1"), [][]byte{b("x")}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		pat  string
		want any // string, or nil for no value
	}{
		{"#", "1"},
		{"#\x00x", "1"}, // read as a C string: "#"
		{"w_*", "one"},
		{"w_*->", "arrow"}, // nothing after "->": part of the key
		{"h_*->f", "hv"},
		{"h_*->f->g", "deep"}, // the first "->" splits
		{"h_*->e", ""},
		{"h_*->nope", nil},
		{"h_*", nil},    // a hash read as a string
		{"w_*->f", nil}, // a string read as a hash
		{"s_*", nil},
		{"nostar", nil},
		{"w_\x00*", nil}, // the '*' is after the NUL
		{"empty_*", ""},
		{"missing_*", nil},
	}
	for _, c := range cases {
		got := db.lookupSortPattern(b(c.pat), b("1"))
		switch want := c.want.(type) {
		case nil:
			if got != nil {
				t.Errorf("%q: got %q, want nothing", c.pat, got)
			}
		case string:
			if got == nil || string(got) != want {
				t.Errorf("%q: got %q (nil %v), want %q", c.pat, got, got == nil, want)
			}
		}
	}
}

// TestPartialSortRange: the positions asked for hold what a full sort puts
// there (up to ties, which only change which of the equal items comes).
func TestPartialSortRange(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 2000; round++ {
		n := r.IntN(120)
		keys := r.IntN(n + 2) // few distinct keys: many ties
		score := make([]int, n)
		v := make([]int, n)
		for i := range v {
			score[i], v[i] = r.IntN(keys+1), i
		}
		cmp := func(a, b *int) int { return score[*a] - score[*b] }
		full := slices.Clone(v)
		glibcSort(full, cmp)
		for i := 1; i < n; i++ {
			if c := cmp(&full[i-1], &full[i]); c > 0 || c == 0 && full[i-1] > full[i] {
				t.Fatalf("round %d: the merge sort is not a stable sort", round)
			}
		}
		lo := r.IntN(n + 1)
		hi := lo + r.IntN(n-lo+1) - 1
		partialQuicksort(v, cmp, lo, hi)
		for i := lo; i <= hi; i++ {
			if score[v[i]] != score[full[i]] {
				t.Fatalf("round %d, n %d, range %d..%d: position %d has %v, a full sort %v", round, n, lo, hi, i,
					score[v[i]], score[full[i]])
			}
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		for i, x := range sorted {
			if int(x) != i {
				t.Fatalf("round %d: items lost", round)
			}
		}
	}
}

func TestSortStoreRecordsAndConversion(t *testing.T) {
	f := newEngineFixture(t)
	db := f.db
	if _, err := db.ZAdd(b("z"), ZAddFlags{}, []float64{2, 1, 3}, [][]byte{b("b"), b("a"), b("c")}); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Sort(b("z"), &SortSpec{Count: -1, Desc: true, NoSort: true, By: b("nosort"), Store: true})
	if err != nil || len(rows) != 3 || string(rows[0]) != "c" {
		t.Fatalf("Sort: %q, %v", rows, err)
	}
	if enc := db.Peek(b("z")).Encoding(); enc != "skiplist" {
		t.Errorf("a sorted set SORT read is %s, want skiplist (Redis converts it)", enc)
	}
	db.SetString(b("dst"), b("old"), SetOptions{})
	db.SetExpire(b("dst"), f.e.Now()+100000)
	dirty := f.e.stats.Dirty
	db.SortStore(b("dst"), rows)
	if d := f.e.stats.Dirty - dirty; d != 3 {
		t.Errorf("dirty rose by %d, want 3 (one per element)", d)
	}
	if db.Expire(b("dst")) != 0 {
		t.Errorf("the destination kept its deadline")
	}
	db.SortStore(b("gone"), nil)
	if _, err := db.ListPush(b("empty"), [][]byte{b("x")}, false, false); err != nil {
		t.Fatal(err)
	}
	if !db.SortStore(b("empty"), nil) {
		t.Errorf("an empty result did not report deleting an existing destination")
	}
	g := f.restart(time.Second)
	l, err := g.db.ListRead(b("dst"))
	if err != nil || l == nil {
		t.Fatalf("dst after restart: %v, %v", l, err)
	}
	var got []string
	l.Each(0, l.Len(), false, func(v []byte) { got = append(got, string(v)) })
	if !slices.Equal(got, []string{"c", "b", "a"}) || g.db.Expire(b("dst")) != 0 {
		t.Errorf("dst after restart: %q, deadline %d", got, g.db.Expire(b("dst")))
	}
	if g.db.Exists(b("empty")) {
		t.Errorf("the deleted destination came back")
	}
}

// BenchmarkSort10k sorts a 10,000-element list: numerically, ALPHA, by a
// weight key per element, and by weights with a LIMIT (the partial sort).
func BenchmarkSort10k(bm *testing.B) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	r := rand.New(rand.NewPCG(5, 6))
	var vals [][]byte
	for i := 0; i < 10000; i++ {
		v := strconv.Itoa(r.IntN(1_000_000))
		vals = append(vals, []byte(v))
		db.SetString([]byte("w_"+v), []byte(strconv.FormatFloat(r.Float64()*1000, 'f', 3, 64)), SetOptions{})
	}
	if _, err := db.ListPush(b("l"), vals, false, false); err != nil {
		bm.Fatal(err)
	}
	for _, c := range []struct {
		name string
		spec SortSpec
	}{
		{"numeric", SortSpec{Count: -1}},
		{"alpha", SortSpec{Count: -1, Alpha: true}},
		{"by", SortSpec{Count: -1, By: b("w_*")}},
		{"by-limit", SortSpec{Count: 10, Offset: 100, By: b("w_*")}},
	} {
		bm.Run(c.name, func(bm *testing.B) {
			bm.ReportAllocs()
			for i := 0; i < bm.N; i++ {
				spec := c.spec
				if _, err := db.Sort(b("l"), &spec); err != nil {
					bm.Fatal(err)
				}
			}
		})
	}
}
