package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Statistical tests of every random pick: RANDOMKEY, SRANDMEMBER, SPOP,
// HRANDFIELD and ZRANDMEMBER, with and without counts, on every encoding.
// Each test counts how often each element comes up over many draws and
// computes Pearson's chi-square against the uniform distribution. The bound
// is the chi-square quantile at p = 1e-9 for the test's degrees of freedom
// (about 60 for 10 elements; Redis's own suite uses 40 with 1000 draws): a
// fair source exceeds it once in a billion checks, while a pick that
// favours short hash chains, with thousands of draws, exceeds it many
// times over (it scores in the hundreds with 1000 draws, and the statistic
// grows with the number of draws).
//
// The hashtable forms are built so that chains differ in length: tables
// filled to their growth point (10, 100 and 1000 elements), tables left
// sparse by deletions, and tables in the middle of an incremental rehash,
// growing and shrinking.

// samplingPMin is the p-value below which a tally fails.
const samplingPMin = 1e-9

// chiSquareSF is the probability that a chi-square variable with df
// degrees of freedom exceeds x: the regularized upper incomplete gamma
// function Q(df/2, x/2), from its closed forms for integer and
// half-integer parameters, summed in log space so that large df and x
// neither overflow nor underflow early.
func chiSquareSF(x float64, df int) float64 {
	if x <= 0 {
		return 1
	}
	y := x / 2
	ly := math.Log(y)
	// Q(a+1, y) = Q(a, y) + y^a e^-y / Γ(a+1), from Q(1, y) = e^-y for
	// even df and Q(1/2, y) = erfc(√y) for odd df.
	a0, q0 := 0.0, 0.0
	if df%2 == 1 {
		a0, q0 = 0.5, math.Erfc(math.Sqrt(y))
	}
	logTerms := make([]float64, 0, df/2)
	for a := a0; a < float64(df)/2-1e-9; a++ {
		lg, _ := math.Lgamma(a + 1)
		logTerms = append(logTerms, -y+a*ly-lg)
	}
	if len(logTerms) == 0 {
		return q0
	}
	m := math.Inf(-1)
	for _, l := range logTerms {
		m = math.Max(m, l)
	}
	s := 0.0
	for _, l := range logTerms {
		s += math.Exp(l - m)
	}
	return math.Min(1, q0+math.Exp(m+math.Log(s)))
}

// chiSquareBound is the x with chiSquareSF(x, df) = samplingPMin.
func chiSquareBound(df int) float64 {
	lo, hi := float64(df), float64(df)+100*math.Sqrt(float64(df))+100
	for range 200 {
		mid := (lo + hi) / 2
		if chiSquareSF(mid, df) > samplingPMin {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

func TestChiSquareSF(t *testing.T) {
	for _, c := range []struct {
		x    float64
		df   int
		want float64
	}{
		{3.841459, 1, 0.05}, {5.991465, 2, 0.05}, {16.918978, 9, 0.05},
		{21.665994, 9, 0.01}, {40, 9, 7.6e-6}, {123.225221, 99, 0.05},
		{1073.642651, 999, 0.05},
	} {
		got := chiSquareSF(c.x, c.df)
		if math.Abs(got-c.want) > c.want*0.02 {
			t.Errorf("chiSquareSF(%g, %d) = %g, want %g", c.x, c.df, got, c.want)
		}
	}
	if b := chiSquareBound(9); b < 55 || b > 65 {
		t.Errorf("chiSquareBound(9) = %g", b)
	}
}

// tally counts the draws of one kind of pick over a known set of elements.
type tally struct {
	t        *testing.T
	what     string
	universe []string
	counts   map[string]int
	draws    int // picks (or subsets) counted
	k        int // subset size for subset tallies, 0 for single picks
}

func newTally(t *testing.T, what string, universe []string) *tally {
	return &tally{t: t, what: what, universe: universe, counts: make(map[string]int, len(universe))}
}

func (ta *tally) add(member string) {
	ta.counts[member]++
}

// chi returns the chi-square statistic and its degrees of freedom. For
// subsets of k distinct elements each element's count has variance
// p(1-p) per subset and the counts are negatively correlated; scaling the
// Pearson sum by 1/((1-p)·n/(n-1)) makes it chi-square with n-1 degrees of
// freedom again for uniformly random subsets.
func (ta *tally) chi() (float64, int) {
	n := len(ta.universe)
	total := ta.draws
	if ta.k > 0 {
		total = ta.draws * ta.k
	}
	exp := float64(total) / float64(n)
	sum := 0.0
	for _, m := range ta.universe {
		d := float64(ta.counts[m]) - exp
		sum += d * d / exp
	}
	if ta.k > 0 {
		p := float64(ta.k) / float64(n)
		sum /= (1 - p) * float64(n) / float64(n-1)
	}
	return sum, n - 1
}

// check fails the test when the tally is not uniform or counted an
// element outside the universe.
func (ta *tally) check() {
	ta.t.Helper()
	in := make(map[string]bool, len(ta.universe))
	sum := 0
	for _, m := range ta.universe {
		in[m] = true
		sum += ta.counts[m]
	}
	for m := range ta.counts {
		if !in[m] {
			ta.t.Fatalf("%s: %q is not an element", ta.what, m)
		}
	}
	want := ta.draws
	if ta.k > 0 {
		want = ta.draws * ta.k
	}
	if sum != want {
		ta.t.Fatalf("%s: counted %d picks, want %d", ta.what, sum, want)
	}
	chi, df := ta.chi()
	bound := chiSquareBound(df)
	ta.t.Logf("%-58s chi2 %9.1f  df %4d  bound %6.1f  p %.2g", ta.what, chi, df, bound, chiSquareSF(chi, df))
	if chi > bound {
		ta.t.Errorf("%s: not uniform: chi-square %.1f > %.1f (df %d, %d draws)", ta.what, chi, bound, df, ta.draws)
	}
}

// sampleDraws is how many single picks a test of n elements makes: at
// least 50 expected per element, and at least 20,000.
func sampleDraws(n int) int { return max(20000, 50*n) }

// subsetReps is how many subsets of k of n elements a test draws: at least
// 50 expected inclusions and 50 expected exclusions per element, so that
// each element's count is close to normal, and at least 20,000 elements in
// all.
func subsetReps(n, k int) int { return max(50*n/min(k, n-k), 20000/k) }

func pow2Floor(x int) int {
	p := 1
	for p*2 <= x {
		p *= 2
	}
	return p
}

// dictState builds a dict for the named state with about n keys and
// returns it with its keys. frozen says the state is mid-rehash and must
// be sampled without rehash steps (randomNode) to stay in it.
func dictState(t *testing.T, n int, state string, rng *rand.Rand) (d *Dict[int], keys []string, frozen bool) {
	t.Helper()
	d = NewDict[int]()
	name := func(i int) string { return "key:" + strconv.Itoa(i) }
	finish := func() {
		for d.rehashing() {
			d.rehashStep()
		}
	}
	live := map[string]bool{}
	insert := func(k string) {
		d.Insert(k)
		live[k] = true
	}
	del := func(k string) {
		if _, ok := d.Delete(k); !ok {
			t.Fatalf("delete %q", k)
		}
		delete(live, k)
	}
	switch state {
	case "full":
		// Filled to just below its growth point: chains of 0 to several.
		for i := 0; i < n; i++ {
			insert(name(i))
		}
		finish()
	case "sparse":
		// The largest table n keys keep without shrinking, filled and then
		// mostly deleted: long chains are rare, most buckets empty.
		size := pow2Floor(8 * n)
		for i := 0; i < size; i++ {
			insert(name(i))
		}
		finish()
		for _, i := range rng.Perm(size)[:size-n] {
			del(name(i))
		}
		if d.rehashing() || len(d.tables[0]) != size {
			t.Fatalf("sparse state: %d buckets, rehashing %v", len(d.tables[0]), d.rehashing())
		}
	case "growing":
		// n keys, then more until a grow starts; half the keys moved to
		// the new table and a few more inserted there.
		i := 0
		for ; i < n; i++ {
			insert(name(i))
		}
		finish()
		for ; !d.rehashing(); i++ {
			insert(name(i))
		}
		for d.used[1] < d.used[0]/2 {
			d.rehashStep()
		}
		for j := 0; j < 1+n/20; j++ {
			insert(name(i))
			i++
		}
		for d.used[1] < d.used[0] {
			d.rehashStep()
		}
		frozen = true
	case "shrinking":
		// A table twice too large for n keys, emptied until it starts to
		// shrink, with half the keys moved to the small table.
		size := 2 * pow2Floor(8*n)
		for i := 0; i < size; i++ {
			insert(name(i))
		}
		finish()
		for _, i := range rng.Perm(size) {
			del(name(i))
			if d.rehashing() {
				break
			}
		}
		for d.used[1] < d.used[0] {
			d.rehashStep()
		}
		frozen = true
	default:
		t.Fatalf("unknown state %q", state)
	}
	if frozen && (!d.rehashing() || d.used[0] == 0 || d.used[1] == 0) {
		t.Fatalf("%s state: rehashing %v, used %v", state, d.rehashing(), d.used)
	}
	if d.Len() != len(live) {
		t.Fatalf("%s state: Len %d, want %d", state, d.Len(), len(live))
	}
	for k := range live {
		keys = append(keys, k)
	}
	return d, keys, frozen
}

// TestDictRandomKeyUniform checks that each key of a hash table is equally
// likely, whatever the table's chains look like.
func TestDictRandomKeyUniform(t *testing.T) {
	for _, n := range []int{10, 100, 1000} {
		for _, state := range []string{"full", "sparse", "growing", "shrinking"} {
			d, keys, frozen := dictState(t, n, state, rand.New(rand.NewPCG(rand.Uint64(), 0)))
			b0, b1 := d.Buckets()
			ta := newTally(t, fmt.Sprintf("dict %s %d keys (%d+%d buckets)", state, len(keys), b0, b1), keys)
			ta.draws = sampleDraws(len(keys))
			for range ta.draws {
				if frozen {
					ta.add(d.randomNode().key)
				} else {
					k, _ := d.RandomKey()
					ta.add(k)
				}
			}
			if frozen && !d.rehashing() {
				t.Fatalf("%s: the rehash moved on", ta.what)
			}
			ta.check()
		}
	}
}

// TestDictRandomKeyThroughRehash draws while a rehash makes progress with
// every draw (RandomKey's own steps), restarting it each round: the table
// keeps changing under the picks, as a busy server's does.
func TestDictRandomKeyThroughRehash(t *testing.T) {
	for _, n := range []int{10, 100} {
		for _, state := range []string{"growing", "shrinking"} {
			// Every round rebuilds the same table (same keys, same order of
			// inserts and deletes).
			seed := rand.Uint64()
			var ta *tally
			for ta == nil || ta.draws < sampleDraws(n) {
				d, keys, _ := dictState(t, n, state, rand.New(rand.NewPCG(seed, 0)))
				if ta == nil {
					ta = newTally(t, fmt.Sprintf("dict %s %d keys, drawing through the rehash", state, len(keys)), keys)
				} else if len(keys) != len(ta.universe) {
					t.Fatalf("rebuilt %d keys, want %d", len(keys), len(ta.universe))
				}
				for d.rehashing() {
					k, _ := d.RandomKey()
					ta.add(k)
					ta.draws++
				}
			}
			ta.check()
		}
	}
}

// TestUniform32 checks the depth draw of randomNode: the top of the range
// is reached, powers of two are the high bits, and the few inputs Lemire's
// method must reject (2^32 mod n of them, the lowest multiples) are
// replaced by a fresh draw that stays in range.
func TestUniform32(t *testing.T) {
	for _, n := range []uint32{1, 2, 3, 5, 8, 10, 1 << 31} {
		if got := uniform32(^uint32(0), n); got != n-1 {
			t.Errorf("uniform32(max, %d) = %d", n, got)
		}
		if n&(n-1) == 0 {
			for _, x := range []uint32{0, 1, 0x12345678, 0x80000000} {
				if got, want := uniform32(x, n), uint32(uint64(x)*uint64(n)>>32); got != want {
					t.Errorf("uniform32(%#x, %d) = %d, want %d", x, n, got, want)
				}
			}
		}
		for range 1000 {
			if got := uniform32(0, n); got >= n {
				t.Fatalf("uniform32(0, %d) = %d", n, got)
			}
		}
	}
	// x = 0 is rejected for n = 3 (2^32 mod 3 = 1): the fresh draws cover
	// the whole range.
	seen := map[uint32]bool{}
	for range 1000 {
		seen[uniform32(0, 3)] = true
	}
	if len(seen) != 3 {
		t.Errorf("uniform32(0, 3) gave only %v", seen)
	}
}

// TestDictChainBound checks the invariant randomNode's fairness rests on:
// chainMax[t] is at least the length of every chain of tables[t], through
// inserts, deletes, grows, shrinks and the rehashes between them.
func TestDictChainBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
	d := NewDict[int]()
	check := func(step int) {
		for tab := 0; tab < 2; tab++ {
			for i, n := range d.tables[tab] {
				l := int32(0)
				for ; n != nil; n = n.next {
					l++
				}
				if l > d.chainMax[tab] {
					t.Fatalf("step %d: table %d bucket %d has a chain of %d, bound %d", step, tab, i, l, d.chainMax[tab])
				}
			}
		}
	}
	grows, shrinks := 0, 0
	for step := 0; step < 60000; step++ {
		// Phases of growth and of decline, so the table grows and shrinks.
		phase := (step / 10000) % 2
		k := "k" + strconv.Itoa(rng.IntN(1000))
		wasRehashing, before := d.rehashing(), len(d.tables[0])
		if rng.IntN(10) < 8-7*phase {
			d.Insert(k)
		} else {
			d.Delete(k)
		}
		if !wasRehashing && d.rehashing() {
			if len(d.tables[1]) > before {
				grows++
			} else {
				shrinks++
			}
		}
		if step%97 == 0 || d.rehashing() {
			check(step)
		}
	}
	if grows == 0 || shrinks == 0 {
		t.Fatalf("the workload grew %d and shrank %d times", grows, shrinks)
	}
	t.Logf("%d grows, %d shrinks", grows, shrinks)
}

// samplingEngine returns a locked engine with the thresholds adjusted.
func samplingEngine(t *testing.T, adjust func(*Limits)) (*Engine, *DB) {
	e, _, _ := newTestEngine(t)
	l := DefaultLimits()
	if adjust != nil {
		adjust(&l)
	}
	e.SetLimits(l)
	e.Lock()
	t.Cleanup(e.Unlock)
	return e, e.DB(0)
}

// setCase is one way of building a set for the sampling tests.
type setCase struct {
	name   string
	enc    string
	member func(i int) string
	limits func(*Limits)
	sizes  []int
	sparse bool // fill to the largest power of two <= 8n, then remove all but n
}

var setCases = []setCase{
	{name: "strings", enc: "hashtable", member: func(i int) string { return "m" + strconv.Itoa(i) }, sizes: []int{10, 100, 1000}},
	{name: "strings-sparse", enc: "hashtable", member: func(i int) string { return "m" + strconv.Itoa(i) }, sizes: []int{10, 100, 1000}, sparse: true},
	// Redis's test: integers in a hashtable (set-max-intset-entries 0).
	{name: "ints-noIntset", enc: "hashtable", member: strconv.Itoa, limits: func(l *Limits) { l.SetMaxIntsetEntries = 0 }, sizes: []int{10, 100}},
	// Members longer than any small-encoding limit.
	{name: "long", enc: "hashtable", member: func(i int) string { return fmt.Sprintf("%080d", i) }, sizes: []int{10}},
	{name: "intset", enc: "intset", member: strconv.Itoa, sizes: []int{10, 100}},
}

// build stores the case's set of n members under key and returns the
// members.
func (c setCase) build(t *testing.T, db *DB, key string, n int) []string {
	t.Helper()
	db.Delete(b(key))
	total := n
	if c.sparse {
		total = pow2Floor(8 * n)
	}
	var ms [][]byte
	for i := 0; i < total; i++ {
		ms = append(ms, b(c.member(i)))
	}
	db.SAdd(b(key), ms)
	var members []string
	if c.sparse {
		perm := rand.Perm(total)
		var rem [][]byte
		for _, i := range perm[n:] {
			rem = append(rem, ms[i])
		}
		db.SRem(b(key), rem)
		for _, i := range perm[:n] {
			members = append(members, string(ms[i]))
		}
	} else {
		for _, m := range ms {
			members = append(members, string(m))
		}
	}
	s, _ := db.ReadSet(b(key))
	if s.Encoding() != c.enc || s.Len() != n {
		t.Fatalf("%s: encoding %s, %d members; want %s, %d", c.name, s.Encoding(), s.Len(), c.enc, n)
	}
	if c.sparse {
		if b0, _ := s.dict.Buckets(); b0 != total {
			t.Fatalf("%s: %d buckets, want %d (no shrink)", c.name, b0, total)
		}
	}
	return members
}

// distinctCounts are the positive counts to test for n elements: Redis's
// case of a few picks among many (count*3 <= n) at both ends, and of most
// of the set (count*3 > n).
func distinctCounts(n int) []int { return []int{2, n / 3, n/3 + 1, n - max(1, n/10)} }

func TestSetRandomUniform(t *testing.T) {
	for _, c := range setCases {
		_, db := samplingEngine(t, c.limits)
		for _, n := range c.sizes {
			key := "s"
			members := c.build(t, db, key, n)
			s, _ := db.ReadSet(b(key))
			label := func(op string) string { return fmt.Sprintf("%s %s n=%d: %s", c.enc, c.name, n, op) }

			ta := newTally(t, label("SRANDMEMBER"), members)
			ta.draws = sampleDraws(n)
			var buf []byte
			for range ta.draws {
				ta.add(string(s.Random(buf[:0])))
			}
			ta.check()

			ta = newTally(t, label("SRANDMEMBER -count"), members)
			for range sampleDraws(n) / 100 {
				s.RandomRepeat(100, func(m []byte) { ta.add(string(m)); ta.draws++ })
			}
			ta.check()

			for _, k := range distinctCounts(n) {
				ta = newTally(t, label(fmt.Sprintf("SRANDMEMBER %d", k)), members)
				ta.k = k
				first := newTally(t, label(fmt.Sprintf("SRANDMEMBER %d, first reply", k)), members)
				for range subsetReps(n, k) {
					seen := map[string]bool{}
					s.RandomDistinct(k, func(m []byte) {
						if seen[string(m)] {
							t.Fatalf("%s: %s repeated", ta.what, m)
						}
						if len(seen) == 0 {
							first.add(string(m))
							first.draws++
						}
						seen[string(m)] = true
						ta.add(string(m))
					})
					if len(seen) != k {
						t.Fatalf("%s: %d members", ta.what, len(seen))
					}
					ta.draws++
				}
				ta.check()
				// Drawn one by one or shuffled: the first is one fair pick
				// (checked when there are enough of them for the test).
				if first.draws >= 20*n {
					first.check()
				}
			}
		}
	}
}

func TestSPopUniform(t *testing.T) {
	for _, c := range setCases {
		_, db := samplingEngine(t, c.limits)
		for _, n := range c.sizes {
			key := b("s")
			members := c.build(t, db, "s", n)
			label := func(op string) string { return fmt.Sprintf("%s %s n=%d: %s", c.enc, c.name, n, op) }

			ta := newTally(t, label("SPOP"), members)
			ta.draws = sampleDraws(n)
			for range ta.draws {
				m, removed, err := db.SPop(key)
				if err != nil || removed || m == nil {
					t.Fatalf("SPOP: %q %v %v", m, removed, err)
				}
				ta.add(string(m))
				db.SAdd(key, [][]byte{m})
			}
			ta.check()

			// Case 2 (pop one by one) for small counts, case 3 (keep a
			// random rest) when the rest is at most a fifth of the count.
			for _, k := range []int{2, n / 3, n - max(1, n/10)} {
				ta = newTally(t, label(fmt.Sprintf("SPOP %d", k)), members)
				ta.k = k
				for range subsetReps(n, k) {
					r, err := db.SPopCount(key, int64(k))
					if err != nil || r.KeyRemoved || len(r.Members) != k {
						t.Fatalf("%s: %d members, %v, %v", ta.what, len(r.Members), r.KeyRemoved, err)
					}
					seen := map[string]bool{}
					for _, m := range r.Members {
						if seen[string(m)] {
							t.Fatalf("%s: %s popped twice", ta.what, m)
						}
						seen[string(m)] = true
						ta.add(string(m))
					}
					ta.draws++
					db.SAdd(key, r.Members)
				}
				ta.check()
			}
		}
	}
}

// hashCase is one way of building a hash for the sampling tests.
type hashCase struct {
	name   string
	enc    string
	field  func(i int) string
	limits func(*Limits)
	sizes  []int
	sparse bool
}

var hashCases = []hashCase{
	{name: "fields", enc: "hashtable", field: func(i int) string { return "f" + strconv.Itoa(i) },
		limits: func(l *Limits) { l.HashMaxListpackEntries = 0 }, sizes: []int{10, 100, 1000}},
	{name: "fields-sparse", enc: "hashtable", field: func(i int) string { return "f" + strconv.Itoa(i) },
		limits: func(l *Limits) { l.HashMaxListpackEntries = 0 }, sizes: []int{10, 100, 1000}, sparse: true},
	// Redis's test: one field longer than hash-max-listpack-value.
	{name: "long-field", enc: "hashtable", field: func(i int) string {
		if i == 0 {
			return fmt.Sprintf("%080d", i)
		}
		return "f" + strconv.Itoa(i)
	}, sizes: []int{10}},
	{name: "listpack", enc: "listpack", field: func(i int) string { return "f" + strconv.Itoa(i) }, sizes: []int{10, 100}},
}

func (c hashCase) build(t *testing.T, db *DB, key string, n int) []string {
	t.Helper()
	db.Delete(b(key))
	total := n
	if c.sparse {
		total = pow2Floor(8 * n)
	}
	var pairs [][]byte
	for i := 0; i < total; i++ {
		pairs = append(pairs, b(c.field(i)), b("v:"+c.field(i)))
	}
	db.HSet(b(key), pairs)
	var fields []string
	if c.sparse {
		perm := rand.Perm(total)
		var rem [][]byte
		for _, i := range perm[n:] {
			rem = append(rem, b(c.field(i)))
		}
		db.HDel(b(key), rem)
		for _, i := range perm[:n] {
			fields = append(fields, c.field(i))
		}
	} else {
		for i := 0; i < n; i++ {
			fields = append(fields, c.field(i))
		}
	}
	h, _ := db.ReadHash(b(key))
	if h.Encoding() != c.enc || h.Len() != n {
		t.Fatalf("%s: encoding %s, %d fields; want %s, %d", c.name, h.Encoding(), h.Len(), c.enc, n)
	}
	if c.sparse {
		if b0, _ := h.dict.Buckets(); b0 != total {
			t.Fatalf("%s: %d buckets, want %d (no shrink)", c.name, b0, total)
		}
	}
	return fields
}

func TestHashRandomUniform(t *testing.T) {
	for _, c := range hashCases {
		_, db := samplingEngine(t, c.limits)
		for _, n := range c.sizes {
			fields := c.build(t, db, "h", n)
			h, _ := db.ReadHash(b("h"))
			label := func(op string) string { return fmt.Sprintf("%s %s n=%d: %s", c.enc, c.name, n, op) }
			pair := func(what string, f, v []byte) string {
				if string(v) != "v:"+string(f) {
					t.Fatalf("%s: field %q came with %q", what, f, v)
				}
				return string(f)
			}

			ta := newTally(t, label("HRANDFIELD"), fields)
			ta.draws = sampleDraws(n)
			if c.enc == "listpack" {
				ta.draws = 20000 // each pick walks the listpack
			}
			for range ta.draws {
				f, v := h.Random()
				ta.add(pair(ta.what, f, v))
			}
			ta.check()

			// WITHVALUES or not, the command makes the same picks; the
			// values must come with their fields.
			ta = newTally(t, label("HRANDFIELD -count WITHVALUES"), fields)
			for range sampleDraws(n) / 100 {
				h.RandomRepeat(100, func(f, v []byte) { ta.add(pair(ta.what, f, v)); ta.draws++ })
			}
			ta.check()

			for _, k := range distinctCounts(n) {
				ta = newTally(t, label(fmt.Sprintf("HRANDFIELD %d WITHVALUES", k)), fields)
				ta.k = k
				first := newTally(t, label(fmt.Sprintf("HRANDFIELD %d, first reply", k)), fields)
				for range subsetReps(n, k) {
					seen := map[string]bool{}
					h.RandomDistinct(k, func(f, v []byte) {
						name := pair(ta.what, f, v)
						if seen[name] {
							t.Fatalf("%s: %s repeated", ta.what, f)
						}
						if len(seen) == 0 {
							first.add(name)
							first.draws++
						}
						seen[name] = true
						ta.add(name)
					})
					if len(seen) != k {
						t.Fatalf("%s: %d fields", ta.what, len(seen))
					}
					ta.draws++
				}
				ta.check()
				if first.draws >= 20*n {
					first.check()
				}
			}
		}
	}
}

func TestZRandMemberUniform(t *testing.T) {
	for _, c := range []struct {
		name   string
		enc    string
		limits func(*Limits)
		sizes  []int
	}{
		{"listpack", "listpack", nil, []int{10, 100}},
		{"skiplist", "skiplist", func(l *Limits) { l.ZSetMaxListpackEntries = 0 }, []int{10, 100, 1000}},
	} {
		_, db := samplingEngine(t, c.limits)
		for _, n := range c.sizes {
			db.Delete(b("z"))
			var members []string
			var scores []float64
			var ms [][]byte
			for i := 0; i < n; i++ {
				m := "m" + strconv.Itoa(i)
				members = append(members, m)
				ms = append(ms, b(m))
				scores = append(scores, float64(i%7))
			}
			if _, err := db.ZAdd(b("z"), ZAddFlags{}, scores, ms); err != nil {
				t.Fatal(err)
			}
			z, _ := db.ZSetRead(b("z"))
			if z.Encoding() != c.enc {
				t.Fatalf("encoding %s, want %s", z.Encoding(), c.enc)
			}
			label := func(op string) string { return fmt.Sprintf("%s n=%d: %s", c.enc, n, op) }
			check := func(what string, sm ScoreMember) string {
				i, _ := strconv.Atoi(sm.Member[1:])
				if sm.Score != float64(i%7) {
					t.Fatalf("%s: %s with score %g", what, sm.Member, sm.Score)
				}
				return sm.Member
			}

			ta := newTally(t, label("ZRANDMEMBER"), members)
			ta.draws = sampleDraws(n)
			for range ta.draws {
				ta.add(check(ta.what, z.RandomMember()))
			}
			ta.check()

			ta = newTally(t, label("ZRANDMEMBER -count WITHSCORES"), members)
			for range sampleDraws(n) / 100 {
				z.RandomMembers(100, false, func(sm ScoreMember) { ta.add(check(ta.what, sm)); ta.draws++ })
			}
			ta.check()

			for _, k := range distinctCounts(n) {
				ta = newTally(t, label(fmt.Sprintf("ZRANDMEMBER %d", k)), members)
				ta.k = k
				for range subsetReps(n, k) {
					seen := map[string]bool{}
					z.RandomMembers(uint64(k), true, func(sm ScoreMember) {
						m := check(ta.what, sm)
						if seen[m] {
							t.Fatalf("%s: %s repeated", ta.what, m)
						}
						seen[m] = true
						ta.add(m)
					})
					if len(seen) != k {
						t.Fatalf("%s: %d members", ta.what, len(seen))
					}
					ta.draws++
				}
				ta.check()
			}
		}
	}
}

func TestDBRandomKeyUniform(t *testing.T) {
	for _, n := range []int{10, 100, 1000} {
		for _, sparse := range []bool{false, true} {
			_, db := samplingEngine(t, nil)
			total := n
			if sparse {
				total = pow2Floor(8 * n)
			}
			for i := 0; i < total; i++ {
				db.SetString(b("key:"+strconv.Itoa(i)), b("v"), SetOptions{})
			}
			var keys []string
			perm := rand.Perm(total)
			for _, i := range perm[n:] {
				db.Delete(b("key:" + strconv.Itoa(i)))
			}
			for _, i := range perm[:n] {
				keys = append(keys, "key:"+strconv.Itoa(i))
			}
			state := "full"
			if sparse {
				state = "sparse"
			}
			ta := newTally(t, fmt.Sprintf("RANDOMKEY %s %d keys", state, n), keys)
			ta.draws = sampleDraws(n)
			for range ta.draws {
				ta.add(string(db.RandomKey()))
			}
			ta.check()
		}
	}
}

// BenchmarkDictRandomKey measures one random pick from tables of several
// sizes: filled to their growth point (load 1/2 to 1) and emptied to just
// above the shrink threshold (load 1/8, chains left from the full table).
func BenchmarkDictRandomKey(b *testing.B) {
	for _, c := range []struct {
		name   string
		n      int
		sparse bool
	}{
		{"10", 10, false}, {"1000", 1000, false}, {"1M", 1 << 20, false},
		{"1000-sparse", 1000, true}, {"128k-sparse", 1 << 17, true},
	} {
		d := NewDict[int]()
		total := c.n
		if c.sparse {
			total = 8 * c.n
		}
		for i := 0; i < total; i++ {
			d.Insert("key:" + strconv.Itoa(i))
		}
		for i := c.n; i < total; i++ {
			d.Delete("key:" + strconv.Itoa(i))
		}
		for d.rehashing() {
			d.rehashStep()
		}
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, ok := d.RandomKey(); !ok {
					b.Fatal("empty")
				}
			}
		})
	}
}

// BenchmarkSRandMemberNeg is SRANDMEMBER key -100 on a 1000-member
// hashtable set.
func BenchmarkSRandMemberNeg(b *testing.B) {
	e := New(Options{})
	db := e.DB(0)
	e.Lock()
	defer e.Unlock()
	var ms [][]byte
	for i := 0; i < 1000; i++ {
		ms = append(ms, []byte("member:"+strconv.Itoa(i)))
	}
	db.SAdd([]byte("s"), ms)
	s, _ := db.ReadSet([]byte("s"))
	n := 0
	b.ResetTimer()
	for range b.N {
		s.RandomRepeat(100, func([]byte) { n++ })
	}
}

// BenchmarkHRandFieldNeg is HRANDFIELD key -100 WITHVALUES on a
// 1000-field hashtable hash.
func BenchmarkHRandFieldNeg(b *testing.B) {
	e := New(Options{})
	db := e.DB(0)
	e.Lock()
	defer e.Unlock()
	var pairs [][]byte
	for i := 0; i < 1000; i++ {
		pairs = append(pairs, []byte("field:"+strconv.Itoa(i)), []byte("v"))
	}
	db.HSet([]byte("h"), pairs)
	h, _ := db.ReadHash([]byte("h"))
	n := 0
	b.ResetTimer()
	for range b.N {
		h.RandomRepeat(100, func(_, _ []byte) { n++ })
	}
}
