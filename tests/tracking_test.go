package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// Client-side caching (CLIENT TRACKING) and CLIENT REPLY, run on Revolver
// and redis-server with raw connections: every reply and push each
// connection receives is compared, type by type, in order.
//
// A transcript is a list of steps:
//
//	"a= CMD args"        send on connection a and read one frame
//	"a: CMD && CMD ..."  send (pipelined), read nothing
//	"a> N"               read N frames from a
//	"a: hello3"          switch a to RESP3 (HELLO's reply is not compared)
//	"wait-gone KEY"      poll EXISTS KEY (on a helper connection) until 0
//
// "$b" in a command is connection b's client id. Ids in replies to CLIENT
// commands and in pushes are written back as "$b". At the end every
// connection must have nothing more: a PING on each gets its PONG next.

type trackingRun struct {
	t     *testing.T
	addr  string
	conns map[string]*rawConn
	ids   map[string]int64
	names []string
	out   []string
}

func (r *trackingRun) conn(name string) *rawConn {
	if c, ok := r.conns[name]; ok {
		return c
	}
	c := dialRaw(r.t, r.addr)
	r.conns[name] = c
	r.ids[name] = c.do("CLIENT", "ID").Int
	r.names = append(r.names, name)
	return c
}

func (r *trackingRun) subst(s string) string {
	for name, id := range r.ids {
		s = strings.ReplaceAll(s, "$"+name, strconv.FormatInt(id, 10))
	}
	return s
}

// describe renders a frame with every RESP type in it, ids as names.
func (r *trackingRun) describe(v resp.Value, ids bool) string {
	var b strings.Builder
	var walk func(v resp.Value)
	walk = func(v resp.Value) {
		b.WriteByte(byte(v.Kind))
		if v.Nil2 != 0 {
			b.WriteByte(v.Nil2)
		}
		switch {
		case len(v.Elems) > 0:
			b.WriteString("[")
			for i, e := range v.Elems {
				if i > 0 {
					b.WriteString(" ")
				}
				walk(e)
			}
			b.WriteString("]")
		case v.Kind == ':':
			s := strconv.FormatInt(v.Int, 10)
			if ids {
				for name, id := range r.ids {
					if id == v.Int {
						s = "$" + name
					}
				}
			}
			b.WriteString(s)
		default:
			b.WriteString(strconv.Quote(v.Str))
		}
	}
	walk(v)
	return b.String()
}

func (r *trackingRun) record(name, cmd string, v resp.Value) {
	ids := v.Kind == '>' || strings.HasPrefix(strings.ToUpper(cmd), "CLIENT")
	r.out = append(r.out, name+" "+r.describe(v, ids))
}

func (r *trackingRun) run(steps []string, final bool) []string {
	helper := dialRaw(r.t, r.addr)
	for _, st := range steps {
		if key, ok := strings.CutPrefix(st, "wait-gone "); ok {
			waitFor(r.t, 10*time.Second, key+" expired", func() bool { return helper.do("EXISTS", key).Int == 0 })
			continue
		}
		i := strings.IndexAny(st, ":=>")
		name, op, rest := st[:i], st[i], strings.TrimSpace(st[i+1:])
		c := r.conn(name)
		switch op {
		case '>':
			n, _ := strconv.Atoi(rest)
			for range n {
				r.record(name, "", c.read())
			}
		case '=', ':':
			if rest == "hello3" {
				c.do("HELLO", "3")
				continue
			}
			var buf []byte
			for _, line := range strings.Split(r.subst(rest), " && ") {
				args, err := splitCommandLine(strings.TrimSpace(line))
				if err != nil {
					r.t.Fatalf("%q: %v", st, err)
				}
				buf = append(buf, encodeCommand(args)...)
			}
			c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.conn.Write(buf); err != nil {
				r.t.Fatalf("write: %v", err)
			}
			if op == '=' {
				r.record(name, rest, c.read())
			}
		}
	}
	if !final {
		return r.out
	}
	// Nothing else is pending anywhere.
	for _, name := range r.names {
		c := r.conns[name]
		if c == nil {
			continue
		}
		c.send("PING")
		for v := c.read(); ; v = c.read() {
			if v.Str == "PONG" || len(v.Elems) == 2 && v.Elems[0].Str == "pong" {
				break
			}
			r.record(name, "", v)
			if len(r.out) > 10000 {
				break
			}
		}
	}
	return r.out
}

// close drops connection name.
func (r *trackingRun) close(name string) {
	r.conns[name].conn.Close()
	r.conns[name] = nil
}

type trackingCase struct {
	name  string
	steps []string
}

func runTrackingCases(t *testing.T, revAddr func(t *testing.T) string, cases []trackingCase) {
	redisAddr := realRedis(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got [2][]string
			for i, addr := range []string{redisAddr, revAddr(t)} {
				c := dialRaw(t, addr)
				c.do("FLUSHALL")
				r := &trackingRun{t: t, addr: addr, conns: map[string]*rawConn{}, ids: map[string]int64{}}
				got[i] = r.runWithClose(tc.steps)
				for _, cn := range r.conns {
					if cn != nil {
						cn.conn.Close()
					}
				}
			}
			if testing.Verbose() {
				t.Logf("transcript:\n  %s", strings.Join(got[1], "\n  "))
			}
			if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") {
				t.Errorf("redis:\n  %s\nrevolver:\n  %s", strings.Join(got[0], "\n  "), strings.Join(got[1], "\n  "))
			}
		})
	}
}

// runWithClose runs steps, where "close b" closes connection b and waits
// until the server no longer lists it.
func (r *trackingRun) runWithClose(steps []string) []string {
	var chunk []string
	for _, st := range steps {
		if name, ok := strings.CutPrefix(st, "close "); ok {
			r.run(chunk, false)
			chunk = nil
			id := r.ids[name]
			r.close(name)
			helper := dialRaw(r.t, r.addr)
			waitFor(r.t, 10*time.Second, name+" gone", func() bool {
				return !strings.Contains(helper.do("CLIENT", "LIST").Str, fmt.Sprintf("id=%d ", id))
			})
			continue
		}
		chunk = append(chunk, st)
	}
	return r.run(chunk, true)
}

var trackingCases = []trackingCase{
	{"default-resp3", []string{
		"a: hello3", "a= CLIENT TRACKING on", "a= GET k", "a= MGET k2 k3",
		"b= SET k 1", "a> 1", "b= SET k 2", // invalidated once, then forgotten
		"b= MSET k2 x k3 y k4 z", "a> 2",
		"a= GET k", "a= SET k 3", "a> 1", // its own write: after the reply
		"a: GET k && SET k 4 && GET k", "a> 4",
		"a= EXISTS k", "a= TYPE k2", "a= STRLEN k3", "b= DEL k k2 k3", "a> 3",
		"a= GET r1", "b= RENAME r0 r1", "b= SET r0 v", "b= RENAME r0 r1", "a> 1",
		"a= CLIENT TRACKINGINFO", "a= CLIENT GETREDIR",
		// Keys by name, whatever the database; every read command's keys.
		"b= SELECT 1", "a= GET dbk", "b= SET dbk 1", "a> 1", "b= SELECT 0",
		"a= SINTER s1 s2", "a= ZUNION 2 z1 z2", "a= OBJECT ENCODING o", "a= HGET h f", "a= LCS l1 l2",
		"b= SADD s2 x", "b= ZADD z1 1 m", "b= SET o 1", "b= HSET h f v", "b= SET l2 x", "a> 5",
		// Writes that change nothing.
		"a= GET k", "b= SET k 1 NX", "b= DEL nosuch", "b= EXPIRE nosuch 10", "b= SET k 5", "a> 1",
		"a= HGET h f", "b= HDEL h nosuch", "b= SREM s2 nosuch", "b= HSET h f v", "a> 1",
	}},
	{"noloop", []string{
		"a: hello3", "a= CLIENT TRACKING on NOLOOP", "a= GET k", "a= SET k 1",
		"a= GET k", "b= SET k 2", "a> 1", "a= CLIENT TRACKINGINFO",
		"a= GET z", "a= EVAL \"return redis.call('set', 'z', '1')\" 0",
		"c: hello3", "c= CLIENT TRACKING on BCAST NOLOOP", "c= SET x 1", "c= EVAL \"return redis.call('set', 'y', '1')\" 0",
		"c> 1", "c= MULTI", "c= SET x 2", "c= EXEC",
	}},
	{"optin-optout", []string{
		"a: hello3", "a= CLIENT TRACKING on OPTIN", "a= GET k1", "a= CLIENT CACHING yes", "a= GET k2",
		"a= GET k3", "b= MSET k1 1 k2 2 k3 3", "a> 1",
		"a= CLIENT CACHING yes", "a= CLIENT TRACKINGINFO", "a= CLIENT ID", "a= GET k1", "b= SET k1 x", "a> 1",
		"a= CLIENT CACHING yes", "a= MULTI", "a= GET k2", "a= GET k3", "a= EXEC", "b= MSET k2 1 k3 2", "a> 2",
		"a= CLIENT CACHING no", "a= CLIENT TRACKING on OPTOUT", "a= CLIENT TRACKING off",
		"a= CLIENT TRACKING on OPTOUT", "a= GET o1", "a= CLIENT CACHING no", "a= GET o2", "a= CLIENT CACHING yes",
		"b= MSET o1 1 o2 2", "a> 1",
	}},
	{"bcast", []string{
		"a: hello3", "a= CLIENT TRACKING on BCAST PREFIX user: PREFIX obj:", "a= CLIENT TRACKINGINFO",
		"b= SET user:1 x", "a> 1", "b= MSET obj:2 x user:3 y other z obj:1 w", "a> 2",
		"b: SET user:9 a && SET user:8 b && DEL user:9 && SET zz 1", "b> 4", "a> 1",
		"c: hello3", "c= CLIENT TRACKING on BCAST NOLOOP", "c= SET q 1", "b= SET q 2", "c> 1", "a= SET user:5 1", "c> 1",
		"c= MSET q 1 r 2", "b= SET s 1", "c> 1", "a> 0",
		"a= CLIENT TRACKING on BCAST PREFIX u", "a= CLIENT TRACKING on BCAST PREFIX obj:x",
		"a= CLIENT TRACKING on", "a= CLIENT TRACKING on BCAST PREFIX new:", "a= CLIENT TRACKINGINFO",
		"a= FLUSHALL", "c> 1", "a> 1",
	}},
	{"redirect-resp2", []string{
		"r= SUBSCRIBE __redis__:invalidate", "a= CLIENT TRACKING on REDIRECT $r", "a= GET k",
		"a= CLIENT GETREDIR", "a= CLIENT TRACKINGINFO", "b= SET k 1", "r> 1",
		"a= GET k", "a= SET k 2", "r> 1", "a= FLUSHDB", "r> 1",
		"p: hello3", "p= CLIENT TRACKING on REDIRECT $r", "p= GET z", "b= SET z 1", "r> 1", "b= FLUSHALL", "r> 2",
		"c= CLIENT TRACKING on BCAST REDIRECT $r", "b= SET anything 1", "r> 1",
	}},
	{"redirect-resp3", []string{
		"r: hello3", "a: hello3", "a= CLIENT TRACKING on REDIRECT $r", "a= GET k", "b= SET k 1", "r> 1",
		"a= GET k", "a= SET k 2", "r> 1",
		"n= CLIENT TRACKING on REDIRECT $r", "n= GET n", "b= SET n 1", "b= FLUSHALL", "r> 3",
		"r= PING", "a= GET k", "b= SET k 2", "r> 1",
	}},
	{"broken-redirect", []string{
		"r: hello3", "a: hello3", "a= CLIENT TRACKING on REDIRECT $r", "a= GET k", "a= GET k2",
		"n= CLIENT TRACKING on REDIRECT $r", "n= GET k",
		"close r",
		"b= SET k 1", "a> 1", "a= CLIENT TRACKINGINFO", "a= SET k2 1", "a> 1",
		"a= CLIENT TRACKING on REDIRECT $b",
	}},
	{"flush", []string{
		"a: hello3", "a= CLIENT TRACKING on", "c: hello3", "c= CLIENT TRACKING on BCAST",
		"d= CLIENT TRACKING on", "a= GET k", "b= FLUSHDB", "a> 1", "c> 1",
		"a= FLUSHALL", "a> 1", "c> 1", "a= GET k", "b= SET k 1", "a> 1", "c> 1", "b= FLUSHALL ASYNC", "a> 1", "c> 1",
	}},
	{"multi-and-scripts", []string{
		"a: hello3", "a= CLIENT TRACKING on", "a= GET k1", "a= GET k2",
		"a= MULTI", "a= SET k1 x", "a= GET k3", "a= SET k2 y", "a= EXEC", "a> 2",
		"b= MULTI", "b= SET k3 1", "b= EXEC", "a> 1",
		"a= EVAL \"return redis.call('get', KEYS[1])\" 2 s1 s2", "b= SET s2 1", "a> 1", "b= SET s1 1", "a> 1",
		"a= EVAL \"redis.call('get', KEYS[1]); redis.call('set', KEYS[1], 'v'); return 1\" 1 s3", "a> 1",
		"a= EVAL \"return redis.call('set', KEYS[1], 'v')\" 1 s4", "b= SET s4 1",
		"a= EVAL_RO \"return redis.call('get', KEYS[1])\" 1 s5", "b= SET s5 1", "a> 1",
		"a= EVAL_RO \"return 1\" 1 s6", "b= SET s6 1",
		"b= EVAL \"return redis.call('set', KEYS[1], 'x')\" 1 k1", "a= GET k1", "b= EVAL \"return redis.call('del', KEYS[1])\" 1 k1", "a> 1",
	}},
	{"expiry", []string{
		"a: hello3", "a= CLIENT TRACKING on", "b= SET e v PX 30", "a= GET e", "wait-gone e", "a> 1",
		"a= SET f v PX 30", "a= GET f", "wait-gone f", "a> 1",
	}},
	{"blocking", []string{
		"a: hello3", "a= CLIENT TRACKING on", "a= LRANGE L 0 -1", "a: BLPOP L 0", "b= LPUSH L x", "a> 2",
		"a= LLEN L", "a: BLPOP L 0", "c: hello3", "c= CLIENT TRACKING on", "c= LLEN L", "c: BLPOP L2 0",
		"b= LPUSH L y", "a> 2", "c> 1", "b= LPUSH L2 z", "c> 1",
	}},
	{"client-reply", []string{
		"a: CLIENT REPLY OFF && PING && BADCMD && GET && SET k v && CLIENT REPLY ON", "a> 1",
		"a: CLIENT REPLY SKIP && PING a && PING b && CLIENT REPLY SKIP && CLIENT REPLY SKIP && PING c && PING d", "a> 2",
		"a: CLIENT REPLY SKIP && NOSUCH && PING e", "a> 1", "a= CLIENT REPLY maybe",
		"a: CLIENT REPLY OFF && CLIENT REPLY maybe && MULTI && SET k 1 && EXEC && RESET && PING f", "a> 2",
		"a: CLIENT REPLY OFF && GET k && RESET", "a> 1",
		"t: hello3", "t= CLIENT TRACKING on", "t= GET k", "t: CLIENT REPLY OFF", "b= SET k 2", "t> 1",
		"t: GET k && SET k 3 && CLIENT REPLY ON", "t> 2",
		// A blocked command's reply, served or timed out, follows the mode
		// of when it was sent.
		"p: CLIENT REPLY SKIP && BLPOP BL 0 && PING p", "b= LPUSH BL z", "p> 1",
		"q: CLIENT REPLY OFF && BLPOP BL 0", "b= LPUSH BL y", "q= CLIENT REPLY ON",
		"p: CLIENT REPLY SKIP && BLPOP BL 0.01 && PING p2", "p> 1",
		// The PING's reply is read before b publishes: on two loops the
		// message could otherwise overtake it.
		"s= SUBSCRIBE ch", "s: CLIENT REPLY OFF", "s= PING", "s> 1", "b= PUBLISH ch hi",
	}},
}

func TestTracking(t *testing.T) {
	runTrackingCases(t, func(t *testing.T) string { return startServer(t).Addr() }, trackingCases)
}

// TestTrackingTwoLoops runs the cases with Revolver's connections spread
// over two event loops: pushes cross loops.
func TestTrackingTwoLoops(t *testing.T) {
	runTrackingCases(t, func(t *testing.T) string { return startServer(t, withConfig("io-threads", "2")).Addr() },
		trackingCases)
}

// TestTrackingTableMaxKeys checks INFO's tracking figures and that a table
// over tracking-table-max-keys forgets keys (Redis picks them at random)
// telling their readers, before the next command.
func TestTrackingTableMaxKeys(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		c := dialRaw(t, addr)
		c.do("FLUSHALL")
		t.Cleanup(func() { c.do("CONFIG", "SET", "tracking-table-max-keys", "1000000") })
		stats := func() string {
			return infoField(c, "clients", "tracking_clients") + " " + infoField(c, "stats", "tracking_total_keys") +
				" " + infoField(c, "stats", "tracking_total_items") + " " + infoField(c, "stats", "tracking_total_prefixes")
		}
		a, a2, b := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
		for _, x := range []*rawConn{a, a2, b} {
			x.do("HELLO", "3")
		}
		a.do("CLIENT", "TRACKING", "on")
		a.do("MGET", "k1", "k2", "k3")
		a2.do("CLIENT", "TRACKING", "on")
		a2.do("GET", "k1")
		b.do("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "PREFIX", "y")
		// Clients of earlier tests may still be closing on the shared server.
		waitFor(t, 10*time.Second, "tracking figures", func() bool { return stats() == "3 3 4 2" })
		c.do("CONFIG", "SET", "tracking-table-max-keys", "1")
		c.do("PING") // the limit applies before a command
		seen := map[string]bool{}
		for range 2 {
			v := a.read()
			if v.Kind != '>' || len(v.Elems) != 2 || v.Elems[0].Str != "invalidate" || len(v.Elems[1].Elems) != 1 {
				t.Fatalf("not an invalidation: %s", v)
			}
			seen[v.Elems[1].Elems[0].Str] = true
		}
		kept := ""
		for _, k := range []string{"k1", "k2", "k3"} {
			if !seen[k] {
				kept = k
			}
		}
		if len(seen) != 2 || kept == "" {
			t.Fatalf("invalidated %v", seen)
		}
		want := "3 1 1 2"
		if kept == "k1" {
			want = "3 1 2 2"
		} else if v := a2.read(); v.Kind != '>' || v.Elems[1].Elems[0].Str != "k1" {
			t.Fatalf("a2 got %s", v)
		}
		if got := stats(); got != want {
			t.Errorf("tracking figures %q, want %q", got, want)
		}
		// Over the limit again, with no command after: the cron applies it.
		a.do("MGET", "k1", "k2", "k3")
		for range 2 {
			if v := a.read(); v.Kind != '>' || v.Elems[0].Str != "invalidate" {
				t.Fatalf("not an invalidation: %s", v)
			}
		}
		// Nothing else came (a2 hears of k1 if the cron dropped it).
		for _, x := range []*rawConn{a, a2, b} {
			v := x.do("PING")
			if x == a2 && v.Kind == '>' && v.Elems[1].Elems[0].Str == "k1" {
				v = x.read()
			}
			if v.Str != "PONG" {
				t.Errorf("got %s", v)
			}
		}
	})
}

// TestTrackingClientListFlags checks CLIENT INFO's flags and redir fields
// for tracking clients on both servers.
func TestTrackingClientListFlags(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		field := func(c *rawConn, name string) string {
			for _, f := range strings.Fields(strings.TrimPrefix(c.do("CLIENT", "INFO").Str, "txt:")) {
				if v, ok := strings.CutPrefix(f, name+"="); ok {
					return v
				}
			}
			return "?"
		}
		a, r := dialRaw(t, addr), dialRaw(t, addr)
		a.do("HELLO", "3")
		rid := strconv.FormatInt(r.do("CLIENT", "ID").Int, 10)
		check := func(flags, redir string) {
			t.Helper()
			if f, d := field(a, "flags"), field(a, "redir"); f != flags || d != redir {
				t.Errorf("flags=%s redir=%s, want flags=%s redir=%s", f, d, flags, redir)
			}
		}
		check("N", "-1")
		a.do("CLIENT", "TRACKING", "on")
		check("t", "0")
		a.do("CLIENT", "TRACKING", "off")
		a.do("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", rid)
		check("tB", rid)
		r.conn.Close()
		waitFor(t, 10*time.Second, "redirect client gone", func() bool {
			return !strings.Contains(a.do("CLIENT", "LIST").Str, "id="+rid+" ")
		})
		a.do("SET", "k", "v") // the broadcast finds the redirect gone
		if v := a.read(); v.Kind != '>' || v.Elems[0].Str != "tracking-redir-broken" {
			t.Fatalf("got %s", v)
		}
		check("tRB", rid)
		a.do("CLIENT", "TRACKING", "off")
		check("N", "-1")
	})
}

// TestTrackingOutputClass checks that a tracking client keeps the normal
// class's output limit (none), not the pub/sub one.
func TestTrackingOutputClass(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		c := dialRaw(t, addr)
		c.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1024 0 0")
		t.Cleanup(func() { c.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 33554432 8388608 60") })
		c.do("SET", "big", strings.Repeat("x", 100000))
		a := dialRaw(t, addr)
		a.do("HELLO", "3")
		a.do("CLIENT", "TRACKING", "on")
		a.send("GET", "big")
		a.send("GET", "big")
		for range 2 {
			if v := a.read(); len(v.Str) != 100000 {
				t.Fatalf("got %d bytes", len(v.Str))
			}
		}
		if v := a.do("PING"); v.Str != "PONG" {
			t.Fatalf("got %s", v)
		}
	})
}
