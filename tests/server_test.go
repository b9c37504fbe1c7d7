package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// TestShutdown: SHUTDOWN NOSAVE stops the server without a reply, after
// the argument errors that change nothing.
func TestShutdown(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	for _, args := range [][]string{{"SHUTDOWN", "bogus"}, {"SHUTDOWN", "SAVE", "NOSAVE"}, {"SHUTDOWN", "ABORT", "NOW"}} {
		if v := c.do(args...); v.Str != "ERR syntax error" {
			t.Errorf("%v: %s", args, v)
		}
	}
	if v := c.do("SHUTDOWN", "ABORT"); v.Str != "ERR No shutdown in progress." {
		t.Errorf("SHUTDOWN ABORT: %s", v)
	}
	other := dialRaw(t, srv.Addr())
	other.do("PING")
	c.send("SHUTDOWN", "NOSAVE", "NOW")
	expectClosed(t, c, "SHUTDOWN")
	expectClosed(t, other, "another client at SHUTDOWN")
	select {
	case <-srv.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop after SHUTDOWN")
	}
}

// TestSlowlogMatchesRedis logs every command and compares SLOWLOG GET with
// redis-server's, times and addresses aside: arguments (truncated and
// redacted as Redis does), client names, order, the entries' shape.
func TestSlowlogMatchesRedis(t *testing.T) {
	redisAddr := realRedis(t)
	srv := startServer(t)
	many := []string{"DEL"}
	for i := 0; i < 40; i++ {
		many = append(many, "key"+strconv.Itoa(i))
	}
	long := strings.Repeat("x", 200)
	var got []string
	for _, addr := range []string{redisAddr, srv.Addr()} {
		admin := dialRaw(t, addr)
		admin.do("CONFIG", "SET", "slowlog-log-slower-than", "0")
		defer admin.do("CONFIG", "SET", "slowlog-log-slower-than", "10000")
		admin.do("SLOWLOG", "RESET")
		c := dialRaw(t, addr)
		c.do("CLIENT", "SETNAME", "slowpoke")
		c.do("SET", "k", long)
		c.do(many...)
		c.do("AUTH", "default", "secret")
		c.do("CONFIG", "SET", "requirepass", "", "maxmemory", "0")
		c.do("GET", "k")
		v := c.do("SLOWLOG", "GET", "6")
		if n := c.do("SLOWLOG", "LEN"); n.Int < 7 {
			t.Errorf("%s: SLOWLOG LEN %d", addr, n.Int)
		}
		var b strings.Builder
		for i, e := range v.Elems {
			if len(e.Elems) != 6 || e.Elems[0].Kind != resp.KindInt || e.Elems[1].Kind != resp.KindInt ||
				e.Elems[2].Kind != resp.KindInt || e.Elems[3].Kind != resp.KindArray || e.Elems[4].Kind != resp.KindBulk ||
				e.Elems[5].Kind != resp.KindBulk {
				t.Fatalf("%s: slowlog entry %s", addr, e)
			}
			if i > 0 && e.Elems[0].Int >= v.Elems[i-1].Elems[0].Int {
				t.Errorf("%s: entries not newest first: %s", addr, v)
			}
			if time.Since(time.Unix(e.Elems[1].Int, 0)) > time.Minute || !strings.HasPrefix(e.Elems[4].Str, "127.0.0.1:") {
				t.Errorf("%s: entry time or address: %s", addr, e)
			}
			b.WriteString(e.Elems[3].String() + " name=" + e.Elems[5].Str + "\n")
		}
		got = append(got, b.String())
	}
	if got[0] != got[1] {
		t.Errorf("SLOWLOG GET\n redis:\n%s\n revolver:\n%s", got[0], got[1])
	}
}

// TestSaveBgsaveLastsave with persistence on: SAVE and BGSAVE checkpoint,
// LASTSAVE and INFO persistence follow.
func TestSaveBgsaveLastsave(t *testing.T) {
	srv := startServer(t, withPersistence(t.TempDir()))
	c := dialRaw(t, srv.Addr())
	c.do("SET", "k", "v")
	first := c.do("LASTSAVE")
	if first.Kind != resp.KindInt || time.Since(time.Unix(first.Int, 0)) > time.Minute {
		t.Fatalf("LASTSAVE: %s", first)
	}
	if v := c.do("SAVE"); v.Kind != resp.KindSimple || v.Str != "OK" {
		t.Fatalf("SAVE: %s", v)
	}
	if v := c.do("LASTSAVE"); v.Int < first.Int {
		t.Errorf("LASTSAVE went back: %d then %d", first.Int, v.Int)
	}
	if v := c.do("BGSAVE"); v.Kind != resp.KindSimple || v.Str != "Background saving started" {
		t.Fatalf("BGSAVE: %s", v)
	}
	waitFor(t, 10*time.Second, "the background save to finish", func() bool {
		_, f := info(t, c, "persistence")
		return f["rdb_bgsave_in_progress"] == "0" && f["rdb_last_bgsave_status"] == "ok"
	})
	_, f := info(t, c, "persistence")
	if f["rdb_changes_since_last_save"] != "0" || f["aof_enabled"] != "1" {
		t.Errorf("INFO persistence after saving: %v", f)
	}
	if v := c.do("SAVE", "x"); v.Str != "ERR wrong number of arguments for 'save' command" {
		t.Errorf("SAVE x: %s", v)
	}
}
