package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// Blocking XREAD and XREADGROUP, on Revolver and on redis-server with the
// same expectations (the harness of lists_blocking_test.go).

// sbWire is lbWire with RESP3 maps shown as {k v ...}.
func sbWire(v resp.Value) string {
	if v.Kind == resp.KindMap {
		parts := make([]string, len(v.Elems))
		for i, x := range v.Elems {
			parts[i] = sbWire(x)
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	if v.Kind == resp.KindArray {
		parts := make([]string, len(v.Elems))
		for i, x := range v.Elems {
			parts[i] = sbWire(x)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return lbWire(v)
}

func (e *lbEnv) expectStream(c *rawConn, what, want string) {
	e.t.Helper()
	if got := sbWire(c.read()); got != want {
		e.t.Errorf("%s: got %s, want %s", what, got, want)
	}
}

// TestStreamXReadBlocking: every waiter on a stream is served by one XADD
// (reading does not consume), with only the keys that got entries, in
// RESP2 and RESP3 shapes.
func TestStreamXReadBlocking(t *testing.T) {
	lbRun(t, []string{"lb:s", "lb:t"}, func(t *testing.T, e *lbEnv) {
		w1 := e.block(2, "XREAD BLOCK 0 STREAMS lb:s $")
		w2 := e.block(3, "XREAD BLOCK 0 STREAMS lb:t lb:s $ $")
		w3 := e.block(2, "XREAD BLOCK 0 STREAMS lb:t $")
		e.do("XADD lb:s 1-1 f v")
		e.expectStream(w1, "waiter 1", "[[lb:s [[1-1 [f v]]]]]")
		e.expectStream(w2, "waiter 2 (RESP3)", "{lb:s [[1-1 [f v]]]}")
		e.blocked(1)
		e.do("XADD lb:t 7-0 a b c d")
		e.expectStream(w3, "waiter 3", "[[lb:t [[7-0 [a b c d]]]]]")
		e.blocked(0)
	})
}

// TestStreamXReadBlockingIDs: a waiter with an explicit id is served what
// follows it, COUNT bounds what it gets, a write that adds nothing past
// its id or turns the key into another type does not serve it.
func TestStreamXReadBlockingIDs(t *testing.T) {
	lbRun(t, []string{"lb:s"}, func(t *testing.T, e *lbEnv) {
		e.do("XADD lb:s 5-0 f 1")
		w := e.block(2, "XREAD COUNT 2 BLOCK 0 STREAMS lb:s 5-0")
		e.do("XDEL lb:s 5-0")
		e.blocked(1)
		e.do("DEL lb:s")
		e.do("SET lb:s x")
		e.blocked(1)
		e.do("DEL lb:s")
		p := e.admin.TxPipeline()
		p.Do(ctx, "XADD", "lb:s", "3-0", "a", "1")
		p.Do(ctx, "XADD", "lb:s", "6-0", "b", "2")
		p.Do(ctx, "XADD", "lb:s", "7-0", "c", "3")
		p.Do(ctx, "XADD", "lb:s", "8-0", "d", "4")
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		e.expectStream(w, "after EXEC", "[[lb:s [[6-0 [b 2]] [7-0 [c 3]]]]]")
		e.blocked(0)
		// Entries already past the id serve at once.
		c := e.conn(2)
		if got := sbWire(c.do("XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "lb:s", "7")); got != "[[lb:s [[8-0 [d 4]]]]]" {
			t.Errorf("served at once: %s", got)
		}
	})
}

// TestStreamXReadTimeout: BLOCK is in milliseconds; the reply to a
// timeout is a null array (RESP3 null).
func TestStreamXReadTimeout(t *testing.T) {
	lbRun(t, []string{"lb:s"}, func(t *testing.T, e *lbEnv) {
		for _, proto := range []int{2, 3} {
			c := e.conn(proto)
			start := time.Now()
			got := sbWire(c.do("XREAD", "BLOCK", "100", "STREAMS", "lb:s", "$"))
			if want := map[int]string{2: "*-1", 3: "_"}[proto]; got != want {
				t.Errorf("RESP%d: %s, want %s", proto, got, want)
			}
			if took := time.Since(start); took < 90*time.Millisecond || took > 2*time.Second {
				t.Errorf("RESP%d: timed out after %v", proto, took)
			}
		}
		// CLIENT UNBLOCK ends the wait like a timeout; with ERROR, with
		// Redis's UNBLOCKED error.
		for _, how := range []string{"TIMEOUT", "ERROR"} {
			c := e.conn(2)
			id := c.do("CLIENT", "ID").Int
			before := zsetBlockedClients(t, e.admin)
			c.send("XREAD", "BLOCK", "0", "STREAMS", "lb:s", "$")
			zsetWaitBlocked(t, e.admin, before+1)
			if n := e.admin.Do(ctx, "CLIENT", "UNBLOCK", id, how).Val(); n != int64(1) {
				t.Fatalf("CLIENT UNBLOCK: %v", n)
			}
			want := map[string]string{"TIMEOUT": "*-1", "ERROR": "-UNBLOCKED client unblocked via CLIENT UNBLOCK"}[how]
			e.expectStream(c, "unblocked "+how, want)
		}
		e.blocked(0)
	})
}

// TestStreamXReadGroupBlocking: waiters of one group share the new
// entries (each entry goes to one consumer), the served ones are pending,
// and destroying the group ends the wait with NOGROUP.
func TestStreamXReadGroupBlocking(t *testing.T) {
	lbRun(t, []string{"lb:s"}, func(t *testing.T, e *lbEnv) {
		e.do("XGROUP CREATE lb:s g $ MKSTREAM")
		e.do("XGROUP CREATE lb:s h $")
		w1 := e.block(2, "XREADGROUP GROUP g alice BLOCK 0 STREAMS lb:s >")
		w2 := e.block(3, "XREADGROUP GROUP g bob COUNT 5 BLOCK 0 STREAMS lb:s >")
		w3 := e.block(2, "XREADGROUP GROUP h carol NOACK BLOCK 0 STREAMS lb:s >")
		e.do("XADD lb:s 1-0 f 1")
		e.expectStream(w1, "alice", "[[lb:s [[1-0 [f 1]]]]]")
		e.expectStream(w3, "carol", "[[lb:s [[1-0 [f 1]]]]]")
		e.blocked(1)
		e.do("XADD lb:s 2-0 f 2")
		e.expectStream(w2, "bob", "{lb:s [[2-0 [f 2]]]}")
		e.blocked(0)
		c := e.conn(2)
		if got := sbWire(c.do("XPENDING", "lb:s", "g")); got != "[:2 1-0 2-0 [[alice 1] [bob 1]]]" {
			t.Errorf("XPENDING g: %s", got)
		}
		if got := sbWire(c.do("XPENDING", "lb:s", "h")); got != "[:0 $-1 $-1 *-1]" {
			t.Errorf("XPENDING h: %s", got)
		}
		w4 := e.block(2, "XREADGROUP GROUP g alice BLOCK 0 STREAMS lb:s >")
		e.do("XGROUP DESTROY lb:s g")
		e.expectStream(w4, "group destroyed", "-NOGROUP the consumer group this client was blocked on no longer exists")
		e.blocked(0)
		// A history read never blocks.
		e.do("XGROUP CREATE lb:s g 0")
		if got := sbWire(c.do("XREADGROUP", "GROUP", "g", "dave", "BLOCK", "0", "STREAMS", "lb:s", "0")); got != "[[lb:s []]]" {
			t.Errorf("history read: %s", got)
		}
	})
}

// TestStreamXReadGroupTimeout: a timed-out XREADGROUP replies null and
// creates no consumer.
func TestStreamXReadGroupTimeout(t *testing.T) {
	lbRun(t, []string{"lb:s"}, func(t *testing.T, e *lbEnv) {
		e.do("XGROUP CREATE lb:s g $ MKSTREAM")
		c := e.conn(2)
		if got := sbWire(c.do("XREADGROUP", "GROUP", "g", "zed", "BLOCK", "50", "STREAMS", "lb:s", ">")); got != "*-1" {
			t.Errorf("timeout: %s", got)
		}
		if got := sbWire(c.do("XINFO", "GROUPS", "lb:s")); got != "[[name g consumers :0 pending :0 last-delivered-id 0-0 entries-read $-1 lag :0]]" {
			t.Errorf("XINFO GROUPS: %s", got)
		}
	})
}

// TestStreamXReadGroupKeyGone: deleting or overwriting the stream ends an
// XREADGROUP wait with UNBLOCKED; an XREAD waiter stays.
func TestStreamXReadGroupKeyGone(t *testing.T) {
	lbRun(t, []string{"lb:s"}, func(t *testing.T, e *lbEnv) {
		for _, gone := range []string{"DEL lb:s", "SET lb:s x", "FLUSHDB"} {
			e.do("DEL lb:s")
			e.do("XGROUP CREATE lb:s g $ MKSTREAM")
			r := e.block(2, "XREAD BLOCK 0 STREAMS lb:s $")
			w := e.block(2, "XREADGROUP GROUP g alice BLOCK 0 STREAMS lb:s >")
			e.do(gone)
			e.expectStream(w, gone, "-UNBLOCKED the stream key no longer exists")
			e.blocked(1)
			e.do("DEL lb:s")
			e.do("XADD lb:s 1-0 f v")
			e.expectStream(r, "XREAD after "+gone, "[[lb:s [[1-0 [f v]]]]]")
			e.blocked(0)
		}
	})
}
