package tests

import (
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/resp"
)

// clientFields are CLIENT LIST's fields in Redis 7.0's order; lib-name and
// lib-ver follow, as in Redis 7.2.
var clientFields = []string{"id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub",
	"ssub", "multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem",
	"events", "cmd", "user", "redir", "resp", "lib-name", "lib-ver"}

// parseClientLine splits one CLIENT LIST line into its fields, checking
// their names and order.
func parseClientLine(t *testing.T, line string) map[string]string {
	t.Helper()
	parts := strings.Split(strings.TrimSpace(line), " ")
	if len(parts) != len(clientFields) {
		t.Fatalf("%d fields, want %d: %q", len(parts), len(clientFields), line)
	}
	out := map[string]string{}
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k != clientFields[i] {
			t.Fatalf("field %d is %q, want %s=...: %q", i, p, clientFields[i], line)
		}
		out[k] = v
	}
	return out
}

// clientLines parses CLIENT LIST output by id.
func clientLines(t *testing.T, text string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		f := parseClientLine(t, l)
		out[f["id"]] = f
	}
	return out
}

func TestClientListAndInfo(t *testing.T) {
	srv := startServer(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: proto, ClientName: "lister", DB: 3,
				PoolSize: 1})
			defer c.Close()
			id, err := c.ClientID(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			info, err := c.ClientInfo(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			if info.ID != id || info.Name != "lister" || info.DB != 3 || info.Resp != proto ||
				!strings.HasPrefix(info.LibName, "go-redis") || info.LibVer == "" || info.LastCmd != "client|info" {
				t.Errorf("CLIENT INFO as go-redis parses it: %+v", info)
			}
			raw, err := c.Do(ctx, "CLIENT", "INFO").Text()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(raw, "\n") {
				t.Errorf("CLIENT INFO must end with a newline: %q", raw)
			}
			f := parseClientLine(t, raw)
			if f["name"] != "lister" || f["db"] != "3" || f["resp"] != strconv.Itoa(proto) || f["flags"] != "N" ||
				f["cmd"] != "client|info" || f["user"] != "default" || f["laddr"] != srv.Addr() {
				t.Errorf("CLIENT INFO fields: %v", f)
			}
			other := dialRaw(t, srv.Addr())
			other.do("SUBSCRIBE", "x")
			list, err := c.ClientList(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			all := clientLines(t, list)
			me := all[strconv.FormatInt(id, 10)]
			if me == nil || me["name"] != "lister" || me["cmd"] != "client|list" {
				t.Errorf("own line: %v", me)
			}
			subs := 0
			for _, l := range all {
				if l["flags"] == "P" && l["sub"] == "1" && l["cmd"] == "subscribe" {
					subs++
				}
			}
			if subs != 1 {
				t.Errorf("expected one subscriber line with flags=P in\n%s", list)
			}
			byType, err := c.Do(ctx, "CLIENT", "LIST", "TYPE", "pubsub").Text()
			if err != nil || len(clientLines(t, byType)) != 1 {
				t.Errorf("CLIENT LIST TYPE pubsub: %v\n%s", err, byType)
			}
			byID, err := c.Do(ctx, "CLIENT", "LIST", "ID", id, 999999).Text()
			if err != nil || len(clientLines(t, byID)) != 1 || !strings.Contains(byID, "name=lister ") {
				t.Errorf("CLIENT LIST ID: %v\n%s", err, byID)
			}
			other.conn.Close()
		})
	}
}

// TestClientInfoFieldsMatchRedis checks that Redis's own CLIENT INFO has
// the same fields in the same order (Redis 7.0 stops before lib-name).
func TestClientInfoFieldsMatchRedis(t *testing.T) {
	redisAddr := realRedis(t)
	c := dialRaw(t, redisAddr)
	info := c.do("CLIENT", "INFO")
	var names []string
	for _, p := range strings.Fields(info.Str) {
		k, _, _ := strings.Cut(p, "=")
		names = append(names, k)
	}
	want := clientFields[:len(clientFields)-2]
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("redis-server CLIENT INFO fields:\n %v\nexpected\n %v", names, want)
	}
}

// expectClosed reads from a killed connection until the server closes it.
func expectClosed(t *testing.T, c *rawConn, what string) {
	t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c.conn); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Errorf("%s: waiting for the server to close the connection: %v", what, err)
	}
}

func clientID(t *testing.T, c *rawConn) string {
	t.Helper()
	return strconv.FormatInt(c.do("CLIENT", "ID").Int, 10)
}

func clientAddr(t *testing.T, c *rawConn) string {
	t.Helper()
	return parseClientLine(t, c.do("CLIENT", "INFO").Str)["addr"]
}

func TestClientKill(t *testing.T) {
	srv := startServer(t)
	admin := dialRaw(t, srv.Addr())

	victim := dialRaw(t, srv.Addr())
	if v := admin.do("CLIENT", "KILL", "ID", clientID(t, victim)); v.Int != 1 {
		t.Errorf("KILL ID: %s", v)
	}
	expectClosed(t, victim, "KILL ID")
	if v := admin.do("CLIENT", "KILL", "ID", "999999"); v.Int != 0 {
		t.Errorf("KILL ID of nobody: %s", v)
	}

	victim = dialRaw(t, srv.Addr())
	if v := admin.do("CLIENT", "KILL", "ADDR", clientAddr(t, victim)); v.Int != 1 {
		t.Errorf("KILL ADDR: %s", v)
	}
	expectClosed(t, victim, "KILL ADDR")

	victim = dialRaw(t, srv.Addr())
	if v := admin.do("CLIENT", "KILL", clientAddr(t, victim)); v.Kind != resp.KindSimple || v.Str != "OK" {
		t.Errorf("KILL addr (old form): %s", v)
	}
	expectClosed(t, victim, "KILL old form")
	if v := admin.do("CLIENT", "KILL", "127.0.0.1:1"); v.Str != "ERR No such client" {
		t.Errorf("KILL old form of nobody: %s", v)
	}

	sub := dialRaw(t, srv.Addr())
	sub.do("SUBSCRIBE", "ch")
	normal := dialRaw(t, srv.Addr())
	normal.do("PING")
	if v := admin.do("CLIENT", "KILL", "TYPE", "pubsub"); v.Int != 1 {
		t.Errorf("KILL TYPE pubsub: %s", v)
	}
	expectClosed(t, sub, "KILL TYPE pubsub")
	if v := normal.do("PING"); v.Str != "PONG" {
		t.Errorf("a normal client must survive KILL TYPE pubsub: %s", v)
	}

	// TYPE normal with the default SKIPME yes spares the caller.
	if v := admin.do("CLIENT", "KILL", "TYPE", "normal", "USER", "default"); v.Int != 1 {
		t.Errorf("KILL TYPE normal: %s", v)
	}
	expectClosed(t, normal, "KILL TYPE normal")
	if v := admin.do("PING"); v.Str != "PONG" {
		t.Errorf("SKIPME yes must spare the caller: %s", v)
	}

	// LADDR matches every connection to the listener.
	a, b := dialRaw(t, srv.Addr()), dialRaw(t, srv.Addr())
	a.do("PING")
	b.do("PING")
	if v := admin.do("CLIENT", "KILL", "LADDR", srv.Addr()); v.Int != 2 {
		t.Errorf("KILL LADDR: %s", v)
	}
	expectClosed(t, a, "KILL LADDR")
	expectClosed(t, b, "KILL LADDR")

	// SKIPME no kills the caller too, after its reply.
	if v := admin.do("CLIENT", "KILL", "ID", clientID(t, admin), "SKIPME", "no"); v.Int != 1 {
		t.Errorf("KILL self: %s", v)
	}
	expectClosed(t, admin, "KILL self")

	// The old form can kill its own connection.
	self := dialRaw(t, srv.Addr())
	if v := self.do("CLIENT", "KILL", clientAddr(t, self)); v.Str != "OK" {
		t.Errorf("KILL own addr: %s", v)
	}
	expectClosed(t, self, "KILL own addr")
}

// TestClientPause: PAUSE WRITE holds the commands that may write (PUBLISH
// too) but not reads; PAUSE ALL holds everything, CLIENT UNPAUSE from
// another client included, until its end; a pause in progress keeps the
// more restrictive type and the later end.
func TestClientPause(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		admin, worker := dialRaw(t, addr), dialRaw(t, addr)
		admin.do("SET", "k", "v")
		// timed runs a command on a new connection and reports how long
		// its reply took, on the channel.
		timed := func(args ...string) chan time.Duration {
			c := dialRaw(t, addr)
			done := make(chan time.Duration, 1)
			start := time.Now()
			c.send(args...)
			go func() {
				c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.rd.Read(); err != nil {
					done <- -1
					return
				}
				done <- time.Since(start)
			}()
			return done
		}

		start := time.Now()
		admin.do("CLIENT", "PAUSE", "1000", "WRITE")
		if v := worker.do("GET", "k"); v.Str != "v" {
			t.Fatalf("GET during PAUSE WRITE: %s", v)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("a read waited %v under a 1 s PAUSE WRITE", d)
		}
		worker.do("SET", "k", "w")
		if d := time.Since(start); d < time.Second {
			t.Errorf("a write ran after %v of a 1 s PAUSE WRITE", d)
		}

		// ALL holds every command, CLIENT UNPAUSE included.
		admin.do("CLIENT", "PAUSE", "700", "ALL")
		waits := []chan time.Duration{timed("GET", "k"), timed("PUBLISH", "ch", "m"), timed("CLIENT", "UNPAUSE")}
		for i, w := range waits {
			if d := <-w; d < 400*time.Millisecond {
				t.Errorf("command %d ran after %v of a 700 ms PAUSE ALL", i, d)
			}
		}

		// A shorter ALL over a longer WRITE: ALL until the later end.
		admin.do("CLIENT", "PAUSE", "900", "WRITE")
		admin.do("CLIENT", "PAUSE", "1", "ALL")
		if d := <-timed("GET", "k"); d < 600*time.Millisecond {
			t.Errorf("a read ran after %v of a pause ALL kept to the 900 ms end", d)
		}
	})
}

// monitorPrefix splits a MONITOR line: the database, "lua" for a command a
// script ran (else the client's address), and the command.
var monitorPrefix = regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) (lua|[0-9.:]+)\] (.*)$`)

// monitorEntry is a MONITOR line without its time and client address.
func monitorEntry(m []string) string {
	if m[2] == "lua" {
		return "[" + m[1] + " lua] " + m[3]
	}
	return "[" + m[1] + "] " + m[3]
}

// monitorFeed runs commands on one connection while another MONITORs, and
// returns the lines the monitor received, without their time and address.
func monitorFeed(t *testing.T, addr string, commands [][]string, want int) []string {
	t.Helper()
	mon := dialRaw(t, addr)
	if v := mon.do("MONITOR"); v.Str != "OK" {
		t.Fatalf("MONITOR: %s", v)
	}
	c := dialRaw(t, addr)
	for _, cmd := range commands {
		c.do(cmd...)
	}
	var out []string
	for len(out) < want {
		mon.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := mon.rd.Read()
		if err != nil {
			t.Fatalf("reading the monitor feed after %q: %v", out, err)
		}
		m := monitorPrefix.FindStringSubmatch("+" + line.Str)
		if line.Kind != resp.KindSimple || m == nil {
			t.Fatalf("monitor line %q", line.Str)
		}
		out = append(out, monitorEntry(m))
	}
	return out
}

// TestMonitorMatchesRedis compares MONITOR's lines: quoting, database
// number, secrets redacted, admin commands left out.
func TestMonitorMatchesRedis(t *testing.T) {
	redisAddr := realRedis(t)
	srv := startServer(t)
	commands := [][]string{
		{"SET", "k", "a b\"c\\d\n\r\t\x07\x08\x01\xff"},
		{"GET", "k"},
		{"CONFIG", "GET", "maxmemory"}, // admin: not shown
		{"AUTH", "secret"},
		{"AUTH", "user", "secret"},
		{"HELLO", "2", "AUTH", "default", "secret", "SETNAME", "n"},
		{"SELECT", "3"},
		{"SET", "x", "1"},
		{"NOSUCHCOMMAND"}, // rejected before running: not shown
		{"GET"},           // wrong arity: not shown
		{"SELECT", "0"},
		{"PING", "done"},
	}
	want := monitorFeed(t, redisAddr, commands, 9)
	got := monitorFeed(t, srv.Addr(), commands, 9)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("MONITOR feed\n redis:\n  %s\n revolver:\n  %s", strings.Join(want, "\n  "), strings.Join(got, "\n  "))
	}
}

// TestMaxClients: past maxclients a new connection gets Redis's error and
// is closed, exactly as redis-server does it.
func TestMaxClients(t *testing.T) {
	redisAddr := startRealRedis(t, "--maxclients", "3")
	srv := startServer(t, withConfig("maxclients", "3"))
	for name, addr := range map[string]string{"redis": redisAddr, "revolver": srv.Addr()} {
		var conns []*rawConn
		for i := 0; i < 3; i++ {
			c := dialRaw(t, addr)
			if v := c.do("PING"); v.Str != "PONG" {
				t.Fatalf("%s: connection %d: %s", name, i+1, v)
			}
			conns = append(conns, c)
		}
		extra, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		out, err := readAll(t, extra)
		extra.Close()
		if out != "-ERR max number of clients reached\r\n" {
			t.Errorf("%s: connection 4 got %q", name, out)
		}
		if err != nil && !strings.Contains(err.Error(), "reset") {
			t.Errorf("%s: connection 4 was not closed after the error: %v", name, err)
		}
		conns[0].conn.Close()
		waitFor(t, 5*time.Second, name+" to free a slot", func() bool {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return false
			}
			defer c.Close()
			c.Write(encodeCommand([]string{"PING"}))
			c.SetReadDeadline(time.Now().Add(time.Second))
			buf := make([]byte, 7)
			n, _ := io.ReadFull(c, buf)
			return string(buf[:n]) == "+PONG\r\n"
		})
	}
}

// TestIdleTimeout: with timeout set, an idle client is closed; subscribers
// and MONITOR feeds are not.
func TestIdleTimeout(t *testing.T) {
	srv := startServer(t, withConfig("timeout", "1"))
	idle := dialRaw(t, srv.Addr())
	idle.do("PING")
	sub := dialRaw(t, srv.Addr())
	sub.do("SUBSCRIBE", "ch")
	mon := dialRaw(t, srv.Addr())
	mon.do("MONITOR")
	start := time.Now()
	expectClosed(t, idle, "idle client")
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("idle client closed after %v with timeout 1", d)
	}
	pub := goRedis(t, srv.Addr(), 2)
	if n, err := pub.Publish(ctx, "ch", "still here").Result(); err != nil || n != 1 {
		t.Fatalf("PUBLISH to the subscriber: %d %v", n, err)
	}
	if v := sub.read(); len(v.Elems) != 3 || v.Elems[2].Str != "still here" {
		t.Errorf("subscriber after the timeout: %s", v)
	}
	for { // the monitor also sees the publisher's handshake
		if v := mon.read(); strings.Contains(v.Str, `"publish" "ch" "still here"`) {
			break
		}
	}
}
