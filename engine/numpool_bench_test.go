package engine

import (
	"runtime"
	"strconv"
	"testing"
)

// numpoolBig returns an engine whose key "pool" holds n idle+up numbers of
// 11 digits (a phone number), loaded as NUMPOOL.ADD and REG load them, in
// batches of 10,000.
func numpoolBig(tb testing.TB, n int) (*Engine, *DB) {
	e := New(Options{})
	e.Lock()
	db := e.DB(0)
	batch := make([][]byte, 0, 10_000)
	flush := func() {
		if _, _, err := db.NumpoolAdd([]byte("pool"), batch, nil); err != nil {
			tb.Fatal(err)
		}
		if _, err := db.NumpoolReg([]byte("pool"), batch, true); err != nil {
			tb.Fatal(err)
		}
		batch = batch[:0]
	}
	for i := range n {
		batch = append(batch, []byte(strconv.Itoa(13_800_000_000+i)))
		if len(batch) == cap(batch) {
			flush()
		}
	}
	if len(batch) > 0 {
		flush()
	}
	return e, db
}

// BenchmarkNumpoolMemory reports the heap bytes per idle+up number of a
// 1M-number pool (issue 23's yardstick: seed 003's LIST entry and HASH field
// of JSON on Redis).
func BenchmarkNumpoolMemory(b *testing.B) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		e, db := numpoolBig(b, 1_000_000)
		runtime.GC()
		runtime.ReadMemStats(&after)
		if s, _ := db.NumpoolInfo([]byte("pool")); s.Counts[NumIdleUp] != 1_000_000 {
			b.Fatal("numbers missing")
		}
		e.Unlock()
		runtime.KeepAlive(e)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "bytes/number")
	}
}

// BenchmarkNumpoolCallHangup is one call (lru, fifo or random) and its
// hangup on a pool of 10,000 idle+up numbers: the engine's share of seed
// 003's event pair.
func BenchmarkNumpoolCallHangup(b *testing.B) {
	for _, p := range []struct {
		name   string
		policy Policy
	}{{"lru", PolicyLRU}, {"fifo", PolicyFIFO}, {"random", PolicyRandom}} {
		b.Run(p.name, func(b *testing.B) {
			e, db := numpoolBig(b, 10_000)
			defer e.Unlock()
			key := []byte("pool")
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				res, err := db.NumpoolEvent(key, NumCall, NumEventArgs{Policy: p.policy})
				if err != nil || res.Number == "" {
					b.Fatal("no number", err)
				}
				if _, err := db.NumpoolEvent(key, NumHangup, NumEventArgs{Number: []byte(res.Number), HasNumber: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
