package tests

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ROOM's replies and errors are pinned in transcripts
// (testdata/golden/room_*.txt). What stays in Go is what a transcript cannot
// say: hundreds of long-polling readers racing several publishers, blocked
// pullers that hang up or are unblocked, and (room_restart_test.go) kill -9
// of the binary under load and cursors across a clean restart.

// roomMessage is one message of a ROOM.PULL reply.
type roomMessage struct {
	kind    string // "normal" or "important"
	seq     int64
	payload string
	at      int64
}

// roomReply is a ROOM.PULL reply: [nseq, iseq, gap, retry-after, epoch,
// messages].
type roomReply struct {
	nseq, iseq, gap, retry, epoch int64
	msgs                          []roomMessage
}

func (r roomReply) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nseq=%d iseq=%d gap=%d retry=%d epoch=%d [", r.nseq, r.iseq, r.gap, r.retry, r.epoch)
	for i, m := range r.msgs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s:%d:%q", m.kind[:1], m.seq, m.payload)
	}
	b.WriteString("]")
	return b.String()
}

func parseRoomReply(v any) (roomReply, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) != 6 {
		return roomReply{}, fmt.Errorf("ROOM.PULL reply %#v is not a 6-element array", v)
	}
	var r roomReply
	for i, p := range []*int64{&r.nseq, &r.iseq, &r.gap, &r.retry, &r.epoch} {
		n, ok := arr[i].(int64)
		if !ok {
			return roomReply{}, fmt.Errorf("ROOM.PULL reply element %d is %#v, not an integer", i, arr[i])
		}
		*p = n
	}
	msgs, ok := arr[5].([]any)
	if !ok {
		return roomReply{}, fmt.Errorf("ROOM.PULL messages %#v are not an array", arr[5])
	}
	for _, e := range msgs {
		el, ok := e.([]any)
		if !ok || len(el) != 4 {
			return roomReply{}, fmt.Errorf("ROOM.PULL message %#v is not [kind, seq, payload, unix-ms]", e)
		}
		var m roomMessage
		var ok1, ok2, ok3, ok4 bool
		m.kind, ok1 = el[0].(string)
		m.seq, ok2 = el[1].(int64)
		m.payload, ok3 = el[2].(string)
		m.at, ok4 = el[3].(int64)
		if !ok1 || !ok2 || !ok3 || !ok4 || (m.kind != "normal" && m.kind != "important") {
			return roomReply{}, fmt.Errorf("ROOM.PULL message %#v has the wrong types", e)
		}
		r.msgs = append(r.msgs, m)
	}
	return r, nil
}

// roomPull runs ROOM.PULL key nseq iseq with options and parses the reply.
func roomPull(c *redis.Client, key string, nseq, iseq any, opts ...any) (roomReply, error) {
	v, err := c.Do(ctx, append([]any{"ROOM.PULL", key, nseq, iseq}, opts...)...).Result()
	if err != nil {
		return roomReply{}, err
	}
	return parseRoomReply(v)
}

// roomCheckStep checks one reply against the cursors it was asked with
// (nseq, iseq, epoch; epoch 0 when the reader knows none yet), the COUNT,
// and what the reader may assume of the room: that no important message
// left it (importantsKept), and the size of its ring of normal messages
// (ring; 0 when no normal message ever left it). It says what is wrong, or
// "".
func roomCheckStep(nseq, iseq, epoch int64, count int, importantsKept bool, ring int, r roomReply) string {
	if r.retry != 0 {
		return "retry-after is not 0"
	}
	if len(r.msgs) > count {
		return fmt.Sprintf("%d messages, more than COUNT %d", len(r.msgs), count)
	}
	if epoch != 0 && r.epoch != epoch {
		// The rooms of these tests are never deleted.
		return fmt.Sprintf("the epoch changed from %d", epoch)
	}
	if r.epoch == 0 && (len(r.msgs) > 0 || r.nseq != nseq || r.iseq != iseq || r.gap != 0) {
		return "epoch 0 (no room), yet messages, a gap or moved cursors"
	}
	wantI, wantN := iseq, nseq
	normals := 0
	for i, m := range r.msgs {
		switch m.kind {
		case "important":
			if normals > 0 {
				return fmt.Sprintf("message %d: an important message after a normal one", i)
			}
			if m.seq != wantI+1 && (importantsKept || m.seq <= wantI) {
				return fmt.Sprintf("message %d: important %d after %d", i, m.seq, wantI)
			}
			wantI = m.seq
		default:
			want := wantN + 1
			if normals == 0 {
				want += r.gap
			}
			if m.seq != want {
				return fmt.Sprintf("message %d: normal %d, want %d (cursor %d, gap %d)", i, m.seq, want, nseq, r.gap)
			}
			wantN = m.seq
			normals++
		}
	}
	if r.gap != 0 && (normals == 0 || ring == 0) {
		return fmt.Sprintf("a gap of %d with %d normal messages from a ring that lost none", r.gap, normals)
	}
	if ring > 0 && normals > ring {
		return fmt.Sprintf("%d normal messages from a ring of %d", normals, ring)
	}
	// A gap resumes at the oldest message held, so a reply that COUNT did
	// not cut short holds the whole ring, full since messages left it.
	if ring > 0 && r.gap > 0 && len(r.msgs) < count && normals != ring {
		return fmt.Sprintf("a gap of %d, then %d normal messages: the ring of %d holds more", r.gap, normals, ring)
	}
	if r.nseq != wantN || r.iseq != wantI {
		return fmt.Sprintf("cursors %d %d, but the messages end at %d %d", r.nseq, r.iseq, wantN, wantI)
	}
	return ""
}

// roomSeen is what one reader received of one message.
type roomSeen struct {
	seq     int64
	payload string
	at      int64
}

// roomPuller is one long-polling reader in TestRoomManyLongPollers.
type roomPuller struct {
	room       string
	laggard    bool // starts late, from 0 0, to find the ring moved on
	normals    []roomSeen
	importants []roomSeen
	gaps       int64 // normal messages it was told it missed
	nseq, iseq int64 // where it ended
	epoch      int64
	pulls      int
	err        string
}

// roomLoad is one variant of TestRoomManyLongPollers.
type roomLoad struct {
	name        string
	ioThreads   int
	maxMessages int // 0: the server's 2000, more than any room gets
}

// TestRoomManyLongPollers: 200 long-polling readers on one room and 50 on
// each of 4 others (half RESP2, half RESP3, through go-redis), each looping
// ROOM.PULL key nseq iseq BLOCK 2000 COUNT 50 EPOCH e with the cursors of
// its previous reply, while 4 publishers send 4,000 messages (payload
// publisher:counter) in pipelined bursts of 20, about 1 in 30 IMPORTANT
// (fewer than IMPORTANT-MAX per room), 40% to the big room; then each room
// gets a last message, "end". Every reply must follow from the
// cursors it was asked with: important messages first, each list in
// sequence order with no duplicate and no hole, except that the first
// normal message may jump exactly by the reply's gap. Each reader must end
// at the rooms' last sequence numbers, with every important message, every
// payload what the publisher was told that sequence number holds. With the
// server's ring of 2000 nobody may gap; with MAXMESSAGES 50 a reader that
// starts after 150 messages (one per room) must, and its gap must be the
// messages it skipped exactly; that variant runs on 3 event loops
// (io-threads 3), so most PUBs answer readers on other loops.
func TestRoomManyLongPollers(t *testing.T) {
	for _, v := range []roomLoad{
		{name: "ring2000"},
		{name: "ring50-io-threads-3", maxMessages: 50, ioThreads: 3},
	} {
		t.Run(v.name, func(t *testing.T) { roomRunLoad(t, v) })
	}
}

func roomRunLoad(t *testing.T, v roomLoad) {
	opts := []serverOpt{}
	if v.ioThreads > 0 {
		opts = append(opts, withConfig("io-threads", strconv.Itoa(v.ioThreads)))
	}
	s := startServer(t, opts...)
	admin := goRedis(t, s.Addr(), 3)
	const (
		publishers = 4
		perPub     = 1000
		burst      = 20
		count      = 50
		block      = 2000
	)
	rooms := []string{"live:big", "live:a", "live:b", "live:c", "live:d"}
	readers := []int{200, 50, 50, 50, 50}
	weights := []int{40, 15, 15, 15, 15} // percent of the messages
	epochs := map[string]int64{}
	if v.maxMessages > 0 {
		for _, r := range rooms {
			if err := admin.Do(ctx, "ROOM.CONFIG", r, "MAXMESSAGES", v.maxMessages).Err(); err != nil {
				t.Fatalf("ROOM.CONFIG %s: %v", r, err)
			}
			epochs[r] = roomInfo(t, admin, r)["epoch"]
		}
	}
	ringKept := v.maxMessages == 0
	clients := map[int]*redis.Client{}
	for _, proto := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: proto, DisableIdentity: proto == 2,
			PoolSize: 260, ReadTimeout: 20 * time.Second, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		clients[proto] = c
	}

	// published[i] counts the acknowledged normal messages of rooms[i], for
	// the laggards.
	published := make([]atomic.Int64, len(rooms))
	deadline := time.Now().Add(60 * time.Second)
	var pullers []*roomPuller
	var wg sync.WaitGroup
	pull := func(p *roomPuller, c *redis.Client, startAt int64, room int) {
		defer wg.Done()
		for p.laggard && published[room].Load() < startAt {
			if time.Now().After(deadline) {
				p.err = "never started"
				return
			}
			time.Sleep(time.Millisecond)
		}
		for {
			if time.Now().After(deadline) {
				p.err = fmt.Sprintf("still pulling at the deadline, at %d %d", p.nseq, p.iseq)
				return
			}
			args := []any{"BLOCK", block, "COUNT", count}
			if p.epoch != 0 {
				args = append(args, "EPOCH", p.epoch)
			}
			r, err := roomPull(c, p.room, p.nseq, p.iseq, args...)
			if err != nil {
				p.err = fmt.Sprintf("ROOM.PULL %s %d %d %v: %v", p.room, p.nseq, p.iseq, args, err)
				return
			}
			p.pulls++
			if msg := roomCheckStep(p.nseq, p.iseq, p.epoch, count, true, v.maxMessages, r); msg != "" {
				p.err = fmt.Sprintf("ROOM.PULL %s %d %d %v: %s\n%v", p.room, p.nseq, p.iseq, args, msg, r)
				return
			}
			if p.laggard && p.pulls == 1 && v.maxMessages > 0 && r.gap == 0 {
				p.err = fmt.Sprintf("first pull from 0 0 after %d messages to a ring of %d: no gap: %v",
					startAt, v.maxMessages, r)
				return
			}
			p.gaps += r.gap
			end := false
			for _, m := range r.msgs {
				s := roomSeen{m.seq, m.payload, m.at}
				if m.kind == "important" {
					p.importants = append(p.importants, s)
				} else {
					p.normals = append(p.normals, s)
					end = m.payload == "end"
				}
			}
			p.nseq, p.iseq = r.nseq, r.iseq
			if r.epoch != 0 {
				p.epoch = r.epoch
			}
			if end {
				return
			}
		}
	}
	for i, room := range rooms {
		for k := range readers[i] + 1 {
			p := &roomPuller{room: room, laggard: k == readers[i]}
			pullers = append(pullers, p)
			if !p.laggard {
				wg.Add(1)
				go pull(p, clients[2+k%2], 0, i)
			}
		}
	}
	// Every reader waits before the first message: on a room that does not
	// exist yet (its first PUB makes it), or on an empty one.
	zsetWaitBlocked(t, admin, len(pullers)-len(rooms))
	for i, room := range rooms {
		if v.maxMessages > 0 {
			if n := roomInfo(t, admin, room)["pullers"]; n != int64(readers[i]) {
				t.Errorf("ROOM.INFO %s pullers = %d, want %d", room, n, readers[i])
			}
		}
	}
	for _, p := range pullers {
		if p.laggard {
			wg.Add(1)
			go pull(p, clients[3], 150, indexOf(rooms, p.room))
		}
	}

	// truth[room][kind][seq] is the payload the publisher was told seq holds.
	type ack struct {
		room, kind, payload string
		seq                 int64
	}
	acks := make([][]ack, publishers)
	var pwg sync.WaitGroup
	pubErr := make([]error, publishers)
	for pi := range publishers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			rng := rand.New(rand.NewSource(int64(2400 + pi)))
			c := clients[2+pi%2]
			// In bursts: a pipeline of PUBs, as a busy room sends them.
			for n := 0; n < perPub; n += burst {
				var cmds []*redis.Cmd
				var sent []ack
				pipe := c.Pipeline()
				for k := n; k < min(n+burst, perPub); k++ {
					x, room := rng.Intn(100), 0
					for x >= weights[room] {
						x -= weights[room]
						room++
					}
					a := ack{room: rooms[room], kind: "normal", payload: fmt.Sprintf("p%d:%d", pi, k)}
					args := []any{"ROOM.PUB", a.room, a.payload}
					if rng.Intn(30) == 0 {
						args, a.kind = append(args, "IMPORTANT"), "important"
					}
					cmds = append(cmds, pipe.Do(ctx, args...))
					sent = append(sent, a)
				}
				if _, err := pipe.Exec(ctx); err != nil {
					pubErr[pi] = fmt.Errorf("PUB pipeline: %w", err)
					return
				}
				for k, cmd := range cmds {
					a := sent[k]
					seq, err := cmd.Int64()
					if err != nil {
						pubErr[pi] = fmt.Errorf("ROOM.PUB %s %s: %w", a.room, a.payload, err)
						return
					}
					a.seq = seq
					acks[pi] = append(acks[pi], a)
					if a.kind == "normal" {
						published[indexOf(rooms, a.room)].Add(1)
					}
				}
			}
		}()
	}
	pwg.Wait()
	for _, err := range pubErr {
		if err != nil {
			t.Fatal(err)
		}
	}
	truth := map[string]map[string]map[int64]string{}
	for _, room := range rooms {
		truth[room] = map[string]map[int64]string{"normal": {}, "important": {}}
	}
	total, important := 0, 0
	for _, as := range acks {
		for _, a := range as {
			if old, dup := truth[a.room][a.kind][a.seq]; dup {
				t.Errorf("%s %s %d was handed out twice: %q and %q", a.room, a.kind, a.seq, old, a.payload)
			}
			truth[a.room][a.kind][a.seq] = a.payload
			total++
			if a.kind == "important" {
				important++
			}
		}
	}
	finalN, finalI := map[string]int64{}, map[string]int64{}
	for _, room := range rooms {
		seq := dInt(t, admin, "ROOM.PUB", room, "end")
		truth[room]["normal"][seq] = "end"
		finalN[room], finalI[room] = seq, int64(len(truth[room]["important"]))
		for kind, m := range truth[room] {
			for s := int64(1); s <= int64(len(m)); s++ {
				if _, ok := m[s]; !ok {
					t.Errorf("%s: %s sequence numbers handed out are not 1..%d: %d is missing", room, kind, len(m), s)
					break
				}
			}
		}
		info := roomInfo(t, admin, room)
		if info["nseq"] != finalN[room] || info["iseq"] != finalI[room] {
			t.Errorf("ROOM.INFO %s: nseq %d iseq %d, want %d %d", room, info["nseq"], info["iseq"], finalN[room], finalI[room])
		}
		if e, ok := epochs[room]; ok && info["epoch"] != e {
			t.Errorf("ROOM.INFO %s: epoch %d, was %d", room, info["epoch"], e)
		}
		epochs[room] = info["epoch"]
	}
	if ringKept && finalN[rooms[0]] >= 2000 {
		t.Fatalf("%s got %d messages: more than the ring of 2000 holds", rooms[0], finalN[rooms[0]])
	}
	if t.Failed() {
		t.FailNow()
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Until(deadline) + 30*time.Second):
		t.Fatal("readers still running")
	}

	// The same message must read the same to everyone: its time too.
	at := map[string]map[string]map[int64]int64{}
	for _, room := range rooms {
		at[room] = map[string]map[int64]int64{"normal": {}, "important": {}}
	}
	pulls, gapped, bad := 0, 0, 0
	for _, p := range pullers {
		pulls += p.pulls
		if p.gaps > 0 {
			gapped++
		}
		who := fmt.Sprintf("reader of %s (laggard %v)", p.room, p.laggard)
		msg := p.err
		if msg == "" && (p.nseq != finalN[p.room] || p.iseq != finalI[p.room]) {
			msg = fmt.Sprintf("ended at %d %d, the room at %d %d", p.nseq, p.iseq, finalN[p.room], finalI[p.room])
		}
		if msg == "" && p.epoch != epochs[p.room] {
			msg = fmt.Sprintf("epoch %d, the room's is %d", p.epoch, epochs[p.room])
		}
		if msg == "" && int64(len(p.normals))+p.gaps != finalN[p.room] {
			msg = fmt.Sprintf("%d normal messages and %d gapped, the room had %d", len(p.normals), p.gaps, finalN[p.room])
		}
		if msg == "" && int64(len(p.importants)) != finalI[p.room] {
			msg = fmt.Sprintf("%d important messages of %d", len(p.importants), finalI[p.room])
		}
		for kind, seen := range map[string][]roomSeen{"normal": p.normals, "important": p.importants} {
			for _, s := range seen {
				if msg != "" {
					break
				}
				if want := truth[p.room][kind][s.seq]; s.payload != want {
					msg = fmt.Sprintf("%s %d is %q, the publisher was told %q", kind, s.seq, s.payload, want)
				} else if a, ok := at[p.room][kind][s.seq]; ok && a != s.at {
					msg = fmt.Sprintf("%s %d published at %d, others saw %d", kind, s.seq, s.at, a)
				} else {
					at[p.room][kind][s.seq] = s.at
				}
			}
		}
		if !ringKept && p.laggard && p.gaps == 0 {
			msg = "a laggard on a ring of 50 never gapped"
		}
		if msg != "" {
			if bad++; bad <= 10 {
				t.Errorf("%s: %s", who, msg)
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d readers in all went wrong", bad)
	}
	for _, room := range rooms {
		for kind, m := range at[room] {
			for s := int64(2); s <= int64(len(m)); s++ {
				if a, b := m[s-1], m[s]; a > b && a != 0 && b != 0 {
					t.Errorf("%s: %s %d published at %d, %d at %d", room, kind, s-1, a, s, b)
					break
				}
			}
		}
		if n := roomInfo(t, admin, room)["pullers"]; n != 0 {
			t.Errorf("ROOM.INFO %s pullers = %d after every reader left", room, n)
		}
	}
	figures := roomInfoFigures(t, admin)
	if figures["room_published"] != int64(total+len(rooms)) || figures["room_published_important"] != int64(important) ||
		figures["room_keys"] != int64(len(rooms)) {
		t.Errorf("INFO room %v; %d messages (%d important) were published to %d rooms",
			figures, total+len(rooms), important, len(rooms))
	}
	if figures["room_pulls"] < int64(pulls) || (figures["room_pulls_with_gap"] == 0) != ringKept {
		t.Errorf("INFO room %v; the readers' pulls: %d, readers that gapped: %d", figures, pulls, gapped)
	}
	t.Logf("%d readers, %d pulls, %d messages (%d important), %d readers gapped", len(pullers), pulls,
		total+len(rooms), important, gapped)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// roomInfo runs ROOM.INFO, whose fields are all integers.
func roomInfo(t testing.TB, c *redis.Client, key string) map[string]int64 {
	t.Helper()
	v, err := c.Do(ctx, "ROOM.INFO", key).Result()
	if err != nil {
		t.Fatalf("ROOM.INFO %s: %v", key, err)
	}
	out := map[string]int64{}
	switch m := v.(type) {
	case map[any]any:
		for k, x := range m {
			out[k.(string)] = x.(int64)
		}
	case []any:
		for i := 0; i+1 < len(m); i += 2 {
			out[m[i].(string)] = m[i+1].(int64)
		}
	default:
		t.Fatalf("ROOM.INFO %s: %#v", key, v)
	}
	return out
}

// roomInfoFigures reads INFO room.
func roomInfoFigures(t testing.TB, c *redis.Client) map[string]int64 {
	t.Helper()
	text, err := c.Info(ctx, "room").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(text, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO room: %q", line)
			}
			out[k] = n
		}
	}
	return out
}

// TestRoomBlockedPullerHangsUp: readers blocked in ROOM.PULL (BLOCK 0 and
// BLOCK 60000, on a room and on a key that is no room yet) whose
// connections close are forgotten: ROOM.INFO's pullers and INFO's
// blocked_clients drop, and the next PUB answers the readers still there
// and nobody else. On one event loop and on three.
func TestRoomBlockedPullerHangsUp(t *testing.T) {
	for _, threads := range []int{1, 3} {
		t.Run(fmt.Sprintf("io-threads-%d", threads), func(t *testing.T) {
			s := startServer(t, withConfig("io-threads", strconv.Itoa(threads)))
			admin := goRedis(t, s.Addr(), 3)
			dInt(t, admin, "ROOM.PUB", "hang", "m1")
			var conns []*rawConn
			for i := range 6 {
				c := dialRaw(t, s.Addr())
				key, block := "hang", "0"
				if i%2 == 1 {
					block = "60000"
				}
				if i == 5 {
					key = "hang:new" // no room yet
				}
				c.send("ROOM.PULL", key, "$", "$", "BLOCK", block)
				conns = append(conns, c)
				zsetWaitBlocked(t, admin, i+1)
			}
			pullers := func() int64 { return roomInfo(t, admin, "hang")["pullers"] }
			if n := pullers(); n != 5 {
				t.Fatalf("ROOM.INFO pullers = %d with 5 readers blocked", n)
			}
			for i, c := range []int{0, 1, 3} {
				conns[c].conn.Close()
				want := int64(5 - i - 1)
				waitFor(t, 5*time.Second, fmt.Sprintf("ROOM.INFO pullers to drop to %d", want), func() bool {
					return pullers() == want
				})
			}
			conns[5].conn.Close()
			zsetWaitBlocked(t, admin, 2)
			if n := dInt(t, admin, "ROOM.PUB", "hang", "m2"); n != 2 {
				t.Fatalf("ROOM.PUB: %d", n)
			}
			epoch := roomInfo(t, admin, "hang")["epoch"]
			want := fmt.Sprintf("1) (integer) 2\n2) (integer) 0\n3) (integer) 0\n4) (integer) 0\n5) (integer) %d\n6) 1) 1) \"normal\"\n      2) (integer) 2\n      3) \"m2\"\n", epoch)
			for _, i := range []int{2, 4} {
				if got := conns[i].read().String(); !strings.HasPrefix(got, want) {
					t.Errorf("reader %d: %s\nwant\n%s", i, got, want)
				}
			}
			zsetWaitBlocked(t, admin, 0)
			if n := pullers(); n != 0 {
				t.Errorf("ROOM.INFO pullers = %d after every reader left or was served", n)
			}
			if n := dInt(t, admin, "ROOM.PUB", "hang:new", "x"); n != 1 {
				t.Errorf("ROOM.PUB hang:new: %d", n)
			}
			if n := roomInfo(t, admin, "hang:new")["pullers"]; n != 0 {
				t.Errorf("ROOM.INFO hang:new pullers = %d, its only reader hung up", n)
			}
		})
	}
}

// TestRoomClientUnblock: CLIENT UNBLOCK (or ... TIMEOUT) ends a blocked
// ROOM.PULL as its timeout would, as Redis does for BLPOP: the cursors the
// pull started from ("$" resolved to the room's last), no gap, the epoch
// (0 for a room that does not exist) and no messages; CLIENT UNBLOCK ...
// ERROR answers -UNBLOCKED. Either way the reader stops waiting (pullers
// drops, the next PUB sends it nothing) and its connection works on. A
// reader that is not blocked is not unblocked (0).
func TestRoomClientUnblock(t *testing.T) {
	s := startServer(t)
	admin := goRedis(t, s.Addr(), 3)
	for range 3 {
		dInt(t, admin, "ROOM.PUB", "ub", "n")
	}
	dInt(t, admin, "ROOM.PUB", "ub", "i", "IMPORTANT")
	const unblocked = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
	cases := []struct {
		key, nseq, iseq, how string
		want                 string // for "ub", %[1]d %[2]d %[3]d are its nseq, iseq and epoch
	}{
		{"ub", "last", "last", "", "[%[1]d %[2]d 0 0 %[3]d []]"},
		{"ub", "$", "$", "TIMEOUT", "[%[1]d %[2]d 0 0 %[3]d []]"},
		{"ub", "$", "last", "ERROR", unblocked},
		{"ub:none", "7", "2", "", "[7 2 0 0 0 []]"},
		{"ub:none", "$", "$", "TIMEOUT", "[0 0 0 0 0 []]"},
		{"ub:none", "0", "0", "ERROR", unblocked},
	}
	for _, proto := range []int{2, 3} {
		for _, tc := range cases {
			info := roomInfo(t, admin, "ub")
			nseq, iseq, want := tc.nseq, tc.iseq, tc.want
			if nseq == "last" {
				nseq = strconv.FormatInt(info["nseq"], 10)
			}
			if iseq == "last" {
				iseq = strconv.FormatInt(info["iseq"], 10)
			}
			if tc.key == "ub" && want != unblocked {
				want = fmt.Sprintf(want, info["nseq"], info["iseq"], info["epoch"])
			}
			name := fmt.Sprintf("RESP%d ROOM.PULL %s %s %s BLOCK 0, CLIENT UNBLOCK %s", proto, tc.key, nseq, iseq, tc.how)
			c := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: proto, DisableIdentity: proto == 2,
				PoolSize: 1, MaxRetries: -1, ReadTimeout: 10 * time.Second})
			defer c.Close()
			id, err := c.ClientID(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			if n, err := admin.ClientUnblock(ctx, id).Result(); err != nil || n != 0 {
				t.Errorf("%s: CLIENT UNBLOCK of an idle client: %d %v", name, n, err)
			}
			got := make(chan string, 1)
			go func() {
				r, err := roomPull(c, tc.key, nseq, iseq, "BLOCK", 0)
				if err != nil {
					got <- err.Error()
				} else {
					got <- fmt.Sprintf("[%d %d %d %d %d %v]", r.nseq, r.iseq, r.gap, r.retry, r.epoch, r.msgs)
				}
			}()
			zsetWaitBlocked(t, admin, 1)
			if n := roomInfo(t, admin, "ub")["pullers"]; n != map[bool]int64{true: 1}[tc.key == "ub"] {
				t.Errorf("%s: ROOM.INFO ub pullers = %d while blocked", name, n)
			}
			args := []any{"CLIENT", "UNBLOCK", id}
			if tc.how != "" {
				args = append(args, tc.how)
			}
			if n, err := admin.Do(ctx, args...).Int(); n != 1 || err != nil {
				t.Errorf("%s: %d %v", name, n, err)
			}
			select {
			case s := <-got:
				if s != want {
					t.Errorf("%s: %s, want %s", name, s, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: no reply", name)
			}
			zsetWaitBlocked(t, admin, 0)
			if n := roomInfo(t, admin, "ub")["pullers"]; n != 0 {
				t.Errorf("%s: ROOM.INFO ub pullers = %d after the unblock", name, n)
			}
			// Nothing more comes to it: its next command's reply is the
			// next thing it reads.
			dInt(t, admin, "ROOM.PUB", tc.key, "after")
			if v, err := c.Do(ctx, "ECHO", "next").Text(); v != "next" || err != nil {
				t.Errorf("%s: ECHO after the unblock: %q %v", name, v, err)
			}
			admin.Del(ctx, "ub:none")
		}
	}
	if n, err := admin.ClientUnblock(ctx, 1<<40).Result(); err != nil || n != 0 {
		t.Errorf("CLIENT UNBLOCK of no client: %d %v", n, err)
	}
}
