package tests

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/resp"
)

// DELAY keys among the rest of the keyspace: key commands, keyspace events,
// COMMAND DOCS, and what survives a restart or a kill -9.

func rawString(v resp.Value) string {
	switch v.Kind {
	case resp.KindArray:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = rawString(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case resp.KindNull:
		return "nil"
	case resp.KindInt:
		return strconv.FormatInt(v.Int, 10)
	default:
		return v.Str
	}
}

// TestDelayKeyCommands: a DELAY key is a key like any other to TYPE,
// OBJECT ENCODING, SCAN TYPE, MEMORY USAGE, RENAME, COPY, MOVE, EXPIRE and
// DEL, and its timers still wake blocked clients under its new name.
func TestDelayKeyCommands(t *testing.T) {
	srv := startServer(t)
	forProtocols(t, func(t *testing.T, proto int) {
		c := delayClient(t, srv.Addr(), proto)
		c.FlushAll(ctx)
		dInt(t, c, "DELAY.ADD", "q", "a", "IN", 100000, "PAYLOAD", "xyz")
		c.Set(ctx, "s", "v", 0)
		c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "m"})
		if typ := c.Type(ctx, "q").Val(); typ != "delay" {
			t.Errorf("TYPE %q", typ)
		}
		if enc := c.ObjectEncoding(ctx, "q").Val(); enc != "timerindex" {
			t.Errorf("OBJECT ENCODING %q", enc)
		}
		if keys, _, err := c.ScanType(ctx, 0, "*", 100, "delay").Result(); err != nil || !slices.Equal(keys, []string{"q"}) {
			t.Errorf("SCAN TYPE delay: %v %v", keys, err)
		}
		small := c.MemoryUsage(ctx, "q").Val()
		args := []any{"DELAY.ADD", "big", "", "IN", 100000, "PAYLOAD", strings.Repeat("p", 1000)}
		for i := 0; i < 100; i++ {
			args[2] = fmt.Sprintf("member-%d", i)
			dInt(t, c, args...)
		}
		if big := c.MemoryUsage(ctx, "big").Val(); small <= 0 || big < small+100*1000 {
			t.Errorf("MEMORY USAGE: %d for one timer, %d for 100 with 1000-byte payloads", small, big)
		}
		c.Del(ctx, "big")

		// RENAME: the blocked client on the new name is woken at the due
		// time of a timer added under the old one.
		dInt(t, c, "DELAY.ADD", "q", "soon", "IN", 150)
		waiter := delayClient(t, srv.Addr(), proto)
		ch := goPop(waiter, "q2", "BLOCK", 5000)
		zsetWaitBlocked(t, c, 1)
		if err := c.Rename(ctx, "q", "q2").Err(); err != nil {
			t.Fatal(err)
		}
		r := recvPop(t, ch)
		if r.err != nil || len(r.fired) != 1 || r.fired[0].member != "soon" || r.at.UnixMilli() < r.fired[0].due {
			t.Errorf("blocked on the new name: %s %v", firedString(r.fired), r.err)
		}
		if n := c.Exists(ctx, "q").Val(); n != 0 {
			t.Error("RENAME left the old name")
		}
		// A due timer renamed onto a waited-for name is delivered at once.
		dInt(t, c, "DELAY.ADD", "src", "due", "AT", 1)
		ch = goPop(waiter, "dst", "BLOCK", 5000)
		zsetWaitBlocked(t, c, 1)
		c.Rename(ctx, "src", "dst")
		if r = recvPop(t, ch); firedString(r.fired) != "[due nil 1 1]" {
			t.Errorf("renamed onto a waiter: %s %v", firedString(r.fired), r.err)
		}

		// COPY: an independent copy, leases included.
		dInt(t, c, "DELAY.ADD", "q2", "l", "AT", 5)
		mustPop(t, c, "q2", "LEASE", 100000)
		if n := c.Copy(ctx, "q2", "q3", 0, false).Val(); n != 1 {
			t.Fatalf("COPY: %d", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q3", "l"); n != 1 {
			t.Errorf("the copy lost the lease: ACK %d", n)
		}
		if cp, orig := dRange(t, c, "q3", "-inf", "+inf"), dRange(t, c, "q2", "-inf", "+inf"); strings.Contains(cp, "l:") ||
			!strings.Contains(orig, "l:") {
			t.Errorf("after ACK on the copy: copy %q, original %q", cp, orig)
		}
		dInt(t, c, "DELAY.CANCEL", "q3", "a")
		if n := dInt(t, c, "DELAY.LEN", "q2"); n != 2 {
			t.Errorf("changing the copy changed the original: LEN %d", n)
		}

		// MOVE: a client blocked in the target database is woken.
		db1 := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: proto, DisableIdentity: proto == 2, DB: 1,
			ReadTimeout: 15 * time.Second})
		defer db1.Close()
		db1.Del(ctx, "q3")
		dInt(t, c, "DELAY.ADD", "q3", "moved", "IN", 120)
		ch = goPop(db1, "q3", "BLOCK", 5000)
		zsetWaitBlocked(t, c, 1)
		if !c.Move(ctx, "q3", 1).Val() {
			t.Fatal("MOVE failed")
		}
		if r = recvPop(t, ch); r.err != nil || len(r.fired) != 1 || r.fired[0].member != "moved" {
			t.Errorf("blocked in the target database: %s %v", firedString(r.fired), r.err)
		}

		// EXPIRE on the key itself; the key and its timers go together.
		if !c.PExpire(ctx, "q2", 100*time.Millisecond).Val() {
			t.Fatal("PEXPIRE failed")
		}
		waitFor(t, 5*time.Second, "the DELAY key to expire", func() bool { return c.Exists(ctx, "q2").Val() == 0 })
		if n := dInt(t, c, "DELAY.TTL", "q2", "a"); n != -2 {
			t.Errorf("a timer outlived its expired key: TTL %d", n)
		}
		dInt(t, c, "DELAY.ADD", "d", "a", "IN", 1000)
		if n := c.Del(ctx, "d").Val(); n != 1 {
			t.Errorf("DEL: %d", n)
		}
	})
}

// notifyCasesDelay: the events of the DELAY family (class d), with "del"
// (class g) when a command empties a key.
var notifyCasesDelay = []notifyCase{
	{name: "add", setup: []string{"SET str v"},
		cmds: []string{"DELAY.ADD q a IN 100000", "DELAY.ADD q a IN 100000 PAYLOAD x", "DELAY.ADD q a IN 5 NX",
			"DELAY.ADD q b IN 5 XX", "DELAY.ADD q b IN -1", "DELAY.ADD str a IN 5", "DELAY.ADD q b AT 1 EVERY 10 NX"},
		want: []string{"delay.add q", "delay.add q", "delay.add q"}},
	{name: "touch", setup: []string{"DELAY.ADD q a IN 100000"},
		cmds: []string{"DELAY.TOUCH q a 5", "DELAY.TOUCH q nosuch 5", "DELAY.TOUCH nokey a 5", "DELAY.TOUCH q a -1"},
		want: []string{"delay.touch q"}},
	{name: "cancel", setup: []string{"DELAY.ADD q a IN 100000", "DELAY.ADD q b IN 100000"},
		cmds: []string{"DELAY.CANCEL q nosuch", "DELAY.CANCEL q a", "DELAY.CANCEL nokey a", "DELAY.CANCEL q b a"},
		want: []string{"delay.cancel q", "delay.cancel q", "del q"}},
	{name: "pop-ack", setup: []string{"DELAY.ADD q a AT 1", "DELAY.ADD q b AT 2", "DELAY.ADD q c IN 100000"},
		cmds: []string{"DELAY.POP q", "DELAY.POP q LEASE 100000", "DELAY.POP q", "DELAY.POP nokey",
			"DELAY.ACK q b", "DELAY.ACK q b", "DELAY.ACK q c", "DELAY.CANCEL q c"},
		want: []string{"delay.pop q", "delay.pop q", "delay.ack q", "delay.cancel q", "del q"}},
	{name: "pop-empties", setup: []string{"DELAY.ADD q a AT 1", "DELAY.ADD q b AT 1 EVERY 100000", "DELAY.ADD r a AT 1"},
		cmds: []string{"DELAY.POP q COUNT 5", "DELAY.POP q LEASE 1000", "DELAY.POP r LEASE 1000", "DELAY.ACK r a",
			"DELAY.POP q COUNT 5 BLOCK 10"},
		want: []string{"delay.pop q", "delay.pop r", "delay.ack r", "del r"}},
	{name: "generic", setup: []string{"DELAY.ADD q a IN 100000"},
		cmds: []string{"EXPIRE q 100", "RENAME q q2", "DEL q2"},
		want: []string{"expire q", "rename_from q", "rename_to q2", "del q2"}},
}

// TestDelayNotifications checks the keyspace events of every DELAY write,
// and that class d alone leaves out the generic "del".
func TestDelayNotifications(t *testing.T) {
	srv := startServer(t)
	t.Run("KEgd", func(t *testing.T) { runNotifyCases(t, srv.Addr(), "KEgd", notifyCasesDelay) })
	t.Run("KEd", func(t *testing.T) {
		runNotifyCases(t, srv.Addr(), "KEd", []notifyCase{{name: "class-d-only",
			setup: []string{"DELAY.ADD q a AT 1"},
			cmds:  []string{"DELAY.POP q", "DELAY.ADD r a IN 1000", "DELAY.CANCEL r a", "SET s v"},
			want:  []string{"delay.pop q", "delay.add r", "delay.cancel r"}}})
	})
	t.Run("blocked-pop", func(t *testing.T) {
		// A pop that serves a blocked client announces like a direct one.
		n := newNotifyConn(t, srv.Addr(), "KEgd")
		n.run("FLUSHALL")
		n.drain()
		c := delayClient(t, srv.Addr(), 2)
		ch := goPop(c, "q", "BLOCK", 5000)
		zsetWaitBlocked(t, n.cmd, 1)
		n.run("DELAY.ADD q a IN 30")
		if r := recvPop(t, ch); r.err != nil || len(r.fired) != 1 {
			t.Fatalf("blocked pop: %s %v", firedString(r.fired), r.err)
		}
		got, want := n.drain(), expand([]string{"delay.add q", "delay.pop q", "del q"})
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("events:\n got %q\nwant %q", got, want)
		}
	})
}

// TestDelayCommandDocs: COMMAND DOCS describes every DELAY command for
// redis-cli (summary, group "delay", the argument hint), and COMMAND
// GETKEYS finds the key.
func TestDelayCommandDocs(t *testing.T) {
	srv := startServer(t)
	hints := map[string]string{
		"delay.add":    "key member IN milliseconds|AT unix-time-milliseconds [EVERY period] [PAYLOAD data] [NX|XX]",
		"delay.touch":  "key member milliseconds",
		"delay.cancel": "key member [member ...]",
		"delay.ttl":    "key member",
		"delay.pop":    "key [COUNT count] [BLOCK milliseconds] [LEASE milliseconds]",
		"delay.ack":    "key member [member ...]",
		"delay.len":    "key",
		"delay.next":   "key",
		"delay.range":  "key from to [LIMIT offset count]",
	}
	for _, proto := range []int{2, 3} {
		c := dialRaw(t, srv.Addr())
		if proto == 3 {
			c.do("HELLO", "3")
		}
		names := []string{"COMMAND", "DOCS"}
		for name := range hints {
			names = append(names, name)
		}
		docs := parseCLIDocs(t, c.do(names...))
		for name, hint := range hints {
			h := docs[name]
			if h == nil {
				t.Errorf("RESP%d: COMMAND DOCS has no %s", proto, name)
				continue
			}
			if h.summary == "" || h.since == "" || h.group != "delay" || h.params != hint {
				t.Errorf("RESP%d %s: summary %q since %q group %q hint\n got %q\nwant %q", proto, name,
					h.summary, h.since, h.group, h.params, hint)
			}
		}
		v := c.do("COMMAND", "GETKEYS", "DELAY.ADD", "thekey", "m", "IN", "5", "PAYLOAD", "x")
		if rawString(v) != "[thekey]" {
			t.Errorf("COMMAND GETKEYS DELAY.ADD: %s", v)
		}
	}
}

// TestDelayRestart: timers, payloads (nil and empty), periods and leases
// survive a restart; what came due while the server was down is due at
// once, leases keep their deadlines and redeliver what they held, and a
// client blocked after the restart is woken at a persisted due time.
func TestDelayRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	c := delayClient(t, srv.Addr(), 3)
	now := time.Now().UnixMilli()
	dInt(t, c, "DELAY.ADD", "q", "once", "IN", 200, "PAYLOAD", "p1")
	dInt(t, c, "DELAY.ADD", "q", "later", "IN", 3600000, "PAYLOAD", "")
	dInt(t, c, "DELAY.ADD", "q", "nopay", "IN", 3600000)
	dInt(t, c, "DELAY.ADD", "q", "rec", "AT", now-250, "EVERY", 100, "PAYLOAD", "r")
	dInt(t, c, "DELAY.ADD", "q", "leased", "AT", 1000, "PAYLOAD", "L")
	if got := mustPop(t, c, "q", "LEASE", 60000); firedString(got) != `[leased "L" 1000 1]` {
		t.Fatalf("leased pop: %s", firedString(got))
	}
	// A recurring delivery whose lease runs out after the restart.
	dInt(t, c, "DELAY.ADD", "q2", "r2", "AT", now-1050, "EVERY", 1000, "PAYLOAD", "two")
	lost := mustPop(t, c, "q2", "LEASE", 400)
	if len(lost) != 1 || lost[0].fires != 2 {
		t.Fatalf("leased recurring pop: %s", firedString(lost))
	}
	dInt(t, c, "DELAY.ADD", "qs", "soon", "IN", 600)
	// The same timers in another database.
	db2 := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: 2})
	dInt(t, db2, "DELAY.ADD", "q", "other", "AT", 5, "EVERY", 7)
	db2.Close()
	before := dRange(t, c, "q", "-inf", "+inf")
	beforeSoon := dRange(t, c, "qs", "-inf", "+inf")
	srv.Close()
	time.Sleep(250 * time.Millisecond) // "once" comes due while the server is down

	srv2 := startServer(t, withPersistence(dir))
	c2 := delayClient(t, srv2.Addr(), 3)
	if after := dRange(t, c2, "q", "-inf", "+inf"); after != before {
		t.Errorf("timers after the restart:\n got %s\nwant %s", after, before)
	}
	if after := dRange(t, c2, "qs", "-inf", "+inf"); after != beforeSoon {
		t.Errorf("qs after the restart: %s, want %s", after, beforeSoon)
	}
	if typ, enc := c2.Type(ctx, "q").Val(), c2.ObjectEncoding(ctx, "q").Val(); typ != "delay" || enc != "timerindex" {
		t.Errorf("TYPE %q, OBJECT ENCODING %q after the restart", typ, enc)
	}
	// Due now: rec (from before) and once (came due while down); the
	// leased one is not, until its lease ends.
	got := mustPop(t, c2, "q", "COUNT", 10)
	if len(got) != 2 || got[0].member != "rec" || got[0].due != now-250 || got[0].fires < 5 ||
		got[0].payload == nil || *got[0].payload != "r" || got[1].member != "once" || got[1].payload == nil ||
		*got[1].payload != "p1" || got[1].fires != 1 {
		t.Errorf("due after the restart: %s", firedString(got))
	} else if due := dRange(t, c2, "q", 0, now+10000); !strings.Contains(due, fmt.Sprintf("rec:%d", now-250+got[0].fires*100)) {
		t.Errorf("rec re-armed at the wrong time (period lost?): %s", due)
	}
	// rec fires every 100 ms: out of the way, so that a slow machine does
	// not see it due again among the pops below.
	if n := dInt(t, c2, "DELAY.CANCEL", "q", "rec"); n != 1 {
		t.Errorf("DELAY.CANCEL rec: %d", n)
	}
	if ttl := dInt(t, c2, "DELAY.TTL", "q", "leased"); ttl < 50000 || ttl > 60000 {
		t.Errorf("lease TTL after the restart: %d", ttl)
	}
	if n := dInt(t, c2, "DELAY.ACK", "q", "leased"); n != 1 {
		t.Errorf("the lease did not survive: ACK %d", n)
	}
	dInt(t, c2, "DELAY.TOUCH", "q", "later", 0)
	dInt(t, c2, "DELAY.TOUCH", "q", "nopay", 0)
	got = mustPop(t, c2, "q", "COUNT", 2)
	if len(got) != 2 || got[0].member != "later" || got[0].payload == nil || *got[0].payload != "" ||
		got[1].member != "nopay" || got[1].payload != nil {
		t.Errorf("payloads after the restart: %s, want later with \"\" and nopay with nil", firedString(got))
	}
	// The lease taken before the restart runs out: the same delivery.
	r := mustPop(t, c2, "q2", "BLOCK", 5000)
	if firedString(r) != firedString(lost) {
		t.Errorf("redelivery after the restart: %s, want %s", firedString(r), firedString(lost))
	}
	// Blocked after the restart, woken at a due time set before it.
	r = mustPop(t, c2, "qs", "BLOCK", 5000)
	if len(r) != 1 || r[0].member != "soon" || time.Now().UnixMilli() < r[0].due {
		t.Errorf("qs after the restart: %s", firedString(r))
	}
	db2 = redis.NewClient(&redis.Options{Addr: srv2.Addr(), DB: 2})
	defer db2.Close()
	if got := mustPop(t, db2, "q"); len(got) != 1 || got[0].member != "other" || got[0].due != 5 {
		t.Errorf("database 2 after the restart: %s", firedString(got))
	}
}

// TestDelayKill9: what was acknowledged before a kill -9 is what the
// restarted server holds (ADD, a taken lease, an ACK, a CANCEL).
func TestDelayKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProcess(t, dir, "--appendfsync", "always")
	c := delayClient(t, p.addr, 2)
	for i := 0; i < 20; i++ {
		dInt(t, c, "DELAY.ADD", "q", fmt.Sprintf("m%02d", i), "AT", 1000+i, "EVERY", 3600000, "PAYLOAD", strconv.Itoa(i))
	}
	leased := mustPop(t, c, "q", "COUNT", 5, "LEASE", 3600000)
	dInt(t, c, "DELAY.ACK", "q", "m00", "m01")
	dInt(t, c, "DELAY.CANCEL", "q", "m19")
	want := dRange(t, c, "q", "-inf", "+inf")
	p.kill9(t)

	p2 := startProcess(t, dir, "--appendfsync", "always")
	c2 := delayClient(t, p2.addr, 2)
	if got := dRange(t, c2, "q", "-inf", "+inf"); got != want {
		t.Errorf("after kill -9:\n got %s\nwant %s", got, want)
	}
	if n := dInt(t, c2, "DELAY.ACK", "q", "m00", "m01", "m02", "m03", "m04"); n != 3 {
		t.Errorf("leases after kill -9: ACK %d, want 3 (m02..m04 of %s)", n, firedString(leased))
	}
	if n := dInt(t, c2, "DELAY.LEN", "q"); n != 19 {
		t.Errorf("LEN after kill -9: %d", n)
	}
}
