package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/engine"
)

// RDB files both ways between redis-server 7.0 and the engine: Redis's
// dump.rdb loaded by engine.LoadRDB, and engine.WriteRDB's file loaded by
// redis-server at start-up. Every key is compared on the Redis side: the
// engine's DUMP payload must be Redis's byte for byte wherever the layout is
// deterministic, and restored next to the key it must hold the same value
// (and take the same encoding); deadlines are compared to the millisecond.

const rdbTestLibrary = "#!lua name=rdblib\nredis.register_function('rdbfn', function(keys, args) return args[1] end)"

// redisDB is a client of database n.
func redisDB(t *testing.T, addr string, n int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, DB: n})
	t.Cleanup(func() { c.Close() })
	return c
}

// rdbTestDBs are the databases the tests fill besides 0.
var rdbTestDBs = []int{5, 11}

// fillRedisForRDB stores every type and encoding Redis has in database 0
// (dumpSamples: compressed strings, HyperLogLogs, quicklists of several
// nodes, intsets, listpacks, hashtables, skiplists, streams with groups and
// PELs), keys with deadlines, keys in other databases and a function
// library.
func fillRedisForRDB(t *testing.T, addr string) {
	c := redisDB(t, addr, 0)
	for _, s := range dumpSamples() {
		for _, cmd := range s.setup {
			if err := c.Do(ctx, cmd...).Err(); err != nil {
				t.Fatalf("%s: %v: %v", s.key, cmd[:2], err)
			}
		}
	}
	var big []any
	for i := range 30 {
		big = append(big, strings.Repeat(fmt.Sprint(i%10), 1000+i))
	}
	c.RPush(ctx, "list-big-elements", big...)
	c.PExpire(ctx, "list-large", time.Hour)
	c.PExpire(ctx, "hash-ht-many", 90*time.Minute)
	c.Set(ctx, "ttl-string", "v", 12345*time.Second)
	c.Set(ctx, "777", strings.Repeat("x", 50), 0)
	for _, n := range rdbTestDBs {
		d := redisDB(t, addr, n)
		d.Set(ctx, "db-string", n, 0)
		d.HSet(ctx, "db-hash", "f", "v", "g", n)
		d.ZAdd(ctx, "db-zset", redis.Z{Score: float64(n), Member: "m"})
		d.PExpire(ctx, "db-hash", 30*time.Minute)
	}
	if err := c.Do(ctx, "FUNCTION", "LOAD", "REPLACE", rdbTestLibrary).Err(); err != nil {
		t.Fatal(err)
	}
}

// redisKeys lists the keys of each database of the server at addr.
func redisKeys(t *testing.T, addr string) map[int][]string {
	keys := map[int][]string{}
	for n := range 16 {
		if k := redisDB(t, addr, n).Keys(ctx, "*").Val(); len(k) > 0 {
			slices.Sort(k)
			keys[n] = k
		}
	}
	return keys
}

// sameAsRedis compares key in database n of Redis with the engine's.
// exactDump asks for Redis's DUMP payload byte for byte where the encoding
// is not a hashtable.
func sameAsRedis(t *testing.T, c *redis.Client, eng *engine.Engine, n int, key string, exactDump bool) {
	t.Helper()
	eng.Lock()
	obj := eng.DB(n).Peek([]byte(key))
	payload, at, ok := eng.DB(n).DumpKey([]byte(key))
	eng.Unlock()
	if !ok {
		t.Errorf("db %d: key %q missing from the engine", n, key)
		return
	}
	enc := obj.Encoding()
	if exactDump && enc != "hashtable" {
		if want := c.Dump(ctx, key).Val(); want != string(payload) {
			t.Errorf("db %d key %q (%s): DUMP differs\n redis:    %.200q\n revolver: %.200q", n, key, enc, want, payload)
		}
	}
	check := "rdb-check:" + key
	if err := c.RestoreReplace(ctx, check, 0, string(payload)).Err(); err != nil {
		t.Errorf("db %d key %q: redis-server refuses the engine's DUMP: %v", n, key, err)
		return
	}
	defer c.Del(ctx, check)
	if got, want := keyValue(t, c, check), keyValue(t, c, key); got != want {
		t.Errorf("db %d key %q: the engine holds %.300s\n Redis holds %.300s", n, key, got, want)
	}
	// What Redis gives the value it restores is what it gives it on load.
	// A string's raw or embstr depends on how it was made; loaded, it is
	// embstr up to 44 bytes on either side.
	stringEnc := func(e string) bool { return e == "raw" || e == "embstr" }
	if want := c.ObjectEncoding(ctx, key).Val(); want != enc && !(stringEnc(enc) && stringEnc(want)) {
		t.Errorf("db %d key %q: encoding %s here, %s on Redis", n, key, enc, want)
	}
	want := c.Do(ctx, "PEXPIRETIME", key).Val().(int64)
	if at == 0 {
		at = -1
	}
	if at != want {
		t.Errorf("db %d key %q: deadline %d here, %d on Redis", n, key, at, want)
	}
}

// TestRDBFileFromRedis: redis-server's dump.rdb, after SAVE, loads into a
// fresh engine whole: every key with its value, encoding and deadline, the
// AUX fields, the function library; a key already past its deadline that
// Redis still wrote is skipped (or kept with KeepExpired). Written back
// with WriteRDB, the same keys load into a second redis-server.
func TestRDBFileFromRedis(t *testing.T) {
	addr := startRealRedis(t, "--enable-debug-command", "yes")
	fillRedisForRDB(t, addr)
	c := redisDB(t, addr, 0)
	// Redis saves a key whose deadline passed while nothing deleted it.
	c.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	c.Set(ctx, "already-expired", "v", time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(c.ConfigGet(ctx, "dir").Val()["dir"], c.ConfigGet(ctx, "dbfilename").Val()["dbfilename"])
	keys := redisKeys(t, addr) // lazily expires already-expired
	total := 0
	for _, k := range keys {
		total += len(k)
	}
	load := func(o engine.RDBLoadOptions) (*engine.Engine, engine.RDBLoadResult) {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		eng := engine.New(engine.Options{})
		eng.Lock()
		defer eng.Unlock()
		res, err := eng.LoadRDB(f, o)
		if err != nil {
			t.Fatalf("loading Redis's dump.rdb: %v", err)
		}
		return eng, res
	}
	var libs []string
	eng, res := load(engine.RDBLoadOptions{Function: func(code []byte) error {
		libs = append(libs, string(code))
		return nil
	}})
	if res.Version != 10 || res.Keys != int64(total) || res.Expired != 1 {
		t.Fatalf("loaded %+v; Redis has %d keys and one expired", res, total)
	}
	info := c.Info(ctx, "server").Val()
	if !strings.Contains(info, "redis_version:"+res.Aux["redis-ver"]+"\r\n") || res.Aux["redis-bits"] != "64" || res.Aux["aof-base"] != "0" {
		t.Errorf("AUX fields %v", res.Aux)
	}
	if len(libs) != 1 || libs[0] != rdbTestLibrary {
		t.Errorf("function libraries %q", libs)
	}
	for n, ks := range keys {
		if got := eng.DB(n).Len(); got != len(ks) {
			t.Errorf("db %d: %d keys loaded, Redis has %d", n, got, len(ks))
		}
		d := redisDB(t, addr, n)
		for _, k := range ks {
			// Revolver keeps no stream tombstones.
			sameAsRedis(t, d, eng, n, k, !streamDumpVaries[k])
		}
	}
	kept, res := load(engine.RDBLoadOptions{KeepExpired: true})
	kept.Lock()
	if res.Expired != 0 || res.Keys != int64(total+1) || kept.DB(0).Len() != len(keys[0])+1 {
		t.Errorf("KeepExpired: %+v", res)
	}
	kept.Unlock()

	t.Run("written back", func(t *testing.T) {
		dir := t.TempDir()
		eng.Lock()
		wres := writeRDBFile(t, eng, filepath.Join(dir, "dump.rdb"), engine.RDBWriteOptions{
			Compress: true, Functions: [][]byte{[]byte(rdbTestLibrary)},
			Aux: [][2]string{{"redis-ver", "7.0.15"}, {"redis-bits", "64"}, {"aof-base", "0"}},
		})
		eng.Unlock()
		if wres.Keys != int64(total) {
			t.Fatalf("wrote %+v, want %d keys", wres, total)
		}
		other := startRedisOnRDB(t, dir)
		compareRedisWithEngine(t, other, eng)
		if lib := redisDB(t, other, 0).Do(ctx, "FUNCTION", "LIST", "WITHCODE").String(); !strings.Contains(lib, "rdblib") {
			t.Errorf("the library did not load: %s", lib)
		}
	})
}

// writeRDBFile writes eng's keyspace to path; eng's lock is held.
func writeRDBFile(t *testing.T, eng *engine.Engine, path string, o engine.RDBWriteOptions) engine.RDBWriteResult {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.WriteRDB(f, o)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// startRedisOnRDB starts redis-server on dir/dump.rdb, after
// redis-check-rdb (when installed) accepted the file: its report says
// what is wrong where a failed start would not.
func startRedisOnRDB(t *testing.T, dir string) string {
	t.Helper()
	file := filepath.Join(dir, "dump.rdb")
	if check, err := exec.LookPath("redis-check-rdb"); err == nil {
		if out, err := exec.Command(check, file).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("RDB looks OK")) {
			t.Fatalf("redis-check-rdb refuses the file: %v\n%s", err, out)
		}
	}
	return startRealRedis(t, "--dir", dir, "--dbfilename", "dump.rdb", "--appendonly", "no")
}

// compareRedisWithEngine checks that the server at addr holds exactly the
// engine's keys of Redis's types, each the same.
func compareRedisWithEngine(t *testing.T, addr string, eng *engine.Engine) {
	t.Helper()
	for n := range eng.Databases() {
		d := redisDB(t, addr, n)
		var want []string
		eng.Lock()
		for cursor := uint64(0); ; {
			cursor = eng.DB(n).Scan(cursor, 1000, func(key string, typ engine.Type) {
				switch typ {
				case engine.TypeString, engine.TypeList, engine.TypeSet, engine.TypeZSet, engine.TypeHash, engine.TypeStream:
					want = append(want, key)
				}
			})
			if cursor == 0 {
				break
			}
		}
		eng.Unlock()
		if got := d.DBSize(ctx).Val(); got != int64(len(want)) {
			t.Errorf("db %d: Redis loaded %d keys, the engine has %d of Redis's types", n, got, len(want))
		}
		for _, k := range want {
			sameAsRedis(t, d, eng, n, k, true)
		}
	}
}

// fillEngineForRDB stores, through the engine's own commands, a key of
// every Redis type and encoding (as Revolver builds them), deadlines and
// other databases.
func fillEngineForRDB(t *testing.T, eng *engine.Engine) {
	db := eng.DB(0)
	b := func(s string) []byte { return []byte(s) }
	many := func(n int, f func(i int) string) [][]byte {
		var out [][]byte
		for i := range n {
			out = append(out, b(f(i)))
		}
		return out
	}
	now := eng.Now()
	for _, kv := range [][2]string{{"int", "12345"}, {"big-int", "12345678901"}, {"embstr", "hello world"},
		{"raw", strings.Repeat("r", 100)}, {"compressible", strings.Repeat("compress me ", 500)},
		{"object-string", strings.Repeat("0123456789abcdef", 300)}} {
		db.SetString(b(kv[0]), b(kv[1]), engine.SetOptions{})
	}
	db.SetString(b("ttl"), b("v"), engine.SetOptions{ExpireAt: now + 3_600_000})
	db.PFAdd(b("hll-sparse"), many(3, strconv.Itoa))
	db.PFAdd(b("hll-dense"), many(3000, strconv.Itoa))
	db.ListPush(b("list-small"), [][]byte{b("a"), b("1"), b("-70000"), b(strings.Repeat("v", 100))}, false, false)
	db.ListPush(b("list-large"), many(5000, func(i int) string { return fmt.Sprint("e", i) }), false, false)
	db.ListPush(b("list-big-elements"), many(20, func(i int) string { return strings.Repeat(fmt.Sprint(i%10), 3000) }), false, false)
	db.SAdd(b("set-intset"), [][]byte{b("3"), b("1"), b("-2"), b("5000000000")})
	db.SAdd(b("set-ht"), [][]byte{b("a"), b("b"), b("c")})
	db.SAdd(b("set-large"), many(2000, strconv.Itoa))
	db.HSet(b("hash-listpack"), [][]byte{b("f"), b("v"), b("n"), b("12")})
	db.HSet(b("hash-ht-long"), [][]byte{b("f"), b(strings.Repeat("v", 100))})
	db.HSet(b("hash-ht-many"), many(1200, func(i int) string { return fmt.Sprint("f", i/2) }))
	db.ZAdd(b("zset-listpack"), engine.ZAddFlags{}, []float64{1, 2.5, -1e300, 0.1}, [][]byte{b("a"), b("b"), b("c"), b("d")})
	var scores []float64
	for i := range 500 {
		scores = append(scores, float64(i%13)/7)
	}
	db.ZAdd(b("zset-skiplist"), engine.ZAddFlags{}, scores, many(500, func(i int) string { return fmt.Sprint("m", i) }))
	db.SetExpire(b("zset-skiplist"), now+86_400_000)
	stream := b("stream")
	for i := 1; i <= 250; i++ {
		fields := [][]byte{b("f"), b(strconv.Itoa(i * 1000)), b("g"), b("v")}
		if i%9 == 0 {
			fields = [][]byte{b("other"), b(strings.Repeat("y", i))}
		}
		db.XAdd(stream, &engine.XAddArgs{ID: engine.StreamID{Ms: uint64(i), Seq: uint64(i % 3)}, IDGiven: true, SeqGiven: true, Fields: fields})
	}
	db.XDel(stream, []engine.StreamID{{Ms: 2, Seq: 2}, {Ms: 100, Seq: 1}})
	s, _ := db.ReadStream(stream)
	db.XGroupCreate(stream, s, b("g"), &engine.StreamID{}, 0)
	db.XGroupCreate(stream, s, b("h"), &engine.StreamID{Ms: 50}, -1)
	db.XReadGroupNew(stream, s, s.Group(b("g")), b("alice"), 5, false)
	db.XReadGroupNew(stream, s, s.Group(b("g")), b("bob"), 3, false)
	db.XClaim(stream, s, s.Group(b("g")), b("bob"), []engine.StreamID{{Ms: 1, Seq: 1}}, &engine.XClaimArgs{DeliveryTime: now - 5000, RetryCount: 4})
	for _, n := range []int{3, 9} {
		d := eng.DB(n)
		d.SetString(b("db-string"), b(strconv.Itoa(n)), engine.SetOptions{ExpireAt: now + int64(n)*60_000})
		d.HSet(b("db-hash"), [][]byte{b("f"), b("v")})
	}
}

// TestRDBFileToRedis: a file WriteRDB wrote, compressed or not, loads into
// redis-server, which then holds exactly the engine's keys; with
// SkipNative, the keys of Revolver's own types are left out (redis-server
// could not load them) and counted.
func TestRDBFileToRedis(t *testing.T) {
	for _, c := range []struct {
		compress, native bool
	}{{true, false}, {false, false}, {true, true}} {
		t.Run(fmt.Sprintf("compress=%v/native=%v", c.compress, c.native), func(t *testing.T) {
			eng := engine.New(engine.Options{})
			eng.Lock()
			fillEngineForRDB(t, eng)
			if c.native {
				now := eng.Now()
				eng.DB(0).DelayAdd([]byte("delay"), []byte("t1"), engine.DelayAddArgs{Due: now + 100_000})
				eng.DB(9).QueuePush([]byte("queue"), []byte("job"), engine.QueuePushArgs{})
			}
			dir := t.TempDir()
			res := writeRDBFile(t, eng, filepath.Join(dir, "dump.rdb"), engine.RDBWriteOptions{
				Compress: c.compress, SkipNative: c.native, Functions: [][]byte{[]byte(rdbTestLibrary)},
				Aux: [][2]string{{"redis-ver", "7.0.15"}, {"redis-bits", "64"}, {"ctime", strconv.FormatInt(time.Now().Unix(), 10)}},
			})
			eng.Unlock()
			if want := int64(map[bool]int{true: 2}[c.native]); res.SkippedNative != want || res.Keys < 25 {
				t.Fatalf("wrote %+v, want %d native keys left out", res, want)
			}
			addr := startRedisOnRDB(t, dir)
			compareRedisWithEngine(t, addr, eng)
			if lib := redisDB(t, addr, 0).Do(ctx, "FUNCTION", "LIST", "WITHCODE").String(); !strings.Contains(lib, "rdbfn") {
				t.Errorf("the library did not load: %s", lib)
			}
		})
	}
}
