package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRoomMessage(t *testing.T) {
	b := roomMessage(nil, 1764150000123456789, 2017)
	if len(b) != roomPayload {
		t.Fatalf("payload of %d bytes, want %d: %q", len(b), roomPayload, b)
	}
	sent, seq, ok := parseRoomMessage(b)
	if !ok || sent != 1764150000123456789 || seq != 2017 {
		t.Fatalf("parsed %d %d %v from %q", sent, seq, ok, b)
	}
	if _, _, ok := parseRoomMessage([]byte("hello")); ok {
		t.Fatal("a foreign payload parsed")
	}
	if got := (roomShape{10, 1}).String(); got != "10 rooms × 1 reader" {
		t.Fatalf("shape %q", got)
	}
	if got := roomRowName(roomShape{1, 10_000}, time.Second); got != "delivery: 1 room × 10k readers, recipe polls every 1s" {
		t.Fatalf("row %q", got)
	}
}

// TestRoomReplyReading: a ROOM.PULL reply and an error read by the lean
// reader.
func TestRoomReplyReading(t *testing.T) {
	msg := roomMessage(nil, 42, 7)
	var in bytes.Buffer
	in.WriteString("*6\r\n:7\r\n:0\r\n:0\r\n:0\r\n:1764\r\n*1\r\n*4\r\n$6\r\nnormal\r\n:7\r\n")
	in.WriteString("$" + strconv.Itoa(len(msg)) + "\r\n" + string(msg) + "\r\n:1764\r\n-ERR nope\r\n")
	c := &Conn{br: bufio.NewReader(&in)}
	want := []int{6, 7, 0, 0, 0, 1764, 1, 4}
	kinds := []byte{'*', ':', ':', ':', ':', ':', '*', '*'}
	for i, k := range kinds {
		if n, err := c.readHeader(k); err != nil || n != want[i] {
			t.Fatalf("header %d: %d %v", i, n, err)
		}
	}
	if b, ok, err := c.readBulk(nil); string(b) != "normal" || !ok || err != nil {
		t.Fatalf("kind %q %v %v", b, ok, err)
	}
	if _, err := c.readHeader(':'); err != nil {
		t.Fatal(err)
	}
	if b, _, err := c.readBulk(make([]byte, 0, 4)); !bytes.Equal(b, msg) || err != nil {
		t.Fatalf("payload %q %v", b, err)
	}
	if _, err := c.readHeader(':'); err != nil {
		t.Fatal(err)
	}
	if _, err := c.readHeader(':'); err == nil || err.Error() != "ERR nope" {
		t.Fatalf("error reply read as %v", err)
	}
}

// fakeList answers LRANGE key -k -1 over a list of messages first..last,
// publishing one more message before its first answer when slip is set
// (a message landing between a poller's GET and its LRANGE).
func fakeList(t *testing.T, nc net.Conn, first, last int64, slip bool) {
	srv := &Conn{nc: nc, br: bufio.NewReader(nc)}
	for {
		v, err := srv.readValue()
		if err != nil {
			return
		}
		if len(v.Elems) != 4 || v.Elems[0].Str != "LRANGE" || v.Elems[3].Str != "-1" {
			t.Errorf("unexpected command %v", v)
			return
		}
		k, _ := strconv.ParseInt(strings.TrimPrefix(v.Elems[2].Str, "-"), 10, 64)
		if slip {
			last++
			slip = false
		}
		from := max(first, last-k+1)
		srv.out = appendHeader(srv.out, '*', int(last-from+1))
		for seq := from; seq <= last; seq++ {
			srv.out = appendBulkString(srv.out, string(roomMessage(nil, 1000+seq, seq)))
		}
		if err := srv.Flush(); err != nil {
			return
		}
	}
}

// TestRoomFetch: a poller takes exactly the messages after its last, also
// when one lands between its GET and its LRANGE (it asks again).
func TestRoomFetch(t *testing.T) {
	for _, slip := range []bool{false, true} {
		a, b := net.Pipe()
		go fakeList(t, b, 3, 2010, slip)
		c := &Conn{nc: a, br: bufio.NewReader(a)}
		rd := &roomReader{first: 2001}
		rd.last.Store(2004)
		var cnt roomCounters
		var buf []byte
		var got []roomHeld
		if err := roomFetch(c, rd, &cnt, "room:0:list", 2010, &buf, &got); err != nil {
			t.Fatal(err)
		}
		a.Close()
		wantLast, wantReqs := int64(2010), int64(1)
		if slip {
			wantLast, wantReqs = 2011, 2
		}
		if rd.last.Load() != wantLast || rd.misses != 0 || rd.dups != 0 || cnt.reqs.Load() != wantReqs ||
			int64(len(rd.lat)) != wantLast-2004 {
			t.Fatalf("slip %v: last %d, misses %d, dups %d, requests %d, %d held", slip, rd.last.Load(), rd.misses,
				rd.dups, cnt.reqs.Load(), len(rd.lat))
		}
	}
}

// TestSmokeRoomSuite runs the room suite briefly against a Revolver built
// from this checkout and redis-server when one is in PATH: every row
// measured on both, every message delivered to every reader.
func TestSmokeRoomSuite(t *testing.T) {
	bin := testRevolverBinary(t)
	out := t.TempDir()
	args := []string{"--suite", "room", "--duration", "300ms", "--rounds", "1", "--scale", "0.002",
		"--revolver-bin", bin, "--out", out, "--json"}
	sides := []string{"Revolver"}
	if _, err := exec.LookPath("redis-server"); err == nil {
		args = append(args, "--vs", "redis")
		sides = append(sides, "Redis")
	} else {
		t.Log("no redis-server in PATH: Revolver only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	md, err := readResult(out, "room", ".md")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"| delivery: 1 room × 20 readers, recipe polls every 100ms",
		"| delivery: 10 rooms × 2 readers, recipe polls every 1s", "requests/delivery", "srv CPU µs/delivery"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	b, err := readResult(out, "room", ".json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Rows []*Row }
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Rows) != 4 {
		t.Fatalf("json: %v, %d rows", err, len(rep.Rows))
	}
	for _, row := range rep.Rows {
		for _, name := range sides {
			side := row.Sides[name]
			if side == nil || side.Skip || len(side.Rounds) != 1 {
				t.Errorf("%s was not measured on %s: %+v", row.Name, name, side)
				continue
			}
			r := side.Rounds[0]
			if r["delivered"] != 100 || r["p99"] <= 0 || r["reqs"] <= 0 || strings.Contains(side.Note, "skipped") {
				t.Errorf("%s on %s: %v%% delivered, p99 %v ms, %v requests/delivery (%s)", row.Name, name,
					r["delivered"], r["p99"], r["reqs"], side.Note)
			}
			if name == "Revolver" && r["reqs"] > 1.5 {
				t.Errorf("%s: %v ROOM.PULLs per delivered message", row.Name, r["reqs"])
			}
		}
	}
	if len(sides) == 2 && !strings.Contains(string(md), "Targets, delivery: 1 room") {
		t.Errorf("no targets note:\n%s", md)
	}
}

// A reader's error reply fails the run; a lost connection stays a remark.
func TestRoomReaderReplyErrorFails(t *testing.T) {
	lost := &roomReader{err: io.ErrUnexpectedEOF}
	refused := &roomReader{err: fmt.Errorf("ROOM.PULL: %w", ReplyError("ERR no such room"))}
	if err := readersReplyError([]*roomReader{{}, lost}); err != nil {
		t.Errorf("a lost connection failed the run: %v", err)
	}
	err := readersReplyError([]*roomReader{lost, refused, refused})
	if err == nil || !strings.Contains(err.Error(), "2 readers got an error reply") ||
		!strings.Contains(err.Error(), "ERR no such room") {
		t.Errorf("got %v, want the 2 error replies", err)
	}
}
