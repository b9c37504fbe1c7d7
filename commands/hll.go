package commands

import (
	"bytes"

	"github.com/revolver-db/revolver/engine"
)

// HyperLogLog is the HyperLogLog family: sketches stored as strings, byte
// for byte Redis 7.0's.
var HyperLogLog = []*Command{
	{Name: "pfadd", Arity: -2, Flags: "write denyoom fast", ACL: "hyperloglog", Keys: "RW insert @1",
		Group: "hyperloglog", Since: "2.8.9", Complexity: "O(1) to add every element.",
		Summary: "Adds elements to a HyperLogLog; the key is created if absent.",
		Args:    "key [element...]", Run: pfadd},
	{Name: "pfcount", Arity: -2, Flags: "readonly may_replicate", ACL: "hyperloglog",
		Keys: "RW access @1..-1 notes=RW because it may change the internal representation of the key, and " +
			"propagate to replicas",
		Group: "hyperloglog", Since: "2.8.9",
		Complexity: "O(1) with a very small average constant time for one key (the cardinality is cached); " +
			"O(N) with N the number of keys, with a much larger constant, for several.",
		Summary: "Returns the approximate number of distinct elements added to HyperLogLogs (of their union " +
			"for several keys).",
		Args: "key...", Run: pfcount},
	{Name: "pfmerge", Arity: -2, Flags: "write denyoom", ACL: "hyperloglog", Keys: "RW access insert @1;RO access @2..-1",
		Group: "hyperloglog", Since: "2.8.9", Complexity: "O(N) to merge N HyperLogLogs, with a large constant.",
		Summary: "Stores the union of HyperLogLogs (the destination's own elements included) in the destination.",
		Args:    "destkey:key sourcekey:key...", Run: pfmerge},
	{Name: "pfdebug", Arity: 3, Flags: "write denyoom admin", ACL: "hyperloglog", Keys: "RW access @2",
		Group: "hyperloglog", Since: "2.8.9", Complexity: "N/A", DocFlags: "syscmd",
		Summary: "Inspects a HyperLogLog's registers and encoding (GETREG, DECODE, ENCODING, TODENSE).",
		Args:    "subcommand key", Run: pfdebug},
	{Name: "pfselftest", Arity: 1, Flags: "admin", ACL: "hyperloglog",
		Group: "hyperloglog", Since: "2.8.9", Complexity: "N/A", DocFlags: "syscmd",
		Summary: "Tests the HyperLogLog implementation: register access and estimation error.", Run: pfselftest},
}

func pfadd(c *Ctx) {
	changed, err := c.DB.PFAdd(c.Args[1], c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	if changed {
		c.DB.Notify(engine.NotifyString, "pfadd", c.Args[1])
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

func pfcount(c *Ctx) {
	n, err := c.DB.PFCount(c.Args[1:])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(n)
}

func pfmerge(c *Ctx) {
	if err := c.DB.PFMerge(c.Args[1:]); err != nil {
		c.Error(err)
		return
	}
	// Redis announces a merge as a PFADD: in effect it adds many elements.
	c.DB.Notify(engine.NotifyString, "pfadd", c.Args[1])
	c.W.OK()
}

// pfdebug looks the key up before it looks at the subcommand, as Redis
// does, so a missing or invalid key wins over an unknown subcommand.
func pfdebug(c *Ctx) {
	// Redis compares the subcommand as a C string: it ends at a NUL byte.
	sub := c.Args[1]
	if i := bytes.IndexByte(sub, 0); i >= 0 {
		sub = sub[:i]
	}
	key := c.Args[2]
	s, err := c.DB.PFDebugKey(key)
	switch {
	case err != nil:
		c.Error(err)
		return
	case s == nil:
		c.W.Error("ERR The specified key does not exist")
		return
	}
	switch {
	case is(sub, "GETREG"):
		regs, err := c.DB.PFDebugRegisters(key, s)
		if err != nil {
			c.Error(err)
			return
		}
		c.W.Array(len(regs))
		for _, r := range regs {
			c.W.Int(int64(r))
		}
	case is(sub, "DECODE"):
		text, ok := engine.HLLDecode(s)
		if !ok {
			c.W.Error("ERR HLL encoding is not sparse")
			return
		}
		c.W.BulkString(text)
	case is(sub, "ENCODING"):
		c.W.Simple(engine.HLLEncoding(s))
	case is(sub, "TODENSE"):
		converted, err := c.DB.PFDebugToDense(key, s)
		if err != nil {
			c.Error(err)
			return
		}
		if converted {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	default:
		c.W.Error("ERR Unknown PFDEBUG subcommand '" + string(sub) + "'")
	}
}

func pfselftest(c *Ctx) {
	if err := c.Eng.HLLSelfTest(); err != nil {
		c.Error(err)
		return
	}
	c.W.OK()
}
