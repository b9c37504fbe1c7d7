package server

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClientEvictionLimit: maxmemory-clients in bytes or as a percentage
// of maxmemory (none without maxmemory), never under 128 KB, as Redis's
// getClientEvictionLimit.
func TestClientEvictionLimit(t *testing.T) {
	s := newMemServer(t)
	defer s.Close()
	c := dialServer(t, s)
	for _, tc := range []struct {
		maxmemory, clients string
		want               int64
	}{
		{"0", "0", 0},
		{"0", "10%", 0},
		{"100mb", "10%", 10 << 20},
		{"1mb", "1%", minClientsLimit},
		{"0", "1kb", minClientsLimit},
		{"0", "3mb", 3 << 20},
		{"100mb", "0", 0},
	} {
		c.send("*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$9\r\nmaxmemory\r\n$" + strconv.Itoa(len(tc.maxmemory)) + "\r\n" + tc.maxmemory + "\r\n")
		if l := c.line(); l != "+OK\r\n" {
			t.Fatalf("CONFIG SET maxmemory: %q", l)
		}
		c.send("*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$17\r\nmaxmemory-clients\r\n$" + strconv.Itoa(len(tc.clients)) + "\r\n" + tc.clients + "\r\n")
		if l := c.line(); l != "+OK\r\n" {
			t.Fatalf("CONFIG SET maxmemory-clients: %q", l)
		}
		if got := s.cmem.limit.Load(); got != tc.want {
			t.Errorf("maxmemory %s, maxmemory-clients %s: limit %d, want %d", tc.maxmemory, tc.clients, got, tc.want)
		}
	}
}

// TestClientMemoryTotalReturnsToZero: the running total of the clients'
// memory is made of per-client differences; once every client is gone,
// whatever they held (big requests, unsent output, MULTI queues), it is
// back to zero.
func TestClientMemoryTotalReturnsToZero(t *testing.T) {
	s := newMemServer(t)
	defer s.Close()
	var conns []*rawConn
	for range 4 {
		conns = append(conns, dialServer(t, s))
	}
	conns[0].send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$200000\r\n" + strings.Repeat("x", 200000) + "\r\n")
	conns[0].line()
	conns[1].send("*2\r\n$4\r\nECHO\r\n$500000\r\n" + strings.Repeat("y", 1000)) // unfinished
	conns[2].send("*1\r\n$5\r\nMULTI\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
	conns[2].line()
	conns[2].line()
	var pipe strings.Builder
	for range 20 {
		pipe.WriteString("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n") // 4 MB of replies it does not read
	}
	conns[3].send(pipe.String())
	waitFor(t, "the clients to be counted", func() bool { return s.cmem.total.Load() > 200000 })
	for _, c := range conns {
		c.c.Close()
	}
	waitFor(t, "the total to come back to zero", func() bool { return s.cmem.total.Load() == 0 })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
