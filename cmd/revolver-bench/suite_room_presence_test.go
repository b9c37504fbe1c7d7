package main

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestRoomPresenceHeartbeats: every user once, 1,000 per command; on Redis
// each batch's ZADD (one score for the batch) then its PFADD.
func TestRoomPresenceHeartbeats(t *testing.T) {
	const n = 2*rpBatch + 7
	want := make([]string, n)
	for i := range want {
		want[i] = strconv.Itoa(rpFirstUID + i)
	}
	cmds, gen := rpHeartbeats(n, true)
	var got []string
	for i := range cmds {
		args := parseCommands(t, gen(nil, i))[0]
		if args[0] != "ROOM.HEARTBEAT" || args[1] != rpKey || len(args)-2 > rpBatch {
			t.Fatalf("command %d: %v ... (%d args)", i, args[:2], len(args))
		}
		got = append(got, args[2:]...)
	}
	if cmds != 3 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%d commands of %d users, want 3 of %d in order", cmds, len(got), n)
	}
	cmds, gen = rpHeartbeats(n, false)
	var zadded, pfadded []string
	for i := range cmds {
		args := parseCommands(t, gen(nil, i))[0]
		switch {
		case i%2 == 0 && args[0] == "ZADD" && args[1] == rpZKey && len(args)%2 == 0:
			for j := 2; j < len(args); j += 2 {
				if args[j] != args[2] {
					t.Fatalf("ZADD %d: scores %s and %s in one batch", i, args[2], args[j])
				}
				zadded = append(zadded, args[j+1])
			}
		case i%2 == 1 && args[0] == "PFADD" && args[1] == rpHLLKey:
			pfadded = append(pfadded, args[2:]...)
		default:
			t.Fatalf("command %d: %v ...", i, args[:2])
		}
	}
	if cmds != 6 || strings.Join(zadded, " ") != strings.Join(want, " ") ||
		strings.Join(pfadded, " ") != strings.Join(want, " ") {
		t.Fatalf("%d commands, ZADD of %d users, PFADD of %d, want 6 commands of all %d", cmds, len(zadded),
			len(pfadded), n)
	}
}

// TestRoomPresencePull: the PULL a puller sends, and the reply it reads.
func TestRoomPresencePull(t *testing.T) {
	first := parseCommands(t, rpPullCommand(nil, 7, -1, -1, -1))[0]
	next := parseCommands(t, rpPullCommand(nil, 7, 12, 3, 1700000000000))[0]
	uid := strconv.Itoa(rpFirstUID + 7)
	if got, want := strings.Join(first, " "), "ROOM.PULL room $ $ UID "+uid+" BLOCK 30000"; got != want {
		t.Errorf("first PULL %q, want %q", got, want)
	}
	if got, want := strings.Join(next, " "), "ROOM.PULL room 12 3 UID "+uid+" BLOCK 30000 EPOCH 1700000000000"; got != want {
		t.Errorf("next PULL %q, want %q", got, want)
	}

	m1, m2 := rpMessage(nil, 111, 1), rpMessage(nil, 222, 2)
	if len(m1) != rpPayload {
		t.Fatalf("payload of %d bytes, want %d", len(m1), rpPayload)
	}
	bulk := func(b []byte) string { return "$" + strconv.Itoa(len(b)) + "\r\n" + string(b) + "\r\n" }
	wire := "*6\r\n:14\r\n:3\r\n:0\r\n:1000\r\n:1700000000000\r\n*2\r\n" +
		"*4\r\n$9\r\nimportant\r\n:3\r\n" + bulk(m1) + ":1700000000001\r\n" +
		"*4\r\n$6\r\nnormal\r\n:14\r\n" + bulk(m2) + ":1700000000002\r\n" +
		"*6\r\n:14\r\n:3\r\n:0\r\n:0\r\n:1700000000000\r\n*0\r\n" +
		"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	c := &Conn{br: bufio.NewReaderSize(bytes.NewReader([]byte(wire)), 80)}
	var buf []byte
	var sent []int64
	r, err := rpReadPull(c, &buf, func(ns int64) { sent = append(sent, ns) })
	if err != nil || r != (rpPullReply{nseq: 14, iseq: 3, epoch: 1700000000000, msgs: 2, first: 3}) ||
		len(sent) != 2 || sent[0] != 111 || sent[1] != 222 {
		t.Fatalf("reply %+v, sent %v, err %v", r, sent, err)
	}
	if r, err := rpReadPull(c, &buf, nil); err != nil || r.msgs != 0 || r.nseq != 14 {
		t.Fatalf("empty reply %+v, err %v", r, err)
	}
	var re ReplyError
	if _, err := rpReadPull(c, &buf, nil); !errors.As(err, &re) {
		t.Fatalf("error reply read as %v", err)
	}
}
