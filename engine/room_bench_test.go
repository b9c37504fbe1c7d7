package engine

import (
	"strconv"
	"testing"
)

// BenchmarkRoomBroadcast is one ROOM.PUB answering 10,000 long-polling
// pullers of the room, each re-blocking at once: the engine's share of
// issue 24's delivery row (ServeBlocked, the pulls, the unblocking).
func BenchmarkRoomBroadcast(b *testing.B) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	key := []byte("room")
	db.RoomPub(key, []byte("first"), false)
	const pullers = 10_000
	block := func(cursor uint64) {
		a := RoomPullArgs{NSeq: cursor, Count: 100}
		e.Block(0, [][]byte{key}, 0, func(key []byte) bool {
			res, _ := db.RoomPull(key, a)
			return len(res.Messages) > 0
		}, nil)
	}
	for range pullers {
		block(1)
	}
	b.ResetTimer()
	for range b.N {
		seq, _ := db.RoomPub(key, []byte("message"), false)
		e.ServeBlocked()
		if e.Blocked() != 0 {
			b.Fatalf("%d pullers still blocked", e.Blocked())
		}
		for range pullers {
			block(seq)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/pullers, "ns/delivery")
}

// BenchmarkPresenceSweep is the sweep of a stale bucket of a million
// numeric users, per user: what sets presenceSweepBudget (a step should
// hold the engine lock about a millisecond).
func BenchmarkPresenceSweep(b *testing.B) {
	const users = 1_000_000
	uids := make([][]byte, users)
	for i := range uids {
		uids[i] = strconv.AppendInt(nil, int64(1_000_000_000+i), 10)
	}
	defer func(n int) { presenceSweepBudget = n }(presenceSweepBudget)
	presenceSweepBudget = users
	for range b.N {
		b.StopTimer()
		var p presence
		for _, u := range uids {
			p.heartbeat(u, 1)
		}
		b.StartTimer()
		if gone := p.sweep(1<<40, 0); gone != users {
			b.Fatalf("swept %d", gone)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/users, "ns/user")
}
