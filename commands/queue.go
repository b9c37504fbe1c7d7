package commands

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// Queue is the QUEUE family: a reliable work queue with leases, receipts,
// redelivery, de-duplication, priorities and dead letters (engine.Queue).
// SPEC.md §2 and issue 21 are the contract.
var Queue = []*Command{
	{Name: "queue.push", Arity: -3, Flags: "write denyoom fast", Keys: "RW insert @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(log(N))",
		Summary: "Adds a job and returns its id, or nil when a job with that ID is queued, in flight, or was " +
			"acknowledged within the de-duplication window.",
		Args: "key payload [ID id] [PRIORITY priority:integer] [(DELAY milliseconds:integer|AT unix-time-milliseconds:unix-time)] " +
			"[MAXATTEMPTS attempts:integer] [TTL milliseconds:integer] [GROUP group]",
		Run: queuePush},
	{Name: "queue.pushmany", Arity: -3, Flags: "write denyoom", Keys: "RW insert @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(M*log(N)) for M jobs.",
		Summary: "Adds one job per payload, with the queue's defaults, and returns their ids.",
		Args:    "key payload...", Run: queuePushMany},
	{Name: "queue.popack", Arity: -3, Flags: "write fast blocking", Keys: "RW access update @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(M*log(N)) for M jobs delivered.",
		Summary: "Leases ready jobs to a consumer in service order, as [id, payload, attempt, receipt]; BLOCK " +
			"waits for one; each must be acknowledged with its receipt before its lease ends.",
		Args: "key consumer [COUNT count:integer] [BLOCK milliseconds:integer] [LEASE milliseconds:integer] " +
			"[RELEASE-ON-DISCONNECT]",
		Run: queuePopAck},
	{Name: "queue.ack", Arity: -3, Flags: "write fast", Keys: "RW delete @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(M*log(N)) for M receipts.",
		Summary: "Settles deliveries by their receipts: the jobs are done. Returns how many receipts were live.",
		Args:    "key receipt...", Run: queueAck},
	{Name: "queue.nack", Arity: -3, Flags: "write fast", Keys: "RW update @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(log(N))",
		Summary: "Hands a delivery back: the job is ready again (or delayed by ms); 1 if the receipt was live.",
		Args:    "key receipt [DELAY milliseconds:integer]", Run: queueNack},
	{Name: "queue.extend", Arity: 4, Flags: "write fast", Keys: "RW update @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(log(N))",
		Summary: "Renews a delivery's lease to end ms from now; 1 if the receipt was live.",
		Args:    "key receipt milliseconds:integer", Run: queueExtend},
	{Name: "queue.dead", Arity: -2, Flags: "readonly", Keys: "RO access @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(M) for M jobs returned.",
		Summary: "Lists dead jobs, oldest death first, as [id, payload, attempt, reason]; with CURSOR, a page and the next cursor.",
		Args:    "key [CURSOR cursor:integer] [COUNT count:integer]", Run: queueDead},
	{Name: "queue.retry", Arity: 3, Flags: "write", Keys: "RW update @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(M*log(N)) for M jobs retried.",
		Summary: "Makes a dead job (or ALL of them) ready again with its attempts reset; returns how many.",
		Args:    "key id", Run: queueRetry},
	{Name: "queue.del", Arity: -3, Flags: "write fast", Keys: "RW delete @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(M*log(N)) for M ids.",
		Summary: "Removes jobs in any state; returns how many there were.",
		Args:    "key id...", Run: queueDel},
	{Name: "queue.peek", Arity: -2, Flags: "readonly", Keys: "RO access @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(M*log(N)) for M jobs returned.",
		Summary: "Lists ready jobs in the order they would be served, as [id, payload, priority, attempt].",
		Args:    "key [COUNT count:integer]", Run: queuePeek},
	{Name: "queue.inflight", Arity: -2, Flags: "readonly", Keys: "RO access @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(N), or O(COUNT) per page with CURSOR",
		Summary: "Lists jobs in flight, earliest lease end first, as [id, consumer, attempt, ms left, receipt]; with CURSOR, a page and the next cursor.",
		Args:    "key [CURSOR cursor] [COUNT count:integer]", Run: queueInflight},
	{Name: "queue.get", Arity: 3, Flags: "readonly fast", Keys: "RO access @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(1)",
		Summary: "Describes one job: state, payload, priority, attempts, times; nil when there is none.",
		Args:    "key id", Run: queueGet},
	{Name: "queue.stats", Arity: 2, Flags: "readonly fast", Keys: "RO access @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(P*G) for P priorities and G groups.",
		Summary: "Returns the jobs per state, the totals since the queue was made, and the oldest ready job's age.",
		Args:    "key", Run: queueStats},
	{Name: "queue.len", Arity: 2, Flags: "readonly fast", Keys: "RO @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(1)",
		Summary: "Returns the number of jobs ready, delayed or in flight.", Args: "key", Run: queueLen},
	{Name: "queue.config", Arity: -2, Flags: "write denyoom", Keys: "RW update @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(1)",
		Summary: "Sets a queue's options, or with none returns them.",
		Args: "key [WEIGHTS weights] [DEDUPE-WINDOW milliseconds:integer] [MAXLEN maxlen:integer] " +
			"[LEASE milliseconds:integer] [MAXATTEMPTS attempts:integer] [MAXINFLIGHT maxinflight:integer] " +
			"[GROUP-MAXINFLIGHT maxinflight:integer] [RATE rate]",
		Run: queueConfig},
	{Name: "queue.pause", Arity: -2, Flags: "write fast", Keys: "RW update @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(1)",
		Summary: "Pauses a queue's pushes, pops, or both: paused pushes are refused, paused pops get nothing.",
		Args:    "key [which=PUSH|POP]", Run: queuePause},
	{Name: "queue.resume", Arity: -2, Flags: "write fast", Keys: "RW update @1",
		Group: "queue", Since: "0.2.0", Complexity: "O(1)",
		Summary: "Resumes a paused queue's pushes, pops, or both.", Args: "key [which=PUSH|POP]", Run: queueResume},
}

func queuePush(c *Ctx) {
	var a engine.QueuePushArgs
	var delay, at bool
	p := c.options(3)
	for p.next() {
		switch p.name {
		case "ID":
			a.ID, a.HasID = p.value(), true
		case "PRIORITY":
			prio := p.integer()
			if prio < engine.MinQueuePriority || prio > engine.MaxQueuePriority {
				p.fail("ERR PRIORITY is out of range")
			}
			a.Priority = int32(prio)
		case "DELAY", "AT":
			if delay || at {
				p.fail("ERR DELAY and AT cannot be used together")
				break
			}
			if p.name == "DELAY" {
				delay = true
				a.ReadyAt = c.Eng.Now() + p.millis(0)
			} else {
				at = true
				a.ReadyAt = p.millis(0)
			}
		case "MAXATTEMPTS":
			a.MaxAttempts = p.positive()
		case "TTL":
			a.TTL = p.millis(1)
		case "GROUP":
			a.Group = p.value()
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	if a.MaxAttempts > engine.MaxQueueAttempts {
		c.W.Error("ERR MAXATTEMPTS is out of range")
		return
	}
	key := c.Args[1]
	id, pushed, err := c.DB.QueuePush(key, c.Args[2], a)
	switch {
	case err != nil:
		c.Error(err)
	case !pushed:
		c.W.Null()
	default:
		c.DB.Notify(engine.NotifyModule, "queue.push", key)
		c.W.BulkString(id)
	}
}

func queuePushMany(c *Ctx) {
	key := c.Args[1]
	ids, err := c.DB.QueuePushMany(key, c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyModule, "queue.push", key)
	c.W.Array(len(ids))
	for _, id := range ids {
		c.W.BulkString(id)
	}
}

func queuePopAck(c *Ctx) {
	a := engine.QueuePopArgs{Consumer: c.Args[2], Count: 1}
	block := int64(-1)
	p := c.options(3)
	for p.next() {
		switch p.name {
		case "COUNT":
			a.Count = int(min(p.positive(), math.MaxInt32))
		case "BLOCK":
			block = p.millis(0)
		case "LEASE":
			a.Lease = p.millis(1)
		case "RELEASE-ON-DISCONNECT":
			a.Owner = c.Conn.ID()
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	key := c.Args[1]
	jobs, err := c.DB.QueuePop(key, a)
	if err != nil {
		c.Error(err)
		return
	}
	if len(jobs) > 0 || block < 0 {
		popped(c.DB, key, jobs)
		writeDeliveries(c.W, jobs)
		return
	}
	db, w := c.DB, c.W
	c.Conn.Block([][]byte{key}, blockDuration(block), func(key []byte) bool {
		jobs, err := db.QueuePop(key, a)
		if err != nil || len(jobs) == 0 {
			return false
		}
		popped(db, key, jobs)
		writeDeliveries(w, jobs)
		return true
	}, func() { w.NullArray() })
}

func popped(db *engine.DB, key []byte, jobs []engine.QueueDelivery) {
	if len(jobs) > 0 {
		db.Notify(engine.NotifyModule, "queue.popack", key)
	}
}

func writeDeliveries(w *resp.Writer, jobs []engine.QueueDelivery) {
	w.Array(len(jobs))
	for _, j := range jobs {
		w.Array(4)
		w.BulkString(j.ID)
		w.Bulk(j.Payload)
		w.Int(j.Attempt)
		w.BulkString(j.Receipt)
	}
}

func queueAck(c *Ctx) {
	key := c.Args[1]
	n, err := c.DB.QueueAck(key, c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifyModule, "queue.ack", key)
	}
	c.W.Int(int64(n))
}

func queueNack(c *Ctx) {
	delay := int64(0)
	p := c.options(3)
	for p.next() {
		switch p.name {
		case "DELAY":
			delay = p.millis(0)
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	key := c.Args[1]
	ok, err := c.DB.QueueNack(key, c.Args[2], delay)
	queueSettled(c, key, "queue.nack", ok, err)
}

func queueExtend(c *Ctx) {
	var failed bool
	ms := c.parseMillis(c.Args[3], "milliseconds", 1, &failed)
	if failed {
		return
	}
	key := c.Args[1]
	ok, err := c.DB.QueueExtend(key, c.Args[2], ms)
	queueSettled(c, key, "queue.extend", ok, err)
}

func queueSettled(c *Ctx, key []byte, event string, ok bool, err error) {
	if err != nil {
		c.Error(err)
		return
	}
	if ok {
		c.DB.Notify(engine.NotifyModule, event, key)
	}
	c.W.Int(b2i(ok))
}

// countOption reads an optional COUNT (default def) from index from.
func countOption(c *Ctx, from int, def int64) (int, bool) {
	count := def
	p := c.options(from)
	for p.next() {
		switch p.name {
		case "COUNT":
			count = p.positive()
		default:
			p.unknown()
		}
	}
	return int(min(count, math.MaxInt32)), !p.err
}

func queueDead(c *Ctx) {
	one := func(w *resp.Writer, j engine.QueueJob) {
		w.Array(4)
		w.BulkString(j.ID)
		w.Bulk(j.Payload)
		w.Int(j.Attempt)
		w.BulkString(j.Reason)
	}
	cursor, count, paged, ok := pageOptions(c, 10)
	if !ok {
		return
	}
	if !paged {
		queueListing(c, c.DB.QueueDead, one)
		return
	}
	n, okCursor := parseCursor([]byte(cursor))
	if !okCursor {
		c.W.Error("ERR invalid cursor")
		return
	}
	next, jobs, err := c.DB.QueueDeadPage(c.Args[1], n, count)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Array(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.Array(len(jobs))
	for _, j := range jobs {
		one(c.W, j)
	}
}

// pageOptions reads [CURSOR c] [COUNT n] from c.Args[2:]: paged says a
// CURSOR was given (the reply is then [next cursor, items], as SCAN's).
func pageOptions(c *Ctx, def int64) (cursor string, count int, paged, ok bool) {
	n := def
	p := c.options(2)
	for p.next() {
		switch p.name {
		case "CURSOR":
			cursor, paged = string(p.value()), true
		case "COUNT":
			n = p.positive()
		default:
			p.unknown()
		}
	}
	return cursor, int(min(n, math.MaxInt32)), paged, !p.err
}

func queuePeek(c *Ctx) {
	queueListing(c, c.DB.QueuePeek, func(w *resp.Writer, j engine.QueueJob) {
		w.Array(4)
		w.BulkString(j.ID)
		w.Bulk(j.Payload)
		w.Int(j.Priority)
		w.Int(j.Attempt)
	})
}

// queueListing is DEAD and PEEK: an optional COUNT (10 by default), the
// jobs listed, each written by one.
func queueListing(c *Ctx, list func(key []byte, count int) ([]engine.QueueJob, error),
	one func(w *resp.Writer, j engine.QueueJob)) {
	count, ok := countOption(c, 2, 10)
	if !ok {
		return
	}
	jobs, err := list(c.Args[1], count)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Array(len(jobs))
	for _, j := range jobs {
		one(c.W, j)
	}
}

func queueInflight(c *Ctx) {
	cursor, count, paged, ok := pageOptions(c, math.MaxInt32)
	if !ok {
		return
	}
	var jobs []engine.QueueJob
	var err error
	if !paged {
		jobs, err = c.DB.QueueInflight(c.Args[1])
		jobs = jobs[:min(len(jobs), count)]
	} else if count == math.MaxInt32 {
		count = 10 // a page's default, as SCAN's
	}
	var next string
	if paged {
		from, okCursor := parseInflightCursor(cursor)
		if !okCursor {
			c.W.Error("ERR invalid cursor")
			return
		}
		var at engine.InflightCursor
		var done bool
		at, done, jobs, err = c.DB.QueueInflightPage(c.Args[1], from, count)
		next = "0"
		if !done {
			next = fmt.Sprintf("%d.%d.%d", at.When, at.Kind, at.Seq)
		}
	}
	if err != nil {
		c.Error(err)
		return
	}
	if paged {
		c.W.Array(2)
		c.W.BulkString(next)
	}
	now := c.Eng.Now()
	c.W.Array(len(jobs))
	for _, j := range jobs {
		c.W.Array(5)
		c.W.BulkString(j.ID)
		c.W.BulkString(j.Consumer)
		c.W.Int(j.Attempt)
		c.W.Int(max(j.Due-now, 0))
		c.W.BulkString(j.Receipt)
	}
}

// parseInflightCursor reads QUEUE.INFLIGHT's cursor: "0", or the
// when.kind.seq of a timeline position as an earlier page returned it.
func parseInflightCursor(s string) (engine.InflightCursor, bool) {
	if s == "0" {
		return engine.InflightCursor{}, true
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return engine.InflightCursor{}, false
	}
	when, err1 := strconv.ParseInt(parts[0], 10, 64)
	kind, err2 := strconv.ParseUint(parts[1], 10, 8)
	seq, err3 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return engine.InflightCursor{}, false
	}
	return engine.InflightCursor{When: when, Kind: uint8(kind), Seq: seq}, true
}

func queueGet(c *Ctx) {
	j, ok, err := c.DB.QueueGet(c.Args[1], c.Args[2])
	switch {
	case err != nil:
		c.Error(err)
		return
	case !ok:
		c.W.Null()
		return
	}
	fields := []struct {
		name string
		str  string
		num  int64
		isN  bool
	}{
		{name: "id", str: j.ID}, {name: "state", str: j.State}, {name: "payload", str: string(j.Payload)},
		{name: "priority", num: j.Priority, isN: true}, {name: "group", str: j.Group},
		{name: "attempt", num: j.Attempt, isN: true}, {name: "max-attempts", num: j.MaxAttempts, isN: true},
		{name: "due", num: j.Due, isN: true},
		{name: "expire-at", num: j.ExpireAt, isN: true}, {name: "consumer", str: j.Consumer},
		{name: "receipt", str: j.Receipt}, {name: "reason", str: j.Reason},
	}
	c.W.Map(len(fields))
	for _, f := range fields {
		c.W.BulkString(f.name)
		if f.isN {
			c.W.Int(f.num)
		} else {
			c.W.BulkString(f.str)
		}
	}
}

func queueStats(c *Ctx) {
	s, err := c.DB.QueueStatsOf(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	writePairs(c.W, []string{"ready", "delayed", "inflight", "dead", "pushed", "acked", "nacked", "redelivered",
		"dead-lettered", "expired", "stale-acks", "oldest-ready-age"},
		[]int64{s.Ready, s.Delayed, s.Inflight, s.Dead, s.Pushed, s.Acked, s.Nacked, s.Redelivered,
			s.DeadLettered, s.Expired, s.StaleAcks, s.OldestReadyAge})
}

func writePairs(w *resp.Writer, names []string, vals []int64) {
	w.Map(len(names))
	for i, n := range names {
		w.BulkString(n)
		w.Int(vals[i])
	}
}

func queueLen(c *Ctx) {
	n, err := c.DB.QueueLen(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(n))
}

func queueConfig(c *Ctx) {
	key := c.Args[1]
	if len(c.Args) == 2 {
		conf, ok, err := c.DB.QueueConfigOf(key)
		switch {
		case err != nil:
			c.Error(err)
		case !ok:
			c.W.Null()
		default:
			writeQueueConfig(c.W, conf)
		}
		return
	}
	var sets []func(*engine.QueueConfig)
	p := c.options(2)
	for p.next() {
		switch p.name {
		case "WEIGHTS":
			w, ok := weightsOption(p)
			if ok {
				sets = append(sets, func(q *engine.QueueConfig) { q.Weights = w })
			}
		case "DEDUPE-WINDOW":
			v := p.millis(0)
			sets = append(sets, func(q *engine.QueueConfig) { q.DedupeWindow = v })
		case "MAXLEN":
			v := p.atLeast(0)
			sets = append(sets, func(q *engine.QueueConfig) { q.MaxLen = v })
		case "LEASE":
			v := p.millis(1)
			sets = append(sets, func(q *engine.QueueConfig) { q.Lease = v })
		case "MAXATTEMPTS":
			v := p.positive()
			if v > engine.MaxQueueAttempts {
				p.fail("ERR MAXATTEMPTS is out of range")
			}
			sets = append(sets, func(q *engine.QueueConfig) { q.MaxAttempts = v })
		case "MAXINFLIGHT":
			v := p.atLeast(0)
			sets = append(sets, func(q *engine.QueueConfig) { q.MaxInflight = v })
		case "GROUP-MAXINFLIGHT":
			v := p.atLeast(0)
			sets = append(sets, func(q *engine.QueueConfig) { q.GroupInflight = v })
		case "RATE":
			n, per, ok := rateOption(p)
			if ok {
				sets = append(sets, func(q *engine.QueueConfig) { q.RateN, q.RatePer = n, per })
			}
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	err := c.DB.QueueConfigure(key, func(q *engine.QueueConfig) {
		for _, s := range sets {
			s(q)
		}
	})
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyModule, "queue.config", key)
	c.W.OK()
}

// weightsOption reads WEIGHTS priority weight [priority weight ...] (pairs
// until an argument that is not an integer), or WEIGHTS OFF for strict
// priority.
func weightsOption(p *optionParser) (map[int64]int64, bool) {
	if p.i < len(p.args) && strings.EqualFold(string(p.args[p.i]), "OFF") {
		p.i++
		return nil, true
	}
	w := map[int64]int64{}
	for p.i < len(p.args) {
		if _, isNum := engine.ParseInt(p.args[p.i]); !isNum {
			break
		}
		prio := p.integer()
		weight := p.integer()
		switch {
		case p.err:
			return nil, false
		case weight < 1:
			p.fail("ERR WEIGHTS: a weight must be at least 1")
			return nil, false
		}
		w[prio] = weight
	}
	if len(w) == 0 {
		p.fail("ERR WEIGHTS needs priority weight pairs, or OFF")
		return nil, false
	}
	return w, true
}

// rateOption reads RATE n per-ms, or RATE OFF.
func rateOption(p *optionParser) (n, per int64, ok bool) {
	if p.i < len(p.args) && strings.EqualFold(string(p.args[p.i]), "OFF") {
		p.i++
		return 0, 0, true
	}
	n = p.positive()
	per = p.millis(1)
	return n, per, !p.err
}

func writeQueueConfig(w *resp.Writer, c engine.QueueConfig) {
	w.Map(9)
	w.BulkString("lease")
	w.Int(c.Lease)
	w.BulkString("maxattempts")
	w.Int(c.MaxAttempts)
	w.BulkString("dedupe-window")
	w.Int(c.DedupeWindow)
	w.BulkString("maxlen")
	w.Int(c.MaxLen)
	w.BulkString("maxinflight")
	w.Int(c.MaxInflight)
	w.BulkString("group-maxinflight")
	w.Int(c.GroupInflight)
	w.BulkString("rate")
	if c.RateN == 0 {
		w.BulkString("off")
	} else {
		w.BulkString(itoa(c.RateN) + " per " + itoa(c.RatePer) + " ms")
	}
	w.BulkString("weights")
	if c.Weights == nil {
		w.BulkString("off")
	} else {
		var parts []string
		for _, prio := range sortedKeys(c.Weights) {
			parts = append(parts, itoa(prio)+" "+itoa(c.Weights[prio]))
		}
		w.BulkString(strings.Join(parts, " "))
	}
	w.BulkString("paused")
	switch {
	case c.PausePush && c.PausePop:
		w.BulkString("push pop")
	case c.PausePush:
		w.BulkString("push")
	case c.PausePop:
		w.BulkString("pop")
	default:
		w.BulkString("no")
	}
}

func sortedKeys(m map[int64]int64) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pauseWhich reads PAUSE/RESUME's optional PUSH|POP (both by default).
func pauseWhich(c *Ctx) (push, pop, ok bool) {
	switch {
	case len(c.Args) == 2:
		return true, true, true
	case len(c.Args) > 3:
		c.W.Error("ERR syntax error")
	case strings.EqualFold(string(c.Args[2]), "PUSH"):
		return true, false, true
	case strings.EqualFold(string(c.Args[2]), "POP"):
		return false, true, true
	default:
		c.W.Error("ERR syntax error, expected PUSH or POP")
	}
	return false, false, false
}

func queuePause(c *Ctx)  { queuePauseResume(c, true, "queue.pause") }
func queueResume(c *Ctx) { queuePauseResume(c, false, "queue.resume") }

func queuePauseResume(c *Ctx, pause bool, event string) {
	push, pop, ok := pauseWhich(c)
	if !ok {
		return
	}
	key := c.Args[1]
	err := c.DB.QueueConfigure(key, func(q *engine.QueueConfig) {
		if push {
			q.PausePush = pause
		}
		if pop {
			q.PausePop = pause
		}
	})
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyModule, event, key)
	c.W.OK()
}

func queueRetry(c *Ctx) {
	key, id := c.Args[1], c.Args[2]
	n, err := c.DB.QueueRetry(key, id, strings.EqualFold(string(id), "ALL"))
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifyModule, "queue.retry", key)
	}
	c.W.Int(int64(n))
}

func queueDel(c *Ctx) {
	key := c.Args[1]
	n, err := c.DB.QueueDel(key, c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifyModule, "queue.del", key)
	}
	c.W.Int(int64(n))
}

// queueInfo is INFO queue.
var queueInfo = InfoSection{Name: "queue", Title: "Queue", Fields: func(e *engine.Engine, add func(string, any)) {
	s := e.QueueStats()
	add("queue_keys", s.Keys)
	add("queue_jobs_ready", s.Ready)
	add("queue_jobs_delayed", s.Delayed)
	add("queue_jobs_inflight", s.Inflight)
	add("queue_jobs_dead", s.Dead)
	add("queue_delivered", s.Delivered)
	add("queue_acked", s.Acked)
	add("queue_nacked", s.Nacked)
	add("queue_redelivered", s.Redelivered)
	add("queue_dead_lettered", s.DeadLettered)
	// How long the latest deliveries had waited ready.
	add("queue_wait_samples", s.Wait.Samples)
	add("queue_wait_p50_usec", s.Wait.P50.Microseconds())
	add("queue_wait_p99_usec", s.Wait.P99.Microseconds())
	add("queue_wait_max_usec", s.Wait.Max.Microseconds())
}}
