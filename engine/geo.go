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
		glibcSort(points, cmp)
		return
	}
	partialQuicksort(points, cmp, 0, count-1)
}
