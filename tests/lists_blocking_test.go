package tests

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/resp"
)

// Blocking list commands (BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP). Every
// scenario runs against Revolver and against a real redis-server 7.0 with
// the same expectations, so a scenario Redis passes and Revolver fails is a
// Revolver bug. Blocked clients are raw connections: the test goroutine
// sends the command, waits on INFO blocked_clients until the server has
// parked it, acts, then reads the reply: no sleeps decide an outcome.

// lbEnv is one target server with an admin client for setup and INFO.
type lbEnv struct {
	t     *testing.T
	addr  string
	admin *redis.Client
	base  int // blocked clients that are not ours (expected 0)
}

// lbRun runs scenario against Revolver and real Redis, each from a clean
// slate for keys (Redis is shared by the test binary, hence "lb:" keys).
func lbRun(t *testing.T, keys []string, scenario func(t *testing.T, e *lbEnv)) {
	onBothServers(t, func(t *testing.T, addr string) {
		e := &lbEnv{t: t, addr: addr, admin: goRedis(t, addr, 2)}
		if err := e.admin.Del(ctx, keys...).Err(); err != nil {
			t.Fatal(err)
		}
		// Clients closed by an earlier test may still be counted for a
		// moment: let the count settle before taking it as the base.
		deadline := time.Now().Add(2 * time.Second)
		for e.base = zsetBlockedClients(t, e.admin); e.base != 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			e.base = zsetBlockedClients(t, e.admin)
		}
		scenario(t, e)
	})
}

// blocked asserts how many of our clients are blocked right now.
func (e *lbEnv) blocked(n int) {
	e.t.Helper()
	if got := zsetBlockedClients(e.t, e.admin) - e.base; got != n {
		e.t.Fatalf("%d clients blocked, want %d", got, n)
	}
}

// conn dials a raw connection speaking proto.
func (e *lbEnv) conn(proto int) *rawConn {
	e.t.Helper()
	c := dialRaw(e.t, e.addr)
	if proto == 3 {
		if v := c.do("HELLO", "3"); v.Kind == resp.KindError {
			e.t.Fatalf("HELLO 3: %s", v.Str)
		}
	}
	return c
}

// block sends a blocking command (space-separated) on a new connection and
// returns once the server counts one more blocked client.
func (e *lbEnv) block(proto int, cmd string) *rawConn {
	e.t.Helper()
	before := zsetBlockedClients(e.t, e.admin)
	c := e.conn(proto)
	c.send(strings.Fields(cmd)...)
	zsetWaitBlocked(e.t, e.admin, before+1)
	return c
}

// do runs one command (space-separated) on the admin client.
func (e *lbEnv) do(cmd string) {
	e.t.Helper()
	args := []any{}
	for _, f := range strings.Fields(cmd) {
		args = append(args, f)
	}
	if err := e.admin.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
		e.t.Fatalf("%s: %v", cmd, err)
	}
}

// expect reads c's next reply and compares it in lbWire form.
func (e *lbEnv) expect(c *rawConn, what, want string) {
	e.t.Helper()
	if got := lbWire(c.read()); got != want {
		e.t.Errorf("%s: got %s, want %s", what, got, want)
	}
}

// list returns a key's elements comma-separated.
func (e *lbEnv) list(key string) string {
	e.t.Helper()
	v, err := e.admin.LRange(ctx, key, 0, -1).Result()
	if err != nil {
		e.t.Fatalf("LRANGE %s: %v", key, err)
	}
	return strings.Join(v, ",")
}

// lbWire writes a reply on one line, keeping what tells nulls apart:
// RESP2 "*-1" (null array) and "$-1" (null bulk), RESP3 "_".
func lbWire(v resp.Value) string {
	switch v.Kind {
	case resp.KindNull:
		if v.Nil2 != 0 {
			return string(v.Nil2) + "-1"
		}
		return "_"
	case resp.KindError:
		return "-" + v.Str
	case resp.KindInt:
		return ":" + strconv.FormatInt(v.Int, 10)
	case resp.KindArray:
		parts := make([]string, len(v.Elems))
		for i, x := range v.Elems {
			parts[i] = lbWire(x)
		}
		return "[" + strings.Join(parts, " ") + "]"
	default:
		return v.Str
	}
}

// TestListBlockingFIFO: waiters on one key are served in the order they
// blocked; one push of N elements serves them in turn, each with the next
// element; a waiter that finds the key drained stays blocked.
func TestListBlockingFIFO(t *testing.T) {
	cases := []struct {
		cmd, push string
		want      []string // per served waiter, in blocking order
		last      string   // the extra waiter, served by a later RPUSH z
		dst       string   // lb:d afterwards
	}{
		{"BLPOP lb:q 0", "a b c", []string{"[lb:q a]", "[lb:q b]", "[lb:q c]"}, "[lb:q z]", ""},
		{"BRPOP lb:q 0", "a b c", []string{"[lb:q c]", "[lb:q b]", "[lb:q a]"}, "[lb:q z]", ""},
		{"BRPOPLPUSH lb:q lb:d 0", "a b c", []string{"c", "b", "a"}, "z", "z,a,b,c"},
		{"BLMOVE lb:q lb:d LEFT RIGHT 0", "a b c", []string{"a", "b", "c"}, "z", "a,b,c,z"},
		{"BLMPOP 0 1 lb:q RIGHT COUNT 2", "a b c d e", []string{"[lb:q [e d]]", "[lb:q [c b]]", "[lb:q [a]]"}, "[lb:q [z]]", ""},
	}
	for _, tc := range cases {
		t.Run(strings.Fields(tc.cmd)[0], func(t *testing.T) {
			lbRun(t, []string{"lb:q", "lb:d"}, func(t *testing.T, e *lbEnv) {
				var waiters []*rawConn
				for range len(tc.want) + 1 {
					waiters = append(waiters, e.block(2, tc.cmd))
				}
				e.do("RPUSH lb:q " + tc.push)
				for i, want := range tc.want {
					e.expect(waiters[i], fmt.Sprintf("waiter %d", i+1), want)
				}
				e.blocked(1)
				if got := e.list("lb:q"); got != "" {
					t.Errorf("lb:q left with %q", got)
				}
				e.do("RPUSH lb:q z")
				e.expect(waiters[len(tc.want)], "last waiter", tc.last)
				e.blocked(0)
				if got := e.list("lb:d"); got != tc.dst {
					t.Errorf("lb:d = %q, want %q", got, tc.dst)
				}
			})
		})
	}
}

// TestListBlockingMultipleKeys: a waiter on several keys takes from the
// first non-empty one at once, else from the key a later write fills.
// Redis serves keys in the order they became ready, so a transaction that
// pushes to k2 and then k1 serves a waiter on "k1 k2" from k2.
func TestListBlockingMultipleKeys(t *testing.T) {
	lbRun(t, []string{"lb:k1", "lb:k2", "lb:k3"}, func(t *testing.T, e *lbEnv) {
		e.do("RPUSH lb:k2 two")
		e.do("RPUSH lb:k3 three")
		c := e.conn(2)
		if got := lbWire(c.do("BLPOP", "lb:k1", "lb:k2", "lb:k3", "0")); got != "[lb:k2 two]" {
			t.Errorf("immediate: %s", got)
		}
		e.do("DEL lb:k3")

		c = e.block(2, "BLPOP lb:k1 lb:k2 lb:k3 0")
		e.do("RPUSH lb:k3 x")
		e.expect(c, "served from the only filled key", "[lb:k3 x]")

		c = e.block(2, "BRPOP lb:k1 lb:k2 lb:k3 0")
		tx := e.admin.TxPipeline()
		tx.RPush(ctx, "lb:k2", "x2")
		tx.RPush(ctx, "lb:k1", "x1")
		if _, err := tx.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		e.expect(c, "MULTI pushing k2 then k1", "[lb:k2 x2]")
		if got := e.list("lb:k1"); got != "x1" {
			t.Errorf("lb:k1 = %q, want x1", got)
		}
		e.blocked(0)
	})
}

// TestListBlockingMultiExec: a push inside MULTI serves a waiter only after
// EXEC, against the state the whole transaction left.
func TestListBlockingMultiExec(t *testing.T) {
	lbRun(t, []string{"lb:k"}, func(t *testing.T, e *lbEnv) {
		c := e.block(2, "BLPOP lb:k 0")
		tx := func(cmds ...[]any) {
			p := e.admin.TxPipeline()
			for _, args := range cmds {
				p.Do(ctx, args...)
			}
			if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
				t.Fatal(err)
			}
		}
		// Pushed then deleted: nothing to serve, the waiter stays.
		tx([]any{"RPUSH", "lb:k", "a"}, []any{"DEL", "lb:k"})
		e.blocked(1)
		// Pushed a b, then a popped: the waiter gets b, not a.
		tx([]any{"RPUSH", "lb:k", "a", "b"}, []any{"LPOP", "lb:k"})
		e.expect(c, "after EXEC", "[lb:k b]")
		e.blocked(0)
		if n := e.admin.Exists(ctx, "lb:k").Val(); n != 0 {
			t.Errorf("lb:k still exists")
		}
	})
}

// TestListBlockingOtherTypes: a key of another type neither serves nor
// wakes a list waiter; a list push serves the list waiter even when a
// sorted-set waiter on the same key blocked before it (Redis skips it).
func TestListBlockingOtherTypes(t *testing.T) {
	lbRun(t, []string{"lb:m"}, func(t *testing.T, e *lbEnv) {
		c := e.block(2, "BLPOP lb:m 0")
		e.do("SET lb:m str")
		e.blocked(1)
		e.do("DEL lb:m")
		e.do("RPUSH lb:m a")
		e.expect(c, "after the string went", "[lb:m a]")

		z := e.block(2, "BZPOPMIN lb:m 0")
		l := e.block(2, "BLPOP lb:m 0")
		e.do("RPUSH lb:m b")
		e.expect(l, "list waiter behind a zset waiter", "[lb:m b]")
		e.blocked(1)
		e.do("ZADD lb:m 1 m")
		e.expect(z, "zset waiter", "[lb:m m 1]")
		e.blocked(0)
	})
}

// TestListBlockingKeyArrives: a list that arrives under a waited-on key by
// RENAME, COPY or MOVE serves the waiter, as a push does (Redis signals
// every key a write adds, whatever the command).
func TestListBlockingKeyArrives(t *testing.T) {
	lbRun(t, []string{"lb:a", "lb:b"}, func(t *testing.T, e *lbEnv) {
		for _, tc := range []struct{ db, act string }{
			{"0", "RENAME lb:a lb:b"}, {"0", "COPY lb:a lb:b"}, {"9", "MOVE lb:b 9"},
		} {
			e.do("DEL lb:a lb:b")
			e.do("RPUSH lb:a x")
			e.do("RPUSH lb:b x")
			if tc.db == "0" {
				e.do("DEL lb:b")
			}
			c := e.conn(2)
			c.do("SELECT", tc.db)
			c.do("DEL", "lb:b")
			before := zsetBlockedClients(t, e.admin)
			c.send("BLPOP", "lb:b", "0")
			zsetWaitBlocked(t, e.admin, before+1)
			e.do(tc.act)
			e.expect(c, tc.act, "[lb:b x]")
			e.blocked(0)
		}
	})
}

// TestListBlockingTimeout: a fractional timeout ends the wait with a null
// (RESP2 null array for every command, RESP3 null); timeout 0 waits until
// served; bad timeouts are rejected before anything else.
func TestListBlockingTimeout(t *testing.T) {
	cmds := []string{
		"BLPOP lb:t1 lb:t2 %s", "BRPOP lb:t1 %s", "BRPOPLPUSH lb:t1 lb:t2 %s",
		"BLMOVE lb:t1 lb:t2 LEFT RIGHT %s", "BLMPOP %s 2 lb:t1 lb:t2 LEFT COUNT 3",
	}
	lbRun(t, []string{"lb:t1", "lb:t2", "lb:s"}, func(t *testing.T, e *lbEnv) {
		for _, proto := range []int{2, 3} {
			c := e.conn(proto)
			want := map[int]string{2: "*-1", 3: "_"}[proto]
			for _, cmd := range cmds {
				start := time.Now()
				got := lbWire(c.do(strings.Fields(fmt.Sprintf(cmd, "0.1"))...))
				took := time.Since(start)
				if got != want {
					t.Errorf("RESP%d %s: got %s, want %s", proto, cmd, got, want)
				}
				if took < 90*time.Millisecond || took > 2*time.Second {
					t.Errorf("RESP%d %s: timed out after %v, want about 100ms", proto, cmd, took)
				}
			}
		}
		e.do("SET lb:s str") // timeouts are checked before the key
		c := e.conn(2)
		for _, cmd := range cmds {
			cmd = strings.ReplaceAll(cmd, "lb:t1", "lb:s")
			for arg, want := range map[string]string{
				"-1":   "-ERR timeout is negative",
				"-0.5": "-ERR timeout is negative",
				"abc":  "-ERR timeout is not a float or out of range",
				"1x":   "-ERR timeout is not a float or out of range",
			} {
				if got := lbWire(c.do(strings.Fields(fmt.Sprintf(cmd, arg))...)); got != want {
					t.Errorf("%s: got %s, want %s", fmt.Sprintf(cmd, arg), got, want)
				}
			}
		}
		// Timeout 0: still blocked after another client's 200ms wait ran out.
		w := e.block(2, "BLPOP lb:t1 0")
		if got := lbWire(c.do("BLPOP", "lb:t2", "0.2")); got != "*-1" {
			t.Errorf("0.2s wait: %s", got)
		}
		e.blocked(1)
		e.do("RPUSH lb:t1 late")
		e.expect(w, "timeout 0", "[lb:t1 late]")
	})
}

// TestListBlockingMoveChain: BLMOVE moves atomically when served, and the
// push to its destination serves a waiter on that key in the same round.
func TestListBlockingMoveChain(t *testing.T) {
	lbRun(t, []string{"lb:src", "lb:dst", "lb:r"}, func(t *testing.T, e *lbEnv) {
		mv := e.block(2, "BLMOVE lb:src lb:dst RIGHT LEFT 0")
		pop := e.block(2, "BLPOP lb:dst 0")
		e.do("RPUSH lb:src x")
		e.expect(mv, "BLMOVE", "x")
		e.expect(pop, "BLPOP on the destination", "[lb:dst x]")
		e.blocked(0)
		if n := e.admin.Exists(ctx, "lb:src", "lb:dst").Val(); n != 0 {
			t.Errorf("%d of src, dst left", n)
		}

		// BRPOPLPUSH chained through two lists.
		a := e.block(2, "BRPOPLPUSH lb:src lb:dst 0")
		b := e.block(2, "BRPOPLPUSH lb:dst lb:r 0")
		e.do("LPUSH lb:src y")
		e.expect(a, "first hop", "y")
		e.expect(b, "second hop", "y")
		if got := e.list("lb:r"); got != "y" {
			t.Errorf("lb:r = %q, want y", got)
		}
		e.do("DEL lb:r")

		// A rotation (src = dst) leaves the list whole; the next waiter on
		// it is served from the rotated list.
		rot := e.block(2, "BLMOVE lb:r lb:r RIGHT LEFT 0")
		pop = e.block(2, "BLPOP lb:r 0")
		e.do("RPUSH lb:r a b")
		e.expect(rot, "rotation", "b")
		e.expect(pop, "after the rotation", "[lb:r b]")
		if got := e.list("lb:r"); got != "a" {
			t.Errorf("lb:r = %q, want a", got)
		}
		e.blocked(0)
	})
}

// TestListBlockingMoveWrongType: a served BRPOPLPUSH/BLMOVE whose
// destination holds another type gets WRONGTYPE and is unblocked; the
// element stays in the source, for the next waiter if there is one.
func TestListBlockingMoveWrongType(t *testing.T) {
	lbRun(t, []string{"lb:src", "lb:str", "lb:d2"}, func(t *testing.T, e *lbEnv) {
		wrong := e.block(2, "BRPOPLPUSH lb:src lb:str 0")
		e.do("SET lb:str s")
		e.do("RPUSH lb:src a")
		e.expect(wrong, "wrong destination", "-WRONGTYPE Operation against a key holding the wrong kind of value")
		e.blocked(0)
		if got := e.list("lb:src"); got != "a" {
			t.Errorf("lb:src = %q, the element must stay", got)
		}
		e.do("DEL lb:src")

		wrong = e.block(3, "BLMOVE lb:src lb:str LEFT LEFT 0")
		next := e.block(3, "BLMOVE lb:src lb:d2 LEFT LEFT 0")
		e.do("RPUSH lb:src b")
		e.expect(wrong, "wrong destination", "-WRONGTYPE Operation against a key holding the wrong kind of value")
		e.expect(next, "next waiter", "b")
		e.blocked(0)
		if got := e.list("lb:d2") + "|" + e.list("lb:src"); got != "b|" {
			t.Errorf("lb:d2|lb:src = %q, want b|", got)
		}
		if got, _ := e.admin.Get(ctx, "lb:str").Result(); got != "s" {
			t.Errorf("lb:str = %q", got)
		}
	})
}

// TestListBlockingWrongType: a key of another type among the keys answers
// WRONGTYPE at once, unless an earlier key serves first.
func TestListBlockingWrongType(t *testing.T) {
	const wrongType = "-WRONGTYPE Operation against a key holding the wrong kind of value"
	lbRun(t, []string{"lb:s", "lb:l", "lb:e"}, func(t *testing.T, e *lbEnv) {
		e.do("SET lb:s str")
		e.do("RPUSH lb:l x")
		c := e.conn(2)
		for _, tc := range []struct{ cmd, want string }{
			{"BLPOP lb:s 0", wrongType},
			{"BRPOP lb:e lb:s 0", wrongType},
			{"BLPOP lb:e lb:s 0.01", wrongType},
			{"BLMPOP 0 2 lb:e lb:s LEFT", wrongType},
			{"BLMOVE lb:s lb:e LEFT LEFT 0", wrongType},
			{"BRPOPLPUSH lb:l lb:s 0", wrongType},
			{"BLMPOP 0 3 lb:e lb:l lb:s RIGHT", "[lb:l [x]]"}, // lb:l serves first
		} {
			if got := lbWire(c.do(strings.Fields(tc.cmd)...)); got != tc.want {
				t.Errorf("%s: got %s, want %s", tc.cmd, got, tc.want)
			}
			if tc.cmd == "BRPOPLPUSH lb:l lb:s 0" {
				if got := e.list("lb:l"); got != "x" {
					t.Errorf("lb:l = %q after a refused move", got)
				}
			}
		}
		e.blocked(0)
	})
}

// TestListBlockingDisconnect: a blocked client that goes away leaves no
// waiter behind: the count drops and a later push keeps its element.
func TestListBlockingDisconnect(t *testing.T) {
	lbRun(t, []string{"lb:gone", "lb:dst"}, func(t *testing.T, e *lbEnv) {
		for _, cmd := range []string{
			"BLPOP lb:gone 0", "BRPOP lb:gone 0", "BRPOPLPUSH lb:gone lb:dst 0",
			"BLMOVE lb:gone lb:dst LEFT LEFT 0", "BLMPOP 0 1 lb:gone LEFT COUNT 5",
		} {
			c := e.block(2, cmd)
			c.conn.Close()
			zsetWaitBlocked(e.t, e.admin, e.base)
			e.do("RPUSH lb:gone kept")
			if got := e.list("lb:gone"); got != "kept" {
				t.Errorf("%s: after the client left, lb:gone = %q", cmd, got)
			}
			if n := e.admin.Exists(ctx, "lb:dst").Val(); n != 0 {
				t.Errorf("%s: lb:dst was created", cmd)
			}
			e.do("DEL lb:gone")
		}
	})
}

// TestListBlockingClientUnblock: CLIENT UNBLOCK ends a wait with the
// timeout reply (a null) or with the UNBLOCKED error, and the key is left
// alone; it answers 0 for a client that is not blocked.
func TestListBlockingClientUnblock(t *testing.T) {
	lbRun(t, []string{"lb:u", "lb:d"}, func(t *testing.T, e *lbEnv) {
		for _, proto := range []int{2, 3} {
			null := map[int]string{2: "*-1", 3: "_"}[proto]
			for _, cmd := range []string{"BLPOP lb:u 0", "BRPOPLPUSH lb:u lb:d 0", "BLMOVE lb:u lb:d LEFT LEFT 0", "BLMPOP 0 1 lb:u RIGHT"} {
				for _, how := range []string{"", "TIMEOUT", "ERROR"} {
					c := e.conn(proto)
					id := c.do("CLIENT", "ID").Int
					if n, err := e.admin.ClientUnblock(ctx, id).Result(); err != nil || n != 0 {
						t.Errorf("CLIENT UNBLOCK of an idle client: %d %v", n, err)
					}
					before := zsetBlockedClients(t, e.admin)
					c.send(strings.Fields(cmd)...)
					zsetWaitBlocked(t, e.admin, before+1)
					args := []any{"CLIENT", "UNBLOCK", id}
					want := null
					if how != "" {
						args = append(args, how)
					}
					if how == "ERROR" {
						want = "-UNBLOCKED client unblocked via CLIENT UNBLOCK"
					}
					if n, err := e.admin.Do(ctx, args...).Int(); n != 1 || err != nil {
						t.Errorf("CLIENT UNBLOCK %d %s: %d %v", id, how, n, err)
					}
					e.expect(c, fmt.Sprintf("RESP%d %s unblocked %s", proto, cmd, how), want)
					e.blocked(0)
					// The client works on, and the key is untouched by it.
					if got := lbWire(c.do("RPUSH", "lb:u", "v")); got != ":1" {
						t.Errorf("RPUSH after unblock: %s", got)
					}
					if got := e.list("lb:u"); got != "v" {
						t.Errorf("lb:u = %q", got)
					}
					e.do("DEL lb:u lb:d")
				}
			}
		}
		if n, err := e.admin.ClientUnblock(ctx, 1<<40).Result(); err != nil || n != 0 {
			t.Errorf("CLIENT UNBLOCK of no client: %d %v", n, err)
		}
	})
}

// TestListBlockingInMulti: inside MULTI blocking commands never block; on
// an empty key they answer as on timeout (BRPOPLPUSH/BLMOVE a null bulk
// there, which Redis 7.0 does), and on a filled key they pop.
func TestListBlockingInMulti(t *testing.T) {
	lbRun(t, []string{"lb:e", "lb:d"}, func(t *testing.T, e *lbEnv) {
		want := map[int]string{
			2: "[*-1 *-1 $-1 $-1 *-1 :2 [lb:e a] b]",
			3: "[_ _ _ _ _ :2 [lb:e a] b]",
		}
		for _, proto := range []int{2, 3} {
			c := e.conn(proto)
			c.do("MULTI")
			for _, cmd := range []string{
				"BLPOP lb:e 0", "BRPOP lb:e 0", "BRPOPLPUSH lb:e lb:d 0", "BLMOVE lb:e lb:d LEFT LEFT 0",
				"BLMPOP 0 1 lb:e LEFT", "RPUSH lb:e a b", "BLPOP lb:e 0", "BLMOVE lb:e lb:d LEFT LEFT 0",
			} {
				if got := lbWire(c.do(strings.Fields(cmd)...)); got != "QUEUED" {
					t.Fatalf("%s in MULTI: %s", cmd, got)
				}
			}
			if got := lbWire(c.do("EXEC")); got != want[proto] {
				t.Errorf("RESP%d EXEC: got %s, want %s", proto, got, want[proto])
			}
			e.blocked(0)
			if got := e.list("lb:d"); got != "b" {
				t.Errorf("lb:d = %q, want b", got)
			}
			e.do("DEL lb:e lb:d")
		}
	})
}

// TestListBlockingReplyShapes: what RESP3 clients see. On the wire BLPOP
// is a 2-element array and BLMPOP [key, [elements]]; through go-redis every
// null comes back as redis.Nil.
func TestListBlockingReplyShapes(t *testing.T) {
	lbRun(t, []string{"lb:r", "lb:d"}, func(t *testing.T, e *lbEnv) {
		c := e.conn(3)
		e.do("RPUSH lb:r a b c d")
		for _, tc := range []struct{ cmd, want string }{
			{"BLPOP lb:r 0", "[lb:r a]"},
			{"BLMPOP 0 1 lb:r RIGHT COUNT 2", "[lb:r [d c]]"},
			{"BLMOVE lb:r lb:d LEFT LEFT 0", "b"},
		} {
			if got := lbWire(c.do(strings.Fields(tc.cmd)...)); got != tc.want {
				t.Errorf("%s: got %s, want %s", tc.cmd, got, tc.want)
			}
		}
		w := e.block(3, "BLMPOP 0 2 lb:x lb:r LEFT COUNT 10")
		e.do("RPUSH lb:r 1 2")
		e.expect(w, "blocked BLMPOP", "[lb:r [1 2]]")

		// go-redis, RESP3: served replies decode, nulls are redis.Nil.
		g := goRedis(t, e.addr, 3)
		e.do("RPUSH lb:r x y z")
		if v, err := g.BLPop(ctx, 0, "lb:x", "lb:r").Result(); err != nil || strings.Join(v, ",") != "lb:r,x" {
			t.Errorf("BLPop: %q %v", v, err)
		}
		if k, v, err := g.BLMPop(ctx, 0, "right", 5, "lb:r").Result(); err != nil || k != "lb:r" || strings.Join(v, ",") != "z,y" {
			t.Errorf("BLMPop: %q %q %v", k, v, err)
		}
		for _, cmd := range []string{"BLPOP lb:x 0.05", "BRPOP lb:x 0.05", "BRPOPLPUSH lb:x lb:d 0.05",
			"BLMOVE lb:x lb:d LEFT LEFT 0.05", "BLMPOP 0.05 1 lb:x LEFT"} {
			args := []any{}
			for _, f := range strings.Fields(cmd) {
				args = append(args, f)
			}
			if v, err := g.Do(ctx, args...).Result(); !errors.Is(err, redis.Nil) {
				t.Errorf("go-redis %s: %v %v, want redis.Nil", cmd, v, err)
			}
		}
		// Typed calls on a timed-out wait (go-redis rounds up to 1s).
		if err := g.BLMPop(ctx, time.Second, "left", 1, "lb:x").Err(); !errors.Is(err, redis.Nil) {
			t.Errorf("BLMPop timeout: %v", err)
		}
		e.blocked(0)
	})
}
