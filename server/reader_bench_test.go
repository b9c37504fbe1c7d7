package server

import (
	"strings"
	"testing"
)

// burst is a source that returns the same burst of requests on every Read,
// as a client pipelining the same commands again and again would.
type burst struct {
	b   []byte
	off int
}

func (s *burst) Read(p []byte) (int, error) {
	n := copy(p, s.b[s.off:])
	s.off = (s.off + n) % len(s.b)
	return n, nil
}

// benchReader parses b.N commands arriving perRead at a time. One op is one
// command: allocs/op shows what a command costs in steady state (the input
// buffers and argument slabs are allocated per ~16 KB and ~512 arguments).
func benchReader(b *testing.B, cmd string, perRead int) {
	rd := testReader(&burst{b: []byte(strings.Repeat(cmd, perRead))}, true)
	for range 1000 { // warm up: the batch slice and scratch reach their size
		batch, _ := rd.next()
		clear(batch)
	}
	b.SetBytes(int64(len(cmd)))
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		batch, err := rd.next()
		if err != nil {
			b.Fatal(err)
		}
		n += len(batch)
		clear(batch)
	}
}

func BenchmarkReaderGetP16(b *testing.B) {
	benchReader(b, "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n", 16)
}

func BenchmarkReaderSetP16(b *testing.B) {
	benchReader(b, "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$3\r\nxxx\r\n", 16)
}

func BenchmarkReaderGetUnpipelined(b *testing.B) {
	benchReader(b, "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n", 1)
}

func BenchmarkReaderInlineP16(b *testing.B) {
	benchReader(b, "SET key:000000000042 \"a b\\x41\"\r\n", 16)
}

func BenchmarkReaderSet1KP16(b *testing.B) {
	benchReader(b, multibulk("SET", "key:000000000042", strings.Repeat("v", 1024)), 16)
}
