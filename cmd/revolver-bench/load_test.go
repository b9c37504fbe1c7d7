package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer answers each command with answer(args) (a whole RESP reply)
// and counts the replies by their first byte.
type fakeServer struct {
	addr   string
	mu     sync.Mutex
	counts map[byte]int64
}

func newFakeServer(t *testing.T, answer func(args []string) string) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fakeServer{addr: ln.Addr().String(), counts: map[byte]int64{}}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(nc, answer)
		}
	}()
	return f
}

func (f *fakeServer) serve(nc net.Conn, answer func(args []string) string) {
	defer nc.Close()
	br, bw := bufio.NewReader(nc), bufio.NewWriter(nc)
	readLine := func() (string, error) {
		ln, err := br.ReadString('\n')
		return strings.TrimRight(ln, "\r\n"), err
	}
	for {
		head, err := readLine()
		if err != nil || !strings.HasPrefix(head, "*") {
			return
		}
		n, _ := strconv.Atoi(head[1:])
		args := make([]string, n)
		for i := range args {
			bulk, err := readLine()
			if err != nil {
				return
			}
			size, _ := strconv.Atoi(bulk[1:])
			buf := make([]byte, size+2)
			if _, err := io.ReadFull(br, buf); err != nil {
				return
			}
			args[i] = string(buf[:size])
		}
		rep := answer(args)
		f.mu.Lock()
		f.counts[rep[0]]++
		f.mu.Unlock()
		bw.WriteString(rep)
		if br.Buffered() == 0 {
			if bw.Flush() != nil {
				return
			}
		}
	}
}

func (f *fakeServer) count(kind byte) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[kind]
}

// pingOrFail answers BAD with an error and anything else with +PONG.
func pingOrFail(args []string) string {
	if args[0] == "BAD" {
		return "-ERR boom\r\n"
	}
	return "+PONG\r\n"
}

// everyThird sends BAD as every third command of a client.
func everyThird(int) Generator {
	n := 0
	return func(dst []byte, _ *rand.Rand) []byte {
		n++
		if n%3 == 0 {
			return appendCommand(dst, "BAD")
		}
		return appendCommand(dst, "PING")
	}
}

// An error reply is not an operation, and a run with any fails, naming the
// first error and how many there were.
func TestRunLoadErrorRepliesFailTheRun(t *testing.T) {
	f := newFakeServer(t, pingOrFail)
	spec := LoadSpec{Clients: 2, Pipeline: 4, Duration: 50 * time.Millisecond, ClientGen: everyThird, Label: "t"}
	r, err := runLoad(context.Background(), &Server{Addr: f.addr}, spec, NewProgress(nil))
	var er ErrorReplies
	if !errors.As(err, &er) || er.First != "ERR boom" || er.N != f.count('-') || er.N == 0 {
		t.Fatalf("runLoad: %v (%#v); want ErrorReplies{N: %d, First: \"ERR boom\"}", err, er, f.count('-'))
	}
	if !strings.Contains(err.Error(), "ERR boom") || !strings.Contains(err.Error(), strconv.FormatInt(er.N, 10)) {
		t.Errorf("the error %q should name the first error text and the count", err)
	}
	if r.Ops != f.count('+') || r.Errors != f.count('-') || uint64(r.Ops) != r.Hist.Count() {
		t.Errorf("ops %d (histogram %d), errors %d; the server answered %d +PONG and %d errors",
			r.Ops, r.Hist.Count(), r.Errors, f.count('+'), f.count('-'))
	}
}

func TestRunLoadWithoutErrors(t *testing.T) {
	f := newFakeServer(t, pingOrFail)
	spec := LoadSpec{Clients: 2, Pipeline: 4, Duration: 30 * time.Millisecond, Gen: fixed("PING")(0), Label: "t"}
	r, err := runLoad(context.Background(), &Server{Addr: f.addr}, spec, NewProgress(nil))
	if err != nil || r.Errors != 0 || r.Ops == 0 || r.Ops != f.count('+') {
		t.Fatalf("runLoad: %v, ops %d errors %d, server answered %d", err, r.Ops, r.Errors, f.count('+'))
	}
}

func TestFillFailsOnAnErrorReply(t *testing.T) {
	f := newFakeServer(t, pingOrFail)
	err := fill(context.Background(), f.addr, 2000, 2, func(dst []byte, i int) []byte {
		if i == 1234 {
			return appendCommand(dst, "BAD")
		}
		return appendCommand(dst, "PING")
	})
	var re ReplyError
	if !errors.As(err, &re) || string(re) != "ERR boom" {
		t.Fatalf("fill: %v, want the error reply", err)
	}
}

// numpoolAnswers answers the call+hangup loop of either dialect: a call
// takes number 1000, a hangup is refused.
func numpoolAnswers(args []string) string {
	if args[len(args)-1] == "call" || (len(args) > 3 && args[2] == "call") {
		if args[0] == "NUMPOOL.EVENT" {
			return "*2\r\n$4\r\n1000\r\n:1\r\n"
		}
		return "$4\r\n1000\r\n"
	}
	return "-ERR boom\r\n"
}

// The script suite's call+hangup loop: refused hangups are not calls.
func TestNumpoolLoadErrorRepliesFail(t *testing.T) {
	f := newFakeServer(t, numpoolAnswers)
	r, err := numpoolLoad(context.Background(), &Server{Addr: f.addr}, 2, 4, 30*time.Millisecond, "t", NewProgress(nil))
	var er ErrorReplies
	if !errors.As(err, &er) || er.N != f.count('-') || er.N == 0 {
		t.Fatalf("numpoolLoad: %v; want ErrorReplies of %d", err, f.count('-'))
	}
	if r.Ops != f.count('$') || uint64(r.Ops) != r.Hist.Count() {
		t.Errorf("ops %d (histogram %d), want the %d calls only", r.Ops, r.Hist.Count(), f.count('$'))
	}
}

// The numpool suite's loop: refused hangups are not pairs, and fail it.
func TestNpLoadErrorRepliesFail(t *testing.T) {
	f := newFakeServer(t, numpoolAnswers)
	r, err := npLoad(context.Background(), &Server{Addr: f.addr}, npNativeDialect("fifo"), 2, 4, 30*time.Millisecond,
		"t", NewProgress(nil))
	var er ErrorReplies
	if !errors.As(err, &er) || er.N != f.count('-') || er.N == 0 {
		t.Fatalf("npLoad: %v; want ErrorReplies of %d", err, f.count('-'))
	}
	if r.Calls != f.count('*') || r.Pairs != 0 || r.HangupHist.Count() != 0 {
		t.Errorf("calls %d pairs %d hangup latencies %d; want %d calls and no pair", r.Calls, r.Pairs,
			r.HangupHist.Count(), f.count('*'))
	}
}

// The evict suite's fill: an OOM reply is not a SET done.
func TestEvictFillFailsOnOOM(t *testing.T) {
	f := newFakeServer(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "SET":
			if (args[1][len(args[1])-1]-'0')%2 == 0 { // about half the keys
				return "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
			}
			return "+OK\r\n"
		case "INFO":
			info := "used_memory:1000\r\nevicted_keys:0\r\n"
			return "$" + strconv.Itoa(len(info)) + "\r\n" + info + "\r\n"
		}
		return ":0\r\n"
	})
	env := &Env{Prog: NewProgress(nil), Log: io.Discard}
	_, err := evictFill(context.Background(), env, &Server{Addr: f.addr, Name: "fake"}, 64, 1000)
	var er ErrorReplies
	if !errors.As(err, &er) || !strings.HasPrefix(er.First, "OOM") || er.N == 0 {
		t.Fatalf("evictFill: %v; want the OOM replies", err)
	}
}
