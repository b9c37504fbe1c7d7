package tests

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// dumpSample is a key of one type and encoding, built by the same commands
// on both servers.
type dumpSample struct {
	key   string
	setup [][]any
}

func dumpSamples() []dumpSample {
	many := func(cmd, key string, n int, f func(i int) []any) []any {
		args := []any{cmd, key}
		for i := range n {
			args = append(args, f(i)...)
		}
		return args
	}
	samples := []dumpSample{
		{"str-int", [][]any{{"SET", "str-int", "123456"}}},
		{"str-embstr", [][]any{{"SET", "str-embstr", "hello world"}}},
		{"str-raw", [][]any{{"SET", "str-raw", "x"}, {"APPEND", "str-raw", "y"}}},
		{"str-lzf", [][]any{{"SET", "str-lzf", strings.Repeat("compress me ", 300)}}},
		{"hll-sparse", [][]any{{"PFADD", "hll-sparse", "a", "b", "c"}}},
		{"hll-dense", [][]any{many("PFADD", "hll-dense", 3000, func(i int) []any { return []any{i} })}},
		{"list-small", [][]any{{"RPUSH", "list-small", "a", 1, -70000, 1 << 40, strings.Repeat("v", 100)}}},
		{"list-large", [][]any{many("RPUSH", "list-large", 5000, func(i int) []any { return []any{fmt.Sprint("e", i)} })}},
		{"set-intset", [][]any{{"SADD", "set-intset", 3, 1, -2, 5000000000}}},
		{"set-small-ht", [][]any{{"SADD", "set-small-ht", "a", "b", "c"}}},
		{"set-large", [][]any{many("SADD", "set-large", 2000, func(i int) []any { return []any{i} })}},
		{"hash-listpack", [][]any{{"HSET", "hash-listpack", "f", "v", "n", 12, "neg", -3}}},
		{"hash-ht-long", [][]any{{"HSET", "hash-ht-long", "f", strings.Repeat("v", 100), "g", 1}}},
		{"hash-ht-many", [][]any{many("HSET", "hash-ht-many", 1000, func(i int) []any { return []any{fmt.Sprint("f", i), i} })}},
		{"zset-listpack", [][]any{{"ZADD", "zset-listpack", 1, "a", 2.5, "b", "-inf", "c", 0.1, "d"}}},
		{"zset-skiplist", [][]any{many("ZADD", "zset-skiplist", 500, func(i int) []any { return []any{float64(i%13) / 7, fmt.Sprint("m", i)} })}},
		{"zset-long-member", [][]any{{"ZADD", "zset-long-member", 1, strings.Repeat("m", 80)}}},
	}
	return append(samples, streamDumpSamples()...)
}

// keyValue renders a key's type and contents independently of the order a
// hashtable lists them in.
func keyValue(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	typ := c.Type(ctx, key).Val()
	var parts []string
	switch typ {
	case "string":
		parts = []string{c.Get(ctx, key).Val()}
	case "list":
		parts = c.LRange(ctx, key, 0, -1).Val()
	case "set":
		parts = c.SMembers(ctx, key).Val()
		sort.Strings(parts)
	case "hash":
		for f, v := range c.HGetAll(ctx, key).Val() {
			parts = append(parts, f+"="+v)
		}
		sort.Strings(parts)
	case "zset":
		for _, z := range c.ZRangeWithScores(ctx, key, 0, -1).Val() {
			parts = append(parts, fmt.Sprintf("%v=%v", z.Member, z.Score))
		}
	case "stream":
		parts = []string{streamValue(t, c, key)}
	default:
		t.Fatalf("%s: unexpected type %q", key, typ)
	}
	return typ + ":" + strings.Join(parts, ",")
}

// TestDumpRestoreWithRedis builds every type and encoding on both servers,
// restores each server's DUMP on the other and compares the values and
// encodings; where the layout is deterministic the payloads themselves
// must be equal.
func TestDumpRestoreWithRedis(t *testing.T) {
	redisAddr := realRedis(t)
	red := goRedis(t, redisAddr, 2)
	rev := goRedis(t, startServer(t).Addr(), 2)
	red.FlushAll(ctx)
	for _, s := range dumpSamples() {
		for _, cmd := range s.setup {
			for _, c := range []*redis.Client{red, rev} {
				if err := c.Do(ctx, cmd...).Err(); err != nil {
					t.Fatalf("%s: %v: %v", s.key, cmd[:2], err)
				}
			}
		}
		encRed := red.ObjectEncoding(ctx, s.key).Val()
		encRev := rev.ObjectEncoding(ctx, s.key).Val()
		if encRed != encRev {
			t.Fatalf("%s: encoding %s on Redis, %s here", s.key, encRed, encRev)
		}
		fromRed, err := red.Dump(ctx, s.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		fromRev, err := rev.Dump(ctx, s.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if encRed != "hashtable" && !streamDumpVaries[s.key] && fromRed != fromRev {
			t.Errorf("%s (%s): payloads differ\n redis:    %q\n revolver: %q", s.key, encRed, trimQ(fromRed), trimQ(fromRev))
		}
		if err := rev.Restore(ctx, "from-redis:"+s.key, 0, fromRed).Err(); err != nil {
			t.Fatalf("%s: Redis's dump refused: %v", s.key, err)
		}
		if err := red.Restore(ctx, "from-revolver:"+s.key, 0, fromRev).Err(); err != nil {
			t.Fatalf("%s: redis-server refused our dump: %v", s.key, err)
		}
		// Each copy is compared with the key it was dumped from: a stream's
		// times are the source server's, not those of the same commands
		// run on the other server a moment apart.
		if got, want := keyValue(t, rev, "from-redis:"+s.key), keyValue(t, red, s.key); got != want {
			t.Errorf("%s: restored from Redis as %.200s, want %.200s", s.key, got, want)
		}
		if got, want := keyValue(t, red, "from-revolver:"+s.key), keyValue(t, rev, s.key); got != want {
			t.Errorf("%s: Redis restored our dump as %.200s, want %.200s", s.key, got, want)
		}
		// After RESTORE the encoding is the one the contents and the
		// thresholds give, on both servers (a raw string comes back embstr).
		if err := red.Restore(ctx, "from-redis:"+s.key, 0, fromRed).Err(); err != nil {
			t.Fatal(err)
		}
		want := red.ObjectEncoding(ctx, "from-redis:"+s.key).Val()
		if got := rev.ObjectEncoding(ctx, "from-redis:"+s.key).Val(); got != want {
			t.Errorf("%s: Redis's dump restored here as %s, on Redis as %s", s.key, got, want)
		}
		if got := red.ObjectEncoding(ctx, "from-revolver:"+s.key).Val(); got != want {
			t.Errorf("%s: Redis restored our dump as %s, its own as %s", s.key, got, want)
		}
	}
}

func trimQ(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// TestRestorePersists: keys restored from Redis's and Revolver's payloads,
// natives and a TTL included, are all there after a restart; a key
// MIGRATE moved away stays gone.
func TestRestorePersists(t *testing.T) {
	redisAddr := realRedis(t)
	red := goRedis(t, redisAddr, 2)
	red.FlushAll(ctx)
	mem := goRedis(t, startServer(t).Addr(), 2)
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	rev := goRedis(t, srv.Addr(), 2)
	var keys []string
	for _, s := range dumpSamples() {
		for _, cmd := range s.setup {
			red.Do(ctx, cmd...)
		}
		p, err := red.Dump(ctx, s.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := rev.Restore(ctx, s.key, 0, p).Err(); err != nil {
			t.Fatalf("%s: %v", s.key, err)
		}
		keys = append(keys, s.key)
	}
	mem.Do(ctx, "DELAY.ADD", "delay", "t1", "IN", 100000)
	mem.Do(ctx, "QUEUE.PUSH", "queue", "job")
	for _, k := range []string{"delay", "queue"} {
		p := mem.Dump(ctx, k).Val()
		if err := rev.Restore(ctx, k, 0, p).Err(); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	if err := rev.Do(ctx, "RESTORE", "ttl", 100000, red.Dump(ctx, "str-int").Val(), "IDLETIME", 50).Err(); err != nil {
		t.Fatal(err)
	}
	rev.Set(ctx, "moved", "x", 0)
	if got := migrate(t, rev, startServer(t).Addr(), "moved", 0); got != "OK" {
		t.Fatal(got)
	}
	want := map[string]string{}
	for _, k := range keys {
		want[k] = keyValue(t, rev, k)
	}
	before := []string{rev.Do(ctx, "DELAY.RANGE", "delay", 0, "+inf").String(), rev.Do(ctx, "QUEUE.PEEK", "queue").String()}
	srv.Close()
	rev2 := goRedis(t, startServer(t, withPersistence(dir)).Addr(), 2)
	for k, w := range want {
		if got := keyValue(t, rev2, k); got != w {
			t.Errorf("%s after restart: %.100s, want %.100s", k, got, w)
		}
	}
	after := []string{rev2.Do(ctx, "DELAY.RANGE", "delay", 0, "+inf").String(), rev2.Do(ctx, "QUEUE.PEEK", "queue").String()}
	for i := range before {
		if before[i] != after[i] {
			t.Errorf("native value after restart: %s, before: %s", after[i], before[i])
		}
	}
	if ttl := rev2.TTL(ctx, "ttl").Val(); ttl <= 0 {
		t.Errorf("TTL after restart: %v", ttl)
	}
	if rev2.Exists(ctx, "moved").Val() != 0 {
		t.Error("the migrated key came back")
	}
}
