package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// roomSuite measures seed 002's live chat room (issue 24): messages
// published to a room reaching every reader in it.
//
//   - "delivery:" N readers in one room (and N/10 in each of 10 rooms), a
//     publisher sending roomRateDefault messages/s to each room. Revolver's
//     readers long-poll with ROOM.PULL ... BLOCK 0 (one PUB answers every
//     puller of the room); Redis runs the recipe ROOM replaces, a list the publisher
//     RPUSHes and LTRIMs, read by pollers every 100 ms or every 1 s.
//     Latency from send to each reader holding the message, deliveries/s,
//     reader requests per delivered message, server CPU per delivered
//     message.
//
// The presence and flow-control rows are the room-presence suite's.
type roomSuite struct{}

func init() { register(roomSuite{}) }

func (roomSuite) Name() string { return "room" }
func (roomSuite) About() string {
	return "chat rooms: seed 002's RPUSH+LTRIM list polled with LRANGE every 100 ms / 1 s vs ROOM.PUB + long-polling " +
		"ROOM.PULL, 10k readers in 1 room and 1k in each of 10: send-to-reader latency, deliveries/s, requests and " +
		"server CPU per delivered message"
}
func (roomSuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: o.Fsync}
}

const (
	roomReaders     = 10_000 // readers of each delivery row, before --scale
	roomManyRooms   = 10     // rooms of the second shape
	roomRateDefault = 10     // messages/s published to each room
	roomRing        = 2000   // messages a room keeps: room-max-messages's default, the recipe's LTRIM
	roomPayload     = 64     // bytes per message payload
	roomPrefix      = "delivery: "
	roomDrain       = 5 * time.Second // readers may take this, --duration and a poll interval after the last message
	roomDialers     = 8               // goroutines opening the readers' connections
)

// roomPolls are the recipe's poll intervals: one row each.
var roomPolls = []time.Duration{100 * time.Millisecond, time.Second}

// roomShape is how the readers are spread over rooms.
type roomShape struct{ rooms, perRoom int }

func (sh roomShape) readers() int { return sh.rooms * sh.perRoom }

func (sh roomShape) String() string {
	rooms, readers := "1 room", "readers"
	if sh.rooms > 1 {
		rooms = fmt.Sprintf("%d rooms", sh.rooms)
	}
	if sh.perRoom == 1 {
		readers = "reader"
	}
	return fmt.Sprintf("%s × %s %s", rooms, humanCount(sh.perRoom), readers)
}

func roomRowName(sh roomShape, poll time.Duration) string {
	return fmt.Sprintf("%s%s, recipe polls every %v", roomPrefix, sh, poll)
}

var roomViews = []View{
	{Title: "Delivery latency — ms from sending a message to each reader holding it (every reader × message)",
		RowPrefix: roomPrefix, Metrics: []Metric{
			{Key: "p50", Label: "p50", Unit: "ms", Spread: true},
			{Key: "p99", Label: "p99", Unit: "ms", Ratio: true},
			{Key: "p999", Label: "p99.9", Unit: "ms"},
			{Key: "max", Label: "max", Unit: "ms"},
		}},
	{Title: "Deliveries (reader × message) per second, reader requests and server CPU per delivered message",
		RowPrefix: roomPrefix, Metrics: []Metric{
			{Key: "rate", Label: "deliveries/s", Unit: "/s", Spread: true},
			{Key: "reqs", Label: "requests/delivery", Unit: "req", Ratio: true},
			{Key: "cpu", Label: "srv CPU µs/delivery", Unit: "µs", Ratio: true},
			{Key: "cpupct", Label: "srv CPU", Unit: "%"},
		}},
	{Title: "Share of deliveries made, client CPU per delivery, server RSS after the run", RowPrefix: roomPrefix,
		Metrics: []Metric{
			{Key: "delivered", Label: "delivered", Unit: "%"},
			{Key: "clicpu", Label: "client CPU µs/delivery", Unit: "µs"},
			{Key: "rss", Label: "RSS", Unit: "MB"},
		}},
}

func (roomSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: roomViews}
	n := env.Scaled(roomReaders)
	shapes := []roomShape{{1, n}, {roomManyRooms, max(1, n/roomManyRooms)}}
	rate, err := roomRate()
	if err != nil {
		return nil, err
	}
	published := max(1, int(float64(rate)*env.Opts.Duration.Seconds()+0.5))
	if err := needOpenFiles(n + roomManyRooms + 64); err != nil {
		return nil, err
	}
	res.Notes = append(res.Notes,
		fmt.Sprintf("Delivery rows: before each run the server is flushed and each room filled with %d messages of "+
			"%d bytes (the ring full, as in a room that has been live a while: every message now published evicts "+
			"the oldest, on both sides). Then each reader opens its own connection and starts from the room's end; "+
			"once all are waiting, one publisher per room (its own connection, rooms staggered evenly) sends %d "+
			"messages/s to its room for --duration (%d messages per room), each payload starting with its send time "+
			"in ns and its sequence number. Latency = the time the reader's reply was read minus the send time, for "+
			"every reader and every message published; quantiles are over all of them (%d × readers per run). "+
			"The run lasts from the first message sent until every reader holds the last one (at most %v plus "+
			"--duration plus a poll interval after it); deliveries/s (reader × message pairs held ÷ the run's "+
			"length), requests/delivery (the readers' requests answered during the run ÷ pairs held: each "+
			"reader's first PULL counts and its last, left waiting, does not, as in a room that goes on), server "+
			"CPU (utime+stime) and the bench's own CPU are counted over it. \"delivered\" is the share of reader × "+
			"message pairs that arrived, in order and once. The publisher does not wait for a reply before its "+
			"next message (a reader of its replies runs beside it), so a slow server delays deliveries, not sends. "+
			"(The default rate is %d messages/s per room; the environment variable %s sets another.)",
			roomRing, roomPayload, rate, published, published, roomDrain, roomRateDefault, roomRateEnv),
		"Revolver: publisher `ROOM.PUB room:<r> <payload>`; each reader loops `ROOM.PULL room:<r> <nseq> <iseq> "+
			"BLOCK 0` with the cursors of its last reply (`$ $` at first), so a reply is one request and one PUB "+
			"answers every puller of the room. The same Revolver runs fill both rows of a shape (it has no poll "+
			"interval).",
		fmt.Sprintf("Redis, the recipe: publisher `MULTI`, `RPUSH room:<r>:list <payload>`, `LTRIM room:<r>:list "+
			"-%d -1`, `INCR room:<r>:seq`, `EXEC` in one write (the counter gives absolute positions in a list whose "+
			"head is trimmed; MULTI keeps it equal to the list's last). Each poller remembers L, the last sequence "+
			"number it holds (the counter at its start), and every 100 ms or 1 s (its own random phase) sends `GET "+
			"room:<r>:seq`; when the counter S is past L it sends `LRANGE room:<r>:list -(S-L) -1` and takes the "+
			"messages after L (should a message land between the two, the first one held is past L+1 and it asks "+
			"again for the missing ones). A poll is thus one request when nothing is new and two when something "+
			"is; the index of a trimmed list cannot be found from the poller's own state in one request without "+
			"Lua.", roomRing),
		"Both servers (when the bench started them) are given `CONFIG SET maxclients` above the readers' count when theirs is lower (10000 by "+
			"default on both). Readers, publishers and the measuring all run in the bench process: one goroutine "+
			"per reader, the same client code for both servers; its scheduling delays count in both sides' latency.",
		fmt.Sprintf("Issue 24's target: with the readers in one room (and spread over %d), Revolver's p99 ≤ 1/5 of "+
			"the 100 ms recipe's, at fewer requests per delivered message.", roomManyRooms))

	native := map[string]bool{}
	for _, s := range env.Servers {
		if !s.Owned {
			continue // not ours to reconfigure: its maxclients must allow the readers
		}
		if err := roomMaxClients(s.Addr, n+roomManyRooms+64); err != nil {
			return nil, fmt.Errorf("raising maxclients on %s: %w", s.Name, err)
		}
	}
	for _, s := range env.Servers {
		if s.Kind == kindRevolver {
			ok, err := hasCommand(s.Addr, "room.pull")
			if err != nil {
				return nil, err
			}
			native[s.Name] = ok
		}
	}
	for _, sh := range shapes {
		rows := map[time.Duration]*Row{}
		for _, poll := range roomPolls {
			rows[poll] = res.NewRow(roomRowName(sh, poll))
		}
		for _, s := range env.Servers {
			for i, poll := range roomPolls {
				row := rows[poll]
				switch {
				case s.Kind == kindRevolver && !native[s.Name]:
					row.Skip(s.Name, fmt.Sprintf("skipped: %s has no ROOM.PULL at this commit", s.Name))
				case s.Kind == kindRevolver:
					row.SetRan(s.Name, "ROOM.PUB + ROOM.PULL BLOCK 0 long polling")
					if i > 0 {
						row.Note(s.Name, "the same runs as the "+roomPolls[0].String()+" row")
					}
				default:
					row.SetRan(s.Name, "MULTI RPUSH+LTRIM+INCR / GET + LRANGE polling every "+poll.String())
				}
			}
		}
		for round := 1; round <= env.Opts.Rounds; round++ {
			for _, s := range env.Servers {
				polls := roomPolls
				if s.Kind == kindRevolver {
					if !native[s.Name] {
						continue
					}
					polls = []time.Duration{0}
				}
				for _, poll := range polls {
					label := fmt.Sprintf("room: %s on %s, round %d/%d", sh, s.Name, round, env.Opts.Rounds)
					if poll > 0 {
						label = fmt.Sprintf("room: %s polling every %v on %s, round %d/%d", sh, poll, s.Name, round,
							env.Opts.Rounds)
					}
					r, err := roomRun(ctx, env, s, sh, poll, rate, published, round, label)
					if err != nil {
						return res, fmt.Errorf("%s: %w", label, err)
					}
					targets := []*Row{rows[poll]}
					if poll == 0 {
						targets = nil
						for _, p := range roomPolls {
							targets = append(targets, rows[p])
						}
					}
					for _, row := range targets {
						row.Add(s.Name, r.sample())
						if note := r.note(); note != "" {
							row.Note(s.Name, fmt.Sprintf("round %d: %s", round, note))
						}
					}
				}
			}
		}
	}
	res.Notes = append(res.Notes, roomTargets(res, env.Servers)...)
	return res, nil
}

// needOpenFiles checks that the bench may open want descriptors, raising
// its soft limit toward the hard one if needed.
func needOpenFiles(want int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // not knowable here; dialing will say
	}
	if raiseLimit(&lim.Cur, lim.Max, want) {
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	if uint64(lim.Cur) < uint64(want) {
		return fmt.Errorf("the suite needs %d open files and the limit is %d (ulimit -n); raise it or use "+
			"--scale", want, lim.Cur)
	}
	return nil
}

// raiseLimit raises a soft limit toward want, within max; the fields are
// uint64 on Linux and macOS, int64 on FreeBSD.
func raiseLimit[T int64 | uint64](cur *T, max T, want int) bool {
	if *cur >= T(want) || max <= *cur {
		return false
	}
	*cur = min(max, T(want))
	return true
}

// roomMaxClients raises a server's maxclients to at least want.
func roomMaxClients(addr string, want int) error {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.DoTimeout(10*time.Second, "CONFIG", "GET", "maxclients")
	if err != nil {
		return err
	}
	if len(v.Elems) == 2 {
		if have, err := strconv.Atoi(v.Elems[1].Str); err == nil && have >= want {
			return nil
		}
	}
	_, err = c.DoTimeout(10*time.Second, "CONFIG", "SET", "maxclients", strconv.Itoa(want))
	return err
}

// roomKeys are one room's keys: the ROOM key, the recipe's list and its
// counter.
func roomKey(r int) string     { return "room:" + strconv.Itoa(r) }
func roomListKey(r int) string { return roomKey(r) + ":list" }
func roomSeqKey(r int) string  { return roomKey(r) + ":seq" }

// roomMessage is the payload of message seq: its send time in ns, its
// sequence number, padding to roomPayload bytes.
func roomMessage(dst []byte, sentNs int64, seq int64) []byte {
	start := len(dst)
	dst = strconv.AppendInt(dst, sentNs, 10)
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, ':')
	for len(dst)-start < roomPayload {
		dst = append(dst, 'x')
	}
	return dst
}

// parseRoomMessage reads a payload's send time and sequence number.
func parseRoomMessage(b []byte) (sentNs, seq int64, ok bool) {
	t, rest, ok1 := strings.Cut(string(b), ":")
	s, _, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	sentNs, err1 := strconv.ParseInt(t, 10, 64)
	seq, err2 := strconv.ParseInt(s, 10, 64)
	return sentNs, seq, err1 == nil && err2 == nil
}

// roomFill gives every room roomRing messages before a run: ROOM.PUB on
// Revolver, the recipe's list and counter on Redis.
func roomFill(ctx context.Context, addr string, rooms int, native bool) error {
	if native {
		return fill(ctx, addr, rooms*roomRing, 1, func(dst []byte, i int) []byte {
			dst = appendHeader(dst, '*', 3)
			dst = appendBulkString(dst, "ROOM.PUB")
			dst = appendBulkString(dst, roomKey(i/roomRing))
			msg := roomMessage(nil, 0, int64(i%roomRing+1))
			dst = appendHeader(dst, '$', len(msg))
			dst = append(dst, msg...)
			return append(dst, '\r', '\n')
		})
	}
	const per = 500
	batches := roomRing / per
	return fill(ctx, addr, rooms*(batches+1), 1, func(dst []byte, i int) []byte {
		r, b := i/(batches+1), i%(batches+1)
		if b == batches {
			return appendCommand(dst, "SET", roomSeqKey(r), strconv.Itoa(roomRing))
		}
		dst = appendHeader(dst, '*', 2+per)
		dst = appendBulkString(dst, "RPUSH")
		dst = appendBulkString(dst, roomListKey(r))
		for j := b * per; j < (b+1)*per; j++ {
			msg := roomMessage(nil, 0, int64(j+1))
			dst = appendHeader(dst, '$', len(msg))
			dst = append(dst, msg...)
			dst = append(dst, '\r', '\n')
		}
		return dst
	})
}

// roomDial opens a reader's connection: the bench's Conn with small
// buffers (ten thousand of them are open at once; a reply here is a few
// hundred bytes, and longer ones are read through the buffer).
func roomDial(addr string) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &Conn{nc: nc, br: bufio.NewReaderSize(nc, 4096), out: make([]byte, 0, 256)}, nil
}

// roomDialAll opens n connections with a few dialers in parallel.
func roomDialAll(ctx context.Context, addr string, n int) ([]*Conn, error) {
	conns := make([]*Conn, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range roomDialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				c, err := roomDial(addr)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("connection %d of %d: %w", i+1, n, err)
					}
					mu.Unlock()
					return
				}
				conns[i] = c
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	if first != nil {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		return nil, first
	}
	return conns, nil
}

// Lean reply reading for the readers' loops: what the replies carry is
// read straight from the connection's buffer.

// readHeader reads a reply line of the given type (':' integer, '*' array
// length, '$' bulk length) and returns its number; an error reply is a
// ReplyError.
func (c *Conn) readHeader(kind byte) (int, error) {
	ln, err := c.line()
	if err != nil {
		return 0, err
	}
	if ln[0] == '-' {
		return 0, ReplyError(ln[1:])
	}
	if ln[0] != kind {
		return 0, fmt.Errorf("protocol error: got %q, want a %q reply", ln, kind)
	}
	return atoi(ln[1:])
}

// readBulk reads a bulk string into dst[:0] (nil and ok=false for a nil
// bulk).
func (c *Conn) readBulk(dst []byte) ([]byte, bool, error) {
	n, err := c.readHeader('$')
	if err != nil || n < 0 {
		return nil, false, err
	}
	dst = append(dst[:0], make([]byte, n+2)...)
	if _, err := io.ReadFull(c.br, dst); err != nil {
		return nil, false, err
	}
	return dst[:n], true, nil
}

// roomReader is one reader's state and tally.
type roomReader struct {
	room   int
	last   atomic.Int64 // the sequence number of the last message held in order
	lat    []int64      // ns from send to holding, per message of the run
	misses int64        // messages skipped (a gap), never held
	dups   int64        // messages held again or out of order
	gaps   int64        // Revolver's reply gap field, summed
	first  int64        // the first sequence number of the run (the one after the start cursor)
	err    error
	failed atomic.Bool // err is set: the reader stopped
}

// roomCounters are the run's totals.
type roomCounters struct {
	reqs atomic.Int64 // readers' requests answered
}

// take records a received message seq sent at sentNs, held at now.
func (rd *roomReader) take(seq, sentNs, now int64) {
	last := rd.last.Load()
	if seq <= last {
		rd.dups++
		return
	}
	rd.misses += seq - last - 1
	rd.last.Store(seq)
	if seq >= rd.first {
		rd.lat = append(rd.lat, now-sentNs)
	}
}

// roomResult is one run.
type roomResult struct {
	readers         int
	published       int           // messages per room
	span            time.Duration // first message sent to last one held by every reader
	reqs            int64         // readers' requests answered during the run
	held            int64         // reader × message pairs held, in order
	misses, dups    int64
	gaps            int64
	hist            *Histogram
	srvCPU, cliCPU  time.Duration // over span
	rss             int64
	pubLate         time.Duration // how far behind its schedule a send was at worst
	undrained       int           // readers that had not got every message at the drain's end
	firstErr        error
	readersWithErrs int
}

func (r *roomResult) sample() map[string]float64 {
	d := float64(max(r.held, 1))
	s := map[string]float64{
		"rate":      float64(r.held) / r.span.Seconds(),
		"reqs":      float64(r.reqs) / d,
		"delivered": 100 * float64(r.held) / float64(max(1, r.readers*r.published)),
		"clicpu":    float64(r.cliCPU.Microseconds()) / d,
		"rss":       float64(r.rss),
	}
	if r.hist.Count() > 0 {
		s["p50"], s["p99"], s["p999"], s["max"] = ms(r.hist.Quantile(0.5)), ms(r.hist.Quantile(0.99)),
			ms(r.hist.Quantile(0.999)), ms(r.hist.Max())
	}
	if r.srvCPU > 0 {
		s["cpu"] = float64(r.srvCPU.Microseconds()) / d
		s["cpupct"] = 100 * r.srvCPU.Seconds() / r.span.Seconds()
	}
	return s
}

func (r *roomResult) note() string {
	var out []string
	if r.misses > 0 || r.dups > 0 {
		out = append(out, fmt.Sprintf("%d messages skipped, %d held twice or out of order", r.misses, r.dups))
	}
	if r.gaps > 0 {
		out = append(out, fmt.Sprintf("ROOM.PULL reported a gap of %d messages in all", r.gaps))
	}
	if r.undrained > 0 {
		out = append(out, fmt.Sprintf("%d readers still lacked messages when the run's bound passed (latency "+
			"quantiles are over the deliveries made)", r.undrained))
	}
	if r.pubLate > 50*time.Millisecond {
		out = append(out, fmt.Sprintf("a message left up to %v after its scheduled time (the bench's goroutine ran "+
			"late; latency counts from the actual send)", r.pubLate.Round(time.Millisecond)))
	}
	if r.readersWithErrs > 0 {
		out = append(out, fmt.Sprintf("%d readers stopped on an error (first: %v)", r.readersWithErrs, r.firstErr))
	}
	return strings.Join(out, "; ")
}

// roomRun measures one delivery run on s: Revolver's long polling when poll
// is 0, the recipe polling every poll otherwise.
func roomRun(ctx context.Context, env *Env, s *Server, sh roomShape, poll time.Duration, rate, published, round int,
	label string) (*roomResult, error) {
	native := poll == 0
	env.Prog.Status(label + ": filling the rooms")
	if err := env.Flush(s); err != nil {
		return nil, err
	}
	if err := roomFill(ctx, s.Addr, sh.rooms, native); err != nil {
		return nil, fmt.Errorf("filling the rooms: %w", err)
	}
	n := sh.readers()
	env.Prog.Status(fmt.Sprintf("%s: opening %d connections", label, n))
	conns, err := roomDialAll(ctx, s.Addr, n)
	if err != nil {
		return nil, err
	}
	var (
		stop     atomic.Bool
		done     = make(chan struct{})
		wg       sync.WaitGroup
		finished bool
	)
	// shutdown stops the readers: closing their connections ends their
	// reads, done their waits.
	shutdown := func() {
		if !finished {
			finished = true
			stop.Store(true)
			close(done)
			for _, c := range conns {
				c.Close()
			}
			wg.Wait()
		}
	}
	defer shutdown()
	pubs := make([]*Conn, sh.rooms)
	for r := range pubs {
		if pubs[r], err = Dial(s.Addr, 5*time.Second); err != nil {
			return nil, err
		}
		defer pubs[r].Close()
	}

	var (
		cnt     roomCounters
		ready   sync.WaitGroup
		readers = make([]*roomReader, n)
		first   = int64(roomRing + 1) // the first message of the run in every room
	)
	for i := range readers {
		readers[i] = &roomReader{room: i / sh.perRoom, first: first, lat: make([]int64, 0, published)}
		readers[i].last.Store(roomRing)
	}
	var t0 time.Time
	startAt := make(chan struct{})
	env.Prog.Status(fmt.Sprintf("%s: %d readers starting", label, n))
	for i, c := range conns {
		wg.Add(1)
		ready.Add(1)
		rd := readers[i]
		var loop func() error
		if native {
			loop = func() error { return roomPuller(c, rd, &cnt, &ready) }
		} else {
			rng := rand.New(rand.NewPCG(uint64(round), uint64(i)))
			phase := time.Duration(rng.Int64N(int64(poll)))
			loop = func() error {
				return roomPoller(c, rd, &cnt, &ready, startAt, &t0, phase, poll, done)
			}
		}
		go func() {
			defer wg.Done()
			if err := loop(); err != nil && !stop.Load() {
				rd.err = err
				rd.failed.Store(true)
			}
		}()
	}
	// Every reader waiting before the first message.
	readyCh := make(chan struct{})
	go func() { ready.Wait(); close(readyCh) }()
	select {
	case <-readyCh:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Minute):
		return nil, errors.New("the readers did not all start within a minute")
	}
	if native {
		if err := roomWaitBlocked(ctx, s.Addr, sh, time.Minute); err != nil {
			return nil, err
		}
	}

	// The run: from the first message until every reader holds the last
	// (or the drain's bound passes).
	before, _ := readProcStats(s.PID())
	cpu0 := selfCPU()
	reqs0 := cnt.reqs.Load()
	t0 = time.Now()
	close(startAt)
	interval := time.Second / time.Duration(rate)
	window := time.Duration(published) * interval
	env.Prog.Timed(label, window)
	var pubWG sync.WaitGroup
	pubErr := make([]error, sh.rooms)
	pubLate := make([]time.Duration, sh.rooms)
	for r := range sh.rooms {
		pubWG.Add(1)
		go func() {
			defer pubWG.Done()
			offset := time.Duration(r) * interval / time.Duration(sh.rooms)
			pubLate[r], pubErr[r] = roomPublish(ctx, pubs[r], r, native, t0.Add(offset), interval, published)
		}()
	}
	pubWG.Wait()
	env.Prog.Clear()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range pubErr {
		if err != nil {
			return nil, err
		}
	}
	env.Prog.Status(label + ": waiting for the last deliveries")
	final := first + int64(published) - 1
	deadline := time.Now().Add(poll + roomDrain + window) // a lagging recipe lags more the longer it runs
	undrained := n
	for {
		undrained = 0
		for _, rd := range readers {
			if rd.last.Load() < final && !rd.failed.Load() {
				undrained++
			}
		}
		if undrained == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	after, _ := readProcStats(s.PID())
	cpu1 := selfCPU()
	span := time.Since(t0)
	reqs := cnt.reqs.Load() - reqs0
	shutdown()
	env.Prog.Clear()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	out := &roomResult{readers: n, published: published, span: span, reqs: reqs, hist: NewHistogram(),
		srvCPU: after.CPU - before.CPU, cliCPU: cpu1 - cpu0, rss: after.RSS, undrained: undrained}
	if s.PID() <= 0 {
		out.srvCPU = 0
	}
	for _, l := range pubLate {
		out.pubLate = max(out.pubLate, l)
	}
	for _, rd := range readers {
		for _, v := range rd.lat {
			out.hist.Record(v)
		}
		out.held += int64(len(rd.lat))
		out.misses += rd.misses
		out.dups += rd.dups
		out.gaps += rd.gaps
		if rd.err != nil {
			out.readersWithErrs++
			if out.firstErr == nil {
				out.firstErr = rd.err
			}
		}
	}
	if out.readersWithErrs == n {
		return nil, fmt.Errorf("every reader failed (first: %w)", out.firstErr)
	}
	if err := readersReplyError(readers); err != nil {
		return nil, err
	}
	return out, nil
}

// readersReplyError fails a run in which a reader got an error reply: that
// is the server refusing the workload, not a remark. Other reader errors
// (a connection lost) stay remarks.
func readersReplyError(readers []*roomReader) error {
	n, first := 0, error(nil)
	var re ReplyError
	for _, rd := range readers {
		if errors.As(rd.err, &re) {
			if n++; first == nil {
				first = rd.err
			}
		}
	}
	if n > 0 {
		return fmt.Errorf("%d readers got an error reply (first: %w)", n, first)
	}
	return nil
}

// roomWaitBlocked waits until every reader of the shape is a blocked
// puller (ROOM.INFO's pullers).
func roomWaitBlocked(ctx context.Context, addr string, sh roomShape, bound time.Duration) error {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	deadline := time.Now().Add(bound)
	for {
		total := 0
		for r := range sh.rooms {
			v, err := c.DoTimeout(10*time.Second, "ROOM.INFO", roomKey(r))
			if err != nil {
				return err
			}
			for i := 0; i+1 < len(v.Elems); i += 2 {
				if v.Elems[i].Str == "pullers" {
					total += int(v.Elems[i+1].Int)
				}
			}
		}
		if total >= sh.readers() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d pullers blocked after %v", total, sh.readers(), bound)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
