package tests

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/resp"
)

// TestScriptHelperFallback: go-redis's Script (like ioredis defineCommand,
// node-redis defineScript and redis-py register_script) names a script by
// the SHA1 of its text, sends EVALSHA and falls back to EVAL on NOSCRIPT.
func TestScriptHelperFallback(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		c := goRedis(t, addr, 2)
		c.FlushAll(ctx)
		c.ScriptFlush(ctx)
		src := "return redis.call('incrby', KEYS[1], ARGV[1])"
		script := redis.NewScript(src)
		sum := sha1.Sum([]byte(src))
		if script.Hash() != hex.EncodeToString(sum[:]) {
			t.Fatalf("helper hash %s", script.Hash())
		}
		if err := script.EvalSha(ctx, c, []string{"n"}, 1).Err(); err == nil ||
			err.Error() != "NOSCRIPT No matching script. Please use EVAL." {
			t.Fatalf("EVALSHA before load: %v", err)
		}
		for i := 1; i <= 3; i++ {
			n, err := script.Run(ctx, c, []string{"n"}, 5).Int()
			if err != nil || n != 5*i {
				t.Fatalf("run %d: %d %v", i, n, err)
			}
		}
		if ok := c.ScriptExists(ctx, script.Hash()).Val(); len(ok) != 1 || !ok[0] {
			t.Fatalf("the fallback EVAL did not cache the script: %v", ok)
		}
		sha, err := c.ScriptLoad(ctx, src).Result()
		if err != nil || sha != script.Hash() {
			t.Fatalf("SCRIPT LOAD: %s %v", sha, err)
		}
	})
}

// TestScriptErrorKeepsEarlierWrites: a script that fails halfway keeps the
// writes it made before the error (scripts are not transactions), and
// those writes are persisted like any command's.
func TestScriptErrorKeepsEarlierWrites(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	c := dialRaw(t, srv.Addr())
	c.do("SET", "text", "abc")
	r := c.do("EVAL", "redis.call('set', 'before', '1'); redis.call('rpush', 'list', 'x'); redis.call('incr', 'text'); redis.call('set', 'after', '1')", "0")
	if r.Kind != resp.KindError || !strings.HasPrefix(r.Str, "ERR value is not an integer or out of range script:") {
		t.Fatalf("reply %v", r)
	}
	srv.Crash()
	srv2 := startServer(t, withPersistence(dir))
	c2 := dialRaw(t, srv2.Addr())
	if v := c2.do("GET", "before"); v.Str != "1" {
		t.Errorf("before: %v", v)
	}
	if v := c2.do("LRANGE", "list", "0", "-1"); len(v.Elems) != 1 {
		t.Errorf("list: %v", v)
	}
	if v := c2.do("EXISTS", "after"); v.Int != 0 {
		t.Errorf("after: %v", v)
	}
}

// TestScriptsAreAtomic: a read-modify-write script run by many clients at
// once never loses an update, and no client sees a half-done script.
func TestScriptsAreAtomic(t *testing.T) {
	srv := startServer(t)
	const clients, rounds = 16, 200
	src := `local v = tonumber(redis.call('get', KEYS[1]) or '0')
redis.call('set', KEYS[1], v + 1)
redis.call('rpush', KEYS[2], v)
return v`
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			defer c.Close()
			script := redis.NewScript(src)
			for j := 0; j < rounds; j++ {
				if err := script.Run(ctx, c, []string{"counter", "seen"}).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	c := goRedis(t, srv.Addr(), 2)
	if n := c.Get(ctx, "counter").Val(); n != strconv.Itoa(clients*rounds) {
		t.Fatalf("counter %s", n)
	}
	seen, err := c.LRange(ctx, "seen", 0, -1).Result()
	if err != nil || len(seen) != clients*rounds {
		t.Fatalf("the scripts' list has %d entries, want %d: %v", len(seen), clients*rounds, err)
	}
	for i, v := range seen {
		if v != strconv.Itoa(i) {
			t.Fatalf("seen[%d] = %s: two scripts interleaved", i, v)
		}
	}
}

// TestScriptCallsNativeCommands: scripts reach the native families through
// the same command table as clients, with the same errors.
func TestScriptCallsNativeCommands(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	r := c.do("EVAL", `local id = redis.call('QUEUE.PUSH', KEYS[1], 'payload')
local got = redis.call('QUEUE.POPACK', KEYS[1], 'worker', 'LEASE', 30000)
return {type(id), #got}`, "1", "q")
	if r.Kind == resp.KindError || len(r.Elems) != 2 || r.Elems[0].Str != "string" || r.Elems[1].Int != 1 {
		t.Fatalf("queue from a script (want the pushed id's type, string, and the one job popped): %v", r)
	}
	r = c.do("EVAL_RO", "return redis.call('QUEUE.PUSH', KEYS[1], 'x')", "1", "q")
	if r.Kind != resp.KindError || !strings.HasPrefix(r.Str, "ERR Write commands are not allowed from read-only scripts.") {
		t.Fatalf("write from EVAL_RO: %v", r)
	}
}
