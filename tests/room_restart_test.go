package tests

import (
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ROOM across restarts of the binary: kill -9 under load with appendfsync
// always, and cursors across a clean SHUTDOWN (helpers in room_test.go).

// roomKillRoom is a room of TestRoomKill9 with the limits it runs under.
type roomKillRoom struct {
	name                        string
	maxMessages, importantMax   int   // 0: the server's defaults
	ring, importants            int64 // the limits in force
	epoch                       int64
	last                        map[string]int64 // kind -> the last sequence number after the last restart
	durable                     map[string]map[int64]string
	at                          map[string]map[int64]int64
	reader                      roomKillReader
	acknowledged, adopted, seen int
}

// roomKillReader is a long-polling reader that keeps its cursors across
// kills.
type roomKillReader struct {
	nseq, iseq int64
	seen       []roomMessage
	err        string
}

// roomKillAck is a PUB: acknowledged, or in flight when the server died.
type roomKillAck struct {
	room, kind, payload string
	seq                 int64
}

// TestRoomKill9: under appendfsync always, 4 publishers send to 3 rooms
// (the server's ring of 2000, a ring of 100, and a ring of 10 keeping 3
// important messages) while a long-polling reader per room follows it; the
// binary is killed with -9 mid-load, 3 times. Each publisher records every
// acknowledged PUB (room, kind, sequence number, payload), and each reader
// every message it received. After each restart, in every room: the epoch
// is the one it was created with; ROOM.PULL from 0 0 returns exactly the
// newest messages the ring holds (ring size, or all), contiguous, the gap
// their first minus 1, each list ending at or after the last sequence
// number anyone was told of; each message held has the payload its
// publisher was told (or is the one PUB that publisher had in flight) and
// the time it was first read with; new PUBs continue above the sequence
// numbers that survived (none is handed out twice); and each reader's
// cursors from before the kill, pulled with its EPOCH, resume with the
// next message (or an exact gap).
func TestRoomKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const publishers, kills = 4, 3
	rooms := []*roomKillRoom{
		{name: "k:chat", ring: 2000, importants: 200},
		{name: "k:mid", maxMessages: 100, ring: 100, importants: 200},
		{name: "k:tiny", maxMessages: 10, importantMax: 3, ring: 10, importants: 3},
	}
	for _, r := range rooms {
		r.last = map[string]int64{"normal": 0, "important": 0}
		r.durable = map[string]map[int64]string{"normal": {}, "important": {}}
		r.at = map[string]map[int64]int64{"normal": {}, "important": {}}
	}
	byName := map[string]*roomKillRoom{}
	for _, r := range rooms {
		byName[r.name] = r
	}
	dir := t.TempDir()
	var inflight []roomKillAck
	var evicted int64
	for round := 0; round <= kills; round++ {
		p := startProcess(t, dir, "--appendfsync", "always")
		admin := goRedis(t, p.addr, 3)
		if round == 0 {
			for _, r := range rooms {
				if err := admin.Do(ctx, "ROOM.CONFIG", r.name, "MAXMESSAGES", r.maxMessages,
					"IMPORTANT-MAX", r.importantMax).Err(); err != nil {
					t.Fatalf("ROOM.CONFIG %s: %v", r.name, err)
				}
				r.epoch = roomInfo(t, admin, r.name)["epoch"]
			}
		} else {
			for _, r := range rooms {
				roomKillVerify(t, admin, r, round, inflight)
			}
			if t.Failed() {
				t.FailNow()
			}
			evicted = rooms[2].last["normal"] - rooms[2].ring
		}
		inflight = nil
		if round == kills {
			p.terminate(t)
			break
		}

		var wg sync.WaitGroup
		acks := make([][]roomKillAck, publishers)
		lost := make([]*roomKillAck, publishers)
		errs := make([]string, publishers)
		for pi := range publishers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := redis.NewClient(&redis.Options{Addr: p.addr, Protocol: 2, DisableIdentity: true,
					MaxRetries: -1, PoolSize: 1})
				defer c.Close()
				rng := rand.New(rand.NewSource(int64(2400 + round*10 + pi)))
				for n := 0; ; n++ {
					a := roomKillAck{room: rooms[rng.Intn(len(rooms))].name, kind: "normal",
						payload: fmt.Sprintf("r%d:p%d:%d", round, pi, n)}
					args := []any{"ROOM.PUB", a.room, a.payload}
					if rng.Intn(6) == 0 {
						args, a.kind = append(args, "IMPORTANT"), "important"
					}
					seq, err := c.Do(ctx, args...).Int64()
					if err != nil {
						if isRedisError(err) {
							errs[pi] = fmt.Sprintf("%v: %v", args, err)
						} else {
							p.stoppedByKill(t, fmt.Sprintf("round %d publisher %d", round, pi), err)
						}
						lost[pi] = &a // killed: the reply never came
						return
					}
					a.seq = seq
					acks[pi] = append(acks[pi], a)
				}
			}()
		}
		for _, r := range rooms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := redis.NewClient(&redis.Options{Addr: p.addr, Protocol: 3, MaxRetries: -1, PoolSize: 1,
					ReadTimeout: 10 * time.Second})
				defer c.Close()
				rd := &r.reader
				for {
					rep, err := roomPull(c, r.name, rd.nseq, rd.iseq, "BLOCK", 1000, "COUNT", 100, "EPOCH", r.epoch)
					if err != nil {
						if isRedisError(err) {
							rd.err = err.Error()
						} else {
							p.stoppedByKill(t, fmt.Sprintf("round %d reader of %s", round, r.name), err)
						}
						return
					}
					if msg := roomCheckStep(rd.nseq, rd.iseq, r.epoch, 100, false, int(r.ring), rep); msg != "" {
						rd.err = fmt.Sprintf("ROOM.PULL %s %d %d: %s\n%v", r.name, rd.nseq, rd.iseq, msg, rep)
						return
					}
					rd.seen = append(rd.seen, rep.msgs...)
					rd.nseq, rd.iseq = rep.nseq, rep.iseq
				}
			}()
		}
		time.Sleep(400 * time.Millisecond)
		p.kill9(t)
		wg.Wait()

		// What the server told anyone is durable: the acknowledged PUBs
		// and what the readers received.
		for pi := range publishers {
			if errs[pi] != "" {
				t.Errorf("round %d publisher %d: %s", round, pi, errs[pi])
			}
			for _, a := range acks[pi] {
				r := byName[a.room]
				if a.seq <= r.last[a.kind] {
					t.Errorf("round %d: ROOM.PUB %s %q got %s %d, which had survived the kill before",
						round, a.room, a.payload, a.kind, a.seq)
				}
				if old, ok := r.durable[a.kind][a.seq]; ok {
					t.Errorf("round %d: %s %s %d handed out twice: %q and %q", round, a.room, a.kind, a.seq, old, a.payload)
				}
				r.durable[a.kind][a.seq] = a.payload
				r.acknowledged++
			}
			if lost[pi] != nil {
				inflight = append(inflight, *lost[pi])
			}
		}
		for _, r := range rooms {
			rd := &r.reader
			if rd.err != "" {
				t.Errorf("round %d reader of %s: %s", round, r.name, rd.err)
			}
			for _, m := range rd.seen {
				roomKillAdopt(t, r, m, fmt.Sprintf("round %d: the reader got", round))
			}
			r.seen += len(rd.seen)
			rd.seen, rd.err = nil, ""
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	acked := 0
	for _, r := range rooms {
		acked += r.acknowledged
		t.Logf("%s: %d PUBs acknowledged, %d in flight found, %d messages read, ends at %d %d", r.name,
			r.acknowledged, r.adopted, r.seen, r.last["normal"], r.last["important"])
	}
	if acked < 60 || evicted <= 0 {
		t.Errorf("too little load: %d PUBs acknowledged, %d normal messages left the ring of 10 ", acked, evicted)
	}
}

// roomKillAdopt records that message m of room r was seen (by a reader or
// after a restart), checking it against what was known of it.
func roomKillAdopt(t *testing.T, r *roomKillRoom, m roomMessage, who string) {
	t.Helper()
	if old, ok := r.durable[m.kind][m.seq]; ok && old != m.payload {
		t.Errorf("%s %s %s %d = %q, but it was %q", who, r.name, m.kind, m.seq, m.payload, old)
	}
	r.durable[m.kind][m.seq] = m.payload
	if at, ok := r.at[m.kind][m.seq]; ok && at != m.at {
		t.Errorf("%s %s %s %d published at %d, before at %d", who, r.name, m.kind, m.seq, m.at, at)
	}
	r.at[m.kind][m.seq] = m.at
}

// roomKillVerify checks a room after a restart (see TestRoomKill9).
func roomKillVerify(t *testing.T, c *redis.Client, r *roomKillRoom, round int, inflight []roomKillAck) {
	t.Helper()
	who := fmt.Sprintf("after kill %d, %s:", round, r.name)
	info := roomInfo(t, c, r.name)
	if info["epoch"] != r.epoch {
		t.Errorf("%s epoch %d, it was %d", who, info["epoch"], r.epoch)
	}
	rep, err := roomPull(c, r.name, 0, 0, "COUNT", 1000000)
	if err != nil {
		t.Fatalf("%s ROOM.PULL 0 0: %v", who, err)
	}
	if rep.epoch != r.epoch || rep.nseq != info["nseq"] || rep.iseq != info["iseq"] {
		t.Errorf("%s ROOM.PULL 0 0 says nseq %d iseq %d epoch %d, ROOM.INFO %v", who, rep.nseq, rep.iseq,
			rep.epoch, info)
	}
	limits := map[string]int64{"normal": r.ring, "important": r.importants}
	ends := map[string]int64{"normal": rep.nseq, "important": rep.iseq}
	held := map[string][]roomMessage{}
	for _, m := range rep.msgs {
		held[m.kind] = append(held[m.kind], m)
	}
	used := map[int]bool{}
	for _, kind := range []string{"normal", "important"} {
		last := ends[kind]
		var known []int64
		for s := range r.durable[kind] {
			known = append(known, s)
		}
		sort.Slice(known, func(i, j int) bool { return known[i] < known[j] })
		if n := len(known); n > 0 && known[n-1] > last {
			t.Errorf("%s the %s list ends at %d, but %d was acknowledged or read before the kill",
				who, kind, last, known[n-1])
		}
		first := max(1, last-limits[kind]+1)
		if kind == "normal" && rep.gap != first-1 {
			t.Errorf("%s ROOM.PULL 0 0 gap %d, the ring starts at %d", who, rep.gap, first)
		}
		if info["first-"+kind[:1]+"seq"] != first {
			t.Errorf("%s ROOM.INFO first-%sseq %d, want %d (list ends at %d, holds %d)", who, kind[:1],
				info["first-"+kind[:1]+"seq"], first, last, limits[kind])
		}
		msgs := held[kind]
		if int64(len(msgs)) != last-first+1 {
			t.Errorf("%s %d %s messages held, want %d..%d", who, len(msgs), kind, first, last)
			continue
		}
		for i, m := range msgs {
			if m.seq != first+int64(i) {
				t.Errorf("%s %s message %d has sequence number %d, want %d", who, kind, i, m.seq, first+int64(i))
				break
			}
			if _, ok := r.durable[kind][m.seq]; !ok {
				// Nobody was told of it: it must be a PUB whose reply the
				// kill cut off.
				found := false
				for k, a := range inflight {
					if !used[k] && a.room == r.name && a.kind == kind && a.payload == m.payload {
						used[k], found = true, true
						r.adopted++
						break
					}
				}
				if !found {
					t.Errorf("%s %s %d = %q was never sent (in flight: %v)", who, kind, m.seq, m.payload, inflight)
				}
			}
			roomKillAdopt(t, r, m, who)
		}
	}
	// The reader's cursors from before the kill resume where it left off.
	rd := &r.reader
	rep2, err := roomPull(c, r.name, rd.nseq, rd.iseq, "COUNT", 1000000, "EPOCH", r.epoch)
	if err != nil {
		t.Fatalf("%s ROOM.PULL %d %d EPOCH %d: %v", who, rd.nseq, rd.iseq, r.epoch, err)
	}
	if msg := roomCheckStep(rd.nseq, rd.iseq, r.epoch, 1000000, false, int(r.ring), rep2); msg != "" {
		t.Errorf("%s the reader's ROOM.PULL %d %d EPOCH %d: %s\n%v", who, rd.nseq, rd.iseq, r.epoch, msg, rep2)
	} else if rep2.nseq != rep.nseq || rep2.iseq != rep.iseq {
		t.Errorf("%s the reader's ROOM.PULL %d %d ends at %d %d, the room at %d %d", who, rd.nseq, rd.iseq,
			rep2.nseq, rep2.iseq, rep.nseq, rep.iseq)
	} else if wantGap := max(0, max(1, rep.nseq-r.ring+1)-rd.nseq-1); rep2.gap != wantGap {
		t.Errorf("%s the reader's ROOM.PULL %d %d: gap %d, want %d", who, rd.nseq, rd.iseq, rep2.gap, wantGap)
	}
	r.last["normal"], r.last["important"] = rep.nseq, rep.iseq
}

// TestRoomCursorsAcrossRestart: cursors taken before a clean SHUTDOWN are
// valid after it: same epoch, and pulling from them returns exactly the
// messages published later (after an exact gap where the ring moved on),
// with the same times; a long poll from them is answered by the next PUB.
// A room deleted before the SHUTDOWN stays deleted; one deleted (before or
// after) and made again has another epoch, above the old, and a PULL with
// the old EPOCH reads the new room from its start, also after one more
// restart.
func TestRoomCursorsAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProcess(t, dir)
	c := goRedis(t, p.addr, 3)
	pub := func(c *redis.Client, key string, payloads ...string) {
		t.Helper()
		for _, pl := range payloads {
			args := []any{"ROOM.PUB", key, pl}
			if pl[0] == 'i' {
				args = append(args, "IMPORTANT")
			}
			if err := c.Do(ctx, args...).Err(); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
		}
	}
	// pull runs ROOM.PULL and renders the reply without the times.
	pull := func(c *redis.Client, key string, args ...any) string {
		t.Helper()
		r, err := roomPull(c, key, args[0], args[1], args[2:]...)
		if err != nil {
			t.Fatalf("ROOM.PULL %s %v: %v", key, args, err)
		}
		return r.String()
	}
	if err := c.Do(ctx, "ROOM.CONFIG", "s:ring", "MAXMESSAGES", 5).Err(); err != nil {
		t.Fatal(err)
	}
	pub(c, "s:chat", "n1", "n2", "i1", "n3", "n4", "i2", "n5", "n6")
	pub(c, "s:ring", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8")
	pub(c, "s:gone", "g1", "g2")
	e := roomInfo(t, c, "s:chat")["epoch"]
	eRing := roomInfo(t, c, "s:ring")["epoch"]
	eGone := roomInfo(t, c, "s:gone")["epoch"]
	// Cursors: A partway (COUNT), B at the end ($), C past a gap.
	for _, tc := range []struct {
		key  string
		args []any
		want string
	}{
		{"s:chat", []any{0, 0, "COUNT", 3}, fmt.Sprintf(`nseq=1 iseq=2 gap=0 retry=0 epoch=%d [i:1:"i1" i:2:"i2" n:1:"n1"]`, e)},
		{"s:chat", []any{"$", "$"}, fmt.Sprintf(`nseq=6 iseq=2 gap=0 retry=0 epoch=%d []`, e)},
		{"s:ring", []any{0, 0, "COUNT", 2}, fmt.Sprintf(`nseq=5 iseq=0 gap=3 retry=0 epoch=%d [n:4:"r4" n:5:"r5"]`, eRing)},
	} {
		if got := pull(c, tc.key, tc.args...); got != tc.want {
			t.Fatalf("before the restart, ROOM.PULL %s %v: %s\nwant %s", tc.key, tc.args, got, tc.want)
		}
	}
	full, err := roomPull(c, "s:chat", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := dInt(t, c, "DEL", "s:gone"); n != 1 {
		t.Fatalf("DEL s:gone: %d", n)
	}
	npShutdown(t, p)

	p = startProcess(t, dir)
	c = goRedis(t, p.addr, 3)
	if got := roomInfo(t, c, "s:chat")["epoch"]; got != e {
		t.Errorf("s:chat's epoch after the restart: %d, was %d", got, e)
	}
	if got := roomInfo(t, c, "s:ring")["epoch"]; got != eRing {
		t.Errorf("s:ring's epoch after the restart: %d, was %d", got, eRing)
	}
	if again, err := roomPull(c, "s:chat", 0, 0); err != nil || fmt.Sprint(again) != fmt.Sprint(full) {
		t.Errorf("s:chat after the restart: %v %v\nbefore: %v", again, err, full)
	} else {
		for i := range full.msgs {
			if full.msgs[i].at != again.msgs[i].at {
				t.Errorf("s:chat message %d published at %d, after the restart at %d", i, full.msgs[i].at, again.msgs[i].at)
			}
		}
	}
	if v, err := c.Do(ctx, "ROOM.INFO", "s:gone").Result(); err != redis.Nil {
		t.Errorf("ROOM.INFO s:gone, deleted before the restart: %#v %v", v, err)
	}
	steps := []struct {
		pub  []string // published first, to the key
		key  string
		args []any
		want string
	}{
		// B, at the end: nothing new yet; then exactly what came later.
		{nil, "s:chat", []any{6, 2, "EPOCH", e}, fmt.Sprintf(`nseq=6 iseq=2 gap=0 retry=0 epoch=%d []`, e)},
		{[]string{"n7", "i3", "n8"}, "s:chat", []any{6, 2, "EPOCH", e},
			fmt.Sprintf(`nseq=8 iseq=3 gap=0 retry=0 epoch=%d [i:3:"i3" n:7:"n7" n:8:"n8"]`, e)},
		// A, partway: the rest from before, then the later ones.
		{nil, "s:chat", []any{1, 2, "EPOCH", e},
			fmt.Sprintf(`nseq=8 iseq=3 gap=0 retry=0 epoch=%d [i:3:"i3" n:2:"n2" n:3:"n3" n:4:"n4" n:5:"n5" n:6:"n6" n:7:"n7" n:8:"n8"]`, e)},
		// C, past a gap: the rest of the ring; and once the ring moves
		// on, the exact gap.
		{nil, "s:ring", []any{5, 0, "EPOCH", eRing}, fmt.Sprintf(`nseq=8 iseq=0 gap=0 retry=0 epoch=%d [n:6:"r6" n:7:"r7" n:8:"r8"]`, eRing)},
		{[]string{"r9", "r10", "r11"}, "s:ring", []any{5, 0, "EPOCH", eRing},
			fmt.Sprintf(`nseq=11 iseq=0 gap=1 retry=0 epoch=%d [n:7:"r7" n:8:"r8" n:9:"r9" n:10:"r10" n:11:"r11"]`, eRing)},
	}
	for _, s := range steps {
		pub(c, s.key, s.pub...)
		if got := pull(c, s.key, s.args...); got != s.want {
			t.Errorf("after the restart, after PUB %v, ROOM.PULL %s %v: %s\nwant %s", s.pub, s.key, s.args, got, s.want)
		}
	}
	// A long poll from B's cursors is answered by the next PUB.
	got := make(chan string, 1)
	go func() {
		r, err := roomPull(c, "s:chat", 8, 3, "BLOCK", 10000, "EPOCH", e)
		got <- fmt.Sprint(r, err)
	}()
	waitFor(t, 5*time.Second, "the long poll", func() bool { return roomInfo(t, c, "s:chat")["pullers"] == 1 })
	pub(c, "s:chat", "n9")
	if g, want := <-got, fmt.Sprintf(`nseq=9 iseq=3 gap=0 retry=0 epoch=%d [n:9:"n9"] <nil>`, e); g != want {
		t.Errorf("long poll after the restart: %s\nwant %s", g, want)
	}

	// Rooms made again: deleted before the restart (s:gone), after it
	// (s:chat).
	pub(c, "s:gone", "new")
	dInt(t, c, "DEL", "s:chat")
	pub(c, "s:chat", "fresh")
	e2, eGone2 := roomInfo(t, c, "s:chat")["epoch"], roomInfo(t, c, "s:gone")["epoch"]
	if e2 <= e || eGone2 <= eGone || e2 == eGone2 {
		t.Errorf("epochs of rooms made again: s:chat %d (was %d), s:gone %d (was %d)", e2, e, eGone2, eGone)
	}
	check := func(when string) {
		t.Helper()
		for _, s := range []struct {
			key  string
			args []any
			want string
		}{
			{"s:chat", []any{9, 3, "EPOCH", e}, fmt.Sprintf(`nseq=1 iseq=0 gap=0 retry=0 epoch=%d [n:1:"fresh"]`, e2)},
			{"s:chat", []any{0, 0, "EPOCH", e2}, fmt.Sprintf(`nseq=1 iseq=0 gap=0 retry=0 epoch=%d [n:1:"fresh"]`, e2)},
			{"s:chat", []any{1, 0, "EPOCH", e2}, fmt.Sprintf(`nseq=1 iseq=0 gap=0 retry=0 epoch=%d []`, e2)},
			{"s:gone", []any{2, 0, "EPOCH", eGone}, fmt.Sprintf(`nseq=1 iseq=0 gap=0 retry=0 epoch=%d [n:1:"new"]`, eGone2)},
			// Without EPOCH the old cursors are taken as this room's,
			// past its end: nothing, and the epoch tells the reader.
			{"s:gone", []any{2, 0}, fmt.Sprintf(`nseq=2 iseq=0 gap=0 retry=0 epoch=%d []`, eGone2)},
		} {
			if got := pull(c, s.key, s.args...); got != s.want {
				t.Errorf("%s: ROOM.PULL %s %v: %s\nwant %s", when, s.key, s.args, got, s.want)
			}
		}
	}
	check("made again")
	npShutdown(t, p)
	p = startProcess(t, dir)
	c = goRedis(t, p.addr, 3)
	check("made again, after one more restart")
	p.terminate(t)
}
