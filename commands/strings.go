package commands

import (
	"github.com/revolver-db/revolver/engine"
)

// Strings is the string family.
var Strings = []*Command{
	{Name: "get", Arity: 2, Flags: "readonly fast", ACL: "string", Keys: "RO access @1",
		Group: "string", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Returns the string value of a key.", Args: "key", Run: get},
	{Name: "set", Arity: -3, Flags: "write denyoom", ACL: "string",
		Keys:  "RW access update variable_flags @1 notes=RW and ACCESS due to the optional `GET` argument",
		Group: "string", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Sets the string value of a key, ignoring its type; the key is created if absent.",
		Args: "key value [condition=NX|XX] [GET] [expiration=EX seconds:integer|PX milliseconds:integer|" +
			"EXAT unix-time-seconds:unix-time|PXAT unix-time-milliseconds:unix-time|KEEPTTL]",
		Run: set},
	{Name: "setnx", Arity: 3, Flags: "write denyoom fast", ACL: "string", Keys: "OW insert @1",
		Group: "string", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Sets the string value of a key only when the key does not exist.", Args: "key value", Run: setnx},
	{Name: "setex", Arity: 4, Flags: "write denyoom", ACL: "string", Keys: "OW update @1",
		Group: "string", Since: "2.0.0", Complexity: "O(1)",
		Summary: "Sets the string value and the expiration time in seconds of a key.",
		Args:    "key seconds:integer value", Run: setex},
	{Name: "psetex", Arity: 4, Flags: "write denyoom", ACL: "string", Keys: "OW update @1",
		Group: "string", Since: "2.6.0", Complexity: "O(1)",
		Summary: "Sets the string value and the expiration time in milliseconds of a key.",
		Args:    "key milliseconds:integer value", Run: psetex},
	{Name: "getset", Arity: 3, Flags: "write denyoom fast", ACL: "string", Keys: "RW access update @1",
		Group: "string", Since: "1.0.0", Complexity: "O(1)", DocFlags: "deprecated", Deprecated: "6.2.0",
		ReplacedBy: "`SET` with the `!GET` argument",
		Summary:    "Returns the previous string value of a key after setting it to a new value.",
		Args:       "key value", Run: getset},
	{Name: "getdel", Arity: 2, Flags: "write fast", ACL: "string", Keys: "RW access delete @1",
		Group: "string", Since: "6.2.0", Complexity: "O(1)",
		Summary: "Returns the string value of a key after deleting the key.", Args: "key", Run: getdel},
	{Name: "getex", Arity: -2, Flags: "write fast", ACL: "string",
		Keys:  "RW access update @1 notes=RW and UPDATE because it changes the TTL",
		Group: "string", Since: "6.2.0", Complexity: "O(1)",
		Summary: "Returns the string value of a key after setting its expiration time.",
		Args: "key [expiration=EX seconds:integer|PX milliseconds:integer|EXAT unix-time-seconds:unix-time|" +
			"PXAT unix-time-milliseconds:unix-time|PERSIST]",
		Run: getex},
	{Name: "mget", Arity: -2, Flags: "readonly fast", ACL: "string", Keys: "RO access @1..-1",
		Tips: "request_policy:multi_shard", Group: "string", Since: "1.0.0",
		Complexity: "O(N) where N is the number of keys.",
		Summary:    "Atomically returns the string values of one or more keys.", Args: "key...", Run: mget},
	{Name: "mset", Arity: -3, Flags: "write denyoom", ACL: "string", Keys: "OW update @1..-1/2",
		Tips: "request_policy:multi_shard;response_policy:all_succeeded", Group: "string", Since: "1.0.1",
		Complexity: "O(N) where N is the number of keys.",
		Summary:    "Atomically creates or modifies the string values of one or more keys.",
		Args:       "(key_value=key value)...", Run: mset},
	{Name: "msetnx", Arity: -3, Flags: "write denyoom", ACL: "string", Keys: "OW insert @1..-1/2",
		Tips: "request_policy:multi_shard;response_policy:agg_min", Group: "string", Since: "1.0.1",
		Complexity: "O(N) where N is the number of keys.",
		Summary:    "Atomically sets the string values of several keys only when none of them exists.",
		Args:       "(key_value=key value)...", Run: msetnx},
	{Name: "incr", Arity: 2, Flags: "write denyoom fast", ACL: "string", Keys: "RW access update @1",
		Group: "string", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Increments the integer value of a key by one; a missing key counts as 0.", Args: "key", Run: incr},
	{Name: "decr", Arity: 2, Flags: "write denyoom fast", ACL: "string", Keys: "RW access update @1",
		Group: "string", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Decrements the integer value of a key by one; a missing key counts as 0.", Args: "key", Run: decr},
	{Name: "incrby", Arity: 3, Flags: "write denyoom fast", ACL: "string", Keys: "RW access update @1",
		Group: "string", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Increments the integer value of a key by a number; a missing key counts as 0.",
		Args:    "key increment:integer", Run: incrby},
	{Name: "decrby", Arity: 3, Flags: "write denyoom fast", ACL: "string", Keys: "RW access update @1",
		Group: "string", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Decrements the integer value of a key by a number; a missing key counts as 0.",
		Args:    "key decrement:integer", Run: decrby},
	{Name: "incrbyfloat", Arity: 3, Flags: "write denyoom fast", ACL: "string", Keys: "RW access update @1",
		Group: "string", Since: "2.6.0", Complexity: "O(1)",
		Summary: "Increments the floating point value of a key by a number; a missing key counts as 0.",
		Args:    "key increment:double", Run: incrbyfloat},
	{Name: "append", Arity: 3, Flags: "write denyoom fast", ACL: "string", Keys: "RW insert @1",
		Group: "string", Since: "2.0.0", Complexity: "O(1) amortized, the buffer grows geometrically.",
		Summary: "Appends a string to the value of a key; the key is created if absent.",
		Args:    "key value", Run: appendCmd},
	{Name: "strlen", Arity: 2, Flags: "readonly fast", ACL: "string", Keys: "RO @1",
		Group: "string", Since: "2.2.0", Complexity: "O(1)",
		Summary: "Returns the length of a string value.", Args: "key", Run: strlen},
	{Name: "getrange", Arity: 4, Flags: "readonly", ACL: "string", Keys: "RO access @1",
		Group: "string", Since: "2.4.0", Complexity: "O(N) where N is the length of the returned string.",
		Summary: "Returns a substring of the string value of a key.",
		Args:    "key start:integer end:integer", Run: getrange},
	{Name: "substr", Arity: 4, Flags: "readonly", ACL: "string", Keys: "RO access @1",
		Group: "string", Since: "1.0.0", Complexity: "O(N) where N is the length of the returned string.",
		DocFlags: "deprecated", Deprecated: "2.0.0", ReplacedBy: "`GETRANGE`",
		Summary: "Returns a substring of the string value of a key.",
		Args:    "key start:integer end:integer", Run: getrange},
	{Name: "setrange", Arity: 4, Flags: "write denyoom", ACL: "string", Keys: "RW update @1",
		Group: "string", Since: "2.2.0", Complexity: "O(1), plus O(M) to copy a value of length M.",
		Summary: "Overwrites part of a string value from an offset; the key is created if absent.",
		Args:    "key offset:integer value", Run: setrange},
	{Name: "lcs", Arity: -3, Flags: "readonly", ACL: "string", Keys: "RO access @1..1",
		Group: "string", Since: "7.0.0", Complexity: "O(N*M) where N and M are the lengths of the two strings.",
		Summary: "Finds the longest common subsequence of two string values.",
		Args:    "key1:key key2:key [LEN] [IDX] [MINMATCHLEN len:integer] [WITHMATCHLEN]", Run: lcs},
	{Name: "setbit", Arity: 4, Flags: "write denyoom", ACL: "bitmap", Keys: "RW access update @1",
		Group: "bitmap", Since: "2.2.0", Complexity: "O(1)",
		Summary: "Sets or clears the bit at an offset of a string value; the key is created if absent.",
		Args:    "key offset:integer value:integer", Run: setbit},
	{Name: "getbit", Arity: 3, Flags: "readonly fast", ACL: "bitmap", Keys: "RO access @1",
		Group: "bitmap", Since: "2.2.0", Complexity: "O(1)",
		Summary: "Returns the bit at an offset of a string value.", Args: "key offset:integer", Run: getbit},
	{Name: "bitcount", Arity: -2, Flags: "readonly", ACL: "bitmap", Keys: "RO access @1",
		Group: "bitmap", Since: "2.6.0", Complexity: "O(N)",
		Summary: "Counts the set bits in a string value, optionally within a range.",
		Args:    "key [range=start:integer end:integer [unit=BYTE|BIT]]", Run: bitcount},
	{Name: "bitpos", Arity: -3, Flags: "readonly", ACL: "bitmap", Keys: "RO access @1",
		Group: "bitmap", Since: "2.8.7", Complexity: "O(N)",
		Summary: "Finds the first set or clear bit in a string value, optionally within a range.",
		Args:    "key bit:integer [range=start:integer [end-unit-block=end:integer [unit=BYTE|BIT]]]", Run: bitpos},
}

func get(c *Ctx) {
	v, ok, err := c.DB.Get(c.Args[1])
	switch {
	case err != nil:
		c.Error(err)
	case !ok:
		c.W.Null()
	default:
		c.W.Bulk(v)
	}
}

// expiryKind is which of SET's and GETEX's EX/PX/EXAT/PXAT was given.
type expiryKind uint8

const (
	expNone expiryKind = iota
	expEX
	expPX
	expEXAT
	expPXAT
)

// expiryOption recognizes EX, PX, EXAT and PXAT in any case.
func expiryOption(a []byte) expiryKind {
	switch {
	case is(a, "EX"):
		return expEX
	case is(a, "PX"):
		return expPX
	case is(a, "EXAT"):
		return expEXAT
	case is(a, "PXAT"):
		return expPXAT
	}
	return expNone
}

// expiryOpts is the parsed EX/PX/EXAT/PXAT/KEEPTTL/PERSIST family shared by
// SET and GETEX.
type expiryOpts struct {
	kind    expiryKind
	value   []byte
	keepTTL bool
	persist bool
}

// parseExpiry consumes an expiry option at args[j] if there is one that
// does not conflict with those already seen (the same one again is allowed
// and the last value wins, as in Redis), and reports how many arguments it
// took: 0 when args[j] is not an acceptable expiry option here.
func (ex *expiryOpts) parseExpiry(args [][]byte, j int, isSet bool) int {
	a := args[j]
	switch {
	case isSet && is(a, "KEEPTTL"):
		if ex.kind != expNone {
			return 0
		}
		ex.keepTTL = true
		return 1
	case !isSet && is(a, "PERSIST"):
		if ex.kind != expNone {
			return 0
		}
		ex.persist = true
		return 1
	}
	k := expiryOption(a)
	if k == expNone || j+1 >= len(args) || ex.keepTTL || ex.persist || (ex.kind != expNone && ex.kind != k) {
		return 0
	}
	ex.kind, ex.value = k, args[j+1]
	return 2
}

// deadline converts an expiry option into unix ms, or writes Redis's
// "invalid expire time" error: the value must be positive, and neither the
// unit conversion nor adding the current time may overflow.
func (c *Ctx) deadline(kind expiryKind, value []byte) (int64, bool) {
	n, ok := c.Int64Arg(value)
	if !ok {
		return 0, false
	}
	seconds := kind == expEX || kind == expEXAT
	if n <= 0 || (seconds && n > maxInt64/1000) {
		c.expireTimeError()
		return 0, false
	}
	if seconds {
		n *= 1000
	}
	if kind == expEX || kind == expPX {
		if n > maxInt64-c.Eng.Now() {
			c.expireTimeError()
			return 0, false
		}
		n += c.Eng.Now()
	}
	return n, true
}

func (c *Ctx) expireTimeError() {
	c.W.Error("ERR invalid expire time in '" + c.Cmd.FullName() + "' command")
}

const maxInt64 = int64(^uint64(0) >> 1)

// Int64Arg parses a raw argument as an integer, writing Redis's error when
// it is not one.
func (c *Ctx) Int64Arg(b []byte) (int64, bool) {
	n, ok := engine.ParseInt(b)
	if !ok {
		c.W.Error("ERR value is not an integer or out of range")
	}
	return n, ok
}

func set(c *Ctx) {
	var o engine.SetOptions
	var ex expiryOpts
	args := c.Args
	for j := 3; j < len(args); j++ {
		a := args[j]
		switch {
		case is(a, "NX") && !o.XX:
			o.NX = true
		case is(a, "XX") && !o.NX:
			o.XX = true
		case is(a, "GET"):
			o.Get = true
		default:
			n := ex.parseExpiry(args, j, true)
			if n == 0 {
				c.SyntaxError()
				return
			}
			j += n - 1
		}
	}
	// The expiry value is validated before anything is looked up.
	if ex.kind != expNone {
		at, ok := c.deadline(ex.kind, ex.value)
		if !ok {
			return
		}
		o.ExpireAt = at
	}
	o.KeepTTL = ex.keepTTL
	r, err := c.DB.SetString(args[1], args[2], o)
	if err != nil {
		c.Error(err)
		return
	}
	if r.Done {
		c.DB.Notify(engine.NotifyString, "set", args[1])
		if o.ExpireAt != 0 {
			c.DB.Notify(engine.NotifyGeneric, "expire", args[1])
		}
		if c.replicating() {
			if o.ExpireAt != 0 {
				c.propagateSetAt(args[1], args[2], o.ExpireAt)
			} else if o.Get {
				c.PropagateAs(withoutGet(args)...)
			}
		}
	}
	switch {
	case o.Get && r.HadOld:
		c.W.Bulk(r.Old)
	case o.Get, !r.Done:
		c.W.Null()
	default:
		c.W.OK()
	}
}

func setnx(c *Ctx) {
	r, _ := c.DB.SetString(c.Args[1], c.Args[2], engine.SetOptions{NX: true})
	if r.Done {
		c.DB.Notify(engine.NotifyString, "set", c.Args[1])
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

func setex(c *Ctx)  { setWithTTL(c, expEX) }
func psetex(c *Ctx) { setWithTTL(c, expPX) }

func setWithTTL(c *Ctx, kind expiryKind) {
	at, ok := c.deadline(kind, c.Args[2])
	if !ok {
		return
	}
	c.DB.SetString(c.Args[1], c.Args[3], engine.SetOptions{ExpireAt: at})
	c.DB.Notify(engine.NotifyString, "set", c.Args[1])
	c.DB.Notify(engine.NotifyGeneric, "expire", c.Args[1])
	if c.replicating() {
		c.propagateSetAt(c.Args[1], c.Args[3], at)
	}
	c.W.OK()
}

func getset(c *Ctx) {
	r, err := c.DB.SetString(c.Args[1], c.Args[2], engine.SetOptions{Get: true})
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyString, "set", c.Args[1])
	if !r.HadOld {
		c.W.Null()
		return
	}
	c.W.Bulk(r.Old)
}

func getdel(c *Ctx) {
	v, ok, err := c.DB.GetDel(c.Args[1])
	switch {
	case err != nil:
		c.Error(err)
	case !ok:
		c.W.Null()
	default:
		c.W.Bulk(v)
		c.DB.Notify(engine.NotifyGeneric, "del", c.Args[1])
		c.propagateDeletion(c.Args[1], c.Eng.LazyFreeConfig().UserDel)
	}
}

func getex(c *Ctx) {
	var ex expiryOpts
	args := c.Args
	for j := 2; j < len(args); j++ {
		n := ex.parseExpiry(args, j, false)
		if n == 0 {
			c.SyntaxError()
			return
		}
		j += n - 1
	}
	// Redis reads the key before it validates the expiry value: a missing
	// key answers nil whatever that value is.
	v, ok, err := c.DB.Get(args[1])
	switch {
	case err != nil:
		c.Error(err)
		return
	case !ok:
		c.W.Null()
		return
	}
	o := engine.GetExOptions{Persist: ex.persist}
	if ex.kind != expNone {
		at, ok := c.deadline(ex.kind, ex.value)
		if !ok {
			return
		}
		o.ExpireAt = at
	}
	c.W.Bulk(v)
	switch c.DB.GetExExpire(args[1], o) {
	case engine.GetExDeleted:
		c.DB.Notify(engine.NotifyGeneric, "del", args[1])
		c.propagateDeletion(args[1], c.Eng.LazyFreeConfig().Expire)
	case engine.GetExExpireSet:
		c.DB.Notify(engine.NotifyGeneric, "expire", args[1])
		c.PropagateAs(argPEXPIREAT, args[1], msArg(o.ExpireAt))
	case engine.GetExPersisted:
		c.DB.Notify(engine.NotifyGeneric, "persist", args[1])
		c.PropagateAs(argPERSIST, args[1])
	}
}

func mget(c *Ctx) {
	c.W.Array(len(c.Args) - 1)
	for _, k := range c.Args[1:] {
		if v, ok, err := c.DB.Get(k); ok && err == nil {
			c.W.Bulk(v)
		} else {
			c.W.Null()
		}
	}
}

func mset(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.W.Error("ERR wrong number of arguments for '" + c.Cmd.FullName() + "' command")
		return
	}
	for i := 1; i < len(c.Args); i += 2 {
		c.DB.SetString(c.Args[i], c.Args[i+1], engine.SetOptions{})
		c.DB.Notify(engine.NotifyString, "set", c.Args[i])
	}
	c.W.OK()
}

func msetnx(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.W.Error("ERR wrong number of arguments for '" + c.Cmd.FullName() + "' command")
		return
	}
	for i := 1; i < len(c.Args); i += 2 {
		if c.DB.Exists(c.Args[i]) {
			c.W.Int(0)
			return
		}
	}
	for i := 1; i < len(c.Args); i += 2 {
		c.DB.SetString(c.Args[i], c.Args[i+1], engine.SetOptions{})
		c.DB.Notify(engine.NotifyString, "set", c.Args[i])
	}
	c.W.Int(1)
}

func incr(c *Ctx) { incrDecr(c, 1) }
func decr(c *Ctx) { incrDecr(c, -1) }

func incrby(c *Ctx) {
	if n, ok := c.Int64(2); ok {
		incrDecr(c, n)
	}
}

func decrby(c *Ctx) {
	n, ok := c.Int64(2)
	if !ok {
		return
	}
	if n == -maxInt64-1 {
		c.W.Error("ERR decrement would overflow")
		return
	}
	incrDecr(c, -n)
}

func incrDecr(c *Ctx, delta int64) {
	n, err := c.DB.IncrBy(c.Args[1], delta)
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyString, "incrby", c.Args[1])
	c.W.Int(n)
}

func incrbyfloat(c *Ctx) {
	v, err := c.DB.IncrByFloat(c.Args[1], c.Args[2])
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyString, "incrbyfloat", c.Args[1])
	if c.replicating() {
		// The sum's text is exact; replicas adding again might round otherwise.
		c.PropagateAs(argSET, c.Args[1], v, argKEEPTTL)
	}
	c.W.Bulk(v)
}

func appendCmd(c *Ctx) {
	n, err := c.DB.Append(c.Args[1], c.Args[2])
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Notify(engine.NotifyString, "append", c.Args[1])
	c.W.Int(int64(n))
}

func strlen(c *Ctx) {
	n, err := c.DB.StrLen(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(n))
}

func getrange(c *Ctx) {
	start, ok := c.Int64(2)
	if !ok {
		return
	}
	end, ok := c.Int64(3)
	if !ok {
		return
	}
	v, err := c.DB.GetRange(c.Args[1], start, end)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Bulk(v)
}

func setrange(c *Ctx) {
	off, ok := c.Int64(2)
	if !ok {
		return
	}
	n, changed, err := c.DB.SetRange(c.Args[1], off, c.Args[3])
	if err != nil {
		c.Error(err)
		return
	}
	if changed {
		c.DB.Notify(engine.NotifyString, "setrange", c.Args[1])
	}
	c.W.Int(int64(n))
}

func lcs(c *Ctx) {
	a, b := c.DB.Read(c.Args[1]), c.DB.Read(c.Args[2])
	sa, okA := a.(*engine.String)
	sb, okB := b.(*engine.String)
	if (a != nil && !okA) || (b != nil && !okB) {
		c.W.Error("ERR The specified keys must contain string values")
		return
	}
	var va, vb []byte
	if okA {
		va = sa.Bytes()
	}
	if okB {
		vb = sb.Bytes()
	}
	var getLen, getIdx, withLen bool
	var minLen int64
	for j := 3; j < len(c.Args); j++ {
		a := c.Args[j]
		switch {
		case is(a, "IDX"):
			getIdx = true
		case is(a, "LEN"):
			getLen = true
		case is(a, "WITHMATCHLEN"):
			withLen = true
		case is(a, "MINMATCHLEN") && j+1 < len(c.Args):
			n, ok := c.Int64(j + 1)
			if !ok {
				return
			}
			minLen = max(n, 0)
			j++
		default:
			c.SyntaxError()
			return
		}
	}
	if getLen && getIdx {
		c.W.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	res, err := engine.LCS(va, vb, getIdx || !getLen, minLen, c.Eng.MaxStringLen())
	if err != nil {
		c.Error(err)
		return
	}
	switch {
	case getIdx:
		c.W.Map(2)
		c.W.BulkString("matches")
		c.W.Array(len(res.Matches))
		for _, m := range res.Matches {
			if withLen {
				c.W.Array(3)
			} else {
				c.W.Array(2)
			}
			c.W.Array(2)
			c.W.Int(m.A[0])
			c.W.Int(m.A[1])
			c.W.Array(2)
			c.W.Int(m.B[0])
			c.W.Int(m.B[1])
			if withLen {
				c.W.Int(m.Len)
			}
		}
		c.W.BulkString("len")
		c.W.Int(res.Len)
	case getLen:
		c.W.Int(res.Len)
	default:
		c.W.Bulk(res.Seq)
	}
}

// bitOffset parses a bit offset as Redis does: a non-negative integer whose
// byte index is below proto-max-bulk-len.
func (c *Ctx) bitOffset(i int) (uint64, bool) {
	n, ok := engine.ParseInt(c.Args[i])
	if !ok || n < 0 || n>>3 >= c.Eng.MaxStringLen() {
		c.W.Error("ERR bit offset is not an integer or out of range")
		return 0, false
	}
	return uint64(n), true
}

func setbit(c *Ctx) {
	off, ok := c.bitOffset(2)
	if !ok {
		return
	}
	on, ok := engine.ParseInt(c.Args[3])
	if !ok || on&^1 != 0 {
		c.W.Error("ERR bit is not an integer or out of range")
		return
	}
	old, changed, err := c.DB.SetBit(c.Args[1], off, int(on))
	if err != nil {
		c.Error(err)
		return
	}
	if changed {
		c.DB.Notify(engine.NotifyString, "setbit", c.Args[1])
	}
	c.W.Int(int64(old))
}

func getbit(c *Ctx) {
	off, ok := c.bitOffset(2)
	if !ok {
		return
	}
	v, _, err := c.DB.Get(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(engine.GetBit(v, off)))
}

func bitcount(c *Ctx) {
	// Redis looks the key up before parsing the range: a missing key
	// answers 0 whatever the other arguments are.
	v, ok, err := c.DB.Get(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	if !ok {
		c.W.Int(0)
		return
	}
	var r *engine.BitRange
	switch len(c.Args) {
	case 2:
	case 4, 5:
		start, ok := c.Int64(2)
		if !ok {
			return
		}
		end, ok := c.Int64(3)
		if !ok {
			return
		}
		if start < 0 && end < 0 && start > end {
			c.W.Int(0)
			return
		}
		r = &engine.BitRange{Start: start, End: end}
		if len(c.Args) == 5 {
			if r.Bit, ok = bitUnit(c.Args[4]); !ok {
				c.SyntaxError()
				return
			}
		}
	default:
		c.SyntaxError()
		return
	}
	c.W.Int(engine.BitCount(v, r))
}

func bitUnit(a []byte) (bit bool, ok bool) {
	switch {
	case is(a, "BIT"):
		return true, true
	case is(a, "BYTE"):
		return false, true
	}
	return false, false
}

func bitpos(c *Ctx) {
	bit, ok := c.Int64(2)
	if !ok {
		return
	}
	if bit != 0 && bit != 1 {
		c.W.Error("ERR The bit argument must be 1 or 0.")
		return
	}
	v, found, err := c.DB.Get(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	if !found {
		if bit == 1 {
			c.W.Int(-1)
		} else {
			c.W.Int(0)
		}
		return
	}
	var r *engine.BitRange
	endGiven := false
	switch len(c.Args) {
	case 3:
	case 4, 5, 6:
		start, ok := c.Int64(3)
		if !ok {
			return
		}
		r = &engine.BitRange{Start: start}
		if len(c.Args) == 6 {
			if r.Bit, ok = bitUnit(c.Args[5]); !ok {
				c.SyntaxError()
				return
			}
		}
		if len(c.Args) >= 5 {
			if r.End, ok = c.Int64(4); !ok {
				return
			}
			endGiven = true
		}
	default:
		c.SyntaxError()
		return
	}
	c.W.Int(engine.BitPos(v, int(bit), r, endGiven))
}
