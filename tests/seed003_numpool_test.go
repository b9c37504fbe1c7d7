package tests

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/revolver-db/revolver/resp"
)

// Seed 003's number pool, run three ways on the same random events: the
// note's Lua script (testdata/seed003_numpool.lua) on redis-server, the same
// script on Revolver, and NUMPOOL.EVENT ... POLICY fifo on Revolver, which
// is what the note's LIST order is. NUMPOOL must refuse what the script
// refuses, hand out the same number on every call, and end with every
// number in the same state.

// npDiffEvent is one event of the sequence; token: a hangup of a busy
// number also sends NUMPOOL the call's token.
type npDiffEvent struct {
	s003Event
	token bool
}

// npDiffSequence draws n events over numbers numbers with a fixed seed,
// steered by the script's model so every row of the table is visited.
func npDiffSequence(n, numbers int) []npDiffEvent {
	r := rand.New(rand.NewSource(23))
	m := newS003Model()
	var events []npDiffEvent
	for range n {
		e := npDiffEvent{s003Event: s003Event{number: s003Number(r.Intn(numbers))}}
		switch x := r.Intn(100); {
		case x < 16:
			e.event = "add"
		case x < 21:
			e.event = "del"
		case x < 41:
			e.event = "reg"
		case x < 51:
			e.event = "unreg"
		case x < 76:
			e.event = "call"
			switch r.Intn(3) {
			case 0:
				e.number = ""
			case 1:
				if len(m.idle) > 0 {
					e.number = m.idle[r.Intn(len(m.idle))] // not the head: a call by number
				}
			}
		default:
			e.event = "hangup"
			var busy []string
			for num, s := range m.state {
				if strings.HasPrefix(s, "busy") {
					busy = append(busy, num)
				}
			}
			sort.Strings(busy)
			if len(busy) > 0 && r.Intn(4) > 0 {
				e.number = busy[r.Intn(len(busy))]
				e.token = r.Intn(2) == 0
			}
		}
		m.apply(e.event, e.number)
		events = append(events, e)
	}
	return events
}

// TestSeed003NumpoolNative: 2,000 events over 40 numbers. Per event the
// script's reply on redis-server is the model's, the script on Revolver
// replies the same bytes, and NUMPOOL's outcome maps onto it: "1" is the
// number's new state (a call: [number, token] with a rising token), "0" and
// "-1" are "number N is STATE: EVENT not allowed" with the state the number
// was in, a call without a number gets the same number or, for "0", a
// null. At the end every number is in the same state in the script's HASH
// and in NUMPOOL.STATE / NUMPOOL.LIST / NUMPOOL.INFO, and draining the
// idle numbers with call gives the same order on all three.
func TestSeed003NumpoolNative(t *testing.T) {
	const events, numbers = 2000, 40
	src := s003Script(t)
	sum := sha1.Sum([]byte(src))
	sha := hex.EncodeToString(sum[:])
	redisC := dialRaw(t, realRedis(t))
	srv := startServer(t)
	script, native, native3 := dialRaw(t, srv.Addr()), dialRaw(t, srv.Addr()), goRedis(t, srv.Addr(), 3)
	for _, c := range []*rawConn{redisC, script} {
		c.do("DEL", s003List, s003Hash)
		if v := c.do("SCRIPT", "LOAD", src); v.Str != sha {
			t.Fatalf("SCRIPT LOAD: %v", v)
		}
	}
	model := newS003Model()
	tokens := map[string]int64{} // number -> its current call's token
	var lastToken int64
	outcomes := map[string]int{}
	for i, e := range npDiffSequence(events, numbers) {
		before := model.get(e.number)
		want := model.apply(e.event, e.number)
		r := redisC.do(e.args(sha)...).String()
		if r != want {
			t.Fatalf("event %d %v: redis-server replies %s, the table says %s", i, e, r, want)
		}
		if s := script.do(e.args(sha)...).String(); s != r {
			t.Fatalf("event %d %v: the script replies %s on Revolver, %s on redis-server", i, e, s, r)
		}
		args := []string{"NUMPOOL.EVENT", npPool, e.event}
		if e.number != "" {
			args = append(args, e.number)
		}
		if e.event == "call" && e.number == "" {
			args = append(args, "POLICY", "fifo")
		}
		if e.token && strings.HasPrefix(before, "busy") {
			args = append(args, "TOKEN", strconv.FormatInt(tokens[e.number], 10))
		}
		v := native.do(args...)
		fail := func(what string) {
			t.Fatalf("event %d %q: NUMPOOL replies %s, want %s (the script: %s, the number was %s)",
				i, args, v, what, r, before)
		}
		switch {
		case e.event == "call" && e.number == "" && r == `"0"`:
			outcomes["call: none free"]++
			if v.Kind != resp.KindNull || v.Nil2 != '*' {
				fail("a null array")
			}
		case e.event == "call" && (r == `"1"` || e.number == ""):
			outcomes["call"]++
			n := e.number
			if n == "" {
				n, _ = strconv.Unquote(r)
			}
			if v.Kind != resp.KindArray || len(v.Elems) != 2 || v.Elems[0].Kind != resp.KindBulk ||
				v.Elems[0].Str != n || v.Elems[1].Kind != resp.KindInt || v.Elems[1].Int <= lastToken {
				fail(fmt.Sprintf("[%s, a token above %d]", n, lastToken))
			}
			tokens[n], lastToken = v.Elems[1].Int, v.Elems[1].Int
		case r == `"1"`:
			outcomes[e.event]++
			if v.Kind != resp.KindSimple || v.Str != model.get(e.number) {
				fail("+" + model.get(e.number))
			}
		default:
			outcomes[e.event+": refused"]++
			if v.Kind != resp.KindError || v.Str != npNotAllowed(e.number, before, e.event) {
				fail("-" + npNotAllowed(e.number, before, e.event))
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)

	// The end state: the script's HASH and LIST on both servers, NUMPOOL's
	// numbers one by one, listed, and counted.
	list, hash := s003Read(t, redisC)
	if l, h := s003Read(t, script); !slices.Equal(l, list) || fmt.Sprint(stateOf(t, h)) != fmt.Sprint(stateOf(t, hash)) {
		t.Errorf("the script's pool on Revolver:\nLIST %q\nHASH %v\non redis-server:\nLIST %q\nHASH %v",
			l, stateOf(t, h), list, stateOf(t, hash))
	}
	states := stateOf(t, hash)
	counts := map[string]int64{"numbers": int64(len(states))}
	for i := range numbers {
		n := s003Number(i)
		want := states[n]
		if want == "" {
			want = "nodata"
		}
		counts[want]++
		s := npState(t, native3, npPool, n)
		if s.State != want || (strings.HasPrefix(want, "busy") && s.Tk != tokens[n]) {
			t.Errorf("%s: NUMPOOL.STATE %v; the script's HASH says %s (its call's token %d)", n, s, want, tokens[n])
		}
	}
	if listed := npList(t, native3, npPool, "COUNT", 7); fmt.Sprint(listed) != fmt.Sprint(states) {
		t.Errorf("NUMPOOL.LIST:\n%v\nthe script's HASH:\n%v", listed, states)
	}
	idle := npList(t, native3, npPool, "STATE", "idle+up")
	sortedList := slices.Sorted(slices.Values(list))
	if got := slices.Sorted(maps.Keys(idle)); !slices.Equal(got, sortedList) {
		t.Errorf("NUMPOOL.LIST STATE idle+up: %q\nthe script's LIST: %q", got, sortedList)
	}
	figures, text := npInfo(t, native3, npPool)
	for _, f := range append([]string{"numbers"}, npStates...) {
		if figures[f] != counts[f] {
			t.Errorf("NUMPOOL.INFO %s = %d, the script's HASH says %d\n%s", f, figures[f], counts[f], text)
		}
	}
	// Drain: every idle+up number, in LIST order.
	var drained [3][]string
	for range numbers + 1 {
		a := redisC.do("EVALSHA", sha, "1", s003Prefix, "call").Str
		b := script.do("EVALSHA", sha, "1", s003Prefix, "call").Str
		v := native.do("NUMPOOL.EVENT", npPool, "call", "POLICY", "fifo")
		if a == "0" {
			if b != "0" || v.Kind != resp.KindNull {
				t.Errorf("drain: redis-server has no number left, the script on Revolver %q, NUMPOOL %s", b, v)
			}
			break
		}
		drained[0], drained[1] = append(drained[0], a), append(drained[1], b)
		if len(v.Elems) == 2 {
			drained[2] = append(drained[2], v.Elems[0].Str)
		}
	}
	if !slices.Equal(drained[0], list) || !slices.Equal(drained[1], list) || !slices.Equal(drained[2], list) {
		t.Errorf("drain in fifo order:\nredis-server %q\nthe script   %q\nNUMPOOL      %q\nthe LIST was %q",
			drained[0], drained[1], drained[2], list)
	}
}

// stateOf decodes the script's HASH into number -> state.
func stateOf(t *testing.T, hash map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for n, js := range hash {
		s, err := s003State(js)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[n] = s
	}
	return out
}
