package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// swapdbWrite runs commands (space-separated) on one connection of the
// server at addr, starting in database 0, failing on any error reply.
func swapdbWrite(t *testing.T, addr string, cmds ...string) {
	t.Helper()
	c := dialRaw(t, addr)
	for _, cmd := range cmds {
		if v := c.do(strings.Fields(cmd)...); strings.HasPrefix(lbWire(v), "-") {
			t.Fatalf("%s: %s", cmd, lbWire(v))
		}
	}
	c.conn.Close()
}

// TestSwapDBSurvivesRestart: databases swapped (a chain of swaps, with
// writes, deletions, expiries and a FLUSHDB between and after them) are
// still swapped after SHUTDOWN, SIGTERM and kill -9, each key in the
// database it was in; swapping back, and back again, persists too.
func TestSwapDBSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	for _, mode := range []string{"shutdown", "sigterm", "kill9"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			p := startProcess(t, dir, "--appendfsync", "always")
			swapdbWrite(t, p.addr,
				"SET a zero", "RPUSH list a b c", "HSET h f v", "SET vol v EX 3600", "SET gone v",
				"SELECT 1", "SET a one", "ZADD z 1 m1 2 m2", "SADD s x y",
				"SELECT 2", "SET a two", "SET keep two",
				"SELECT 3", "SET a three",
				"SELECT 0", "SWAPDB 0 1",
				// Written after the swap: database 0 is the former 1.
				"SET after0 x", "ZADD z 3 m3", "DEL s",
				"SELECT 1", "SET after1 y", "RPUSH list d", "DEL gone", "EXPIRE h 7200",
				"SWAPDB 1 2", // 1 now holds the original 2, 2 the original 0
				"SET a one-after", "SWAPDB 3 3",
				"SELECT 3", "SWAPDB 3 0", "FLUSHDB", // flushes the original 1
				"SET b three-after",
			)
			before := dumpKeyspace(t, p.addr)
			for _, want := range []string{
				`db0 "a" string  ttl=- "three"`,
				`db1 "a" string  ttl=- "one-after"`,
				`db1 "keep" string  ttl=- "two"`,
				`db2 "a" string  ttl=- "zero"`,
				`db2 "list" list quicklist ttl=- ["a" "b" "c" "d"]`,
				`db2 "h" hash listpack ttl=120 "f"="v"`,
				`db2 "vol" string  ttl=60 "v"`,
				`db2 "after1" string  ttl=- "y"`,
				`db3 "b" string  ttl=- "three-after"`,
			} {
				if !strings.Contains(before, want) {
					t.Fatalf("before the restart, no %s in\n%s", want, before)
				}
			}
			if strings.Contains(before, `"gone"`) || strings.Contains(before, `"z"`) || strings.Contains(before, `"after0"`) {
				t.Fatalf("deleted or flushed keys are there:\n%s", before)
			}
			restart := func(p *process) *process {
				switch mode {
				case "shutdown":
					npShutdown(t, p)
				case "sigterm":
					p.terminate(t)
				default:
					p.kill9(t)
				}
				return startProcess(t, dir, "--appendfsync", "always")
			}
			p = restart(p)
			if after := dumpKeyspace(t, p.addr); after != before {
				t.Fatalf("keyspace differs after restart (%s)\nbefore:\n%s\n\nafter:\n%s", mode, before, after)
			}

			// Undo every swap, write, restart: nothing moved.
			swapdbWrite(t, p.addr, "SWAPDB 0 3", "SWAPDB 1 2", "SWAPDB 0 1",
				"SET last zero", "SELECT 2", "SET last two")
			before = dumpKeyspace(t, p.addr)
			for _, want := range []string{`db0 "a" string  ttl=- "zero"`, `db0 "last"`, `db1 "b" string  ttl=- "three-after"`,
				`db2 "a" string  ttl=- "one-after"`, `db2 "last"`, `db3 "a" string  ttl=- "three"`} {
				if !strings.Contains(before, want) {
					t.Fatalf("after swapping back, no %s in\n%s", want, before)
				}
			}
			p = restart(p)
			if after := dumpKeyspace(t, p.addr); after != before {
				t.Fatalf("keyspace differs after the second restart (%s)\nbefore:\n%s\n\nafter:\n%s", mode, before, after)
			}
			// A swap right before the crash or shutdown, with nothing after.
			swapdbWrite(t, p.addr, "SWAPDB 2 0")
			before = dumpKeyspace(t, p.addr)
			p = restart(p)
			if after := dumpKeyspace(t, p.addr); after != before {
				t.Fatalf("keyspace differs after the third restart (%s)\nbefore:\n%s\n\nafter:\n%s", mode, before, after)
			}
		})
	}
}

// TestSwapDBExpiryAfterRestart: after a swap, a SAVE and a restart, a
// key's deadline deletes it in its new database.
func TestSwapDBExpiryAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	dir := t.TempDir()
	p := startProcess(t, dir, "--appendfsync", "always")
	swapdbWrite(t, p.addr, "SELECT 4", "SET short v PX 600", "SET long v EX 3600", "SWAPDB 4 5", "SAVE")
	p.terminate(t)
	p = startProcess(t, dir, "--appendfsync", "always")
	c5 := redis.NewClient(&redis.Options{Addr: p.addr, DB: 5})
	defer c5.Close()
	if n := c5.Exists(ctx, "long").Val(); n != 1 {
		t.Fatalf("long is not in database 5 after the restart")
	}
	waitFor(t, 10*time.Second, "short to expire in database 5", func() bool {
		return c5.DBSize(ctx).Val() == 1
	})
	c4 := redis.NewClient(&redis.Options{Addr: p.addr, DB: 4})
	defer c4.Close()
	if n := c4.DBSize(ctx).Val(); n != 0 {
		t.Errorf("database 4 has %d keys", n)
	}
}
