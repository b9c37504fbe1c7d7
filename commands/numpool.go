package commands

import (
	"strconv"
	"strings"

	"github.com/revolver-db/revolver/engine"
)

// Numpool is the NUMPOOL family: a pool of numbers, each moved through
// SPEC.md §2's state table by atomic events, with picks by policy and tag,
// call leases and call tokens (engine.Numpool). Seed 003 and issue 23 are
// the contract.
//
// Only NUMPOOL.ADD is denyoom: under maxmemory a pool must still let calls
// hang up and numbers go (an event's add grows it by one number at most).
var Numpool = []*Command{
	{Name: "numpool.event", Arity: -3, Flags: "write fast", Keys: "RW update @1",
		Group: "numpool", Since: "0.3.0", Complexity: "O(log(N))",
		Summary: "Applies an event (add, del, reg, unreg, call, hangup) to a number and replies its new state; call " +
			"without a number takes an idle+up one by policy and replies [number, call token], or nil when none is free.",
		Args: "key (event=ADD|DEL|REG|UNREG|CALL|HANGUP) [number] [POLICY (policy=FIFO|LRU|RANDOM)] " +
			"[LEASE milliseconds:integer] [TAG tag] [TOKEN token:integer]",
		Run: numpoolEvent},
	{Name: "numpool.add", Arity: -3, Flags: "write denyoom", Keys: "RW insert @1",
		Group: "numpool", Since: "0.3.0", Complexity: "O(M*log(N)) for M numbers.",
		Summary: "Adds numbers to a pool, idle+down, and tags them (new or not) with TAG; returns how many were new.",
		Args:    "key number... [TAG tag]", Run: numpoolAdd},
	{Name: "numpool.reg", Arity: -3, Flags: "write", Keys: "RW update @1",
		Group: "numpool", Since: "0.3.0", Complexity: "O(M*log(N)) for M numbers.",
		Summary: "Registers numbers (down to up); returns how many changed. Any number not in the pool refuses it all.",
		Args:    "key number...", Run: func(c *Ctx) { numpoolReg(c, true) }},
	{Name: "numpool.unreg", Arity: -3, Flags: "write", Keys: "RW update @1",
		Group: "numpool", Since: "0.3.0", Complexity: "O(M*log(N)) for M numbers.",
		Summary: "Unregisters numbers (up to down); returns how many changed. Any number not in the pool refuses it all.",
		Args:    "key number...", Run: func(c *Ctx) { numpoolReg(c, false) }},
	{Name: "numpool.state", Arity: 3, Flags: "readonly fast", Keys: "RO access @1",
		Group: "numpool", Since: "0.3.0", Complexity: "O(1)",
		Summary: "Describes a number: state, tags, calls, last call's start and end, lease left, call token; nil " +
			"when it is not in the pool.",
		Args: "key number", Run: numpoolState},
	{Name: "numpool.info", Arity: 2, Flags: "readonly fast", Keys: "RO access @1",
		Group: "numpool", Since: "0.3.0", Complexity: "O(T) for T tags.",
		Summary: "Returns the numbers per state, in the pool and per tag, the calls made and the calls leases hung up.",
		Args:    "key", Run: numpoolInfo},
	{Name: "numpool.list", Arity: -2, Flags: "readonly", Keys: "RO access @1",
		Group: "numpool", Since: "0.3.0", Complexity: "O(1) for every call. O(N) for a complete iteration.",
		Summary: "Iterates over a pool's numbers as SCAN does, as [cursor, [number, state, ...]], filtered by STATE and TAG.",
		Args:    "key [STATE state] [TAG tag] [CURSOR cursor:integer] [COUNT count:integer]", Run: numpoolList},
}

// numpoolOption reports whether arg names one of NUMPOOL.EVENT's options:
// call's optional number is the argument after the event unless it does.
func numpoolOption(arg []byte) bool {
	switch strings.ToUpper(string(arg)) {
	case "POLICY", "LEASE", "TAG", "TOKEN":
		return true
	}
	return false
}

func numpoolEvent(c *Ctx) {
	ev, ok := engine.ParseNumEvent(c.Args[2])
	if !ok {
		c.W.Error("ERR unknown numpool event '" + string(c.Args[2]) + "' (add, del, reg, unreg, call, hangup)")
		return
	}
	var a engine.NumEventArgs
	opts := 3
	if len(c.Args) > 3 && (ev != engine.NumCall || !numpoolOption(c.Args[3])) {
		a.Number, a.HasNumber = c.Args[3], true
		opts = 4
	}
	if !a.HasNumber && ev != engine.NumCall {
		c.W.Error("ERR numpool event '" + ev.String() + "' needs a number")
		return
	}
	p := c.options(opts)
	for p.next() {
		switch p.name {
		case "POLICY":
			a.Policy = numpoolPolicy(p)
			if ev != engine.NumCall || a.HasNumber {
				p.fail("ERR POLICY is only for call without a number")
			}
		case "LEASE":
			a.Lease = p.millis(1)
			if ev != engine.NumCall {
				p.fail("ERR LEASE is only for call")
			}
		case "TAG":
			a.Tag, a.HasTag = string(p.value()), true
			if ev != engine.NumAdd && (ev != engine.NumCall || a.HasNumber) {
				p.fail("ERR TAG is only for add and for call without a number")
			}
		case "TOKEN":
			a.Token, a.HasToken = uint64(p.atLeast(0)), true
			if ev != engine.NumHangup {
				p.fail("ERR TOKEN is only for hangup")
			}
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	key := c.Args[1]
	res, err := c.DB.NumpoolEvent(key, ev, a)
	switch {
	case err != nil:
		c.Error(err)
		return
	case ev == engine.NumCall && res.Number == "":
		c.W.NullArray()
		return
	case ev == engine.NumCall:
		c.W.Array(2)
		c.W.BulkString(res.Number)
		c.W.Int(int64(res.Token))
	default:
		c.W.Simple(res.State.String())
	}
	if res.Changed {
		c.DB.Notify(engine.NotifyModule, "numpool."+ev.String(), key)
	}
}

func numpoolPolicy(p *optionParser) engine.Policy {
	v := p.value()
	switch strings.ToUpper(string(v)) {
	case "LRU":
		return engine.PolicyLRU
	case "FIFO":
		return engine.PolicyFIFO
	case "RANDOM":
		return engine.PolicyRandom
	}
	if !p.err {
		p.fail("ERR POLICY must be fifo, lru or random")
	}
	return 0
}

// numpoolNumbers splits NUMPOOL.ADD's arguments from 2 on into the numbers
// and the options after them.
func numpoolNumbers(c *Ctx, options ...string) (nums [][]byte, opts int) {
	for i := 2; i < len(c.Args); i++ {
		for _, o := range options {
			if strings.EqualFold(string(c.Args[i]), o) {
				return c.Args[2:i], i
			}
		}
	}
	return c.Args[2:], len(c.Args)
}

func numpoolAdd(c *Ctx) {
	nums, opts := numpoolNumbers(c, "TAG")
	var tags []string
	p := c.options(opts)
	for p.next() {
		switch p.name {
		case "TAG":
			tags = append(tags, string(p.value()))
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	if len(nums) == 0 {
		c.W.Error("ERR numpool.add needs at least one number")
		return
	}
	key := c.Args[1]
	added, changed, err := c.DB.NumpoolAdd(key, nums, tags)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(added))
	if changed {
		c.DB.Notify(engine.NotifyModule, "numpool.add", key)
	}
}

func numpoolReg(c *Ctx, up bool) {
	key := c.Args[1]
	changed, err := c.DB.NumpoolReg(key, c.Args[2:], up)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(changed))
	if changed > 0 {
		event := "numpool.unreg"
		if up {
			event = "numpool.reg"
		}
		c.DB.Notify(engine.NotifyModule, event, key)
	}
}

func numpoolState(c *Ctx) {
	info, ok, err := c.DB.NumpoolState(c.Args[1], c.Args[2])
	switch {
	case err != nil:
		c.Error(err)
		return
	case !ok:
		c.W.Null()
		return
	}
	w := c.W
	w.Map(7)
	w.BulkString("state")
	w.BulkString(info.State.String())
	w.BulkString("tags")
	w.Array(len(info.Tags))
	for _, t := range info.Tags {
		w.BulkString(t)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"calls", info.Calls}, {"call-start", info.CallStart}, {"call-end", info.CallEnd},
		{"lease-left", info.LeaseLeft}, {"token", int64(info.Token)}} {
		w.BulkString(f.name)
		w.Int(f.v)
	}
}

func numpoolInfo(c *Ctx) {
	s, err := c.DB.NumpoolInfo(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	w := c.W
	w.Map(8)
	w.BulkString("numbers")
	w.Int(s.Numbers)
	writeNumCounts(c, s.Counts)
	w.BulkString("calls")
	w.Int(s.Calls)
	w.BulkString("lease-hangups")
	w.Int(s.LeaseEnds)
	w.BulkString("tags")
	w.Map(len(s.Tags))
	for _, t := range s.Tags {
		w.BulkString(t.Tag)
		w.Map(len(engine.NumStates))
		writeNumCounts(c, t.Counts)
	}
}

// writeNumCounts writes one pair per state: its name and its count.
func writeNumCounts(c *Ctx, counts [5]int64) {
	for _, st := range engine.NumStates {
		c.W.BulkString(st.String())
		c.W.Int(counts[st])
	}
}

func numpoolList(c *Ctx) {
	var state engine.NumState
	var tag string
	var hasTag bool
	cursor, count := uint64(0), int64(10)
	p := c.options(2)
	for p.next() {
		switch p.name {
		case "STATE":
			v := p.value()
			st, ok := engine.ParseNumState(v)
			if !ok && !p.err {
				p.fail("ERR STATE must be idle+up, idle+down, busy+up or busy+down")
			}
			state = st
		case "TAG":
			tag, hasTag = string(p.value()), true
		case "CURSOR":
			v := p.value()
			n, ok := parseCursor(v)
			if !ok && !p.err {
				p.fail("ERR invalid cursor")
			}
			cursor = n
		case "COUNT":
			count = p.positive()
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	next, items, err := c.DB.NumpoolList(c.Args[1], cursor, int(count), state, tag, hasTag)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Array(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.Array(2 * len(items))
	for _, it := range items {
		c.W.BulkString(it.Number)
		c.W.BulkString(it.State.String())
	}
}

// numpoolInfoSection is INFO numpool.
var numpoolInfoSection = InfoSection{Name: "numpool", Title: "Numpool", Fields: func(e *engine.Engine, add func(string, any)) {
	s := e.NumpoolStats()
	add("numpool_keys", s.Keys)
	add("numpool_idle_up", s.Counts[engine.NumIdleUp])
	add("numpool_idle_down", s.Counts[engine.NumIdleDown])
	add("numpool_busy_up", s.Counts[engine.NumBusyUp])
	add("numpool_busy_down", s.Counts[engine.NumBusyDown])
	add("numpool_calls", s.Calls)
	add("numpool_hangups", s.Hangups)
	add("numpool_lease_hangups", s.LeaseEnds)
	add("numpool_calls_none_free", s.NoneFree)
}}
