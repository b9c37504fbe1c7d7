package tests

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// NUMPOOL (issue 23) is seed 003's number pool as a native type. What is
// here and in numpool_restart_test.go is what a transcript cannot say: 100
// clients racing for numbers, kill -9 of the binary under appendfsync
// always, leases that end while the server is down, and a clean restart.
// The differential test against seed 003's own script is in
// seed003_numpool_test.go.

const npPool = "pool"

// clockSlack bounds how far the server's clock (whole ms, read as a
// command starts) and the test's may disagree, in ms.
const clockSlack = 50

func npNumber(i int) string { return fmt.Sprintf("1380000%04d", i) }

// npFields turns a map reply (RESP3 map or RESP2 flat array) into a Go map.
func npFields(v any) (map[string]any, error) {
	out := map[string]any{}
	switch m := v.(type) {
	case map[any]any:
		for k, x := range m {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("map key %#v is not a string", k)
			}
			out[ks] = x
		}
	case []any:
		if len(m)%2 != 0 {
			return nil, fmt.Errorf("flat map %#v has an odd length", m)
		}
		for i := 0; i < len(m); i += 2 {
			ks, ok := m[i].(string)
			if !ok {
				return nil, fmt.Errorf("map key %#v is not a string", m[i])
			}
			out[ks] = m[i+1]
		}
	default:
		return nil, fmt.Errorf("reply %#v is not a map", v)
	}
	return out, nil
}

// npNum is NUMPOOL.STATE of one number.
type npNum struct {
	State                                    string
	Tags                                     []string
	Calls, CallStart, CallEnd, LeaseLeft, Tk int64
}

func (s npNum) String() string {
	return fmt.Sprintf("%s tags=%q calls=%d call-start=%d call-end=%d lease-left=%d token=%d",
		s.State, s.Tags, s.Calls, s.CallStart, s.CallEnd, s.LeaseLeft, s.Tk)
}

// npState reads NUMPOOL.STATE; a number not in the pool is state nodata.
func npState(t testing.TB, c *redis.Client, pool, number string) npNum {
	t.Helper()
	v, err := c.Do(ctx, "NUMPOOL.STATE", pool, number).Result()
	if errors.Is(err, redis.Nil) {
		return npNum{State: "nodata"}
	}
	if err != nil {
		t.Fatalf("NUMPOOL.STATE %s %s: %v", pool, number, err)
	}
	m, err := npFields(v)
	if err != nil {
		t.Fatalf("NUMPOOL.STATE %s %s: %v", pool, number, err)
	}
	var s npNum
	var ok [7]bool
	s.State, ok[0] = m["state"].(string)
	s.Calls, ok[1] = m["calls"].(int64)
	s.CallStart, ok[2] = m["call-start"].(int64)
	s.CallEnd, ok[3] = m["call-end"].(int64)
	s.LeaseLeft, ok[4] = m["lease-left"].(int64)
	s.Tk, ok[5] = m["token"].(int64)
	tags, ok6 := m["tags"].([]any)
	ok[6] = ok6
	for _, x := range tags {
		tag, isStr := x.(string)
		if !isStr {
			ok[6] = false
		}
		s.Tags = append(s.Tags, tag)
	}
	sort.Strings(s.Tags)
	if slices.Contains(ok[:], false) || len(m) != 7 {
		t.Fatalf("NUMPOOL.STATE %s %s: %#v, want state, tags, calls, call-start, call-end, lease-left, token",
			pool, number, v)
	}
	return s
}

var npStates = []string{"idle+up", "idle+down", "busy+up", "busy+down"}

// npInfo reads NUMPOOL.INFO as text: the pool's figures, then each tag's
// per-state counts, in a fixed order so two readings compare as strings.
func npInfo(t testing.TB, c *redis.Client, pool string) (map[string]int64, string) {
	t.Helper()
	v, err := c.Do(ctx, "NUMPOOL.INFO", pool).Result()
	if err != nil {
		t.Fatalf("NUMPOOL.INFO %s: %v", pool, err)
	}
	m, err := npFields(v)
	if err != nil {
		t.Fatalf("NUMPOOL.INFO %s: %v", pool, err)
	}
	figures := map[string]int64{}
	var parts []string
	for _, f := range append([]string{"numbers", "calls", "lease-hangups"}, npStates...) {
		n, ok := m[f].(int64)
		if !ok {
			t.Fatalf("NUMPOOL.INFO %s: %q is %#v in %#v", pool, f, m[f], v)
		}
		figures[f] = n
		parts = append(parts, fmt.Sprintf("%s=%d", f, n))
	}
	tags, err := npFields(m["tags"])
	if err != nil {
		t.Fatalf("NUMPOOL.INFO %s: tags: %v", pool, err)
	}
	if len(m) != 8 {
		t.Errorf("NUMPOOL.INFO %s has %d fields: %#v", pool, len(m), v)
	}
	var tagParts []string
	for tag, x := range tags {
		tm, err := npFields(x)
		if err != nil {
			t.Fatalf("NUMPOOL.INFO %s: tag %s: %v", pool, tag, err)
		}
		s := "tag " + tag + ":"
		for _, st := range npStates {
			n, ok := tm[st].(int64)
			if !ok {
				t.Fatalf("NUMPOOL.INFO %s: tag %s: %q is %#v", pool, tag, st, tm[st])
			}
			s += fmt.Sprintf(" %s=%d", st, n)
		}
		tagParts = append(tagParts, s)
	}
	sort.Strings(tagParts)
	return figures, strings.Join(append(parts, tagParts...), "\n")
}

// npList walks NUMPOOL.LIST with its cursor and returns number -> state.
func npList(t testing.TB, c *redis.Client, pool string, opts ...any) map[string]string {
	t.Helper()
	out := map[string]string{}
	cursor := "0"
	for range 10000 {
		v, err := c.Do(ctx, append([]any{"NUMPOOL.LIST", pool, "CURSOR", cursor}, opts...)...).Result()
		if err != nil {
			t.Fatalf("NUMPOOL.LIST %s %v: %v", pool, opts, err)
		}
		arr, ok := v.([]any)
		var page []any
		if ok && len(arr) == 2 {
			cursor, ok = arr[0].(string)
			page, _ = arr[1].([]any)
		}
		if !ok || len(page)%2 != 0 {
			t.Fatalf("NUMPOOL.LIST %s: %#v is not [cursor, [number, state, ...]]", pool, v)
		}
		for i := 0; i < len(page); i += 2 {
			n, _ := page[i].(string)
			s, _ := page[i+1].(string)
			if _, dup := out[n]; dup {
				t.Errorf("NUMPOOL.LIST %s %v: %s listed twice", pool, opts, n)
			}
			out[n] = s
		}
		if cursor == "0" {
			return out
		}
	}
	t.Fatalf("NUMPOOL.LIST %s %v: the cursor never came back to 0", pool, opts)
	return nil
}

// npCallReply parses a call's [number, token].
func npCallReply(v any) (string, int64, error) {
	arr, ok := v.([]any)
	if ok && len(arr) == 2 {
		n, ok1 := arr[0].(string)
		tk, ok2 := arr[1].(int64)
		if ok1 && ok2 {
			return n, tk, nil
		}
	}
	return "", 0, fmt.Errorf("call reply %#v is not [number, token]", v)
}

func npNotAllowed(number, state, event string) string {
	return fmt.Sprintf("ERR number %s is %s: %s not allowed", number, state, event)
}

// npNext is the contract's table: the state after event, and whether the
// event is allowed (s003Transitions is the same table with the script's
// replies).
func npNext(state, event string) (string, bool) {
	switch to := s003Transitions[state][event]; to {
	case "=":
		return state, true
	case "fail", "error":
		return state, false
	default:
		return to, true
	}
}

// TestNumpoolConcurrentCalls: 100 clients (RESP2 and RESP3, one connection
// each) race for the 50 numbers of one pool: call (some naming a number),
// hang up with the call's token, and now and then repeat that hangup late.
// A number is never handed to a client while another holds it, tokens
// never repeat and rise per number, a late hangup never ends someone
// else's call, and afterwards every number is idle+up without a call token
// and INFO's calls is the number of calls that succeeded (as is the sum of
// the numbers' calls).
func TestNumpoolConcurrentCalls(t *testing.T) {
	for _, tc := range []struct {
		name, policy string
		opts         []serverOpt
	}{
		{"lru", "", nil},
		{"fifo", "fifo", nil},
		{"random", "random", nil},
		{"lru-io-threads-3", "", []serverOpt{withConfig("io-threads", "3")}},
		{"random-io-threads-3", "random", []serverOpt{withConfig("io-threads", "3")}},
	} {
		t.Run(tc.name, func(t *testing.T) { npCallRace(t, startServer(t, tc.opts...).Addr(), tc.policy) })
	}
}

func npCallRace(t *testing.T, addr, policy string) {
	const clients, numbers, rounds = 100, 50, 40
	admin := goRedis(t, addr, 3)
	all := []any{"NUMPOOL.ADD", npPool}
	for i := range numbers {
		all = append(all, npNumber(i))
	}
	if n := dInt(t, admin, all...); n != numbers {
		t.Fatalf("NUMPOOL.ADD of %d numbers: %d", numbers, n)
	}
	all[0] = "NUMPOOL.REG"
	if n := dInt(t, admin, all...); n != numbers {
		t.Fatalf("NUMPOOL.REG of %d numbers: %d", numbers, n)
	}
	var (
		mu        sync.Mutex
		holder    = map[string]int{}    // number -> the client holding it
		lastToken = map[string]int64{}  // number -> its latest call's token
		tokens    = map[int64]string{}  // every token handed out
		calls     atomic.Int64          // calls that handed out a number
		none      atomic.Int64          // calls that found no number free
		taken     atomic.Int64          // named calls refused: the number was busy
		late      atomic.Int64          // late hangups (all refused)
		failure   atomic.Pointer[error] // the first failure stops everyone
	)
	fail := func(format string, a ...any) {
		err := fmt.Errorf(format, a...)
		failure.CompareAndSwap(nil, &err)
	}
	deadline := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	for i := range clients {
		proto := 2 + i%2
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, DisableIdentity: proto == 2, PoolSize: 1})
		t.Cleanup(func() { c.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(1000 + i)))
			for range rounds {
				if failure.Load() != nil || time.Now().After(deadline) {
					return
				}
				args := []any{"NUMPOOL.EVENT", npPool, "call"}
				named := ""
				if rng.Intn(4) == 0 {
					named = npNumber(rng.Intn(numbers))
					args = append(args, named)
				}
				if policy != "" && named == "" {
					args = append(args, "POLICY", policy)
				}
				v, err := c.Do(ctx, args...).Result()
				switch {
				case errors.Is(err, redis.Nil) && named == "":
					none.Add(1)
					continue
				case err != nil && named != "" && err.Error() == npNotAllowed(named, "busy+up", "call"):
					taken.Add(1)
					continue
				case err != nil:
					fail("client %d: %v: %v", i, args, err)
					return
				}
				n, tk, err := npCallReply(v)
				if err != nil || (named != "" && n != named) {
					fail("client %d: %v: %#v %v", i, args, v, err)
					return
				}
				calls.Add(1)
				mu.Lock()
				if h, held := holder[n]; held {
					fail("%s handed to client %d (token %d) while client %d holds it", n, i, tk, h)
				}
				if other, dup := tokens[tk]; dup {
					fail("token %d handed out twice (%s, then %s)", tk, other, n)
				}
				if tk <= lastToken[n] {
					fail("%s: token %d after its earlier call's %d", n, tk, lastToken[n])
				}
				holder[n], tokens[tk], lastToken[n] = i, n, tk
				mu.Unlock()
				// Let go before hanging up: the server may hand the number
				// out again as soon as it has the hangup.
				mu.Lock()
				delete(holder, n)
				mu.Unlock()
				tkText := strconv.FormatInt(tk, 10)
				if s, err := c.Do(ctx, "NUMPOOL.EVENT", npPool, "hangup", n, "TOKEN", tkText).Text(); err != nil || s != "idle+up" {
					fail("client %d: hangup %s TOKEN %d of its own call: %q %v", i, n, tk, s, err)
					return
				}
				if rng.Intn(8) == 0 {
					// A duplicate hangup: the number is idle, or another
					// client's call holds it; either way it must be refused.
					late.Add(1)
					err := c.Do(ctx, "NUMPOOL.EVENT", npPool, "hangup", n, "TOKEN", tkText).Err()
					if err == nil || (err.Error() != "ERR stale call token for number "+n &&
						err.Error() != npNotAllowed(n, "idle+up", "hangup")) {
						fail("client %d: a second hangup %s TOKEN %d: %v", i, n, tk, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := failure.Load(); err != nil {
		t.Fatal(*err)
	}
	t.Logf("%d calls, %d found no number free, %d named a busy number, %d late hangups refused",
		calls.Load(), none.Load(), taken.Load(), late.Load())
	if calls.Load() < clients*rounds/4 {
		t.Errorf("only %d calls succeeded", calls.Load())
	}
	figures, text := npInfo(t, admin, npPool)
	want := map[string]int64{"numbers": numbers, "idle+up": numbers, "idle+down": 0, "busy+up": 0, "busy+down": 0,
		"calls": calls.Load(), "lease-hangups": 0}
	for f, n := range want {
		if figures[f] != n {
			t.Errorf("NUMPOOL.INFO %s = %d, want %d\n%s", f, figures[f], n, text)
		}
	}
	var sum int64
	for i := range numbers {
		n := npNumber(i)
		s := npState(t, admin, npPool, n)
		sum += s.Calls
		if s.State != "idle+up" || s.LeaseLeft != -1 || s.Tk != 0 || s.CallEnd < s.CallStart || s.CallStart == 0 {
			t.Errorf("%s: %v, want idle+up, no lease, no call token (its last was %d), a call that ended",
				n, s, lastToken[n])
		}
	}
	if sum != calls.Load() {
		t.Errorf("the numbers' calls add up to %d, %d calls succeeded", sum, calls.Load())
	}
	if l := npList(t, admin, npPool, "STATE", "idle+up"); len(l) != numbers {
		t.Errorf("NUMPOOL.LIST STATE idle+up lists %d numbers, want %d", len(l), numbers)
	}
}

// npKillEvent is one event a kill -9 client sends, and what the model says
// of it: states[n] are the states n may be in if the event's reply never
// came (before or after it).
