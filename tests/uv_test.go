package tests

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// The unique counter (UV.ADD, UV.COUNT, UV.MERGE): exact up to
// uv-exact-max members, a HyperLogLog estimate above; TYPE "uv".

func uvAdd(t *testing.T, c *redis.Client, key string, from, to int) int64 {
	t.Helper()
	args := []any{"UV.ADD", key}
	for i := from; i < to; i++ {
		args = append(args, "viewer:"+strconv.Itoa(i))
	}
	n, err := c.Do(ctx, args...).Int64()
	if err != nil {
		t.Fatalf("UV.ADD %s: %v", key, err)
	}
	return n
}

func uvCountOf(t *testing.T, c *redis.Client, keys ...string) int64 {
	t.Helper()
	args := []any{"UV.COUNT"}
	for _, k := range keys {
		args = append(args, k)
	}
	n, err := c.Do(ctx, args...).Int64()
	if err != nil {
		t.Fatalf("UV.COUNT %v: %v", keys, err)
	}
	return n
}

func expectErr(t *testing.T, c *redis.Client, want string, args ...any) {
	t.Helper()
	err := c.Do(ctx, args...).Err()
	if err == nil || err.Error() != want {
		t.Errorf("%v: error %v, want %q", args, err, want)
	}
}

func TestUVCommands(t *testing.T) {
	srv := startServer(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c := goRedis(t, srv.Addr(), proto)
			c.FlushAll(ctx)
			if n := uvAdd(t, c, "u", 0, 3); n != 1 {
				t.Fatalf("UV.ADD of new members: %d", n)
			}
			if n := uvAdd(t, c, "u", 0, 3); n != 0 {
				t.Fatalf("UV.ADD of known members: %d", n)
			}
			if uvCountOf(t, c, "u") != 3 || uvCountOf(t, c, "nosuch") != 0 {
				t.Fatal("counts")
			}
			uvAdd(t, c, "v", 2, 10)
			if uvCountOf(t, c, "u", "v", "nosuch") != 10 {
				t.Fatal("union count")
			}
			if typ := c.Type(ctx, "u").Val(); typ != "uv" {
				t.Fatalf("TYPE %q", typ)
			}
			if enc := c.ObjectEncoding(ctx, "u").Val(); enc != "exact" {
				t.Fatalf("OBJECT ENCODING %q", enc)
			}
			if ok, err := c.Do(ctx, "UV.MERGE", "d", "u", "v", "nosuch").Text(); ok != "OK" || err != nil {
				t.Fatalf("UV.MERGE: %v %v", ok, err)
			}
			if uvCountOf(t, c, "d") != 10 {
				t.Fatal("merged count")
			}
			keys, _, err := c.ScanType(ctx, 0, "*", 100, "uv").Result()
			if err != nil || len(keys) != 3 {
				t.Fatalf("SCAN TYPE uv: %v %v", keys, err)
			}

			c.Set(ctx, "s", "x", 0)
			wrong := "WRONGTYPE Operation against a key holding the wrong kind of value"
			expectErr(t, c, wrong, "UV.ADD", "s", "a")
			expectErr(t, c, wrong, "UV.COUNT", "u", "s")
			expectErr(t, c, wrong, "UV.MERGE", "u", "s")
			expectErr(t, c, wrong, "UV.MERGE", "s", "u")
			expectErr(t, c, wrong, "PFADD", "u", "a")
			expectErr(t, c, wrong, "GET", "u")
			expectErr(t, c, "ERR wrong number of arguments for 'uv.add' command", "UV.ADD", "u")
			expectErr(t, c, "ERR wrong number of arguments for 'uv.count' command", "UV.COUNT")
			expectErr(t, c, "ERR wrong number of arguments for 'uv.merge' command", "UV.MERGE", "d")

			// Past the threshold the counter turns into a HyperLogLog.
			if err := c.ConfigSet(ctx, "uv-exact-max", "100").Err(); err != nil {
				t.Fatal(err)
			}
			defer c.ConfigSet(ctx, "uv-exact-max", "10000")
			uvAdd(t, c, "big", 0, 100)
			if enc := c.ObjectEncoding(ctx, "big").Val(); enc != "exact" || uvCountOf(t, c, "big") != 100 {
				t.Fatal("100 members with uv-exact-max 100")
			}
			uvAdd(t, c, "big", 100, 150)
			if enc := c.ObjectEncoding(ctx, "big").Val(); enc != "hyperloglog" {
				t.Fatalf("150 members: encoding %q", enc)
			}
			if n := uvCountOf(t, c, "big"); n < 150 || n > 155 {
				t.Fatalf("estimate for 150: %d", n)
			}
			if v := c.ConfigGet(ctx, "uv-exact-max").Val()["uv-exact-max"]; v != "100" {
				t.Fatalf("CONFIG GET uv-exact-max: %q", v)
			}
			if err := c.ConfigSet(ctx, "uv-exact-max", "-1").Err(); err == nil ||
				!strings.Contains(err.Error(), "argument must be between 0 and") {
				t.Fatalf("uv-exact-max -1: %v", err)
			}
			if err := c.ConfigSet(ctx, "uv-exact-max", "abc").Err(); err == nil {
				t.Fatal("uv-exact-max abc accepted")
			}
		})
	}
}

var uvNotifyCases = []notifyCase{
	{name: "uv", setup: []string{"UV.ADD old x"},
		cmds: []string{"UV.ADD u a", "UV.ADD u a", "UV.ADD u b c", "UV.COUNT u old", "UV.MERGE d u old", "UV.ADD old x"},
		want: []string{"uv.add u", "uv.add u", "uv.merge d"}},
}

func TestUVKeyspaceNotifications(t *testing.T) {
	addr := startServer(t).Addr()
	runNotifyCases(t, addr, "KEA", uvNotifyCases)
}

// uvState is what a restart must bring back for a counter.
type uvState struct {
	count    int64
	encoding string
	ttl      bool
}

func uvSnapshot(t *testing.T, c *redis.Client, keys ...string) map[string]uvState {
	t.Helper()
	out := map[string]uvState{}
	for _, k := range keys {
		out[k] = uvState{count: uvCountOf(t, c, k), encoding: c.ObjectEncoding(ctx, k).Val(),
			ttl: c.TTL(ctx, k).Val() > 0}
	}
	return out
}

// TestUVRestart: exact and approximate counters, one converted while it had
// a deadline, come back after kill -9 (appendfsync always) and after a
// clean shutdown, and keep counting.
func TestUVRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	dir := t.TempDir()
	args := []string{"--appendfsync", "always", "--uv-exact-max", "1000"}
	p := startProcess(t, dir, args...)
	c := redis.NewClient(&redis.Options{Addr: p.addr})
	uvAdd(t, c, "exact", 0, 800)
	for i := 0; i < 20000; i += 500 {
		uvAdd(t, c, "approx", i, i+500)
	}
	uvAdd(t, c, "ttl", 0, 10)
	c.Expire(ctx, "ttl", 3600e9)
	uvAdd(t, c, "ttl", 0, 5000)
	c.Do(ctx, "UV.MERGE", "merged", "exact", "ttl")
	keys := []string{"exact", "approx", "ttl", "merged"}
	before := uvSnapshot(t, c, keys...)
	c.Close()
	if before["exact"].encoding != "exact" || before["approx"].encoding != "hyperloglog" || !before["ttl"].ttl {
		t.Fatalf("unexpected state before restart: %+v", before)
	}
	if n := before["approx"].count; math.Abs(float64(n)-20000) > 400 {
		t.Fatalf("estimate for 20000: %d", n)
	}

	p.kill9(t)
	p = startProcess(t, dir, args...)
	c = redis.NewClient(&redis.Options{Addr: p.addr})
	if after := uvSnapshot(t, c, keys...); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("after kill -9:\n got  %+v\n want %+v", after, before)
	}
	// Still counting: the exact one converts past the limit.
	uvAdd(t, c, "exact", 700, 1200)
	uvAdd(t, c, "approx", 20000, 20010)
	before = uvSnapshot(t, c, keys...)
	if before["exact"].encoding != "hyperloglog" || before["exact"].count < 1200 {
		t.Fatalf("exact counter after 1200 members: %+v", before["exact"])
	}
	c.Close()

	p.terminate(t)
	p = startProcess(t, dir, args...)
	c = redis.NewClient(&redis.Options{Addr: p.addr})
	defer c.Close()
	if after := uvSnapshot(t, c, keys...); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("after a clean shutdown:\n got  %+v\n want %+v", after, before)
	}
}
