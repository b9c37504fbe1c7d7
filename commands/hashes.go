package commands

import (
	"strconv"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/glob"
)

// Hashes is the hash family.
var Hashes = []*Command{
	{Name: "hset", Arity: -4, Flags: "write denyoom fast", ACL: "hash", Keys: "RW update @1",
		Group: "hash", Since: "2.0.0", Complexity: "O(1) per field/value pair.",
		Summary: "Sets fields of a hash to values; the hash is created if absent.",
		Args:    "key (field_value=field value)...", Run: hset},
	{Name: "hmset", Arity: -4, Flags: "write denyoom fast", ACL: "hash", Keys: "RW update @1",
		Group: "hash", Since: "2.0.0", Complexity: "O(N) where N is the number of fields set.",
		DocFlags: "deprecated", Deprecated: "4.0.0", ReplacedBy: "`HSET` with several field-value pairs",
		Summary: "Sets fields of a hash to values (replies OK).",
		Args:    "key (field_value=field value)...", Run: hset},
	{Name: "hsetnx", Arity: 4, Flags: "write denyoom fast", ACL: "hash", Keys: "RW insert @1",
		Group: "hash", Since: "2.0.0", Complexity: "O(1)",
		Summary: "Sets a field of a hash only when the field does not exist yet.",
		Args:    "key field value", Run: hsetnx},
	{Name: "hget", Arity: 3, Flags: "readonly fast", ACL: "hash", Keys: "RO access @1",
		Group: "hash", Since: "2.0.0", Complexity: "O(1)",
		Summary: "Returns the value of a field of a hash.", Args: "key field", Run: hget},
	{Name: "hmget", Arity: -3, Flags: "readonly fast", ACL: "hash", Keys: "RO access @1",
		Group: "hash", Since: "2.0.0", Complexity: "O(N) where N is the number of fields asked for.",
		Summary: "Returns the values of several fields of a hash.", Args: "key field...", Run: hmget},
	{Name: "hdel", Arity: -3, Flags: "write fast", ACL: "hash", Keys: "RW delete @1",
		Group: "hash", Since: "2.0.0", Complexity: "O(N) where N is the number of fields removed.",
		Summary: "Removes fields from a hash; an emptied hash is deleted.", Args: "key field...", Run: hdel},
	{Name: "hexists", Arity: 3, Flags: "readonly fast", ACL: "hash", Keys: "RO @1",
		Group: "hash", Since: "2.0.0", Complexity: "O(1)",
		Summary: "Tells whether a field exists in a hash.", Args: "key field", Run: hexists},
	{Name: "hlen", Arity: 2, Flags: "readonly fast", ACL: "hash", Keys: "RO @1",
		Group: "hash", Since: "2.0.0", Complexity: "O(1)",
		Summary: "Returns the number of fields of a hash.", Args: "key", Run: hlen},
	{Name: "hstrlen", Arity: 3, Flags: "readonly fast", ACL: "hash", Keys: "RO @1",
		Group: "hash", Since: "3.2.0", Complexity: "O(1)",
		Summary: "Returns the length of the value of a field of a hash.", Args: "key field", Run: hstrlen},
	{Name: "hkeys", Arity: 2, Flags: "readonly", ACL: "hash", Keys: "RO access @1",
		Tips: "nondeterministic_output_order", Group: "hash", Since: "2.0.0",
		Complexity: "O(N) where N is the number of fields.",
		Summary:    "Returns the fields of a hash.", Args: "key", Run: hkeys},
	{Name: "hvals", Arity: 2, Flags: "readonly", ACL: "hash", Keys: "RO access @1",
		Tips: "nondeterministic_output_order", Group: "hash", Since: "2.0.0",
		Complexity: "O(N) where N is the number of fields.",
		Summary:    "Returns the values of a hash.", Args: "key", Run: hvals},
	{Name: "hgetall", Arity: 2, Flags: "readonly", ACL: "hash", Keys: "RO access @1",
		Tips: "nondeterministic_output_order", Group: "hash", Since: "2.0.0",
		Complexity: "O(N) where N is the number of fields.",
		Summary:    "Returns every field of a hash with its value.", Args: "key", Run: hgetall},
	{Name: "hincrby", Arity: 4, Flags: "write denyoom fast", ACL: "hash", Keys: "RW access update @1",
		Group: "hash", Since: "2.0.0", Complexity: "O(1)",
		Summary: "Adds an integer to the integer value of a field of a hash; a missing field counts as 0.",
		Args:    "key field increment:integer", Run: hincrby},
	{Name: "hincrbyfloat", Arity: 4, Flags: "write denyoom fast", ACL: "hash", Keys: "RW access update @1",
		Group: "hash", Since: "2.6.0", Complexity: "O(1)",
		Summary: "Adds a floating point number to the value of a field of a hash; a missing field counts as 0.",
		Args:    "key field increment:double", Run: hincrbyfloat},
	{Name: "hrandfield", Arity: -2, Flags: "readonly", ACL: "hash", Keys: "RO access @1",
		Tips: "nondeterministic_output", Group: "hash", Since: "6.2.0",
		Complexity: "O(N) where N is the number of fields returned.",
		Summary:    "Returns random fields of a hash, optionally with their values.",
		Args:       "key [options=count:integer [WITHVALUES]]", Run: hrandfield},
	{Name: "hscan", Arity: -3, Flags: "readonly", ACL: "hash", Keys: "RO access @1",
		Tips: "nondeterministic_output", Group: "hash", Since: "2.8.0",
		Complexity: "O(1) for every call, O(N) for a complete iteration.",
		Summary:    "Iterates over the fields and values of a hash.",
		Args:       "key cursor:integer [MATCH pattern:pattern] [COUNT count:integer]", Run: hscan},
}

func hset(c *Ctx) {
	if len(c.Args)%2 == 1 {
		c.W.Error("ERR wrong number of arguments for '" + c.Cmd.FullName() + "' command")
		return
	}
	n, err := c.DB.HSet(c.Args[1], c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyHash, "hset", c.Args[1])
	if c.Cmd.Name == "hmset" {
		c.W.OK()
		return
	}
	c.W.Int(int64(n))
}

func hsetnx(c *Ctx) {
	ok, err := c.DB.HSetNX(c.Args[1], c.Args[2], c.Args[3])
	switch {
	case err != nil:
		c.Error(err)
	case ok:
		c.DB.Notify(engine.NotifyHash, "hset", c.Args[1])
		c.W.Int(1)
	default:
		c.W.Int(0)
	}
}

// readHash looks the key of argument 1 up for reading, writing the error
// reply for a key of another type.
func (c *Ctx) readHash() (*engine.Hash, bool) {
	h, err := c.DB.ReadHash(c.Args[1])
	if err != nil {
		c.Error(err)
		return nil, false
	}
	return h, true
}

func hget(c *Ctx) {
	h, ok := c.readHash()
	if !ok {
		return
	}
	if h == nil {
		c.W.Null()
		return
	}
	if v, found := h.Get(c.Args[2]); found {
		c.W.Bulk(v)
		return
	}
	c.W.Null()
}

func hmget(c *Ctx) {
	h, ok := c.readHash()
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, f := range c.Args[2:] {
		if h == nil {
			c.W.Null()
		} else if v, found := h.Get(f); found {
			c.W.Bulk(v)
		} else {
			c.W.Null()
		}
	}
}

func hdel(c *Ctx) {
	n, removed, err := c.DB.HDel(c.Args[1], c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifyHash, "hdel", c.Args[1])
		if removed {
			c.DB.Notify(engine.NotifyGeneric, "del", c.Args[1])
		}
	}
	c.W.Int(int64(n))
}

func hexists(c *Ctx) {
	h, ok := c.readHash()
	if !ok {
		return
	}
	if h != nil && h.Has(c.Args[2]) {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

func hlen(c *Ctx) {
	h, ok := c.readHash()
	if !ok {
		return
	}
	if h == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(h.Len()))
}

func hstrlen(c *Ctx) {
	h, ok := c.readHash()
	if !ok {
		return
	}
	var n int
	if h != nil {
		v, _ := h.Get(c.Args[2])
		n = len(v)
	}
	c.W.Int(int64(n))
}

func hkeys(c *Ctx)   { hashDump(c, true, false) }
func hvals(c *Ctx)   { hashDump(c, false, true) }
func hgetall(c *Ctx) { hashDump(c, true, true) }

// hashDump is HKEYS, HVALS and HGETALL (a map in RESP3).
func hashDump(c *Ctx, fields, values bool) {
	h, ok := c.readHash()
	if !ok {
		return
	}
	n := 0
	if h != nil {
		n = h.Len()
	}
	if fields && values {
		c.W.Map(n)
	} else {
		c.W.Array(n)
	}
	if h == nil {
		return
	}
	h.Each(func(f, v []byte) {
		if fields {
			c.W.Bulk(f)
		}
		if values {
			c.W.Bulk(v)
		}
	})
}

func hincrby(c *Ctx) {
	delta, ok := c.Int64(3)
	if !ok {
		return
	}
	n, err := c.DB.HIncrBy(c.Args[1], c.Args[2], delta)
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyHash, "hincrby", c.Args[1])
	c.W.Int(n)
}

func hincrbyfloat(c *Ctx) {
	v, err := c.DB.HIncrByFloat(c.Args[1], c.Args[2], c.Args[3])
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyHash, "hincrbyfloat", c.Args[1])
	c.PropagateAs(argHSET, c.Args[1], c.Args[2], v)
	c.W.Bulk(v)
}

// randCountArg parses the count of HRANDFIELD and SRANDMEMBER: any integer
// but the one whose negation overflows, with Redis's errors.
func (c *Ctx) randCountArg(i int) (int64, bool) {
	n, ok := c.Int64(i)
	if !ok {
		return 0, false
	}
	if n == -maxInt64-1 {
		c.W.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return 0, false
	}
	return n, true
}

func hrandfield(c *Ctx) {
	if len(c.Args) == 2 {
		h, ok := c.readHash()
		if !ok {
			return
		}
		if h == nil {
			c.W.Null()
			return
		}
		f, _ := h.Random()
		c.W.Bulk(f)
		return
	}
	count, ok := c.randCountArg(2)
	if !ok {
		return
	}
	withValues := false
	if len(c.Args) > 4 || (len(c.Args) == 4 && !is(c.Args[3], "WITHVALUES")) {
		c.SyntaxError()
		return
	}
	if len(c.Args) == 4 {
		withValues = true
		if count < -maxInt64/2 || count > maxInt64/2 {
			c.W.Error("ERR value is out of range")
			return
		}
	}
	h, ok := c.readHash()
	if !ok {
		return
	}
	if h == nil || count == 0 {
		c.W.Array(0)
		return
	}
	unique := count > 0
	if !unique {
		count = -count
	}
	n := count
	if unique {
		n = min(count, int64(h.Len()))
	}
	if withValues && !c.W.RESP3() {
		c.W.Array(int(2 * n))
	} else {
		c.W.Array(int(n))
	}
	// RESP3 nests each field with its value; RESP2 flattens them.
	write := func(f, v []byte) {
		if withValues && c.W.RESP3() {
			c.W.Array(2)
		}
		c.W.Bulk(f)
		if withValues {
			c.W.Bulk(v)
		}
	}
	switch {
	case !unique || count == 1:
		h.RandomRepeat(count, write)
	case count >= int64(h.Len()):
		h.Each(write)
	default:
		h.RandomDistinct(int(count), write)
	}
}

// beginElementScan starts HSCAN, SSCAN and ZSCAN: the cursor, then the key
// (looked up before the options are parsed, as in Redis), then the options.
// lookup reports whether the key exists and whether it may be scanned; a
// missing key gets the empty reply here. ok false: a reply was written.
func (c *Ctx) beginElementScan(lookup func() (exists, ok bool)) (cursor uint64, o scanOptions, ok bool) {
	cursor, ok = parseCursor(c.Args[2])
	if !ok {
		c.W.Error("ERR invalid cursor")
		return 0, o, false
	}
	exists, ok := lookup()
	if !ok {
		return 0, o, false
	}
	if !exists {
		c.W.Array(2)
		c.W.BulkString("0")
		c.W.Array(0)
		return 0, o, false
	}
	o, ok = c.parseScanOptions(3, false)
	return cursor, o, ok
}

// elementScanReply writes HSCAN's and SSCAN's [cursor, elements].
func (c *Ctx) elementScanReply(cursor uint64, elems [][]byte) {
	c.W.Array(2)
	var buf [20]byte
	c.W.Bulk(strconv.AppendUint(buf[:0], cursor, 10))
	c.W.Array(len(elems))
	for _, e := range elems {
		c.W.Bulk(e)
	}
}

func hscan(c *Ctx) {
	var h *engine.Hash
	cursor, o, ok := c.beginElementScan(func() (bool, bool) {
		var ok bool
		h, ok = c.readHash()
		return h != nil, ok
	})
	if !ok {
		return
	}
	var elems [][]byte
	next := h.Scan(cursor, o.count, func(f, v []byte) {
		if o.hasMatch && !glob.MatchBytes(o.match, f) {
			return
		}
		elems = append(elems, f, v)
	})
	c.elementScanReply(next, elems)
}
