package engine

import (
	"fmt"
	"testing"
	"time"
)

// benchHash10k is a hashtable hash of 10,000 fields of typical sizes.
func benchHash10k(b *testing.B) (*Engine, Object) {
	e := New(Options{Clock: NewManualClock(time.UnixMilli(1_700_000_000_000))})
	e.Lock()
	b.Cleanup(e.Unlock)
	pairs := make([][]byte, 0, 20000)
	for i := range 10000 {
		pairs = append(pairs, []byte(fmt.Sprintf("field:%d", i)), []byte(fmt.Sprintf("value-%d-%d", i, i*31)))
	}
	e.DB(0).HSet([]byte("h"), pairs)
	return e, e.DB(0).Peek([]byte("h"))
}

// BenchmarkDumpHash10k: DUMP of a 10,000-field hash (RDB_TYPE_HASH, each
// field and value an RDB string).
func BenchmarkDumpHash10k(b *testing.B) {
	_, obj := benchHash10k(b)
	b.ReportAllocs()
	for b.Loop() {
		p := DumpPayload(obj)
		b.SetBytes(int64(len(p)))
	}
}

// BenchmarkRestoreHash10k: RESTORE of the same payload (verify, decode,
// build the hashtable), without storing it.
func BenchmarkRestoreHash10k(b *testing.B) {
	e, obj := benchHash10k(b)
	p := DumpPayload(obj)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.ParseDumpPayload(p); err != nil {
			b.Fatal(err)
		}
	}
}
