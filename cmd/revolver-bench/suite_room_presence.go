package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// roomPresenceSuite measures issue 24's presence and flow-control rows
// (seed 002, live chat rooms); the delivery rows are the room suite's.
//
//   - "presence:" rpUsers distinct numeric users heartbeat into one room,
//     1,000 per command over a few pipelined connections, twice: the first
//     pass brings them online (join), the second refreshes them (the
//     steady state of a gateway heartbeating every user every 10 s).
//     Revolver runs ROOM.HEARTBEAT; Redis the recipe ROOM replaces, ZADD of
//     the heartbeat time per user into a sorted set, PFADD of the same users
//     into a HyperLogLog, and a ZREMRANGEBYSCORE sweep once a second. Per
//     pass: users/s, server CPU per user, used_memory and RSS growth since
//     the empty server, and the time of one ONLINE and one UV call (ZCARD
//     and PFCOUNT on Redis) against one PING.
//   - "flow control:" rpPullers long-pollers (one connection each) on one
//     room with rpOnline users online and a publisher at rpRate messages/s,
//     with a tier that holds a puller's PULL until rpTierInterval ms after
//     its previous reply, and without tiers: PULL requests/s, replies/s,
//     messages per reply, send-to-reader latency. Redis has no equivalent:
//     these rows are Revolver against itself.
type roomPresenceSuite struct{}

func init() { register(roomPresenceSuite{}) }

func (roomPresenceSuite) Name() string { return "room-presence" }
func (roomPresenceSuite) About() string {
	return "chat-room presence and flow control: 15M users heartbeating into one room (ROOM.HEARTBEAT vs ZADD + " +
		"PFADD + ZREMRANGEBYSCORE): users/s, memory, ONLINE/UV call time; 10k long-pollers with and without a " +
		"flow-control tier: requests/s, replies/s, messages per reply, latency"
}
func (roomPresenceSuite) Config(o *Options) ServerConfig {
	return ServerConfig{Persistence: true, Fsync: o.Fsync}
}

const (
	rpUsers = 15_000_000 // users of the presence rows, before --scale
	// rpRedisShare is the part of rpUsers the recipe heartbeats on Redis:
	// a pass of all 15M takes it longer than the presence TTL, so its sweep
	// would drop the first users before the second pass reaches them.
	rpRedisShare = 1.0 / 3
	rpBatch      = 1000          // users per HEARTBEAT, ZADD and PFADD
	rpConns      = 4             // connections heartbeating
	rpDepth      = 8             // commands in flight on each
	rpTTL        = 30_000        // ms: room-presence-ttl's default, and the recipe's sweep (× --scale below 1)
	rpFirstUID   = 1_000_000_000 // users are rpFirstUID, rpFirstUID+1, ...
	rpQueryCalls = 101           // ONLINE / UV / PING calls timed after a pass (the first, then the median)

	rpPullers      = 10_000  // long-pollers of the flow-control rows, before --scale
	rpOnline       = 200_000 // users heartbeating into their room, before --scale
	rpTierOnline   = 100_000 // the tier applies above this many online, before --scale
	rpTierInterval = 1000    // ms between a puller's replies under the tier
	rpRate         = 20      // messages/s published
	rpPayload      = 64      // bytes per message
	rpBlock        = 30_000  // ms: the pullers' BLOCK
	rpKeepAlive    = 10 * time.Second
	rpWarmUp       = 2 * time.Second // pullers and publisher run before the measured window

	rpKey            = "room"          // the ROOM key
	rpZKey           = "room:presence" // the recipe's sorted set
	rpHLLKey         = "room:uv"       // the recipe's HyperLogLog
	rpPresencePrefix = "presence: "
	rpExpiryPrefix   = "expiry: "
	rpFlowPrefix     = "flow control: "
)

var roomPresenceViews = []View{
	{Title: "Presence — heartbeats: users/s (1,000 per command), server CPU per user, latency of a command",
		RowPrefix: rpPresencePrefix, Metrics: []Metric{
			{Key: "uids", Label: "users/s", Unit: "/s", Spread: true, Ratio: true},
			{Key: "cpu", Label: "srv CPU ns/user", Unit: "ns", Ratio: true},
			{Key: "p50", Label: "cmd p50 ms", Unit: "ms"},
			{Key: "p99", Label: "cmd p99 ms", Unit: "ms"},
			{Key: "secs", Label: "pass s", Unit: "s"},
		}},
	{Title: "Presence — memory after the pass (growth since the empty server, after MEMORY PURGE)",
		RowPrefix: rpPresencePrefix, Metrics: []Metric{
			{Key: "used", Label: "used_memory", Unit: "MB", Ratio: true},
			{Key: "bpu", Label: "used B/user", Unit: "B", Ratio: true},
			{Key: "rss", Label: "RSS", Unit: "MB", Ratio: true},
			{Key: "peak", Label: "peak RSS", Unit: "MB"},
		}},
	{Title: "Presence — answering after the pass: ONLINE (ZCARD) and UV (PFCOUNT), µs per call, against PING",
		RowPrefix: rpPresencePrefix, Metrics: []Metric{
			{Key: "online1", Label: "ONLINE first", Unit: "µs"},
			{Key: "online", Label: "ONLINE median", Unit: "µs"},
			{Key: "uv1", Label: "UV first", Unit: "µs"},
			{Key: "uv", Label: "UV median", Unit: "µs"},
			{Key: "ping", Label: "PING median", Unit: "µs"},
			{Key: "uverr", Label: "UV error", Unit: "%"},
		}},
	{Title: "Expiry — after the last pass, until every user is offline: PING round trips (ms) on a connection of its own",
		RowPrefix: rpExpiryPrefix, Metrics: []Metric{
			{Key: "pp50", Label: "PING p50", Unit: "ms"},
			{Key: "pp99", Label: "PING p99", Unit: "ms"},
			{Key: "pp999", Label: "PING p99.9", Unit: "ms"},
			{Key: "pmax", Label: "PING max", Unit: "ms", Spread: true, Ratio: true},
			{Key: "wait", Label: "all offline after s", Unit: "s"},
			{Key: "offline", Label: "first to last offline s", Unit: "s"},
			{Key: "expcpu", Label: "srv CPU s", Unit: "s", Ratio: true},
		}},
	{Title: "Flow control — 10k long-pollers of one room (Revolver with a tier vs without; Redis has no equivalent)",
		RowPrefix: rpFlowPrefix, Metrics: []Metric{
			{Key: "pulls", Label: "PULLs/s", Unit: "/s", Spread: true},
			{Key: "replies", Label: "replies/s", Unit: "/s"},
			{Key: "mpr", Label: "msgs/reply"},
			{Key: "delivered", Label: "msgs delivered/s", Unit: "/s"},
			{Key: "reached", Label: "reached", Unit: "%"},
			{Key: "skipped", Label: "skipped", Unit: "%"},
			{Key: "held", Label: "held/s", Unit: "/s"},
			{Key: "saved", Label: "replies saved/s", Unit: "/s"},
		}},
	{Title: "Flow control — send-to-reader latency (ms) and CPU",
		RowPrefix: rpFlowPrefix, Metrics: []Metric{
			{Key: "p50", Label: "p50", Unit: "ms", Spread: true},
			{Key: "p99", Label: "p99", Unit: "ms"},
			{Key: "max", Label: "max", Unit: "ms"},
			{Key: "srvcpu", Label: "srv CPU % of a core", Unit: "%"},
			{Key: "cpumsg", Label: "srv CPU µs/msg", Unit: "µs"},
			{Key: "clicpu", Label: "client CPU % of a core", Unit: "%"},
		}},
}

// rpSizes are the suite's sizes after --scale.
type rpSizes struct {
	users, redisUsers          int
	ttl                        int64 // ms: the presence TTL, and the recipe's sweep
	pullers, online, tierLimit int
}

func rpSizesOf(env *Env) rpSizes {
	sz := rpSizes{users: env.Scaled(rpUsers), pullers: env.Scaled(rpPullers), online: env.Scaled(rpOnline),
		tierLimit: env.Scaled(rpTierOnline)}
	sz.redisUsers = max(1, int(float64(sz.users)*rpRedisShare))
	// Scaled-down runs wait less for their users to go offline.
	sz.ttl = max(1000, int64(float64(rpTTL)*min(env.Opts.Scale, 1)))
	sz.online = max(sz.online, sz.pullers, sz.tierLimit+1)
	return sz
}

func (roomPresenceSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: roomPresenceViews}
	sz := rpSizesOf(env)
	res.Notes = append(res.Notes,
		fmt.Sprintf("presence rows: each round starts a fresh server of each kind (the suite's durability) and "+
			"heartbeats %s distinct numeric users (%d, %d, ...) into one room, %d per command, over %d connections "+
			"with %d commands in flight on each, twice: \"join\" brings them online, \"again\" heartbeats the same "+
			"users at once after (a gateway's steady state: every user every few seconds). Revolver: `ROOM.HEARTBEAT "+
			"%s <uid> ...` (presence TTL %d ms; 30000 is the default). Redis, the recipe: `ZADD %s <now-ms> <uid> ...` and "+
			"`PFADD %s <uid> ...` of the same %d users, and on a connection of its own `ZREMRANGEBYSCORE %s -inf "+
			"<now-%d>` once a second. users/s counts users per second of the pass (a ZADD and a PFADD of a user are "+
			"one); server CPU is utime+stime over the pass, per user.",
			humanCount(sz.users), rpFirstUID, rpFirstUID+1, rpBatch, rpConns, rpDepth, rpKey, sz.ttl, rpZKey, rpHLLKey,
			rpBatch, rpZKey, sz.ttl),
		fmt.Sprintf("Redis heartbeats %s users, a third of Revolver's: at the recipe's pace a pass of all %s takes "+
			"longer than the %d ms TTL, and its sweep would drop the first users of a pass before the next pass "+
			"refreshed them. Its per-user figures (users/s, CPU, bytes per user) compare; its totals are for "+
			"that count.", humanCount(sz.redisUsers), humanCount(sz.users), sz.ttl),
		"Memory: INFO used_memory and VmRSS after MEMORY PURGE (a full GC on Revolver, jemalloc's purge on Redis), "+
			"minus the same on the empty server; peak RSS is VmHWM minus the empty server's RSS. After \"again\", "+
			"Revolver's presence still lists each user in the one-second bucket of both heartbeats until the older "+
			"bucket's TTL passes (engine/room_presence.go).",
		"expiry row: after the second pass, one connection sends PING after PING (1 ms apart) and another asks "+
			"ROOM.ONLINE (ZCARD on Redis, whose recipe's sweep keeps running once a second) every 100 ms, until no "+
			"user is online or TTL + 20 s passed: PING's round trips, the time until every user was offline (from "+
			"the end of the pass) and from the first user offline to the last, and the server's CPU over that time. "+
			"Users last heartbeated in the second pass, so they go offline over about as long as it took, a TTL "+
			"after it; before that, Revolver sweeps the first pass's one-second buckets, whose users are online by "+
			"newer heartbeats.",
		fmt.Sprintf("ONLINE and UV after each pass: on one connection, PING, then `ROOM.ONLINE %s` (Redis `ZCARD %s`, "+
			"the recipe's online count once swept) and `ROOM.UV %s` (`PFCOUNT %s`), each timed once (first: UV "+
			"recounts its HyperLogLog after the pass changed it), then %d rounds of PING, ONLINE and UV in turn "+
			"(medians); PING's is the round trip of a command that does nothing. UV error is the count's distance from the users "+
			"heartbeated.", rpKey, rpZKey, rpKey, rpHLLKey, rpQueryCalls-1),
		fmt.Sprintf("flow control rows: %s users heartbeat into `%s` (1,000 per ROOM.HEARTBEAT, again every %v), "+
			"%s pullers, one connection each, long-poll it with `ROOM.PULL %s <nseq> <iseq> UID <uid> BLOCK %d "+
			"EPOCH <epoch>` (the first with `$ $`), each sending its next PULL as soon as a reply arrives, and a "+
			"publisher sends `ROOM.PUB %s <%d-byte payload>` %d times a second (at that pace whatever the server's: "+
			"it reads its replies apart). \"tier\": `ROOM.CONFIG %s TIERS %d "+
			"%d` (more than %s online: a PULL sooner than %d ms after the user's previous reply is held until then); "+
			"\"no tiers\": `TIERS NONE`. After %v of warm-up, --duration is measured: PULLs sent, replies received "+
			"(every reply; BLOCK timeouts would be empty ones), messages per reply that carried any, messages "+
			"delivered, INFO room's room_pulls_held and room_replies_saved per second, server CPU (utime+stime) per "+
			"second and per message delivered. Latency (from the publisher's send to the reader's receipt) and "+
			"\"reached\" (the share of messages × pullers that arrived) are of the messages sent in the window, "+
			"which the pullers get %v after it to receive. \"skipped\": messages between the cursor a PULL sent and "+
			"the first message of its reply, which the reply left out without reporting a gap (room_pulls_with_gap), "+
			"as a share of the messages received plus those. Redis has no long-poll with flow control: it is skipped, and these rows compare "+
			"Revolver with and without the tier.",
			humanCount(sz.online), rpKey, rpKeepAlive, humanCount(sz.pullers), rpKey, rpBlock, rpKey, rpPayload,
			rpRate, rpKey, sz.tierLimit, rpTierInterval, humanCount(sz.tierLimit), rpTierInterval, rpWarmUp,
			2*rpTierInterval*time.Millisecond),
		"Issue 24's targets: heartbeats ≥ 1.5M users/s and presence memory ≤ 1 GiB for 15M users; ONLINE and UV "+
			"O(1); flow control cuts PULL requests (the seed reports 58% fewer at 4 million online).")

	joinRow := res.NewRow(fmt.Sprintf("%s%s users join (first heartbeat)", rpPresencePrefix, humanCount(sz.users)))
	againRow := res.NewRow(fmt.Sprintf("%s%s users heartbeat again", rpPresencePrefix, humanCount(sz.users)))
	expiryRow := res.NewRow(fmt.Sprintf("%s%s users go offline", rpExpiryPrefix, humanCount(sz.users)))
	presenceRows := []*Row{joinRow, againRow, expiryRow}
	for round := 1; round <= env.Opts.Rounds; round++ {
		for _, s := range env.Servers {
			if joinRow.Skipped(s.Name) {
				continue
			}
			if !s.Owned {
				for _, row := range presenceRows {
					row.Skip(s.Name, "skipped: needs a server the bench starts (--addr)")
				}
				continue
			}
			n := sz.users
			if s.Kind == kindRedis {
				n = sz.redisUsers
				ran := fmt.Sprintf("%s users: ZADD + PFADD (%d each per command) + ZREMRANGEBYSCORE once a second",
					humanCount(n), rpBatch)
				joinRow.SetRan(s.Name, ran)
				againRow.SetRan(s.Name, ran)
				expiryRow.SetRan(s.Name, fmt.Sprintf("%s users swept by ZREMRANGEBYSCORE once a second",
					humanCount(n)))
			} else {
				joinRow.SetRan(s.Name, "ROOM.HEARTBEAT")
				againRow.SetRan(s.Name, "ROOM.HEARTBEAT")
				expiryRow.SetRan(s.Name, "the room's presence sweep")
			}
			samples, notes, skip, err := rpPresence(ctx, env, s.Kind, n, sz.ttl, round)
			if err != nil {
				return res, fmt.Errorf("presence on %s: %w", s.Name, err)
			}
			if skip != "" {
				for _, row := range presenceRows {
					row.Skip(s.Name, skip)
				}
				continue
			}
			for i, row := range presenceRows {
				row.Add(s.Name, samples[i])
				if notes[i] != "" {
					row.Note(s.Name, notes[i])
				}
			}
		}
	}

	flows := []struct {
		name  string
		tiers bool
	}{
		{fmt.Sprintf("%s%s pullers, %s online, tier %s → %d ms", rpFlowPrefix, humanCount(sz.pullers),
			humanCount(sz.online), humanCount(sz.tierLimit), rpTierInterval), true},
		{fmt.Sprintf("%s%s pullers, %s online, no tiers", rpFlowPrefix, humanCount(sz.pullers),
			humanCount(sz.online)), false},
	}
	var flowRows []*Row
	for _, f := range flows {
		flowRows = append(flowRows, res.NewRow(f.name))
	}
	if err := needOpenFiles(sz.pullers + 256); err != nil {
		return res, err
	}
	for round := 1; round <= env.Opts.Rounds; round++ {
		for i, f := range flows {
			row := flowRows[i]
			for _, s := range env.Servers {
				if row.Skipped(s.Name) {
					continue
				}
				if s.Kind == kindRedis {
					row.Skip(s.Name, "skipped: Redis has no long-poll with flow control (this row is Revolver with "+
						"and without the tier)")
					continue
				}
				if ok, err := hasCommand(s.Addr, "room.pull"); err != nil {
					return res, err
				} else if !ok {
					row.Skip(s.Name, fmt.Sprintf("skipped: %s has no ROOM.PULL at this commit", s.Name))
					continue
				}
				label := fmt.Sprintf("%s on %s, round %d/%d", f.name, s.Name, round, env.Opts.Rounds)
				sample, note, err := rpFlow(ctx, env, s, sz, f.tiers, label)
				if err != nil {
					return res, fmt.Errorf("%s on %s: %w", f.name, s.Name, err)
				}
				row.Add(s.Name, sample)
				if note != "" {
					row.Note(s.Name, note)
				}
			}
		}
	}
	res.Notes = append(res.Notes, rpTargets(res, env.Servers, sz)...)
	return res, nil
}

// rpUID appends user i's id as a bulk string.
func rpUID(dst []byte, i int) []byte { return appendBulkInt(dst, int64(rpFirstUID+i)) }

// rpHeartbeats returns n users' heartbeats as commands of rpBatch users:
// ROOM.HEARTBEAT on Revolver; on Redis the recipe's ZADD and PFADD of each
// batch, in turn (command 2b is batch b's ZADD, 2b+1 its PFADD).
func rpHeartbeats(n int, native bool) (cmds int, gen func(dst []byte, i int) []byte) {
	batches := (n + rpBatch - 1) / rpBatch
	if native {
		return batches, func(dst []byte, b int) []byte {
			from, to := b*rpBatch, min((b+1)*rpBatch, n)
			dst = appendHeader(dst, '*', 2+to-from)
			dst = appendBulkString(dst, "ROOM.HEARTBEAT")
			dst = appendBulkString(dst, rpKey)
			for i := from; i < to; i++ {
				dst = rpUID(dst, i)
			}
			return dst
		}
	}
	return 2 * batches, func(dst []byte, c int) []byte {
		from, to := (c/2)*rpBatch, min((c/2+1)*rpBatch, n)
		if c%2 == 1 {
			dst = appendHeader(dst, '*', 2+to-from)
			dst = appendBulkString(dst, "PFADD")
			dst = appendBulkString(dst, rpHLLKey)
			for i := from; i < to; i++ {
				dst = rpUID(dst, i)
			}
			return dst
		}
		var score [24]byte
		now := strconv.AppendInt(score[:0], time.Now().UnixMilli(), 10)
		dst = appendHeader(dst, '*', 2+2*(to-from))
		dst = appendBulkString(dst, "ZADD")
		dst = appendBulkString(dst, rpZKey)
		for i := from; i < to; i++ {
			dst = appendHeader(dst, '$', len(now))
			dst = append(dst, now...)
			dst = append(dst, '\r', '\n')
			dst = rpUID(dst, i)
		}
		return dst
	}
}

// rpPump sends cmds commands (gen(i) appends the i-th) over conns
// connections, each keeping depth commands in flight, and returns the
// latency of each command, from its batch's write to its reply. An error
// reply fails the pump.
func rpPump(ctx context.Context, addr string, cmds, conns, depth int, gen func(dst []byte, i int) []byte) (*Histogram, error) {
	var next atomic.Int64
	hists := make([]*Histogram, conns)
	errs := make(chan error, conns)
	for w := range conns {
		hists[w] = NewHistogram()
		go func(h *Histogram) {
			c, err := Dial(addr, 5*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			buf := make([]byte, 0, 64*1024)
			for ctx.Err() == nil {
				from := int(next.Add(int64(depth))) - depth
				if from >= cmds {
					errs <- nil
					return
				}
				to := min(from+depth, cmds)
				buf = buf[:0]
				for i := from; i < to; i++ {
					buf = gen(buf, i)
				}
				t0 := time.Now()
				c.AppendRaw(buf)
				if err := c.Flush(); err != nil {
					errs <- err
					return
				}
				for range to - from {
					r, err := c.Skip()
					if err == nil && r.err != "" {
						err = ReplyError(r.err)
					}
					if err != nil {
						errs <- err
						return
					}
					h.RecordDuration(time.Since(t0))
				}
			}
			errs <- ctx.Err()
		}(hists[w])
	}
	var first error
	for range conns {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	out := NewHistogram()
	for _, h := range hists {
		out.Merge(h)
	}
	return out, first
}

// rpPresence measures both passes of n users on a fresh server of kind:
// the samples and remarks of the join pass and of the second.
func rpPresence(ctx context.Context, env *Env, kind string, n int, ttl int64, round int) (samples [3]map[string]float64,
	notes [3]string, skip string, err error) {
	s, err := env.fresh(ctx, kind, env.Config)
	if err != nil {
		return samples, notes, "", err
	}
	defer os.RemoveAll(s.Dir)
	defer s.Stop()
	native := kind == kindRevolver
	if native {
		if ok, err := hasCommand(s.Addr, "room.heartbeat"); err != nil || !ok {
			return samples, notes, fmt.Sprintf("skipped: %s has no ROOM.HEARTBEAT at this commit", s.Name), err
		}
	}
	if native && ttl != rpTTL {
		if _, err := do(s.Addr, "ROOM.CONFIG", rpKey, "PRESENCE-TTL", strconv.FormatInt(ttl, 10)); err != nil {
			return samples, notes, "", err
		}
	}
	used0, rss0, err := memSample(s)
	if err != nil {
		return samples, notes, "", err
	}
	cmds, gen := rpHeartbeats(n, native)
	for pass := range 2 {
		label := fmt.Sprintf("presence: %s users on %s, pass %d/2, round %d/%d", humanCount(n), s.Name, pass+1,
			round, env.Opts.Rounds)
		env.Prog.Status(label)
		var sweeps rpSweep
		sweepCtx, stopSweep := context.WithCancel(ctx)
		sweepDone := make(chan struct{})
		if !native {
			go func() { defer close(sweepDone); sweeps.run(sweepCtx, s.Addr, ttl) }()
		} else {
			close(sweepDone)
		}
		before, _ := readProcStats(s.PID())
		t0 := time.Now()
		hist, err := rpPump(ctx, s.Addr, cmds, rpConns, rpDepth, gen)
		elapsed := time.Since(t0)
		after, _ := readProcStats(s.PID())
		stopSweep()
		<-sweepDone
		if err != nil {
			return samples, notes, "", fmt.Errorf("pass %d: %w", pass+1, err)
		}
		if sweeps.err != nil {
			return samples, notes, "", fmt.Errorf("pass %d: the sweep: %w", pass+1, sweeps.err)
		}
		used, rss, err := memSample(s)
		if err != nil {
			return samples, notes, "", err
		}
		hwm, _ := rpPeakRSS(s.PID())
		q, err := rpQueries(s.Addr, native)
		if err != nil {
			return samples, notes, "", fmt.Errorf("after pass %d: %w", pass+1, err)
		}
		sm := map[string]float64{
			"uids": float64(n) / elapsed.Seconds(),
			"cpu":  float64((after.CPU - before.CPU).Nanoseconds()) / float64(n),
			"p50":  ms(hist.Quantile(0.50)), "p99": ms(hist.Quantile(0.99)), "max": ms(hist.Max()),
			"secs": elapsed.Seconds(),
			"used": float64(used - used0), "bpu": float64(used-used0) / float64(n),
			"rss": float64(rss - rss0), "peak": float64(hwm - rss0),
			"online1": q.online1, "online": q.online, "uv1": q.uv1, "uv": q.uv, "ping": q.ping,
			"uverr": 100 * (float64(q.uvCount) - float64(n)) / float64(n),
		}
		samples[pass] = sm
		var remarks []string
		if q.onlineCount != int64(n) {
			remarks = append(remarks, fmt.Sprintf("%d online after the pass, not %d", q.onlineCount, n))
		}
		if sweeps.removed > 0 {
			remarks = append(remarks, fmt.Sprintf("the sweep removed %d users during the pass", sweeps.removed))
		}
		if elapsed > time.Duration(ttl)*time.Millisecond*2/3 {
			remarks = append(remarks, fmt.Sprintf("a pass took %.1f s, close to the %d ms TTL", elapsed.Seconds(),
				ttl))
		}
		notes[pass] = strings.Join(remarks, "; ")
	}
	env.Prog.Status(fmt.Sprintf("presence: %s users on %s going offline, round %d/%d", humanCount(n), s.Name, round,
		env.Opts.Rounds))
	samples[2], notes[2], err = rpExpiry(ctx, s.Addr, s.PID(), native, ttl)
	return samples, notes, "", err
}

// rpExpiry waits, after the last pass, until every user has gone offline
// (on Redis by the recipe's sweep once a second), with one connection
// sending PING after PING: their round trips show what expiring the users
// costs everyone else. It gives up ttl + 20 s after it starts.
func rpExpiry(ctx context.Context, addr string, pid int, native bool, ttl int64) (map[string]float64, string, error) {
	var sweeps rpSweep
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	if !native {
		go sweeps.run(sweepCtx, addr, ttl)
	}
	probe, err := Dial(addr, 5*time.Second)
	if err != nil {
		return nil, "", err
	}
	defer probe.Close()
	count, err := Dial(addr, 5*time.Second)
	if err != nil {
		return nil, "", err
	}
	defer count.Close()
	online := []string{"ROOM.ONLINE", rpKey}
	if !native {
		online = []string{"ZCARD", rpZKey}
	}
	hist := NewHistogram()
	before, _ := readProcStats(pid)
	start := time.Now()
	deadline := start.Add(time.Duration(ttl)*time.Millisecond + 20*time.Second)
	var first, gone time.Time // the first user offline, the last
	left := int64(-1)
	for next := start; ctx.Err() == nil && time.Now().Before(deadline); {
		t0 := time.Now()
		if _, err := probe.DoTimeout(time.Minute, "PING"); err != nil {
			return nil, "", err
		}
		hist.RecordDuration(time.Since(t0))
		if time.Now().Before(next) {
			time.Sleep(time.Millisecond)
			continue
		}
		next = next.Add(100 * time.Millisecond)
		v, err := count.DoTimeout(time.Minute, online...)
		if err != nil {
			return nil, "", err
		}
		if left >= 0 && v.Int < left && first.IsZero() {
			first = time.Now()
		}
		if left = v.Int; left == 0 {
			gone = time.Now()
			break
		}
	}
	after, _ := readProcStats(pid)
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	if sweeps.err != nil {
		return nil, "", fmt.Errorf("the sweep: %w", sweeps.err)
	}
	sm := map[string]float64{
		"pp50": ms(hist.Quantile(0.50)), "pp99": ms(hist.Quantile(0.99)), "pp999": ms(hist.Quantile(0.999)),
		"pmax": ms(hist.Max()), "pings": float64(hist.Count()) / time.Since(start).Seconds(),
		"expcpu": (after.CPU - before.CPU).Seconds(),
	}
	note := ""
	if gone.IsZero() {
		note = fmt.Sprintf("%d users still online %v after the last pass", left, time.Since(start).Round(time.Second))
	} else {
		sm["wait"] = gone.Sub(start).Seconds()
		if !first.IsZero() {
			sm["offline"] = gone.Sub(first).Seconds()
		}
	}
	return sm, note, nil
}

// rpSweep runs the recipe's sweep once a second and counts what it
// removed.
type rpSweep struct {
	calls, removed int64
	err            error
}

func (t *rpSweep) run(ctx context.Context, addr string, ttl int64) {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		t.err = err
		return
	}
	defer c.Close()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cut := strconv.FormatInt(time.Now().UnixMilli()-ttl, 10)
		v, err := c.DoTimeout(time.Minute, "ZREMRANGEBYSCORE", rpZKey, "-inf", cut)
		if err != nil {
			t.err = err
			return
		}
		t.calls++
		t.removed += v.Int
	}
}

// rpPeakRSS reads a process's VmHWM (peak resident set), in bytes.
func rpPeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}

// rpQueryTimes are the ONLINE / UV / PING timings after a pass (µs) and
// the counts they answered.
type rpQueryTimes struct {
	online1, online, uv1, uv, ping float64
	onlineCount, uvCount           int64
}

// rpQueries times one ONLINE and one UV call (ZCARD and PFCOUNT on Redis)
// right after a pass, then rpQueryCalls-1 more of each and of PING.
func rpQueries(addr string, native bool) (rpQueryTimes, error) {
	var q rpQueryTimes
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return q, err
	}
	defer c.Close()
	online, uv := []string{"ROOM.ONLINE", rpKey}, []string{"ROOM.UV", rpKey}
	if !native {
		online, uv = []string{"ZCARD", rpZKey}, []string{"PFCOUNT", rpHLLKey}
	}
	timed := func(args []string) (float64, int64, error) {
		t0 := time.Now()
		v, err := c.DoTimeout(time.Minute, args...)
		return float64(time.Since(t0).Nanoseconds()) / 1e3, v.Int, err
	}
	if _, _, err := timed([]string{"PING"}); err != nil {
		return q, err
	}
	if q.online1, q.onlineCount, err = timed(online); err != nil {
		return q, err
	}
	if q.uv1, q.uvCount, err = timed(uv); err != nil {
		return q, err
	}
	// The rest in turn, so that the three see the same moments of the
	// server's background work.
	var ts [3][]float64
	for range rpQueryCalls - 1 {
		for i, args := range [][]string{{"PING"}, online, uv} {
			t, _, err := timed(args)
			if err != nil {
				return q, err
			}
			ts[i] = append(ts[i], t)
		}
	}
	for i, out := range []*float64{&q.ping, &q.online, &q.uv} {
		slices.Sort(ts[i])
		*out = ts[i][len(ts[i])/2]
	}
	return q, nil
}

// rpTargets states issue 24's targets against this run's medians.
func rpTargets(res *Result, servers []*Server, sz rpSizes) []string {
	rev := ""
	for _, s := range servers {
		if s.Kind == kindRevolver {
			rev = s.Name
			break
		}
	}
	if rev == "" {
		return nil
	}
	var out []string
	var withTier, without float64
	for _, row := range res.Rows {
		switch {
		case strings.HasPrefix(row.Name, rpPresencePrefix):
			uids, ok1 := sideMedian(row, rev, "uids")
			used, ok2 := sideMedian(row, rev, "used")
			rss, ok3 := sideMedian(row, rev, "rss")
			on, ok4 := sideMedian(row, rev, "online")
			uv, ok5 := sideMedian(row, rev, "uv")
			ping, ok6 := sideMedian(row, rev, "ping")
			if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
				continue
			}
			peak, _ := sideMedian(row, rev, "peak")
			limit, limitText := float64(1<<30), "1 GiB"
			if sz.users != rpUsers { // the target scaled with the users
				limit *= float64(sz.users) / rpUsers
				limitText = fmt.Sprintf("1 GiB × %d/%d = %s", sz.users, rpUsers, formatValue(limit, "MB"))
			}
			out = append(out, fmt.Sprintf("Targets, %s (Revolver): %s users/s (≥ 1.5M: %s); used_memory growth %s "+
				"and RSS growth %s after MEMORY PURGE (≤ %s: %s; the peak RSS growth during the pass, %s, is %s it); "+
				"ONLINE %s µs and UV %s µs per call (medians) against PING's %s µs (O(1), about a round trip: %s).",
				row.Name, si(uids), metText(uids >= 1.5e6), formatValue(used, "MB"), formatValue(rss, "MB"),
				limitText, metText(max(used, rss) <= limit), formatValue(peak, "MB"),
				map[bool]string{true: "within", false: "above"}[peak <= limit],
				sig(on), sig(uv), sig(ping), metText(on < ping+100 && uv < ping+100)))
		case strings.HasPrefix(row.Name, rpFlowPrefix):
			p, ok := sideMedian(row, rev, "pulls")
			if !ok {
				continue
			}
			if strings.Contains(row.Name, "no tiers") {
				without = p
			} else {
				withTier = p
			}
		}
	}
	if withTier > 0 && without > 0 {
		cut := 100 * (1 - withTier/without)
		out = append(out, fmt.Sprintf("Targets, flow control (Revolver with the tier against without): %.0f%% fewer "+
			"PULL requests (%s/s against %s/s; the seed reports 58%% fewer at 4 million online): %s.", cut,
			si(withTier), si(without), metText(cut > 0)))
	}
	return out
}
