package tests

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Seed 003: an outbound-call platform shares a few public numbers among many
// agents. A number is idle or busy (callstate) and online or offline
// (regstate); events add, del, reg, unreg, call and hangup arrive from many
// threads on many servers at once, and two agents must never get the same
// number. The note keeps the pool in Redis as a LIST of the idle, online
// numbers ({numpool}:idle:up, where `call` picks one) and a HASH of every
// number's state as cjson-encoded JSON ({numpool}:numstate), and makes each
// event atomic by doing it in one Lua script driven by a state-transition
// table, loaded with SCRIPT LOAD and run with EVALSHA.
//
// testdata/seed003_numpool.lua is that script, rebuilt from the note's
// table. These tests run it on Revolver and on redis-server and prove that
// Revolver runs a real user's script exactly as Redis does: the same replies
// and the same LIST and HASH, byte for byte, for a long random sequence of
// events, and that the script stays atomic under concurrent clients (no
// number handed out twice, the LIST always equal to the idle+up numbers).

const (
	s003Prefix  = "{numpool}"
	s003List    = s003Prefix + ":idle:up"
	s003Hash    = s003Prefix + ":numstate"
	s003Numbers = 50
)

// s003Transitions is the note's table: state -> event -> next state, "="
// (stays, success), "fail" (the number is not in the pool) or "error" (the
// event is not allowed in that state).
var s003Transitions = map[string]map[string]string{
	"nodata":    {"add": "idle+down", "del": "=", "reg": "fail", "unreg": "fail", "call": "fail", "hangup": "fail"},
	"idle+up":   {"add": "=", "del": "nodata", "reg": "=", "unreg": "idle+down", "call": "busy+up", "hangup": "error"},
	"idle+down": {"add": "=", "del": "nodata", "reg": "idle+up", "unreg": "=", "call": "error", "hangup": "error"},
	"busy+up":   {"add": "=", "del": "nodata", "reg": "=", "unreg": "busy+down", "call": "error", "hangup": "idle+up"},
	"busy+down": {"add": "=", "del": "nodata", "reg": "busy+up", "unreg": "=", "call": "error", "hangup": "idle+down"},
}

var s003Replies = map[string]string{"=": "1", "fail": "0", "error": "-1"}

func s003Script(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("testdata/seed003_numpool.lua")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func s003Number(i int) string { return fmt.Sprintf("9501000%04d", i) }

// s003Model is the pool as the table says it must be.
type s003Model struct {
	state map[string]string // number -> state; absent is nodata
	idle  []string          // the LIST, head first
}

func newS003Model() *s003Model { return &s003Model{state: map[string]string{}} }

func (m *s003Model) get(n string) string {
	if s, ok := m.state[n]; ok {
		return s
	}
	return "nodata"
}

// apply performs one event and returns the script's reply as
// resp.Value.String shows it.
func (m *s003Model) apply(event, number string) string {
	if _, ok := s003Transitions["nodata"][event]; !ok {
		return "(error) ERR numpool: unknown event " + event
	}
	if event == "call" && number == "" {
		if len(m.idle) == 0 {
			return strconv.Quote("0")
		}
		n := m.idle[0]
		m.idle = m.idle[1:]
		m.state[n] = "busy+up"
		return strconv.Quote(n)
	}
	if number == "" {
		return "(error) ERR numpool: " + event + " needs a number"
	}
	from := m.get(number)
	to := s003Transitions[from][event]
	if r, ok := s003Replies[to]; ok {
		return strconv.Quote(r)
	}
	if to == "nodata" {
		delete(m.state, number)
	} else {
		m.state[number] = to
	}
	if from == "idle+up" {
		// LREM -1: the last occurrence (there is only one).
		i := slices.Index(m.idle, number)
		m.idle = slices.Delete(m.idle, i, i+1)
	} else if to == "idle+up" {
		m.idle = append(m.idle, number)
	}
	return strconv.Quote("1")
}

// s003State decodes a HASH value into its state name.
func s003State(js string) (string, error) {
	var v struct{ Callstate, Regstate *int }
	if err := json.Unmarshal([]byte(js), &v); err != nil || v.Callstate == nil || v.Regstate == nil ||
		*v.Callstate&^1 != 0 || *v.Regstate&^1 != 0 {
		return "", fmt.Errorf("bad state JSON %q (%v)", js, err)
	}
	return map[int]string{0: "idle", 1: "busy"}[*v.Callstate] + "+" + map[int]string{0: "down", 1: "up"}[*v.Regstate], nil
}

// s003Event is one EVALSHA: the event and its number ("" for none).
type s003Event struct{ event, number string }

func (e s003Event) args(sha string) []string {
	args := []string{"EVALSHA", sha, "1", s003Prefix, e.event}
	if e.number != "" {
		args = append(args, e.number)
	}
	return args
}

// s003Sequence draws n events with a fixed seed. The model steers the draw
// (hangups mostly go to busy numbers, calls find idle ones), so every row
// of the table is visited many times; a few events are malformed.
func s003Sequence(n int) (events []s003Event, replies []string, final *s003Model) {
	r := rand.New(rand.NewSource(3))
	m := newS003Model()
	kinds := []struct {
		event  string
		weight int
	}{{"add", 18}, {"del", 6}, {"reg", 20}, {"unreg", 10}, {"call", 22}, {"hangup", 22}, {"bad", 2}}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	for range n {
		x := r.Intn(total)
		var ev string
		for _, k := range kinds {
			if x < k.weight {
				ev = k.event
				break
			}
			x -= k.weight
		}
		e := s003Event{event: ev, number: s003Number(r.Intn(s003Numbers))}
		switch ev {
		case "call":
			if r.Intn(3) > 0 {
				e.number = ""
			}
		case "hangup":
			var busy []string
			for num, s := range m.state {
				if strings.HasPrefix(s, "busy") {
					busy = append(busy, num)
				}
			}
			sort.Strings(busy)
			if len(busy) > 0 && r.Intn(4) > 0 {
				e.number = busy[r.Intn(len(busy))]
			}
		case "bad":
			if r.Intn(2) == 0 {
				e.event = "park"
			} else {
				e = s003Event{event: "reg"}
			}
		}
		events = append(events, e)
		replies = append(replies, m.apply(e.event, e.number))
	}
	return events, replies, m
}

// s003Snapshot is a server's pool after a run.
type s003Snapshot struct {
	replies []string
	list    []string
	hash    map[string]string
}

func s003Read(t *testing.T, c *rawConn) (list []string, hash map[string]string) {
	t.Helper()
	for _, e := range c.do("LRANGE", s003List, "0", "-1").Elems {
		list = append(list, e.Str)
	}
	hash = map[string]string{}
	h := c.do("HGETALL", s003Hash)
	for i := 0; i+1 < len(h.Elems); i += 2 {
		hash[h.Elems[i].Str] = h.Elems[i+1].Str
	}
	return list, hash
}

// TestSeed003NumpoolSequence runs a few thousand random events one after
// another on each server: every reply must be the table's, the final LIST
// and HASH the model's, and both servers must agree byte for byte (replies,
// LIST order, every HASH value as cjson.encode wrote it).
func TestSeed003NumpoolSequence(t *testing.T) {
	src := s003Script(t)
	sum := sha1.Sum([]byte(src))
	events, want, model := s003Sequence(4000)
	got := map[string]*s003Snapshot{}
	onBothServers(t, func(t *testing.T, addr string) {
		c := dialRaw(t, addr)
		c.do("FLUSHALL")
		if sha := c.do("SCRIPT", "LOAD", src); sha.Str != hex.EncodeToString(sum[:]) {
			t.Fatalf("SCRIPT LOAD: %v", sha)
		}
		snap := &s003Snapshot{}
		for i, e := range events {
			r := c.do(e.args(hex.EncodeToString(sum[:]))...).String()
			snap.replies = append(snap.replies, r)
			if r != want[i] {
				t.Fatalf("event %d %v: reply %s, the table says %s", i, e, r, want[i])
			}
		}
		snap.list, snap.hash = s003Read(t, c)
		if !slices.Equal(snap.list, model.idle) {
			t.Errorf("LIST %q\nmodel %q", snap.list, model.idle)
		}
		if len(snap.hash) != len(model.state) {
			t.Errorf("HASH has %d numbers, the model %d", len(snap.hash), len(model.state))
		}
		for n, js := range snap.hash {
			if s, err := s003State(js); err != nil || s != model.get(n) {
				t.Errorf("HASH %s = %q (%s %v), the model says %s", n, js, s, err, model.get(n))
			}
		}
		got[t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]] = snap
	})
	rev, red := got["revolver"], got["redis"]
	if rev == nil || red == nil {
		return
	}
	for i := range events {
		if rev.replies[i] != red.replies[i] {
			t.Fatalf("event %d %v: Revolver %s, Redis %s", i, events[i], rev.replies[i], red.replies[i])
		}
	}
	if !slices.Equal(rev.list, red.list) {
		t.Errorf("LIST differs:\nRevolver %q\nRedis    %q", rev.list, red.list)
	}
	var fields []string
	for n := range red.hash {
		fields = append(fields, n)
	}
	sort.Strings(fields)
	differ := 0
	for _, n := range fields {
		a, b := rev.hash[n], red.hash[n]
		if a == b {
			continue
		}
		differ++
		why := ""
		if sa, ea := s003State(a); ea == nil {
			if sb, eb := s003State(b); eb == nil && sa == sb {
				why = " (the same JSON object with its keys in another order: cjson.encode's key order differs)"
			}
		}
		if differ <= 5 {
			t.Errorf("HASH %s: Revolver %q, Redis %q%s", n, a, b, why)
		}
	}
	if differ > 5 {
		t.Errorf("... %d of %d HASH values differ in all", differ, len(fields))
	}
	if len(rev.hash) != len(red.hash) {
		t.Errorf("HASH: Revolver has %d numbers, Redis %d", len(rev.hash), len(red.hash))
	}
}

// s003Check verifies the pool's invariants on a server: every HASH value
// is a valid state of a pool number, the LIST holds each idle+up number
// exactly once and nothing else. It returns the state of every number.
func s003Check(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	list, err := c.LRange(ctx, s003List, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	hash, err := c.HGetAll(ctx, s003Hash).Result()
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	var idleUp []string
	for n, js := range hash {
		s, err := s003State(js)
		if err != nil {
			t.Errorf("number %s: %v", n, err)
			continue
		}
		if !strings.HasPrefix(n, "9501000") {
			t.Errorf("HASH holds %q, not a pool number", n)
		}
		states[n] = s
		if s == "idle+up" {
			idleUp = append(idleUp, n)
		}
	}
	seen := map[string]int{}
	for _, n := range list {
		switch seen[n]++; {
		case seen[n] == 2:
			t.Errorf("%s is in the LIST more than once (LIST of %d)", n, len(list))
		case seen[n] == 1 && states[n] != "idle+up":
			t.Errorf("%s is in the LIST but %q in the HASH", n, hash[n])
		}
	}
	for _, n := range idleUp {
		if seen[n] == 0 {
			t.Errorf("%s is idle+up in the HASH but not in the LIST", n)
		}
	}
	return states
}

// TestSeed003NumpoolConcurrent fires events from 32 clients at one pool on
// each server. Churn: every event on random numbers, del and add included;
// each reply must be one the table allows, and the pool must be consistent
// afterwards. Calls: the numbers start added and online; clients take them
// with call (with or without a number) and hang up only numbers they hold,
// amid reg, unreg and add on random numbers. No number may be handed to a
// client while another holds it, and at the end exactly the held numbers
// are busy, the others idle, and the LIST is the idle+up ones.
func TestSeed003NumpoolConcurrent(t *testing.T) {
	src := s003Script(t)
	const clients, perClient = 32, 250
	onBothServers(t, func(t *testing.T, addr string) {
		admin := goRedis(t, addr, 2)
		admin.FlushAll(ctx)
		sha, err := admin.ScriptLoad(ctx, src).Result()
		if err != nil {
			t.Fatal(err)
		}
		conns := make([]*redis.Client, clients)
		for i := range conns {
			conns[i] = goRedis(t, addr, 2)
		}
		eval := func(c *redis.Client, event, number string) (string, error) {
			args := []any{event}
			if number != "" {
				args = append(args, number)
			}
			return c.EvalSha(ctx, sha, []string{s003Prefix}, args...).Text()
		}
		isNumber := func(s string) bool {
			i, err := strconv.Atoi(strings.TrimPrefix(s, "9501000"))
			return err == nil && strings.HasPrefix(s, "9501000") && i >= 0 && i < s003Numbers
		}

		t.Run("churn", func(t *testing.T) {
			// What each event may reply, whatever the number's state.
			allowed := map[string][]string{}
			for _, row := range s003Transitions {
				for ev, to := range row {
					r, ok := s003Replies[to]
					if !ok {
						r = "1"
					}
					if !slices.Contains(allowed[ev], r) {
						allowed[ev] = append(allowed[ev], r)
					}
				}
			}
			events := []string{"add", "add", "del", "reg", "reg", "unreg", "call", "call", "hangup", "hangup"}
			var wg sync.WaitGroup
			for i, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewSource(int64(100 + i)))
					for range perClient {
						ev, num := events[r.Intn(len(events))], s003Number(r.Intn(s003Numbers))
						if ev == "call" && r.Intn(2) == 0 {
							num = ""
						}
						got, err := eval(c, ev, num)
						if err != nil {
							t.Errorf("%s %s: %v", ev, num, err)
							return
						}
						if num == "" {
							if got != "0" && !isNumber(got) {
								t.Errorf("call: %q, want a number or 0", got)
							}
						} else if !slices.Contains(allowed[ev], got) {
							t.Errorf("%s %s: %q, the table allows %q", ev, num, got, allowed[ev])
						}
					}
				}()
			}
			wg.Wait()
			s003Check(t, admin)
		})

		t.Run("calls", func(t *testing.T) {
			admin.Del(ctx, s003List, s003Hash)
			for i := range s003Numbers {
				for _, ev := range []string{"add", "reg"} {
					if r, err := eval(admin, ev, s003Number(i)); err != nil || r != "1" {
						t.Fatalf("%s %s: %q %v", ev, s003Number(i), r, err)
					}
				}
			}
			var (
				mu       sync.Mutex
				holder   = map[string]int{} // number -> the client holding it
				taken    int                // calls that handed out a number
				returned int                // hangups that gave one back
			)
			took := func(client int, n string) {
				mu.Lock()
				defer mu.Unlock()
				if other, ok := holder[n]; ok {
					t.Errorf("%s handed to client %d while client %d holds it", n, client, other)
				}
				holder[n] = client
				taken++
			}
			var wg sync.WaitGroup
			for i, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewSource(int64(200 + i)))
					var mine []string
					for range perClient {
						num := s003Number(r.Intn(s003Numbers))
						var ev, got string
						var err error
						switch x := r.Intn(20); {
						case len(mine) > 0 && x < 8:
							k := r.Intn(len(mine))
							num = mine[k]
							mine = slices.Delete(mine, k, k+1)
							mu.Lock() // released before the hangup is sent
							delete(holder, num)
							returned++
							mu.Unlock()
							ev = "hangup"
							if got, err = eval(c, ev, num); err == nil && got != "1" {
								t.Errorf("client %d: hangup %s of a number it holds: %q", i, num, got)
							}
						case x < 14:
							ev, num = "call", ""
							if got, err = eval(c, ev, ""); err == nil && got != "0" {
								if !isNumber(got) {
									t.Errorf("call: %q", got)
								}
								took(i, got)
								mine = append(mine, got)
							}
						case x < 16:
							ev = "call"
							if got, err = eval(c, ev, num); err == nil {
								switch got {
								case "1":
									took(i, num)
									mine = append(mine, num)
								case "-1":
								default:
									t.Errorf("call %s: %q, want 1 or -1", num, got)
								}
							}
						default:
							ev = []string{"reg", "unreg", "add", "reg"}[x-16]
							if got, err = eval(c, ev, num); err == nil && got != "1" {
								t.Errorf("%s %s: %q, want 1 (no number leaves the pool)", ev, num, got)
							}
						}
						if err != nil {
							t.Errorf("%s %s: %v", ev, num, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			states := s003Check(t, admin)
			if len(states) != s003Numbers {
				t.Errorf("%d numbers in the pool, want %d", len(states), s003Numbers)
			}
			if taken-returned != len(holder) {
				t.Errorf("%d calls handed out a number and %d hangups returned one, but %d are held",
					taken, returned, len(holder))
			}
			busy := 0
			for n, s := range states {
				_, held := holder[n]
				if held != strings.HasPrefix(s, "busy") {
					t.Errorf("%s is %s, held by a client: %v", n, s, held)
				}
				if held {
					busy++
				}
			}
			t.Logf("%d calls handed out a number, %d hangups, %d numbers still held", taken, returned, busy)
			// Everyone hangs up and every number comes back online.
			for n := range holder {
				if r, err := eval(admin, "hangup", n); err != nil || r != "1" {
					t.Errorf("final hangup %s: %q %v", n, r, err)
				}
			}
			for i := range s003Numbers {
				eval(admin, "reg", s003Number(i))
			}
			if n := admin.LLen(ctx, s003List).Val(); n != s003Numbers {
				t.Errorf("LLEN %d after every hangup and reg, want %d", n, s003Numbers)
			}
			s003Check(t, admin)
		})
	})
}
