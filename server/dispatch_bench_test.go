package server

import (
	"net"
	"strconv"
	"testing"
)

// BenchmarkRunBatch16 runs pipelined batches of 8 SETs and 8 GETs through
// the dispatcher under the engine lock, without sockets: the per-command
// cost of dispatch that CLIENT TRACKING and CLIENT REPLY must not raise
// when no client uses them.
func BenchmarkRunBatch16(b *testing.B) {
	s := newMemServer(b)
	defer s.Close()
	a, peer := net.Pipe()
	defer a.Close()
	defer peer.Close()
	c := newClient(s, a, 1<<40)
	var batch [][][]byte
	for i := range 16 {
		key := []byte("key:" + strconv.Itoa(i%8))
		if i%2 == 0 {
			batch = append(batch, [][]byte{[]byte("SET"), key, []byte("value")})
		} else {
			batch = append(batch, [][]byte{[]byte("GET"), key})
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.batch = append(c.batch[:0], batch...)
		c.next = 0
		s.eng.Lock()
		s.runBatch(c)
		s.eng.Unlock()
		c.w.Reset()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/cmd")
}
