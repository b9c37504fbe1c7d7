package tests

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// migrate runs MIGRATE on c towards addr and returns its reply or error
// text.
func migrate(t *testing.T, c *redis.Client, addr string, key string, db int, rest ...any) string {
	t.Helper()
	h, p := hostPort(t, addr)
	args := append([]any{"MIGRATE", h, p, key, db, 5000}, rest...)
	v, err := c.Do(ctx, args...).Result()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(v)
}

// TestMigrateToRedis moves keys of every Redis type from Revolver to
// redis-server: one key, KEYS, COPY, REPLACE, a TTL, the errors.
func TestMigrateToRedis(t *testing.T) {
	redisAddr := realRedis(t)
	red := goRedis(t, redisAddr, 2)
	rev := goRedis(t, startServer(t).Addr(), 2)
	red.FlushAll(ctx)
	for _, s := range dumpSamples() {
		for _, cmd := range s.setup {
			rev.Do(ctx, cmd...)
		}
		want := keyValue(t, rev, s.key)
		if got := migrate(t, rev, redisAddr, s.key, 0); got != "OK" {
			t.Fatalf("%s: MIGRATE replied %s", s.key, got)
		}
		if rev.Exists(ctx, s.key).Val() != 0 {
			t.Errorf("%s: still here after MIGRATE", s.key)
		}
		if got := keyValue(t, red, s.key); got != want {
			t.Errorf("%s: arrived as %.100s, want %.100s", s.key, got, want)
		}
	}

	rev.Set(ctx, "ttl", "v", 100*time.Second)
	if got := migrate(t, rev, redisAddr, "ttl", 0); got != "OK" {
		t.Fatal(got)
	}
	if ttl := red.PTTL(ctx, "ttl").Val(); ttl <= 90*time.Second || ttl > 100*time.Second {
		t.Errorf("TTL arrived as %v", ttl)
	}

	if got := migrate(t, rev, redisAddr, "nosuchkey", 0); got != "NOKEY" {
		t.Errorf("missing key: %s", got)
	}
	rev.Set(ctx, "str-int", "new", 0)
	if got := migrate(t, rev, redisAddr, "str-int", 0); got != "ERR Target instance replied with error: BUSYKEY Target key name already exists." {
		t.Errorf("busy target: %s", got)
	}
	if rev.Exists(ctx, "str-int").Val() != 1 {
		t.Error("the key was deleted although the target refused it")
	}
	if got := migrate(t, rev, redisAddr, "str-int", 0, "COPY", "REPLACE"); got != "OK" {
		t.Fatal(got)
	}
	if rev.Get(ctx, "str-int").Val() != "new" || red.Get(ctx, "str-int").Val() != "new" {
		t.Error("COPY REPLACE did not copy")
	}

	rev.Set(ctx, "k1", "1", 0)
	rev.Set(ctx, "k2", "2", 0)
	if got := migrate(t, rev, redisAddr, "", 3, "KEYS", "k1", "missing", "k2"); got != "OK" {
		t.Fatal(got)
	}
	red3 := redis.NewClient(&redis.Options{Addr: redisAddr, DB: 3, Protocol: 2})
	defer red3.Close()
	if red3.Get(ctx, "k1").Val() != "1" || red3.Get(ctx, "k2").Val() != "2" || rev.Exists(ctx, "k1", "k2").Val() != 0 {
		t.Error("KEYS did not move both keys to db 3")
	}
	red3.FlushDB(ctx)
	if got := migrate(t, rev, redisAddr, "k", 0, "KEYS", "a"); !strings.Contains(got, "the key argument must be set to the empty string") {
		t.Errorf("KEYS with a key: %s", got)
	}

	// Revolver's own types have no Redis encoding: Redis refuses them.
	rev.Do(ctx, "UV.ADD", "uv", "a", "b")
	if got := migrate(t, rev, redisAddr, "uv", 0); got != "ERR Target instance replied with error: ERR Bad data format" {
		t.Errorf("native type to Redis: %s", got)
	}
	if rev.Exists(ctx, "uv").Val() != 1 {
		t.Error("the native key was deleted although Redis refused it")
	}
}

// TestMigrateFromRedis: redis-server's MIGRATE into Revolver, with KEYS,
// COPY, REPLACE and AUTH.
func TestMigrateFromRedis(t *testing.T) {
	redisAddr := realRedis(t)
	red := goRedis(t, redisAddr, 2)
	srv := startServer(t, withConfig("requirepass", "secret"))
	rev := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "secret", Protocol: 2})
	defer rev.Close()
	red.FlushAll(ctx)
	var keys []any
	for _, s := range dumpSamples() {
		for _, cmd := range s.setup {
			red.Do(ctx, cmd...)
		}
		keys = append(keys, s.key)
	}
	want := map[string]string{}
	for _, k := range keys {
		want[k.(string)] = keyValue(t, red, k.(string))
	}
	if got := migrate(t, red, srv.Addr(), "", 0, append([]any{"COPY", "AUTH", "wrong", "KEYS"}, keys...)...); !strings.HasPrefix(got, "ERR Target instance replied with error: WRONGPASS") {
		t.Fatalf("wrong password: %s", got)
	}
	if got := migrate(t, red, srv.Addr(), "", 0, append([]any{"COPY", "AUTH", "secret", "KEYS"}, keys...)...); got != "OK" {
		t.Fatalf("MIGRATE from Redis: %s", got)
	}
	for k, w := range want {
		if got := keyValue(t, rev, k); got != w {
			t.Errorf("%s: arrived as %.100s, want %.100s", k, got, w)
		}
		if red.Exists(ctx, k).Val() != 1 {
			t.Errorf("%s: COPY deleted the source", k)
		}
	}
	red.Set(ctx, "str-int", "replaced", 0)
	if got := migrate(t, red, srv.Addr(), "str-int", 0, "AUTH2", "default", "secret"); !strings.Contains(got, "BUSYKEY") {
		t.Errorf("busy target: %s", got)
	}
	if got := migrate(t, red, srv.Addr(), "str-int", 0, "REPLACE", "AUTH2", "default", "secret"); got != "OK" {
		t.Fatal(got)
	}
	if rev.Get(ctx, "str-int").Val() != "replaced" || red.Exists(ctx, "str-int").Val() != 0 {
		t.Error("REPLACE did not move the key")
	}
}

// TestMigrateBetweenRevolvers moves Revolver's own types too, and checks
// they work on the target.
func TestMigrateBetweenRevolvers(t *testing.T) {
	src := goRedis(t, startServer(t).Addr(), 2)
	dstSrv := startServer(t)
	dst := goRedis(t, dstSrv.Addr(), 2)
	setup := [][]any{
		{"DELAY.ADD", "delay", "t1", "IN", 100000},
		{"DELAY.ADD", "delay", "t2", "IN", 200000},
		{"QUEUE.PUSH", "queue", "job1"},
		{"QUEUE.PUSH", "queue", "job2", "PRIORITY", 5},
		{"UV.ADD", "uv", "a", "b", "c"},
		{"ROOM.PUB", "room", "hello"},
		{"ROOM.PUB", "room", "urgent", "IMPORTANT"},
		{"NUMPOOL.ADD", "pool", "100", "101"},
		{"HSET", "hash", "f", "v"},
	}
	for _, cmd := range setup {
		if err := src.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	reads := [][]any{
		{"TYPE", "delay"}, {"DELAY.LEN", "delay"}, {"DELAY.RANGE", "delay", 0, "+inf"},
		{"TYPE", "queue"}, {"QUEUE.LEN", "queue"}, {"QUEUE.PEEK", "queue"},
		{"TYPE", "uv"}, {"UV.COUNT", "uv"},
		{"TYPE", "room"}, {"ROOM.PULL", "room", 0, 0},
		{"TYPE", "pool"}, {"NUMPOOL.INFO", "pool"},
		{"HGETALL", "hash"},
	}
	read := func(c *redis.Client) []string {
		var out []string
		for _, r := range reads {
			v, err := c.Do(ctx, r...).Result()
			out = append(out, fmt.Sprintf("%v %v", v, err))
		}
		return out
	}
	before := read(src)
	if got := migrate(t, src, dstSrv.Addr(), "", 2, "KEYS", "delay", "queue", "uv", "room", "pool", "hash"); got != "OK" {
		t.Fatalf("MIGRATE: %s", got)
	}
	if n := src.DBSize(ctx).Val(); n != 0 {
		t.Errorf("%d keys left on the source", n)
	}
	dst2 := redis.NewClient(&redis.Options{Addr: dstSrv.Addr(), DB: 2, Protocol: 2})
	defer dst2.Close()
	after := read(dst2)
	for i := range before {
		if before[i] != after[i] {
			t.Errorf("%v: %s on the source, %s on the target", reads[i], before[i], after[i])
		}
	}
	// The moved queue serves jobs on the target.
	if v, err := dst2.Do(ctx, "QUEUE.POPACK", "queue", 1).Result(); err != nil || !strings.Contains(fmt.Sprint(v), "job2") {
		t.Errorf("QUEUE.POPACK on the target: %v %v", v, err)
	}
	_ = dst
}

// TestMigrateErrors: a target that does not listen, and one that never
// answers (the timeout), with Redis's texts.
func TestMigrateErrors(t *testing.T) {
	rev := goRedis(t, startServer(t).Addr(), 2)
	rev.Set(ctx, "k", "v", 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	ln.Close()
	// Redis's connect does not see the refusal; its first write does.
	if got := migrate(t, rev, deadAddr, "k", 0); got != "IOERR error or timeout writing to target instance" {
		t.Errorf("closed port: %s", got)
	}
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	h, p := hostPort(t, silent.Addr().String())
	got, err := rev.Do(ctx, "MIGRATE", h, p, "k", 0, 200).Result()
	if err == nil || err.Error() != "IOERR error or timeout reading to target instance" {
		t.Errorf("silent target: %v %v", got, err)
	}
	if rev.Get(ctx, "k").Val() != "v" {
		t.Error("the key was lost on a timeout")
	}
}

// TestMigrateRedactsCredentials: SLOWLOG shows MIGRATE's AUTH and AUTH2
// arguments redacted, as Redis does.
func TestMigrateRedactsCredentials(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		c := goRedis(t, addr, 2)
		c.ConfigSet(ctx, "slowlog-log-slower-than", "0")
		defer c.ConfigSet(ctx, "slowlog-log-slower-than", "10000")
		var got []string
		for _, extra := range [][]any{{"AUTH", "pw"}, {"COPY", "AUTH2", "user", "pw", "KEYS", "nokey"}} {
			c.SlowLogReset(ctx)
			key := "nokey"
			if len(extra) > 2 {
				key = ""
			}
			c.Do(ctx, append([]any{"MIGRATE", "127.0.0.1", "1", key, 0, 100}, extra...)...)
			for _, e := range c.SlowLogGet(ctx, 10).Val() {
				if strings.EqualFold(e.Args[0], "migrate") {
					got = append(got, strings.Join(e.Args, " "))
				}
			}
		}
		want := []string{`MIGRATE 127.0.0.1 1 nokey 0 100 AUTH (redacted)`,
			`MIGRATE 127.0.0.1 1  0 100 COPY AUTH2 (redacted) (redacted) KEYS nokey`}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("SLOWLOG:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestMigrateCachesConnection: consecutive MIGRATEs to one target reuse a
// connection, as Redis's socket cache does.
func TestMigrateCachesConnection(t *testing.T) {
	src := goRedis(t, startServer(t).Addr(), 2)
	dstSrv := startServer(t)
	dst := goRedis(t, dstSrv.Addr(), 2)
	for i := range 3 {
		k := fmt.Sprint("k", i)
		src.Set(ctx, k, "v", 0)
		if got := migrate(t, src, dstSrv.Addr(), k, 4); got != "OK" {
			t.Fatal(got)
		}
	}
	n := 0
	for _, line := range strings.Split(dst.ClientList(ctx).Val(), "\n") {
		if strings.Contains(line, "cmd=restore") {
			n++
			if !strings.Contains(line, " db=4 ") {
				t.Errorf("the cached connection is not on db 4: %s", line)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d connections ran RESTORE, want 1:\n%s", n, dst.ClientList(ctx).Val())
	}
}
