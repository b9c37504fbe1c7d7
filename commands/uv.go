package commands

import (
	"github.com/revolver-db/revolver/engine"
)

// UV is the unique-counter family: exact distinct counts up to
// uv-exact-max members, a HyperLogLog estimate above (engine.UV).
var UV = []*Command{
	{Name: "uv.add", Arity: -3, Flags: "write denyoom fast", Keys: "RW insert @1",
		Group: "uv", Since: "0.1.0",
		Complexity: "O(1) for every member added, O(M) once when M members turn into a HyperLogLog.",
		Summary:    "Adds members to a unique counter (created if absent); 1 when the count may have changed, else 0.",
		Args:       "key member...", Run: uvAdd},
	{Name: "uv.count", Arity: -2, Flags: "readonly", Keys: "RO access @1..-1",
		Group: "uv", Since: "0.1.0",
		Complexity: "O(1) for one key; O(N) with N the members or registers of the counters for several.",
		Summary:    "Returns the number of distinct members of a unique counter, or of the union of several.",
		Args:       "key...", Run: uvCount},
	{Name: "uv.merge", Arity: -3, Flags: "write denyoom", Keys: "RW access insert @1;RO access @2..-1",
		Group: "uv", Since: "0.1.0", Complexity: "O(N) with N the members or registers of the counters.",
		Summary: "Stores the union of unique counters (the destination's own members included) in the destination.",
		Args:    "destkey:key sourcekey:key...", Run: uvMerge},
}

func uvAdd(c *Ctx) {
	changed, err := c.DB.UVAdd(c.Args[1], c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	if changed {
		c.DB.Notify(engine.NotifyModule, "uv.add", c.Args[1])
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

func uvCount(c *Ctx) {
	n, err := c.DB.UVCount(c.Args[1:])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(n)
}

func uvMerge(c *Ctx) {
	if err := c.DB.UVMerge(c.Args[1:]); err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyModule, "uv.merge", c.Args[1])
	c.W.OK()
}
