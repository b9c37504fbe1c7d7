package tests

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/resp"
)

// The DELAY family (SPEC.md §2) through go-redis in RESP2 and RESP3, and
// through raw connections where the exact reply type matters.

// delayClient is goRedis with a read timeout long enough for the BLOCKs
// these tests use (go-redis's default of 3 s does not know about BLOCK).
func delayClient(t testing.TB, addr string, proto int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, DisableIdentity: proto == 2,
		ReadTimeout: 15 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// delayFired is one timer DELAY.POP delivered.
type delayFired struct {
	member  string
	payload *string // nil: the timer has no payload
	due     int64
	fires   int64
}

func (f delayFired) String() string {
	p := "nil"
	if f.payload != nil {
		p = strconv.Quote(*f.payload)
	}
	return fmt.Sprintf("[%s %s %d %d]", f.member, p, f.due, f.fires)
}

// key is what identifies a delivery (a redelivery repeats it exactly).
func (f delayFired) key() string { return f.String() }

func parseFired(v any) ([]delayFired, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("DELAY.POP reply %#v is not an array", v)
	}
	out := make([]delayFired, 0, len(arr))
	for _, e := range arr {
		el, ok := e.([]any)
		if !ok || len(el) != 4 {
			return nil, fmt.Errorf("DELAY.POP element %#v is not a 4-element array", e)
		}
		var f delayFired
		var ok1, ok3, ok4 bool
		f.member, ok1 = el[0].(string)
		f.due, ok3 = el[2].(int64)
		f.fires, ok4 = el[3].(int64)
		if p, isStr := el[1].(string); isStr {
			f.payload = &p
		} else if el[1] != nil {
			return nil, fmt.Errorf("DELAY.POP payload %#v is neither a string nor nil", el[1])
		}
		if !ok1 || !ok3 || !ok4 {
			return nil, fmt.Errorf("DELAY.POP element %#v: want [string, payload, int, int]", e)
		}
		out = append(out, f)
	}
	return out, nil
}

// delayPop runs DELAY.POP key opts...; the error is redis.Nil when a BLOCK
// timed out.
func delayPop(c *redis.Client, key string, opts ...any) ([]delayFired, error) {
	v, err := c.Do(ctx, append([]any{"DELAY.POP", key}, opts...)...).Result()
	if err != nil {
		return nil, err
	}
	return parseFired(v)
}

// mustPop is delayPop for calls that must succeed (a nil reply fails).
func mustPop(t testing.TB, c *redis.Client, key string, opts ...any) []delayFired {
	t.Helper()
	f, err := delayPop(c, key, opts...)
	if err != nil {
		t.Fatalf("DELAY.POP %s %v: %v", key, opts, err)
	}
	return f
}

func firedString(fs []delayFired) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, " ")
}

// dInt runs a command that must answer an integer.
func dInt(t testing.TB, c *redis.Client, args ...any) int64 {
	t.Helper()
	n, err := c.Do(ctx, args...).Int64()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return n
}

// dueList renders DELAY.RANGE / DELAY.NEXT pairs as "member:due ...".
func dueList(t testing.TB, v any) string {
	t.Helper()
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("reply %#v is not an array", v)
	}
	var parts []string
	for _, e := range arr {
		p, ok := e.([]any)
		if !ok || len(p) != 2 {
			t.Fatalf("element %#v is not a [member, due] pair", e)
		}
		parts = append(parts, fmt.Sprintf("%v:%v", p[0], p[1]))
	}
	return strings.Join(parts, " ")
}

func dRange(t testing.TB, c *redis.Client, key string, args ...any) string {
	t.Helper()
	v, err := c.Do(ctx, append([]any{"DELAY.RANGE", key}, args...)...).Result()
	if err != nil {
		t.Fatalf("DELAY.RANGE %s %v: %v", key, args, err)
	}
	return dueList(t, v)
}

// dNext is DELAY.NEXT as "member:due", or "nil".
func dNext(t testing.TB, c *redis.Client, key string) string {
	t.Helper()
	v, err := c.Do(ctx, "DELAY.NEXT", key).Result()
	if err == redis.Nil {
		return "nil"
	}
	if err != nil {
		t.Fatalf("DELAY.NEXT %s: %v", key, err)
	}
	return dueList(t, []any{v})
}

// nextDue is the due time of key's earliest timer.
func nextDue(t testing.TB, c *redis.Client, key string) int64 {
	t.Helper()
	v, err := c.Do(ctx, "DELAY.NEXT", key).Slice()
	if err != nil || len(v) != 2 {
		t.Fatalf("DELAY.NEXT %s: %v %v", key, v, err)
	}
	return v[1].(int64)
}

func strp(s string) *string { return &s }

func forProtocols(t *testing.T, f func(t *testing.T, proto int)) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) { f(t, proto) })
	}
}

// onServer runs f against one fresh server, once per protocol, with an
// empty keyspace each time.
func onServer(t *testing.T, f func(t *testing.T, c *redis.Client)) {
	srv := startServer(t)
	forProtocols(t, func(t *testing.T, proto int) {
		c := delayClient(t, srv.Addr(), proto)
		c.FlushAll(ctx)
		f(t, c)
	})
}

// TestDelayAddAndQuery: DELAY.ADD's 1/0 with NX and XX, and what TTL, LEN,
// NEXT and RANGE report (future due times, so nothing moves meanwhile).
func TestDelayAddAndQuery(t *testing.T) {
	onServer(t, func(t *testing.T, c *redis.Client) {
		if n := dInt(t, c, "DELAY.ADD", "q", "a", "IN", 100000); n != 1 {
			t.Errorf("new timer: %d, want 1", n)
		}
		if n := dInt(t, c, "DELAY.ADD", "q", "a", "IN", 200000); n != 0 {
			t.Errorf("updated timer: %d, want 0", n)
		}
		if ttl := dInt(t, c, "DELAY.TTL", "q", "a"); ttl <= 100000 || ttl > 200000 {
			t.Errorf("TTL after the update: %d, want (100000, 200000]", ttl)
		}
		if n := dInt(t, c, "DELAY.ADD", "q", "a", "IN", 5, "NX"); n != 0 {
			t.Errorf("NX on an existing timer: %d", n)
		}
		if ttl := dInt(t, c, "DELAY.TTL", "q", "a"); ttl <= 100000 {
			t.Errorf("NX changed the timer: TTL %d", ttl)
		}
		if n := dInt(t, c, "DELAY.ADD", "q", "nx", "IN", 300000, "NX"); n != 1 {
			t.Errorf("NX on a new timer: %d", n)
		}
		if n := dInt(t, c, "DELAY.ADD", "q", "xx", "IN", 5, "XX"); n != 0 {
			t.Errorf("XX on a missing timer: %d", n)
		}
		if ttl := dInt(t, c, "DELAY.TTL", "q", "xx"); ttl != -2 {
			t.Errorf("XX created a timer: TTL %d", ttl)
		}
		if n := dInt(t, c, "DELAY.ADD", "q", "a", "in", 50000, "xx"); n != 0 {
			t.Errorf("XX on an existing timer: %d", n)
		}
		if ttl := dInt(t, c, "DELAY.TTL", "q", "a"); ttl > 50000 || ttl < 40000 {
			t.Errorf("XX did not update: TTL %d", ttl)
		}
		if n := dInt(t, c, "DELAY.ADD", "nokey", "m", "IN", 5, "XX"); n != 0 {
			t.Errorf("XX on a missing key: %d", n)
		}
		if n := dInt(t, c, "EXISTS", "nokey"); n != 0 {
			t.Errorf("DELAY.ADD XX created its key")
		}
		if n := dInt(t, c, "DELAY.LEN", "q"); n != 2 {
			t.Errorf("LEN %d, want 2", n)
		}
		for _, tc := range []struct {
			args []any
			want int64
		}{{[]any{"DELAY.LEN", "nokey"}, 0}, {[]any{"DELAY.TTL", "nokey", "m"}, -2}, {[]any{"DELAY.TTL", "q", "nosuch"}, -2}} {
			if n := dInt(t, c, tc.args...); n != tc.want {
				t.Errorf("%v = %d, want %d", tc.args, n, tc.want)
			}
		}
		// A timer due in the past is due now: TTL 0.
		dInt(t, c, "DELAY.ADD", "q", "past", "AT", 1)
		if ttl := dInt(t, c, "DELAY.TTL", "q", "past"); ttl != 0 {
			t.Errorf("TTL of a due timer: %d", ttl)
		}
		if got := dNext(t, c, "q"); got != "past:1" {
			t.Errorf("NEXT = %s, want past:1", got)
		}
		if got := dNext(t, c, "nokey"); got != "nil" {
			t.Errorf("NEXT on a missing key = %s", got)
		}

		// RANGE over fixed due times, with a tie (member order breaks it).
		c.Del(ctx, "r")
		base := (time.Now().UnixMilli()/1000 + 3600) * 1000
		for _, m := range []struct {
			name string
			at   int64
		}{{"d", 30}, {"b", 20}, {"c", 20}, {"a", 10}, {"B", 20}, {"e", 40}} {
			dInt(t, c, "DELAY.ADD", "r", m.name, "AT", base+m.at)
		}
		at := func(off int64) string { return strconv.FormatInt(base+off, 10) }
		pair := func(m string, off int64) string { return fmt.Sprintf("%s:%d", m, base+off) }
		all := strings.Join([]string{pair("a", 10), pair("B", 20), pair("b", 20), pair("c", 20), pair("d", 30),
			pair("e", 40)}, " ")
		cases := []struct {
			args []any
			want string
		}{
			{[]any{"-inf", "+inf"}, all},
			{[]any{"-INF", "inf"}, all},
			{[]any{0, at(1000)}, all},
			{[]any{at(10), at(20)}, strings.Join([]string{pair("a", 10), pair("B", 20), pair("b", 20), pair("c", 20)}, " ")},
			{[]any{at(11), at(29)}, strings.Join([]string{pair("B", 20), pair("b", 20), pair("c", 20)}, " ")},
			{[]any{at(20), at(20)}, strings.Join([]string{pair("B", 20), pair("b", 20), pair("c", 20)}, " ")},
			{[]any{at(21), at(29)}, ""},
			{[]any{at(30), at(10)}, ""},
			{[]any{"-inf", "+inf", "LIMIT", 1, 2}, strings.Join([]string{pair("B", 20), pair("b", 20)}, " ")},
			{[]any{"-inf", "+inf", "limit", 2, -1}, strings.Join([]string{pair("b", 20), pair("c", 20), pair("d", 30),
				pair("e", 40)}, " ")},
			{[]any{at(20), "+inf", "LIMIT", 0, 1}, pair("B", 20)},
			{[]any{"-inf", "+inf", "LIMIT", 10, 5}, ""},
			{[]any{"-inf", "+inf", "LIMIT", 0, 0}, ""},
			{[]any{"-inf", "+inf", "LIMIT", -1, 5}, ""},
		}
		for _, tc := range cases {
			if got := dRange(t, c, "r", tc.args...); got != tc.want {
				t.Errorf("RANGE r %v:\n got %s\nwant %s", tc.args, got, tc.want)
			}
		}
		if got := dRange(t, c, "nokey", "-inf", "+inf"); got != "" {
			t.Errorf("RANGE on a missing key: %s", got)
		}
		if got := dNext(t, c, "r"); got != pair("a", 10) {
			t.Errorf("NEXT r = %s", got)
		}
	})
}

// TestDelayErrors: the exact error of every malformed call, and that none
// of them changes anything.
func TestDelayErrors(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	c.do("SET", "str", "v")
	c.do("DELAY.ADD", "q", "m", "IN", "100000")
	const notInt = "ERR value is not an integer or out of range"
	cases := []struct {
		args string
		want string
	}{
		{"DELAY.ADD q m IN 5 AT 5", "ERR IN and AT cannot be used together"},
		{"DELAY.ADD q m AT 5 IN 5", "ERR IN and AT cannot be used together"},
		{"DELAY.ADD q m EVERY 5 PAYLOAD x", "ERR DELAY.ADD needs IN or AT"},
		{"DELAY.ADD q m NX XX", "ERR DELAY.ADD needs IN or AT"},
		{"DELAY.ADD q m IN -1", "ERR IN must not be negative"},
		{"DELAY.ADD q m AT -1", "ERR AT must not be negative"},
		{"DELAY.ADD q m IN 5 EVERY 0", "ERR EVERY must be at least 1 ms"},
		{"DELAY.ADD q m IN 5 EVERY -5", "ERR EVERY must be at least 1 ms"},
		{"DELAY.ADD q m IN abc", notInt},
		{"DELAY.ADD q m IN 1.5", notInt},
		{"DELAY.ADD q m AT 99999999999999999999", notInt},
		{"DELAY.ADD q m IN 5 EVERY x", notInt},
		{"DELAY.ADD q m IN PAYLOAD", notInt},
		{"DELAY.ADD q m IN 5 FOO 1", "ERR syntax error, unknown option 'FOO' for 'delay.add'"},
		{"DELAY.ADD q m IN 5 foo", "ERR syntax error, unknown option 'FOO' for 'delay.add'"},
		{"DELAY.ADD q m IN 5 PAYLOAD", "ERR syntax error, option 'PAYLOAD' needs a value"},
		{"DELAY.ADD q m IN 5 EVERY", "ERR syntax error, option 'EVERY' needs a value"},
		{"DELAY.ADD q m IN 5 in 6", "ERR syntax error, option 'IN' given more than once"},
		{"DELAY.ADD q m IN 5 PAYLOAD a PAYLOAD b", "ERR syntax error, option 'PAYLOAD' given more than once"},
		{"DELAY.ADD q m IN 5 NX NX", "ERR syntax error, option 'NX' given more than once"},
		{"DELAY.ADD q m IN 5 NX XX", "ERR XX and NX options at the same time are not compatible"},
		{"DELAY.ADD q m IN 9007199254740993", "ERR IN is out of range"},
		{"DELAY.ADD q m AT 9007199254740993", "ERR AT is out of range"},
		{"DELAY.ADD q m IN 5 EVERY 9007199254740993", "ERR EVERY is out of range"},
		{"DELAY.ADD str m IN 5", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"DELAY.ADD q m IN", "ERR wrong number of arguments for 'delay.add' command"},
		{"DELAY.ADD q m", "ERR wrong number of arguments for 'delay.add' command"},
		{"DELAY.TOUCH q m", "ERR wrong number of arguments for 'delay.touch' command"},
		{"DELAY.TOUCH q m 5 6", "ERR wrong number of arguments for 'delay.touch' command"},
		{"DELAY.TOUCH q m x", notInt},
		{"DELAY.TOUCH q m -1", "ERR milliseconds must not be negative"},
		{"DELAY.TOUCH q m 9007199254740993", "ERR milliseconds is out of range"},
		{"DELAY.TOUCH str m 5", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"DELAY.CANCEL q", "ERR wrong number of arguments for 'delay.cancel' command"},
		{"DELAY.CANCEL str m", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"DELAY.TTL q", "ERR wrong number of arguments for 'delay.ttl' command"},
		{"DELAY.TTL str m", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"DELAY.POP", "ERR wrong number of arguments for 'delay.pop' command"},
		{"DELAY.POP q COUNT 0", "ERR COUNT must be positive"},
		{"DELAY.POP q COUNT -3", "ERR COUNT must be positive"},
		{"DELAY.POP q COUNT x", notInt},
		{"DELAY.POP q COUNT", "ERR syntax error, option 'COUNT' needs a value"},
		{"DELAY.POP q LEASE 0", "ERR LEASE must be at least 1 ms"},
		{"DELAY.POP q LEASE -1", "ERR LEASE must be at least 1 ms"},
		{"DELAY.POP q BLOCK -1", "ERR BLOCK must not be negative"},
		{"DELAY.POP q BLOCK 1.5", notInt},
		{"DELAY.POP q BLOCK 100 BLOCK 100", "ERR syntax error, option 'BLOCK' given more than once"},
		{"DELAY.POP q WAIT 5", "ERR syntax error, unknown option 'WAIT' for 'delay.pop'"},
		{"DELAY.POP str", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"DELAY.POP str BLOCK 0", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"DELAY.ACK q", "ERR wrong number of arguments for 'delay.ack' command"},
		{"DELAY.ACK str m", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"DELAY.LEN", "ERR wrong number of arguments for 'delay.len' command"},
		{"DELAY.LEN str", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"DELAY.NEXT str", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"DELAY.RANGE q 0", "ERR wrong number of arguments for 'delay.range' command"},
		{"DELAY.RANGE q a 5", notInt},
		{"DELAY.RANGE q 0 (5", notInt},
		{"DELAY.RANGE q 0 5 LIMIT 1", "ERR syntax error"},
		{"DELAY.RANGE q 0 5 LIMIT x 1", notInt},
		{"DELAY.RANGE q 0 5 BYSCORE", "ERR syntax error"},
		{"DELAY.RANGE str 0 5", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"GET q", "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"ZADD q 1 m", "WRONGTYPE Operation against a key holding the wrong kind of value"},
	}
	for _, tc := range cases {
		args, _ := splitCommandLine(tc.args)
		v := c.do(args...)
		if v.Kind != resp.KindError || v.Str != tc.want {
			t.Errorf("%s:\n got %s\nwant error %q", tc.args, v, tc.want)
		}
	}
	if v := c.do("DELAY.RANGE", "q", "-inf", "+inf"); len(v.Elems) != 1 || v.Elems[0].Elems[0].Str != "m" {
		t.Errorf("the failed calls changed q: %s", v)
	}
	if v := c.do("GET", "str"); v.Str != "v" {
		t.Errorf("the failed calls changed str: %s", v)
	}
}

// TestDelayTouch: TOUCH moves a timer earlier or later, keeps its period
// and payload, ends its lease, and never creates one.
func TestDelayTouch(t *testing.T) {
	onServer(t, func(t *testing.T, c *redis.Client) {
		if n := dInt(t, c, "DELAY.TOUCH", "nokey", "m", 5); n != 0 {
			t.Errorf("TOUCH on a missing key: %d", n)
		}
		if n := dInt(t, c, "EXISTS", "nokey"); n != 0 {
			t.Error("TOUCH created a key")
		}
		dInt(t, c, "DELAY.ADD", "q", "a", "IN", 100000, "EVERY", 60000, "PAYLOAD", "pa")
		if n := dInt(t, c, "DELAY.TOUCH", "q", "nosuch", 5); n != 0 {
			t.Errorf("TOUCH on a missing member: %d", n)
		}
		if n := dInt(t, c, "DELAY.LEN", "q"); n != 1 {
			t.Errorf("TOUCH created a member: LEN %d", n)
		}
		if n := dInt(t, c, "DELAY.TOUCH", "q", "a", 1000); n != 1 {
			t.Errorf("TOUCH earlier: %d", n)
		}
		if ttl := dInt(t, c, "DELAY.TTL", "q", "a"); ttl > 1000 || ttl < 500 {
			t.Errorf("TTL after TOUCH 1000: %d", ttl)
		}
		if n := dInt(t, c, "DELAY.TOUCH", "q", "a", 500000); n != 1 {
			t.Errorf("TOUCH later: %d", n)
		}
		if ttl := dInt(t, c, "DELAY.TTL", "q", "a"); ttl > 500000 || ttl < 400000 {
			t.Errorf("TTL after TOUCH 500000: %d", ttl)
		}
		// TOUCH 0 makes it due now; it keeps payload and period.
		before := time.Now().UnixMilli()
		dInt(t, c, "DELAY.TOUCH", "q", "a", 0)
		after := time.Now().UnixMilli()
		got := mustPop(t, c, "q")
		if len(got) != 1 || got[0].member != "a" || got[0].payload == nil || *got[0].payload != "pa" ||
			got[0].fires != 1 || got[0].due < before || got[0].due > after {
			t.Fatalf("pop after TOUCH 0: %s, want [a \"pa\" %d..%d 1]", firedString(got), before, after)
		}
		if due := nextDue(t, c, "q"); due != got[0].due+60000 {
			t.Errorf("re-armed at %d, want due+period %d", due, got[0].due+60000)
		}
		// TOUCH ends a lease: ACK then finds nothing leased.
		dInt(t, c, "DELAY.ADD", "q", "b", "AT", 1)
		if got := mustPop(t, c, "q", "LEASE", 100000); len(got) != 1 || got[0].member != "b" {
			t.Fatalf("leased pop: %s", firedString(got))
		}
		if n := dInt(t, c, "DELAY.TOUCH", "q", "b", 200000); n != 1 {
			t.Errorf("TOUCH on a leased timer: %d", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "b"); n != 0 {
			t.Errorf("ACK after TOUCH: %d, want 0 (the lease ended)", n)
		}
		if ttl := dInt(t, c, "DELAY.TTL", "q", "b"); ttl <= 100000 || ttl > 200000 {
			t.Errorf("TTL of the touched timer: %d", ttl)
		}
	})
}

// TestDelayCancel: CANCEL counts what it removed, leased timers included,
// and the key goes with its last timer.
func TestDelayCancel(t *testing.T) {
	onServer(t, func(t *testing.T, c *redis.Client) {
		if n := dInt(t, c, "DELAY.CANCEL", "nokey", "a"); n != 0 {
			t.Errorf("CANCEL on a missing key: %d", n)
		}
		dInt(t, c, "DELAY.ADD", "q", "a", "IN", 100000)
		dInt(t, c, "DELAY.ADD", "q", "b", "IN", 100000, "EVERY", 10)
		dInt(t, c, "DELAY.ADD", "q", "c", "AT", 1)
		if got := mustPop(t, c, "q", "LEASE", 100000); len(got) != 1 || got[0].member != "c" {
			t.Fatalf("leased pop: %s", firedString(got))
		}
		if n := dInt(t, c, "DELAY.CANCEL", "q", "a", "nosuch", "c", "a"); n != 2 {
			t.Errorf("CANCEL a nosuch c a: %d, want 2", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "c"); n != 0 {
			t.Errorf("ACK of a cancelled leased timer: %d", n)
		}
		if n := dInt(t, c, "DELAY.LEN", "q"); n != 1 {
			t.Errorf("LEN %d, want 1", n)
		}
		if n := dInt(t, c, "DELAY.CANCEL", "q", "b"); n != 1 {
			t.Errorf("CANCEL b: %d", n)
		}
		if n := dInt(t, c, "EXISTS", "q"); n != 0 {
			t.Error("the key outlived its last timer")
		}
	})
}

// TestDelayPopOrder: due timers come out earliest first, ties in member
// byte order, with nil and empty payloads told apart; a one-shot timer
// leaves, and the key with its last timer.
func TestDelayPopOrder(t *testing.T) {
	onServer(t, func(t *testing.T, c *redis.Client) {
		if got := mustPop(t, c, "nokey"); len(got) != 0 {
			t.Errorf("pop on a missing key: %s", firedString(got))
		}
		for _, a := range [][]any{
			{"b", "AT", 2000}, {"a", "AT", 2000}, {"c", "AT", 1000}, {"B", "AT", 2000}, {"aa", "AT", 2000},
			{"z", "AT", 3000, "PAYLOAD", ""}, {"y", "AT", 3000, "PAYLOAD", "hello"},
			{"bin", "AT", 4000, "PAYLOAD", "a\x00b\r\nc"}, {"future", "IN", 100000, "PAYLOAD", "later"},
		} {
			dInt(t, c, append([]any{"DELAY.ADD", "q"}, a...)...)
		}
		if got := mustPop(t, c, "nokey"); len(got) != 0 {
			t.Errorf("pop on a missing key: %s", firedString(got))
		}
		steps := []struct {
			opts []any
			want []delayFired
		}{
			{nil, []delayFired{{"c", nil, 1000, 1}}},
			{[]any{"COUNT", 3}, []delayFired{{"B", nil, 2000, 1}, {"a", nil, 2000, 1}, {"aa", nil, 2000, 1}}},
			{[]any{"count", 100}, []delayFired{{"b", nil, 2000, 1}, {"y", strp("hello"), 3000, 1},
				{"z", strp(""), 3000, 1}, {"bin", strp("a\x00b\r\nc"), 4000, 1}}},
			{[]any{"COUNT", 100}, nil},
		}
		for _, s := range steps {
			if got := mustPop(t, c, "q", s.opts...); firedString(got) != firedString(s.want) {
				t.Errorf("DELAY.POP q %v:\n got %s\nwant %s", s.opts, firedString(got), firedString(s.want))
			}
		}
		if got := dRange(t, c, "q", "-inf", "+inf"); !strings.HasPrefix(got, "future:") {
			t.Errorf("left in q: %s, want only future", got)
		}
		// An update replaces period and payload wholesale.
		dInt(t, c, "DELAY.ADD", "q", "p", "AT", 5, "EVERY", 1000, "PAYLOAD", "x")
		if n := dInt(t, c, "DELAY.ADD", "q", "p", "AT", 6); n != 0 {
			t.Errorf("update: %d", n)
		}
		if got := mustPop(t, c, "q"); firedString(got) != "[p nil 6 1]" {
			t.Errorf("pop after the update: %s, want [p nil 6 1] (no payload, one-shot)", firedString(got))
		}
		if n := dInt(t, c, "DELAY.TTL", "q", "p"); n != -2 {
			t.Errorf("the updated timer kept its period: TTL %d", n)
		}
		dInt(t, c, "DELAY.CANCEL", "q", "future")
		dInt(t, c, "DELAY.ADD", "solo", "m", "AT", 7)
		if got := mustPop(t, c, "solo", "COUNT", 5); firedString(got) != "[m nil 7 1]" {
			t.Errorf("solo pop: %s", firedString(got))
		}
		if n := dInt(t, c, "EXISTS", "q", "solo"); n != 0 {
			t.Errorf("%d keys outlived their last timer", n)
		}
	})
}

// TestDelayManyMembers: members of every length, binary ones and the empty
// one included, come out whole, in (due, member byte) order, each with its
// own payload, whether popped and gone or leased and acknowledged.
func TestDelayManyMembers(t *testing.T) {
	srv := startServer(t)
	forProtocols(t, func(t *testing.T, proto int) {
		c := delayClient(t, srv.Addr(), proto)
		c.FlushAll(ctx)
		type timer struct {
			member string
			due    int64
		}
		all := []timer{{"", 1000}}
		rng := rand.New(rand.NewSource(int64(proto)))
		for i := 0; i < 300; i++ {
			b := make([]byte, rng.Intn(70))
			for j := range b {
				b[j] = byte(rng.Intn(256))
			}
			m := string(b)
			if slices.ContainsFunc(all, func(x timer) bool { return x.member == m }) {
				continue
			}
			all = append(all, timer{m, int64(1000 + rng.Intn(50))})
		}
		for _, lease := range []bool{false, true} {
			p := c.Pipeline()
			for _, x := range all {
				p.Do(ctx, "DELAY.ADD", "q", x.member, "AT", x.due, "PAYLOAD", "p:"+x.member)
			}
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			var got []delayFired
			for len(got) < len(all) {
				opts := []any{"COUNT", 37}
				if lease {
					opts = append(opts, "LEASE", 100000)
				}
				f := mustPop(t, c, "q", opts...)
				if len(f) == 0 {
					t.Fatalf("popped %d of %d, then nothing", len(got), len(all))
				}
				got = append(got, f...)
			}
			want := slices.Clone(all)
			slices.SortFunc(want, func(a, b timer) int {
				if a.due != b.due {
					return int(a.due - b.due)
				}
				return strings.Compare(a.member, b.member)
			})
			for i, f := range got {
				if i >= len(want) || f.member != want[i].member || f.due != want[i].due || f.payload == nil ||
					*f.payload != "p:"+f.member || f.fires != 1 {
					t.Fatalf("lease %v: delivery %d is %s, want %q due %d", lease, i, f, want[min(i, len(want)-1)].member,
						want[min(i, len(want)-1)].due)
				}
			}
			if lease {
				args := []any{"DELAY.ACK", "q"}
				for _, x := range all {
					args = append(args, x.member)
				}
				if n := dInt(t, c, args...); n != int64(len(all)) {
					t.Errorf("ACK of every leased timer: %d, want %d", n, len(all))
				}
			}
			if n := dInt(t, c, "EXISTS", "q"); n != 0 {
				t.Errorf("lease %v: q outlived its timers", lease)
			}
		}
	})
}

// TestDelayRecurring: EVERY re-arms at a whole number of periods after the
// due time (fixed rate), and a late pop reports every period that came due
// in fires.
func TestDelayRecurring(t *testing.T) {
	onServer(t, func(t *testing.T, c *redis.Client) {
		// Catch-up from the past, with a long period: fires is counted.
		const p = 1000
		due0 := time.Now().UnixMilli() - 10*p - p/2
		dInt(t, c, "DELAY.ADD", "q", "m", "AT", due0, "EVERY", p, "PAYLOAD", "pl")
		before := time.Now().UnixMilli()
		got := mustPop(t, c, "q")
		after := time.Now().UnixMilli()
		lo, hi := 1+(before-due0)/p, 1+(after-due0)/p
		if len(got) != 1 || got[0].member != "m" || got[0].due != due0 || got[0].fires < lo || got[0].fires > hi ||
			got[0].payload == nil || *got[0].payload != "pl" {
			t.Fatalf("catch-up pop: %s, want [m \"pl\" %d %d..%d]", firedString(got), due0, lo, hi)
		}
		if due := nextDue(t, c, "q"); due != due0+got[0].fires*p {
			t.Errorf("re-armed at %d, want %d (due + fires*period)", due, due0+got[0].fires*p)
		}
		if n := dInt(t, c, "DELAY.LEN", "q"); n != 1 {
			t.Errorf("a recurring timer left the key: LEN %d", n)
		}
		c.Del(ctx, "q")

		// Live: a 50 ms ticker, popped as it comes due and sometimes late.
		// The delivered due times never drift from the schedule.
		const tick = 50
		dInt(t, c, "DELAY.ADD", "q", "tick", "IN", tick, "EVERY", tick)
		var all []delayFired
		sawCatchUp := false
		for total := int64(0); total < 12; {
			late := len(all)%3 == 1
			if late {
				time.Sleep(130 * time.Millisecond) // makes at least two periods come due
			}
			f := mustPop(t, c, "q", "BLOCK", 3000)
			now := time.Now().UnixMilli()
			if len(f) != 1 || f[0].member != "tick" || f[0].fires < 1 || f[0].due > now {
				t.Fatalf("tick pop: %s (at %d)", firedString(f), now)
			}
			if n := len(all); n > 0 && f[0].due != all[n-1].due+all[n-1].fires*tick {
				t.Fatalf("delivered due %d after %s: the schedule drifted", f[0].due, all[n-1])
			}
			if late && f[0].fires < 2 {
				t.Errorf("a pop 130 ms late delivered %s, want fires >= 2", f[0])
			}
			sawCatchUp = sawCatchUp || f[0].fires > 1
			all = append(all, f[0])
			total += f[0].fires
		}
		if !sawCatchUp {
			t.Errorf("no catch-up seen: %s", firedString(all))
		}
	})
}

// TestDelayLeaseAck: a leased timer stays (LEN, NEXT at its lease end) and
// is not popped again; ACK settles it (one-shot: gone, recurring: re-armed
// from the delivered due time); ACK without a lease answers 0.
func TestDelayLeaseAck(t *testing.T) {
	onServer(t, func(t *testing.T, c *redis.Client) {
		const p = 1000
		due0 := time.Now().UnixMilli() - 2*p - p/2
		dInt(t, c, "DELAY.ADD", "q", "one", "AT", 1000, "PAYLOAD", "p1")
		dInt(t, c, "DELAY.ADD", "q", "rec", "AT", due0, "EVERY", p)
		dInt(t, c, "DELAY.ADD", "q", "later", "IN", 500000)
		before := time.Now().UnixMilli()
		got := mustPop(t, c, "q", "COUNT", 10, "LEASE", 100000)
		if len(got) != 2 || firedString(got[:1]) != `[one "p1" 1000 1]` || got[1].member != "rec" ||
			got[1].due != due0 || got[1].fires < 3 {
			t.Fatalf("leased pop: %s", firedString(got))
		}
		rec := got[1]
		if n := dInt(t, c, "DELAY.LEN", "q"); n != 3 {
			t.Errorf("LEN with two leased: %d, want 3", n)
		}
		if again := mustPop(t, c, "q", "COUNT", 10); len(again) != 0 {
			t.Errorf("leased timers popped again: %s", firedString(again))
		}
		if ttl := dInt(t, c, "DELAY.TTL", "q", "one"); ttl <= 90000 || ttl > 100000 {
			t.Errorf("TTL of a leased timer: %d, want the lease's rest", ttl)
		}
		if due := nextDue(t, c, "q"); due < before+100000 || due > time.Now().UnixMilli()+100000 {
			t.Errorf("NEXT due %d, want the lease end", due)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "one", "nosuch", "later"); n != 1 {
			t.Errorf("ACK one nosuch later: %d, want 1", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "one"); n != 0 {
			t.Errorf("second ACK: %d", n)
		}
		if n := dInt(t, c, "DELAY.TTL", "q", "one"); n != -2 {
			t.Errorf("an acknowledged one-shot timer stayed: TTL %d", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "rec"); n != 1 {
			t.Errorf("ACK rec: %d", n)
		}
		if got := dRange(t, c, "q", 0, time.Now().UnixMilli()+10*p); got != fmt.Sprintf("rec:%d", due0+rec.fires*p) {
			t.Errorf("after ACK: %s, want rec re-armed at %d", got, due0+rec.fires*p)
		}
		if n := dInt(t, c, "DELAY.ACK", "nokey", "m"); n != 0 {
			t.Errorf("ACK on a missing key: %d", n)
		}
		dInt(t, c, "DELAY.CANCEL", "q", "rec") // due again in 500 ms: out of the way
		// Without LEASE a pop is final: nothing to ACK.
		dInt(t, c, "DELAY.ADD", "q", "x", "AT", 1, "EVERY", 100000)
		if got := mustPop(t, c, "q"); len(got) != 1 || got[0].member != "x" {
			t.Fatalf("pop x: %s", firedString(got))
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "x"); n != 0 {
			t.Errorf("ACK after a pop without LEASE: %d", n)
		}
		// An update ends the lease.
		dInt(t, c, "DELAY.ADD", "q", "u", "AT", 2)
		if got := mustPop(t, c, "q", "LEASE", 100000); len(got) != 1 || got[0].member != "u" {
			t.Fatalf("pop u: %s", firedString(got))
		}
		if n := dInt(t, c, "DELAY.ADD", "q", "u", "AT", 3, "NX"); n != 0 {
			t.Errorf("NX on a leased timer: %d", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "u"); n != 1 {
			t.Errorf("NX ended the lease: ACK %d", n)
		}
		dInt(t, c, "DELAY.ADD", "q", "u", "AT", 2)
		mustPop(t, c, "q", "LEASE", 100000)
		if n := dInt(t, c, "DELAY.ADD", "q", "u", "AT", 3); n != 0 {
			t.Errorf("update of a leased timer: %d", n)
		}
		if n := dInt(t, c, "DELAY.ACK", "q", "u"); n != 0 {
			t.Errorf("ACK after an update: %d, want 0 (the lease ended)", n)
		}
		if got := mustPop(t, c, "q"); firedString(got) != "[u nil 3 1]" {
			t.Errorf("pop after the update: %s", firedString(got))
		}
		// The last ACK takes the key with it.
		c.Del(ctx, "q")
		dInt(t, c, "DELAY.ADD", "q", "last", "AT", 1)
		mustPop(t, c, "q", "LEASE", 100000)
		dInt(t, c, "DELAY.ACK", "q", "last")
		if n := dInt(t, c, "EXISTS", "q"); n != 0 {
			t.Error("the key outlived its last acknowledged timer")
		}
	})
}

// TestDelayLeaseRedelivery: a lease that runs out redelivers the same
// [due, fires], however many more periods passed meanwhile; a redelivery
// without LEASE is final and the schedule goes on from it.
func TestDelayLeaseRedelivery(t *testing.T) {
	onServer(t, func(t *testing.T, c *redis.Client) {
		const p = 40
		dInt(t, c, "DELAY.ADD", "q", "one", "AT", 1000, "PAYLOAD", "p1")
		dInt(t, c, "DELAY.ADD", "q", "rec", "AT", time.Now().UnixMilli()-100, "EVERY", p, "PAYLOAD", "r")
		first := mustPop(t, c, "q", "COUNT", 5, "LEASE", 250)
		if len(first) != 2 || first[0].member != "one" || first[1].member != "rec" || first[1].fires < 3 {
			t.Fatalf("leased pop: %s", firedString(first))
		}
		leasedAt := time.Now()
		// The redelivered rec is not leased, so it is re-armed right after
		// the periods it covered, which are long past: the next delivery
		// may come in the same reply.
		var again []delayFired
		for len(again) < 3 {
			f := mustPop(t, c, "q", "COUNT", 5, "BLOCK", 5000)
			again = append(again, f...)
		}
		if since := time.Since(leasedAt); since < 200*time.Millisecond {
			t.Errorf("redelivered %v after a 250 ms lease", since)
		}
		if firedString(again[:2]) != firedString(first) {
			t.Fatalf("redelivery differs:\n got %s\nwant %s", firedString(again[:2]), firedString(first))
		}
		// The schedule resumes right after the redelivered periods, the
		// ones that came due during the lease included.
		rec, next := first[1], again[2]
		if len(again) != 3 || next.member != "rec" || next.due != rec.due+rec.fires*p || next.fires < 2 {
			t.Errorf("after the redelivery: %s, want rec due %d with fires >= 2", firedString(again[2:]), rec.due+rec.fires*p)
		}
		if n := dInt(t, c, "DELAY.LEN", "q"); n != 1 {
			t.Errorf("LEN after the redelivery: %d, want 1 (the one-shot timer went)", n)
		}
	})
}

// blockedPop is DELAY.POP run in the background.
type blockedPop struct {
	fired []delayFired
	err   error
	at    time.Time // when the reply arrived
}

func goPop(c *redis.Client, key string, opts ...any) chan blockedPop {
	ch := make(chan blockedPop, 1)
	go func() {
		f, err := delayPop(c, key, opts...)
		ch <- blockedPop{f, err, time.Now()}
	}()
	return ch
}

func recvPop(t testing.TB, ch chan blockedPop) blockedPop {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("a blocked DELAY.POP was never answered")
		return blockedPop{}
	}
}

// TestDelayBlocking: BLOCK times out with nil, and a client blocked on a
// missing key or on one with nothing due is woken by a timer that comes
// due, whether it is added due now, added for later, or moved earlier.
func TestDelayBlocking(t *testing.T) {
	srv := startServer(t)
	forProtocols(t, func(t *testing.T, proto int) {
		admin, c := delayClient(t, srv.Addr(), proto), delayClient(t, srv.Addr(), proto)
		admin.FlushAll(ctx)

		start := time.Now()
		if _, err := delayPop(c, "nokey", "BLOCK", 100); err != redis.Nil {
			t.Errorf("timed-out BLOCK: %v, want nil", err)
		}
		if e := time.Since(start); e < 100*time.Millisecond {
			t.Errorf("BLOCK 100 timed out after %v", e)
		}
		dInt(t, admin, "DELAY.ADD", "far", "m", "IN", 100000)
		if _, err := delayPop(c, "far", "BLOCK", 50); err != redis.Nil {
			t.Errorf("BLOCK on a key with nothing due: %v, want nil", err)
		}

		// Woken by an ADD due now, BLOCK 0 waiting for good.
		ch := goPop(c, "k", "BLOCK", 0)
		zsetWaitBlocked(t, admin, 1)
		dInt(t, admin, "DELAY.ADD", "k", "now", "IN", 0, "PAYLOAD", "x")
		r := recvPop(t, ch)
		if r.err != nil || len(r.fired) != 1 || r.fired[0].member != "now" || r.fired[0].payload == nil ||
			*r.fired[0].payload != "x" {
			t.Errorf("woken by ADD IN 0: %s %v", firedString(r.fired), r.err)
		}
		if n := dInt(t, admin, "EXISTS", "k"); n != 0 {
			t.Error("the key outlived the timer the blocked pop took")
		}

		// Woken at the due time of a timer added for later.
		ch = goPop(c, "k", "BLOCK", 5000)
		zsetWaitBlocked(t, admin, 1)
		added := time.Now().UnixMilli()
		dInt(t, admin, "DELAY.ADD", "k", "soon", "IN", 150)
		r = recvPop(t, ch)
		if r.err != nil || len(r.fired) != 1 || r.fired[0].member != "soon" {
			t.Fatalf("woken by ADD IN 150: %s %v", firedString(r.fired), r.err)
		}
		if due := r.fired[0].due; due < added+150 || r.at.UnixMilli() < due {
			t.Errorf("timer due %d (added at %d, IN 150) delivered at %d", due, added, r.at.UnixMilli())
		}

		// A later timer does not wake it, an earlier one (ADD or TOUCH) does.
		dInt(t, admin, "DELAY.ADD", "k", "late", "IN", 100000)
		ch = goPop(c, "k", "BLOCK", 5000)
		zsetWaitBlocked(t, admin, 1)
		dInt(t, admin, "DELAY.ADD", "k", "early", "IN", 100)
		r = recvPop(t, ch)
		if r.err != nil || firedString(r.fired) == "" || r.fired[0].member != "early" {
			t.Errorf("woken by an earlier timer: %s %v", firedString(r.fired), r.err)
		}
		ch = goPop(c, "k", "BLOCK", 5000, "LEASE", 100000)
		zsetWaitBlocked(t, admin, 1)
		dInt(t, admin, "DELAY.TOUCH", "k", "late", 50)
		r = recvPop(t, ch)
		if r.err != nil || firedString(r.fired) == "" || r.fired[0].member != "late" {
			t.Errorf("woken by TOUCH: %s %v", firedString(r.fired), r.err)
		}
		if n := dInt(t, admin, "DELAY.ACK", "k", "late"); n != 1 {
			t.Errorf("the blocked pop's LEASE was not taken: ACK %d", n)
		}

		// Several timers coming due together go to one waiter, up to COUNT.
		ch = goPop(c, "k", "BLOCK", 5000, "COUNT", 5)
		zsetWaitBlocked(t, admin, 1)
		if _, err := admin.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, m := range []string{"t3", "t1", "t2"} {
				p.Do(ctx, "DELAY.ADD", "k", m, "AT", 10)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if r = recvPop(t, ch); firedString(r.fired) != "[t1 nil 10 1] [t2 nil 10 1] [t3 nil 10 1]" {
			t.Errorf("woken by a transaction adding three: %s %v", firedString(r.fired), r.err)
		}

		// A key that turns into another type keeps the waiter waiting; it
		// is served once the key holds timers again.
		ch = goPop(c, "k", "BLOCK", 5000)
		zsetWaitBlocked(t, admin, 1)
		admin.Set(ctx, "k", "str", 0)
		admin.Del(ctx, "k")
		dInt(t, admin, "DELAY.ADD", "k", "back", "IN", 20)
		if r = recvPop(t, ch); r.err != nil || len(r.fired) != 1 || r.fired[0].member != "back" {
			t.Errorf("after a type change: %s %v", firedString(r.fired), r.err)
		}

		// Cancelling the earliest timer moves the wake-up to the next one.
		dInt(t, admin, "DELAY.ADD", "k", "first", "IN", 100)
		dInt(t, admin, "DELAY.ADD", "k", "second", "IN", 250)
		ch = goPop(c, "k", "BLOCK", 5000)
		zsetWaitBlocked(t, admin, 1)
		dInt(t, admin, "DELAY.CANCEL", "k", "first")
		if r = recvPop(t, ch); r.err != nil || len(r.fired) != 1 || r.fired[0].member != "second" ||
			r.at.UnixMilli() < r.fired[0].due {
			t.Errorf("after cancelling the earliest: %s %v", firedString(r.fired), r.err)
		}

		// DEL takes the pending timers away: the waiter times out.
		dInt(t, admin, "DELAY.ADD", "k", "doomed", "IN", 100)
		ch = goPop(c, "k", "BLOCK", 400)
		zsetWaitBlocked(t, admin, 1)
		admin.Del(ctx, "k")
		if r = recvPop(t, ch); r.err != redis.Nil {
			t.Errorf("blocked on a deleted key: %s %v, want nil", firedString(r.fired), r.err)
		}
		zsetWaitBlocked(t, admin, 0)
	})
}

// TestDelayBlockingFIFO: clients blocked on one key are served in the order
// they blocked, each timer going to exactly one of them.
func TestDelayBlockingFIFO(t *testing.T) {
	srv := startServer(t)
	forProtocols(t, func(t *testing.T, proto int) {
		admin := delayClient(t, srv.Addr(), proto)
		admin.FlushAll(ctx)
		const waiters = 5
		chans := make([]chan blockedPop, waiters)
		for i := range chans {
			chans[i] = goPop(delayClient(t, srv.Addr(), proto), "q", "BLOCK", 8000)
			zsetWaitBlocked(t, admin, i+1)
		}
		// Due in reverse order of adding, 30 ms apart: the first waiter
		// gets the earliest whatever the order of adding.
		p := admin.Pipeline()
		for i := waiters - 1; i >= 0; i-- {
			p.Do(ctx, "DELAY.ADD", "q", fmt.Sprintf("t%d", i), "IN", 100+30*i)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for i, ch := range chans {
			r := recvPop(t, ch)
			if r.err != nil || len(r.fired) != 1 || r.fired[0].member != fmt.Sprintf("t%d", i) {
				t.Errorf("waiter %d got %s %v, want t%d", i, firedString(r.fired), r.err, i)
			} else if r.at.UnixMilli() < r.fired[0].due {
				t.Errorf("waiter %d got %s at %d, before it was due", i, r.fired[0], r.at.UnixMilli())
			}
		}

		// Two timers due at once, two waiters: one each, in order.
		first := goPop(delayClient(t, srv.Addr(), proto), "q", "BLOCK", 8000)
		zsetWaitBlocked(t, admin, 1)
		second := goPop(delayClient(t, srv.Addr(), proto), "q", "BLOCK", 8000, "COUNT", 5)
		zsetWaitBlocked(t, admin, 2)
		if _, err := admin.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Do(ctx, "DELAY.ADD", "q", "y", "IN", 0)
			p.Do(ctx, "DELAY.ADD", "q", "x", "IN", 0)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		r1, r2 := recvPop(t, first), recvPop(t, second)
		if len(r1.fired) != 1 || len(r2.fired) != 1 || r1.fired[0].member != "x" || r2.fired[0].member != "y" {
			t.Errorf("two due at once: first waiter %s %v, second %s %v, want x then y",
				firedString(r1.fired), r1.err, firedString(r2.fired), r2.err)
		}

		// Many timers, five consumers looping: each timer exactly once.
		const timers = 40
		p = admin.Pipeline()
		for i := 0; i < timers; i++ {
			p.Do(ctx, "DELAY.ADD", "q", fmt.Sprintf("m%02d", i), "IN", 30+(i*7)%200, "PAYLOAD", strconv.Itoa(i))
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		got := map[string]int{}
		total := 0
		var wg sync.WaitGroup
		errs := make(chan error, timers+waiters)
		deadline := time.Now().Add(10 * time.Second)
		for w := 0; w < waiters; w++ {
			c := delayClient(t, srv.Addr(), proto)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					done := total == timers
					mu.Unlock()
					if done {
						return
					}
					if time.Now().After(deadline) {
						errs <- fmt.Errorf("gave up with %d of %d timers delivered", total, timers)
						return
					}
					f, err := delayPop(c, "q", "BLOCK", 200)
					if err == redis.Nil {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					now := time.Now().UnixMilli()
					mu.Lock()
					for _, x := range f {
						got[x.member]++
						total++
						if x.due > now {
							errs <- fmt.Errorf("%s delivered at %d, before it was due", x, now)
						}
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for i := 0; i < timers; i++ {
			if m := fmt.Sprintf("m%02d", i); got[m] != 1 {
				t.Errorf("%s delivered %d times", m, got[m])
			}
		}
		if n := dInt(t, admin, "EXISTS", "q"); n != 0 {
			t.Error("q outlived its timers")
		}
	})
}

// TestDelayMulti: inside MULTI a BLOCK pop never blocks: with nothing due
// it answers as a timed-out BLOCK (a null array); with something due it
// pops as usual.
func TestDelayMulti(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	c.do("MULTI")
	c.do("DELAY.POP", "q", "BLOCK", "0")
	c.do("DELAY.POP", "q", "BLOCK", "100", "COUNT", "2", "LEASE", "1000")
	c.do("DELAY.POP", "q")
	v := c.do("EXEC")
	if v.Kind != resp.KindArray || len(v.Elems) != 3 {
		t.Fatalf("EXEC: %s", v)
	}
	for i, e := range v.Elems[:2] {
		if e.Kind != resp.KindNull || e.Nil2 != '*' {
			t.Errorf("BLOCK pop %d in MULTI, nothing due: %s, want a null array", i, e)
		}
	}
	if e := v.Elems[2]; e.Kind != resp.KindArray || len(e.Elems) != 0 {
		t.Errorf("non-blocking pop in MULTI: %s, want an empty array", e)
	}

	c.do("DELAY.ADD", "q", "m", "AT", "1")
	c.do("MULTI")
	c.do("DELAY.POP", "q", "BLOCK", "0")
	c.do("DELAY.ADD", "q", "n", "AT", "2")
	c.do("DELAY.POP", "q", "BLOCK", "0", "LEASE", "100000")
	c.do("DELAY.LEN", "q")
	v = c.do("EXEC")
	want := "[[[m nil 1 1]] 1 [[n nil 2 1]] 1]"
	if got := rawString(v); got != want {
		t.Errorf("EXEC with due timers: %s, want %s", got, want)
	}
	if v := c.do("DELAY.ACK", "q", "n"); v.Int != 1 {
		t.Errorf("the pop in MULTI did not lease: ACK %s", v)
	}

	// WATCH sees a pop by another client as a change to the key.
	other := delayClient(t, srv.Addr(), 2)
	c.do("DELAY.ADD", "w", "x", "AT", "1")
	c.do("WATCH", "w")
	mustPop(t, other, "w")
	c.do("MULTI")
	c.do("DELAY.LEN", "w")
	if v := c.do("EXEC"); v.Kind != resp.KindNull {
		t.Errorf("EXEC after a watched key was popped: %s, want nil", v)
	}
}

// rawString renders replies compactly: arrays in brackets, nulls as nil.
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
