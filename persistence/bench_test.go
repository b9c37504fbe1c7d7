package persistence

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// BenchmarkPutValue is the cost of one change call under the engine lock.
// Every 4096 changes the (untimed) loop waits for the log and the applier,
// as clients waiting for replies and backpressure would; otherwise the loop
// outruns Pebble and measures its flushes instead.
func BenchmarkPutValue(b *testing.B) {
	s := openTest(b, b.TempDir(), FsyncNo)
	defer s.Close()
	key := make([]byte, 16)
	val := make([]byte, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(key, uint64(i))
		s.PutValue(0, key, 1, val)
		if i%4096 == 4095 {
			b.StopTimer()
			s.waitApplied(s.w.lastNum())
			b.StartTimer()
		}
	}
	b.StopTimer()
	s.waitApplied(s.w.lastNum())
}

// BenchmarkCommit is throughput through Pebble with everysec: changes from
// one caller, then a barrier every 1000 as a busy server would hit.
func BenchmarkCommit(b *testing.B) {
	s := openTest(b, b.TempDir(), FsyncEverySec)
	defer s.Close()
	key := make([]byte, 16)
	val := make([]byte, 64)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(key, uint64(i))
		s.PutValue(0, key, 1, val)
		if i%1000 == 999 {
			wait(s)
		}
	}
	wait(s)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	st := s.Stats()
	b.ReportMetric(float64(st.Records)/float64(max(st.Commits, 1)), "records/commit")
}

// BenchmarkAckedWrite is clients that each wait for their write before the
// next, as the server does before replying: group commit shares the writes
// and, with always, the fsyncs.
func BenchmarkAckedWrite(b *testing.B) {
	for _, policy := range []Fsync{FsyncAlways, FsyncEverySec} {
		for _, c := range []struct {
			clients int
			random  bool
		}{{16, false}, {64, false}, {16, true}, {64, true}} {
			clients := c.clients
			name := fmt.Sprintf("%s/%d", policy, clients)
			if c.random {
				name += "/random1M"
			}
			b.Run(name, func(b *testing.B) {
				s := openTest(b, b.TempDir(), policy)
				defer s.Close()
				var engineLock sync.Mutex
				var n uint64
				var wg sync.WaitGroup
				per := b.N/clients + 1
				b.ResetTimer()
				for g := range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						key := make([]byte, 23)
						val := make([]byte, 64)
						r := rand.New(rand.NewPCG(uint64(g), 1))
						for range per {
							engineLock.Lock()
							n++
							k := n
							if c.random {
								k = r.Uint64N(1 << 20)
							}
							benchKey(key, k)
							s.PutValue(0, key, 1, val)
							ch := s.Barrier()
							engineLock.Unlock()
							if ch != nil {
								<-ch
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				st := s.Stats()
				b.ReportMetric(float64(per*clients)/b.Elapsed().Seconds(), "acks/s")
				b.ReportMetric(float64(st.Records)/float64(max(st.Commits, 1)), "records/commit")
			})
		}
	}
}

// benchKey writes "key:" and k as 19 digits: with the record header, a
// 30-byte Pebble key.
func benchKey(dst []byte, k uint64) {
	copy(dst, "key:")
	for i := len(dst) - 1; i >= 4; i-- {
		dst[i] = byte('0' + k%10)
		k /= 10
	}
}

// BenchmarkApplier is the applier alone: frames of small values for keys
// drawn at random from a 1M keyspace, or sequential ones, decoded,
// deduplicated, sorted and written to Pebble, then synced.
func BenchmarkApplier(b *testing.B) {
	for _, random := range []bool{true, false} {
		name := "sequential"
		if random {
			name = "random1M"
		}
		b.Run(name, func(b *testing.B) {
			s := openTest(b, b.TempDir(), FsyncNo)
			defer s.Close()
			const perFrame = 4096
			r := rand.New(rand.NewPCG(1, 2))
			key := make([]byte, 23)
			val := make([]byte, 16)
			frames := make([][]byte, b.N/perFrame+1)
			for i := range frames {
				var f []byte
				for j := range perFrame {
					k := uint64(i*perFrame + j)
					if random {
						k = r.Uint64N(1 << 20)
					}
					benchKey(key, k)
					f = appendHead(f, opPutValue, 0, key)
					f = appendBytes(f, val)
				}
				frames[i] = f
			}
			// An applier of its own, sized as the store's.
			a := applier{batch: s.db.NewBatch()}
			a.win.spill = func() error { return a.commit(s.db) }
			a.setLimits(*s.ap.budget.Load())
			b.ResetTimer()
			for _, f := range frames {
				if _, err := a.win.addRecords(a.batch, f); err != nil {
					b.Fatal(err)
				}
			}
			if err := a.commit(s.db); err != nil {
				b.Fatal(err)
			}
			if err := s.db.LogData(nil, pebble.Sync); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(len(frames)*perFrame)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkThroughStore is the same load through the change calls, in
// batches of 800 as a pipelining server sends them, timed until the applier
// has caught up.
func BenchmarkThroughStore(b *testing.B) {
	for _, random := range []bool{true, false} {
		name := "sequential"
		if random {
			name = "random1M"
		}
		b.Run(name, func(b *testing.B) {
			s := openTest(b, b.TempDir(), FsyncNo)
			defer s.Close()
			key := make([]byte, 23)
			val := make([]byte, 16)
			r := rand.New(rand.NewPCG(1, 2))
			b.ResetTimer()
			// Not b.Loop: it stops the timer before the wait for the applier.
			for i := range b.N {
				k := uint64(i)
				if random {
					k = r.Uint64N(1 << 20)
				}
				benchKey(key, k)
				s.PutValue(0, key, 1, val)
				if i%800 == 799 {
					wait(s) // as 50 clients with 16 commands in flight do
				}
			}
			s.waitApplied(s.w.lastNum())
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkWindowSort is sorting an apply window of 10,000 writes to random
// keys of a 1M keyspace (INCR counter:<rand>), per entry.
func BenchmarkWindowSort(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, 10000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "counter:%012d", r.IntN(1000000))
	}
	var w window
	b.ResetTimer()
	for range b.N / len(keys) {
		for _, k := range keys {
			w.add(0, k, kindValue, nil, []byte("1"), false)
		}
		w.sort()
		w.reset()
	}
}

// BenchmarkWindowFlush is writing a full apply window of SETs to random
// keys of a 1M keyspace (MSET key:<rand>) into a Pebble batch, sort
// included, per entry. The window's keys and values sit in arrival order in
// memory larger than the caches, and are read in key order.
func BenchmarkWindowFlush(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 40_000 // about a window at the default cap (budget.batch) of such records
	keys := make([][]byte, n)
	vals := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%012d", r.IntN(1000000))
		vals[i] = fmt.Appendf(nil, "\x01value:%d", i) // separate allocations, as log buffers are
	}
	s := openTest(b, b.TempDir(), FsyncNo)
	defer s.Close()
	batch := s.db.NewBatch(pebble.WithMaxRetainedSizeBytes(2 * s.ap.budget.Load().batch)) // as the applier's
	defer batch.Close()
	var w window
	b.ResetTimer()
	for range b.N / n {
		b.StopTimer()
		for i, k := range keys {
			w.add(0, k, kindValue, nil, vals[i], false)
		}
		batch.Reset()
		b.StartTimer()
		if err := w.flush(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLeadSync is an event loop's iteration with one unpipelined
// write: lead, change, commit it inline, end the lead (everysec).
func BenchmarkLeadSync(b *testing.B) {
	s := openTest(b, b.TempDir(), FsyncEverySec)
	defer s.Close()
	key := make([]byte, 16)
	val := make([]byte, 3)
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(key, uint64(i&(1<<20-1)))
		s.Lead()
		s.PutValue(0, key, 1, val)
		s.Sync()
		s.EndLead()
	}
}
