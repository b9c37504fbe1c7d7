package tests

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Keyspace events of the geo commands: GEOADD announces zadd, GEORADIUS's
// STORE/STOREDIST georadiusstore, GEOSEARCHSTORE geosearchstore, and an
// empty result that deletes the destination del; checked on Revolver and on
// redis-server (see notify_test.go for the format).
var notifyCasesGeo = []notifyCase{
	{name: "geoadd", cmds: []string{"GEOADD g 13 38 a 15 37 b", "GEOADD g 13 38 a", "GEOADD g 13.5 38 a",
		"GEOADD g NX 1 1 a", "GEOADD g XX 1 1 nosuch", "GEOADD g CH 14 38 a", "GEOADD g 200 1 x", "GEOADD nosuch XX 1 1 a"},
		want: []string{"zadd g", "zadd g", "zadd g"}},
	{name: "store", setup: []string{"GEOADD g 13 38 a 15 37 b", "SET str v", "SET e v"},
		cmds: []string{"GEORADIUS g 14 37.5 200 km STORE d", "GEORADIUS g 14 37.5 200 km STOREDIST d",
			"GEORADIUSBYMEMBER g a 300 km STORE d2", "GEOSEARCHSTORE d3 g FROMLONLAT 14 37.5 BYRADIUS 200 km",
			"GEOSEARCHSTORE str g FROMMEMBER b BYBOX 10 10 km STOREDIST", "GEORADIUS g 0 0 1 km STORE d",
			"GEOSEARCHSTORE e nosuch FROMLONLAT 0 0 BYRADIUS 1 km", "GEORADIUS g 0 0 1 km STORE nosuch",
			"GEORADIUS g 14 37.5 200 km STORE d WITHDIST", "GEORADIUS_RO g 14 37.5 200 km"},
		want: []string{"georadiusstore d", "georadiusstore d", "georadiusstore d2", "geosearchstore d3",
			"geosearchstore str", "del d", "del e"}},
	{name: "wrongtype", setup: []string{"SET str v"},
		cmds: []string{"GEOADD str 1 1 a", "GEORADIUS str 1 1 1 km STORE d", "GEOSEARCHSTORE d str FROMLONLAT 1 1 BYRADIUS 1 km"}},
}

var notifyCasesGeoNew = []notifyCase{
	{name: "new", setup: []string{"GEOADD g 13 38 a"},
		cmds: []string{"GEOADD n 1 1 a", "GEOADD g 1 1 b", "GEORADIUS g 13 38 1 km STORE d", "GEORADIUS g 13 38 1 km STORE d"},
		want: []string{"new n", "zadd n", "zadd g", "new d", "georadiusstore d", "georadiusstore d"}},
}

// TestGeoNotifications checks the events of every geo write on Revolver and
// on redis-server.
func TestGeoNotifications(t *testing.T) {
	testNotifyCases(t, notifyCasesGeo, notifyCasesGeoNew)
}

// TestGeoStoreWakesBlockedPop: a client blocked in BZPOPMIN on a key is
// served when GEORADIUS ... STORE or GEOSEARCHSTORE creates it.
func TestGeoStoreWakesBlockedPop(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		cmd := goRedis(t, addr, 2)
		cmd.FlushAll(ctx)
		cmd.Do(ctx, "GEOADD", "src", "13", "38", "a", "15", "37", "b")
		blocked := goRedis(t, addr, 2)
		// The lowest score pops: b's geohash, a's distance from a point
		// nearer a, a alone.
		for i, store := range [][]any{
			{"GEORADIUS", "src", "14", "37.5", "200", "km", "STORE", "dst0"},
			{"GEOSEARCHSTORE", "dst1", "src", "FROMLONLAT", "13.5", "37.8", "BYRADIUS", "300", "km", "STOREDIST"},
			{"GEORADIUSBYMEMBER", "src", "a", "1", "m", "STOREDIST", "dst2"},
		} {
			want := []string{"b", "a", "a"}[i]
			key := fmt.Sprintf("dst%d", i)
			done := make(chan string, 1)
			go func() {
				v, err := blocked.BZPopMin(ctx, 0, key).Result()
				if err != nil {
					done <- err.Error()
					return
				}
				done <- v.Key + " " + v.Member.(string)
			}()
			waitFor(t, 5*time.Second, "the client to block", func() bool {
				return strings.Contains(cmd.ClientList(ctx).Val(), "cmd=bzpopmin")
			})
			if err := cmd.Do(ctx, store...).Err(); err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-done:
				if got != key+" "+want {
					t.Errorf("%v: BZPOPMIN served %q", store, got)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%v did not wake BZPOPMIN", store)
			}
		}
	})
}

// TestGeoWritesTouchWatch: GEOADD that changes the set and every STORE
// (an empty result deleting the destination included) abort a transaction
// watching the key; writes that change nothing do not.
func TestGeoWritesTouchWatch(t *testing.T) {
	cases := []struct {
		setup []string
		write string
		abort bool
	}{
		{nil, "GEOADD w 1 1 a", true},
		{[]string{"GEOADD w 1 1 a"}, "GEOADD w 1 1 a", false},
		{[]string{"GEOADD w 1 1 a"}, "GEOADD w NX 2 2 a", false},
		{[]string{"GEOADD w 1 1 a"}, "GEOADD w XX 2 2 a", true},
		{[]string{"GEOADD src 1 1 a"}, "GEORADIUS src 1 1 10 km STORE w", true},
		{[]string{"GEOADD src 1 1 a", "SET w v"}, "GEOSEARCHSTORE w src FROMLONLAT 50 50 BYRADIUS 1 km", true},
		{[]string{"GEOADD src 1 1 a"}, "GEOSEARCHSTORE w src FROMLONLAT 50 50 BYRADIUS 1 km", false},
		{[]string{"SET w v"}, "GEORADIUS nosuch 1 1 10 km STOREDIST w", true},
		{[]string{"GEOADD src 1 1 a"}, "GEORADIUS src 1 1 10 km STORE w WITHDIST", false},
	}
	onBothServers(t, func(t *testing.T, addr string) {
		watcher := dialRaw(t, addr)
		other := dialRaw(t, addr)
		for _, tc := range cases {
			other.do("FLUSHALL")
			for _, l := range tc.setup {
				other.do(strings.Fields(l)...)
			}
			watcher.do("WATCH", "w")
			watcher.do("MULTI")
			watcher.do("PING")
			other.do(strings.Fields(tc.write)...)
			want := "1) +PONG" // the transaction ran
			if tc.abort {
				want = "(nil array)"
			}
			if got := watcher.do("EXEC").String(); got != want {
				t.Errorf("%q after %q: EXEC %s, want %s", tc.write, tc.setup, got, want)
			}
		}
	})
}

// TestGeoRandomQueriesMatchRedis compares many random GEOSEARCH,
// GEORADIUS and GEORADIUSBYMEMBER queries, with random options, over random
// points (a small listpack set and a large skiplist set, clustered and
// spread, with duplicates) between redis-server and Revolver, reply for
// reply, in RESP2 and RESP3.
func TestGeoRandomQueriesMatchRedis(t *testing.T) {
	long(t)
	redisAddr := realRedis(t)
	rev := startServer(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, proto := range []int{2, 3} {
		p := newDiffPair(t, redisAddr, rev.Addr(), proto)
		p.redis.do("FLUSHALL")
		p.rev.do("FLUSHALL")
		both := func(args ...string) (string, string) {
			return p.redis.do(args...).String(), p.rev.do(args...).String()
		}
		sets := map[string]int{"small": 100, "large": 2000}
		for key, n := range sets {
			args := []string{"GEOADD", key}
			for i := range n {
				lon, lat := randomGeoPoint(rng)
				if i%17 == 0 && i > 0 { // a duplicate of an earlier point
					args = append(args, args[len(args)-3], args[len(args)-2], fmt.Sprintf("dup%d", i))
					continue
				}
				args = append(args, lon, lat, fmt.Sprintf("m%d", i))
			}
			if w, g := both(args...); w != g {
				t.Fatalf("GEOADD: redis %s, revolver %s", w, g)
			}
		}
		mismatches, found := 0, 0
		const queries = 1500
		for q := 0; q < queries && mismatches < 10; q++ {
			key := "small"
			if q%2 == 1 {
				key = "large"
			}
			args := randomGeoQuery(rng, key, sets[key])
			want, got := p.redis.do(args...), p.rev.do(args...)
			if w, g := want.String(), got.String(); w != g {
				mismatches++
				t.Errorf("RESP%d %q\n redis:    %s\n revolver: %s", proto, args, indent(w), indent(g))
			}
			if len(want.Elems) > 0 {
				found++
			}
		}
		// The queries must find something often enough to compare.
		if found < queries/5 {
			t.Errorf("RESP%d: only %d of %d queries found points", proto, found, queries)
		}
	}
}

// randomGeoPoint is a point anywhere, or in one of a few clusters, or near
// the poles, the antimeridian or the equator.
func randomGeoPoint(rng *rand.Rand) (string, string) {
	f := func(v float64) string { return fmt.Sprintf("%.6f", v) }
	switch rng.IntN(6) {
	case 0:
		return f(rng.Float64()*360 - 180), f(rng.Float64()*170 - 85)
	case 1:
		return f(2.35 + rng.NormFloat64()*0.2), f(48.85 + rng.NormFloat64()*0.1)
	case 2:
		return f(rng.Float64()*360 - 180), f(84 + rng.Float64()*1.05)
	case 3:
		return f(179 + rng.Float64()), f(rng.Float64()*10 - 5)
	case 4:
		return f(-180 + rng.Float64()), f(rng.Float64()*10 - 5)
	}
	return f(rng.Float64()*4 - 2), f(rng.Float64()*2 - 1)
}

// randomGeoQuery is a search of a random shape around a random centre,
// with random options.
func randomGeoQuery(rng *rand.Rand, key string, members int) []string {
	units := []string{"m", "km", "mi", "ft"}
	unit := units[rng.IntN(len(units))]
	size := func() string {
		scale := []float64{0.001, 1, 50, 500, 5000, 30000}[rng.IntN(6)] * 1000
		return fmt.Sprintf("%.3f", rng.Float64()*scale/map[string]float64{"m": 1, "km": 1000, "mi": 1609.34, "ft": 0.3048}[unit])
	}
	lon, lat := randomGeoPoint(rng)
	member := fmt.Sprintf("m%d", rng.IntN(members))
	var args []string
	switch rng.IntN(4) {
	case 0:
		args = []string{"GEORADIUS", key, lon, lat, size(), unit}
	case 1:
		args = []string{"GEORADIUSBYMEMBER_RO", key, member, size(), unit}
	case 2:
		args = []string{"GEOSEARCH", key, "FROMLONLAT", lon, lat, "BYBOX", size(), size(), unit}
	default:
		args = []string{"GEOSEARCH", key, "FROMMEMBER", member, "BYRADIUS", size(), unit}
	}
	for _, opt := range []string{"WITHDIST", "WITHCOORD", "WITHHASH"} {
		if rng.IntN(2) == 0 {
			args = append(args, opt)
		}
	}
	switch rng.IntN(3) {
	case 0:
		args = append(args, "ASC")
	case 1:
		args = append(args, "DESC")
	}
	if rng.IntN(2) == 0 {
		args = append(args, "COUNT", fmt.Sprint(1+rng.IntN(60)))
		if rng.IntN(3) == 0 {
			args = append(args, "ANY")
		}
	}
	return args
}

// TestGeoRestart: geo sets (a small one, a large one, a STOREDIST result)
// come back from a restart with the same replies.
func TestGeoRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	c := dialRaw(t, srv.Addr())
	rng := rand.New(rand.NewPCG(11, 12))
	args := []string{"GEOADD", "big"}
	for i := range 500 {
		lon, lat := randomGeoPoint(rng)
		args = append(args, lon, lat, fmt.Sprintf("m%d", i))
	}
	c.do(args...)
	c.do("GEOADD", "small", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
	c.do("GEOSEARCHSTORE", "dist", "big", "FROMLONLAT", "2.35", "48.85", "BYRADIUS", "3000", "km", "STOREDIST")
	c.do("ZREM", "big", "m7", "m8")
	queries := [][]string{
		{"GEOPOS", "small", "Palermo", "Catania"},
		{"GEOSEARCH", "big", "FROMLONLAT", "2.35", "48.85", "BYRADIUS", "2000", "km", "WITHDIST", "WITHHASH"},
		{"GEORADIUS_RO", "big", "179", "0", "500", "km", "WITHCOORD"},
		{"ZRANGE", "dist", "0", "-1", "WITHSCORES"},
		{"OBJECT", "ENCODING", "big"},
		{"OBJECT", "ENCODING", "small"},
		{"GEOHASH", "big", "m0", "m7", "m100"},
	}
	before := make([]string, len(queries))
	for i, q := range queries {
		before[i] = c.do(q...).String()
	}
	srv.Close()
	c2 := dialRaw(t, startServer(t, withPersistence(dir)).Addr())
	for i, q := range queries {
		if got := c2.do(q...).String(); got != before[i] {
			t.Errorf("%q after restart:\n%s\nbefore:\n%s", q, indent(got), indent(before[i]))
		}
	}
}
