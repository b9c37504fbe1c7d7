package engine

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func TestPackUID(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
		n  uint64
	}{
		{"0", true, 0}, {"7", true, 7}, {"18446744073709551615", true, 1<<64 - 1},
		{"18446744073709551616", false, 0}, {"007", false, 0}, {"", false, 0}, {"-1", false, 0},
		{"12a", false, 0}, {"99999999999999999999", false, 0},
	} {
		n, ok := packUID([]byte(c.in))
		if ok != c.ok || ok && n != c.n {
			t.Errorf("packUID(%q) = %d %v", c.in, n, ok)
		}
	}
}

// TestRoomPresenceExpiry: a user is online until the TTL passes without a
// heartbeat, and goes in the sweep of its latest one-second bucket:
// between TTL and TTL + 1 s after it.
func TestRoomPresenceExpiry(t *testing.T) {
	f := newRoomFixture(t)
	f.db.RoomConfigure(b("r"), func(c *RoomConfig) { c.PresenceTTL = 3000 })
	advance := func(ms int64) { f.advance(time.Duration(ms) * time.Millisecond) }
	// The clock starts on a second's boundary (1_700_000_000_000).
	if n, _ := f.db.RoomHeartbeat(b("r"), bs("1", "2", "alice", "2")); n != 3 {
		t.Fatalf("online %d", n)
	}
	advance(500)
	f.db.RoomHeartbeat(b("r"), bs("2")) // same second: no new entry
	advance(1000)
	f.db.RoomHeartbeat(b("r"), bs("2", "bob"))
	online := func() string {
		on, _ := f.db.RoomIsOnline(b("r"), bs("1", "2", "alice", "bob", "nobody"))
		n, _ := f.db.RoomOnline(b("r"))
		return fmt.Sprint(n, on)
	}
	expect(t, "at 1.5 s", online(), "4 [true true true true false]")
	advance(2499) // 3999 ms: the first second's users are still within TTL + 1 s
	expect(t, "at 3.999 s", online(), "4 [true true true true false]")
	advance(1) // 4000 ms: the first second ended 3 s ago
	expect(t, "at 4 s", online(), "2 [false true false true false]")
	if n, _ := f.db.RoomLeave(b("r"), bs("bob", "bob", "zed")); n != 1 {
		t.Fatalf("online after LEAVE %d", n)
	}
	advance(1000) // 5000: the bucket of second 1 (2 and bob) ends its TTL
	expect(t, "at 5 s", online(), "0 [false false false false false]")
	if s := roomState.of(f.e).heartbeats; s != 7 {
		t.Fatalf("heartbeats counted %d", s)
	}
}

// TestRoomMembersScan: every user online for the whole scan is listed at
// least once, whatever the COUNT and while others heartbeat meanwhile.
func TestRoomMembersScan(t *testing.T) {
	f := newRoomFixture(t)
	var uids []string
	for i := range 500 {
		uids = append(uids, strconv.Itoa(i))
		if i%50 == 0 {
			uids = append(uids, "user-"+strconv.Itoa(i))
		}
	}
	f.db.RoomHeartbeat(b("r"), bs(uids[:250]...))
	f.clock.Advance(time.Second)
	f.db.RoomHeartbeat(b("r"), bs(uids[250:]...))
	seen := map[string]bool{}
	cursor := uint64(0)
	for step := 0; ; step++ {
		next, got, err := f.db.RoomMembers(b("r"), cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range got {
			seen[u] = true
		}
		if step == 3 { // a user heartbeats into a bucket the scan has not reached
			f.clock.Advance(time.Second)
			f.db.RoomHeartbeat(b("r"), bs(uids[0]))
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	for _, u := range uids {
		if !seen[u] {
			t.Fatalf("%s online for the whole scan was not listed", u)
		}
	}
	if len(seen) != len(uids) {
		t.Fatalf("listed %d users of %d", len(seen), len(uids))
	}
}

// roomPresenceLoad heartbeats n numeric users into one room as a gateway
// would, 1,000 per command, each user three times ten seconds apart (a
// 30 s TTL holds all three buckets).
func roomPresenceLoad(tb testing.TB, n int) (*Engine, *DB) {
	e := New(Options{})
	e.Lock()
	db := e.DB(0)
	batch := make([][]byte, 0, 1000)
	for round := range 3 {
		for i := range n {
			batch = append(batch, strconv.AppendInt(nil, int64(10_000_000+i), 10))
			if len(batch) == cap(batch) || i == n-1 {
				if _, err := db.RoomHeartbeat([]byte("room"), batch); err != nil {
					tb.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		if round < 2 {
			e.now += 10_000
		}
	}
	return e, db
}

// BenchmarkRoomPresenceMemory reports the heap bytes per online user of a
// room with 1M numeric users, each heartbeating three times (issue 24's
// yardstick: 15 million users within 1 GiB, about 71 bytes each).
func BenchmarkRoomPresenceMemory(b *testing.B) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		e, db := roomPresenceLoad(b, 1_000_000)
		runtime.GC()
		runtime.ReadMemStats(&after)
		if n, _ := db.RoomOnline([]byte("room")); n != 1_000_000 {
			b.Fatalf("online %d", n)
		}
		e.Unlock()
		runtime.KeepAlive(e)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "bytes/user")
	}
}

// BenchmarkRoomHeartbeat is the engine's share of a gateway's heartbeat of
// 1,000 users already online, in a room of 1M: ns per user.
func BenchmarkRoomHeartbeat(b *testing.B) {
	e, db := roomPresenceLoad(b, 1_000_000)
	defer e.Unlock()
	batches := make([][][]byte, 1000)
	for i := range batches {
		for j := range 1000 {
			batches[i] = append(batches[i], strconv.AppendInt(nil, int64(10_000_000+i*1000+j), 10))
		}
	}
	b.ResetTimer()
	for i := range b.N {
		if i%1000 == 0 {
			e.now += 1000 // a new second: every heartbeat records an entry
		}
		db.RoomHeartbeat([]byte("room"), batches[i%1000])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/user")
}

// TestRoomPresenceSweepInSteps: a stale bucket bigger than the sweep's
// budget goes in steps, each firing of the room's entry looking at no more
// than the budget and the entry due again at once, until every user of it
// is offline; users heartbeating meanwhile stay.
func TestRoomPresenceSweepInSteps(t *testing.T) {
	defer func(n int) { presenceSweepBudget = n }(presenceSweepBudget)
	presenceSweepBudget = 100
	f := newRoomFixture(t)
	f.db.RoomConfigure(b("r"), func(c *RoomConfig) { c.PresenceTTL = 1000 })
	var uids [][]byte
	for i := range 1050 {
		uids = append(uids, []byte(strconv.Itoa(i)))
	}
	uids = append(uids, []byte("alice"), []byte("bob"))
	f.db.RoomHeartbeat(b("r"), uids)
	f.advance(1500 * time.Millisecond)
	f.db.RoomHeartbeat(b("r"), bs("7", "bob")) // newer bucket: they stay
	f.clock.Advance(500 * time.Millisecond)    // the first bucket is past its TTL
	var counts []int
	for range 20 {
		f.e.Unlock()
		f.e.RunTimers()
		f.e.Lock()
		n := f.db.rawObject(b("r")).(*Room).presence.online() // no catch-up: the timer's steps alone
		counts = append(counts, n)
		if n == 2 {
			break
		}
		f.clock.Advance(time.Millisecond)
	}
	if len(counts) < 10 || counts[len(counts)-1] != 2 {
		t.Fatalf("online after each step: %v", counts)
	}
	for i := 1; i < len(counts); i++ {
		if d := counts[i-1] - counts[i]; d > 100 {
			t.Fatalf("a step dropped %d users (budget 100): %v", d, counts)
		}
	}
	if on, _ := f.db.RoomIsOnline(b("r"), bs("7", "bob", "alice", "8")); fmt.Sprint(on) != "[true true false false]" {
		t.Fatalf("ISONLINE after the sweep: %v", on)
	}
}
