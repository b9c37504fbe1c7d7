package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// Blocked pops and moves woken by an empty element (issue 20): the waiter
// is served "" (the empty bulk string, not a null) exactly once, stops
// waiting, and the lists end as Redis leaves them. Run against Revolver and
// a real redis-server with the same expectations (see lists_blocking_test.go).

// evWire is lbWire with bulk strings quoted, so that "" cannot be mistaken
// for an absent value: RESP2 nulls "$-1" / "*-1", RESP3 "_".
func evWire(v resp.Value) string {
	switch v.Kind {
	case resp.KindNull, resp.KindError, resp.KindInt:
		return lbWire(v)
	case resp.KindArray, resp.KindSet, resp.KindMap, resp.KindPush:
		parts := make([]string, len(v.Elems))
		for i, x := range v.Elems {
			parts[i] = evWire(x)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case resp.KindDouble:
		return v.Str
	default:
		return strconv.Quote(v.Str)
	}
}

// evDo runs a command given as separate arguments (so that "" survives) on
// the admin client.
func (e *lbEnv) evDo(args ...any) {
	e.t.Helper()
	if err := e.admin.Do(ctx, args...).Err(); err != nil {
		e.t.Fatalf("%v: %v", args, err)
	}
}

// evList returns a list's elements, quoted.
func (e *lbEnv) evList(key string) string {
	e.t.Helper()
	v, err := e.admin.LRange(ctx, key, 0, -1).Result()
	if err != nil {
		e.t.Fatalf("LRANGE %s: %v", key, err)
	}
	return fmt.Sprintf("%q", v)
}

// evExpect reads c's next reply and compares it in evWire form.
func (e *lbEnv) evExpect(c *rawConn, what, want string) {
	e.t.Helper()
	if got := evWire(c.read()); got != want {
		e.t.Errorf("%s: got %s, want %s", what, got, want)
	}
}

// evServed waits (briefly) until none of our clients is blocked any more:
// a waiter the push of "" did not serve would wait on, its reply unwritten.
func (e *lbEnv) evServed(what string) {
	e.t.Helper()
	waitFor(e.t, 3*time.Second, what+": the waiters to be served (still blocked after the push?)", func() bool {
		return zsetBlockedClients(e.t, e.admin) == e.base
	})
}

// evIdle checks that c has nothing more to say: the next reply is the PONG
// of a PING sent now, not a late timeout reply nor a second delivery.
func (e *lbEnv) evIdle(c *rawConn, what string) {
	e.t.Helper()
	e.blocked(0)
	if got := evWire(c.do("PING")); got != `"PONG"` && got != "PONG" {
		e.t.Errorf("%s: after the reply, PING answered %s", what, got)
	}
}

// TestEmptyValueWakesListWaiter: every blocking list command, blocked with
// a timeout or forever, in RESP2 and RESP3, is served the pushed "" once;
// a later push stays in the source.
func TestEmptyValueWakesListWaiter(t *testing.T) {
	cases := []struct {
		cmd      string // %s is the timeout
		want     string // the reply to the push of ""
		src, dst string // the lists after the push of "" and a push of "x"
	}{
		{"BLMOVE ev:src ev:dst RIGHT LEFT %s", `""`, `["x"]`, `[""]`},
		{"BLMOVE ev:src ev:dst LEFT RIGHT %s", `""`, `["x"]`, `[""]`},
		{"BRPOPLPUSH ev:src ev:dst %s", `""`, `["x"]`, `[""]`},
		{"BLPOP ev:src %s", `["ev:src" ""]`, `["x"]`, `[]`},
		{"BRPOP ev:other ev:src %s", `["ev:src" ""]`, `["x"]`, `[]`},
		{"BLMPOP %s 1 ev:src LEFT", `["ev:src" [""]]`, `["x"]`, `[]`},
		{"BLMPOP %s 2 ev:other ev:src RIGHT COUNT 5", `["ev:src" [""]]`, `["x"]`, `[]`},
	}
	for _, tc := range cases {
		for _, timeout := range []string{"0", "30"} {
			for _, proto := range []int{2, 3} {
				cmd := fmt.Sprintf(tc.cmd, timeout)
				t.Run(fmt.Sprintf("%s/RESP%d", cmd, proto), func(t *testing.T) {
					lbRun(t, []string{"ev:src", "ev:dst", "ev:other"}, func(t *testing.T, e *lbEnv) {
						c := e.block(proto, cmd)
						e.evDo("RPUSH", "ev:src", "")
						e.evServed(cmd)
						e.evExpect(c, cmd, tc.want)
						e.evIdle(c, cmd)
						e.evDo("RPUSH", "ev:src", "x")
						e.blocked(0)
						if got := e.evList("ev:src"); got != tc.src {
							t.Errorf("ev:src = %s, want %s", got, tc.src)
						}
						if got := e.evList("ev:dst"); got != tc.dst {
							t.Errorf("ev:dst = %s, want %s", got, tc.dst)
						}
					})
				})
			}
		}
	}
}

// TestEmptyValueMoveChain: a BLMOVE served "" pushes it on to its
// destination, which serves a BLMOVE blocked there in turn; a push of ""
// and "x" in one command serves two waiters on the source in order.
func TestEmptyValueMoveChain(t *testing.T) {
	lbRun(t, []string{"ev:a", "ev:b", "ev:c"}, func(t *testing.T, e *lbEnv) {
		first := e.block(2, "BLMOVE ev:a ev:b LEFT LEFT 0")
		second := e.block(3, "BRPOPLPUSH ev:b ev:c 0")
		e.evDo("RPUSH", "ev:a", "")
		e.evServed("the chain")
		e.evExpect(first, "first", `""`)
		e.evExpect(second, "second", `""`)
		e.evIdle(first, "first")
		e.evIdle(second, "second")
		for key, want := range map[string]string{"ev:a": `[]`, "ev:b": `[]`, "ev:c": `[""]`} {
			if got := e.evList(key); got != want {
				t.Errorf("%s = %s, want %s", key, got, want)
			}
		}

		one := e.block(2, "BLMOVE ev:a ev:b RIGHT RIGHT 0")
		two := e.block(2, "BLPOP ev:a 0")
		e.evDo("LPUSH", "ev:a", "x", "", "y")
		e.evServed("two waiters")
		e.evExpect(one, "one", `"x"`)
		e.evExpect(two, "two", `["ev:a" "y"]`)
		e.blocked(0)
		if got := e.evList("ev:a"); got != `[""]` {
			t.Errorf("ev:a = %s, want [\"\"]", got)
		}
		c := e.conn(2)
		if got := evWire(c.do("BRPOPLPUSH", "ev:a", "ev:b", "30")); got != `""` {
			t.Errorf("BRPOPLPUSH with \"\" at hand: %s", got)
		}
		e.evIdle(c, "BRPOPLPUSH")
		if got := e.evList("ev:b"); got != `["" "x"]` {
			t.Errorf("ev:b = %s", got)
		}
	})
}

// TestEmptyValueKeyNamedEmpty: a waiter on the key "" is served like any.
func TestEmptyValueKeyNamedEmpty(t *testing.T) {
	lbRun(t, []string{"", "ev:d"}, func(t *testing.T, e *lbEnv) {
		before := zsetBlockedClients(t, e.admin)
		c := e.conn(2)
		c.send("BLMOVE", "", "ev:d", "LEFT", "RIGHT", "0")
		zsetWaitBlocked(t, e.admin, before+1)
		e.evDo("RPUSH", "", "")
		e.evServed("BLMOVE")
		e.evExpect(c, "BLMOVE from the key \"\"", `""`)
		e.evIdle(c, "BLMOVE")
		c.send("BLPOP", "", "0")
		zsetWaitBlocked(t, e.admin, before+1)
		e.evDo("RPUSH", "", "v")
		e.evServed("BLPOP")
		e.evExpect(c, "BLPOP on the key \"\"", `["" "v"]`)
		e.evIdle(c, "BLPOP")
		if got := e.evList("ev:d"); got != `[""]` {
			t.Errorf("ev:d = %s", got)
		}
	})
}

// TestEmptyValueWakesZSetWaiter: BZPOPMIN, BZPOPMAX and BZMPOP woken by a
// ZADD of the member "" pop it once and stop waiting.
func TestEmptyValueWakesZSetWaiter(t *testing.T) {
	cases := []struct {
		cmd            string
		want, wantRESP string
	}{
		{"BZPOPMIN ev:z %s", `["ev:z" "" "1"]`, `["ev:z" "" 1]`},
		{"BZPOPMAX ev:other ev:z %s", `["ev:z" "" "1"]`, `["ev:z" "" 1]`},
		{"BZMPOP %s 1 ev:z MIN", `["ev:z" [["" "1"]]]`, `["ev:z" [["" 1]]]`},
		{"BZMPOP %s 2 ev:other ev:z MAX COUNT 3", `["ev:z" [["" "1"]]]`, `["ev:z" [["" 1]]]`},
	}
	for _, tc := range cases {
		for _, timeout := range []string{"0", "30"} {
			for _, proto := range []int{2, 3} {
				cmd := fmt.Sprintf(tc.cmd, timeout)
				want := tc.want
				if proto == 3 {
					want = tc.wantRESP
				}
				t.Run(fmt.Sprintf("%s/RESP%d", cmd, proto), func(t *testing.T) {
					lbRun(t, []string{"ev:z", "ev:other"}, func(t *testing.T, e *lbEnv) {
						c := e.block(proto, cmd)
						e.evDo("ZADD", "ev:z", "1", "")
						e.evServed(cmd)
						e.evExpect(c, cmd, want)
						e.evIdle(c, cmd)
						e.evDo("ZADD", "ev:z", "2", "x")
						e.blocked(0)
						if got := e.admin.ZRange(ctx, "ev:z", 0, -1).Val(); fmt.Sprintf("%q", got) != `["x"]` {
							t.Errorf("ev:z = %q, want [\"x\"]", got)
						}
					})
				})
			}
		}
	}
}
