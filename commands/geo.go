package commands

import (
	"math"
	"slices"
	"strconv"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// Geo is the geo family. A geo set is a sorted set whose scores are 52-bit
// geohashes (engine/geohash.go), so these commands read and write sorted
// sets, and every sorted set command works on a geo set.
var Geo = []*Command{
	{Name: "geoadd", Arity: -5, Flags: "write denyoom", ACL: "geo", Keys: "RW update @1",
		Group: "geo", Since: "3.2.0",
		Complexity: "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
		Summary:    "Add one or more geospatial items in the geospatial index represented using a sorted set",
		History:    [][2]string{{"6.2.0", "Added the `CH`, `NX` and `XX` options."}},
		Args: "key [condition=NX|XX] @6.2.0 [change=CH] @6.2.0 " +
			"(longitude_latitude_member=longitude:double latitude:double member)...",
		Run: geoadd},
	{Name: "geodist", Arity: -4, Flags: "readonly", ACL: "geo", Keys: "RO access @1",
		Group: "geo", Since: "3.2.0", Complexity: "O(log(N))",
		Summary: "Returns the distance between two members of a geospatial index",
		Args:    "key member1 member2 [unit=" + geoUnitArgs + "]", Run: geodist},
	{Name: "geohash", Arity: -2, Flags: "readonly", ACL: "geo", Keys: "RO access @1",
		Group: "geo", Since: "3.2.0",
		Complexity: "O(log(N)) for each member requested, where N is the number of elements in the sorted set.",
		Summary:    "Returns members of a geospatial index as standard geohash strings",
		Args:       "key member...", Run: geohash},
	{Name: "geopos", Arity: -2, Flags: "readonly", ACL: "geo", Keys: "RO access @1",
		Group: "geo", Since: "3.2.0", Complexity: "O(N) where N is the number of members requested.",
		Summary: "Returns longitude and latitude of members of a geospatial index",
		Args:    "key member...", Run: geopos},
	{Name: "georadius", Arity: -6, Flags: "write denyoom", ACL: "geo",
		Keys:  "RO access @1;OW update @kw:STORE:6;OW update @kw:STOREDIST:6",
		Group: "geo", Since: "3.2.0", Complexity: geoRadiusComplexity,
		DocFlags: "deprecated", Deprecated: "6.2.0",
		ReplacedBy: "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument",
		History: [][2]string{{"6.2.0", "Added the `ANY` option for `COUNT`."},
			{"7.0.0", "Added support for uppercase unit names."}},
		Summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
		Args:    "key longitude:double latitude:double radius:double " + geoRadiusOptionsAnySince + " " + geoStoreArgs,
		Run:     func(c *Ctx) { geoSearchGeneric(c, 1, geoByCoords) }},
	{Name: "georadius_ro", Arity: -6, Flags: "readonly", ACL: "geo", Keys: "RO access @1",
		Group: "geo", Since: "3.2.10", Complexity: geoRadiusComplexity,
		DocFlags: "deprecated", Deprecated: "6.2.0", ReplacedBy: "`GEOSEARCH` with the `BYRADIUS` argument",
		History: [][2]string{{"6.2.0", "Added the `ANY` option for `COUNT`."}},
		Summary: "A read-only variant for GEORADIUS",
		Args:    "key longitude:double latitude:double radius:double " + geoRadiusOptionsAnySince,
		Run:     func(c *Ctx) { geoSearchGeneric(c, 1, geoByCoords|geoNoStore) }},
	{Name: "georadiusbymember", Arity: -5, Flags: "write denyoom", ACL: "geo",
		Keys:  "RO access @1;OW update @kw:STORE:5;OW update @kw:STOREDIST:5",
		Group: "geo", Since: "3.2.0", Complexity: geoRadiusComplexity,
		DocFlags: "deprecated", Deprecated: "6.2.0",
		ReplacedBy: "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments",
		History:    [][2]string{{"7.0.0", "Added support for uppercase unit names."}},
		Summary:    "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
		Args:       "key member radius:double " + geoRadiusOptions + " " + geoStoreArgs,
		Run:        func(c *Ctx) { geoSearchGeneric(c, 1, geoByMember) }},
	{Name: "georadiusbymember_ro", Arity: -5, Flags: "readonly", ACL: "geo", Keys: "RO access @1",
		Group: "geo", Since: "3.2.10", Complexity: geoRadiusComplexity,
		DocFlags: "deprecated", Deprecated: "6.2.0",
		ReplacedBy: "`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments",
		Summary:    "A read-only variant for GEORADIUSBYMEMBER",
		Args:       "key member radius:double " + geoRadiusOptions,
		Run:        func(c *Ctx) { geoSearchGeneric(c, 1, geoByMember|geoNoStore) }},
	{Name: "geosearch", Arity: -7, Flags: "readonly", ACL: "geo", Keys: "RO access @1",
		Group: "geo", Since: "6.2.0", Complexity: geoSearchComplexity,
		History: [][2]string{{"7.0.0", "Added support for uppercase unit names."}},
		Summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
		Args: "key " + geoSearchShape + " [order=ASC|DESC] [count=COUNT count:integer [ANY]] " +
			"[WITHCOORD] [WITHDIST] [WITHHASH]",
		Run: func(c *Ctx) { geoSearchGeneric(c, 1, geoSearch) }},
	{Name: "geosearchstore", Arity: -8, Flags: "write denyoom", ACL: "geo", Keys: "OW update @1;RO access @2",
		Group: "geo", Since: "6.2.0", Complexity: geoSearchComplexity,
		History: [][2]string{{"7.0.0", "Added support for uppercase unit names."}},
		Summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, " +
			"and store the result in another key.",
		Args: "destination:key source:key " + geoSearchShape + " [order=ASC|DESC] " +
			"[count=COUNT count:integer [ANY]] [STOREDIST]",
		Run: func(c *Ctx) { geoSearchGeneric(c, 2, geoSearch|geoSearchStore) }},
}

const (
	geoUnitArgs         = "M|KM|FT|MI"
	geoRadiusComplexity = "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area " +
		"delimited by center and radius and M is the number of items inside the index."
	geoSearchComplexity = "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around " +
		"the shape provided as the filter and M is the number of items inside the shape"
	geoRadiusOptions = "(unit=" + geoUnitArgs + ") [WITHCOORD] [WITHDIST] [WITHHASH] " +
		"[count=COUNT count:integer [ANY]] [order=ASC|DESC]"
	// GEORADIUS and GEORADIUS_RO document when COUNT's ANY came.
	geoRadiusOptionsAnySince = "(unit=" + geoUnitArgs + ") [WITHCOORD] [WITHDIST] [WITHHASH] " +
		"[count=COUNT count:integer [ANY] @6.2.0] [order=ASC|DESC]"
	geoStoreArgs   = "[STORE key#1] [STOREDIST key#2]"
	geoSearchShape = "(from=FROMMEMBER member|FROMLONLAT (longitude_latitude=longitude:double latitude:double)) " +
		"(by=(circle=BYRADIUS radius:double (unit=" + geoUnitArgs + "))|" +
		"(box=BYBOX width:double height:double (unit=" + geoUnitArgs + ")))"
)

// geoFlags tell the search commands apart, as Redis's georadiusGeneric
// flags do.
type geoFlags uint8

const (
	geoByCoords    geoFlags = 1 << iota // GEORADIUS: centre from coordinates
	geoByMember                         // GEORADIUSBYMEMBER: centre from a member
	geoNoStore                          // the _RO variants: no STORE/STOREDIST
	geoSearch                           // GEOSEARCH's arguments
	geoSearchStore                      // GEOSEARCHSTORE: STOREDIST is a flag
)

// geoadd is ZADD with the points' geohashes for scores.
func geoadd(c *Ctx) {
	var f engine.ZAddFlags
	ch := false
	i := 2
options:
	for ; i < len(c.Args); i++ {
		switch a := c.Args[i]; {
		case is(a, "NX"):
			f.NX = true
		case is(a, "XX"):
			f.XX = true
		case is(a, "CH"):
			ch = true
		default:
			break options
		}
	}
	rest := c.Args[i:]
	if len(rest) == 0 || len(rest)%3 != 0 || (f.NX && f.XX) {
		c.SyntaxError()
		return
	}
	n := len(rest) / 3
	scores, members := make([]float64, 0, n), make([][]byte, 0, n)
	for j := 0; j < len(rest); j += 3 {
		lon, lat, ok := c.geoLonLat(rest[j], rest[j+1])
		if !ok {
			return
		}
		score, _ := engine.GeoEncode(lon, lat)
		scores = append(scores, score)
		members = append(members, rest[j+2])
	}
	key := c.Args[1]
	r, err := c.DB.ZAdd(key, f, scores, members)
	if err != nil {
		c.Error(err)
		return
	}
	if ch {
		c.W.Int(int64(r.Added + r.Updated))
	} else {
		c.W.Int(int64(r.Added))
	}
	if r.Added > 0 || r.Updated > 0 {
		c.DB.Notify(engine.NotifyZSet, "zadd", key)
		// Redis runs GEOADD as the ZADD of its scores; replicas get that.
		zadd := append([][]byte{[]byte("zadd")}, c.Args[1:i]...)
		for j, m := range members {
			zadd = append(zadd, msArg(int64(scores[j])), m)
		}
		c.PropagateAs(zadd...)
	}
}

// geoLonLat parses a longitude and a latitude and checks them against
// Redis's limits.
func (c *Ctx) geoLonLat(lonArg, latArg []byte) (lon, lat float64, ok bool) {
	if lon, ok = engine.ParseScore(lonArg); ok {
		lat, ok = engine.ParseScore(latArg)
	}
	if !ok {
		c.W.Error("ERR value is not a valid float")
		return 0, 0, false
	}
	if !engine.GeoValidPoint(lon, lat) {
		c.W.Error("ERR invalid longitude,latitude pair " + cFixed6(lon) + "," + cFixed6(lat))
		return 0, 0, false
	}
	return lon, lat, true
}

// cFixed6 is C's "%f".
func cFixed6(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// geoUnit returns the meters in one unit; 0 (after replying the error)
// for an unknown unit.
func (c *Ctx) geoUnit(u []byte) float64 {
	switch {
	case is(u, "M"):
		return 1
	case is(u, "KM"):
		return 1000
	case is(u, "FT"):
		return 0.3048
	case is(u, "MI"):
		return 1609.34
	}
	c.W.Error("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0
}

// geoNumber parses a radius, width or height; msg is Redis's error when
// it is not a number.
func (c *Ctx) geoNumber(b []byte, msg string) (float64, bool) {
	f, ok := engine.ParseScore(b)
	if !ok {
		c.W.Error(msg)
	}
	return f, ok
}

// geoRadius parses "radius unit" into the shape.
func (c *Ctx) geoRadius(args [][]byte, s *engine.GeoShape) bool {
	r, ok := c.geoNumber(args[0], "ERR need numeric radius")
	if !ok {
		return false
	}
	if r < 0 {
		c.W.Error("ERR radius cannot be negative")
		return false
	}
	s.Radius = r
	s.Unit = c.geoUnit(args[1])
	return s.Unit != 0
}

// geoBox parses "width height unit" into the shape.
func (c *Ctx) geoBox(args [][]byte, s *engine.GeoShape) bool {
	w, ok := c.geoNumber(args[0], "ERR need numeric width")
	if !ok {
		return false
	}
	h, ok := c.geoNumber(args[1], "ERR need numeric height")
	if !ok {
		return false
	}
	if h < 0 || w < 0 {
		c.W.Error("ERR height or width cannot be negative")
		return false
	}
	s.Width, s.Height = w, h
	s.Unit = c.geoUnit(args[2])
	return s.Unit != 0
}

// geoMemberCentre sets the shape's centre to member's position.
func (c *Ctx) geoMemberCentre(z *engine.ZSet, member []byte, s *engine.GeoShape) bool {
	score, ok := z.Score(member)
	if !ok {
		c.W.Error("ERR could not decode requested zset member")
		return false
	}
	s.Lon, s.Lat = engine.GeoDecodeScore(score)
	return true
}

func geodist(c *Ctx) {
	unit := 1.0
	switch {
	case len(c.Args) == 5:
		if unit = c.geoUnit(c.Args[4]); unit == 0 {
			return
		}
	case len(c.Args) > 5:
		c.SyntaxError()
		return
	}
	z, err := c.DB.ZSetRead(c.Args[1])
	switch {
	case err != nil:
		c.Error(err)
		return
	case z == nil:
		c.W.Null()
		return
	}
	s1, ok1 := z.Score(c.Args[2])
	s2, ok2 := z.Score(c.Args[3])
	if !ok1 || !ok2 {
		c.W.Null()
		return
	}
	lon1, lat1 := engine.GeoDecodeScore(s1)
	lon2, lat2 := engine.GeoDecodeScore(s2)
	writeGeoDistance(c.W, engine.GeoDistance(lon1, lat1, lon2, lat2)/unit)
}

func geohash(c *Ctx) {
	eachGeoMember(c, c.W.Null, func(score float64) { c.W.BulkString(engine.GeoHashString(score)) })
}

func geopos(c *Ctx) {
	eachGeoMember(c, c.W.NullArray, func(score float64) {
		lon, lat := engine.GeoDecodeScore(score)
		c.W.Array(2)
		writeHumanDouble(c.W, lon)
		writeHumanDouble(c.W, lat)
	})
}

// eachGeoMember replies an array with an element per member argument of
// GEOHASH and GEOPOS: found's for a member in the set, missing's otherwise
// (and for every member of a missing key).
func eachGeoMember(c *Ctx, missing func(), found func(score float64)) {
	z, err := c.DB.ZSetRead(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		var score float64
		ok := false
		if z != nil {
			score, ok = z.Score(m)
		}
		if !ok {
			missing()
			continue
		}
		found(score)
	}
}

// writeGeoDistance writes a distance with four decimals (rounded half to
// even, as llrint does), a bulk string in both protocols.
func writeGeoDistance(w *resp.Writer, d float64) {
	if d == 0 {
		w.BulkString("0.0000")
		return
	}
	v := math.RoundToEven(d * 10000)
	if math.IsNaN(v) || math.Abs(v) >= 1<<63 {
		// llrint's answer for what a long long cannot hold: LLONG_MIN.
		w.BulkString("-922337203685477.5808")
		return
	}
	neg := v < 0
	// Distances are far below 2^63 ten-thousandths; a uint64 of the
	// magnitude keeps the digits exact.
	u := uint64(math.Abs(v))
	digits := strconv.AppendUint(nil, u, 10)
	for len(digits) < 5 {
		digits = append([]byte{'0'}, digits...)
	}
	out := make([]byte, 0, len(digits)+2)
	if neg {
		out = append(out, '-')
	}
	out = append(out, digits[:len(digits)-4]...)
	out = append(out, '.')
	out = append(out, digits[len(digits)-4:]...)
	w.Bulk(out)
}

// writeHumanDouble writes a coordinate as Redis's addReplyHumanLongDouble
// does: "%.17Lf" without trailing zeros, a bulk string in RESP2 and a
// double in RESP3.
func writeHumanDouble(w *resp.Writer, f float64) {
	var tmp [48]byte
	b := strconv.AppendFloat(tmp[:0], f, 'f', 17, 64)
	end := len(b)
	for b[end-1] == '0' {
		end--
	}
	if b[end-1] == '.' {
		end--
	}
	b = b[:end]
	if len(b) == 2 && b[0] == '-' && b[1] == '0' {
		b = b[1:]
	}
	if w.RESP3() {
		w.Raw([]byte{','})
		w.Raw(b)
		w.Raw([]byte{'\r', '\n'})
		return
	}
	w.Bulk(b)
}

// geoOptions are the search options after the centre and the shape.
type geoOptions struct {
	withDist, withHash, withCoord bool
	any                           bool
	sort                          int // 0 none, 1 ascending, 2 descending
	count                         int64
	store                         []byte
	storeDist                     bool
	fromMember, fromLonLat        bool
	byRadius, byBox               bool
}

// geoSearchGeneric is GEORADIUS, GEORADIUSBYMEMBER, their _RO variants,
// GEOSEARCH and GEOSEARCHSTORE, with Redis's order of checks: the source
// key's type, the centre and radius of the GEORADIUS forms, each option
// in turn, the combinations, then the search.
func geoSearchGeneric(c *Ctx, src int, flags geoFlags) {
	z, err := c.DB.ZSetRead(c.Args[src])
	if err != nil {
		c.Error(err)
		return
	}
	var s engine.GeoShape
	var o geoOptions
	base := 0
	switch {
	case flags&geoByCoords != 0:
		base = 6
		lon, lat, ok := c.geoLonLat(c.Args[2], c.Args[3])
		if !ok || !c.geoRadius(c.Args[4:6], &s) {
			return
		}
		s.Lon, s.Lat = lon, lat
	case flags&geoByMember != 0:
		base = 5
		// Without the key the options are still parsed, so that the
		// reply fits STORE, but the member and radius are not.
		if z != nil && (!c.geoMemberCentre(z, c.Args[2], &s) || !c.geoRadius(c.Args[3:5], &s)) {
			return
		}
	default:
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			o.store = c.Args[1]
		}
	}
	if !c.geoParseOptions(z, flags, base, &s, &o) {
		return
	}
	if o.store != nil && (o.withDist || o.withHash || o.withCoord) {
		who := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			who = "GEOSEARCHSTORE"
		}
		c.W.Error("ERR " + who + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return
	}
	if flags&geoSearch != 0 && !o.fromMember && !o.fromLonLat {
		c.W.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(c.Args[0]))
		return
	}
	if flags&geoSearch != 0 && !o.byRadius && !o.byBox {
		c.W.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(c.Args[0]))
		return
	}
	if o.any && o.count == 0 {
		c.W.Error("ERR the ANY argument requires COUNT argument")
		return
	}
	if z == nil {
		if o.store != nil {
			if c.DB.Delete(o.store) {
				c.DB.Notify(engine.NotifyGeneric, "del", o.store)
			}
			c.W.Int(0)
		} else {
			c.W.Array(0)
		}
		return
	}
	// COUNT alone means the nearest ones.
	if o.count != 0 && o.sort == 0 && !o.any {
		o.sort = 1
	}
	limit := 0
	if o.any {
		limit = int(min(o.count, math.MaxInt32))
	}
	points := z.GeoSearch(&s, limit)
	n := len(points)
	if o.count != 0 && int64(n) > o.count {
		n = int(o.count)
	}
	if o.sort != 0 {
		engine.GeoSort(points, o.sort == 2, n)
	}
	points = points[:n]
	if o.store != nil {
		geoStore(c, flags, o.store, o.storeDist, points, s.Unit)
		return
	}
	geoReply(c.W, points, &o, s.Unit)
}

// geoParseOptions parses the options from args[base:] the way Redis's
// loop does: each accepted where the command allows it, anything else a
// syntax error.
func (c *Ctx) geoParseOptions(z *engine.ZSet, flags geoFlags, base int, s *engine.GeoShape, o *geoOptions) bool {
	search := flags&geoSearch != 0
	storeOK := flags&(geoNoStore|geoSearch) == 0
	for i := base; i < len(c.Args); i++ {
		a, left := c.Args[i], len(c.Args)-i-1
		switch {
		case is(a, "WITHDIST"):
			o.withDist = true
		case is(a, "WITHHASH"):
			o.withHash = true
		case is(a, "WITHCOORD"):
			o.withCoord = true
		case is(a, "ANY"):
			o.any = true
		case is(a, "ASC"):
			o.sort = 1
		case is(a, "DESC"):
			o.sort = 2
		case is(a, "COUNT") && left >= 1:
			n, ok := c.Int64(i + 1)
			if !ok {
				return false
			}
			if n <= 0 {
				c.W.Error("ERR COUNT must be > 0")
				return false
			}
			o.count = n
			i++
		case is(a, "STORE") && left >= 1 && storeOK:
			o.store, o.storeDist = c.Args[i+1], false
			i++
		case is(a, "STOREDIST") && left >= 1 && storeOK:
			o.store, o.storeDist = c.Args[i+1], true
			i++
		case is(a, "STOREDIST") && flags&geoSearchStore != 0:
			o.storeDist = true
		case is(a, "FROMMEMBER") && left >= 1 && search && !o.fromLonLat:
			if z != nil && !c.geoMemberCentre(z, c.Args[i+1], s) {
				return false
			}
			o.fromMember = true
			i++
		case is(a, "FROMLONLAT") && left >= 2 && search && !o.fromMember:
			lon, lat, ok := c.geoLonLat(c.Args[i+1], c.Args[i+2])
			if !ok {
				return false
			}
			s.Lon, s.Lat = lon, lat
			o.fromLonLat = true
			i += 2
		case is(a, "BYRADIUS") && left >= 2 && search && !o.byBox:
			if !c.geoRadius(c.Args[i+1:i+3], s) {
				return false
			}
			s.Box = false
			o.byRadius = true
			i += 2
		case is(a, "BYBOX") && left >= 3 && search && !o.byRadius:
			if !c.geoBox(c.Args[i+1:i+4], s) {
				return false
			}
			s.Box = true
			o.byBox = true
			i += 3
		default:
			c.SyntaxError()
			return false
		}
	}
	return true
}

// geoReply writes the points, each a bare member or, with options, an
// array of the member and what was asked for.
func geoReply(w *resp.Writer, points []engine.GeoPoint, o *geoOptions, unit float64) {
	extra := 0
	for _, on := range []bool{o.withDist, o.withCoord, o.withHash} {
		if on {
			extra++
		}
	}
	w.Array(len(points))
	for i := range points {
		p := &points[i]
		if extra > 0 {
			w.Array(extra + 1)
		}
		w.BulkString(p.Member)
		if o.withDist {
			writeGeoDistance(w, p.Dist/unit)
		}
		if o.withHash {
			w.Int(int64(p.Score))
		}
		if o.withCoord {
			w.Array(2)
			writeHumanDouble(w, p.Lon)
			writeHumanDouble(w, p.Lat)
		}
	}
}

// geoStore replaces dst with the points, scored by their geohash or, with
// STOREDIST, their distance in the unit; no points deletes dst.
func geoStore(c *Ctx, flags geoFlags, dst []byte, byDist bool, points []engine.GeoPoint, unit float64) {
	items := make([]engine.ScoreMember, len(points))
	for i, p := range points {
		items[i] = engine.ScoreMember{Member: p.Member, Score: p.Score}
		if byDist {
			items[i].Score = p.Dist / unit
		}
	}
	slices.SortFunc(items, func(a, b engine.ScoreMember) int {
		switch {
		case a.Score < b.Score:
			return -1
		case a.Score > b.Score:
			return 1
		case a.Member < b.Member:
			return -1
		case a.Member > b.Member:
			return 1
		}
		return 0
	})
	event := "georadiusstore"
	if flags&geoSearch != 0 {
		event = "geosearchstore"
	}
	storeResult(c, dst, items, event)
}
