package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// White-box tests of ROOM's structure: the ring and its records, replay,
// COPY and epochs. Replies through the network are pinned in
// tests/testdata/golden/room_*.txt.

type roomFixture struct{ engineFixture }

func newRoomFixture(t *testing.T) *roomFixture { return &roomFixture{newEngineFixture(t)} }

func (f *roomFixture) pub(payload string, important bool) uint64 {
	f.t.Helper()
	seq, err := f.db.RoomPub(b("r"), b(payload), important)
	if err != nil {
		f.t.Fatal(err)
	}
	return seq
}

// pull renders a pull as "nseq iseq gap epoch? | kind:seq:payload ...".
func (f *roomFixture) pull(a RoomPullArgs) string {
	f.t.Helper()
	if a.Count == 0 {
		a.Count = 100
	}
	res, err := f.db.RoomPull(b("r"), a)
	if err != nil {
		f.t.Fatal(err)
	}
	var msgs []string
	for _, m := range res.Messages {
		kind := "n"
		if m.Important {
			kind = "i"
		}
		msgs = append(msgs, fmt.Sprintf("%s%d:%s", kind, m.Seq, m.Payload))
	}
	return fmt.Sprintf("%d %d %d | %s", res.NSeq, res.ISeq, res.Gap, strings.Join(msgs, " "))
}

func TestRoomRingAndGap(t *testing.T) {
	f := newRoomFixture(t)
	f.db.RoomConfigure(b("r"), func(c *RoomConfig) { c.MaxMessages = 3 })
	for i := 1; i <= 10; i++ {
		if seq := f.pub(fmt.Sprint("m", i), false); seq != uint64(i) {
			t.Fatalf("seq %d for message %d", seq, i)
		}
	}
	f.pub("sig", true)
	expect(t, "from the start", f.pull(RoomPullArgs{}), "10 1 7 | i1:sig n8:m8 n9:m9 n10:m10")
	expect(t, "caught up", f.pull(RoomPullArgs{NSeq: 10, ISeq: 1}), "10 1 0 | ")
	expect(t, "in the ring", f.pull(RoomPullArgs{NSeq: 8, ISeq: 1}), "10 1 0 | n9:m9 n10:m10")
	expect(t, "count", f.pull(RoomPullArgs{NSeq: 0, ISeq: 0, Count: 2}), "8 1 7 | i1:sig n8:m8")
	expect(t, "latest", f.pull(RoomPullArgs{NLatest: true, ILatest: true}), "10 1 0 | ")
	expect(t, "ahead of the room", f.pull(RoomPullArgs{NSeq: 50, ISeq: 9}), "50 9 0 | ")
	// The ring's records: only the three newest normal messages remain.
	store := listStore{}
	store.apply(f.rec.take())
	if n := len(store.get(0, "r").items); n != 4 {
		t.Fatalf("%d item records, want 3 normal and 1 important", n)
	}
}

func TestRoomImportantSurvivesAFlood(t *testing.T) {
	f := newRoomFixture(t)
	f.db.RoomConfigure(b("r"), func(c *RoomConfig) { c.MaxMessages = 2; c.ImportantMax = 2; c.ImportantTTL = 1000 })
	f.pub("gift", true)
	for i := range 100 {
		f.pub(fmt.Sprint("m", i), false)
	}
	expect(t, "after the flood", f.pull(RoomPullArgs{NSeq: 99}), "100 1 0 | i1:gift n100:m99")
	f.pub("g2", true)
	f.pub("g3", true)
	expect(t, "over the cap", f.pull(RoomPullArgs{NSeq: 100}), "100 3 0 | i2:g2 i3:g3")
	f.advance(999 * time.Millisecond)
	expect(t, "before the TTL", f.pull(RoomPullArgs{NSeq: 100, ISeq: 1}), "100 3 0 | i2:g2 i3:g3")
	f.advance(time.Millisecond)
	expect(t, "past the TTL: nothing, and the cursor past them", f.pull(RoomPullArgs{NSeq: 100, ISeq: 0}), "100 3 0 | ")
	info, _, _ := f.db.RoomInfoOf(b("r"))
	if info.Important != 0 || info.ISeq != 3 || info.FirstISeq != 4 {
		t.Fatalf("after the TTL: %+v", info)
	}
}

// TestRoomRestartReplay: the records rebuild the room: messages, sequence
// numbers, epoch and configuration, with the ring's evictions applied.
func TestRoomRestartReplay(t *testing.T) {
	f := newRoomFixture(t)
	f.db.RoomConfigure(b("r"), func(c *RoomConfig) { c.MaxMessages = 3 })
	for i := 1; i <= 5; i++ {
		f.pub(fmt.Sprint("m", i), false)
	}
	f.pub("sig", true)
	before, _, _ := f.db.RoomInfoOf(b("r"))
	g := &roomFixture{f.restart(time.Second)}
	after, _, _ := g.db.RoomInfoOf(b("r"))
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("after the restart %+v, before %+v", after, before)
	}
	expect(t, "pull after the restart", g.pull(RoomPullArgs{}), "5 1 2 | i1:sig n3:m3 n4:m4 n5:m5")
	if seq := g.pub("m6", false); seq != 6 {
		t.Fatalf("seq %d after the restart", seq)
	}
	// A new room made after the restart in the same millisecond as the
	// old epoch still gets another epoch.
	g.db.Delete(b("r"))
	g.pub("x", false)
	again, _, _ := g.db.RoomInfoOf(b("r"))
	if again.Epoch <= before.Epoch {
		t.Fatalf("epoch %d after re-creating, not above %d", again.Epoch, before.Epoch)
	}
}

func TestRoomLoadDropsAMisnumberedTail(t *testing.T) {
	r := &Room{}
	r.normal.last = 5
	for _, seq := range []uint64{2, 3, 4} { // 5 is missing: the tail is not the last
		if err := r.loadItem(roomItemKey(nil, roomItemNormal, seq), encodeRoomMsg(nil, &roomMsg{payload: "p"})); err != nil {
			t.Fatal(err)
		}
	}
	r.finishLoad()
	if r.normal.len() != 0 || r.bytes != 0 {
		t.Fatalf("kept %d messages, %d bytes", r.normal.len(), r.bytes)
	}
	r = &Room{}
	r.normal.last = 4
	for _, seq := range []uint64{1, 3, 4} { // a hole after 1: keep 3 and 4
		r.loadItem(roomItemKey(nil, roomItemNormal, seq), encodeRoomMsg(nil, &roomMsg{payload: "p"}))
	}
	r.finishLoad()
	if r.normal.len() != 2 || r.normal.first() != 3 {
		t.Fatalf("kept %d from %d", r.normal.len(), r.normal.first())
	}
}

func TestRoomCloneIsIndependent(t *testing.T) {
	f := newRoomFixture(t)
	f.pub("a", false)
	if !f.db.CopyTo(b("r"), f.db, b("c"), false) {
		t.Fatal("copy")
	}
	f.pub("b", false)
	res, _ := f.db.RoomPull(b("c"), RoomPullArgs{Count: 10})
	ri, _, _ := f.db.RoomInfoOf(b("r"))
	if len(res.Messages) != 1 || res.NSeq != 1 || res.Epoch != ri.Epoch {
		t.Fatalf("the copy: %+v (original epoch %d)", res, ri.Epoch)
	}
}

func TestRoomMetaCodec(t *testing.T) {
	for _, conf := range []RoomConfig{
		{MaxMessages: 7, ImportantMax: 3, ImportantTTL: 99, PresenceTTL: 5000},
		{Tiers: []RoomTier{}},
		{Tiers: []RoomTier{{Online: 1000, Interval: 500}, {Online: 100000, Interval: 3000}}},
	} {
		r := &Room{epoch: 1800000000000, conf: conf}
		r.normal.last, r.important.last = 12, 4
		back, err := decodeRoomMeta(r.appendMeta(nil))
		if err != nil || back.epoch != r.epoch || fmt.Sprintf("%#v", back.conf) != fmt.Sprintf("%#v", r.conf) ||
			back.normal.last != 12 || back.important.last != 4 {
			t.Fatalf("round trip of %+v: %+v %v", conf, back, err)
		}
	}
	for _, bad := range [][]byte{{}, {2}, {1, 0}} {
		if _, err := decodeRoomMeta(bad); err == nil {
			t.Errorf("decoded %v", bad)
		}
	}
}

// TestRoomUniqueViewers: HEARTBEAT and PULL UID count users once, exactly
// up to uv-exact-max, then as a HyperLogLog whose sketch replaces the
// member records; the total survives a restart; WINDOW counts by minute.
func TestRoomUniqueViewers(t *testing.T) {
	f := newRoomFixture(t)
	lim := DefaultLimits()
	lim.UVExactMax = 100
	f.e.SetLimits(lim)
	f.pub("x", false)
	f.db.RoomHeartbeat(b("r"), bs("1", "2", "3"))
	f.db.RoomPull(b("r"), RoomPullArgs{Count: 10, UID: b("3")})
	f.db.RoomPull(b("r"), RoomPullArgs{Count: 10, UID: b("reader")})
	if n, _ := f.db.RoomUV(b("r"), 0); n != 4 {
		t.Fatalf("exact count %d", n)
	}
	f.clock.Advance(2 * time.Minute)
	var many []string
	for i := range 1000 {
		many = append(many, fmt.Sprint("u", i))
	}
	f.db.RoomHeartbeat(b("r"), bs(many...))
	total, _ := f.db.RoomUV(b("r"), 0)
	if total < 980 || total > 1030 {
		t.Fatalf("estimate %d for 1004 users", total)
	}
	if n, _ := f.db.RoomUV(b("r"), 60_000); n < 970 || n > 1030 {
		t.Fatalf("last minute: %d for 1000 users", n)
	}
	if n, _ := f.db.RoomUV(b("r"), 10*60_000); n < 980 || n > 1030 {
		t.Fatalf("last ten minutes: %d for 1004 users", n)
	}
	store := listStore{}
	store.apply(f.rec.take())
	for item := range store.get(0, "r").items {
		if item[0] == roomItemUVMember {
			t.Fatalf("member record %q left after the conversion", item)
		}
	}
	e := New(Options{Clock: f.clock})
	e.SetLimits(lim)
	e = store.loadInto(t, e)
	e.Lock()
	e.FinishLoad()
	t.Cleanup(e.Unlock)
	if n, _ := e.DB(0).RoomUV(b("r"), 0); n != total {
		t.Fatalf("after the restart %d, before %d", n, total)
	}
	if n, _ := e.DB(0).RoomUV(b("r"), 60_000); n != 0 {
		t.Fatalf("the window is soft state, yet %d after the restart", n)
	}
}
