package commands

import (
	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/glob"
)

// Sets is the set family.
var Sets = []*Command{
	{Name: "sadd", Arity: -3, Flags: "write denyoom fast", ACL: "set", Keys: "RW insert @1",
		Group: "set", Since: "1.0.0", Complexity: "O(1) per member added.",
		Summary: "Adds members to a set; the set is created if absent.", Args: "key member...", Run: sadd},
	{Name: "srem", Arity: -3, Flags: "write fast", ACL: "set", Keys: "RW delete @1",
		Group: "set", Since: "1.0.0", Complexity: "O(N) where N is the number of members removed.",
		Summary: "Removes members from a set; an emptied set is deleted.", Args: "key member...", Run: srem},
	{Name: "sismember", Arity: 3, Flags: "readonly fast", ACL: "set", Keys: "RO @1",
		Group: "set", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Tells whether a value is a member of a set.", Args: "key member", Run: sismember},
	{Name: "smismember", Arity: -3, Flags: "readonly fast", ACL: "set", Keys: "RO access @1",
		Group: "set", Since: "6.2.0", Complexity: "O(N) where N is the number of values checked.",
		Summary: "Tells, for each of several values, whether it is a member of a set.",
		Args:    "key member...", Run: smismember},
	{Name: "smembers", Arity: 2, Flags: "readonly", ACL: "set", Keys: "RO access @1",
		Tips: "nondeterministic_output_order", Group: "set", Since: "1.0.0",
		Complexity: "O(N) where N is the number of members.",
		Summary:    "Returns every member of a set.", Args: "key", Run: smembers},
	{Name: "scard", Arity: 2, Flags: "readonly fast", ACL: "set", Keys: "RO @1",
		Group: "set", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Returns the number of members of a set.", Args: "key", Run: scard},
	{Name: "spop", Arity: -2, Flags: "write fast", ACL: "set", Keys: "RW access delete @1",
		Tips: "nondeterministic_output", Group: "set", Since: "1.0.0",
		Complexity: "O(1) without a count, else O(N) where N is the count.",
		Summary:    "Removes and returns random members of a set; an emptied set is deleted.",
		Args:       "key [count:integer]", Run: spop},
	{Name: "srandmember", Arity: -2, Flags: "readonly", ACL: "set", Keys: "RO access @1",
		Tips: "nondeterministic_output", Group: "set", Since: "1.0.0",
		Complexity: "O(1) without a count, else O(N) where N is the absolute value of the count.",
		Summary:    "Returns random members of a set (a negative count allows repeats).",
		Args:       "key [count:integer]", Run: srandmember},
	{Name: "smove", Arity: 4, Flags: "write fast", ACL: "set", Keys: "RW access delete @1;RW insert @2",
		Group: "set", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Moves a member from one set to another.",
		Args:    "source:key destination:key member", Run: smove},
	{Name: "sinter", Arity: -2, Flags: "readonly", ACL: "set", Keys: "RO access @1..-1",
		Tips: "nondeterministic_output_order", Group: "set", Since: "1.0.0",
		Complexity: "O(N*M) worst case, N being the size of the smallest set and M the number of sets.",
		Summary:    "Returns the intersection of sets.", Args: "key...", Run: sinter},
	{Name: "sintercard", Arity: -3, Flags: "readonly", ACL: "set", Keys: "RO access @1 #0,1,1",
		Group: "set", Since: "7.0.0",
		Complexity: "O(N*M) worst case, N being the size of the smallest set and M the number of sets.",
		Summary:    "Returns the size of the intersection of sets, optionally counting only up to a limit.",
		Args:       "numkeys:integer key... [LIMIT limit:integer]", Run: sintercard},
	{Name: "sinterstore", Arity: -3, Flags: "write denyoom", ACL: "set", Keys: "RW update @1;RO access @2..-1",
		Group: "set", Since: "1.0.0",
		Complexity: "O(N*M) worst case, N being the size of the smallest set and M the number of sets.",
		Summary:    "Stores the intersection of sets in a key, replacing it.",
		Args:       "destination:key key...", Run: sinterstore},
	{Name: "sunion", Arity: -2, Flags: "readonly", ACL: "set", Keys: "RO access @1..-1",
		Tips: "nondeterministic_output_order", Group: "set", Since: "1.0.0",
		Complexity: "O(N) where N is the total number of members of the sets.",
		Summary:    "Returns the union of sets.", Args: "key...", Run: sunion},
	{Name: "sunionstore", Arity: -3, Flags: "write denyoom", ACL: "set", Keys: "OW update @1;RO access @2..-1",
		Group: "set", Since: "1.0.0", Complexity: "O(N) where N is the total number of members of the sets.",
		Summary: "Stores the union of sets in a key, replacing it.",
		Args:    "destination:key key...", Run: sunionstore},
	{Name: "sdiff", Arity: -2, Flags: "readonly", ACL: "set", Keys: "RO access @1..-1",
		Tips: "nondeterministic_output_order", Group: "set", Since: "1.0.0",
		Complexity: "O(N) where N is the total number of members of the sets.",
		Summary:    "Returns the members of the first set that are in none of the others.", Args: "key...", Run: sdiff},
	{Name: "sdiffstore", Arity: -3, Flags: "write denyoom", ACL: "set", Keys: "OW update @1;RO access @2..-1",
		Group: "set", Since: "1.0.0", Complexity: "O(N) where N is the total number of members of the sets.",
		Summary: "Stores the difference of sets in a key, replacing it.",
		Args:    "destination:key key...", Run: sdiffstore},
	{Name: "sscan", Arity: -3, Flags: "readonly", ACL: "set", Keys: "RO access @1",
		Tips: "nondeterministic_output", Group: "set", Since: "2.8.0",
		Complexity: "O(1) for every call, O(N) for a complete iteration.",
		Summary:    "Iterates over the members of a set.",
		Args:       "key cursor:integer [MATCH pattern:pattern] [COUNT count:integer]", Run: sscan},
}

func sadd(c *Ctx) {
	n, err := c.DB.SAdd(c.Args[1], c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifySet, "sadd", c.Args[1])
	}
	c.W.Int(int64(n))
}

func srem(c *Ctx) {
	n, removed, err := c.DB.SRem(c.Args[1], c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifySet, "srem", c.Args[1])
		if removed {
			c.DB.Notify(engine.NotifyGeneric, "del", c.Args[1])
		}
	}
	c.W.Int(int64(n))
}

// readSet looks the key of argument 1 up for reading, writing the error
// reply for a key of another type.
func (c *Ctx) readSet() (*engine.Set, bool) {
	s, err := c.DB.ReadSet(c.Args[1])
	if err != nil {
		c.Error(err)
		return nil, false
	}
	return s, true
}

func sismember(c *Ctx) {
	s, ok := c.readSet()
	if !ok {
		return
	}
	if s != nil && s.Has(c.Args[2]) {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

func smismember(c *Ctx) {
	s, ok := c.readSet()
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		if s != nil && s.Has(m) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	}
}

func smembers(c *Ctx) {
	s, ok := c.readSet()
	if !ok {
		return
	}
	if s == nil {
		c.W.Set(0)
		return
	}
	c.W.Set(s.Len())
	s.Each(func(m []byte) { c.W.Bulk(m) })
}

func scard(c *Ctx) {
	s, ok := c.readSet()
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.Len()))
}

func spop(c *Ctx) {
	switch {
	case len(c.Args) == 3:
		spopCount(c)
		return
	case len(c.Args) > 3:
		c.SyntaxError()
		return
	}
	m, removed, err := c.DB.SPop(c.Args[1])
	switch {
	case err != nil:
		c.Error(err)
	case m == nil:
		c.W.Null()
	default:
		c.DB.Notify(engine.NotifySet, "spop", c.Args[1])
		if removed {
			c.DB.Notify(engine.NotifyGeneric, "del", c.Args[1])
		}
		c.PropagateAs(argSREM, c.Args[1], m) // the member chance chose
		c.W.Bulk(m)
	}
}

func spopCount(c *Ctx) {
	count, ok := engine.ParseInt(c.Args[2])
	if !ok || count < 0 {
		c.W.Error("ERR value is out of range, must be positive")
		return
	}
	r, err := c.DB.SPopCount(c.Args[1], count)
	if err != nil {
		c.Error(err)
		return
	}
	if !r.Found || count == 0 {
		c.W.Set(0)
		return
	}
	c.DB.Notify(engine.NotifySet, "spop", c.Args[1])
	if r.KeyRemoved {
		c.DB.Notify(engine.NotifyGeneric, "del", c.Args[1])
		c.PropagateAs(argDEL, c.Args[1])
	} else {
		for _, m := range r.Members {
			c.PropagateAs(argSREM, c.Args[1], m)
		}
	}
	c.W.Set(len(r.Members))
	for _, m := range r.Members {
		c.W.Bulk(m)
	}
}

func srandmember(c *Ctx) {
	switch {
	case len(c.Args) > 3:
		c.SyntaxError()
		return
	case len(c.Args) == 2:
		s, ok := c.readSet()
		if !ok {
			return
		}
		if s == nil {
			c.W.Null()
			return
		}
		c.W.Bulk(s.Random(nil))
		return
	}
	count, ok := c.randCountArg(2)
	if !ok {
		return
	}
	s, ok := c.readSet()
	if !ok {
		return
	}
	if s == nil || count == 0 {
		c.W.Array(0)
		return
	}
	write := func(m []byte) { c.W.Bulk(m) }
	switch size := int64(s.Len()); {
	case count < 0 || count == 1:
		c.W.Array(int(max(count, -count)))
		s.RandomRepeat(max(count, -count), write)
	case count >= size:
		c.W.Array(int(size))
		s.Each(write)
	default:
		c.W.Array(int(count))
		s.RandomDistinct(int(count), write)
	}
}

func smove(c *Ctx) {
	moved, err := c.DB.SMove(c.Args[1], c.Args[2], c.Args[3])
	switch {
	case err != nil:
		c.Error(err)
	case moved:
		c.W.Int(1)
	default:
		c.W.Int(0)
	}
}

func sinter(c *Ctx) {
	members, err := c.DB.SInter(c.Args[1:])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Set(len(members))
	for _, m := range members {
		c.W.Bulk(m)
	}
}

func sintercard(c *Ctx) {
	numkeys, ok := engine.ParseInt(c.Args[1])
	if !ok || numkeys < 1 {
		c.W.Error("ERR numkeys should be greater than 0")
		return
	}
	if numkeys > int64(len(c.Args)-2) {
		c.W.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	var limit int64
	for j := 2 + int(numkeys); j < len(c.Args); j++ {
		if !is(c.Args[j], "LIMIT") || j+1 >= len(c.Args) {
			c.SyntaxError()
			return
		}
		j++
		n, ok := engine.ParseInt(c.Args[j])
		if !ok || n < 0 {
			c.W.Error("ERR LIMIT can't be negative")
			return
		}
		limit = n
	}
	n, err := c.DB.SInterCard(c.Args[2:2+numkeys], limit)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(n)
}

// setStoreReply finishes a *STORE command: the event for a stored result,
// or "del" when an empty result deleted the destination.
func setStoreReply(c *Ctx, event string, n int, deleted bool, err error) {
	if err != nil {
		c.Error(err)
		return
	}
	dst := c.Args[1]
	if n > 0 {
		c.DB.Notify(engine.NotifySet, event, dst)
	} else if deleted {
		c.DB.Notify(engine.NotifyGeneric, "del", dst)
	}
	c.W.Int(int64(n))
}

func sinterstore(c *Ctx) {
	n, deleted, err := c.DB.SInterStore(c.Args[1], c.Args[2:])
	setStoreReply(c, "sinterstore", n, deleted, err)
}

func sunion(c *Ctx) { setUnionDiff(c, false) }
func sdiff(c *Ctx)  { setUnionDiff(c, true) }

func setUnionDiff(c *Ctx, diff bool) {
	res, err := c.DB.SUnionDiff(c.Args[1:], diff)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Set(res.Len())
	res.Each(func(m []byte) { c.W.Bulk(m) })
}

func sunionstore(c *Ctx) {
	n, deleted, err := c.DB.SUnionDiffStore(c.Args[1], c.Args[2:], false)
	setStoreReply(c, "sunionstore", n, deleted, err)
}

func sdiffstore(c *Ctx) {
	n, deleted, err := c.DB.SUnionDiffStore(c.Args[1], c.Args[2:], true)
	setStoreReply(c, "sdiffstore", n, deleted, err)
}

func sscan(c *Ctx) {
	var s *engine.Set
	cursor, o, ok := c.beginElementScan(func() (bool, bool) {
		var ok bool
		s, ok = c.readSet()
		return s != nil, ok
	})
	if !ok {
		return
	}
	var elems [][]byte
	var arena []byte
	next := s.Scan(cursor, o.count, func(m []byte) {
		if o.hasMatch && !glob.MatchBytes(o.match, m) {
			return
		}
		// Intset members are formatted into a scratch buffer: copy.
		start := len(arena)
		arena = append(arena, m...)
		elems = append(elems, arena[start:len(arena):len(arena)])
	})
	c.elementScanReply(next, elems)
}
