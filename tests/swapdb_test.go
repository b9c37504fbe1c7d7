package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SWAPDB against both servers: what connections, blocked clients and
// transactions see when two databases exchange their contents. The
// redis-server is shared by the test binary, so every scenario uses its
// own keys in databases 0 and 1, and swaps back and cleans up at the end.

// swRun runs scenario on both servers with keys deleted from databases 0
// and 1 before and after.
func swRun(t *testing.T, keys []string, scenario func(t *testing.T, e *lbEnv)) {
	lbRun(t, keys, func(t *testing.T, e *lbEnv) {
		db1 := redis.NewClient(&redis.Options{Addr: e.addr, DB: 1})
		t.Cleanup(func() { db1.Close() })
		clean := func() {
			e.admin.Del(ctx, keys...)
			if err := db1.Del(ctx, keys...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		clean()
		t.Cleanup(clean)
		scenario(t, e)
	})
}

// swConn dials a raw connection that selects database db.
func swConn(e *lbEnv, db string) *rawConn {
	e.t.Helper()
	c := e.conn(2)
	if v := c.do("SELECT", db); v.Str != "OK" {
		e.t.Fatalf("SELECT %s: %s", db, lbWire(v))
	}
	return c
}

// swBlock sends a blocking command on a new connection in database db and
// returns once the server counts it blocked.
func swBlock(e *lbEnv, db, cmd string) *rawConn {
	e.t.Helper()
	before := zsetBlockedClients(e.t, e.admin)
	c := swConn(e, db)
	c.send(strings.Fields(cmd)...)
	zsetWaitBlocked(e.t, e.admin, before+1)
	return c
}

// TestSwapDBServesBlockedClients: a client blocked in database 1 on a key
// that SWAPDB brings in is served; one blocked for another type on the same
// key, and one blocked on a key neither database holds, stay blocked.
func TestSwapDBServesBlockedClients(t *testing.T) {
	swRun(t, []string{"sw:list", "sw:none"}, func(t *testing.T, e *lbEnv) {
		listWaiter := swBlock(e, "1", "BLPOP sw:list 0")
		zsetWaiter := swBlock(e, "1", "BZPOPMIN sw:list 0")
		noneWaiter := swBlock(e, "0", "BLPOP sw:none 0")
		moveWaiter := swBlock(e, "1", "BLMOVE sw:list sw:none LEFT RIGHT 0")
		e.do("RPUSH sw:list a b")
		e.blocked(4)
		e.do("SWAPDB 0 1")
		e.expect(listWaiter, "BLPOP in db 1", "[sw:list a]")
		e.expect(moveWaiter, "BLMOVE in db 1", "b")
		e.blocked(2)
		// The BLMOVE pushed to sw:none in its own database, 1.
		if got := e.list("sw:none"); got != "" {
			t.Errorf("db 0 sw:none = %q", got)
		}
		c1 := swConn(e, "1")
		if got := lbWire(c1.do("LRANGE", "sw:none", "0", "-1")); got != "[b]" {
			t.Errorf("db 1 sw:none = %s", got)
		}
		// Swapping back brings that list to database 0, where a client
		// waits for it.
		e.do("SWAPDB 1 0")
		e.expect(noneWaiter, "BLPOP in db 0", "[sw:none b]")
		e.blocked(1)
		zsetWaiter.conn.Close()
		waitFor(t, 5*time.Second, "the closed waiter to leave", func() bool {
			return zsetBlockedClients(t, e.admin) == e.base
		})
	})
}

// TestSwapDBTouchesWatchedKeys: a key watched in database 0 that exists in
// either database before or after the swap fails the EXEC; one that exists
// in neither does not.
func TestSwapDBTouchesWatchedKeys(t *testing.T) {
	swRun(t, []string{"sw:w0", "sw:w1", "sw:none"}, func(t *testing.T, e *lbEnv) {
		e.do("SET sw:w0 v")
		c1 := swConn(e, "1")
		c1.do("SET", "sw:w1", "v")
		for _, tc := range []struct {
			key  string
			want string
		}{
			{"sw:w0", "*-1"},  // leaves database 0
			{"sw:w1", "*-1"},  // comes into database 0
			{"sw:none", "[]"}, // in neither
		} {
			w := swConn(e, "0")
			w.do("WATCH", tc.key)
			e.do("SWAPDB 0 1")
			e.do("SWAPDB 0 1") // even swapped back, the key was touched
			w.do("MULTI")
			if got := lbWire(w.do("EXEC")); got != tc.want {
				t.Errorf("WATCH %s, SWAPDB: EXEC = %s, want %s", tc.key, got, tc.want)
			}
		}
		// SWAPDB of other databases, or of a database with itself, touches
		// nothing in database 0.
		w := swConn(e, "0")
		w.do("WATCH", "sw:w0")
		e.do("SWAPDB 0 0")
		e.do("SWAPDB 2 3")
		e.do("SWAPDB 3 2")
		w.do("MULTI")
		if got := lbWire(w.do("EXEC")); got != "[]" {
			t.Errorf("WATCH sw:w0, SWAPDB 0 0 and 2 3: EXEC = %s, want []", got)
		}
	})
}

// TestSwapDBConnectionsSeeOtherData: connections keep their database
// number and see the other contents, with TTLs, in every protocol.
func TestSwapDBConnectionsSeeOtherData(t *testing.T) {
	swRun(t, []string{"sw:k", "sw:vol"}, func(t *testing.T, e *lbEnv) {
		for _, proto := range []int{2, 3} {
			c0 := goRedis(t, e.addr, proto)
			c1 := redis.NewClient(&redis.Options{Addr: e.addr, Protocol: proto, DisableIdentity: proto == 2, DB: 1})
			defer c1.Close()
			c0.Set(ctx, "sw:k", "zero", 0)
			c0.Set(ctx, "sw:vol", "v", 0)
			c0.Expire(ctx, "sw:vol", time.Hour)
			c1.Set(ctx, "sw:k", "one", 0)
			if err := c0.Do(ctx, "SWAPDB", 0, 1).Err(); err != nil {
				t.Fatal(err)
			}
			if v := c0.Get(ctx, "sw:k").Val(); v != "one" {
				t.Errorf("RESP%d: db 0 sw:k = %q, want one", proto, v)
			}
			if v := c1.Get(ctx, "sw:k").Val(); v != "zero" {
				t.Errorf("RESP%d: db 1 sw:k = %q, want zero", proto, v)
			}
			if n := c0.Exists(ctx, "sw:vol").Val(); n != 0 {
				t.Errorf("RESP%d: sw:vol still in db 0", proto)
			}
			if ttl := c1.TTL(ctx, "sw:vol").Val(); ttl <= 0 {
				t.Errorf("RESP%d: db 1 sw:vol TTL = %v", proto, ttl)
			}
			c0.Do(ctx, "SWAPDB", 1, 0)
			c0.Del(ctx, "sw:k", "sw:vol")
			c1.Del(ctx, "sw:k")
		}
	})
}

// TestSwapDBInfoKeyspace: INFO keyspace reports each database's counts
// after the swap under the other number (Revolver's avg_ttl is always 0).
func TestSwapDBInfoKeyspace(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	c.do("SET", "a", "1")
	c.do("SET", "b", "1", "EX", "100")
	c.do("SELECT", "7")
	c.do("SET", "c", "1")
	c.do("SWAPDB", "0", "7")
	_, fields := info(t, c, "keyspace")
	if got := fields["db0"]; got != "keys=1,expires=0,avg_ttl=0" {
		t.Errorf("db0: %q", got)
	}
	if got := fields["db7"]; got != "keys=2,expires=1,avg_ttl=0" {
		t.Errorf("db7: %q", got)
	}
	c.do("SWAPDB", "0", "5")
	_, fields = info(t, c, "keyspace")
	if got, ok := fields["db0"]; ok {
		t.Errorf("db0 after a swap with an empty database: %q", got)
	}
	if got := fields["db5"]; got != "keys=1,expires=0,avg_ttl=0" {
		t.Errorf("db5: %q", got)
	}
}
