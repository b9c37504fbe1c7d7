package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// pipeConn is a Conn reading canned replies.
func pipeConn(t *testing.T, replies string) *Conn {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	go func() { io.WriteString(b, replies) }()
	return &Conn{nc: a, br: bufio.NewReader(a)}
}

func TestSkipReplies(t *testing.T) {
	c := pipeConn(t, "+OK\r\n:42\r\n$3\r\nabc\r\n$-1\r\n*0\r\n*-1\r\n*2\r\n$1\r\na\r\n-ERR inner\r\n-ERR unknown command 'pfadd'\r\n*1\r\n*2\r\n$0\r\n\r\n:1\r\n"+
		// DELAY.POP: one fired timer with a nil payload is not empty; no timer due is.
		"*1\r\n*4\r\n$3\r\nt:1\r\n$-1\r\n:1\r\n:1\r\n*0\r\n")
	want := []reply{{}, {}, {}, {empty: true}, {empty: true}, {empty: true}, {err: "ERR inner"},
		{err: "ERR unknown command 'pfadd'"}, {}, {}, {empty: true}}
	for i, w := range want {
		got, err := c.Skip()
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if got != w {
			t.Errorf("reply %d: %+v, want %+v", i, got, w)
		}
	}
}

func TestReadAndUnknownCommand(t *testing.T) {
	c := pipeConn(t, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$3\r\nkey\r\n-ERR unknown command 'delay.add', with args beginning with: \r\n")
	v, err := c.Read()
	if err != nil || len(v.Elems) != 3 || v.Elems[2].Str != "key" {
		t.Fatalf("%+v %v", v, err)
	}
	_, err = c.Read()
	if !unknownCommand(err) {
		t.Fatalf("unknown command not recognised: %v", err)
	}
	if unknownCommand(ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value")) {
		t.Fatal("WRONGTYPE is not an unknown command")
	}
}

func TestEncoding(t *testing.T) {
	got := string(appendRandArg(nil, "key:", 123456))
	if got != "$16\r\nkey:000000123456\r\n" {
		t.Fatalf("appendRandArg: %q", got)
	}
	if got := string(appendCommand(nil, "GET", "k")); got != "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n" {
		t.Fatalf("appendCommand: %q", got)
	}
	if got := string(appendBulkInt(nil, -17)); got != "$3\r\n-17\r\n" {
		t.Fatalf("appendBulkInt: %q", got)
	}
	r := newRand(1)
	set := string(workloadNamed("SET").gen(1_000_000)(nil, r))
	if len(set) != len("*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000000\r\n$3\r\nxxx\r\n") {
		t.Fatalf("SET command %q", set)
	}
	mset := msetGen(10)(nil, r)
	if string(mset[:4]) != "*21\r" {
		t.Fatalf("MSET command %q", mset)
	}
}

// okServer answers +OK to every command it reads: the same cheap peer for
// both clients, so the benchmarks below compare client-side cost.
func okServer(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				br, bw := bufio.NewReaderSize(nc, 64*1024), bufio.NewWriterSize(nc, 64*1024)
				name := false // the next bulk is a command name
				for {
					ln, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					switch ln[0] {
					case '*':
						name = true
					case '$':
						n, _ := strconv.Atoi(string(ln[1 : len(ln)-2]))
						arg, err := br.Peek(n)
						if err != nil {
							return
						}
						if name {
							// go-redis opens with HELLO; refusing it keeps RESP2.
							if string(arg) == "hello" || string(arg) == "HELLO" {
								bw.WriteString("-ERR unknown command 'HELLO'\r\n")
							} else {
								bw.WriteString("+OK\r\n")
							}
							name = false
						}
						br.Discard(n + 2)
					}
					if br.Buffered() == 0 {
						bw.Flush()
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// BenchmarkClientRaw and BenchmarkClientGoRedis measure what one SET costs
// the load generator (ns/op and allocations) against a trivial server:
// the reason the bench drives servers with its own client.
func BenchmarkClientRaw(b *testing.B) {
	for _, p := range []int{1, 16} {
		b.Run("P"+strconv.Itoa(p), func(b *testing.B) {
			c, err := Dial(okServer(b), 0)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			gen, r := workloadNamed("SET").gen(1_000_000), newRand(1)
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for i := 0; i < b.N; i += p {
				buf = buf[:0]
				for j := 0; j < p; j++ {
					buf = gen(buf, r)
				}
				c.AppendRaw(buf)
				if err := c.Flush(); err != nil {
					b.Fatal(err)
				}
				for j := 0; j < p; j++ {
					if _, err := c.Skip(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func BenchmarkClientGoRedis(b *testing.B) {
	for _, p := range []int{1, 16} {
		b.Run("P"+strconv.Itoa(p), func(b *testing.B) {
			rdb := redis.NewClient(&redis.Options{Addr: okServer(b), Protocol: 2, DisableIdentity: true, PoolSize: 1})
			defer rdb.Close()
			ctx, r := context.Background(), newRand(1)
			key := func() string { return "key:" + zeroPad12(r.Uint64N(1_000_000)) }
			b.ReportAllocs()
			for i := 0; i < b.N; i += p {
				if p == 1 {
					if err := rdb.Set(ctx, key(), "xxx", 0).Err(); err != nil {
						b.Fatal(err)
					}
					continue
				}
				pipe := rdb.Pipeline()
				for j := 0; j < p; j++ {
					pipe.Set(ctx, key(), "xxx", 0)
				}
				if _, err := pipe.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func zeroPad12(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for len(s) < 12 {
		s = "0" + s
	}
	return s
}
