package tests

import (
	"testing"
	"time"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/server"
)

// TestWaitBlocks: with no replicas, WAIT for one or more blocks until its
// timeout and answers 0; CLIENT UNBLOCK ends it with 0 or the UNBLOCKED
// error, and a client that hangs up leaves no blocked client behind.
func TestWaitBlocks(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		admin := goRedis(t, addr, 2)
		base := zsetBlockedClients(t, admin)

		c := dialRaw(t, addr)
		start := time.Now()
		if v := c.do("WAIT", "1", "50"); v.String() != "(integer) 0" {
			t.Errorf("WAIT 1 50: %s", v)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Errorf("WAIT 1 50 answered after %v", d)
		}

		for _, how := range []string{"", "TIMEOUT", "ERROR"} {
			for _, proto := range []int{2, 3} {
				c := dialRaw(t, addr)
				if proto == 3 {
					c.do("HELLO", "3")
				}
				id := c.do("CLIENT", "ID").Int
				c.send("WAIT", "2", "0")
				zsetWaitBlocked(t, admin, base+1)
				args := []any{"CLIENT", "UNBLOCK", id}
				want := "(integer) 0"
				if how != "" {
					args = append(args, how)
				}
				if how == "ERROR" {
					want = "(error) UNBLOCKED client unblocked via CLIENT UNBLOCK"
				}
				if n, err := admin.Do(ctx, args...).Int(); n != 1 || err != nil {
					t.Fatalf("CLIENT UNBLOCK %d %s: %d %v", id, how, n, err)
				}
				if v := c.read(); v.String() != want {
					t.Errorf("RESP%d WAIT unblocked %q: %s, want %s", proto, how, v, want)
				}
				if v := c.do("PING"); v.String() != "+PONG" {
					t.Errorf("PING after WAIT: %s", v)
				}
			}
		}

		gone := dialRaw(t, addr)
		gone.send("WAIT", "1", "0")
		zsetWaitBlocked(t, admin, base+1)
		gone.conn.Close()
		zsetWaitBlocked(t, admin, base)
	})
}

// TestWaitTimeoutOnManualClock: WAIT's timeout is a scheduler entry on the
// engine's clock, so it ends when the clock passes it and not before.
func TestWaitTimeoutOnManualClock(t *testing.T) {
	clock := engine.NewManualClock(time.UnixMilli(1_700_000_000_000))
	srv := startServer(t, func(c *server.Config) { c.Clock = clock })
	c := dialRaw(t, srv.Addr())
	c.send("WAIT", "3", "1000")
	c.send("PING")
	admin := goRedis(t, srv.Addr(), 2)
	zsetWaitBlocked(t, admin, 1)
	clock.Advance(999 * time.Millisecond)
	srv.RunTimers()
	if n := zsetBlockedClients(t, admin); n != 1 {
		t.Fatalf("blocked clients after 999 ms: %d", n)
	}
	clock.Advance(time.Millisecond)
	srv.RunTimers()
	if v := c.read(); v.String() != "(integer) 0" {
		t.Errorf("WAIT 3 1000 after 1000 ms: %s", v)
	}
	if v := c.read(); v.String() != "+PONG" {
		t.Errorf("PING after WAIT: %s", v)
	}
}

// TestBgrewriteaofCheckpoints: BGREWRITEAOF starts the checkpoint that
// compacts the change log; INFO counts it and reports it running until it
// ends. The data written before it survives a restart.
func TestBgrewriteaofCheckpoints(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	c := dialRaw(t, srv.Addr())
	c.do("SET", "k", "v")
	if v := c.do("BGREWRITEAOF"); v.String() != "+Background append only file rewriting started" {
		t.Fatalf("BGREWRITEAOF: %s", v)
	}
	waitFor(t, 10*time.Second, "the rewrite to finish", func() bool {
		_, f := info(t, c, "persistence")
		return f["aof_rewrite_in_progress"] == "0" && f["rdb_bgsave_in_progress"] == "0"
	})
	// As in Redis, a rewrite is not a save: the change count stays, and
	// the rewrite is timed in whole seconds between its start and end
	// (time(NULL) differences), so one that straddles a second shows 1.
	_, f := info(t, c, "persistence")
	if f["aof_rewrites"] != "1" || f["aof_last_bgrewrite_status"] != "ok" || f["rdb_changes_since_last_save"] != "1" ||
		(f["aof_last_rewrite_time_sec"] != "0" && f["aof_last_rewrite_time_sec"] != "1") {
		t.Errorf("INFO persistence after BGREWRITEAOF: %v", f)
	}
	srv.Close()
	srv = startServer(t, withPersistence(dir))
	if v := dialRaw(t, srv.Addr()).do("GET", "k"); v.String() != `"v"` {
		t.Errorf("GET k after restart: %s", v)
	}

	// Without persistence there is nothing to compact: Redis without AOF
	// answers the same and counts the rewrite.
	mem := dialRaw(t, startServer(t).Addr())
	if v := mem.do("BGREWRITEAOF"); v.String() != "+Background append only file rewriting started" {
		t.Fatalf("BGREWRITEAOF without persistence: %s", v)
	}
	if _, f := info(t, mem, "persistence"); f["aof_rewrites"] != "1" || f["aof_rewrite_in_progress"] != "0" {
		t.Errorf("INFO persistence without persistence: %v", f)
	}
}
