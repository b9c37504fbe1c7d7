package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The room-presence suite's flow-control rows: pullers over many rooms,
// their windows of messages, and the server's held and saved pulls.

// rpMessage appends message seq's payload: its send time in ns, its
// number, padding to rpPayload bytes.
func rpMessage(dst []byte, sentNs int64, seq int) []byte {
	start := len(dst)
	dst = strconv.AppendInt(dst, sentNs, 10)
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, int64(seq), 10)
	dst = append(dst, ':')
	for len(dst)-start < rpPayload {
		dst = append(dst, 'x')
	}
	return dst
}

// rpSentNs reads a payload's send time.
func rpSentNs(b []byte) (int64, bool) {
	var n int64
	for i, ch := range b {
		if ch == ':' {
			return n, i > 0
		}
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = n*10 + int64(ch-'0')
	}
	return 0, false
}

// rpReadBulk reads a bulk string into *buf and returns it.
func rpReadBulk(c *Conn, buf *[]byte) ([]byte, error) {
	n, err := c.readHeader('$')
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, errors.New("protocol error: nil bulk in a ROOM.PULL reply")
	}
	if cap(*buf) < n+2 {
		*buf = make([]byte, n+2)
	}
	b := (*buf)[:n+2]
	if _, err := io.ReadFull(c.br, b); err != nil {
		return nil, err
	}
	return b[:n], nil
}

// rpPullReply is what a puller keeps of a ROOM.PULL reply.
type rpPullReply struct {
	nseq, iseq, epoch int
	gap               int // normal messages the reader missed (they left the ring)
	msgs              int
	first             int // the first message's sequence number
}

// rpReadPull reads one ROOM.PULL reply, [nseq, iseq, gap, retry-after,
// epoch, [[kind, seq, payload, at], ...]], calling sent with each
// message's send time.
func rpReadPull(c *Conn, buf *[]byte, sent func(ns int64)) (rpPullReply, error) {
	var r rpPullReply
	n, err := c.readHeader('*')
	if err != nil {
		return r, err
	}
	if n != 6 {
		return r, fmt.Errorf("ROOM.PULL replied an array of %d, want 6", n)
	}
	var head [5]int
	for i := range head {
		if head[i], err = c.readHeader(':'); err != nil {
			return r, err
		}
	}
	r.nseq, r.iseq, r.gap, r.epoch = head[0], head[1], head[2], head[4]
	if r.msgs, err = c.readHeader('*'); err != nil {
		return r, err
	}
	for i := range r.msgs {
		if n, err := c.readHeader('*'); err != nil || n != 4 {
			return r, rpErrOr(err, fmt.Errorf("ROOM.PULL message of %d fields, want 4", n))
		}
		if _, err := rpReadBulk(c, buf); err != nil {
			return r, err
		}
		seq, err := c.readHeader(':')
		if err != nil {
			return r, err
		}
		if i == 0 {
			r.first = seq
		}
		p, err := rpReadBulk(c, buf)
		if err != nil {
			return r, err
		}
		if ns, ok := rpSentNs(p); ok {
			sent(ns)
		}
		if _, err := c.readHeader(':'); err != nil {
			return r, err
		}
	}
	return r, nil
}

func rpErrOr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// rpWindow is the measured window: the pullers count requests and
// replies while measuring is set, and the latency of each message sent
// between from and to (unix ns), until they are stopped.
type rpWindow struct {
	measuring, stop atomic.Bool
	from, to        atomic.Int64
}

func (w *rpWindow) inWindow(sentNs int64) bool {
	return sentNs >= w.from.Load() && sentNs < w.to.Load()
}

// rpPuller is one long-poller's loop state and its tally.
type rpPuller struct {
	uid                            int
	pulls, replies, full, messages int64   // in the measured window
	lat                            []int64 // ns from send to receipt of each message sent in the window
	skipped, gaps                  int64   // in the window: messages a reply did not start with, gaps reported
	err                            error
}

// run long-polls until w.stop is set (its connection is then closed under
// it).
func (p *rpPuller) run(c *Conn, w *rpWindow) {
	var cmd, buf []byte
	nseq, iseq, epoch := -1, -1, -1 // -1: "$", and no EPOCH
	for !w.stop.Load() {
		cmd = rpPullCommand(cmd[:0], p.uid, nseq, iseq, epoch)
		c.AppendRaw(cmd)
		if err := c.Flush(); err != nil {
			p.fail(err, w)
			return
		}
		if w.measuring.Load() {
			p.pulls++
		}
		r, err := rpReadPull(c, &buf, func(ns int64) {
			if w.inWindow(ns) {
				p.lat = append(p.lat, time.Now().UnixNano()-ns)
			}
		})
		if err != nil {
			p.fail(err, w)
			return
		}
		if w.measuring.Load() {
			p.replies++
			if r.msgs > 0 {
				p.full++
				p.messages += int64(r.msgs)
			}
		}
		// Every message once, in order: a reply starts after the cursor
		// sent (only normal messages are published).
		if w.measuring.Load() {
			if nseq >= 0 && r.msgs > 0 && r.first != nseq+1 {
				p.skipped += int64(r.first - nseq - 1)
			}
			p.gaps += int64(r.gap)
		}
		nseq, iseq, epoch = r.nseq, r.iseq, r.epoch
	}
}

func (p *rpPuller) fail(err error, w *rpWindow) {
	if !w.stop.Load() {
		p.err = err
	}
}

// rpPullCommand appends ROOM.PULL key nseq iseq UID uid BLOCK ms [EPOCH
// e]; a cursor of -1 is "$" and an epoch of -1 leaves EPOCH out.
func rpPullCommand(dst []byte, uid, nseq, iseq, epoch int) []byte {
	args := 8
	if epoch >= 0 {
		args += 2
	}
	dst = appendHeader(dst, '*', args)
	dst = appendBulkString(dst, "ROOM.PULL")
	dst = appendBulkString(dst, rpKey)
	for _, cur := range []int{nseq, iseq} {
		if cur < 0 {
			dst = appendBulkString(dst, "$")
		} else {
			dst = appendBulkInt(dst, int64(cur))
		}
	}
	dst = appendBulkString(dst, "UID")
	dst = rpUID(dst, uid)
	dst = appendBulkString(dst, "BLOCK")
	dst = appendBulkInt(dst, rpBlock)
	if epoch >= 0 {
		dst = appendBulkString(dst, "EPOCH")
		dst = appendBulkInt(dst, int64(epoch))
	}
	return dst
}

// rpRoomInfo reads ROOM.INFO's integer fields.
func rpRoomInfo(addr string) (map[string]int64, error) {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	v, err := c.DoTimeout(10*time.Second, "ROOM.INFO", rpKey)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for i := 0; i+1 < len(v.Elems); i += 2 {
		out[v.Elems[i].Str] = v.Elems[i+1].Int
	}
	return out, nil
}

// rpInfoRoom reads INFO room's counters.
func rpInfoRoom(addr string) (held, saved int64, err error) {
	info, err := do(addr, "INFO", "room")
	if err != nil {
		return 0, 0, err
	}
	held, _ = strconv.ParseInt(infoField(info, "room_pulls_held"), 10, 64)
	saved, _ = strconv.ParseInt(infoField(info, "room_replies_saved"), 10, 64)
	return held, saved, nil
}

// rpFlow runs one flow-control measurement on s: the room with sz.online
// users online, its tier (or none), sz.pullers long-pollers and the
// publisher.
func rpFlow(ctx context.Context, env *Env, s *Server, sz rpSizes, tiers bool, label string) (
	map[string]float64, string, error) {
	env.Prog.Status(label + ": setup")
	if err := env.Flush(s); err != nil {
		return nil, "", err
	}
	if err := roomMaxClients(s.Addr, sz.pullers+64); err != nil {
		return nil, "", fmt.Errorf("maxclients: %w", err)
	}
	tier := []string{"ROOM.CONFIG", rpKey, "TIERS", "NONE"}
	if tiers {
		tier = []string{"ROOM.CONFIG", rpKey, "TIERS", strconv.Itoa(sz.tierLimit), strconv.Itoa(rpTierInterval)}
	}
	if _, err := do(s.Addr, tier...); err != nil {
		return nil, "", err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// The gateway: every user heartbeats now and every rpKeepAlive.
	hbCmds, hbGen := rpHeartbeats(sz.online, true)
	if err := fill(runCtx, s.Addr, hbCmds, 2, hbGen); err != nil {
		return nil, "", fmt.Errorf("heartbeats: %w", err)
	}
	var hbErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(rpKeepAlive)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
			}
			if err := fill(runCtx, s.Addr, hbCmds, 1, hbGen); err != nil && runCtx.Err() == nil {
				hbErr = err
				return
			}
		}
	}()
	conns, err := roomDialAll(runCtx, s.Addr, sz.pullers)
	if err != nil {
		return nil, "", err
	}
	var w rpWindow
	w.from.Store(1<<63 - 1) // nothing is in the window until it opens
	w.to.Store(1<<63 - 1)
	pullers := make([]*rpPuller, len(conns))
	var pwg sync.WaitGroup
	for i, c := range conns {
		pullers[i] = &rpPuller{uid: i}
		pwg.Add(1)
		go func() { defer pwg.Done(); pullers[i].run(c, &w) }()
	}
	closeAll := func() {
		w.stop.Store(true)
		for _, c := range conns {
			c.Close()
		}
		pwg.Wait()
	}
	defer func() {
		if !w.stop.Load() {
			closeAll()
		}
	}()
	// Every puller's first PULL is parked before the publisher starts.
	deadline := time.Now().Add(time.Minute)
	for {
		info, err := rpRoomInfo(s.Addr)
		if err != nil {
			return nil, "", err
		}
		if info["pullers"] >= int64(sz.pullers) {
			break
		}
		if time.Now().After(deadline) || runCtx.Err() != nil {
			return nil, "", fmt.Errorf("%d of %d pullers waiting after a minute", info["pullers"], sz.pullers)
		}
		time.Sleep(20 * time.Millisecond)
	}
	online, err := do(s.Addr, "ROOM.ONLINE", rpKey)
	if err != nil {
		return nil, "", err
	}
	pub, err := Dial(s.Addr, 5*time.Second)
	if err != nil {
		return nil, "", err
	}
	defer pub.Close()
	// The publisher sends at its pace whatever the server's: its replies
	// are read apart.
	var published atomic.Int64 // messages sent in the window
	var pubErr error
	pubDone := make(chan struct{})
	pubReplies := make(chan error, 1)
	defer func() { cancel(); <-pubDone }()
	go func() {
		for {
			r, err := pub.Skip()
			if err == nil && r.err != "" {
				err = ReplyError(r.err)
			}
			if err != nil {
				pubReplies <- err
				return
			}
		}
	}()
	go func() {
		defer close(pubDone)
		interval := time.Second / rpRate
		next := time.Now()
		var msg []byte
		for seq := 1; runCtx.Err() == nil; seq++ {
			if wait := time.Until(next); wait > 0 {
				select {
				case <-time.After(wait):
				case <-runCtx.Done():
					return
				}
			}
			next = next.Add(interval)
			sent := time.Now().UnixNano()
			msg = rpMessage(msg[:0], sent, seq)
			pub.Append("ROOM.PUB", rpKey, string(msg))
			if err := pub.Flush(); err != nil {
				if runCtx.Err() == nil {
					pubErr = err
				}
				return
			}
			if w.inWindow(sent) {
				published.Add(1)
			}
		}
	}()
	drain := 2 * rpTierInterval * time.Millisecond
	env.Prog.Timed(label, rpWarmUp+env.Opts.Duration+drain)
	sleep := func(d time.Duration) {
		select {
		case <-time.After(d):
		case <-runCtx.Done():
		}
	}
	sleep(rpWarmUp)
	held0, saved0, err := rpInfoRoom(s.Addr)
	if err != nil {
		return nil, "", err
	}
	before, _ := readProcStats(s.PID())
	cpu0 := selfCPU()
	t0 := time.Now()
	w.from.Store(t0.UnixNano())
	w.measuring.Store(true)
	sleep(env.Opts.Duration)
	w.measuring.Store(false)
	t1 := time.Now()
	w.to.Store(t1.UnixNano())
	elapsed := t1.Sub(t0)
	after, _ := readProcStats(s.PID())
	cli := selfCPU() - cpu0
	held1, saved1, err := rpInfoRoom(s.Addr)
	if err != nil {
		return nil, "", err
	}
	// The messages sent in the window reach the pullers within a hold.
	sleep(drain)
	cancel()
	<-pubDone
	select {
	case err := <-pubReplies:
		pubErr = rpErrOr(pubErr, err)
	default:
	}
	closeAll()
	wg.Wait()
	env.Prog.Clear()
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	for _, e := range []error{pubErr, hbErr} {
		if e != nil {
			return nil, "", e
		}
	}
	var pulls, replies, full, messages, skipped, gaps int64
	var lat []int64
	for _, p := range pullers {
		skipped += p.skipped
		gaps += p.gaps
		if p.err != nil {
			return nil, "", fmt.Errorf("puller %d: %w", p.uid, p.err)
		}
		pulls += p.pulls
		replies += p.replies
		full += p.full
		messages += p.messages
		lat = append(lat, p.lat...)
	}
	if len(lat) == 0 {
		return nil, "", fmt.Errorf("no message sent in the %v window reached a puller", elapsed)
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[min(int(p*float64(len(lat))), len(lat)-1)]) / 1e6 }
	sec := elapsed.Seconds()
	srv := (after.CPU - before.CPU).Seconds()
	want := float64(published.Load()) * float64(sz.pullers)
	sample := map[string]float64{
		"pulls": float64(pulls) / sec, "replies": float64(replies) / sec,
		"mpr":       float64(messages) / max(float64(full), 1),
		"delivered": float64(messages) / sec,
		"reached":   100 * float64(len(lat)) / max(want, 1),
		"skipped":   100 * float64(skipped) / max(float64(messages+skipped), 1),
		"held":      float64(held1-held0) / sec, "saved": float64(saved1-saved0) / sec,
		"p50": q(0.50), "p99": q(0.99), "max": float64(lat[len(lat)-1]) / 1e6,
		"srvcpu": 100 * srv / sec, "cpumsg": 1e6 * srv / max(float64(messages), 1),
		"clicpu": 100 * cli.Seconds() / sec,
		"empty":  float64(replies-full) / sec, "published": float64(published.Load()) / sec,
	}
	var notes []string
	if n, _ := strconv.Atoi(online); tiers && n <= sz.tierLimit {
		notes = append(notes, fmt.Sprintf("only %d online: the tier did not apply", n))
	}
	if replies > full {
		notes = append(notes, "some replies were empty (BLOCK timeouts)")
	}
	if gaps > 0 {
		notes = append(notes, "the server reported gaps (messages that left the ring before a puller read them)")
	}
	if skipped > 0 {
		notes = append(notes, "replies left out messages after the cursor sent without reporting a gap (the "+
			"skipped column): a held PULL's reply leaves out what had arrived before the PULL did (commands/room.go "+
			"waits from the cursors its first read advanced)")
	}
	if float64(len(lat)) < want {
		notes = append(notes, fmt.Sprintf("not every message sent in the window reached every puller within %v "+
			"after it (the reached column)", drain))
	}
	return sample, strings.Join(notes, "; "), nil
}
