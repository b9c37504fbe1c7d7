package commands

import (
	"strconv"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/glob"
)

// Keys is the generic key family: it works on values of every type.
var Keys = []*Command{
	{Name: "del", Arity: -2, Flags: "write", ACL: "keyspace", Keys: "RM delete @1..-1",
		Tips: "request_policy:multi_shard;response_policy:agg_sum", Group: "generic", Since: "1.0.0",
		Complexity: "O(N) where N is the number of keys removed.",
		Summary:    "Deletes one or more keys.", Args: "key...", Run: del},
	{Name: "unlink", Arity: -2, Flags: "write fast", ACL: "keyspace", Keys: "RM delete @1..-1",
		Tips: "request_policy:multi_shard;response_policy:agg_sum", Group: "generic", Since: "4.0.0",
		Complexity: "O(1) per key.",
		Summary:    "Deletes one or more keys (memory is reclaimed by the garbage collector).", Args: "key...", Run: unlink},
	{Name: "exists", Arity: -2, Flags: "readonly fast", ACL: "keyspace", Keys: "RO @1..-1",
		Tips: "request_policy:multi_shard;response_policy:agg_sum", Group: "generic", Since: "1.0.0",
		Complexity: "O(N) where N is the number of keys.",
		Summary:    "Counts how many of the given keys exist (a key named twice counts twice).", Args: "key...", Run: exists},
	{Name: "type", Arity: 2, Flags: "readonly fast", ACL: "keyspace", Keys: "RO @1", Group: "generic",
		Since: "1.0.0", Complexity: "O(1)", Summary: "Returns the type of the value stored at a key.", Args: "key", Run: typeCmd},
	{Name: "rename", Arity: 3, Flags: "write", ACL: "keyspace", Keys: "RW access delete @1;OW update @2",
		Group: "generic", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Renames a key, overwriting the destination.", Args: "key newkey:key", Run: rename},
	{Name: "renamenx", Arity: 3, Flags: "write fast", ACL: "keyspace", Keys: "RW access delete @1;OW insert @2",
		Group: "generic", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Renames a key only when the destination does not exist.", Args: "key newkey:key", Run: renamenx},
	{Name: "copy", Arity: -3, Flags: "write denyoom", ACL: "keyspace", Keys: "RO access @1;OW update @2",
		Group: "generic", Since: "6.2.0", Complexity: "O(N) where N is the size of the value.",
		Summary: "Copies the value of a key to a new key.",
		Args:    "source:key destination:key [DB destination-db:integer] [REPLACE]", Run: copyCmd},
	{Name: "move", Arity: 3, Flags: "write fast", ACL: "keyspace", Keys: "RW access update @1",
		Group: "generic", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Moves a key to another database.", Args: "key db:integer", Run: move},
	{Name: "randomkey", Arity: 1, Flags: "readonly", ACL: "keyspace",
		Tips: "request_policy:all_shards;nondeterministic_output", Group: "generic", Since: "1.0.0",
		Complexity: "O(1)", Summary: "Returns a random key name from the database.", Run: randomkey},
	{Name: "keys", Arity: 2, Flags: "readonly", ACL: "keyspace dangerous",
		Tips: "request_policy:all_shards;nondeterministic_output_order", Group: "generic", Since: "1.0.0",
		Complexity: "O(N) where N is the number of keys in the database.",
		Summary:    "Returns all key names that match a pattern.", Args: "pattern:pattern", Run: keysCmd},
	{Name: "scan", Arity: -2, Flags: "readonly", ACL: "keyspace",
		Tips: "nondeterministic_output;request_policy:special", Group: "generic", Since: "2.8.0",
		Complexity: "O(1) for every call, O(N) for a complete iteration.",
		Summary:    "Iterates over the key names in the database.",
		Args:       "cursor:integer [MATCH pattern:pattern] [COUNT count:integer] [TYPE type]", Run: scan},
	{Name: "touch", Arity: -2, Flags: "readonly fast", ACL: "keyspace", Keys: "RO @1..-1",
		Tips: "request_policy:multi_shard;response_policy:agg_sum", Group: "generic", Since: "3.2.1",
		Complexity: "O(N) where N is the number of keys.",
		Summary:    "Refreshes the last access time of keys; returns how many exist.", Args: "key...", Run: touch},
	{Name: "expire", Arity: -3, Flags: "write fast", ACL: "keyspace", Keys: "RW update @1", Group: "generic",
		Since: "1.0.0", Complexity: "O(1)", Summary: "Sets the expiration time of a key in seconds.",
		Args: "key seconds:integer [condition=NX|XX|GT|LT]", Run: expire},
	{Name: "pexpire", Arity: -3, Flags: "write fast", ACL: "keyspace", Keys: "RW update @1", Group: "generic",
		Since: "2.6.0", Complexity: "O(1)", Summary: "Sets the expiration time of a key in milliseconds.",
		Args: "key milliseconds:integer [condition=NX|XX|GT|LT]", Run: pexpire},
	{Name: "expireat", Arity: -3, Flags: "write fast", ACL: "keyspace", Keys: "RW update @1", Group: "generic",
		Since: "1.2.0", Complexity: "O(1)", Summary: "Sets the expiration time of a key to a Unix timestamp in seconds.",
		Args: "key unix-time-seconds:unix-time [condition=NX|XX|GT|LT]", Run: expireat},
	{Name: "pexpireat", Arity: -3, Flags: "write fast", ACL: "keyspace", Keys: "RW update @1", Group: "generic",
		Since: "2.6.0", Complexity: "O(1)", Summary: "Sets the expiration time of a key to a Unix timestamp in milliseconds.",
		Args: "key unix-time-milliseconds:unix-time [condition=NX|XX|GT|LT]", Run: pexpireat},
	{Name: "ttl", Arity: 2, Flags: "readonly fast", ACL: "keyspace", Keys: "RO access @1",
		Tips: "nondeterministic_output", Group: "generic", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Returns the time to live of a key in seconds.", Args: "key", Run: ttl},
	{Name: "pttl", Arity: 2, Flags: "readonly fast", ACL: "keyspace", Keys: "RO access @1",
		Tips: "nondeterministic_output", Group: "generic", Since: "2.6.0", Complexity: "O(1)",
		Summary: "Returns the time to live of a key in milliseconds.", Args: "key", Run: pttl},
	{Name: "expiretime", Arity: 2, Flags: "readonly fast", ACL: "keyspace", Keys: "RO access @1",
		Group: "generic", Since: "7.0.0", Complexity: "O(1)",
		Summary: "Returns the expiration time of a key as a Unix timestamp in seconds.", Args: "key", Run: expiretime},
	{Name: "pexpiretime", Arity: 2, Flags: "readonly fast", ACL: "keyspace", Keys: "RO access @1",
		Group: "generic", Since: "7.0.0", Complexity: "O(1)",
		Summary: "Returns the expiration time of a key as a Unix timestamp in milliseconds.", Args: "key", Run: pexpiretime},
	{Name: "persist", Arity: 2, Flags: "write fast", ACL: "keyspace", Keys: "RW update @1", Group: "generic",
		Since: "2.2.0", Complexity: "O(1)", Summary: "Removes the expiration time of a key.", Args: "key", Run: persist},
	{Name: "object", Arity: -2, Group: "generic", Since: "2.2.3", Complexity: "Depends on subcommand.",
		Summary: "A container for object introspection commands.", Subs: []*Command{
			{Name: "encoding", Arity: 3, Flags: "readonly", ACL: "keyspace", Keys: "RO @2",
				Tips: "nondeterministic_output", Group: "generic", Since: "2.2.3", Complexity: "O(1)",
				Summary: "Returns the internal encoding Redis would use for the value of a key.", Args: "key", Run: objectEncoding},
			{Name: "freq", Arity: 3, Flags: "readonly", ACL: "keyspace", Keys: "RO @2",
				Tips: "nondeterministic_output", Group: "generic", Since: "4.0.0", Complexity: "O(1)",
				Summary: "Returns the logarithmic access frequency counter of a key (LFU policies only).",
				Args:    "key", Run: objectFreq},
			{Name: "help", Arity: 2, Flags: "loading stale", ACL: "keyspace", Group: "generic", Since: "6.2.0",
				Complexity: "O(1)", Summary: "Returns helpful text about the different subcommands.", Run: objectHelp},
			{Name: "idletime", Arity: 3, Flags: "readonly", ACL: "keyspace", Keys: "RO @2",
				Tips: "nondeterministic_output", Group: "generic", Since: "2.2.3", Complexity: "O(1)",
				Summary: "Returns the seconds since the last access to a key.", Args: "key", Run: objectIdletime},
			{Name: "refcount", Arity: 3, Flags: "readonly", ACL: "keyspace", Keys: "RO @2",
				Tips: "nondeterministic_output", Group: "generic", Since: "2.2.3", Complexity: "O(1)",
				Summary: "Returns the reference count of a value.", Args: "key", Run: objectRefcount},
		}},
}

func del(c *Ctx) { deleteKeys(c, false) }

// unlink is DEL whose large values count as freed lazily (INFO's
// lazyfreed_objects), as Redis frees them in the background.
func unlink(c *Ctx) { deleteKeys(c, true) }

func deleteKeys(c *Ctx, unlink bool) {
	var n int64
	for _, k := range c.Args[1:] {
		if c.DB.UserDelete(k, unlink) {
			c.DB.Notify(engine.NotifyGeneric, "del", k)
			n++
		}
	}
	c.W.Int(n)
}

func exists(c *Ctx) {
	var n int64
	for _, k := range c.Args[1:] {
		if c.DB.Lookup(k, engine.LookupNoTouch) != nil {
			n++
		}
	}
	c.W.Int(n)
}

func touch(c *Ctx) {
	var n int64
	for _, k := range c.Args[1:] {
		if c.DB.Read(k) != nil {
			n++
		}
	}
	c.W.Int(n)
}

func typeCmd(c *Ctx) {
	obj := c.DB.Lookup(c.Args[1], engine.LookupNoTouch)
	if obj == nil {
		c.W.Simple("none")
		return
	}
	c.W.Simple(obj.Type().String())
}

func rename(c *Ctx)   { renameGeneric(c, false) }
func renamenx(c *Ctx) { renameGeneric(c, true) }

func renameGeneric(c *Ctx, nx bool) {
	src, dst := c.Args[1], c.Args[2]
	if !c.DB.Exists(src) {
		c.Error(engine.ErrNoSuchKey)
		return
	}
	if string(src) == string(dst) {
		if nx {
			c.W.Int(0)
		} else {
			c.W.OK()
		}
		return
	}
	if nx && c.DB.Exists(dst) {
		c.W.Int(0)
		return
	}
	c.DB.Rename(src, dst)
	c.DB.Notify(engine.NotifyGeneric, "rename_from", src)
	c.DB.Notify(engine.NotifyGeneric, "rename_to", dst)
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

// dbIndex parses a database number, writing Redis's errors.
func (c *Ctx) dbIndex(arg []byte) (*engine.DB, bool) {
	n, ok := engine.ParseInt(arg)
	if !ok {
		c.W.Error("ERR value is not an integer or out of range")
		return nil, false
	}
	if n < -1<<31 || n > 1<<31-1 {
		c.W.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
		return nil, false
	}
	if n < 0 || n >= int64(c.Eng.Databases()) {
		c.W.Error("ERR DB index is out of range")
		return nil, false
	}
	return c.Eng.DB(int(n)), true
}

func copyCmd(c *Ctx) {
	dst := c.DB
	replace := false
	for j := 3; j < len(c.Args); j++ {
		switch a := c.Args[j]; {
		case is(a, "REPLACE"):
			replace = true
		case is(a, "DB") && j+1 < len(c.Args):
			db, ok := c.dbIndex(c.Args[j+1])
			if !ok {
				return
			}
			dst = db
			j++
		default:
			c.SyntaxError()
			return
		}
	}
	src, newKey := c.Args[1], c.Args[2]
	if dst == c.DB && string(src) == string(newKey) {
		c.W.Error("ERR source and destination objects are the same")
		return
	}
	if c.DB.Read(src) == nil {
		c.W.Int(0)
		return
	}
	if !c.DB.CopyTo(src, dst, newKey, replace) {
		c.W.Int(0)
		return
	}
	dst.Notify(engine.NotifyGeneric, "copy_to", newKey)
	c.W.Int(1)
}

func move(c *Ctx) {
	dst, ok := c.dbIndex(c.Args[2])
	if !ok {
		return
	}
	if dst == c.DB {
		c.W.Error("ERR source and destination objects are the same")
		return
	}
	key := c.Args[1]
	if !c.DB.MoveTo(key, dst) {
		c.W.Int(0)
		return
	}
	c.DB.Notify(engine.NotifyGeneric, "move_from", key)
	dst.Notify(engine.NotifyGeneric, "move_to", key)
	c.W.Int(1)
}

func randomkey(c *Ctx) {
	k := c.DB.RandomKey()
	if k == nil {
		c.W.Null()
		return
	}
	c.W.Bulk(k)
}

func keysCmd(c *Ctx) {
	pattern := string(c.Args[1])
	var match func(string) bool
	if pattern != "*" {
		match = func(k string) bool { return glob.Match(pattern, k) }
	}
	var out []string
	c.DB.Keys(match, func(k string) { out = append(out, k) })
	c.W.Array(len(out))
	for _, k := range out {
		c.W.BulkString(k)
	}
}

// parseCursor follows Redis's strtoul-based cursor parsing: an optional
// sign, digits, nothing else; a negative number wraps around.
func parseCursor(b []byte) (uint64, bool) {
	s := string(b)
	if s != "" && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')) {
		return 0, false
	}
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, !neg && len(b) == 0 // strtoul("") parses nothing and succeeds
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// scanOptions are SCAN's MATCH, COUNT and TYPE.
type scanOptions struct {
	match    string
	hasMatch bool
	count    int
	typ      string
	hasType  bool
}

// parseScanOptions parses from argument i on; allowType is false for the
// per-value scans (HSCAN, SSCAN, ZSCAN).
func (c *Ctx) parseScanOptions(i int, allowType bool) (scanOptions, bool) {
	o := scanOptions{count: 10}
	for ; i < len(c.Args); i += 2 {
		a := c.Args[i]
		more := i+1 < len(c.Args)
		switch {
		case is(a, "COUNT") && more:
			n, ok := c.Int64(i + 1)
			if !ok {
				return o, false
			}
			if n < 1 {
				c.SyntaxError()
				return o, false
			}
			if n > 1<<30 {
				n = 1 << 30
			}
			o.count = int(n)
		case is(a, "MATCH") && more:
			o.match = string(c.Args[i+1])
			o.hasMatch = o.match != "*"
		case is(a, "TYPE") && more && allowType:
			o.typ, o.hasType = string(c.Args[i+1]), true
		default:
			c.SyntaxError()
			return o, false
		}
	}
	return o, true
}

func scan(c *Ctx) {
	cursor, ok := parseCursor(c.Args[1])
	if !ok {
		c.W.Error("ERR invalid cursor")
		return
	}
	o, ok := c.parseScanOptions(2, true)
	if !ok {
		return
	}
	// An unknown type name resolves to no type and so matches nothing, as
	// in Redis (no error).
	var typ engine.Type
	if o.hasType {
		typ, _ = engine.TypeByName(o.typ)
	}
	var keys []string
	next := c.DB.Scan(cursor, o.count, func(k string, t engine.Type) {
		if o.hasMatch && !glob.Match(o.match, k) {
			return
		}
		if o.hasType && t != typ {
			return
		}
		keys = append(keys, k)
	})
	c.W.Array(2)
	var buf [20]byte
	c.W.Bulk(strconv.AppendUint(buf[:0], next, 10))
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}

// expireFlags are EXPIRE's NX XX GT LT.
type expireFlags struct{ nx, xx, gt, lt bool }

func expire(c *Ctx)    { expireGeneric(c, c.Eng.Now(), true) }
func pexpire(c *Ctx)   { expireGeneric(c, c.Eng.Now(), false) }
func expireat(c *Ctx)  { expireGeneric(c, 0, true) }
func pexpireat(c *Ctx) { expireGeneric(c, 0, false) }

func expireGeneric(c *Ctx, base int64, seconds bool) {
	var f expireFlags
	for _, a := range c.Args[3:] {
		switch {
		case is(a, "NX"):
			f.nx = true
		case is(a, "XX"):
			f.xx = true
		case is(a, "GT"):
			f.gt = true
		case is(a, "LT"):
			f.lt = true
		default:
			c.W.Error("ERR Unsupported option " + string(a))
			return
		}
	}
	if f.nx && (f.xx || f.gt || f.lt) {
		c.W.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if f.gt && f.lt {
		c.W.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := c.Int64(2)
	if !ok {
		return
	}
	if seconds {
		if when > maxInt64/1000 || when < (-maxInt64-1)/1000 {
			c.expireTimeError()
			return
		}
		when *= 1000
	}
	if when > maxInt64-base {
		c.expireTimeError()
		return
	}
	when += base
	key := c.Args[1]
	cur := c.DB.Expire(key)
	if cur < 0 {
		c.W.Int(0)
		return
	}
	hasTTL := cur != 0
	if (f.nx && hasTTL) || (f.xx && !hasTTL) || (f.gt && (!hasTTL || when <= cur)) || (f.lt && hasTTL && when >= cur) {
		c.W.Int(0)
		return
	}
	c.DB.SetExpire(key, when)
	if when <= c.Eng.Now() {
		c.DB.Notify(engine.NotifyGeneric, "del", key)
		c.propagateDeletion(key, c.Eng.LazyFreeConfig().Expire)
	} else {
		c.DB.Notify(engine.NotifyGeneric, "expire", key)
		if c.replicating() {
			c.PropagateAs(argPEXPIREAT, key, msArg(when))
		}
	}
	c.W.Int(1)
}

func ttl(c *Ctx)         { ttlGeneric(c, false, false) }
func pttl(c *Ctx)        { ttlGeneric(c, true, false) }
func expiretime(c *Ctx)  { ttlGeneric(c, false, true) }
func pexpiretime(c *Ctx) { ttlGeneric(c, true, true) }

func ttlGeneric(c *Ctx, ms, abs bool) {
	if c.DB.Lookup(c.Args[1], engine.LookupNoTouch) == nil {
		c.W.Int(-2)
		return
	}
	at := c.DB.Expire(c.Args[1])
	if at == 0 {
		c.W.Int(-1)
		return
	}
	v := at
	if !abs {
		v = max(at-c.Eng.Now(), 0)
	}
	if !ms {
		// Seconds are rounded to nearest, EXPIRETIME's too.
		v = (v + 500) / 1000
	}
	c.W.Int(v)
}

func persist(c *Ctx) {
	if c.DB.Persist(c.Args[1]) {
		c.DB.Notify(engine.NotifyGeneric, "persist", c.Args[1])
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

// objectLookup finds OBJECT's key the way Redis does: counted as a hit or
// miss, but neither touched nor announced as a keymiss.
func objectLookup(c *Ctx) engine.Object {
	return c.DB.Lookup(c.Args[2], engine.LookupNoTouch|engine.LookupNoNotify)
}

func objectEncoding(c *Ctx) {
	if obj := objectLookup(c); obj != nil {
		c.W.BulkString(obj.Encoding())
		return
	}
	c.W.Null()
}

func objectRefcount(c *Ctx) {
	if obj := objectLookup(c); obj != nil {
		c.W.Int(engine.RefCount(obj))
		return
	}
	c.W.Null()
}

func objectIdletime(c *Ctx) {
	obj := objectLookup(c)
	switch {
	case obj == nil:
		c.W.Null()
	case c.DB.LFUPolicy():
		c.W.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	default:
		c.W.Int(c.DB.IdleTime(obj))
	}
}

func objectFreq(c *Ctx) {
	obj := objectLookup(c)
	switch {
	case obj == nil:
		c.W.Null()
	case !c.DB.LFUPolicy():
		c.W.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	default:
		c.W.Int(c.DB.AccessFrequency(obj))
	}
}

func objectHelp(c *Ctx) {
	writeHelp(c, "OBJECT",
		"ENCODING <key>",
		"    Name the internal representation Redis would use for the value at <key>.",
		"FREQ <key>",
		"    Access frequency of <key> (tracked only under an LFU maxmemory policy).",
		"IDLETIME <key>",
		"    Seconds since <key> was last read or written.",
		"REFCOUNT <key>",
		"    Number of references to the value at <key>.")
}

// writeHelp writes a HELP reply in Redis 7.0's layout (addReplyHelp): a
// header, the lines, and the HELP entry, all as status replies.
func writeHelp(c *Ctx, cmd string, lines ...string) {
	c.W.Array(len(lines) + 3)
	c.W.Simple(cmd + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		c.W.Simple(l)
	}
	c.W.Simple("HELP")
	c.W.Simple("    Prints this help.")
}
