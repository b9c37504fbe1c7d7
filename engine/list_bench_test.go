package engine

import (
	"runtime"
	"strconv"
	"testing"
)

// listBytesPerElement builds a list of n "element:N" values in a fresh
// engine, RPUSHing 1000 at a time as a client would, and returns the heap
// growth per element.
func listBytesPerElement(t testing.TB, n int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e := New(Options{})
	e.Lock()
	db := e.DB(0)
	batch := make([][]byte, 0, 1000)
	for i := 0; i < n; i++ {
		batch = append(batch, []byte("element:"+strconv.Itoa(i)))
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := db.ListPush([]byte("biglist"), batch, false, false); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	e.Unlock()
	batch = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	e.Lock()
	if l, _ := db.ListRead([]byte("biglist")); l == nil || l.Len() != n {
		t.Fatal("list not built")
	}
	e.Unlock()
	runtime.KeepAlive(e)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// BenchmarkListMemory reports the bytes per element of a 1M-element list.
func BenchmarkListMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.ReportMetric(listBytesPerElement(b, 1_000_000), "bytes/element")
	}
}

// listBig returns an engine whose key "mylist" holds n short elements.
func listBig(b *testing.B, n int) (*Engine, *DB) {
	e := New(Options{})
	e.Lock()
	db := e.DB(0)
	batch := make([][]byte, 0, 1000)
	for i := 0; i < n; i++ {
		batch = append(batch, []byte("element:"+strconv.Itoa(i)))
		if len(batch) == cap(batch) || i == n-1 {
			db.ListPush([]byte("mylist"), batch, false, false)
			batch = batch[:0]
		}
	}
	return e, db
}

// BenchmarkListLPush is LPUSH of one short element onto a 1M-element list.
func BenchmarkListLPush(b *testing.B) {
	e, db := listBig(b, 1_000_000)
	defer e.Unlock()
	key, val := [][]byte{[]byte("mylist")}, [][]byte{[]byte("xxx")}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.ListPush(key[0], val, true, false)
	}
}

// BenchmarkListRPop is RPOP from a large list, refilled outside the timer.
func BenchmarkListRPop(b *testing.B) {
	e, db := listBig(b, 1_000_000+b.N)
	defer e.Unlock()
	key := []byte("mylist")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.ListPop(key, false, 1)
	}
}

// BenchmarkListRange100 is LRANGE mylist 0 99 on a 1M-element list, the
// elements handed to a reply writer stand-in.
func BenchmarkListRange100(b *testing.B) {
	e, db := listBig(b, 1_000_000)
	defer e.Unlock()
	key := []byte("mylist")
	var sink int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, _ := db.ListRead(key)
		from, n := l.RangeBounds(0, 99)
		l.Each(from, n, false, func(v []byte) { sink += len(v) })
	}
	_ = sink
}

// BenchmarkListIndexMiddle is LINDEX of the middle of a 1M-element list:
// whole chunks are skipped by their counts.
func BenchmarkListIndexMiddle(b *testing.B) {
	e, db := listBig(b, 1_000_000)
	defer e.Unlock()
	l, _ := db.ListRead([]byte("mylist"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Index(500_000)
	}
}
