package commands

import (
	"strconv"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// ZSets is the sorted set family.
var ZSets = []*Command{
	{Name: "zadd", Arity: -4, Flags: "write denyoom fast", ACL: "sortedset", Keys: "RW update @1",
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(log(N)) for each member added or updated.",
		Summary: "Adds members with scores to a sorted set, or updates their scores; the key is created if absent.",
		Args:    "key [condition=NX|XX] [comparison=GT|LT] [CH] [INCR] (score_member=score:double member)...",
		Run:     zadd},
	{Name: "zincrby", Arity: 4, Flags: "write denyoom fast", ACL: "sortedset", Keys: "RW access update @1",
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(log(N))",
		Summary: "Adds a number to a member's score (0 when absent) and returns the new score.",
		Args:    "key increment:integer member", Run: zincrby},
	{Name: "zrem", Arity: -3, Flags: "write fast", ACL: "sortedset", Keys: "RW delete @1",
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(M*log(N)) for M members removed.",
		Summary: "Removes members from a sorted set; the key is deleted when it empties.",
		Args:    "key member...", Run: zrem},
	{Name: "zscore", Arity: 3, Flags: "readonly fast", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(1)",
		Summary: "Returns the score of a member of a sorted set.", Args: "key member", Run: zscore},
	{Name: "zmscore", Arity: -3, Flags: "readonly fast", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "6.2.0", Complexity: "O(N) for N members asked for.",
		Summary: "Returns the scores of several members of a sorted set.", Args: "key member...", Run: zmscore},
	{Name: "zcard", Arity: 2, Flags: "readonly fast", ACL: "sortedset", Keys: "RO @1",
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(1)",
		Summary: "Returns the number of members of a sorted set.", Args: "key", Run: zcard},
	{Name: "zcount", Arity: 4, Flags: "readonly fast", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "2.0.0", Complexity: "O(log²(N)): two rank searches.",
		Summary: "Counts the members of a sorted set whose scores are within a range.",
		Args:    "key min:double max:double", Run: zcount},
	{Name: "zlexcount", Arity: 4, Flags: "readonly fast", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "2.8.9", Complexity: "O(log²(N)): two rank searches.",
		Summary: "Counts the members of a sorted set within a lexicographical range.",
		Args:    "key min max", Run: zlexcount},
	{Name: "zrank", Arity: 3, Flags: "readonly fast", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "2.0.0", Complexity: "O(log²(N))",
		Summary: "Returns the position of a member in a sorted set, from the lowest score.",
		Args:    "key member", Run: zrank},
	{Name: "zrevrank", Arity: 3, Flags: "readonly fast", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "2.0.0", Complexity: "O(log²(N))",
		Summary: "Returns the position of a member in a sorted set, from the highest score.",
		Args:    "key member", Run: zrevrank},
	{Name: "zrange", Arity: -4, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "1.2.0",
		Complexity: "O(log(N)+M) for M members returned; a LIMIT offset costs O(log²(N)) instead of O(offset).",
		Summary:    "Returns the members of a sorted set within a range of positions, scores or members.",
		Args: "key start stop [sortby=BYSCORE|BYLEX] [REV] [LIMIT (offset_count=offset:integer count:integer)] " +
			"[WITHSCORES]",
		Run: zrange},
	{Name: "zrangestore", Arity: -5, Flags: "write denyoom", ACL: "sortedset", Keys: "OW update @1;RO access @2",
		Group: "sorted-set", Since: "6.2.0", Complexity: "O(log(N)+M) for M members stored.",
		Summary: "Stores a range of a sorted set in another key.",
		Args: "dst:key src:key min max [sortby=BYSCORE|BYLEX] [REV] " +
			"[LIMIT (offset_count=offset:integer count:integer)]",
		Run: zrangestore},
	{Name: "zrangebyscore", Arity: -4, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "1.0.5", Complexity: "O(log(N)+M) for M members returned.",
		DocFlags: "deprecated", Deprecated: "6.2.0", ReplacedBy: "`ZRANGE` with the `BYSCORE` argument",
		Summary: "Returns the members of a sorted set within a range of scores.",
		Args:    "key min:double max:double [WITHSCORES] [LIMIT (offset_count=offset:integer count:integer)]",
		Run:     zrangebyscore},
	{Name: "zrevrangebyscore", Arity: -4, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "2.2.0", Complexity: "O(log(N)+M) for M members returned.",
		DocFlags: "deprecated", Deprecated: "6.2.0", ReplacedBy: "`ZRANGE` with the `REV` and `BYSCORE` arguments",
		Summary: "Returns the members of a sorted set within a range of scores, from the highest.",
		Args:    "key max:double min:double [WITHSCORES] [LIMIT (offset_count=offset:integer count:integer)]",
		Run:     zrevrangebyscore},
	{Name: "zrangebylex", Arity: -4, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "2.8.9", Complexity: "O(log²(N)+M) for M members returned.",
		DocFlags: "deprecated", Deprecated: "6.2.0", ReplacedBy: "`ZRANGE` with the `BYLEX` argument",
		Summary: "Returns the members of a sorted set within a lexicographical range.",
		Args:    "key min max [LIMIT (offset_count=offset:integer count:integer)]", Run: zrangebylex},
	{Name: "zrevrangebylex", Arity: -4, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "2.8.9", Complexity: "O(log²(N)+M) for M members returned.",
		DocFlags: "deprecated", Deprecated: "6.2.0", ReplacedBy: "`ZRANGE` with the `REV` and `BYLEX` arguments",
		Summary: "Returns the members of a sorted set within a lexicographical range, in reverse order.",
		Args:    "key max min [LIMIT (offset_count=offset:integer count:integer)]", Run: zrevrangebylex},
	{Name: "zrevrange", Arity: -4, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1",
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(log(N)+M) for M members returned.",
		DocFlags: "deprecated", Deprecated: "6.2.0", ReplacedBy: "`ZRANGE` with the `REV` argument",
		Summary: "Returns the members of a sorted set within a range of positions, from the highest score.",
		Args:    "key start:integer stop:integer [WITHSCORES]", Run: zrevrange},
	{Name: "zremrangebyscore", Arity: 4, Flags: "write", ACL: "sortedset", Keys: "RW delete @1",
		Group: "sorted-set", Since: "1.2.0", Complexity: "O(log(N)+M) for M members removed.",
		Summary: "Removes the members of a sorted set within a range of scores.",
		Args:    "key min:double max:double", Run: zremrangebyscore},
	{Name: "zremrangebyrank", Arity: 4, Flags: "write", ACL: "sortedset", Keys: "RW delete @1",
		Group: "sorted-set", Since: "2.0.0", Complexity: "O(log(N)+M) for M members removed.",
		Summary: "Removes the members of a sorted set within a range of positions.",
		Args:    "key start:integer stop:integer", Run: zremrangebyrank},
	{Name: "zremrangebylex", Arity: 4, Flags: "write", ACL: "sortedset", Keys: "RW delete @1",
		Group: "sorted-set", Since: "2.8.9", Complexity: "O(log²(N)+M) for M members removed.",
		Summary: "Removes the members of a sorted set within a lexicographical range.",
		Args:    "key min max", Run: zremrangebylex},
	{Name: "zpopmin", Arity: -2, Flags: "write fast", ACL: "sortedset", Keys: "RW access delete @1",
		Group: "sorted-set", Since: "5.0.0", Complexity: "O(log(N)*M) for M members popped.",
		Summary: "Removes and returns the members with the lowest scores.", Args: "key [count:integer]", Run: zpopmin},
	{Name: "zpopmax", Arity: -2, Flags: "write fast", ACL: "sortedset", Keys: "RW access delete @1",
		Group: "sorted-set", Since: "5.0.0", Complexity: "O(log(N)*M) for M members popped.",
		Summary: "Removes and returns the members with the highest scores.", Args: "key [count:integer]", Run: zpopmax},
	{Name: "zmpop", Arity: -4, Flags: "write", ACL: "sortedset", Keys: "RW access delete @1 #0,1,1",
		Group: "sorted-set", Since: "7.0.0", Complexity: "O(K) + O(M*log(N)) for K keys and M members popped.",
		Summary: "Removes and returns members with the lowest or highest scores from the first non-empty sorted set.",
		Args:    "numkeys:integer key... (where=MIN|MAX) [COUNT count:integer]", Run: zmpop},
	{Name: "bzpopmin", Arity: -3, Flags: "write noscript fast blocking", ACL: "sortedset",
		Keys: "RW access delete @1..-2", Group: "sorted-set", Since: "5.0.0", Complexity: "O(log(N))",
		Summary: "Removes and returns the member with the lowest score from the first non-empty sorted set, " +
			"waiting until one is available.",
		Args: "key... timeout:double", Run: bzpopmin},
	{Name: "bzpopmax", Arity: -3, Flags: "write noscript fast blocking", ACL: "sortedset",
		Keys: "RW access delete @1..-2", Group: "sorted-set", Since: "5.0.0", Complexity: "O(log(N))",
		Summary: "Removes and returns the member with the highest score from the first non-empty sorted set, " +
			"waiting until one is available.",
		Args: "key... timeout:double", Run: bzpopmax},
	{Name: "bzmpop", Arity: -5, Flags: "write blocking", ACL: "sortedset", Keys: "RW access delete @2 #0,1,1",
		Group: "sorted-set", Since: "7.0.0", Complexity: "O(K) + O(M*log(N)) for K keys and M members popped.",
		Summary: "Removes and returns members with the lowest or highest scores from the first non-empty sorted set, " +
			"waiting until one is available.",
		Args: "timeout:double numkeys:integer key... (where=MIN|MAX) [COUNT count:integer]", Run: bzmpop},
	{Name: "zrandmember", Arity: -2, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1",
		Tips: "nondeterministic_output", Group: "sorted-set", Since: "6.2.0",
		Complexity: "O(N) for N members returned, times O(log(M)) to reach each.",
		Summary:    "Returns random members of a sorted set.",
		Args:       "key [options=count:integer [WITHSCORES]]", Run: zrandmember},
	{Name: "zscan", Arity: -3, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1",
		Tips: "nondeterministic_output", Group: "sorted-set", Since: "2.8.0",
		Complexity: "O(1) for every call, O(N) for a complete iteration.",
		Summary:    "Iterates over the members and scores of a sorted set.",
		Args:       "key cursor:integer [MATCH pattern:pattern] [COUNT count:integer]", Run: zscan},
	{Name: "zunion", Arity: -3, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1 #0,1,1",
		Group: "sorted-set", Since: "6.2.0",
		Complexity: "O(N)+O(M*log(M)) for N input members and M result members.",
		Summary:    "Returns the union of sorted sets (and sets, whose members score 1).",
		Args: "numkeys:integer key... [WEIGHTS weight:integer...] [AGGREGATE (aggregate=SUM|MIN|MAX)] " +
			"[WITHSCORES]",
		Run: zunion},
	{Name: "zunionstore", Arity: -4, Flags: "write denyoom", ACL: "sortedset", Keys: "OW update @1;RO access @2 #0,1,1",
		Group: "sorted-set", Since: "2.0.0",
		Complexity: "O(N)+O(M*log(M)) for N input members and M result members.",
		Summary:    "Stores the union of sorted sets (and sets, whose members score 1) in a key.",
		Args:       "destination:key numkeys:integer key... [WEIGHTS weight:integer...] [AGGREGATE (aggregate=SUM|MIN|MAX)]",
		Run:        zunionstore},
	{Name: "zinter", Arity: -3, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1 #0,1,1",
		Group: "sorted-set", Since: "6.2.0",
		Complexity: "O(N*K)+O(M*log(M)) for the smallest input's N members, K inputs and M result members.",
		Summary:    "Returns the intersection of sorted sets (and sets, whose members score 1).",
		Args: "numkeys:integer key... [WEIGHTS weight:integer...] [AGGREGATE (aggregate=SUM|MIN|MAX)] " +
			"[WITHSCORES]",
		Run: zinter},
	{Name: "zinterstore", Arity: -4, Flags: "write denyoom", ACL: "sortedset", Keys: "OW update @1;RO access @2 #0,1,1",
		Group: "sorted-set", Since: "2.0.0",
		Complexity: "O(N*K)+O(M*log(M)) for the smallest input's N members, K inputs and M result members.",
		Summary:    "Stores the intersection of sorted sets (and sets, whose members score 1) in a key.",
		Args:       "destination:key numkeys:integer key... [WEIGHTS weight:integer...] [AGGREGATE (aggregate=SUM|MIN|MAX)]",
		Run:        zinterstore},
	{Name: "zintercard", Arity: -3, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1 #0,1,1",
		Group: "sorted-set", Since: "7.0.0", Complexity: "O(N*K) for the smallest input's N members and K inputs.",
		Summary: "Counts the members of the intersection of sorted sets (and sets).",
		Args:    "numkeys:integer key... [LIMIT limit:integer]", Run: zintercard},
	{Name: "zdiff", Arity: -3, Flags: "readonly", ACL: "sortedset", Keys: "RO access @1 #0,1,1",
		Group: "sorted-set", Since: "6.2.0",
		Complexity: "O(L+(N-K)log(N)) for L input members, N in the first input and K in the result.",
		Summary:    "Returns the members of the first sorted set found in none of the others.",
		Args:       "numkeys:integer key... [WITHSCORES]", Run: zdiff},
	{Name: "zdiffstore", Arity: -4, Flags: "write denyoom", ACL: "sortedset", Keys: "OW update @1;RO access @2 #0,1,1",
		Group: "sorted-set", Since: "6.2.0",
		Complexity: "O(L+(N-K)log(N)) for L input members, N in the first input and K in the result.",
		Summary:    "Stores the members of the first sorted set found in none of the others in a key.",
		Args:       "destination:key numkeys:integer key...", Run: zdiffstore},
}

// scoreArg parses a score or increment with Redis's rules.
func (c *Ctx) scoreArg(b []byte) (float64, bool) {
	f, ok := engine.ParseScore(b)
	if !ok {
		c.W.Error("ERR value is not a valid float")
	}
	return f, ok
}

// rangeLong parses an integer within [lo, hi]; msg (when set) is the error
// for anything else, as Redis's getRangeLongFromObjectOrReply words it.
func (c *Ctx) rangeLong(b []byte, lo, hi int64, msg string) (int64, bool) {
	n, ok := engine.ParseInt(b)
	if ok && n >= lo && n <= hi {
		return n, true
	}
	switch {
	case msg != "":
		c.W.Error(msg)
	case !ok:
		c.W.Error("ERR value is not an integer or out of range")
	default:
		c.W.Error("ERR value is out of range, value must between " + strconv.FormatInt(lo, 10) +
			" and " + strconv.FormatInt(hi, 10))
	}
	return 0, false
}

func zadd(c *Ctx)    { zaddGeneric(c, false) }
func zincrby(c *Ctx) { zaddGeneric(c, true) }

// zaddGeneric is ZADD and ZINCRBY (ZADD INCR with one pair), with Redis's
// order of checks: syntax, option conflicts, scores, then the key.
func zaddGeneric(c *Ctx, incr bool) {
	f := engine.ZAddFlags{Incr: incr}
	ch := false
	i := 2
options:
	for ; i < len(c.Args); i++ {
		switch a := c.Args[i]; {
		case is(a, "NX"):
			f.NX = true
		case is(a, "XX"):
			f.XX = true
		case is(a, "CH"):
			ch = true
		case is(a, "INCR"):
			f.Incr = true
		case is(a, "GT"):
			f.GT = true
		case is(a, "LT"):
			f.LT = true
		default:
			break options
		}
	}
	rest := c.Args[i:]
	if len(rest) == 0 || len(rest)%2 != 0 {
		c.SyntaxError()
		return
	}
	switch {
	case f.NX && f.XX:
		c.W.Error("ERR XX and NX options at the same time are not compatible")
		return
	case (f.GT && f.NX) || (f.LT && f.NX) || (f.GT && f.LT):
		c.W.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case f.Incr && len(rest) > 2:
		c.W.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	n := len(rest) / 2
	var scoreBuf [8]float64
	var memberBuf [8][]byte
	scores, members := scoreBuf[:0], memberBuf[:0]
	if n > len(scoreBuf) {
		scores, members = make([]float64, 0, n), make([][]byte, 0, n)
	}
	for j := 0; j < len(rest); j += 2 {
		s, ok := c.scoreArg(rest[j])
		if !ok {
			return
		}
		scores = append(scores, s)
		members = append(members, rest[j+1])
	}
	key := c.Args[1]
	r, err := c.DB.ZAdd(key, f, scores, members)
	if err != nil {
		c.Error(err)
	} else if f.Incr {
		if r.Processed > 0 {
			c.W.Double(r.Score)
		} else {
			c.W.Null()
		}
	} else if ch {
		c.W.Int(int64(r.Added + r.Updated))
	} else {
		c.W.Int(int64(r.Added))
	}
	if r.Added > 0 || r.Updated > 0 {
		event := "zadd"
		if f.Incr {
			event = "zincr"
		}
		c.DB.Notify(engine.NotifyZSet, event, key)
	}
}

func zrem(c *Ctx) {
	key := c.Args[1]
	n, removed, err := c.DB.ZRem(key, c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifyZSet, "zrem", key)
		if removed {
			c.DB.Notify(engine.NotifyGeneric, "del", key)
		}
	}
	c.W.Int(int64(n))
}

// zsetRead looks the key at argument i up for a read, writing WRONGTYPE;
// ok is false after an error reply.
func (c *Ctx) zsetRead(i int) (*engine.ZSet, bool) {
	z, err := c.DB.ZSetRead(c.Args[i])
	if err != nil {
		c.Error(err)
		return nil, false
	}
	return z, true
}

func zscore(c *Ctx) {
	z, ok := c.zsetRead(1)
	if !ok {
		return
	}
	if z == nil {
		c.W.Null()
		return
	}
	if s, found := z.Score(c.Args[2]); found {
		c.W.Double(s)
		return
	}
	c.W.Null()
}

func zmscore(c *Ctx) {
	z, ok := c.zsetRead(1)
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		if z != nil {
			if s, found := z.Score(m); found {
				c.W.Double(s)
				continue
			}
		}
		c.W.Null()
	}
}

func zcard(c *Ctx) {
	z, ok := c.zsetRead(1)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(z.Len()))
}

// scoreRange parses a score range at arguments i and j, writing Redis's
// error.
func (c *Ctx) scoreRange(i, j int) (engine.ScoreRange, bool) {
	r, ok := engine.ParseScoreRange(c.Args[i], c.Args[j])
	if !ok {
		c.W.Error("ERR min or max is not a float")
	}
	return r, ok
}

// lexRange parses a lexicographical range at arguments i and j.
func (c *Ctx) lexRange(i, j int) (engine.LexRange, bool) {
	r, ok := engine.ParseLexRange(c.Args[i], c.Args[j])
	if !ok {
		c.W.Error("ERR min or max not valid string range item")
	}
	return r, ok
}

func zcount(c *Ctx) {
	r, ok := c.scoreRange(2, 3)
	if !ok {
		return
	}
	z, ok := c.zsetRead(1)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(z.Count(r)))
}

func zlexcount(c *Ctx) {
	r, ok := c.lexRange(2, 3)
	if !ok {
		return
	}
	z, ok := c.zsetRead(1)
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(z.LexCount(r)))
}

func zrank(c *Ctx)    { zrankGeneric(c, false) }
func zrevrank(c *Ctx) { zrankGeneric(c, true) }

func zrankGeneric(c *Ctx, reverse bool) {
	z, ok := c.zsetRead(1)
	if !ok {
		return
	}
	if z != nil {
		if r, found := z.Rank(c.Args[2], reverse); found {
			c.W.Int(int64(r))
			return
		}
	}
	c.W.Null()
}

// zrangeKind and zrangeDir are what ZRANGE's options (or the command
// name) choose.
type zrangeKind uint8

const (
	zrAuto zrangeKind = iota
	zrRank
	zrScore
	zrLex
)

type zrangeDir uint8

const (
	zdAuto zrangeDir = iota
	zdForward
	zdReverse
)

func zrange(c *Ctx)           { zrangeGeneric(c, 1, false, zrAuto, zdAuto) }
func zrangestore(c *Ctx)      { zrangeGeneric(c, 2, true, zrAuto, zdAuto) }
func zrevrange(c *Ctx)        { zrangeGeneric(c, 1, false, zrRank, zdReverse) }
func zrangebyscore(c *Ctx)    { zrangeGeneric(c, 1, false, zrScore, zdForward) }
func zrevrangebyscore(c *Ctx) { zrangeGeneric(c, 1, false, zrScore, zdReverse) }
func zrangebylex(c *Ctx)      { zrangeGeneric(c, 1, false, zrLex, zdForward) }
func zrevrangebylex(c *Ctx)   { zrangeGeneric(c, 1, false, zrLex, zdReverse) }
func zremrangebyscore(c *Ctx) { zremrange(c, zrScore) }
func zremrangebyrank(c *Ctx)  { zremrange(c, zrRank) }
func zremrangebylex(c *Ctx)   { zremrange(c, zrLex) }
func zpopmin(c *Ctx)          { zpopCommand(c, false) }
func zpopmax(c *Ctx)          { zpopCommand(c, true) }
func bzpopmin(c *Ctx)         { bzpop(c, false) }
func bzpopmax(c *Ctx)         { bzpop(c, true) }
func zmpop(c *Ctx)            { zmpopGeneric(c, 1, false) }
func bzmpop(c *Ctx)           { zmpopGeneric(c, 2, true) }
func zunion(c *Ctx)           { zsetAlgebra(c, nil, 1, engine.ZOpUnion, false) }
func zinter(c *Ctx)           { zsetAlgebra(c, nil, 1, engine.ZOpInter, false) }
func zdiff(c *Ctx)            { zsetAlgebra(c, nil, 1, engine.ZOpDiff, false) }
func zintercard(c *Ctx)       { zsetAlgebra(c, nil, 1, engine.ZOpInter, true) }
func zunionstore(c *Ctx)      { zsetAlgebra(c, c.Args[1], 2, engine.ZOpUnion, false) }
func zinterstore(c *Ctx)      { zsetAlgebra(c, c.Args[1], 2, engine.ZOpInter, false) }
func zdiffstore(c *Ctx)       { zsetAlgebra(c, c.Args[1], 2, engine.ZOpDiff, false) }

// zrangeGeneric is ZRANGE, ZRANGESTORE and the deprecated ZREV*/Z*BY*
// forms: src min max at args[first:], then options (those the command name
// already fixed are syntax errors), then the range, then the key.
func zrangeGeneric(c *Ctx, first int, store bool, kind zrangeKind, dir zrangeDir) {
	withScores := false
	offset, limit := int64(0), int64(-1)
	for j := first + 3; j < len(c.Args); j++ {
		a := c.Args[j]
		switch left := len(c.Args) - j - 1; {
		case !store && is(a, "WITHSCORES"):
			withScores = true
		case is(a, "LIMIT") && left >= 2:
			var ok bool
			if offset, ok = c.Int64(j + 1); !ok {
				return
			}
			if limit, ok = c.Int64(j + 2); !ok {
				return
			}
			j += 2
		case dir == zdAuto && is(a, "REV"):
			dir = zdReverse
		case kind == zrAuto && is(a, "BYLEX"):
			kind = zrLex
		case kind == zrAuto && is(a, "BYSCORE"):
			kind = zrScore
		default:
			c.SyntaxError()
			return
		}
	}
	if kind == zrAuto {
		kind = zrRank
	}
	reverse := dir == zdReverse
	if limit != -1 && kind == zrRank {
		c.W.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && kind == zrLex {
		c.W.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	minIdx, maxIdx := first+1, first+2
	if reverse && kind != zrRank {
		minIdx, maxIdx = maxIdx, minIdx // given as max, min
	}
	var start, end int64
	var sr engine.ScoreRange
	var lr engine.LexRange
	ok := false
	switch kind {
	case zrRank:
		if start, ok = c.Int64(minIdx); ok {
			end, ok = c.Int64(maxIdx)
		}
	case zrScore:
		sr, ok = c.scoreRange(minIdx, maxIdx)
	case zrLex:
		lr, ok = c.lexRange(minIdx, maxIdx)
	}
	if !ok {
		return
	}
	z, ok := c.zsetRead(first)
	if !ok {
		return
	}
	var items []engine.ScoreMember
	if z != nil {
		switch kind {
		case zrRank:
			items = z.RangeByRank(start, end, reverse)
		case zrScore:
			items = z.RangeByScore(sr, offset, limit, reverse)
		case zrLex:
			items = z.RangeByLex(lr, offset, limit, reverse)
		}
	}
	if store {
		storeResult(c, c.Args[1], items, "zrangestore")
		return
	}
	writeScoreMembers(c.W, items, withScores)
}

// storeResult writes a *STORE command's result to dst and replies its
// size, with the command's event (or "del" when an empty result deleted
// dst).
func storeResult(c *Ctx, dst []byte, items []engine.ScoreMember, event string) {
	deleted := c.DB.ZStore(dst, items)
	c.W.Int(int64(len(items)))
	switch {
	case len(items) > 0:
		c.DB.Notify(engine.NotifyZSet, event, dst)
	case deleted:
		c.DB.Notify(engine.NotifyGeneric, "del", dst)
	}
}

// writeScoreMembers replies members, with their scores as RESP2 does
// (one flat array) or RESP3 does (an array of [member, score] pairs).
func writeScoreMembers(w *resp.Writer, items []engine.ScoreMember, withScores bool) {
	if withScores && !w.RESP3() {
		w.Array(2 * len(items))
	} else {
		w.Array(len(items))
	}
	for _, it := range items {
		writeScoreMember(w, it, withScores)
	}
}

func writeScoreMember(w *resp.Writer, it engine.ScoreMember, withScores bool) {
	if withScores && w.RESP3() {
		w.Array(2)
	}
	w.BulkString(it.Member)
	if withScores {
		w.Double(it.Score)
	}
}

func zremrange(c *Ctx, kind zrangeKind) {
	var n int
	var removed bool
	var err error
	var event string
	key := c.Args[1]
	switch kind {
	case zrRank:
		event = "zremrangebyrank"
		start, ok := c.Int64(2)
		if !ok {
			return
		}
		end, ok := c.Int64(3)
		if !ok {
			return
		}
		n, removed, err = c.DB.ZRemRangeByRank(key, start, end)
	case zrScore:
		event = "zremrangebyscore"
		r, ok := c.scoreRange(2, 3)
		if !ok {
			return
		}
		n, removed, err = c.DB.ZRemRangeByScore(key, r)
	case zrLex:
		event = "zremrangebylex"
		r, ok := c.lexRange(2, 3)
		if !ok {
			return
		}
		n, removed, err = c.DB.ZRemRangeByLex(key, r)
	}
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifyZSet, event, key)
		if removed {
			c.DB.Notify(engine.NotifyGeneric, "del", key)
		}
	}
	c.W.Int(int64(n))
}
