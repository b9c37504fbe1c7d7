package commands

import (
	"math"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// Delay is the DELAY family: named timers with due times, optional payloads
// and periods, popped when due (engine.Delay). SPEC.md §2 is the contract.
var Delay = []*Command{
	{Name: "delay.add", Arity: -5, Flags: "write denyoom fast", Keys: "RW insert update @1",
		Group: "delay", Since: "0.1.0", Complexity: "O(log(N))",
		Summary: "Adds a timer due IN ms or AT a unix time in ms, optionally recurring EVERY ms, or replaces it; " +
			"1 when the timer is new, else 0.",
		Args: "key member (IN milliseconds:integer|AT unix-time-milliseconds:unix-time) [EVERY period:integer] " +
			"[PAYLOAD data] [condition=NX|XX]",
		Run: delayAdd},
	{Name: "delay.touch", Arity: 4, Flags: "write fast", Keys: "RW update @1",
		Group: "delay", Since: "0.1.0", Complexity: "O(log(N))",
		Summary: "Makes an existing timer due ms from now (an idle timeout that activity resets); 1 if it exists.",
		Args:    "key member milliseconds:integer", Run: delayTouch},
	{Name: "delay.cancel", Arity: -3, Flags: "write fast", Keys: "RW delete @1",
		Group: "delay", Since: "0.1.0", Complexity: "O(M*log(N)) for M members.",
		Summary: "Removes timers, leased or not; returns how many existed.",
		Args:    "key member...", Run: delayCancel},
	{Name: "delay.ttl", Arity: 3, Flags: "readonly fast", Keys: "RO access @1",
		Group: "delay", Since: "0.1.0", Complexity: "O(1)",
		Summary: "Returns the ms until a timer is due (0 when it is), or -2 when there is no such timer.",
		Args:    "key member", Run: delayTTL},
	{Name: "delay.pop", Arity: -2, Flags: "write fast blocking", Keys: "RW access delete @1",
		Group: "delay", Since: "0.1.0", Complexity: "O(M*log(N)) for M timers delivered.",
		Summary: "Delivers due timers, earliest first, as [member, payload, due, fires]; BLOCK waits for one " +
			"to come due; LEASE holds each until DELAY.ACK, redelivering it when the lease ends.",
		Args: "key [COUNT count:integer] [BLOCK milliseconds:integer] [LEASE milliseconds:integer]",
		Run:  delayPop},
	{Name: "delay.ack", Arity: -3, Flags: "write fast", Keys: "RW delete @1",
		Group: "delay", Since: "0.1.0", Complexity: "O(M*log(N)) for M members.",
		Summary: "Acknowledges leased deliveries: a one-shot timer goes, a recurring one is re-armed; " +
			"returns how many were leased.",
		Args: "key member...", Run: delayAck},
	{Name: "delay.len", Arity: 2, Flags: "readonly fast", Keys: "RO @1",
		Group: "delay", Since: "0.1.0", Complexity: "O(1)",
		Summary: "Returns the number of timers, leased ones included.", Args: "key", Run: delayLen},
	{Name: "delay.next", Arity: 2, Flags: "readonly fast", Keys: "RO access @1",
		Group: "delay", Since: "0.1.0", Complexity: "O(log(N))",
		Summary: "Returns [member, due] of the earliest timer, or nil.", Args: "key", Run: delayNext},
	{Name: "delay.range", Arity: -4, Flags: "readonly", Keys: "RO access @1",
		Group: "delay", Since: "0.1.0", Complexity: "O(log(N)+M) for M timers returned.",
		Summary: "Returns [member, due] of the timers due in a window of unix times in ms, earliest first.",
		Args:    "key from:integer to:integer [LIMIT (offset_count=offset:integer count:integer)]",
		Run:     delayRange},
}

func delayAdd(c *Ctx) {
	var a engine.DelayAddArgs
	var in, at bool
	p := c.options(3)
	for p.next() {
		switch p.name {
		case "IN":
			if in = true; at {
				p.fail("ERR IN and AT cannot be used together")
				break
			}
			a.Due = c.Eng.Now() + p.millis(0)
		case "AT":
			if at = true; in {
				p.fail("ERR IN and AT cannot be used together")
				break
			}
			a.Due = p.millis(0)
		case "EVERY":
			a.Period = p.millis(1)
		case "PAYLOAD":
			a.Payload, a.HasPayload = p.value(), true
		case "NX":
			a.NX = true
		case "XX":
			a.XX = true
		default:
			p.unknown()
		}
	}
	switch {
	case p.err:
		return
	case !in && !at:
		c.W.Error("ERR DELAY.ADD needs IN or AT")
		return
	case a.NX && a.XX:
		c.W.Error("ERR XX and NX options at the same time are not compatible")
		return
	}
	key := c.Args[1]
	added, written, err := c.DB.DelayAdd(key, c.Args[2], a)
	if err != nil {
		c.Error(err)
		return
	}
	if written {
		c.DB.Notify(engine.NotifyModule, "delay.add", key)
	}
	c.W.Int(b2i(added))
}

func delayTouch(c *Ctx) {
	var failed bool
	ms := c.parseMillis(c.Args[3], "milliseconds", 0, &failed)
	if failed {
		return
	}
	ok, err := c.DB.DelayTouch(c.Args[1], c.Args[2], ms)
	if err != nil {
		c.Error(err)
		return
	}
	if ok {
		c.DB.Notify(engine.NotifyModule, "delay.touch", c.Args[1])
	}
	c.W.Int(b2i(ok))
}

// delayRemoval is DELAY.CANCEL and DELAY.ACK: members in, a count out, an
// event when anything changed and "del" when the key emptied.
func delayRemoval(c *Ctx, event string, op func(key []byte, members [][]byte) (int, bool, error)) {
	key := c.Args[1]
	n, deleted, err := op(key, c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifyModule, event, key)
	}
	if deleted {
		c.DB.Notify(engine.NotifyGeneric, "del", key)
	}
	c.W.Int(int64(n))
}

func delayCancel(c *Ctx) { delayRemoval(c, "delay.cancel", c.DB.DelayCancel) }

func delayAck(c *Ctx) { delayRemoval(c, "delay.ack", c.DB.DelayAck) }

func delayTTL(c *Ctx) {
	ms, err := c.DB.DelayTTL(c.Args[1], c.Args[2])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(ms)
}

func delayPop(c *Ctx) {
	count, lease, block := int64(1), int64(0), int64(-1)
	p := c.options(2)
	for p.next() {
		switch p.name {
		case "COUNT":
			count = p.positive()
		case "BLOCK":
			block = p.millis(0)
		case "LEASE":
			lease = p.millis(1)
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	key := c.Args[1]
	n := int(min(count, math.MaxInt32))
	fired, ok := popDue(c.DB, c.W, key, n, lease)
	if !ok {
		return
	}
	if len(fired) > 0 || block < 0 {
		writeFired(c.W, fired)
		return
	}
	db, w := c.DB, c.W
	c.Conn.Block([][]byte{key}, blockDuration(block), func(key []byte) bool {
		fired, ok := popDue(db, nil, key, n, lease)
		if !ok || len(fired) == 0 {
			return false
		}
		writeFired(w, fired)
		return true
	}, func() { w.NullArray() })
}

// popDue pops due timers and announces them; ok is false after a WRONGTYPE
// error, written to w (or, for a blocked client, not written: it waits on).
func popDue(db *engine.DB, w interface{ Error(string) }, key []byte, count int, lease int64) ([]engine.FiredTimer, bool) {
	fired, deleted, err := db.DelayPop(key, count, lease)
	if err != nil {
		if w != nil {
			w.Error(err.Error())
		}
		return nil, false
	}
	if len(fired) > 0 {
		db.Notify(engine.NotifyModule, "delay.pop", key)
	}
	if deleted {
		db.Notify(engine.NotifyGeneric, "del", key)
	}
	return fired, true
}

func writeFired(w *resp.Writer, fired []engine.FiredTimer) {
	w.Array(len(fired))
	for _, f := range fired {
		w.Array(4)
		w.BulkString(f.Member)
		if f.Payload == nil {
			w.Null()
		} else {
			w.Bulk(f.Payload)
		}
		w.Int(f.Due)
		w.Int(f.Fires)
	}
}

func delayLen(c *Ctx) {
	n, err := c.DB.DelayLen(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(n))
}

func delayNext(c *Ctx) {
	next, ok, err := c.DB.DelayNext(c.Args[1])
	switch {
	case err != nil:
		c.Error(err)
	case !ok:
		c.W.NullArray()
	default:
		writeTimerDues(c, []engine.TimerDue{next}, false)
	}
}

func delayRange(c *Ctx) {
	from, ok1 := parseTimeBound(c.Args[2])
	to, ok2 := parseTimeBound(c.Args[3])
	if !ok1 || !ok2 {
		c.W.Error("ERR value is not an integer or out of range")
		return
	}
	offset, count := int64(0), int64(-1)
	if len(c.Args) > 4 {
		if len(c.Args) != 7 || !is(c.Args[4], "LIMIT") {
			c.SyntaxError()
			return
		}
		var ok bool
		if offset, ok = c.Int64(5); !ok {
			return
		}
		if count, ok = c.Int64(6); !ok {
			return
		}
	}
	items, err := c.DB.DelayRange(c.Args[1], from, to, offset, count)
	if err != nil {
		c.Error(err)
		return
	}
	writeTimerDues(c, items, true)
}

// parseTimeBound reads a DELAY.RANGE bound: an integer, -inf or +inf.
func parseTimeBound(b []byte) (int64, bool) {
	switch {
	case is(b, "-INF"):
		return math.MinInt64, true
	case is(b, "+INF"), is(b, "INF"):
		return math.MaxInt64, true
	}
	return engine.ParseInt(b)
}

// writeTimerDues writes [member, due] pairs, as an array of them when many
// (DELAY.RANGE) or one pair alone (DELAY.NEXT).
func writeTimerDues(c *Ctx, items []engine.TimerDue, many bool) {
	if many {
		c.W.Array(len(items))
	}
	for _, it := range items {
		c.W.Array(2)
		c.W.BulkString(it.Member)
		c.W.Int(it.Due)
	}
}

// delayInfo is INFO delay.
var delayInfo = InfoSection{Name: "delay", Title: "Delay", Fields: func(e *engine.Engine, add func(string, any)) {
	s := e.DelayStats()
	add("delay_keys", s.Keys)
	add("delay_timers_pending", s.Timers-s.Leased)
	add("delay_timers_leased", s.Leased)
	add("delay_fired", s.Fired)
	add("delay_redelivered", s.Redelivered)
	add("delay_acked", s.Acked)
	// How late the latest deliveries went out after their due time.
	add("delay_lateness_samples", s.Lateness.Samples)
	add("delay_lateness_p50_usec", s.Lateness.P50.Microseconds())
	add("delay_lateness_p99_usec", s.Lateness.P99.Microseconds())
	add("delay_lateness_max_usec", s.Lateness.Max.Microseconds())
}}
