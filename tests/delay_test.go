package tests

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
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
