package tests

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// NUMPOOL across restarts: kill -9 of the binary under appendfsync always,
// leases that end while the server is down, and a clean restart round trip
// (helpers in numpool_test.go).
type npKillEvent struct {
	args   []any
	states map[string][]string
}

// npModelNum is what the acknowledged replies say of one number.
type npModelNum struct {
	state string
	token int64 // the current call's, when busy
}

// TestNumpoolKill9: under appendfsync always, 6 clients send every kind of
// event to one pool, each on its own 5 numbers (tagged with the client, so
// a call without a number picks among them), checking each reply against
// the table; the binary is killed with -9 mid-load, 3 times. After each
// restart every number is in the state its last acknowledged event left it
// in (or, for the one event a client had in flight, the state after it), a
// busy number keeps its call's token, and the tokens of new calls rise above
// every token seen before the kill.
func TestNumpoolKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const clients, each, kills = 6, 5, 3
	dir := t.TempDir()
	model := map[string]*npModelNum{}
	for i := range clients * each {
		model[npNumber(i)] = &npModelNum{state: "nodata"}
	}
	inflight := make([]*npKillEvent, clients)
	var maxToken int64 // the highest token seen before the last kill
	acked := 0
	for round := 0; round <= kills; round++ {
		p := startProcess(t, dir, "--appendfsync", "always")
		admin := goRedis(t, p.addr, 3)
		if round == 0 {
			// Never touched: the key lives on, and with it its tokens.
			if n := dInt(t, admin, "NUMPOOL.ADD", npPool, "anchor", "TAG", "anchor"); n != 1 {
				t.Fatalf("NUMPOOL.ADD anchor: %d", n)
			}
		}
		counts := map[string]int64{"numbers": 1, "idle+down": 1}
		for ci := range clients {
			for k := range each {
				n := npNumber(ci*each + k)
				m := model[n]
				s := npState(t, admin, npPool, n)
				allowed := []string{m.state}
				if e := inflight[ci]; e != nil && e.states[n] != nil {
					allowed = e.states[n]
				}
				if !slices.Contains(allowed, s.State) {
					t.Errorf("after kill %d: %s is %s; acknowledged replies say %q (in flight: %v)",
						round, n, s.State, allowed, inflight[ci])
				} else if strings.HasPrefix(s.State, "busy") && strings.HasPrefix(m.state, "busy") &&
					len(allowed) == 1 && s.Tk != m.token {
					t.Errorf("after kill %d: %s is %v, its call's token was %d", round, n, s, m.token)
				}
				if s.State != "nodata" && !slices.Equal(s.Tags, []string{"c" + strconv.Itoa(ci)}) {
					t.Errorf("after kill %d: %s has tags %q", round, n, s.Tags)
				}
				m.state, m.token = s.State, s.Tk
				maxToken = max(maxToken, s.Tk)
				if s.State != "nodata" {
					counts["numbers"]++
					counts[s.State]++
				}
			}
		}
		if s := npState(t, admin, npPool, "anchor"); s.State != "idle+down" {
			t.Errorf("after kill %d: anchor is %v", round, s)
		}
		figures, text := npInfo(t, admin, npPool)
		for _, f := range append([]string{"numbers"}, npStates...) {
			if figures[f] != counts[f] {
				t.Errorf("after kill %d: NUMPOOL.INFO %s = %d, the numbers' states say %d\n%s",
					round, f, figures[f], counts[f], text)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		if round == kills {
			p.terminate(t)
			break
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for ci := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := redis.NewClient(&redis.Options{Addr: p.addr, Protocol: 2, DisableIdentity: true,
					MaxRetries: -1, PoolSize: 1})
				defer c.Close()
				rng := rand.New(rand.NewSource(int64(round*100 + ci)))
				tag := "c" + strconv.Itoa(ci)
				inflight[ci] = nil
				for {
					e := npKillDraw(rng, model, ci, each, tag)
					v, err := c.Do(ctx, e.args...).Result()
					if err != nil && !isRedisError(err) {
						p.stoppedByKill(t, fmt.Sprintf("round %d client %d", round, ci), err)
						inflight[ci] = e // killed: the reply never came
						return
					}
					tk, msg := npKillCheck(model, ci, each, e, v, err)
					if msg != "" {
						t.Errorf("round %d client %d: %v: %#v %v: %s", round, ci, e.args, v, err, msg)
						return
					}
					mu.Lock()
					acked++
					if tk != 0 && tk <= maxToken {
						t.Errorf("round %d client %d: %v got token %d, but %d was handed out before the kill",
							round, ci, e.args, tk, maxToken)
					}
					mu.Unlock()
				}
			}()
		}
		time.Sleep(300 * time.Millisecond)
		p.kill9(t)
		wg.Wait()
		for _, m := range model {
			maxToken = max(maxToken, m.token)
		}
	}
	if acked < 50 {
		t.Errorf("only %d events acknowledged in %d rounds", acked, kills)
	}
	t.Logf("%d events acknowledged over %d kill -9 rounds, highest token %d", acked, kills, maxToken)
}

// npKillDraw picks a client's next event on its own numbers, with what the
// model says its outcome may be if its reply is lost.
func npKillDraw(rng *rand.Rand, model map[string]*npModelNum, ci, each int, tag string) *npKillEvent {
	n := npNumber(ci*each + rng.Intn(each))
	m := model[n]
	e := &npKillEvent{states: map[string][]string{}}
	event := ""
	switch x := rng.Intn(100); {
	case x < 10:
		e.args = []any{"NUMPOOL.ADD", npPool, n, "TAG", tag}
		event = "add"
	case x < 15:
		event = "del"
	case x < 30:
		event = "reg"
	case x < 40:
		event = "unreg"
	case x < 55:
		event = "call"
	case x < 70:
		policy := []string{"lru", "fifo", "random"}[rng.Intn(3)]
		e.args = []any{"NUMPOOL.EVENT", npPool, "call", "TAG", tag, "POLICY", policy}
		for k := range each {
			if o := npNumber(ci*each + k); model[o].state == "idle+up" {
				e.states[o] = []string{"idle+up", "busy+up"}
			}
		}
		return e
	default:
		event = "hangup"
		var busy []string
		for k := range each {
			if o := npNumber(ci*each + k); strings.HasPrefix(model[o].state, "busy") {
				busy = append(busy, o)
			}
		}
		if len(busy) > 0 && rng.Intn(4) > 0 {
			n = busy[rng.Intn(len(busy))]
			m = model[n]
			tk := m.token
			if rng.Intn(10) == 0 {
				tk += 1000003 // stale: refused
			}
			e.args = []any{"NUMPOOL.EVENT", npPool, "hangup", n, "TOKEN", strconv.FormatInt(tk, 10)}
		}
	}
	if e.args == nil {
		if (event == "reg" || event == "unreg") && rng.Intn(3) == 0 {
			e.args = []any{"NUMPOOL." + strings.ToUpper(event), npPool, n}
		} else {
			e.args = []any{"NUMPOOL.EVENT", npPool, event, n}
		}
	}
	next, _ := npNext(m.state, event)
	e.states[n] = []string{m.state, next}
	return e
}

// npKillCheck checks a reply against the model and applies it; it returns
// the token of a call, and what was wrong.
func npKillCheck(model map[string]*npModelNum, ci, each int, e *npKillEvent, v any, err error) (int64, string) {
	cmd, event := e.args[0].(string), strings.ToLower(strings.TrimPrefix(e.args[0].(string), "NUMPOOL."))
	n := ""
	if cmd == "NUMPOOL.EVENT" {
		event = e.args[2].(string)
		if len(e.args) > 3 && e.args[3] != "TAG" {
			n = e.args[3].(string)
		}
	} else {
		n = e.args[2].(string)
	}
	if n == "" { // call TAG c<i>: any of the client's idle+up numbers
		if errors.Is(err, redis.Nil) {
			if len(e.states) > 0 {
				return 0, fmt.Sprintf("no number free, but %d are idle+up", len(e.states))
			}
			return 0, ""
		}
		if err != nil {
			return 0, "an error"
		}
		got, tk, perr := npCallReply(v)
		if perr != nil {
			return 0, perr.Error()
		}
		if e.states[got] == nil {
			return 0, "not one of the client's idle+up numbers"
		}
		model[got].state, model[got].token = "busy+up", tk
		return tk, ""
	}
	m := model[n]
	next, ok := npNext(m.state, event)
	switch {
	case cmd == "NUMPOOL.ADD":
		want := int64(0)
		if m.state == "nodata" {
			want = 1
		}
		if err != nil || v != want {
			return 0, fmt.Sprintf("want %d (was %s)", want, m.state)
		}
	case cmd != "NUMPOOL.EVENT":
		// REG or UNREG of one number: how many changed; all-or-nothing.
		if !ok {
			if err == nil {
				return 0, fmt.Sprintf("want an error (was %s)", m.state)
			}
			return 0, ""
		}
		want := int64(0)
		if next != m.state {
			want = 1
		}
		if err != nil || v != want {
			return 0, fmt.Sprintf("want %d (was %s)", want, m.state)
		}
	case event == "hangup" && len(e.args) == 6 && e.args[5] != strconv.FormatInt(m.token, 10):
		if err == nil || err.Error() != "ERR stale call token for number "+n {
			return 0, fmt.Sprintf("want a stale token error (%s, token %d)", m.state, m.token)
		}
		return 0, ""
	case !ok:
		if err == nil || err.Error() != npNotAllowed(n, m.state, event) {
			return 0, fmt.Sprintf("want %q", npNotAllowed(n, m.state, event))
		}
		return 0, ""
	case event == "call":
		got, tk, perr := npCallReply(v)
		if err != nil || perr != nil || got != n {
			return 0, fmt.Sprintf("want [%s, token] (was %s) %v", n, m.state, perr)
		}
		m.state, m.token = next, tk
		return tk, ""
	default:
		if err != nil || v != next {
			return 0, fmt.Sprintf("want %s (was %s)", next, m.state)
		}
	}
	m.state = next
	return 0, ""
}

// npShutdown stops a child process with SHUTDOWN and waits for it to exit.
func npShutdown(t *testing.T, p *process) {
	t.Helper()
	// No retries: go-redis would retry the EOF that answers SHUTDOWN.
	c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1})
	defer c.Close()
	if err := c.Shutdown(ctx).Err(); err != nil {
		t.Fatalf("SHUTDOWN: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("server exit after SHUTDOWN: %v\n%s", err, p.log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("server still running after SHUTDOWN\n%s", p.log)
	}
}

// TestNumpoolLeaseAcrossRestart: calls with a 500 ms lease, the server
// stops (kill -9, or SHUTDOWN) and starts again after the leases ended: at
// start the numbers are idle again (a busy+down one idle+down), counted as
// lease hangups, while a call with a minute's lease is still busy with the
// rest of its minute; its token still hangs it up, and new tokens rise above
// it.
func TestNumpoolLeaseAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, how := range []string{"kill-9", "shutdown"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			p := startProcess(t, dir, "--appendfsync", "always")
			c := goRedis(t, p.addr, 3)
			a, b, long := npNumber(1), npNumber(2), npNumber(3)
			dInt(t, c, "NUMPOOL.ADD", npPool, a, b, long)
			dInt(t, c, "NUMPOOL.REG", npPool, a, b, long)
			start := time.Now()
			var tokens []int64
			for _, call := range [][]any{{a, "LEASE", 500}, {b, "LEASE", 500}, {long, "LEASE", 60000}} {
				v, err := c.Do(ctx, append([]any{"NUMPOOL.EVENT", npPool, "call"}, call...)...).Result()
				_, tk, perr := npCallReply(v)
				if err != nil || perr != nil {
					t.Fatalf("call %v: %v %v", call, err, perr)
				}
				tokens = append(tokens, tk)
			}
			if s, err := c.Do(ctx, "NUMPOOL.EVENT", npPool, "unreg", b).Text(); err != nil || s != "busy+down" {
				t.Fatalf("unreg %s: %q %v", b, s, err)
			}
			// The highest token goes with a number that leaves the pool:
			// new tokens must still rise above it.
			gone := npNumber(4)
			dInt(t, c, "NUMPOOL.ADD", npPool, gone)
			dInt(t, c, "NUMPOOL.REG", npPool, gone)
			v, err := c.Do(ctx, "NUMPOOL.EVENT", npPool, "call", gone).Result()
			_, topToken, perr := npCallReply(v)
			if err != nil || perr != nil {
				t.Fatalf("call %s: %v %v", gone, err, perr)
			}
			for _, ev := range []string{"hangup", "del"} {
				if err := c.Do(ctx, "NUMPOOL.EVENT", npPool, ev, gone).Err(); err != nil {
					t.Fatalf("%s %s: %v", ev, gone, err)
				}
			}
			if s := npState(t, c, npPool, a); s.LeaseLeft > 500 || (s.State != "busy+up" && time.Since(start) < 500*time.Millisecond) {
				t.Fatalf("%s right after its call: %v", a, s)
			}
			if how == "kill-9" {
				p.kill9(t)
			} else {
				npShutdown(t, p)
			}
			time.Sleep(time.Until(start.Add(600 * time.Millisecond)))
			p2 := startProcess(t, dir, "--appendfsync", "always")
			c2 := goRedis(t, p2.addr, 3)
			sa, sb, sl := npState(t, c2, npPool, a), npState(t, c2, npPool, b), npState(t, c2, npPool, long)
			elapsed := time.Since(start).Milliseconds()
			if sa.State != "idle+up" || sa.LeaseLeft != -1 || sa.CallEnd < sa.CallStart+500 || sa.Calls != 1 {
				t.Errorf("%s at start, its lease over: %v, want idle+up with the call ended by its lease", a, sa)
			}
			if sb.State != "idle+down" || sb.LeaseLeft != -1 {
				t.Errorf("%s (busy+down) at start, its lease over: %v, want idle+down", b, sb)
			}
			if sl.State != "busy+up" || sl.LeaseLeft > 60000 || sl.LeaseLeft < 60000-elapsed-clockSlack || sl.Tk != tokens[2] {
				t.Errorf("%s at start, %d ms into a 60 s lease: %v (token %d)", long, elapsed, sl, tokens[2])
			}
			figures, text := npInfo(t, c2, npPool)
			for f, n := range map[string]int64{"numbers": 3, "idle+up": 1, "idle+down": 1, "busy+up": 1,
				"busy+down": 0, "calls": 3, "lease-hangups": 2} { // the deleted number's call left with it
				if figures[f] != n {
					t.Errorf("NUMPOOL.INFO %s = %d, want %d\n%s", f, figures[f], n, text)
				}
			}
			v, err = c2.Do(ctx, "NUMPOOL.EVENT", npPool, "call", a).Result()
			if _, tk, perr := npCallReply(v); err != nil || perr != nil || tk <= topToken {
				t.Errorf("a call after the restart: %#v %v, want a token above %d", v, err, topToken)
			}
			if s, err := c2.Do(ctx, "NUMPOOL.EVENT", npPool, "hangup", long, "TOKEN", tokens[2]).Text(); err != nil || s != "idle+up" {
				t.Errorf("hangup %s TOKEN %d after the restart: %q %v", long, tokens[2], s, err)
			}
			p2.terminate(t)
		})
	}
}

// TestNumpoolRestartRoundTrip: a pool with tagged and untagged numbers in
// every state, with counters, finished calls, leases (one of them already
// ended by itself) and a second pool, goes through SHUTDOWN and a restart.
// Every number's NUMPOOL.STATE is the same (lease-left less by at most the
// time that passed), NUMPOOL.INFO and NUMPOOL.LIST are identical, the idle
// numbers come out in the same fifo order as before, tokens of calls in
// progress still hang them up, and new tokens rise above the old ones.
func TestNumpoolRestartRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProcess(t, dir, "--appendfsync", "everysec")
	c := goRedis(t, p.addr, 3)
	const numbers = 16
	var all []string
	for i := range numbers {
		all = append(all, npNumber(i))
	}
	// fifo tracks the idle+up order as seed 003's LIST would.
	fifo := newS003Model()
	tokens := map[string]int64{}
	var maxToken int64
	do := func(args ...any) any {
		t.Helper()
		v, err := c.Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if args[0] != "NUMPOOL.EVENT" {
			return v
		}
		n := args[3].(string)
		if n == "TAG" {
			// A call by tag: the first number of the tag in line.
			n = ""
			for _, o := range fifo.idle {
				if slices.Index(all, o)%3 == 1 && slices.Index(all, o) < 12 {
					n = o
					break
				}
			}
		}
		if fifo.apply(args[2].(string), n) != `"1"` {
			t.Fatalf("%v: the model refuses it", args)
		}
		if args[2] == "call" {
			got, tk, err := npCallReply(v)
			if err != nil || got != n {
				t.Fatalf("%v: %#v %v, want %s", args, v, err, n)
			}
			tokens[got], maxToken = tk, max(maxToken, tk)
		}
		return v
	}
	for i, n := range all {
		tag := []any{"TAG", []string{"east", "west", "north"}[i%3]}
		if i >= 12 {
			tag = nil
		}
		do(append([]any{"NUMPOOL.ADD", npPool, n}, tag...)...)
		fifo.apply("add", n)
	}
	for _, i := range []int{5, 0, 3, 1, 2, 4, 6, 7, 8, 9, 10, 11, 12, 13} {
		do("NUMPOOL.EVENT", npPool, "reg", all[i])
	}
	for _, i := range []int{0, 1, 2, 8, 0, 8} {
		do("NUMPOOL.EVENT", npPool, "call", all[i])
		do("NUMPOOL.EVENT", npPool, "hangup", all[i], "TOKEN", tokens[all[i]])
	}
	do("NUMPOOL.EVENT", npPool, "call", all[3], "LEASE", 600000)
	do("NUMPOOL.EVENT", npPool, "call", all[4], "LEASE", 600000)
	do("NUMPOOL.EVENT", npPool, "unreg", all[4])
	do("NUMPOOL.EVENT", npPool, "call", all[6])
	do("NUMPOOL.EVENT", npPool, "call", all[7])
	do("NUMPOOL.EVENT", npPool, "unreg", all[7])
	do("NUMPOOL.EVENT", npPool, "unreg", all[10])
	do("NUMPOOL.EVENT", npPool, "call", "TAG", "west", "POLICY", "fifo")
	do("NUMPOOL.EVENT", npPool, "call", all[9], "LEASE", 50)
	waitFor(t, 5*time.Second, "a 50 ms lease to end", func() bool {
		return npState(t, c, npPool, all[9]).State == "idle+up"
	})
	fifo.apply("hangup", all[9])
	do("NUMPOOL.ADD", "pool2", "x", "TAG", "t")
	do("NUMPOOL.REG", "pool2", "x")
	do("NUMPOOL.ADD", "gone", "y")
	do("DEL", "gone")

	// It returns when it started and when it ended, to bound the time
	// between two readings of lease-left.
	snapshot := func(c *redis.Client) (map[string]npNum, string, map[string]string, time.Time, time.Time) {
		start := time.Now()
		states := map[string]npNum{}
		for _, n := range append(all, "missing") {
			states[n] = npState(t, c, npPool, n)
		}
		_, info := npInfo(t, c, npPool)
		_, info2 := npInfo(t, c, "pool2")
		return states, info + "\npool2:\n" + info2, npList(t, c, npPool, "COUNT", 5), start, time.Now()
	}
	before, infoBefore, listBefore, t0, _ := snapshot(c)
	if !strings.Contains(infoBefore, "lease-hangups=1") || !strings.Contains(infoBefore, "busy+down=2") {
		t.Fatalf("before the restart, NUMPOOL.INFO:\n%s", infoBefore)
	}
	npShutdown(t, p)
	p2 := startProcess(t, dir, "--appendfsync", "everysec")
	c2 := goRedis(t, p2.addr, 3)
	after, infoAfter, listAfter, _, t1 := snapshot(c2)
	passed := t1.Sub(t0).Milliseconds() + clockSlack
	for _, n := range append(all, "missing") {
		b, a := before[n], after[n]
		if b.LeaseLeft > 0 && a.LeaseLeft <= b.LeaseLeft && a.LeaseLeft >= b.LeaseLeft-passed {
			a.LeaseLeft = b.LeaseLeft
		}
		if a.String() != b.String() {
			t.Errorf("%s after the restart (%d ms later):\n got %v\nwant %v", n, passed, after[n], b)
		}
	}
	if infoAfter != infoBefore {
		t.Errorf("NUMPOOL.INFO after the restart:\n%s\nbefore:\n%s", infoAfter, infoBefore)
	}
	if fmt.Sprint(listAfter) != fmt.Sprint(listBefore) {
		t.Errorf("NUMPOOL.LIST after the restart:\n%v\nbefore:\n%v", listAfter, listBefore)
	}
	if n, err := c2.Exists(ctx, "gone").Result(); err != nil || n != 0 {
		t.Errorf("a deleted pool came back: %d %v", n, err)
	}
	if typ := c2.Type(ctx, npPool).Val(); typ != "numpool" {
		t.Errorf("TYPE %s after the restart: %q", npPool, typ)
	}
	var order []string
	for range numbers + 1 {
		v, err := c2.Do(ctx, "NUMPOOL.EVENT", npPool, "call", "POLICY", "fifo").Result()
		if errors.Is(err, redis.Nil) {
			break
		}
		n, tk, perr := npCallReply(v)
		if err != nil || perr != nil || tk <= maxToken {
			t.Fatalf("call POLICY fifo after the restart: %#v %v %v (tokens so far up to %d)", v, err, perr, maxToken)
		}
		maxToken = tk
		order = append(order, n)
	}
	if !slices.Equal(order, fifo.idle) {
		t.Errorf("fifo order after the restart:\n got %q\nwant %q", order, fifo.idle)
	}
	for _, i := range []int{3, 4, 6, 7} {
		n := all[i]
		want := map[bool]string{true: "idle+up", false: "idle+down"}[i != 4 && i != 7]
		if s, err := c2.Do(ctx, "NUMPOOL.EVENT", npPool, "hangup", n, "TOKEN", tokens[n]).Text(); err != nil || s != want {
			t.Errorf("hangup %s TOKEN %d after the restart: %q %v, want %s", n, tokens[n], s, err, want)
		}
	}
	p2.terminate(t)
}
