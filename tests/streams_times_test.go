package tests

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// TestStreamTimes runs the scenario of testdata/golden/streams_times.txt
// on redis-server and Revolver side by side, on the real clock, and checks
// every time field of XPENDING, XINFO CONSUMERS and XINFO STREAM FULL, the
// generated ids, and XCLAIM's, XAUTOCLAIM's and XPENDING's idle arguments.
//
// Where the client gives the time (an id's ms part, XCLAIM's TIME and IDLE,
// min-idle-time, XPENDING's IDLE) the scenario keeps every entry minutes
// away from each threshold, so both servers must give one exact answer.
// Where a server reads its clock, the test keeps a model of what Redis
// 7.0 stamps and when (t_stream.c): a time stamped by a command sent at lo
// (unix ms) and answered at hi lies in [lo, hi], so an idle time read by a
// command in [qlo, qhi] lies in [qlo-hi, qhi-lo]. Each server's value must
// lie in its own band. The bands widen with the machine's delays, so they
// do not flake, and the scenario sleeps between events, so a time that is
// 0, a second off or stamped by the wrong command falls outside.
func TestStreamTimes(t *testing.T) {
	long(t)
	redisAddr := realRedis(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			runStreamTimes(t, redisAddr, proto)
		})
	}
}

// stSlack absorbs the ms truncation of the clocks, all the system's but
// read at different instants.
const stSlack = 5

// stGap separates the events whose times the test tells apart.
const stGap = 300 * time.Millisecond

// stWindow is when a command ran: unix ms before it was sent and after its
// reply arrived.
type stWindow struct{ lo, hi int64 }

// stTime is a time a server stamped: inside a command's window shifted back
// by an IDLE, or an exact TIME.
type stTime struct {
	lo, hi int64
	exact  bool
}

func stAt(w stWindow, idle int64) stTime { return stTime{lo: w.lo - idle, hi: w.hi - idle} }

// band is where the unix ms time itself may lie.
func (m stTime) band() (lo, hi int64) {
	if m.exact {
		return m.lo, m.hi
	}
	return m.lo - stSlack, m.hi + stSlack
}

// idleBand is where the time elapsed since m, read during q, may lie (the
// servers report a negative one as 0).
func (m stTime) idleBand(q stWindow) (lo, hi int64) {
	return max(q.lo-m.hi-stSlack, 0), max(q.hi-m.lo+stSlack, 0)
}

type stPending struct {
	consumer string
	at       stTime
	count    int64
}

// stSide is one server, its connection and the model of its group.
type stSide struct {
	name    string
	conn    *rawConn
	restart func(crash bool)
	last    stWindow // of the last command
	pel     map[string]*stPending
	seen    map[string]stTime // consumers' seen-time
}

type stRun struct {
	t      *testing.T
	key    string
	fields map[string][2]string // entry id -> its field and value
	sides  []*stSide
}

func runStreamTimes(t *testing.T, redisAddr string, proto int) {
	prefix := fmt.Sprintf("streamtimes:%d:", proto)
	redisSide := &stSide{name: "redis", conn: dialRaw(t, redisAddr)}
	redisSide.restart = func(bool) {
		// DEBUG RELOAD saves and loads the RDB: the times are kept as
		// absolute unix ms, as in Revolver's records.
		if v := redisSide.conn.do("DEBUG", "RELOAD"); v.Kind == resp.KindError {
			t.Fatalf("DEBUG RELOAD: %s", v.Str)
		}
	}
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	revSide := &stSide{name: "revolver", conn: dialRaw(t, srv.Addr())}
	revSide.restart = func(crash bool) {
		stop := srv.Close
		if crash {
			stop = srv.Crash
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		srv = startServer(t, withPersistence(dir))
		revSide.conn = dialRaw(t, srv.Addr())
		hello(t, revSide.conn, proto)
	}
	r := &stRun{t: t, key: prefix + "s", sides: []*stSide{redisSide, revSide},
		fields: map[string][2]string{"1-1": {"f", "1"}, "1-2": {"f", "2"}, "5-0": {"f", "3"}}}
	for _, s := range r.sides {
		hello(t, s.conn, proto)
		s.conn.do("DEL", prefix+"s", prefix+"gen", prefix+"far")
		s.pel, s.seen = map[string]*stPending{}, map[string]stTime{}
	}
	r.generatedIDs(prefix+"gen", prefix+"far")

	k := r.key
	r.same(`"1-1"`, "XADD", k, "1-1", "f", "1")
	r.same(`"1-2"`, "XADD", k, "1-2", "f", "2")
	r.same(`"5-0"`, "XADD", k, "5-*", "f", "3")
	r.same("+OK", "XGROUP", "CREATE", k, "g", "0")
	r.readNew("alice", 2, "1-1", "1-2")
	time.Sleep(stGap)
	r.readNew("bob", 0, "5-0")
	time.Sleep(stGap)
	r.observe()

	// Nothing is idle for an hour: nothing is claimed, carol is not
	// created and bob's seen-time stays (Redis looks the consumer up only
	// for its first claimed entry).
	r.claim("carol", 3600000, []string{"1-1", "1-2", "5-0"})
	time.Sleep(stGap)
	r.claim("bob", 3600000, []string{"1-1"})
	past := time.Now().UnixMilli() - 3600000
	future := time.Now().UnixMilli() + 3600000
	r.claim("carol", 0, []string{"1-2"}, "IDLE", "600000", "JUSTID")
	r.claim("carol", 0, []string{"5-0"}, "TIME", strconv.FormatInt(past, 10), "JUSTID")
	// A TIME in the future, and a negative IDLE, mean now.
	r.claim("carol", 0, []string{"1-1"}, "TIME", strconv.FormatInt(future, 10))
	r.claim("dave", 0, []string{"1-1"}, "IDLE", "-5", "RETRYCOUNT", "7", "JUSTID")
	time.Sleep(stGap)
	r.observe()
	r.pendingIdle(300000, "")
	r.pendingIdle(1000000, "")
	r.pendingIdle(300000, "carol")
	r.pendingIdle(100, "dave")

	r.claim("erin", 300000, []string{"1-1", "1-2", "5-0"})
	r.claim("dave", 0, []string{"5-0"}, "IDLE", "400000", "JUSTID")
	r.autoclaim("frank", 300000, false)
	time.Sleep(stGap)
	r.autoclaim("frank", 300000, true) // claims nothing: frank's seen-time stays
	r.claim("erin", 0, []string{"1-1"}, "IDLE", "120000")
	r.autoclaim("gina", 60000, true)
	time.Sleep(stGap)
	r.observe()
	r.readHistory("gina")
	time.Sleep(stGap)

	// Times are absolute: a reload (a restart, a crash for Revolver) keeps
	// them, and the idle times go on growing with the real clock.
	for _, crash := range []bool{false, true} {
		for _, s := range r.sides {
			s.restart(crash)
		}
		time.Sleep(stGap)
		r.observe()
	}
}

func hello(t *testing.T, c *rawConn, proto int) {
	if v := c.do("HELLO", strconv.Itoa(proto)); v.Kind == resp.KindError {
		t.Fatalf("HELLO %d: %s", proto, v.Str)
	}
}

// do runs a command on every server, recording each one's window.
func (r *stRun) do(args ...string) []resp.Value {
	r.t.Helper()
	out := make([]resp.Value, len(r.sides))
	for i, s := range r.sides {
		lo := time.Now().UnixMilli()
		out[i] = s.conn.do(args...)
		s.last = stWindow{lo, time.Now().UnixMilli()}
	}
	return out
}

// agree reports replies (time fields masked by now) that differ between
// the servers.
func (r *stRun) agree(args []string, v []resp.Value) {
	r.t.Helper()
	if msg := compareReplies(v[0], v[1], ""); msg != "" {
		r.t.Errorf("%s: the servers differ (%s, times masked):\n  redis:    %s\n  revolver: %s",
			strings.Join(args, " "), msg, indent(v[0].String()), indent(v[1].String()))
	}
}

// same runs a command whose reply holds no time: the servers must agree,
// and give want unless it is "".
func (r *stRun) same(want string, args ...string) []resp.Value {
	r.t.Helper()
	v := r.do(args...)
	r.agree(args, v)
	if want != "" && v[0].String() != want {
		r.t.Errorf("%s: %s, want %s", strings.Join(args, " "), v[0], want)
	}
	return v
}

func (r *stRun) errorf(s *stSide, args []string, format string, a ...any) {
	r.t.Helper()
	r.t.Errorf("%s: %s: %s", s.name, strings.Join(args, " "), fmt.Sprintf(format, a...))
}

// checkIn checks a time field against its band, then masks it for agree.
func (r *stRun) checkIn(s *stSide, args []string, what string, v *resp.Value, lo, hi int64) {
	r.t.Helper()
	if v.Kind != resp.KindInt {
		r.errorf(s, args, "%s: %s, want an integer", what, v)
	} else if v.Int < lo || v.Int > hi {
		r.errorf(s, args, "%s: %d, want %d..%d", what, v.Int, lo, hi)
	}
	*v = resp.Value{Kind: resp.KindInt, Int: -1}
}

func parseStreamID(s string) (ms, seq int64, ok bool) {
	a, b, found := strings.Cut(s, "-")
	ms, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	return ms, seq, found && err1 == nil && err2 == nil
}

// generatedIDs: XADD * takes the ms part from the clock (the seq part
// counts within a ms), unless the last id is ahead of the clock.
func (r *stRun) generatedIDs(gen, far string) {
	r.t.Helper()
	prev := make([][2]int64, len(r.sides))
	for n := range 2 {
		args := []string{"XADD", gen, "*", "f", strconv.Itoa(n)}
		v := r.do(args...)
		for i, s := range r.sides {
			ms, seq, ok := parseStreamID(v[i].Str)
			switch {
			case v[i].Kind != resp.KindBulk || !ok:
				r.errorf(s, args, "reply %s", v[i])
			case n > 0 && ms == prev[i][0]:
				if seq != prev[i][1]+1 {
					r.errorf(s, args, "%s after %d-%d", v[i].Str, prev[i][0], prev[i][1])
				}
			case ms < s.last.lo-stSlack || ms > s.last.hi+stSlack || seq != 0:
				r.errorf(s, args, "%s, want an id of ms %d..%d and seq 0", v[i].Str, s.last.lo, s.last.hi)
			}
			prev[i] = [2]int64{ms, seq}
		}
	}
	r.same(`"9000000000000-0"`, "XADD", far, "9000000000000-*", "f", "1")
	r.same(`"9000000000000-1"`, "XADD", far, "9000000000000-*", "f", "2")
	r.same(`"9000000000000-2"`, "XADD", far, "*", "f", "3")
}

// readNew delivers ids to consumer with XREADGROUP ... >.
func (r *stRun) readNew(consumer string, count int, ids ...string) {
	r.t.Helper()
	args := []string{"XREADGROUP", "GROUP", "g", consumer}
	if count > 0 {
		args = append(args, "COUNT", strconv.Itoa(count))
	}
	args = append(args, "STREAMS", r.key, ">")
	r.expectEntries(args, r.do(args...), ids)
	for _, s := range r.sides {
		for _, id := range ids {
			s.pel[id] = &stPending{consumer: consumer, at: stAt(s.last, 0), count: 1}
		}
		s.seen[consumer] = stAt(s.last, 0)
	}
}

// readHistory re-reads consumer's pending entries (XREADGROUP ... 0),
// which Redis 7.0 counts as a delivery.
func (r *stRun) readHistory(consumer string) {
	r.t.Helper()
	args := []string{"XREADGROUP", "GROUP", "g", consumer, "STREAMS", r.key, "0"}
	v := r.do(args...)
	var want []string
	for si, s := range r.sides {
		for _, id := range s.sortedPending() {
			if p := s.pel[id]; p.consumer == consumer {
				if si == 0 {
					want = append(want, id)
				}
				p.at, p.count = stAt(s.last, 0), p.count+1
			}
		}
		s.seen[consumer] = stAt(s.last, 0)
	}
	r.expectEntries(args, v, want)
}

// expectEntries checks an XREADGROUP reply of one stream holds ids.
func (r *stRun) expectEntries(args []string, v []resp.Value, ids []string) {
	r.t.Helper()
	r.agree(args, v)
	var got []string
	if v[0].Kind == resp.KindArray && len(v[0].Elems) == 1 && len(v[0].Elems[0].Elems) == 2 {
		for _, e := range v[0].Elems[0].Elems[1].Elems {
			got = append(got, r.entryID(e))
		}
	} else if v[0].Kind == resp.KindMap && len(v[0].Elems) == 2 {
		for _, e := range v[0].Elems[1].Elems {
			got = append(got, r.entryID(e))
		}
	}
	if !slices.Equal(got, ids) {
		r.t.Errorf("%s: redis delivered %q, want %q (reply %s)", strings.Join(args, " "), got, ids, v[0])
	}
}

// entryID is the id of an entry [id, [field, value]] or of a JUSTID reply,
// checking the entry's contents.
func (r *stRun) entryID(e resp.Value) string {
	if e.Kind == resp.KindBulk {
		return e.Str
	}
	if len(e.Elems) != 2 {
		return "?" + e.String()
	}
	id := e.Elems[0].Str
	f := r.fields[id]
	if kv := e.Elems[1]; len(kv.Elems) != 2 || kv.Elems[0].Str != f[0] || kv.Elems[1].Str != f[1] {
		return "?" + e.String()
	}
	return id
}

func (s *stSide) sortedPending() []string {
	ids := make([]string, 0, len(s.pel))
	for id := range s.pel {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		am, as, _ := parseStreamID(a)
		bm, bs, _ := parseStreamID(b)
		if am != bm {
			return int(am - bm)
		}
		return int(as - bs)
	})
	return ids
}

// idleAtLeast says whether entry id, when the last command ran, was idle
// for at least min ms. The scenario keeps entries far from the thresholds
// it uses: an answer the bands cannot give is a broken scenario.
func (r *stRun) idleAtLeast(s *stSide, args []string, p *stPending, min int64) bool {
	r.t.Helper()
	lo, hi := p.at.idleBand(s.last)
	switch {
	case lo >= min:
		return true
	case hi < min:
		return false
	}
	r.t.Fatalf("%s: %s: idle %d..%d straddles %d: the scenario needs wider margins", s.name, strings.Join(args, " "), lo, hi, min)
	return false
}

// claim runs XCLAIM key g consumer minIdle ids opts... and moves the model
// as Redis 7.0's xclaimCommand does.
func (r *stRun) claim(consumer string, minIdle int64, ids []string, opts ...string) {
	r.t.Helper()
	args := append([]string{"XCLAIM", r.key, "g", consumer, strconv.FormatInt(minIdle, 10)}, ids...)
	args = append(args, opts...)
	v := r.do(args...)
	var idle, at, retry int64 = 0, -1, -1
	justID := false
	for i := 0; i < len(opts); i++ {
		switch opts[i] {
		case "JUSTID":
			justID = true
		case "IDLE":
			i++
			idle, _ = strconv.ParseInt(opts[i], 10, 64)
		case "TIME":
			i++
			at, _ = strconv.ParseInt(opts[i], 10, 64)
		case "RETRYCOUNT":
			i++
			retry, _ = strconv.ParseInt(opts[i], 10, 64)
		}
	}
	var want []string
	for si, s := range r.sides {
		when := stAt(s.last, max(idle, 0)) // a time past now is now
		if at >= 0 && at < s.last.lo {
			when = stTime{lo: at, hi: at, exact: true}
		}
		var claimed []string
		for _, id := range ids {
			p := s.pel[id]
			if p == nil || minIdle > 0 && !r.idleAtLeast(s, args, p, minIdle) {
				continue
			}
			claimed = append(claimed, id)
			p.consumer, p.at = consumer, when
			switch {
			case retry >= 0:
				p.count = retry
			case !justID:
				p.count++
			}
		}
		if len(claimed) > 0 {
			s.seen[consumer] = stAt(s.last, 0)
		}
		if si == 0 {
			want = claimed
		} else if !slices.Equal(claimed, want) {
			r.t.Fatalf("%s: the model claims %q on redis, %q on revolver", strings.Join(args, " "), want, claimed)
		}
	}
	r.agree(args, v)
	var got []string
	for _, e := range v[0].Elems {
		got = append(got, r.entryID(e))
	}
	if !slices.Equal(got, want) {
		r.t.Errorf("%s: redis claimed %q, want %q", strings.Join(args, " "), got, want)
	}
}

// autoclaim runs XAUTOCLAIM key g consumer minIdle 0 [JUSTID].
func (r *stRun) autoclaim(consumer string, minIdle int64, justID bool) {
	r.t.Helper()
	args := []string{"XAUTOCLAIM", r.key, "g", consumer, strconv.FormatInt(minIdle, 10), "0"}
	if justID {
		args = append(args, "JUSTID")
	}
	v := r.do(args...)
	var want []string
	for si, s := range r.sides {
		var claimed []string
		for _, id := range s.sortedPending() {
			p := s.pel[id]
			if !r.idleAtLeast(s, args, p, minIdle) {
				continue
			}
			claimed = append(claimed, id)
			p.consumer, p.at = consumer, stAt(s.last, 0)
			if !justID {
				p.count++
			}
		}
		if len(claimed) > 0 {
			s.seen[consumer] = stAt(s.last, 0)
		}
		if si == 0 {
			want = claimed
		}
	}
	r.agree(args, v)
	var got []string
	if len(v[0].Elems) == 3 && v[0].Elems[0].Str == "0-0" && len(v[0].Elems[2].Elems) == 0 {
		for _, e := range v[0].Elems[1].Elems {
			got = append(got, r.entryID(e))
		}
	} else {
		got = []string{"?" + v[0].String()}
	}
	if !slices.Equal(got, want) {
		r.t.Errorf("%s: redis claimed %q, want %q", strings.Join(args, " "), got, want)
	}
}

// observe checks every reply that reports the group's times.
func (r *stRun) observe() {
	r.t.Helper()
	r.same("", "XPENDING", r.key, "g")
	r.pending()
	r.consumers()
	r.full()
}

// pending checks XPENDING's extended form: each entry's owner, count and
// idle time.
func (r *stRun) pending() {
	r.t.Helper()
	args := []string{"XPENDING", r.key, "g", "-", "+", "100"}
	v := r.do(args...)
	for i, s := range r.sides {
		ids := s.sortedPending()
		if len(v[i].Elems) != len(ids) {
			r.errorf(s, args, "%d entries, want %d: %s", len(v[i].Elems), len(ids), v[i])
			continue
		}
		for j, id := range ids {
			e, p := v[i].Elems[j].Elems, s.pel[id]
			if len(e) != 4 || e[0].Str != id || e[1].Str != p.consumer || e[3].Int != p.count {
				r.errorf(s, args, "entry %s, want %s of %s delivered %d times", v[i].Elems[j], id, p.consumer, p.count)
				continue
			}
			lo, hi := p.at.idleBand(s.last)
			r.checkIn(s, args, id+" idle", &e[2], lo, hi)
		}
	}
	r.agree(args, v)
}

// pendingIdle checks XPENDING's IDLE filter: an entry is listed when it
// was idle for min ms, with its idle time.
func (r *stRun) pendingIdle(min int64, consumer string) {
	r.t.Helper()
	args := []string{"XPENDING", r.key, "g", "IDLE", strconv.FormatInt(min, 10), "-", "+", "100"}
	if consumer != "" {
		args = append(args, consumer)
	}
	v := r.do(args...)
	for i, s := range r.sides {
		var want []string
		for _, id := range s.sortedPending() {
			if p := s.pel[id]; (consumer == "" || p.consumer == consumer) && r.idleAtLeast(s, args, p, min) {
				want = append(want, id)
			}
		}
		var got []string
		for j := range v[i].Elems {
			e := v[i].Elems[j].Elems
			if len(e) != 4 {
				r.errorf(s, args, "entry %s", v[i].Elems[j])
				continue
			}
			got = append(got, e[0].Str)
			if p := s.pel[e[0].Str]; p != nil {
				lo, hi := p.at.idleBand(s.last)
				r.checkIn(s, args, e[0].Str+" idle", &e[2], max(lo, min), hi)
			}
		}
		if !slices.Equal(got, want) {
			r.errorf(s, args, "listed %q, want %q", got, want)
		}
	}
	r.agree(args, v)
}

// stField is the value after name in a RESP3 map or a RESP2 flat array.
func stField(v *resp.Value, name string) *resp.Value {
	for i := 0; i+1 < len(v.Elems); i += 2 {
		if v.Elems[i].Str == name {
			return &v.Elems[i+1]
		}
	}
	return &resp.Value{}
}

func (s *stSide) consumerNames() []string {
	names := make([]string, 0, len(s.seen))
	for n := range s.seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// consumers checks XINFO CONSUMERS: each consumer's pending count and idle
// time (since its seen-time).
func (r *stRun) consumers() {
	r.t.Helper()
	args := []string{"XINFO", "CONSUMERS", r.key, "g"}
	v := r.do(args...)
	for i, s := range r.sides {
		names := s.consumerNames()
		if len(v[i].Elems) != len(names) {
			r.errorf(s, args, "%d consumers, want %q: %s", len(v[i].Elems), names, v[i])
			continue
		}
		for j, name := range names {
			c := &v[i].Elems[j]
			if got := stField(c, "name").Str; got != name {
				r.errorf(s, args, "consumer %q, want %q", got, name)
				continue
			}
			lo, hi := s.seen[name].idleBand(s.last)
			r.checkIn(s, args, name+" idle", stField(c, "idle"), lo, hi)
		}
	}
	r.agree(args, v)
}

// full checks XINFO STREAM FULL's group: its PEL's delivery times, and its
// consumers' seen-times and PELs. The rest must agree between the servers.
func (r *stRun) full() {
	r.t.Helper()
	args := []string{"XINFO", "STREAM", r.key, "FULL"}
	v := r.do(args...)
	for i, s := range r.sides {
		groups := stField(&v[i], "groups")
		if len(groups.Elems) != 1 {
			r.errorf(s, args, "groups %s", groups)
			continue
		}
		g := &groups.Elems[0]
		ids := s.sortedPending()
		pel := stField(g, "pending")
		if len(pel.Elems) != len(ids) {
			r.errorf(s, args, "group PEL %s, want %q", pel, ids)
			continue
		}
		for j, id := range ids {
			e, p := pel.Elems[j].Elems, s.pel[id]
			if len(e) != 4 || e[0].Str != id || e[1].Str != p.consumer || e[3].Int != p.count {
				r.errorf(s, args, "group PEL entry %s, want %s of %s delivered %d times", pel.Elems[j], id, p.consumer, p.count)
				continue
			}
			lo, hi := p.at.band()
			r.checkIn(s, args, id+" delivery time", &e[2], lo, hi)
		}
		cons := stField(g, "consumers")
		names := s.consumerNames()
		if len(cons.Elems) != len(names) {
			r.errorf(s, args, "consumers %s, want %q", cons, names)
			continue
		}
		for j, name := range names {
			c := &cons.Elems[j]
			if got := stField(c, "name").Str; got != name {
				r.errorf(s, args, "consumer %q, want %q", got, name)
				continue
			}
			lo, hi := s.seen[name].band()
			r.checkIn(s, args, name+" seen-time", stField(c, "seen-time"), lo, hi)
			var own []string
			for _, id := range ids {
				if s.pel[id].consumer == name {
					own = append(own, id)
				}
			}
			cp := stField(c, "pending")
			if len(cp.Elems) != len(own) {
				r.errorf(s, args, "%s's PEL %s, want %q", name, cp, own)
				continue
			}
			for k, id := range own {
				e, p := cp.Elems[k].Elems, s.pel[id]
				if len(e) != 3 || e[0].Str != id || e[2].Int != p.count {
					r.errorf(s, args, "%s's PEL entry %s, want %s delivered %d times", name, cp.Elems[k], id, p.count)
					continue
				}
				lo, hi := p.at.band()
				r.checkIn(s, args, name+"'s "+id+" delivery time", &e[1], lo, hi)
			}
		}
	}
	r.agree(args, v)
}
