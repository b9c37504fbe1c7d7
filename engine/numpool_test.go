package engine

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"
)

// White-box tests of NUMPOOL: the transition table cell by cell, the pick
// policies, tags, leases on the manual clock, call tokens, the record codec,
// replay and COPY. Replies and errors through the network are pinned in
// tests/testdata/golden/numpool_*.txt.

type numpoolFixture struct{ engineFixture }

func newNumpoolFixture(t *testing.T) *numpoolFixture { return &numpoolFixture{newEngineFixture(t)} }

// event applies an event to a number and returns the state, or the error.
func (f *numpoolFixture) event(ev NumEvent, num string, a NumEventArgs) string {
	f.t.Helper()
	a.Number, a.HasNumber = b(num), true
	res, err := f.db.NumpoolEvent(b("p"), ev, a)
	if err != nil {
		return err.Error()
	}
	return res.State.String()
}

// call takes a number without naming one; "" when none is free.
func (f *numpoolFixture) call(a NumEventArgs) (string, uint64) {
	f.t.Helper()
	res, err := f.db.NumpoolEvent(b("p"), NumCall, a)
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Number, res.Token
}

// up adds numbers and registers them.
func (f *numpoolFixture) up(nums ...string) {
	f.t.Helper()
	if _, _, err := f.db.NumpoolAdd(b("p"), bs(nums...), nil); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.db.NumpoolReg(b("p"), bs(nums...), true); err != nil {
		f.t.Fatal(err)
	}
}

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// into brings number 1 into state s by events from nodata.
func (f *numpoolFixture) into(s NumState) {
	f.t.Helper()
	path := map[NumState][]NumEvent{
		NumNodata:   nil,
		NumIdleDown: {NumAdd},
		NumIdleUp:   {NumAdd, NumReg},
		NumBusyUp:   {NumAdd, NumReg, NumCall},
		NumBusyDown: {NumAdd, NumReg, NumCall, NumUnreg},
	}[s]
	for _, ev := range path {
		f.event(ev, "1", NumEventArgs{})
	}
	if got := f.stateOf("1"); got != s.String() {
		f.t.Fatalf("set-up reached %s, not %s", got, s)
	}
}

func (f *numpoolFixture) stateOf(num string) string {
	info, ok, err := f.db.NumpoolState(b("p"), b(num))
	switch {
	case err != nil:
		return err.Error()
	case !ok:
		return "nodata"
	}
	return info.State.String()
}

// TestNumpoolTransitionTable checks all 30 cells of SPEC.md §2's table:
// the state reached, or the refusal with the number, state and event, and
// that a refusal changes nothing.
func TestNumpoolTransitionTable(t *testing.T) {
	want := map[string][6]string{
		// add, del, reg, unreg, call, hangup
		"nodata":    {"idle+down", "nodata", "✗", "✗", "✗", "✗"},
		"idle+up":   {"idle+up", "nodata", "idle+up", "idle+down", "busy+up", "✗"},
		"idle+down": {"idle+down", "nodata", "idle+up", "idle+down", "✗", "✗"},
		"busy+up":   {"busy+up", "nodata", "busy+up", "busy+down", "✗", "idle+up"},
		"busy+down": {"busy+down", "nodata", "busy+up", "busy+down", "✗", "idle+down"},
	}
	for s := NumNodata; s < numStates; s++ {
		for ev := NumAdd; ev < numEvents; ev++ {
			t.Run(s.String()+"/"+ev.String(), func(t *testing.T) {
				f := newNumpoolFixture(t)
				f.into(s)
				got := f.event(ev, "1", NumEventArgs{})
				w := want[s.String()][ev]
				if w == "✗" {
					w = fmt.Sprintf("ERR number 1 is %s: %s not allowed", s, ev)
					if after := f.stateOf("1"); after != s.String() {
						t.Errorf("a refused %s moved the number to %s", ev, after)
					}
				}
				if got != w {
					t.Errorf("got %q, want %q", got, w)
				}
				if s != NumNodata && !f.db.Exists(b("p")) {
					t.Error("the pool went with its last number (its token clock with it)")
				}
			})
		}
	}
}

func TestNumpoolPickPolicies(t *testing.T) {
	// Four numbers come up in the order a b c d; c's call ends first, then
	// a's; c goes down and up again. lru prefers the never-called b and d,
	// then c, then a; fifo takes them in the order they became idle+up,
	// which c's re-registration moved to the end.
	setup := func() *numpoolFixture {
		f := newNumpoolFixture(t)
		f.up("a", "b", "c", "d")
		for _, num := range []string{"c", "a"} {
			f.event(NumCall, num, NumEventArgs{})
			f.advance(time.Millisecond)
			f.event(NumHangup, num, NumEventArgs{})
		}
		f.event(NumUnreg, "c", NumEventArgs{})
		f.event(NumReg, "c", NumEventArgs{})
		return f
	}
	picks := func(f *numpoolFixture, p Policy) string {
		var got []string
		for range 4 {
			n, _ := f.call(NumEventArgs{Policy: p})
			got = append(got, n)
		}
		return fmt.Sprint(got)
	}
	expect(t, "lru", picks(setup(), PolicyLRU), "[b d c a]")
	f := setup()
	expect(t, "fifo", picks(f, PolicyFIFO), "[b d a c]")
	if n, _ := f.call(NumEventArgs{}); n != "" {
		t.Fatalf("a call with every number busy took %q", n)
	}
	if got := numpoolState.of(f.e).noneFree; got != 1 {
		t.Fatalf("calls that found none free: %d", got)
	}
	// Hung up one by one, they come back in that order for both.
	for _, n := range []string{"d", "c", "b", "a"} {
		f.advance(time.Millisecond)
		f.event(NumHangup, n, NumEventArgs{})
	}
	expect(t, "lru after the hangups", picks(f, PolicyLRU), "[d c b a]")
}

// TestNumpoolRandomPickIsUniform: 20 idle+up numbers, 40,000 random picks
// (each hung up at once); the counts pass a chi-square test at p = 0.001.
func TestNumpoolRandomPickIsUniform(t *testing.T) {
	f := newNumpoolFixture(t)
	var nums []string
	for i := range 20 {
		nums = append(nums, "n"+strconv.Itoa(i))
	}
	f.up(nums...)
	counts := map[string]int{}
	const draws = 40000
	for range draws {
		n, tok := f.call(NumEventArgs{Policy: PolicyRandom})
		counts[n]++
		f.event(NumHangup, n, NumEventArgs{Token: tok, HasToken: true})
	}
	exp := float64(draws) / float64(len(nums))
	chi := 0.0
	for _, n := range nums {
		d := float64(counts[n]) - exp
		chi += d * d / exp
	}
	// The 0.999 quantile of chi-square with 19 degrees of freedom.
	if chi > 43.82 {
		t.Fatalf("chi-square %.1f over 19 degrees of freedom: not uniform (%v)", chi, counts)
	}
}

func TestNumpoolTags(t *testing.T) {
	f := newNumpoolFixture(t)
	if _, _, err := f.db.NumpoolAdd(b("p"), bs("v1", "v2"), []string{"vip"}); err != nil {
		t.Fatal(err)
	}
	f.up("x1", "v1", "v2")
	f.event(NumAdd, "x1", NumEventArgs{Tag: "night", HasTag: true}) // tags an existing number
	vip := NumEventArgs{Tag: "vip", HasTag: true, Policy: PolicyFIFO}
	n1, _ := f.call(vip)
	n2, _ := f.call(vip)
	n3, _ := f.call(vip)
	expect(t, "vip picks", fmt.Sprintf("%s %s %q", n1, n2, n3), `v1 v2 ""`)
	if n, _ := f.call(NumEventArgs{Tag: "none", HasTag: true}); n != "" {
		t.Fatalf("a tag no number carries picked %q", n)
	}
	s, _ := f.db.NumpoolInfo(b("p"))
	expect(t, "tags", fmt.Sprint(s.Tags), "[{night [0 1 0 0 0]} {vip [0 0 0 2 0]}]")
	f.event(NumDel, "x1", NumEventArgs{})
	s, _ = f.db.NumpoolInfo(b("p"))
	expect(t, "a tag goes with its last number", fmt.Sprintf("%d %s", len(s.Tags), s.Tags[0].Tag), "1 vip")
}

func TestNumpoolLeaseHangsUp(t *testing.T) {
	f := newNumpoolFixture(t)
	f.up("a", "b")
	a, tokA := f.call(NumEventArgs{Policy: PolicyFIFO, Lease: 1000})
	f.event(NumUnreg, "a", NumEventArgs{})
	f.advance(999 * time.Millisecond)
	expect(t, "before the lease ends", f.stateOf(a), "busy+down")
	f.advance(time.Millisecond)
	expect(t, "the lease hung up, the reg state kept", f.stateOf(a), "idle+down")
	info, _, _ := f.db.NumpoolState(b("p"), b(a))
	if info.CallEnd != f.e.Now() || info.LeaseLeft != -1 {
		t.Fatalf("after the lease: %+v (now %d)", info, f.e.Now())
	}
	// A late hangup with the ended call's token is stale, and so is one
	// naming an earlier call of a number that is busy again.
	expect(t, "late hangup", f.event(NumHangup, a, NumEventArgs{Token: tokA, HasToken: true}),
		"ERR stale call token for number a")
	f.event(NumReg, "a", NumEventArgs{})
	f.event(NumCall, "a", NumEventArgs{})
	expect(t, "hangup of an earlier call", f.event(NumHangup, a, NumEventArgs{Token: tokA, HasToken: true}),
		"ERR stale call token for number a")
	expect(t, "still busy", f.stateOf(a), "busy+up")
	s, _ := f.db.NumpoolInfo(b("p"))
	if s.LeaseEnds != 1 || numpoolState.of(f.e).leaseEnds != 1 {
		t.Fatalf("lease hang-ups: %d, %d", s.LeaseEnds, numpoolState.of(f.e).leaseEnds)
	}
}

// TestNumpoolSchedulerEntryFollowsTheKey: a lease's entry follows RENAME
// and goes with DEL.
func TestNumpoolSchedulerEntryFollowsTheKey(t *testing.T) {
	f := newNumpoolFixture(t)
	f.up("a")
	f.call(NumEventArgs{Lease: 500})
	if !f.db.Rename(b("p"), b("q")) {
		t.Fatal("rename")
	}
	f.advance(500 * time.Millisecond)
	p, _ := lookupAs[*Numpool](f.db, b("q"), true)
	if p.counts[NumIdleUp] != 1 || p.armed != 0 {
		t.Fatalf("after the lease under the new name: %v, armed %d", p.counts, p.armed)
	}
	f.call(NumEventArgs{Lease: 500}) // on "p": nothing there
	p2, _ := lookupAs[*Numpool](f.db, b("q"), true)
	res, _ := f.db.NumpoolEvent(b("q"), NumCall, NumEventArgs{Lease: 500})
	if res.Number != "a" || p2.armed == 0 {
		t.Fatalf("call on q: %+v armed %d", res, p2.armed)
	}
	f.db.Delete(b("q"))
	if n := f.e.sched.items.Len(); n != 0 {
		t.Fatalf("%d scheduler entries left after DEL", n)
	}
}

func TestNumpoolRecordCodec(t *testing.T) {
	for _, v := range []poolNumber{
		{state: NumIdleDown},
		{state: NumIdleUp, mark: 7, callStart: 10, callEnd: 20, calls: 2},
		{state: NumBusyUp, mark: math.MaxUint32 + 5, callStart: 30, calls: math.MaxUint32,
			ext: &numberExtra{tags: []string{"a", "b\x00"}, leaseEnd: 99}},
		{state: NumBusyDown, ext: &numberExtra{leaseEnd: 5}},
	} {
		got, err := decodeNumber(encodeNumber(nil, &v))
		if err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
		gx, vx := got.ext, v.ext
		got.ext, v.ext = nil, nil
		if got != v || (gx == nil) != (vx == nil) || gx != nil && (gx.leaseEnd != vx.leaseEnd || !slices.Equal(gx.tags, vx.tags)) {
			t.Errorf("round trip of %+v %+v gave %+v %+v", v, vx, got, gx)
		}
	}
	for _, bad := range [][]byte{{}, {0, 0}, {9, 0}, {1, 4, 0, 0, 0, 0, 0}, {1, 0, 0, 0}} {
		if _, err := decodeNumber(bad); err == nil {
			t.Errorf("decoded %v", bad)
		}
	}
}

// TestNumpoolRestartReplay: the records a pool wrote rebuild it: states,
// tags, counters, both pick orders, leases ending on time, and call tokens
// above every one handed out.
func TestNumpoolRestartReplay(t *testing.T) {
	f := newNumpoolFixture(t)
	f.db.NumpoolAdd(b("p"), bs("t1"), []string{"vip"})
	f.up("a", "b", "c", "t1")
	f.event(NumCall, "a", NumEventArgs{})
	f.advance(time.Millisecond)
	f.event(NumHangup, "a", NumEventArgs{})
	_, tok := f.call(NumEventArgs{Policy: PolicyFIFO, Lease: 2000}) // b
	f.event(NumUnreg, "c", NumEventArgs{})
	f.event(NumReg, "c", NumEventArgs{})
	before, _ := f.db.NumpoolInfo(b("p"))

	g := &numpoolFixture{f.restart(time.Second)}
	after, _ := g.db.NumpoolInfo(b("p"))
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("info after the restart %+v, before %+v", after, before)
	}
	expect(t, "b still busy", g.stateOf("b"), "busy+up")
	g.advance(999 * time.Millisecond)
	expect(t, "the lease runs on", g.stateOf("b"), "busy+up")
	g.advance(time.Millisecond)
	expect(t, "the lease ends on time", g.stateOf("b"), "idle+up")
	// fifo: t1, a, c, b (c re-registered before the restart, b hung up
	// by its lease after it); lru: the never-called t1 and c, then a, b.
	var fifo []string
	var tokens []uint64
	for range 4 {
		n, tk := g.call(NumEventArgs{Policy: PolicyFIFO})
		fifo = append(fifo, n)
		tokens = append(tokens, tk)
	}
	expect(t, "fifo after the restart", fmt.Sprint(fifo), "[t1 a c b]")
	for _, tk := range tokens {
		if tk <= tok {
			t.Fatalf("token %d after the restart, not above %d", tk, tok)
		}
	}
	for _, n := range fifo {
		g.event(NumHangup, n, NumEventArgs{})
	}
}

func TestNumpoolCloneIsIndependent(t *testing.T) {
	f := newNumpoolFixture(t)
	f.db.NumpoolAdd(b("p"), bs("a"), []string{"vip"})
	f.up("a", "b")
	f.call(NumEventArgs{Lease: 1000})
	if !f.db.CopyTo(b("p"), f.db, b("c"), false) {
		t.Fatal("copy")
	}
	f.event(NumDel, "b", NumEventArgs{})
	res, err := f.db.NumpoolEvent(b("c"), NumCall, NumEventArgs{Tag: "vip", HasTag: true})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.db.NumpoolInfo(b("c"))
	p, _ := f.db.NumpoolInfo(b("p"))
	if res.Number != "" || c.Numbers != 2 || p.Numbers != 1 || c.Counts[NumBusyUp] != 1 {
		t.Fatalf("copy %+v, original %+v, call on the copy %+v", c, p, res)
	}
	f.advance(time.Second)
	c, _ = f.db.NumpoolInfo(b("c"))
	if c.Counts[NumIdleUp] != 2 || c.LeaseEnds != 1 {
		t.Fatalf("the copy's lease did not end: %+v", c)
	}
}

func TestNumpoolBulkRegIsAllOrNothing(t *testing.T) {
	f := newNumpoolFixture(t)
	f.db.NumpoolAdd(b("p"), bs("a", "b"), nil)
	_, err := f.db.NumpoolReg(b("p"), bs("a", "zz", "b"), true)
	var refused NumRefusedError
	if !errors.As(err, &refused) || refused.Number != "zz" {
		t.Fatalf("reg with a missing number: %v", err)
	}
	if f.stateOf("a") != "idle+down" {
		t.Fatal("a refused REG changed a number")
	}
	if n, _ := f.db.NumpoolReg(b("p"), bs("a", "b", "a"), true); n != 2 {
		t.Fatalf("reg changed %d", n)
	}
	if _, err := f.db.NumpoolReg(b("nope"), bs("a"), true); err == nil {
		t.Fatal("reg on a missing pool")
	}
}

func TestNumpoolList(t *testing.T) {
	f := newNumpoolFixture(t)
	var nums []string
	for i := range 300 {
		nums = append(nums, "n"+strconv.Itoa(i))
	}
	f.db.NumpoolAdd(b("p"), bs(nums...), nil)
	f.db.NumpoolReg(b("p"), bs(nums[:100]...), true)
	seen := map[string]bool{}
	cursor := uint64(0)
	for {
		next, items, err := f.db.NumpoolList(b("p"), cursor, 10, NumIdleUp, "", false)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.State != NumIdleUp {
				t.Fatalf("%+v listed under STATE idle+up", it)
			}
			seen[it.Number] = true
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	if len(seen) != 100 {
		t.Fatalf("listed %d idle+up numbers of 100", len(seen))
	}
}

// TestNumpoolTokensOutliveTheNumbers: a pool emptied of its numbers stays,
// so a call after it is refilled gets a token above the earlier calls', and
// a late hangup from before cannot end the new call.
func TestNumpoolTokensOutliveTheNumbers(t *testing.T) {
	f := newNumpoolFixture(t)
	f.up("n")
	_, old := f.call(NumEventArgs{})
	expect(t, "del", f.event(NumDel, "n", NumEventArgs{}), "nodata")
	if !f.db.Exists(b("p")) {
		t.Fatal("the emptied pool went")
	}
	f.up("n")
	if _, tok := f.call(NumEventArgs{}); tok <= old {
		t.Fatalf("token %d after refilling, not above %d", tok, old)
	}
	expect(t, "the earlier call's hangup", f.event(NumHangup, "n", NumEventArgs{Token: old, HasToken: true}),
		"ERR stale call token for number n")
}

// A DUMP carries the token clock itself: a RESTOREd copy (a replica's full
// sync) hands out the very tokens the original hands out next.
func TestNumpoolDumpKeepsTheTokenClock(t *testing.T) {
	f := newNumpoolFixture(t)
	f.up("a", "b", "c", "d")
	for range 3 {
		f.call(NumEventArgs{})
	}
	obj, err := f.e.ParseDumpPayload(DumpPayload(f.db.Peek(b("p"))))
	if err != nil {
		t.Fatal(err)
	}
	f.db.Restore(b("copy"), obj, RestoreOptions{IdleTime: -1, Freq: -1})
	orig, err := f.db.NumpoolEvent(b("p"), NumCall, NumEventArgs{})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := f.db.NumpoolEvent(b("copy"), NumCall, NumEventArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if orig.Token != cp.Token || orig.Number != cp.Number {
		t.Errorf("next call: original %s token %d, copy %s token %d", orig.Number, orig.Token, cp.Number, cp.Token)
	}
}
