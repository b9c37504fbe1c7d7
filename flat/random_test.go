package flat

import (
	"math"
	"math/rand/v2"
	"testing"
)

// chiSquareSF is the probability that a chi-square variable with df
// degrees of freedom exceeds x, by Wilson and Hilferty's normal
// approximation of the cube root (close enough for df >= 10 to tell a fair
// pick from one that favours some keys: those score orders of magnitude
// above the bound).
func chiSquareSF(x float64, df int) float64 {
	k := float64(df)
	z := (math.Cbrt(x/k) - (1 - 2/(9*k))) / math.Sqrt(2/(9*k))
	return math.Erfc(z/math.Sqrt2) / 2
}

func TestChiSquareSF(t *testing.T) {
	for _, c := range []struct {
		x    float64
		df   int
		want float64
	}{{16.918978, 9, 0.05}, {123.225221, 99, 0.05}, {1073.642651, 999, 0.05}, {1131.158, 999, 0.002}} {
		if got := chiSquareSF(c.x, c.df); math.Abs(got-c.want) > c.want*0.1 {
			t.Errorf("chiSquareSF(%g, %d) = %g, want %g", c.x, c.df, got, c.want)
		}
	}
}

// TestRandomFair draws many random keys from tables of several shapes (one
// sparse segment, one fuller, many segments at different depths, segments
// left sparse by deletes) and checks the counts against the uniform
// distribution with Pearson's chi-square at p = 1e-9.
func TestRandomFair(t *testing.T) {
	cases := []struct {
		name      string
		bits      int
		insert    int
		deleteOut int
	}{
		{"one sparse segment", DefaultSegmentBits, 40, 0},
		{"one segment", DefaultSegmentBits, 700, 0},
		{"many segments", 4, 2000, 0},
		{"many segments after deletes", 4, 6000, 5000},
		{"1024-slot segments", DefaultSegmentBits, 20000, 0},
		{"1024-slot segments after deletes", DefaultSegmentBits, 40000, 30000},
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range cases {
		k := newKeyspace(c.bits)
		for i := 0; i < c.insert; i++ {
			k.Set(keyName(i), 0, 0, 0, nil)
		}
		for _, i := range rng.Perm(c.insert)[:c.deleteOut] {
			k.Delete(keyName(i))
		}
		n := k.Len()
		counts := map[string]int{}
		draws := max(20000, 50*n)
		for range draws {
			counts[string(k.Random(rng).Key())]++
		}
		if len(counts) > n {
			t.Fatalf("%s: drew %d distinct keys of %d", c.name, len(counts), n)
		}
		exp := float64(draws) / float64(n)
		chi := 0.0
		k.ForEach(func(r Record) bool {
			d := float64(counts[string(r.Key())]) - exp
			chi += d * d / exp
			return true
		})
		p := chiSquareSF(chi, n-1)
		st := k.Stats().Table
		t.Logf("%-34s %6d keys, %5d segments, load %.2f: chi2 %.0f df %d p %.2g", c.name, n, st.Segments, st.Load, chi, n-1, p)
		if p < 1e-9 {
			t.Errorf("%s: not uniform (chi-square %.0f, df %d, p %.2g)", c.name, chi, n-1, p)
		}
	}
}

func TestSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 3, 5, 40, 3000} {
		k := newKeyspace(6)
		for i := 0; i < n; i++ {
			k.Set(keyName(i), 0, 0, 0, nil)
		}
		hit := map[string]bool{}
		for range 2000 {
			got := k.Sample(rng, 5, nil)
			if want := min(5, n); len(got) != want {
				t.Fatalf("n %d: sampled %d, want %d", n, len(got), want)
			}
			distinct := map[string]bool{}
			for _, r := range got {
				key := string(r.Key())
				if distinct[key] {
					t.Fatalf("n %d: %s sampled twice", n, key)
				}
				distinct[key] = true
				hit[key] = true
				if k.Get(r.Key()) == nil {
					t.Fatalf("sampled a key not in the table")
				}
			}
		}
		if n <= 40 && len(hit) != n {
			t.Fatalf("n %d: only %d keys ever sampled", n, len(hit))
		}
	}
	var empty Table
	if empty.RandomHandle(nil) != 0 || len(empty.Sample(nil, 5, nil)) != 0 {
		t.Fatal("sampling an empty table")
	}
}
