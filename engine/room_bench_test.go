package engine

import "testing"

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
