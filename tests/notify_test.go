package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Keyspace notifications of the string and generic families. Each case
// lists the events its commands must publish, as "event key" (or
// "event@db key" outside database 0), in order; every event is expected on
// both its __keyspace@ and its __keyevent@ channel, keyspace first. The
// same cases run against Revolver and, when it is installed, against a real
// redis-server, so the expectations are Redis's own.

type notifyCase struct {
	name  string
	setup []string // run first; their events are discarded
	cmds  []string // the commands whose events are checked
	want  []string
}

// A case's commands are written as redis-cli lines (see splitCommandLine).
var notifyCasesKEA = []notifyCase{
	{name: "set", cmds: []string{"SET k v"}, want: []string{"set k"}},
	{name: "set-ex", cmds: []string{"SET k v EX 100"}, want: []string{"set k", "expire k"}},
	{name: "set-pxat", cmds: []string{"SET k v PXAT 4102444800000"}, want: []string{"set k", "expire k"}},
	{name: "set-keepttl", setup: []string{"SET k v EX 100"}, cmds: []string{"SET k w KEEPTTL"}, want: []string{"set k"}},
	{name: "set-get", setup: []string{"SET k v"}, cmds: []string{"SET k w GET"}, want: []string{"set k"}},
	{name: "set-nx-blocked", setup: []string{"SET k v"}, cmds: []string{"SET k w NX", "SET k w NX GET"}},
	{name: "set-xx-blocked", cmds: []string{"SET k w XX", "SET k w XX EX 10"}},
	{name: "set-bad-expire", cmds: []string{"SET k v EX 0", "SET k v EX abc", "SET k v NX XX"}},
	{name: "setnx", setup: []string{"SET old v"}, cmds: []string{"SETNX k v", "SETNX old v"}, want: []string{"set k"}},
	{name: "setex", cmds: []string{"SETEX k 100 v"}, want: []string{"set k", "expire k"}},
	{name: "psetex", cmds: []string{"PSETEX k 100000 v"}, want: []string{"set k", "expire k"}},
	{name: "getset", setup: []string{"SET k v EX 100"}, cmds: []string{"GETSET k w", "GETSET new w"},
		want: []string{"set k", "set new"}},
	{name: "getdel", setup: []string{"SET k v"}, cmds: []string{"GETDEL k", "GETDEL k"}, want: []string{"del k"}},
	{name: "getex", setup: []string{"SET k v"},
		cmds: []string{"GETEX k", "GETEX k PERSIST", "GETEX k EX 100", "GETEX k PERSIST", "GETEX k PXAT 4102444800000",
			"GETEX nosuch EX 10", "GETEX k EX 0", "GETEX k EXAT 1"},
		want: []string{"expire k", "persist k", "expire k", "del k"}},
	{name: "mset", cmds: []string{"MSET a 1 b 2 a 3"}, want: []string{"set a", "set b", "set a"}},
	{name: "msetnx", setup: []string{"SET c v"}, cmds: []string{"MSETNX a 1 b 2", "MSETNX a 1 c 2"},
		want: []string{"set a", "set b"}},
	{name: "incr", setup: []string{"SET s abc"},
		cmds: []string{"INCR n", "DECR n", "INCRBY n 5", "DECRBY n 5", "INCR s", "INCRBY n abc"},
		want: []string{"incrby n", "incrby n", "incrby n", "incrby n"}},
	{name: "incr-overflow", setup: []string{"SET n 9223372036854775807"}, cmds: []string{"INCR n"}},
	{name: "incrbyfloat", setup: []string{"SET s abc"},
		cmds: []string{"INCRBYFLOAT f 1.5", "INCRBYFLOAT f abc", "INCRBYFLOAT s 1", "INCRBYFLOAT f inf"},
		want: []string{"incrbyfloat f"}},
	{name: "append", cmds: []string{"APPEND k abc", "APPEND k def", "APPEND k \"\""},
		want: []string{"append k", "append k", "append k"}},
	{name: "setrange", setup: []string{"SET k hello"},
		cmds: []string{"SETRANGE k 1 a", "SETRANGE k 1 \"\"", "SETRANGE new 2 x", "SETRANGE none 2 \"\"", "SETRANGE k -1 x"},
		want: []string{"setrange k", "setrange new"}},
	{name: "setbit", cmds: []string{"SETBIT k 7 1", "SETBIT k 7 1", "SETBIT k 7 0", "SETBIT k 7 0", "SETBIT k 100 0"},
		want: []string{"setbit k", "setbit k", "setbit k"}},
	{name: "del", setup: []string{"MSET a 1 b 2"}, cmds: []string{"DEL a nosuch b", "DEL a"},
		want: []string{"del a", "del b"}},
	{name: "unlink", setup: []string{"MSET a 1 b 2"}, cmds: []string{"UNLINK b a nosuch"},
		want: []string{"del b", "del a"}},
	{name: "rename", setup: []string{"SET src v EX 100", "SET dst old"},
		cmds: []string{"RENAME src dst", "RENAME dst dst", "RENAME nosuch x"},
		want: []string{"rename_from src", "rename_to dst"}},
	{name: "renamenx", setup: []string{"MSET a 1 b 2"},
		cmds: []string{"RENAMENX a b", "RENAMENX a c"},
		want: []string{"rename_from a", "rename_to c"}},
	{name: "copy", setup: []string{"SET src v EX 100", "SET taken v"},
		cmds: []string{"COPY src dst", "COPY src taken", "COPY src taken REPLACE", "COPY src dst DB 1", "COPY nosuch x"},
		want: []string{"copy_to dst", "copy_to taken", "copy_to@1 dst"}},
	{name: "move", setup: []string{"SET k v EX 100", "SET busy v", "SELECT 1", "SET busy other", "SELECT 0"},
		cmds: []string{"MOVE k 1", "MOVE busy 1", "MOVE nosuch 1"},
		want: []string{"move_from k", "move_to@1 k"}},
	{name: "expire", setup: []string{"SET k v"},
		cmds: []string{"EXPIRE k 100", "PEXPIRE k 100000", "EXPIREAT k 4102444800", "PEXPIREAT k 4102444800000",
			"EXPIRE k 100 NX", "EXPIRE k 10 GT", "EXPIRE nosuch 10", "EXPIRE k abc"},
		want: []string{"expire k", "expire k", "expire k", "expire k"}},
	{name: "expire-past", setup: []string{"MSET a 1 b 2 c 3 d 4"},
		cmds: []string{"EXPIRE a 0", "PEXPIRE b -1", "EXPIREAT c 1", "PEXPIREAT d 1"},
		want: []string{"del a", "del b", "del c", "del d"}},
	{name: "persist", setup: []string{"SET k v EX 100", "SET plain v"},
		cmds: []string{"PERSIST k", "PERSIST k", "PERSIST plain", "PERSIST nosuch"},
		want: []string{"persist k"}},
	{name: "flush-touch", setup: []string{"MSET a 1 b 2", "SELECT 1", "SET c 3", "SELECT 0"},
		cmds: []string{"TOUCH a b", "FLUSHDB", "FLUSHALL"}},
	// One key per case: Redis's expiry cycle visits several keys in hash
	// order, so only a single key gives a deterministic event order.
	{name: "lazy-expire-read", cmds: []string{"SET k v PX 20", "DEBUG SLEEP 0.05", "GET k", "SET k again"},
		want: []string{"set k", "expire k", "expired k", "set k"}},
	{name: "lazy-expire-write", cmds: []string{"SET k 1 PX 20", "DEBUG SLEEP 0.05", "INCR k"},
		want: []string{"set k", "expire k", "expired k", "incrby k"}},
}

// With class n, key creation is announced before the command's own event.
var notifyCasesNew = []notifyCase{
	{name: "new-set", setup: []string{"SET old v"},
		cmds: []string{"SET k v", "SET old w", "SET k2 v EX 100"},
		want: []string{"new k", "set k", "set old", "new k2", "set k2", "expire k2"}},
	{name: "new-writers", setup: []string{"SET s v"},
		cmds: []string{"INCR i", "INCRBYFLOAT f 1", "APPEND a x", "SETRANGE r 1 x", "SETBIT b 1 1",
			"GETSET g v", "SETNX n v", "MSET m1 v s w", "MSETNX x1 v x2 v", "SETEX e 10 v"},
		want: []string{"new i", "incrby i", "new f", "incrbyfloat f", "new a", "append a", "new r", "setrange r",
			"new b", "setbit b", "new g", "set g", "new n", "set n", "new m1", "set m1", "set s",
			"new x1", "set x1", "new x2", "set x2", "new e", "set e", "expire e"}},
	{name: "new-rename-copy-move", setup: []string{"SET a v", "SET b v", "SET c v", "SET taken v"},
		cmds: []string{"RENAME a a2", "RENAME b taken", "COPY c c2", "COPY c c2 REPLACE", "MOVE c 3"},
		want: []string{"new a2", "rename_from a", "rename_to a2", "new taken", "rename_from b", "rename_to taken",
			"new c2", "copy_to c2", "new c2", "copy_to c2", "new@3 c", "move_from c", "move_to@3 c"}},
	{name: "new-after-expiry", cmds: []string{"SET k v PX 20", "DEBUG SLEEP 0.05", "SET k v"},
		want: []string{"new k", "set k", "expire k", "expired k", "new k", "set k"}},
}

// notifyConn is one server seen through two go-redis connections: one
// issuing commands, one subscribed to every channel.
type notifyConn struct {
	t   *testing.T
	cmd *redis.Client
	sub *redis.PubSub
}

const notifySentinel = "notify-test:sentinel"

func newNotifyConn(t *testing.T, addr, flags string) *notifyConn {
	t.Helper()
	n := &notifyConn{t: t, cmd: goRedis(t, addr, 3)}
	n.run("CONFIG SET notify-keyspace-events " + flags)
	t.Cleanup(func() { n.cmd.ConfigSet(context.Background(), "notify-keyspace-events", "") })
	n.sub = goRedis(t, addr, 3).PSubscribe(ctx, "*")
	t.Cleanup(func() { n.sub.Close() })
	if _, err := n.sub.Receive(ctx); err != nil {
		t.Fatalf("psubscribe: %v", err)
	}
	return n
}

// run sends one redis-cli style line; error replies are fine (several cases
// check that failing commands announce nothing).
func (n *notifyConn) run(line string) {
	n.t.Helper()
	args, err := splitCommandLine(line)
	if err != nil {
		n.t.Fatal(err)
	}
	cmdArgs := make([]any, len(args))
	for i, a := range args {
		cmdArgs[i] = a
	}
	if err := n.cmd.Do(ctx, cmdArgs...).Err(); err != nil && err != redis.Nil && !isRedisError(err) {
		n.t.Fatalf("%s: %v", line, err)
	}
}

func isRedisError(err error) bool {
	_, ok := err.(redis.Error)
	return ok
}

// drain publishes the sentinel and returns every message received before
// it, as "channel payload".
func (n *notifyConn) drain() []string {
	n.t.Helper()
	if err := n.cmd.Publish(ctx, notifySentinel, "x").Err(); err != nil {
		n.t.Fatal(err)
	}
	var got []string
	for {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := n.sub.ReceiveMessage(c)
		cancel()
		if err != nil {
			n.t.Fatalf("waiting for notifications: %v (so far %q)", err, got)
		}
		if m.Channel == notifySentinel {
			return got
		}
		got = append(got, m.Channel+" "+m.Payload)
	}
}

// expand turns "event key" / "event@db key" into the keyspace and keyevent
// messages Redis publishes for it.
func expand(want []string) []string {
	var out []string
	for _, w := range want {
		ev, key, _ := strings.Cut(w, " ")
		db := "0"
		if e, d, ok := strings.Cut(ev, "@"); ok {
			ev, db = e, d
		}
		out = append(out, fmt.Sprintf("__keyspace@%s__:%s %s", db, key, ev),
			fmt.Sprintf("__keyevent@%s__:%s %s", db, ev, key))
	}
	return out
}

func runNotifyCases(t *testing.T, addr, flags string, cases []notifyCase) {
	n := newNotifyConn(t, addr, flags)
	for _, tc := range cases {
		n.run("SELECT 0")
		n.run("FLUSHALL")
		for _, l := range tc.setup {
			n.run(l)
		}
		n.drain()
		for _, l := range tc.cmds {
			n.run(l)
		}
		got, want := n.drain(), expand(tc.want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %q\n got: %q\nwant: %q", tc.name, tc.cmds, got, want)
		}
	}
	n.run("SELECT 0")
	n.run("FLUSHALL")
}

// bothServers are the servers a differential test runs on: a fresh Revolver
// for each test, and the redis-server the test binary shares (realRedis
// skips that subtest when there is none, or fails it under
// REVOLVER_REQUIRE_REDIS=1).
var bothServers = []struct {
	name string
	addr func(t *testing.T) string
}{
	{"revolver", func(t *testing.T) string { return startServer(t).Addr() }},
	{"redis", func(t *testing.T) string { return realRedis(t) }},
}

// onBothServers runs f on each of bothServers, as a subtest named after it.
func onBothServers(t *testing.T, f func(t *testing.T, addr string)) {
	for _, s := range bothServers {
		t.Run(s.name, func(t *testing.T) { f(t, s.addr(t)) })
	}
}

// testNotifyCases checks a family's cases on both servers: kea with
// notify-keyspace-events KEA, keaN with KEAn (class n announces new keys).
func testNotifyCases(t *testing.T, kea, keaN []notifyCase) {
	onBothServers(t, func(t *testing.T, addr string) { runNotifySuites(t, addr, kea, keaN) })
}

func runNotifySuites(t *testing.T, addr string, kea, keaN []notifyCase) {
	t.Run("KEA", func(t *testing.T) { runNotifyCases(t, addr, "KEA", kea) })
	t.Run("KEAn", func(t *testing.T) { runNotifyCases(t, addr, "KEAn", keaN) })
}

// TestKeyspaceNotifications checks the events of every string and keyspace
// write command, on Revolver and on redis-server.
func TestKeyspaceNotifications(t *testing.T) {
	testNotifyCases(t, notifyCasesKEA, notifyCasesNew)
}

// TestExpiredNotificationUntouched: a key with a short TTL that nobody
// touches is announced as expired by the server itself (Revolver's
// scheduler; Redis's active expiry cycle), and is gone afterwards.
func TestExpiredNotificationUntouched(t *testing.T) {
	// How late the event may be: Revolver fires at the deadline; Redis
	// samples volatile keys ten times a second.
	lateness := map[string]time.Duration{"revolver": 500 * time.Millisecond, "redis": 3 * time.Second}
	for _, s := range bothServers {
		t.Run(s.name, func(t *testing.T) {
			within := lateness[s.name]
			n := newNotifyConn(t, s.addr(t), "KEA")
			n.run("FLUSHALL")
			n.run("SET other v")
			n.run("SET k v PX 50")
			start := time.Now()
			want := expand([]string{"set other", "set k", "expire k", "expired k"})
			var got []string
			for len(got) < len(want) {
				c, cancel := context.WithTimeout(ctx, within+time.Second)
				m, err := n.sub.ReceiveMessage(c)
				cancel()
				if err != nil {
					t.Fatalf("waiting for the expired event: %v (got %q)", err, got)
				}
				got = append(got, m.Channel+" "+m.Payload)
			}
			late := time.Since(start)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("got %q\nwant %q", got, want)
			}
			if late < 45*time.Millisecond || late > within {
				t.Errorf("expired event after %v, want between 50ms and %v", late, within)
			}
			if v := n.cmd.DBSize(ctx).Val(); v != 1 {
				t.Errorf("dbsize = %d after expiry, want 1", v)
			}
			n.run("FLUSHALL")
		})
	}
}
