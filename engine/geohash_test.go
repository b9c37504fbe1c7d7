package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func TestGeoBitsSpreadAndGather(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		v := rng.Uint32()
		s := spreadBits(v)
		if s&0xaaaaaaaaaaaaaaaa != 0 {
			t.Fatalf("spreadBits(%#x) = %#x has odd bits", v, s)
		}
		if g := gatherBits(s); g != v {
			t.Fatalf("gatherBits(spreadBits(%#x)) = %#x", v, g)
		}
		if g := gatherBits(s | s<<1); g != v { // odd bits are ignored
			t.Fatalf("gatherBits ignores odd bits: %#x", g)
		}
	}
}

// Redis's documented examples: the scores, geohash strings and distance of
// Palermo and Catania.
func TestGeoKnownPoints(t *testing.T) {
	cases := []struct {
		lon, lat float64
		score    float64
		hash     string
	}{
		{13.361389, 38.115556, 3479099956230698, "sqc8b49rny0"},
		{15.087269, 37.502669, 3479447370796909, "sqdtr74hyu0"},
	}
	for _, c := range cases {
		score, ok := GeoEncode(c.lon, c.lat)
		if !ok || score != c.score {
			t.Errorf("GeoEncode(%v, %v) = %v, %v; want %v", c.lon, c.lat, score, ok, c.score)
		}
		if h := GeoHashString(score); h != c.hash {
			t.Errorf("GeoHashString(%v) = %q, want %q", score, h, c.hash)
		}
		lon, lat := GeoDecodeScore(score)
		if math.Abs(lon-c.lon) > 1e-5 || math.Abs(lat-c.lat) > 1e-5 {
			t.Errorf("GeoDecodeScore(%v) = %v, %v", score, lon, lat)
		}
	}
	lon1, lat1 := GeoDecodeScore(cases[0].score)
	lon2, lat2 := GeoDecodeScore(cases[1].score)
	if d := fmt.Sprintf("%.4f", GeoDistance(lon1, lat1, lon2, lat2)); d != "166274.1516" {
		t.Errorf("Palermo-Catania: %s m", d)
	}
	if _, ok := GeoEncode(180.1, 0); ok {
		t.Error("longitude 180.1 encoded")
	}
	if _, ok := GeoEncode(0, 85.06); ok {
		t.Error("latitude 85.06 encoded")
	}
}

// TestGeoScoreBits: scores that are no geohash convert as C's (uint64_t)
// cast does on x86-64.
func TestGeoScoreBits(t *testing.T) {
	cases := []struct {
		in   float64
		want uint64
	}{
		{0, 0}, {1.9, 1}, {-1, math.MaxUint64}, {4503599627370495, 4503599627370495},
		{math.NaN(), 1 << 63}, {math.Inf(1), 0}, {math.Inf(-1), 1 << 63}, {-1e20, 1 << 63},
		{9223372036854775808, 1 << 63}, {18446744073709551616, 0}, {1e19, 10000000000000000000},
	}
	for _, c := range cases {
		if got := scoreBits(c.in); got != c.want {
			t.Errorf("scoreBits(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestGeoNeighbors: moving a cell and back is the identity; moving across
// the antimeridian wraps to the other side.
func TestGeoNeighbors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		step := uint8(1 + rng.IntN(26))
		lon, lat := rng.Float64()*360-180, rng.Float64()*170-85
		h, ok := geoEncode(geoLonRange, geoLatRange, lon, lat, step)
		if !ok {
			t.Fatal("encode failed")
		}
		for _, d := range [][2]int{{1, 0}, {0, 1}, {1, 1}, {-1, 1}} {
			if back := h.neighbor(d[0], d[1]).neighbor(-d[0], -d[1]); back != h {
				t.Fatalf("step %d: %v moved %v and back is %v", step, h, d, back)
			}
		}
		a, _ := geoDecode(geoLonRange, geoLatRange, h)
		e, _ := geoDecode(geoLonRange, geoLatRange, h.neighbor(1, 0))
		if a.lon.max != 180 && e.lon.min != a.lon.max {
			t.Fatalf("east of %v starts at %v", a.lon, e.lon)
		}
		if a.lon.max == 180 && e.lon.min != -180 {
			t.Fatalf("east of the last column starts at %v", e.lon)
		}
	}
}

func TestGeoEstimateStep(t *testing.T) {
	cases := []struct {
		meters, lat float64
		want        uint8
	}{
		{0, 0, 26}, {1, 0, 24}, {1000, 0, 14}, {1000, 70, 13}, {1000, -81, 12},
		{5000000, 0, 2}, {1e7, 0, 1}, {1e12, 0, 1}, {0.001, 0, 26},
	}
	for _, c := range cases {
		if got := geoEstimateStep(c.meters, c.lat); got != c.want {
			t.Errorf("geoEstimateStep(%v, %v) = %d, want %d", c.meters, c.lat, got, c.want)
		}
	}
}

// TestGeoPartialSort: the partial quicksort puts the count nearest points,
// in order, first, whatever the ties.
func TestGeoPartialSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		n := 1 + rng.IntN(120)
		pts := make([]GeoPoint, n)
		for i := range pts {
			pts[i] = GeoPoint{Member: strconv.Itoa(i), Dist: float64(rng.IntN(1 + n/3))}
		}
		desc := rng.IntN(2) == 0
		count := 1 + rng.IntN(n)
		want := slices.Clone(pts)
		slices.SortStableFunc(want, func(a, b GeoPoint) int {
			if desc {
				return -cmpFloat(a.Dist, b.Dist)
			}
			return cmpFloat(a.Dist, b.Dist)
		})
		got := slices.Clone(pts)
		GeoSort(got, desc, count)
		for i := range count {
			if got[i].Dist != want[i].Dist {
				t.Fatalf("n=%d count=%d desc=%v: position %d has %v, want %v", n, count, desc, i, got[i].Dist, want[i].Dist)
			}
		}
		if count == n && !slices.Equal(got, want) {
			t.Fatalf("a full sort is not stable")
		}
		// Still a permutation.
		seen := map[string]bool{}
		for _, p := range got {
			seen[p.Member] = true
		}
		if len(seen) != n {
			t.Fatalf("lost points: %d of %d", len(seen), n)
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestGeoSearchFindsEveryPoint: a search returns exactly the points within
// the radius (checked by brute force), in both encodings.
func TestGeoSearchFindsEveryPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{100, 3000} {
		z := geoTestSet(rng, n, n > 128)
		for range 200 {
			s := &GeoShape{Lon: 2.35 + rng.NormFloat64(), Lat: 48.85 + rng.NormFloat64(), Unit: 1000,
				Radius: rng.Float64() * 300}
			got := map[string]bool{}
			for _, p := range z.GeoSearch(s, 0) {
				if got[p.Member] {
					t.Fatalf("%s found twice", p.Member)
				}
				got[p.Member] = true
			}
			z.forEach(false, func(it zitem) bool {
				lon, lat := GeoDecodeScore(it.score)
				in := GeoDistance(s.Lon, s.Lat, lon, lat) <= s.Radius*s.Unit
				if in != got[it.member] {
					t.Fatalf("%s at %v,%v: in radius %v, found %v", it.member, lon, lat, in, got[it.member])
				}
				return true
			})
		}
	}
}

func geoTestSet(rng *rand.Rand, n int, skiplist bool) *ZSet {
	z := NewZSet()
	if skiplist {
		z.toSkiplist()
	}
	for i := range n {
		lon := min(max(2.35+rng.NormFloat64()*2, -180), 180)
		lat := min(max(48.85+rng.NormFloat64()*2, -85), 85)
		score, _ := GeoEncode(lon, lat)
		z.insertNew("p"+strconv.Itoa(i), score)
	}
	return z
}

// BenchmarkGeoSearchRadius: a 10 km radius search, sorted, over 100k points
// spread over about 400 x 400 km.
func BenchmarkGeoSearchRadius(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	z := NewZSet()
	z.toSkiplist()
	for i := range 100000 {
		score, _ := GeoEncode(2.35+rng.Float64()*5-2.5, 48.85+rng.Float64()*3.6-1.8)
		z.insertNew("p"+strconv.Itoa(i), score)
	}
	s := &GeoShape{Lon: 2.35, Lat: 48.85, Radius: 10, Unit: 1000}
	found := 0
	b.ResetTimer()
	for b.Loop() {
		pts := z.GeoSearch(s, 0)
		GeoSort(pts, false, 0)
		found = len(pts)
	}
	b.ReportMetric(float64(found), "points/op")
}
