package engine

// Geo searches over a sorted set whose scores are geohashes (geohash.go).
// A search visits the nine cells around the centre, each one score range
// of the set, and keeps the points inside the shape: in cell order, then
// in set order within a cell, which is the order Redis replies unsorted
// results in.

// GeoPoint is one point a search found. Member aliases the set's bytes:
// valid until the set is next written.
type GeoPoint struct {
	Member   string
	Score    float64
	Lon, Lat float64
	Dist     float64 // meters from the centre
}

// GeoSearch returns the points of the set inside the shape. limit > 0
// stops the search once it has found that many (COUNT ... ANY).
func (z *ZSet) GeoSearch(s *GeoShape, limit int) []GeoPoint {
	cells := geoSearchAreas(s)
	s.prepare()
	var out []GeoPoint
	last := 0 // the last cell searched, 0 for none or the centre's
	for i, c := range cells {
		if c.isZero() {
			continue
		}
		// With huge radii neighbours can be the same cell: skip a repeat
		// of the cell just searched.
		if last != 0 && c == cells[last] {
			continue
		}
		if limit > 0 && len(out) >= limit {
			break
		}
		out = z.geoCell(c, s, out, limit)
		last = i
	}
	return out
}

// geoCell appends the points of cell c inside the shape: the scores from
// the cell's lowest (included) to the next cell's lowest (excluded).
func (z *ZSet) geoCell(c geoHash, s *GeoShape, out []GeoPoint, limit int) []GeoPoint {
	lo := float64(c.align52())
	c.bits++
	hi := float64(c.align52())
	z.ascend(zitem{score: lo}, func(it zitem) bool {
		if it.score >= hi {
			return false
		}
		lon, lat := GeoDecodeScore(it.score)
		if d, ok := s.contains(lon, lat); ok {
			out = append(out, GeoPoint{Member: it.member, Score: it.score, Lon: lon, Lat: lat, Dist: d})
		}
		return limit <= 0 || len(out) < limit
	})
	return out
}

// GeoSort orders points by distance, nearest first (farthest with desc),
// as Redis does: all of them with glibc's qsort (a merge sort), or, when
// only the first count are wanted, with Redis's partial quicksort, whose
// order of equal distances the reply shows.
func GeoSort(points []GeoPoint, desc bool, count int) {
	cmp := func(a, b *GeoPoint) int {
		// Redis's comparison: greater, equal, else less (so a NaN
		// distance is less than anything).
		r := -1
		switch {
		case a.Dist > b.Dist:
			r = 1
		case a.Dist == b.Dist:
			r = 0
		}
		if desc {
			return -r
		}
		return r
	}
	if count <= 0 || count >= len(points) {
		glibcMergeSort(points, make([]GeoPoint, len(points)), cmp)
		return
	}
	partialQuicksort(points, cmp, 0, count-1)
}

// glibcMergeSort sorts a as glibc's qsort does (msort_with_tmp): top down,
// the left half len/2 long, the left element first unless the comparison
// says greater. Any stable sort gives the same order for a strict weak
// order; this one also gives glibc's for Redis's comparison, which is not
// one when a distance is NaN. tmp holds at least len(a) points.
func glibcMergeSort(a, tmp []GeoPoint, cmp func(a, b *GeoPoint) int) {
	n := len(a)
	if n <= 1 {
		return
	}
	n1 := n / 2
	glibcMergeSort(a[:n1], tmp, cmp)
	glibcMergeSort(a[n1:], tmp, cmp)
	i, j, k := 0, n1, 0
	for i < n1 && j < n {
		if cmp(&a[i], &a[j]) <= 0 {
			tmp[k] = a[i]
			i++
		} else {
			tmp[k] = a[j]
			j++
		}
		k++
	}
	// The rest of the left half follows; the rest of the right half is in
	// place already.
	k += copy(tmp[k:], a[i:n1])
	copy(a, tmp[:k])
}

// partialQuicksort sorts enough of a for the positions lrange..rrange to
// hold what a full sort would put there: Bentley and McIlroy's quicksort
// (median of three, or the ninther above 40 elements; three-way
// partition; insertion sort below 7) that skips the partitions outside
// the range. It is Redis's pqsort, whose exact swaps decide where equal
// elements end up.
func partialQuicksort(a []GeoPoint, cmp func(a, b *GeoPoint) int, lrange, rrange int) {
	pqsortSpan(a, 0, len(a), cmp, lrange, rrange)
}

func pqsortSpan(a []GeoPoint, lo, n int, cmp func(a, b *GeoPoint) int, lrange, rrange int) {
	swap := func(i, j int) { a[i], a[j] = a[j], a[i] }
	swapRun := func(i, j, k int) { // k elements from i and from j
		for ; k > 0; k-- {
			swap(i, j)
			i, j = i+1, j+1
		}
	}
	med3 := func(x, y, z int) int {
		if cmp(&a[x], &a[y]) < 0 {
			switch {
			case cmp(&a[y], &a[z]) < 0:
				return y
			case cmp(&a[x], &a[z]) < 0:
				return z
			}
			return x
		}
		switch {
		case cmp(&a[y], &a[z]) > 0:
			return y
		case cmp(&a[x], &a[z]) < 0:
			return x
		}
		return z
	}
	for {
		if n < 7 {
			for m := lo + 1; m < lo+n; m++ {
				for l := m; l > lo && cmp(&a[l-1], &a[l]) > 0; l-- {
					swap(l, l-1)
				}
			}
			return
		}
		m := lo + n/2
		if n > 7 {
			l, r := lo, lo+n-1
			if n > 40 {
				d := n / 8
				l = med3(l, l+d, l+2*d)
				m = med3(m-d, m, m+d)
				r = med3(r-2*d, r-d, r)
			}
			m = med3(l, m, r)
		}
		swap(lo, m)
		pa, pb := lo+1, lo+1
		pc, pd := lo+n-1, lo+n-1
		for {
			for pb <= pc {
				c := cmp(&a[pb], &a[lo])
				if c > 0 {
					break
				}
				if c == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				c := cmp(&a[pc], &a[lo])
				if c < 0 {
					break
				}
				if c == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		end := lo + n
		r := min(pa-lo, pb-pa)
		swapRun(lo, pb-r, r)
		r = min(pd-pc, end-pd-1)
		swapRun(pb, end-r, r)
		// Recurse into the smaller-than part, loop on the greater-than
		// part, each only when it overlaps the wanted range.
		overlaps := func(from, size int) bool { return !(rrange < from || lrange >= from+size) }
		if r := pb - pa; r > 1 && overlaps(lo, r) {
			pqsortSpan(a, lo, r, cmp, lrange, rrange)
		}
		r = pd - pc
		if r <= 1 {
			return
		}
		lo, n = end-r, r
		if !overlaps(lo, n) {
			return
		}
	}
}
