package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeDelay serves the subset of SPEC.md §2 "DELAY" the delay suite uses
// (DELAY.ADD key member AT ms, DELAY.POP key COUNT n BLOCK ms, DEL), so the
// native path is exercised before Revolver has the commands.
type fakeDelay struct {
	mu     sync.Mutex
	timers map[string]int64 // member -> due, unix ms
}

func startFakeDelay(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fakeDelay{timers: map[string]int64{}}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(nc)
		}
	}()
	return ln.Addr().String()
}

// serve reads commands with the bench's own reply parser (a command is an
// array of bulk strings) and answers each one.
func (f *fakeDelay) serve(nc net.Conn) {
	defer nc.Close()
	c := &Conn{nc: nc, br: bufio.NewReader(nc)}
	for {
		v, err := c.Read()
		if err != nil {
			return
		}
		args := make([]string, len(v.Elems))
		for i, a := range v.Elems {
			args[i] = a.Str
		}
		nc.Write(f.reply(args))
	}
}

func (f *fakeDelay) reply(args []string) []byte {
	switch strings.ToUpper(args[0]) {
	case "DELAY.ADD":
		if len(args) != 5 || !strings.EqualFold(args[3], "AT") {
			return []byte("-ERR syntax error\r\n")
		}
		due, _ := strconv.ParseInt(args[4], 10, 64)
		f.mu.Lock()
		_, had := f.timers[args[2]]
		f.timers[args[2]] = due
		f.mu.Unlock()
		if had {
			return []byte(":0\r\n")
		}
		return []byte(":1\r\n")
	case "DELAY.POP":
		count, _ := strconv.Atoi(args[3])
		block, _ := strconv.Atoi(args[5])
		deadline := time.Now().Add(time.Duration(block) * time.Millisecond)
		for {
			if fired := f.pop(count); len(fired) > 0 || time.Now().After(deadline) {
				out := appendHeader(nil, '*', len(fired))
				for _, m := range fired {
					out = appendHeader(out, '*', 4)
					out = appendBulkString(out, m.member)
					out = append(out, "$-1\r\n"...)
					out = append(out, ':')
					out = strconv.AppendInt(out, m.due, 10)
					out = append(out, "\r\n:1\r\n"...)
				}
				return out
			}
			time.Sleep(time.Millisecond)
		}
	case "DEL":
		return []byte(":1\r\n")
	}
	return []byte("-ERR unknown command '" + args[0] + "'\r\n")
}

type firedTimer struct {
	member string
	due    int64
}

func (f *fakeDelay) pop(count int) []firedTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now().UnixMilli()
	var due []firedTimer
	for m, d := range f.timers {
		if d <= now {
			due = append(due, firedTimer{m, d})
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].due < due[j].due })
	if len(due) > count {
		due = due[:count]
	}
	for _, t := range due {
		delete(f.timers, t.member)
	}
	return due
}

func TestDelayNativePathAgainstFake(t *testing.T) {
	addr := startFakeDelay(t)
	env := &Env{Opts: &Options{Duration: 200 * time.Millisecond, Scale: 1}, Log: io.Discard}
	s := &Server{Kind: kindRevolver, Name: "Revolver", Addr: addr}
	sample, note, err := delayRun(context.Background(), env, s, "rb:delay:test", 300, nativePop,
		100*time.Millisecond, 200*time.Millisecond, "test")
	if err != nil {
		t.Fatal(err)
	}
	if note != "" {
		t.Logf("note: %s", note)
	}
	if sample["fired"] != 100 {
		t.Fatalf("fired %v%% of the timers: %v", sample["fired"], sample)
	}
	// The fake polls every millisecond; lateness stays far below a second.
	if sample["p50"] > 200 || sample["max"] > 1000 || sample["rate"] <= 0 {
		t.Fatalf("implausible sample %v", sample)
	}
}
