package persistence

import (
	"encoding/binary"
	"sync"
	"testing"
)

// BenchmarkPutValue is the cost of one change call under the engine lock,
// with the writer committing in the background. Every 4096 changes the
// (untimed) loop waits for the writer, as clients waiting for replies do;
// otherwise the loop outruns Pebble and measures flushes instead.
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
			wait(s)
			b.StartTimer()
		}
	}
	b.StopTimer()
	wait(s)
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
// next, as with appendfsync always: group commit shares the fsyncs.
func BenchmarkAckedWrite(b *testing.B) {
	for _, policy := range []Fsync{FsyncAlways, FsyncEverySec} {
		b.Run(policy.String(), func(b *testing.B) {
			s := openTest(b, b.TempDir(), policy)
			defer s.Close()
			var engineLock sync.Mutex
			var n uint64
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				key := make([]byte, 16)
				val := make([]byte, 64)
				for pb.Next() {
					engineLock.Lock()
					n++
					binary.BigEndian.PutUint64(key, n)
					s.PutValue(0, key, 1, val)
					ch := s.Barrier()
					engineLock.Unlock()
					if ch != nil {
						<-ch
					}
				}
			})
			b.StopTimer()
			st := s.Stats()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acks/s")
			b.ReportMetric(float64(st.Records)/float64(max(st.Commits, 1)), "records/commit")
		})
	}
}
