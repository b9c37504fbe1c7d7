package engine

import (
	"math"

	"github.com/revolver-db/revolver/libm"
)

// Geohashes as Redis's geo commands compute them. A point is a 52-bit
// integer: 26 bits of longitude and 26 of latitude, interleaved (longitude
// in the odd bits, latitude in the even ones), over Redis's coordinate
// ranges — latitude only to ±85.05112878, the Web Mercator limit. A geo set
// is a sorted set whose scores are these integers, so the points of one
// geohash cell are one score range.
//
// Everything here follows Redis 7.0 operation for operation (the same
// floating point expressions in the same order, C's conversions, the same
// special cases), because the replies expose the results: coordinates
// printed with 17 digits, which cells a search visits and in what order.

// Coordinate limits.
const (
	GeoLonMin = -180.0
	GeoLonMax = 180.0
	GeoLatMin = -85.05112878
	GeoLatMax = 85.05112878
	// geoStepMax is the precision of a stored point: 26 bits per axis.
	geoStepMax = 26
	// earthRadius is the radius (meters) of Redis's haversine formula.
	earthRadius = 6372797.560856
	// mercatorMax bounds the step estimation (half the Mercator width).
	mercatorMax = 20037726.37
)

// degToRad is C's M_PI / 180.0: pi rounded to a double, then divided in
// double precision (a Go constant expression would divide exactly and
// round once, which can differ in the last bit).
var degToRad = func() float64 { pi := math.Pi; return pi / 180.0 }()

func degRad(deg float64) float64 { return deg * degToRad }
func radDeg(rad float64) float64 { return rad / degToRad }

// geoHash is a cell: the interleaved bits of its position at step bits
// per axis. The zero value (no bits, step 0) means "no cell".
type geoHash struct {
	bits uint64
	step uint8
}

func (h geoHash) isZero() bool { return h.bits == 0 && h.step == 0 }

// geoRange is one axis's [min, max].
type geoRange struct{ min, max float64 }

func (r geoRange) isZero() bool { return r.min == 0 && r.max == 0 }

// geoArea is a cell with its bounds.
type geoArea struct {
	hash     geoHash
	lon, lat geoRange
}

var (
	geoLonRange = geoRange{GeoLonMin, GeoLonMax}
	geoLatRange = geoRange{GeoLatMin, GeoLatMax}
	// The standard geohash ranges, for GEOHASH's strings.
	stdLonRange = geoRange{-180, 180}
	stdLatRange = geoRange{-90, 90}
)

// spreadBits moves bit i of v to bit 2i.
func spreadBits(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

// gatherBits moves bit 2i of v to bit i (the inverse of spreadBits).
func gatherBits(v uint64) uint32 {
	x := v & 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	return uint32(x)
}

// geoEncode returns the cell of (lon, lat) at step bits per axis over the
// given ranges; false when the point is outside Redis's limits or the
// ranges.
func geoEncode(lonR, latR geoRange, lon, lat float64, step uint8) (geoHash, bool) {
	if step > 32 || step == 0 || latR.isZero() || lonR.isZero() {
		return geoHash{}, false
	}
	if lon > GeoLonMax || lon < GeoLonMin || lat > GeoLatMax || lat < GeoLatMin {
		return geoHash{}, false
	}
	if lat < latR.min || lat > latR.max || lon < lonR.min || lon > lonR.max {
		return geoHash{step: step}, false
	}
	latOff := (lat - latR.min) / (latR.max - latR.min)
	lonOff := (lon - lonR.min) / (lonR.max - lonR.min)
	scale := float64(uint64(1) << step)
	latOff *= scale
	lonOff *= scale
	// C converts the offsets to uint32 by truncation; at the top of a
	// range the offset is 2^step itself, one bit past the cell bits.
	return geoHash{bits: spreadBits(uint32(latOff)) | spreadBits(uint32(lonOff))<<1, step: step}, true
}

// geoDecode returns the bounds of cell h over the given ranges.
func geoDecode(lonR, latR geoRange, h geoHash) (geoArea, bool) {
	if h.isZero() || latR.isZero() || lonR.isZero() {
		return geoArea{}, false
	}
	latCells := gatherBits(h.bits)
	lonCells := gatherBits(h.bits >> 1)
	latScale := latR.max - latR.min
	lonScale := lonR.max - lonR.min
	div := float64(uint64(1) << h.step)
	a := geoArea{hash: h}
	// latCells+1 is 32-bit arithmetic, as in C (it wraps only for scores
	// that are no geohash).
	a.lat.min = latR.min + (float64(latCells)*1.0/div)*latScale
	a.lat.max = latR.min + (float64(latCells+1)*1.0/div)*latScale
	a.lon.min = lonR.min + (float64(lonCells)*1.0/div)*lonScale
	a.lon.max = lonR.min + (float64(lonCells+1)*1.0/div)*lonScale
	return a, true
}

// center is the middle of the area, clamped to Redis's limits.
func (a *geoArea) center() (lon, lat float64) {
	lon = (a.lon.min + a.lon.max) / 2
	lon = min(max(lon, GeoLonMin), GeoLonMax)
	lat = (a.lat.min + a.lat.max) / 2
	lat = min(max(lat, GeoLatMin), GeoLatMax)
	return lon, lat
}

// scoreBits converts a sorted-set score to the integer it encodes the way
// C's (uint64_t) cast does on x86-64, so that a member whose score is no
// geohash (a plain ZADD) decodes to the same place as on Redis.
func scoreBits(score float64) uint64 {
	const two63 = 9223372036854775808.0
	switch {
	case math.IsNaN(score):
		return 1 << 63
	case score >= two63:
		// Subtract 2^63, convert signed, flip the top bit.
		d := score - two63
		if d >= two63 {
			return 0 // the signed conversion overflows to 1<<63; flipped, 0
		}
		return uint64(int64(d)) ^ (1 << 63)
	case score < -two63:
		return 1 << 63
	}
	return uint64(int64(score))
}

// GeoDecodeScore returns the coordinates a geo set's score stands for.
func GeoDecodeScore(score float64) (lon, lat float64) {
	a, _ := geoDecode(geoLonRange, geoLatRange, geoHash{bits: scoreBits(score), step: geoStepMax})
	return a.center()
}

// GeoEncode returns the score of a point; false when the point is out of
// Redis's limits.
func GeoEncode(lon, lat float64) (float64, bool) {
	h, ok := geoEncode(geoLonRange, geoLatRange, lon, lat, geoStepMax)
	if !ok {
		return 0, false
	}
	return float64(h.align52()), true
}

// GeoValidPoint reports whether (lon, lat) is within Redis's limits.
func GeoValidPoint(lon, lat float64) bool {
	return lon >= GeoLonMin && lon <= GeoLonMax && lat >= GeoLatMin && lat <= GeoLatMax
}

// align52 left-aligns the cell's bits to 52 bits: the lowest score of
// the cell.
func (h geoHash) align52() uint64 { return h.bits << (52 - uint(h.step)*2) }

// geoAlphabet is the standard geohash's base 32.
const geoAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// GeoHashString is GEOHASH's 11-character standard geohash of a score:
// the point is decoded, then encoded again over the standard latitude
// range (±90); the 11th character stands for bits Redis does not have.
func GeoHashString(score float64) string {
	lon, lat := GeoDecodeScore(score)
	h, _ := geoEncode(stdLonRange, stdLatRange, lon, lat, geoStepMax)
	var buf [11]byte
	for i := range 10 {
		buf[i] = geoAlphabet[(h.bits>>(52-(uint(i)+1)*5))&0x1f]
	}
	buf[10] = geoAlphabet[0]
	return string(buf[:])
}

// moveLon moves a cell one step east (d > 0) or west (d < 0), wrapping.
func (h *geoHash) moveLon(d int) {
	lonBits := h.bits & 0xaaaaaaaaaaaaaaaa
	latBits := h.bits & 0x5555555555555555
	fill := uint64(0x5555555555555555) >> (64 - uint(h.step)*2)
	if d > 0 {
		lonBits += fill + 1
	} else {
		lonBits = (lonBits | fill) - (fill + 1)
	}
	lonBits &= uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.step)*2)
	h.bits = lonBits | latBits
}

// moveLat moves a cell one step north (d > 0) or south (d < 0), wrapping.
func (h *geoHash) moveLat(d int) {
	lonBits := h.bits & 0xaaaaaaaaaaaaaaaa
	latBits := h.bits & 0x5555555555555555
	fill := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.step)*2)
	if d > 0 {
		latBits += fill + 1
	} else {
		latBits = (latBits | fill) - (fill + 1)
	}
	latBits &= uint64(0x5555555555555555) >> (64 - uint(h.step)*2)
	h.bits = lonBits | latBits
}

// neighbor returns the cell dLon steps east and dLat steps north of h.
func (h geoHash) neighbor(dLon, dLat int) geoHash {
	if dLon != 0 {
		h.moveLon(dLon)
	}
	if dLat != 0 {
		h.moveLat(dLat)
	}
	return h
}

// geoEstimateStep is the cell precision for a search of radius meters
// around latitude lat: the largest step whose cells are still wider than
// the radius (roughly), coarser near the poles.
func geoEstimateStep(meters, lat float64) uint8 {
	if meters == 0 {
		return 26
	}
	step := 1
	for meters < mercatorMax {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

// GeoShape is the area of a search: a circle of Radius or a box of Width
// by Height around (Lon, Lat), in units of Unit meters.
type GeoShape struct {
	Lon, Lat      float64
	Box           bool
	Radius        float64
	Width, Height float64
	Unit          float64

	cosLat float64 // math.Cos of the centre's latitude, for the fast filter
	// cosLatExact is the cosine of it, for GeoDistance from the centre.
	cosLatExact float64
	// beyondA is the haversine term (sin² of half the angle) past which
	// a point is surely outside the radius (surelyBeyond), above 1 when
	// none is.
	beyondA float64
}

// prepare computes what a search uses for every point.
func (s *GeoShape) prepare() {
	s.cosLat = math.Cos(degRad(s.Lat))
	s.cosLatExact = libm.Cos(degRad(s.Lat))
	s.beyondA = 2
	if half := (s.Radius*s.Unit*(1+1e-9) + 1) / (2 * earthRadius); half < math.Pi/2 {
		sin := math.Sin(half)
		s.beyondA = sin * sin * (1 + 1e-12)
	}
}

// boundingBox is the shape's extent in degrees: min lon, min lat, max
// lon, max lat. A box's sides follow meridians, so the side nearer the
// pole is the wider one in degrees.
func (s *GeoShape) boundingBox() [4]float64 {
	var height, width float64
	if s.Box {
		height = s.Unit * (s.Height / 2)
		width = s.Unit * (s.Width / 2)
	} else {
		height = s.Unit * s.Radius
		width = s.Unit * s.Radius
	}
	latDelta := radDeg(height / earthRadius)
	lonDeltaTop := radDeg(width / earthRadius / libm.Cos(degRad(s.Lat+latDelta)))
	lonDeltaBottom := radDeg(width / earthRadius / libm.Cos(degRad(s.Lat-latDelta)))
	var b [4]float64
	if s.Lat < 0 {
		b[0], b[2] = s.Lon-lonDeltaBottom, s.Lon+lonDeltaBottom
	} else {
		b[0], b[2] = s.Lon-lonDeltaTop, s.Lon+lonDeltaTop
	}
	b[1], b[3] = s.Lat-latDelta, s.Lat+latDelta
	return b
}

// The positions of the nine cells of a search.
const (
	cellCentre = iota
	cellN
	cellS
	cellE
	cellW
	cellNE
	cellNW
	cellSE
	cellSW
)

// geoSearchAreas returns the nine cells a search visits, in Redis's
// order: the centre's cell, then N, S, E, W, NE, NW, SE, SW; cells the
// shape cannot reach are zero.
func geoSearchAreas(s *GeoShape) [9]geoHash {
	b := s.boundingBox()
	minLon, minLat, maxLon, maxLat := b[0], b[1], b[2], b[3]
	var meters float64
	if s.Box {
		meters = math.Sqrt(float64((s.Width/2)*(s.Width/2)) + float64((s.Height/2)*(s.Height/2)))
	} else {
		meters = s.Radius
	}
	meters *= s.Unit
	step := geoEstimateStep(meters, s.Lat)
	hash, _ := geoEncode(geoLonRange, geoLatRange, s.Lon, s.Lat, step)
	area, _ := geoDecode(geoLonRange, geoLatRange, hash)
	// A centre near its cell's edge can leave the shape sticking out of
	// the neighbours: then use cells twice as large.
	north, _ := geoDecode(geoLonRange, geoLatRange, hash.neighbor(0, 1))
	south, _ := geoDecode(geoLonRange, geoLatRange, hash.neighbor(0, -1))
	east, _ := geoDecode(geoLonRange, geoLatRange, hash.neighbor(1, 0))
	west, _ := geoDecode(geoLonRange, geoLatRange, hash.neighbor(-1, 0))
	if step > 1 && (north.lat.max < maxLat || south.lat.min > minLat || east.lon.max < maxLon || west.lon.min > minLon) {
		step--
		hash, _ = geoEncode(geoLonRange, geoLatRange, s.Lon, s.Lat, step)
		area, _ = geoDecode(geoLonRange, geoLatRange, hash)
	}
	cells := [9]geoHash{
		hash,
		hash.neighbor(0, 1), hash.neighbor(0, -1), hash.neighbor(1, 0), hash.neighbor(-1, 0),
		hash.neighbor(1, 1), hash.neighbor(-1, 1), hash.neighbor(1, -1), hash.neighbor(-1, -1),
	}
	if step >= 2 {
		// Drop the rows and columns the shape does not reach.
		if area.lat.min < minLat {
			cells[cellS], cells[cellSW], cells[cellSE] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.lat.max > maxLat {
			cells[cellN], cells[cellNE], cells[cellNW] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.lon.min < minLon {
			cells[cellW], cells[cellSW], cells[cellNW] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.lon.max > maxLon {
			cells[cellE], cells[cellSE], cells[cellNE] = geoHash{}, geoHash{}, geoHash{}
		}
	}
	return cells
}

// geoLatDistance is the distance in meters between two latitudes on a
// meridian.
func geoLatDistance(lat1, lat2 float64) float64 {
	return earthRadius * math.Abs(degRad(lat2)-degRad(lat1))
}

// GeoDistance is the haversine distance in meters between two points.
func GeoDistance(lon1, lat1, lon2, lat2 float64) float64 {
	return geoDistanceFrom(lon1, lat1, libm.Cos(degRad(lat1)), lon2, lat2)
}

// geoDistanceFrom is GeoDistance with cosLat1, the cosine of the first point's
// latitude in radians, given: a search computes its centre's once.
func geoDistanceFrom(lon1, lat1, cosLat1, lon2, lat2 float64) float64 {
	lon1r, lon2r := degRad(lon1), degRad(lon2)
	v := libm.Sin((lon2r - lon1r) / 2)
	if v == 0 {
		return geoLatDistance(lat1, lat2)
	}
	lat1r, lat2r := degRad(lat1), degRad(lat2)
	u := libm.Sin((lat2r - lat1r) / 2)
	// The conversions keep each product rounded, as C computes it (no
	// fused multiply-add).
	a := float64(u*u) + float64(float64(float64(cosLat1*libm.Cos(lat2r))*v)*v)
	return float64(2.0*earthRadius) * libm.Asin(math.Sqrt(a))
}

// geoDistanceFast is GeoDistance with the math package's functions: off
// by at most a few last bits of the trigonometry, which near antipodes
// (where asin is steep) is still under a meter.
// cosLat1 is math.Cos(degRad(lat1)), which a search computes once.
func geoDistanceFast(lon1, lat1, cosLat1, lon2, lat2 float64) float64 {
	v := math.Sin((degRad(lon2) - degRad(lon1)) / 2)
	if v == 0 {
		return geoLatDistance(lat1, lat2)
	}
	lat1r, lat2r := degRad(lat1), degRad(lat2)
	u := math.Sin((lat2r - lat1r) / 2)
	return 2.0 * earthRadius * math.Asin(math.Sqrt(u*u+cosLat1*math.Cos(lat2r)*v*v))
}

// haversineFast is the haversine term a = sin²(Δlat/2) + cos lat1 cos lat2
// sin²(Δlon/2) between the centre and a point, with the math package's
// functions: the distance is 2R asin(√a), which grows with a, so a is
// compared with the term of the limit rather than turned into meters.
func (s *GeoShape) haversineFast(lon, lat float64) float64 {
	v := math.Sin((degRad(lon) - degRad(s.Lon)) / 2)
	latr := degRad(lat)
	u := math.Sin((latr - degRad(s.Lat)) / 2)
	return u*u + s.cosLat*math.Cos(latr)*v*v
}

// surelyBeyond reports that a distance computed by geoDistanceFast is
// beyond limit whatever its error, so that the exact (and slower)
// GeoDistance need not run for a point a search rejects.
func surelyBeyond(fast, limit float64) bool {
	return fast > limit*(1+1e-9)+1
}

// contains reports whether the point is in the shape, with its distance
// in meters from the centre.
func (s *GeoShape) contains(lon, lat float64) (float64, bool) {
	if !s.Box {
		limit := s.Radius * s.Unit
		// A great circle is never shorter than the difference of the
		// latitudes: most points a search rejects need no trigonometry.
		if surelyBeyond(geoLatDistance(s.Lat, lat), limit) || s.haversineFast(lon, lat) > s.beyondA {
			return 0, false
		}
		// "Not beyond" rather than "within", as in Redis: a NaN distance
		// (rounding past the antipode) is in.
		d := geoDistanceFrom(s.Lon, s.Lat, s.cosLatExact, lon, lat)
		return d, !(d > limit)
	}
	// Latitude first: it is the cheaper distance.
	if geoLatDistance(lat, s.Lat) > s.Height*s.Unit/2 {
		return 0, false
	}
	limit := s.Width * s.Unit / 2
	if surelyBeyond(geoDistanceFast(lon, lat, math.Cos(degRad(lat)), s.Lon, lat), limit) ||
		GeoDistance(lon, lat, s.Lon, lat) > limit {
		return 0, false
	}
	return geoDistanceFrom(s.Lon, s.Lat, s.cosLatExact, lon, lat), true
}
