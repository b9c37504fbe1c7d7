package flat_test

// Benchmarks of flat against the engine's keyspace table (engine.Dict, with
// an entry-like value holding a []byte) and a Go map from string keys to
// arena handles: lookups, inserts and deletes at 1M and 10M keys, heap bytes
// per key, and the time of a full collection with millions of keys held.
// Keys are 10 bytes ("k" and 9 digits), values 32 bytes.
//
//	go test -run '^$' -bench . -benchtime 200000x ./flat
//	go test -run '^$' -bench 'BytesPerKey|GC' -benchtime 1x ./flat

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/flat"
)

// dictVal is what engine.Dict holds per key here: the engine's entry has
// an Object and a deadline; a []byte stands in for the object.
type dictVal struct {
	val    []byte
	expire int64
}

var value32 = bytes.Repeat([]byte{'v'}, 32)

// appendKey appends the 10-byte key of i ("k" and 9 digits, two at a time
// so that making keys costs the benchmarks little).
func appendKey(b []byte, i int) []byte {
	var d [10]byte
	d[0] = 'k'
	for j := 8; j > 0; j -= 2 {
		q := i % 100
		i /= 100
		d[j], d[j+1] = byte('0'+q/10), byte('0'+q%10)
	}
	d[1] = byte('0' + i%10)
	return append(b, d[:]...)
}

// cpuClock starts measuring the process's CPU time (user and system, all
// threads, so the collector's work counts); the returned function reports
// it per operation as cpu-ns/op. On a shared machine CPU time varies less
// than wall time, which includes waiting for a core.
func cpuClock(b *testing.B) func() {
	start := cpuNanos()
	return func() {
		b.ReportMetric(float64(cpuNanos()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// rssBytes is the process's resident set (Linux), 0 where unknown.
func rssBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// store is one of the contenders, filled with keys 0..n-1.
type store interface {
	get(key []byte) bool
	set(key []byte)
	del(key []byte) bool
	len() int
}

type flatStore struct{ k *flat.Keyspace }

func (s flatStore) get(key []byte) bool { return s.k.Get(key) != nil }
func (s flatStore) set(key []byte)      { s.k.Set(key, 0, 0, 0, value32) }
func (s flatStore) del(key []byte) bool { return s.k.Delete(key) }
func (s flatStore) len() int            { return s.k.Len() }

type dictStore struct{ d *engine.Dict[dictVal] }

func (s dictStore) get(key []byte) bool { return s.d.Get(str(key)) != nil }
func (s dictStore) set(key []byte) {
	_, v, _ := s.d.Insert(str(key))
	v.val = bytes.Clone(value32)
}
func (s dictStore) del(key []byte) bool { _, ok := s.d.Delete(str(key)); return ok }
func (s dictStore) len() int            { return s.d.Len() }

// mapStore is the obvious Go design: a map from the key to a record in
// an arena. The map's keys are strings, so the collector scans them.
type mapStore struct {
	m map[string]flat.Handle
	a *flat.Arena
}

func (s mapStore) get(key []byte) bool { _, ok := s.m[str(key)]; return ok }
func (s mapStore) set(key []byte) {
	n := flat.RecordSize(len(key), len(value32), false)
	h, buf := s.a.Alloc(n)
	flat.PutRecord(buf, 0, 0, 0, key, value32)
	if old, ok := s.m[str(key)]; ok {
		s.a.Free(old, n)
	}
	s.m[string(key)] = h
}
func (s mapStore) del(key []byte) bool {
	h, ok := s.m[str(key)]
	if ok {
		delete(s.m, str(key))
		s.a.Free(h, flat.Record(s.a.Bytes(h)).Len())
	}
	return ok
}
func (s mapStore) len() int { return len(s.m) }

func newStore(kind string) store {
	switch kind {
	case "flat":
		return flatStore{flat.NewKeyspace()}
	case "dict":
		return dictStore{engine.NewDict[dictVal]()}
	case "gomap":
		return mapStore{map[string]flat.Handle{}, &flat.Arena{}}
	}
	panic(kind)
}

func fill(s store, from, to int) {
	var buf []byte
	for i := from; i < to; i++ {
		buf = appendKey(buf[:0], i)
		s.set(buf)
	}
}

// cached holds the stores built, so a benchmark's b.N rounds and the
// benchmarks after it reuse them (a 10M-key Dict takes a while to build).
var cached = map[string]store{}

func storeOf(kind string, n int) store {
	name := kind + "/" + sizeName(n)
	s := cached[name]
	if s == nil {
		s = newStore(kind)
		fill(s, 0, n)
		cached[name] = s
	}
	return s
}

// dropStores empties the cache, for measurements that must see one store
// alone in the heap.
func dropStores() {
	clear(cached)
	runtime.GC()
}

func sizeName(n int) string {
	if n%1e6 == 0 {
		return fmt.Sprintf("%dM", n/1e6)
	}
	return fmt.Sprint(n)
}

var benchSizes = []int{1e6, 10e6}

func eachStore(b *testing.B, kinds []string, sizes []int, fn func(b *testing.B, s store, n int)) {
	for _, n := range sizes {
		for _, kind := range kinds {
			b.Run(kind+"/"+sizeName(n), func(b *testing.B) {
				if testing.Short() && n > 1e6 {
					b.Skip("10M keys in -short mode")
				}
				fn(b, storeOf(kind, n), n)
			})
		}
	}
}

func BenchmarkGet(b *testing.B) {
	eachStore(b, []string{"flat", "dict"}, benchSizes, func(b *testing.B, s store, n int) {
		rng := rand.New(rand.NewPCG(1, 2))
		var buf []byte
		b.ResetTimer()
		stop := cpuClock(b)
		for range b.N {
			buf = appendKey(buf[:0], rng.IntN(n))
			if !s.get(buf) {
				b.Fatal("missing key")
			}
		}
		stop()
	})
}

func BenchmarkGetMiss(b *testing.B) {
	eachStore(b, []string{"flat", "dict"}, benchSizes[:1], func(b *testing.B, s store, n int) {
		rng := rand.New(rand.NewPCG(1, 2))
		var buf []byte
		b.ResetTimer()
		stop := cpuClock(b)
		for range b.N {
			buf = appendKey(buf[:0], n+rng.IntN(n))
			if s.get(buf) {
				b.Fatal("found an absent key")
			}
		}
		stop()
	})
}

// BenchmarkInsert adds b.N new keys to a store of n (then removes them,
// untimed): the table grows by b.N, splits and all.
func BenchmarkInsert(b *testing.B) {
	eachStore(b, []string{"flat", "dict"}, benchSizes, func(b *testing.B, s store, n int) {
		b.ResetTimer()
		stop := cpuClock(b)
		fill(s, n, n+b.N)
		b.StopTimer()
		stop()
		var buf []byte
		for i := n; i < n+b.N; i++ {
			s.del(appendKey(buf[:0], i))
		}
	})
}

// BenchmarkDelete removes b.N keys added (untimed) to a store of n.
func BenchmarkDelete(b *testing.B) {
	eachStore(b, []string{"flat", "dict"}, benchSizes, func(b *testing.B, s store, n int) {
		b.StopTimer()
		fill(s, n, n+b.N)
		runtime.GC()
		b.StartTimer()
		stop := cpuClock(b)
		var buf []byte
		for i := n; i < n+b.N; i++ {
			if !s.del(appendKey(buf[:0], i)) {
				b.Fatal("missing key")
			}
		}
		stop()
	})
}

// BenchmarkOverwrite sets existing keys to a new value of the same size.
func BenchmarkOverwrite(b *testing.B) {
	eachStore(b, []string{"flat", "dict"}, benchSizes[:1], func(b *testing.B, s store, n int) {
		rng := rand.New(rand.NewPCG(3, 4))
		var buf []byte
		b.ResetTimer()
		stop := cpuClock(b)
		for range b.N {
			buf = appendKey(buf[:0], rng.IntN(n))
			s.set(buf)
		}
		stop()
	})
}

// BenchmarkBytesPerKey reports the heap (HeapInuse after a collection) and
// the resident memory (after returning free pages to the OS) a store of n
// keys adds, per key. Run it with -benchtime 1x.
func BenchmarkBytesPerKey(b *testing.B) {
	for _, n := range []int{1e6, 10e6} {
		for _, kind := range []string{"flat", "dict", "gomap"} {
			b.Run(kind+"/"+sizeName(n), func(b *testing.B) {
				if testing.Short() && n > 1e6 {
					b.Skip("10M keys in -short mode")
				}
				dropStores()
				for range b.N {
					var before, after runtime.MemStats
					debug.FreeOSMemory()
					runtime.ReadMemStats(&before)
					rss := rssBytes()
					s := newStore(kind)
					fill(s, 0, n)
					debug.FreeOSMemory()
					runtime.ReadMemStats(&after)
					b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/float64(n), "heap-B/key")
					if rss > 0 {
						b.ReportMetric(float64(rssBytes()-rss)/float64(n), "rss-B/key")
					}
					if fs, ok := s.(flatStore); ok {
						st := fs.k.Stats()
						b.ReportMetric(float64(st.Bytes())/float64(n), "flat-B/key")
						b.ReportMetric(float64(st.Table.Bytes)/float64(n), "index-B/key")
						b.ReportMetric(st.Table.Load, "load")
					}
					runtime.KeepAlive(s)
				}
			})
		}
	}
}

// BenchmarkGC times a full collection with 5M keys held: the collector
// marks every node and value of a Dict, but only a few thousand page and
// segment objects of flat, whose contents it never scans.
//
// Each store is measured alone in the heap: run one kind per process
// (-bench GC/flat, then GC/dict) for the cleanest numbers, since the first
// cycles after a big store is dropped also sweep and scavenge its memory.
func BenchmarkGC(b *testing.B) {
	const n = 5e6
	for _, kind := range []string{"flat", "dict", "gomap"} {
		b.Run(kind+"/"+sizeName(n), func(b *testing.B) {
			name := kind + "/" + sizeName(n)
			for other := range cached {
				if other != name {
					delete(cached, other)
				}
			}
			s := storeOf(kind, n)
			runtime.GC()
			runtime.GC()
			b.ResetTimer()
			stop := cpuClock(b)
			for range b.N {
				runtime.GC()
			}
			b.StopTimer()
			stop()
			if s.len() != n {
				b.Fatal("lost keys")
			}
		})
	}
}

// BenchmarkFillLatency fills an empty store with 10M keys, timing every
// insert, and reports the median, the 99.99th percentile and the slowest:
// the steps where a table grows (a segment split or a directory doubling
// for flat; a bucket array twice the size for Dict, plus the collector's
// assists) show in the tail. Run it with -benchtime 1x.
func BenchmarkFillLatency(b *testing.B) {
	const n = 10e6
	for _, kind := range []string{"flat", "dict"} {
		b.Run(kind+"/"+sizeName(n), func(b *testing.B) {
			if testing.Short() {
				b.Skip("10M keys in -short mode")
			}
			dropStores()
			for range b.N {
				s := newStore(kind)
				lat := make([]int32, n)
				var buf []byte
				for i := range lat {
					buf = appendKey(buf[:0], i)
					t0 := time.Now()
					s.set(buf)
					lat[i] = int32(min(time.Since(t0), time.Duration(1<<31-1)))
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
				b.ReportMetric(float64(lat[len(lat)-len(lat)/10000]), "p99.99-ns")
				b.ReportMetric(float64(lat[len(lat)-1]), "max-ns")
				runtime.KeepAlive(s)
			}
		})
	}
}
