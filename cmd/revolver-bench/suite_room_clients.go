package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The room suite's clients: Revolver's long-polling pullers, the Redis
// recipe's pollers, and the publisher that feeds both.

// roomPuller is a Revolver reader: ROOM.PULL ... BLOCK 0 in a loop, with
// the cursors of its last reply.
func roomPuller(c *Conn, rd *roomReader, cnt *roomCounters, ready *sync.WaitGroup) error {
	key := roomKey(rd.room)
	nseq, iseq := "$", "$"
	payload := make([]byte, 0, 128)
	for i := 0; ; i++ {
		c.Append("ROOM.PULL", key, nseq, iseq, "BLOCK", "0")
		if err := c.Flush(); err != nil {
			if i == 0 {
				ready.Done()
			}
			return err
		}
		if i == 0 {
			ready.Done()
		}
		if _, err := c.readHeader('*'); err != nil {
			return err
		}
		var head [5]int
		for j := range head {
			v, err := c.readHeader(':')
			if err != nil {
				return err
			}
			head[j] = v
		}
		rd.gaps += int64(head[2])
		m, err := c.readHeader('*')
		if err != nil {
			return err
		}
		now := time.Now().UnixNano()
		for range m {
			if _, err := c.readHeader('*'); err != nil {
				return err
			}
			if _, _, err := c.readBulk(payload); err != nil { // kind
				return err
			}
			seq, err := c.readHeader(':')
			if err != nil {
				return err
			}
			b, _, err := c.readBulk(payload)
			if err != nil {
				return err
			}
			payload = b
			if _, err := c.readHeader(':'); err != nil { // unix ms
				return err
			}
			sent, pseq, ok := parseRoomMessage(b)
			if !ok || pseq != int64(seq) {
				return fmt.Errorf("message %d carries %q", seq, b)
			}
			rd.take(int64(seq), sent, now)
		}
		cnt.reqs.Add(1)
		nseq, iseq = strconv.Itoa(head[0]), strconv.Itoa(head[1])
	}
}

// roomPoller is a reader of the recipe: every poll (from its phase after
// t0), GET the counter, and LRANGE what is new.
func roomPoller(c *Conn, rd *roomReader, cnt *roomCounters, ready *sync.WaitGroup, startAt <-chan struct{},
	t0 *time.Time, phase, poll time.Duration, done <-chan struct{}) error {
	list, seqKey := roomListKey(rd.room), roomSeqKey(rd.room)
	buf := make([]byte, 0, 128)
	var got []roomHeld
	getS := func() (int64, error) {
		c.Append("GET", seqKey)
		if err := c.Flush(); err != nil {
			return 0, err
		}
		b, ok, err := c.readBulk(buf)
		if err != nil || !ok {
			return 0, err
		}
		cnt.reqs.Add(1)
		buf = b
		return strconv.ParseInt(string(b), 10, 64)
	}
	L, err := getS()
	ready.Done()
	if err != nil {
		return err
	}
	rd.last.Store(L)
	select {
	case <-startAt:
	case <-done:
		return nil
	}
	timer := time.NewTimer(time.Until(t0.Add(phase)))
	defer timer.Stop()
	next := t0.Add(phase)
	for {
		select {
		case <-timer.C:
		case <-done:
			return nil
		}
		S, err := getS()
		if err != nil {
			return err
		}
		if S > rd.last.Load() {
			if err := roomFetch(c, rd, cnt, list, S, &buf, &got); err != nil {
				return err
			}
		}
		next = next.Add(poll)
		if now := time.Now(); next.Before(now) {
			next = next.Add((now.Sub(next)/poll + 1) * poll) // behind: skip the polls missed, keep the phase
		}
		timer.Reset(time.Until(next))
	}
}

// roomHeld is a message a poller read: its sequence number and send time.
type roomHeld struct{ seq, sent int64 }

// roomFetch reads the messages after the poller's last, up to S (the
// counter GET returned), with LRANGE of the list's tail. A message
// published between the GET and the LRANGE shifts the tail past what was
// asked for: then it asks again for a longer tail.
func roomFetch(c *Conn, rd *roomReader, cnt *roomCounters, list string, S int64, buf *[]byte, got *[]roomHeld) error {
	last := rd.last.Load()
	want := min(S-last, roomRing)
	for {
		c.Append("LRANGE", list, strconv.FormatInt(-want, 10), "-1")
		if err := c.Flush(); err != nil {
			return err
		}
		m, err := c.readHeader('*')
		if err != nil {
			return err
		}
		now := time.Now().UnixNano()
		*got = (*got)[:0]
		for range m {
			b, _, err := c.readBulk(*buf)
			if err != nil {
				return err
			}
			*buf = b
			sent, seq, ok := parseRoomMessage(b)
			if !ok {
				return fmt.Errorf("list element %q", b)
			}
			*got = append(*got, roomHeld{seq, sent})
		}
		cnt.reqs.Add(1)
		if len(*got) > 0 && (*got)[0].seq > last+1 && m == int(want) && want < roomRing {
			want = min(want+(*got)[0].seq-last-1, roomRing)
			continue
		}
		for _, h := range *got {
			if h.seq > last {
				rd.take(h.seq, h.sent, now)
			}
		}
		return nil
	}
}

// roomTargets checks issue 24's target on the rows against the 100 ms
// recipe: Revolver's p99 at most a fifth of the recipe's, at fewer
// requests per delivered message.
func roomTargets(res *Result, servers []*Server) []string {
	rev, red := comparedPair(servers)
	if rev == "" || red == "" {
		return nil
	}
	var out []string
	for _, row := range res.Rows {
		if !strings.HasSuffix(row.Name, "every "+roomPolls[0].String()) {
			continue
		}
		pa, ok1 := positiveMedian(row, rev, "p99")
		pb, ok2 := positiveMedian(row, red, "p99")
		qa, ok3 := positiveMedian(row, rev, "reqs")
		qb, ok4 := positiveMedian(row, red, "reqs")
		if ok1 && ok2 && ok3 && ok4 {
			out = append(out, fmt.Sprintf("Targets, %s: p99 %s ms against the recipe's %s ms (%.2fx; ≤ 0.2x: %s); "+
				"%s requests per delivered message against %s (fewer: %s).", row.Name, sig(pa), sig(pb), pa/pb,
				metText(pa <= pb/5), sig(qa), sig(qb), metText(qa < qb)))
		}
	}
	return out
}

// roomPublish sends a room's messages on schedule, message k at
// start+k·interval, without waiting for the replies before the next (a
// reader of the replies runs beside it): a server slow to answer delays
// deliveries, not sends. It returns how late a send was at worst.
func roomPublish(ctx context.Context, c *Conn, r int, native bool, start time.Time, interval time.Duration,
	published int) (late time.Duration, err error) {
	replies := 1 // ROOM.PUB
	if !native {
		replies = 5 // MULTI, QUEUED ×3, EXEC
	}
	readErr := make(chan error, 1)
	go func() {
		for range published * replies {
			rep, err := c.Skip()
			if err == nil && rep.err != "" {
				err = ReplyError(rep.err)
			}
			if err != nil {
				readErr <- fmt.Errorf("publisher: %w", err)
				return
			}
		}
		readErr <- nil
	}()
	buf := make([]byte, 0, 512)
	msg := make([]byte, 0, roomPayload)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for k := range published {
		if wait := time.Until(start.Add(time.Duration(k) * interval)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return late, ctx.Err()
			}
		} else {
			late = max(late, -wait)
		}
		msg = roomMessage(msg[:0], time.Now().UnixNano(), int64(roomRing+1+k))
		buf = buf[:0]
		if native {
			buf = appendHeader(buf, '*', 3)
			buf = appendBulkString(buf, "ROOM.PUB")
			buf = appendBulkString(buf, roomKey(r))
			buf = appendBulkString(buf, string(msg))
		} else {
			buf = appendCommand(buf, "MULTI")
			buf = appendHeader(buf, '*', 3)
			buf = appendBulkString(buf, "RPUSH")
			buf = appendBulkString(buf, roomListKey(r))
			buf = appendBulkString(buf, string(msg))
			buf = appendCommand(buf, "LTRIM", roomListKey(r), strconv.Itoa(-roomRing), "-1")
			buf = appendCommand(buf, "INCR", roomSeqKey(r))
			buf = appendCommand(buf, "EXEC")
		}
		c.AppendRaw(buf)
		if err := c.Flush(); err != nil {
			return late, err
		}
	}
	select {
	case err = <-readErr:
	case <-ctx.Done():
		err = ctx.Err()
	}
	return late, err
}

// roomRateEnv overrides roomRateDefault (messages/s per room): the bench's
// flags are shared by every suite, so this one knob of one suite is an
// environment variable, and the results' notes state the rate used.
const roomRateEnv = "REVOLVER_BENCH_ROOM_RATE"

// roomRate is the publishing rate of the run, messages/s per room.
func roomRate() (int, error) {
	v := os.Getenv(roomRateEnv)
	if v == "" {
		return roomRateDefault, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1000 {
		return 0, fmt.Errorf("%s=%q: want messages/s per room, 1 to 1000", roomRateEnv, v)
	}
	return n, nil
}
