package tests

import (
	"crypto/sha1"
	"encoding/hex"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

const (
	busyEval     = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	busyFunction = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	unkillable   = "UNKILLABLE Sorry the script already executed write commands against the dataset. " +
		"You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	spinScript = "local i = 0 while true do i = i + 1 end"
	busyLib    = "#!lua name=busy\n" +
		"redis.register_function('spin', function() local i = 0 while true do i = i + 1 end end)\n" +
		"redis.register_function('dirty', function(keys) redis.call('set', keys[1], 'v') local i = 0 while true do i = i + 1 end end)\n"
)

// waitBusy sends PING until the server answers BUSY, and returns that
// reply: a script has run past busy-reply-threshold. Each PING goes on a
// connection of its own: with persistence, a PING the server happened to
// run in the same loop iteration as the script, before it, has its reply
// held until the script ends (the iteration's replies wait for its log
// commit), where Redis would send it. The callers' own connections stay
// out of that iteration.
func waitBusy(t *testing.T, addr string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(time.Second))
		var v resp.Value
		if _, err = conn.Write(encodeCommand([]string{"PING"})); err == nil {
			v, err = resp.NewReader(conn).Read()
		}
		conn.Close()
		if err == nil && strings.HasPrefix(v.Str, "BUSY") {
			return v.Str
		}
		if time.Now().After(deadline) {
			t.Fatalf("no BUSY: %v %v", v, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func expect(t *testing.T, c *rawConn, want string, args ...string) {
	t.Helper()
	if v := c.do(args...); v.Str != want {
		t.Fatalf("%q: %v, want %q", args, v, want)
	}
}

// TestBusyScriptKill: past busy-reply-threshold other clients get BUSY
// (the script's own loop serves them too), the commands allowed then
// behave as Redis's, and SCRIPT KILL or FUNCTION KILL stops a script
// that has not written; the server is usable afterwards.
func TestBusyScriptKill(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) { testBusyScriptKill(t, addr) })
	t.Run("revolver-io-threads-2", func(t *testing.T) {
		testBusyScriptKill(t, startServer(t, withConfig("io-threads", "2")).Addr())
	})
}

func testBusyScriptKill(t *testing.T, addr string) {
	admin := dialRaw(t, addr)
	expect(t, admin, "OK", "CONFIG", "SET", "lua-time-limit", "100")
	t.Cleanup(func() { dialRaw(t, addr).do("CONFIG", "SET", "busy-reply-threshold", "5000") })
	expect(t, admin, "NOTBUSY No scripts in execution right now.", "SCRIPT", "KILL")
	expect(t, admin, "NOTBUSY No scripts in execution right now.", "FUNCTION", "KILL")

	runner := dialRaw(t, addr)
	runner.send("EVAL", spinScript, "0")
	other := dialRaw(t, addr)
	if got := waitBusy(t, addr); got != busyEval {
		t.Fatalf("BUSY reply: %q", got)
	}
	expect(t, other, busyEval, "GET", "x")
	expect(t, other, busyEval, "FUNCTION", "KILL")
	expect(t, other, busyEval, "FUNCTION", "STATS")
	expect(t, other, busyEval, "SHUTDOWN")
	expect(t, other, "OK", "MULTI")
	expect(t, other, busyEval, "SET", "x", "1")
	late := dialRaw(t, addr) // a connection made while the script runs
	expect(t, late, busyEval, "PING")
	expect(t, admin, "OK", "SCRIPT", "KILL")
	sum := sha1.Sum([]byte(spinScript))
	want := "ERR Script killed by user with SCRIPT KILL... script: " + hex.EncodeToString(sum[:]) + ", on @user_script:1."
	if v := runner.read(); v.Str != want {
		t.Fatalf("killed script's reply: %v", v)
	}
	expect(t, other, "EXECABORT Transaction discarded because of previous errors.", "EXEC")
	expect(t, runner, "PONG", "PING")
	expect(t, late, "PONG", "PING")

	expect(t, admin, "busy", "FUNCTION", "LOAD", "REPLACE", busyLib)
	runner.send("FCALL", "spin", "0")
	if got := waitBusy(t, addr); got != busyFunction {
		t.Fatalf("BUSY reply: %q", got)
	}
	expect(t, other, busyFunction, "SCRIPT", "KILL")
	stats := other.do("FUNCTION", "STATS")
	if len(stats.Elems) != 4 || len(stats.Elems[1].Elems) != 6 || stats.Elems[1].Elems[1].Str != "spin" ||
		len(stats.Elems[1].Elems[3].Elems) != 3 || stats.Elems[1].Elems[3].Elems[1].Str != "spin" {
		t.Fatalf("FUNCTION STATS: %v", stats)
	}
	expect(t, other, "OK", "FUNCTION", "KILL")
	if v := runner.read(); v.Str != "ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2." {
		t.Fatalf("killed function's reply: %v", v)
	}
	expect(t, runner, "PONG", "PING")
	expect(t, admin, "OK", "FUNCTION", "DELETE", "busy")
}

// TestBusyUnkillableShutdown: a slow script that wrote cannot be killed;
// SHUTDOWN NOSAVE stops the server anyway, and what the script wrote is
// not kept (Redis propagates a script's writes when it ends).
func TestBusyUnkillableShutdown(t *testing.T) {
	t.Run("revolver", func(t *testing.T) {
		dir := t.TempDir()
		srv := startServer(t, withPersistence(dir), withConfig("busy-reply-threshold", "100"))
		testBusyUnkillable(t, srv.Addr())
		select {
		case <-srv.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not stop")
		}
		srv = startServer(t, withPersistence(dir))
		c := dialRaw(t, srv.Addr())
		expect(t, c, "kept", "GET", "before")
		if v := c.do("EXISTS", "dk"); v.Int != 0 {
			t.Fatalf("the killed script's write was kept: %v", v)
		}
		if v := c.do("FUNCTION", "LIST"); len(v.Elems) != 1 {
			t.Fatalf("libraries after SHUTDOWN NOSAVE: %v", v)
		}
	})
	t.Run("redis", func(t *testing.T) {
		realRedis(t)              // skips (or fails) without redis-server
		addr, err := spawnRedis() // its own: this test stops it
		if err != nil {
			t.Fatal(err)
		}
		dialRaw(t, addr).do("CONFIG", "SET", "busy-reply-threshold", "100")
		testBusyUnkillable(t, addr)
	})
}

func testBusyUnkillable(t *testing.T, addr string) {
	admin := dialRaw(t, addr)
	expect(t, admin, "OK", "SET", "before", "kept")
	expect(t, admin, "busy", "FUNCTION", "LOAD", busyLib)
	runner := dialRaw(t, addr)
	runner.send("FCALL", "dirty", "1", "dk")
	waitBusy(t, addr)
	expect(t, admin, unkillable, "FUNCTION", "KILL")
	expect(t, admin, unkillable, "SCRIPT", "KILL")
	expect(t, admin, busyFunction, "SHUTDOWN")
	admin.send("SHUTDOWN", "NOSAVE")
	admin.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if v, err := admin.rd.Read(); err == nil && v.Kind != resp.KindError {
		t.Fatalf("SHUTDOWN NOSAVE answered %v", v)
	}
}
