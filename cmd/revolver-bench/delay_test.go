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
// suite's own logic (timing, tallies) is tested against a server whose timing
// and delivery are known, apart from Revolver's.
type fakeDelay struct {
	mu     sync.Mutex
	timers map[string]int64 // member -> due, unix ms
	early  int64            // ms before their due time that timers fire (a broken server)
}

var fakes sync.Map // address -> *fakeDelay

// fakeOf is the fake serving addr.
func fakeOf(t *testing.T, addr string) *fakeDelay {
	f, ok := fakes.Load(addr)
	if !ok {
		t.Fatalf("no fake at %s", addr)
	}
	return f.(*fakeDelay)
}

func startFakeDelay(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fakeDelay{timers: map[string]int64{}}
	fakes.Store(ln.Addr().String(), f)
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
	now := time.Now().UnixMilli() + f.early
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
	if sample["p50"] > 200 || sample["max"] > 1000 || sample["rate"] <= 0 || sample["early"] != 0 {
		t.Fatalf("implausible sample %v", sample)
	}
}

// A server that fires timers before their due time: the burst and at-rest
// rows count the pops as early, not as on time.
func TestDelayEarlyPopsCounted(t *testing.T) {
	addr := startFakeDelay(t)
	f := fakeOf(t, addr)
	f.mu.Lock()
	f.early = 20
	f.mu.Unlock()
	env := &Env{Opts: &Options{Duration: 200 * time.Millisecond, Scale: 1}, Log: io.Discard}
	s := &Server{Kind: kindRevolver, Name: "Revolver", Addr: addr}
	sample, _, err := delayRun(context.Background(), env, s, "rb:delay:test", 100, nativePop,
		100*time.Millisecond, 200*time.Millisecond, "test")
	if err != nil {
		t.Fatal(err)
	}
	if sample["fired"] != 100 || sample["early"] < 50 || sample["earliest"] < 10 || sample["earliest"] > 21 {
		t.Errorf("burst: %v; want most of the 100 timers early, by up to 20 ms", sample)
	}
	if err := loadPending(context.Background(), addr, "rb:delay:rest", 10, true); err != nil {
		t.Fatal(err)
	}
	sample, _, err = restRun(context.Background(), env, s, "rb:delay:rest", 1, 20, nativePop,
		50*time.Millisecond, 200*time.Millisecond, "test")
	if err != nil {
		t.Fatal(err)
	}
	if sample["held"] != 100 || sample["early"] < 10 || sample["earliest"] > 21 {
		t.Errorf("at rest: %v; want most of the 20 probes early, by up to 20 ms", sample)
	}
}

// TestDelayAtRestAgainstFake runs the at-rest consumers (ten blocked
// DELAY.POP COUNT 1 clients) against the fake: every probe is held exactly
// once, late by about the fake's 1 ms polling.
func TestDelayAtRestAgainstFake(t *testing.T) {
	addr := startFakeDelay(t)
	env := &Env{Opts: &Options{Duration: 300 * time.Millisecond, Scale: 1}, Log: io.Discard}
	s := &Server{Kind: kindRevolver, Name: "Revolver", Addr: addr}
	const key = "rb:delay:rest"
	if err := loadPending(context.Background(), addr, key, 50, true); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		sample, note, err := restRun(context.Background(), env, s, key, round, 30, nativePop,
			50*time.Millisecond, 300*time.Millisecond, "test")
		if err != nil {
			t.Fatal(err)
		}
		if note != "" || sample["once"] != 100 || sample["held"] != 100 || sample["dups"] != 0 {
			t.Fatalf("round %d: %v (%s)", round, sample, note)
		}
		if sample["p50"] > 200 || sample["max"] > 1000 || sample["p99"] < sample["p50"] || sample["early"] != 0 {
			t.Fatalf("round %d: implausible sample %v", round, sample)
		}
	}
	f := fakeOf(t, addr)
	f.mu.Lock()
	n := len(f.timers)
	f.mu.Unlock()
	if n != 50 {
		t.Fatalf("the pending timers should stay: %d left", n)
	}
}

func TestProbeTallyCountsDuplicatesAndStrays(t *testing.T) {
	t0 := time.Now().Truncate(time.Millisecond)
	tally := newProbeTally("probe:1:", 3, func(i int) int64 { return t0.Add(time.Duration(i) * 10 * time.Millisecond).UnixMilli() })
	tally.record("probe:1:0", t0.Add(2*time.Millisecond))
	tally.record("probe:1:0", t0.Add(3*time.Millisecond))  // duplicate: counted, not timed
	tally.record("probe:1:2", t0.Add(25*time.Millisecond)) // 5 ms late
	tally.record("probe:0:1", t0)                          // last round's
	tally.record("pending:7", t0)
	if tally.held != 2 || tally.stray != 2 || tally.counts[0] != 2 || tally.counts[1] != 0 {
		t.Fatalf("tally %+v", tally)
	}
	if got := ms(tally.hist.Max()); got < 4.9 || got > 5.1 {
		t.Fatalf("max lateness %v ms, want 5", got)
	}
	tally.record("probe:1:1", t0.Add(10*time.Millisecond))
	select {
	case <-tally.allHeld:
	default:
		t.Fatal("allHeld not closed once every probe is held")
	}
}
