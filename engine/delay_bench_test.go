package engine

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// delayMember is a 16-byte member, the memory yardstick.
func delayMember(i int) []byte { return []byte(fmt.Sprintf("timer:%010d", i)) }

// delayBig returns an engine whose key "timers" holds n timers due over the
// next day, in random order.
func delayBig(tb testing.TB, n int) (*Engine, *DB) {
	e := New(Options{})
	e.Lock()
	db := e.DB(0)
	r := rand.New(rand.NewPCG(1, 2))
	now := e.Now()
	for i := 0; i < n; i++ {
		if _, _, err := db.DelayAdd([]byte("timers"), delayMember(i), DelayAddArgs{Due: now + 1000 + r.Int64N(86_400_000)}); err != nil {
			tb.Fatal(err)
		}
	}
	return e, db
}

// BenchmarkDelayMemory reports the heap bytes per pending timer of a
// 1M-timer key (16-byte members, no payload).
func BenchmarkDelayMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		e, db := delayBig(b, 1_000_000)
		runtime.GC()
		runtime.ReadMemStats(&after)
		if n, _ := db.DelayLen([]byte("timers")); n != 1_000_000 {
			b.Fatal("timers missing")
		}
		e.Unlock()
		runtime.KeepAlive(e)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "bytes/timer")
	}
}

// BenchmarkDelayAdd is DELAY.ADD of a new timer into a 1M-timer key.
func BenchmarkDelayAdd(b *testing.B) {
	e, db := delayBig(b, 1_000_000)
	defer e.Unlock()
	members := make([][]byte, b.N)
	for i := range members {
		members[i] = delayMember(2_000_000 + i)
	}
	r := rand.New(rand.NewPCG(3, 4))
	now := e.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.DelayAdd([]byte("timers"), members[i], DelayAddArgs{Due: now + 1000 + r.Int64N(86_400_000)})
	}
}

// BenchmarkDelayPop pops due timers one at a time from a 1M-timer key.
func BenchmarkDelayPop(b *testing.B) {
	e, db := delayBig(b, 1_000_000)
	defer e.Unlock()
	e.now += 2 * 86_400_000 // everything is due
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%1_000_000 == 999_999 {
			b.StopTimer()
			e.Unlock()
			e, db = delayBig(b, 1_000_000)
			e.now += 2 * 86_400_000
			b.StartTimer()
		}
		db.DelayPop([]byte("timers"), 1, 0)
	}
}

// BenchmarkDelayLoad rebuilds a 1M-timer key through the Loader, as a
// restart does: records arrive in member order.
func BenchmarkDelayLoad(b *testing.B) {
	src, db := delayBig(b, 1_000_000)
	d, _ := db.delayRead([]byte("timers"))
	var recs [][2][]byte
	d.timers.ForEach(func(m string, t *delayTimer) bool {
		recs = append(recs, [2][]byte{[]byte(m), d.encodeTimer(nil, m, t)})
		return true
	})
	src.Unlock()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := New(Options{})
		e.Lock()
		l := e.Loader()
		l.LoadValue(0, []byte("timers"), TypeDelay, nil)
		for _, r := range recs {
			if err := l.LoadItem(0, []byte("timers"), r[0], r[1]); err != nil {
				b.Fatal(err)
			}
		}
		e.FinishLoad()
		e.Unlock()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/timer")
}
