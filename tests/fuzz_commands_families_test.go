package tests

import (
	"strconv"
	"strings"
)

// The command families of the differential fuzzer: the older data types
// first, then the commands added this round.

var fuzzFamilies = []fuzzFamily{
	{"strings", 10, genStrings},
	{"bits", 8, genBits},
	{"lists", 8, genLists},
	{"hashes", 7, genHashes},
	{"sets", 7, genSets},
	{"zsets", 9, genZsets},
	{"keys", 9, genKeys},
	{"streams", 9, genStreams},
	{"geo", 6, genGeo},
	{"sort", 5, genSort},
	{"dump", 3, genDump},
	{"server", 6, genServer},
	{"config", 3, genConfig},
	{"tracking", 3, genTracking},
	{"tx", 2, genTx},
}

func genStrings(g *fuzzGen) fuzzCmd {
	k := g.keyOf("a", "b", "str", "x")
	switch g.n(16) {
	case 0:
		args := []string{"SET", k, g.value()}
		return exact(g.opts(args, map[string]func() []string{
			"EX": func() []string { return []string{g.expiry()} }, "PX": func() []string { return []string{g.expiry()} },
			"NX": none, "XX": none, "GET": none, "KEEPTTL": none,
			"EXAT": func() []string { return []string{g.pick("4102444800", "0", "-1", "abc")} },
		})...)
	case 1:
		return exact("GET", k)
	case 2:
		return exact("APPEND", k, g.value())
	case 3:
		return exact(g.pick("INCR", "DECR"), k)
	case 4:
		return exact(g.pick("INCRBY", "DECRBY"), k, g.num())
	case 5:
		return exact("INCRBYFLOAT", k, g.score())
	case 6:
		return exact("GETRANGE", k, g.num(), g.num())
	case 7:
		return exact("SETRANGE", k, g.pick("0", "1", "5", "-1", "536870912", "abc", "100"), g.value())
	case 8:
		return exact("STRLEN", k)
	case 9:
		return exact("MSET", k, g.value(), g.key(), g.value())
	case 10:
		return exact("MGET", k, g.key(), g.key())
	case 11:
		return exact(g.pick("SETNX", "GETSET"), k, g.value())
	case 12:
		return exact("GETDEL", k)
	case 13:
		args := []string{"GETEX", k}
		return exact(g.opts(args, map[string]func() []string{
			"EX": func() []string { return []string{g.expiry()} }, "PERSIST": none,
		})...)
	case 14:
		args := []string{"LCS", k, g.key()}
		return exact(g.opts(args, map[string]func() []string{
			"LEN": none, "IDX": none, "WITHMATCHLEN": none,
			"MINMATCHLEN": func() []string { return []string{g.num()} },
		})...)
	default:
		return exact("MSETNX", k, g.value(), g.key(), g.value())
	}
}

func genBits(g *fuzzGen) fuzzCmd {
	k := g.keyOf("x", "str", "a")
	switch g.n(9) {
	case 0:
		return exact("SETBIT", k, g.bitOffset(true), g.pick("0", "1", "2", "-1", ""))
	case 1:
		return exact("GETBIT", k, g.bitOffset(false))
	case 2:
		args := []string{"BITCOUNT", k}
		if g.chance(60) {
			args = append(args, g.num(), g.num())
		}
		if g.chance(40) {
			args = append(args, g.opt(g.pick("BYTE", "BIT", "BOTH")))
		}
		return exact(args...)
	case 3:
		args := []string{"BITPOS", k, g.pick("0", "1", "2")}
		for i := g.n(3); i > 0; i-- {
			args = append(args, g.num())
		}
		if g.chance(30) {
			args = append(args, g.opt(g.pick("BYTE", "BIT")))
		}
		return exact(args...)
	case 4:
		args := []string{"BITOP", g.opt(g.pick("AND", "OR", "XOR", "NOT", "NAND")), g.key(), k}
		for i := g.n(3); i > 0; i-- {
			args = append(args, g.key())
		}
		return exact(args...)
	case 5, 6, 7:
		name := g.pick("BITFIELD", "BITFIELD", "BITFIELD_RO")
		args := []string{name, k}
		for i := g.n(4); i >= 0; i-- {
			typ := g.pick("u8", "i8", "u1", "i64", "u63", "u64", "i65", "i1", "u0", "x8", "I16", "u32", "i17")
			switch g.n(5) {
			case 0:
				args = append(args, g.opt("GET"), typ, g.bitOffset(false))
			case 1:
				args = append(args, g.opt("SET"), typ, g.bitOffset(true), g.num())
			case 2:
				args = append(args, g.opt("INCRBY"), typ, g.bitOffset(true), g.num())
			case 3:
				args = append(args, g.opt("OVERFLOW"), g.opt(g.pick("WRAP", "SAT", "FAIL", "NONE")))
			default:
				args = append(args, g.pick("GET", "SET", "BOGUS"), typ)
			}
		}
		return exact(args...)
	default:
		return exact("GET", k)
	}
}

func genLists(g *fuzzGen) fuzzCmd {
	k := g.keyOf("l", "b", "c")
	switch g.n(18) {
	case 0, 1:
		args := []string{g.pick("LPUSH", "RPUSH", "LPUSHX", "RPUSHX"), k}
		for i := g.n(4); i >= 0; i-- {
			args = append(args, g.member())
		}
		return exact(args...)
	case 2:
		args := []string{g.pick("LPOP", "RPOP"), k}
		if g.chance(50) {
			args = append(args, g.count())
		}
		return exact(args...)
	case 3:
		return exact("LRANGE", k, g.num(), g.num())
	case 4:
		return exact("LINDEX", k, g.num())
	case 5:
		return exact("LSET", k, g.num(), g.member())
	case 6:
		return exact("LREM", k, g.num(), g.member())
	case 7:
		return exact("LTRIM", k, g.num(), g.num())
	case 8:
		return exact("LINSERT", k, g.opt(g.pick("BEFORE", "AFTER", "MIDDLE")), g.member(), g.member())
	case 9:
		args := []string{"LPOS", k, g.member()}
		return exact(g.opts(args, map[string]func() []string{
			"RANK": func() []string { return []string{g.num()} }, "COUNT": func() []string { return []string{g.count()} },
			"MAXLEN": func() []string { return []string{g.num()} },
		})...)
	case 10:
		return exact("LMOVE", k, g.key(), g.opt(g.pick("LEFT", "RIGHT", "UP")), g.opt(g.pick("LEFT", "RIGHT")))
	case 11:
		return exact("RPOPLPUSH", k, g.key())
	case 12:
		args := []string{"LMPOP", g.pick("1", "2", "0", "-1", "abc"), k, g.key(), g.opt(g.pick("LEFT", "RIGHT", "MID"))}
		if g.chance(50) {
			args = append(args, g.opt("COUNT"), g.count())
		}
		return exact(args...)
	case 13:
		// Blocking forms with a 10 ms timeout: they block briefly on an
		// empty key, as redis-server does.
		return exact(g.pick("BLPOP", "BRPOP"), k, g.key(), g.pick("0.01", "-1", "abc", "0.01"))
	case 14:
		return exact("BLMOVE", k, g.key(), g.opt("LEFT"), g.opt(g.pick("RIGHT", "LEFT")), g.pick("0.01", "-0.5", "nan"))
	case 15:
		return exact("BLMPOP", g.pick("0.01", "-1", "inf"), "2", k, g.key(), g.opt(g.pick("LEFT", "RIGHT")), g.opt("COUNT"), g.count())
	default:
		return exact("LLEN", k)
	}
}

func genHashes(g *fuzzGen) fuzzCmd {
	k := g.keyOf("h", "c", "a")
	switch g.n(14) {
	case 0, 1, 2:
		args := []string{g.pick("HSET", "HMSET"), k}
		for i := g.n(3); i >= 0; i-- {
			args = append(args, g.member(), g.value())
		}
		if g.chance(5) {
			args = args[:len(args)-1]
		}
		return exact(args...)
	case 3:
		return exact("HGET", k, g.member())
	case 4:
		return exact("HDEL", k, g.member(), g.member())
	case 5:
		return unordered(g.pick("HGETALL", "HKEYS", "HVALS"), k)
	case 6:
		return exact("HINCRBY", k, g.member(), g.num())
	case 7:
		return exact("HINCRBYFLOAT", k, g.member(), g.score())
	case 8:
		return exact("HSETNX", k, g.member(), g.value())
	case 9:
		return exact("HMGET", k, g.member(), g.member())
	case 10:
		return exact(g.pick("HLEN", "HSTRLEN", "HEXISTS"), k, g.member())
	case 11:
		args := []string{"HRANDFIELD", k}
		if g.chance(70) {
			args = append(args, g.count())
			if g.chance(50) {
				args = append(args, g.opt(g.pick("WITHVALUES", "WITHSCORES")))
			}
		}
		return fuzzCmd{args: args, cmp: cmpLen}
	case 12:
		args := []string{"HSCAN", k, g.pick("0", "abc", "-1", "18446744073709551615")}
		return scanCmd(g.opts(args, map[string]func() []string{
			"COUNT": func() []string { return []string{g.pick("1000", "0", "-1", "abc")} },
			"MATCH": func() []string { return []string{g.pick("*", "m*", "[", "\\")} },
		}))
	default:
		return exact("HSTRLEN", k, g.member())
	}
}

// scanCmd compares a scan's elements only from cursor 0: any other cursor
// names a bucket of each server's own (randomly seeded) hash table.
func scanCmd(args []string) fuzzCmd {
	if args[0] == "SCAN" && args[1] == "0" || args[0] != "SCAN" && args[2] == "0" {
		return fuzzCmd{args: args, cmp: cmpScan}
	}
	return kindOnly(args...)
}

func genSets(g *fuzzGen) fuzzCmd {
	k := g.keyOf("s", "b", "c")
	switch g.n(15) {
	case 0, 1, 2:
		args := []string{"SADD", k}
		for i := g.n(4); i >= 0; i-- {
			args = append(args, g.member())
		}
		return exact(args...)
	case 3:
		return exact("SREM", k, g.member(), g.member())
	case 4:
		return unordered("SMEMBERS", k)
	case 5:
		return exact(g.pick("SISMEMBER", "SCARD"), k, g.member())
	case 6:
		return exact("SMISMEMBER", k, g.member(), g.member())
	case 7:
		return unordered(g.pick("SINTER", "SUNION", "SDIFF"), k, g.key())
	case 8:
		return exact(g.pick("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), g.key(), k, g.key())
	case 9:
		args := []string{"SINTERCARD", g.pick("2", "1", "0", "-1", "3"), k, g.key()}
		if g.chance(50) {
			args = append(args, g.opt("LIMIT"), g.num())
		}
		return exact(args...)
	case 10:
		return exact("SMOVE", k, g.key(), g.member())
	case 11:
		// SPOP's pick is random; a count covering the set pops all of it
		// (the same on both), and bad counts are errors.
		return unordered("SPOP", k, g.pick("100", "0", "-1", "abc", ""))
	case 12:
		args := []string{"SRANDMEMBER", k}
		if g.chance(70) {
			args = append(args, g.count())
		}
		return fuzzCmd{args: args, cmp: cmpLen}
	case 13:
		return fuzzCmd{args: []string{"SSCAN", k, "0", g.opt("COUNT"), g.pick("1000", "0", "abc")}, cmp: cmpScan}
	default:
		return exact("SCARD", k)
	}
}

func genZsets(g *fuzzGen) fuzzCmd {
	k := g.keyOf("z", "geo", "c")
	switch g.n(20) {
	case 0, 1, 2:
		args := []string{"ZADD", k}
		for _, o := range []string{"NX", "XX", "GT", "LT", "CH", "INCR"} {
			if g.chance(8) {
				args = append(args, g.opt(o))
			}
		}
		for i := g.n(3); i >= 0; i-- {
			args = append(args, g.score(), g.member())
		}
		if g.chance(5) {
			args = args[:len(args)-1]
		}
		return exact(args...)
	case 3:
		return exact("ZINCRBY", k, g.score(), g.member())
	case 4:
		args := []string{"ZRANGE", k, g.rangeBound(), g.rangeBound()}
		for _, o := range []string{"BYSCORE", "BYLEX", "REV", "WITHSCORES"} {
			if g.chance(25) {
				args = append(args, g.opt(o))
			}
		}
		if g.chance(25) {
			args = append(args, g.opt("LIMIT"), g.num(), g.num())
		}
		return exact(args...)
	case 5:
		args := []string{g.pick("ZRANGEBYSCORE", "ZREVRANGEBYSCORE"), k, g.rangeBound(), g.rangeBound()}
		if g.chance(30) {
			args = append(args, g.opt("WITHSCORES"))
		}
		if g.chance(30) {
			args = append(args, g.opt("LIMIT"), g.num(), g.num())
		}
		return exact(args...)
	case 6:
		return exact(g.pick("ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZLEXCOUNT"), k, g.rangeBound(), g.rangeBound())
	case 7:
		return exact(g.pick("ZCOUNT", "ZREMRANGEBYSCORE", "ZREMRANGEBYLEX"), k, g.rangeBound(), g.rangeBound())
	case 8:
		return exact(g.pick("ZRANK", "ZREVRANK", "ZSCORE"), k, g.member())
	case 9:
		return exact("ZMSCORE", k, g.member(), g.member())
	case 10:
		return exact("ZREM", k, g.member(), g.member())
	case 11:
		return exact(g.pick("ZPOPMIN", "ZPOPMAX"), k, g.count())
	case 12:
		args := []string{g.pick("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"), g.key(), g.pick("2", "1", "0", "3", "-1"), k, g.key()}
		if g.chance(30) {
			args = append(args, g.opt("WEIGHTS"), g.score(), g.score())
		}
		if g.chance(30) {
			args = append(args, g.opt("AGGREGATE"), g.opt(g.pick("SUM", "MIN", "MAX", "AVG")))
		}
		return exact(args...)
	case 13:
		args := []string{g.pick("ZUNION", "ZINTER", "ZDIFF"), "2", k, g.key()}
		if g.chance(40) {
			args = append(args, g.opt("WITHSCORES"))
		}
		return exact(args...)
	case 14:
		args := []string{"ZRANGESTORE", g.key(), k, g.rangeBound(), g.rangeBound()}
		for _, o := range []string{"BYSCORE", "BYLEX", "REV"} {
			if g.chance(25) {
				args = append(args, g.opt(o))
			}
		}
		return exact(args...)
	case 15:
		args := []string{"ZMPOP", g.pick("1", "2", "0"), k, g.key(), g.opt(g.pick("MIN", "MAX", "MED"))}
		if g.chance(50) {
			args = append(args, g.opt("COUNT"), g.count())
		}
		return exact(args...)
	case 16:
		return exact(g.pick("BZPOPMIN", "BZPOPMAX"), k, g.key(), g.pick("0.01", "-1", "abc"))
	case 17:
		args := []string{"ZRANDMEMBER", k}
		if g.chance(70) {
			args = append(args, g.count())
			if g.chance(50) {
				args = append(args, g.opt("WITHSCORES"))
			}
		}
		return fuzzCmd{args: args, cmp: cmpLen}
	case 18:
		return exact("ZREMRANGEBYRANK", k, g.num(), g.num())
	default:
		return exact("ZCARD", k)
	}
}

func genKeys(g *fuzzGen) fuzzCmd {
	k := g.key()
	switch g.n(22) {
	case 0:
		return exact("DEL", k, g.key())
	case 1:
		return exact(g.pick("EXISTS", "TYPE", "UNLINK", "TOUCH"), k)
	case 2:
		args := []string{g.pick("EXPIRE", "PEXPIRE"), k, g.expiry()}
		if g.chance(40) {
			args = append(args, g.opt(g.pick("NX", "XX", "GT", "LT", "YY")))
		}
		return exact(args...)
	case 3:
		return exact(g.pick("EXPIREAT", "PEXPIREAT"), k, g.pick("4102444800", "4102444800000", "1", "0", "-1", "abc"))
	case 4:
		return exact("TTL", k)
	case 5:
		return kindOnly(g.pick("PTTL", "EXPIRETIME", "PEXPIRETIME"), k)
	case 6:
		return exact("PERSIST", k)
	case 7:
		return exact(g.pick("RENAME", "RENAMENX"), k, g.key())
	case 8:
		args := []string{"COPY", k, g.key()}
		if g.chance(40) {
			args = append(args, g.opt("DB"), g.pick("0", "1", "2", "16", "-1", "abc"))
		}
		if g.chance(40) {
			args = append(args, g.opt("REPLACE"))
		}
		return exact(args...)
	case 9:
		return exact("MOVE", k, g.pick("0", "1", "2", "16", "abc"))
	case 10:
		return exact("OBJECT", g.opt("ENCODING"), k)
	case 11:
		// Idle times and LFU counters are time- and random-driven.
		return kindOnly("OBJECT", g.opt(g.pick("IDLETIME", "FREQ")), k)
	case 12:
		return unordered("KEYS", g.pick("*", "?", "[a-c]", "{t}*", "\\", "*[", "s*"))
	case 13:
		return scanCmd(g.opts([]string{"SCAN", g.pick("0", "abc", "-1")}, map[string]func() []string{
			"COUNT": func() []string { return []string{g.pick("1000", "0", "abc")} },
			"MATCH": func() []string { return []string{g.pick("*", "s*", "[")} },
			"TYPE":  func() []string { return []string{g.pick("string", "zset", "hash", "bogus")} },
		}))
	case 14:
		return exact("SELECT", g.pick("0", "1", "0", "2", "16", "-1", "abc"))
	case 15:
		return exact("SWAPDB", g.pick("0", "1", "2", "16", "abc"), g.pick("0", "1", "2", "-1"))
	case 16:
		return exact("DBSIZE")
	case 17:
		return kindOnly("RANDOMKEY")
	case 18:
		if g.chance(30) {
			return exact("FLUSHALL", g.opt(g.pick("ASYNC", "SYNC", "LAZY")))
		}
		return exact("FLUSHDB")
	case 19:
		return kindOnly("MEMORY", g.opt("USAGE"), k)
	case 20:
		return exact("OBJECT", g.opt(g.pick("REFCOUNT", "BOGUS")), k)
	default:
		return exact("TYPE", k)
	}
}

func genStreams(g *fuzzGen) fuzzCmd {
	k := g.keyOf("str", "b", "x")
	id := func() string {
		if g.chance(15) {
			return g.pick("0", "0-0", "-", "+", "$", ">", "abc", "1-", "-1", "18446744073709551615-18446744073709551615", "(1", "1-*", "")
		}
		return strconv.Itoa(g.n(30)) + "-" + strconv.Itoa(g.n(3))
	}
	group := func() string { return g.pick("g1", "g2", "g1", "") }
	consumer := func() string { return g.pick("c1", "c2", "c3") }
	switch g.n(20) {
	case 0, 1, 2, 3:
		args := []string{"XADD", k}
		if g.chance(15) {
			args = append(args, g.opt("NOMKSTREAM"))
		}
		if g.chance(20) {
			args = append(args, g.opt(g.pick("MAXLEN", "MINID")))
			if g.chance(60) {
				args = append(args, g.pick("~", "="))
			}
			args = append(args, g.num())
		}
		if g.chance(10) {
			args = append(args, g.opt("LIMIT"), g.num())
		}
		// Explicit ids: "*" would make each server its own ids.
		args = append(args, id(), g.member(), g.value())
		if g.chance(30) {
			args = append(args, g.member(), g.value())
		}
		if g.chance(5) {
			args = append(args, g.member())
		}
		return exact(args...)
	case 4:
		args := []string{g.pick("XRANGE", "XREVRANGE"), k, id(), id()}
		if g.chance(40) {
			args = append(args, g.opt("COUNT"), g.num())
		}
		return exact(args...)
	case 5:
		return exact("XLEN", k)
	case 6:
		return exact("XDEL", k, id(), id())
	case 7:
		args := []string{"XTRIM", k, g.opt(g.pick("MAXLEN", "MINID", "SIZE"))}
		if g.chance(50) {
			args = append(args, g.pick("~", "="))
		}
		args = append(args, g.pick(g.num(), id()))
		if g.chance(20) {
			args = append(args, g.opt("LIMIT"), g.num())
		}
		return exact(args...)
	case 8:
		args := []string{"XREAD"}
		if g.chance(50) {
			args = append(args, g.opt("COUNT"), g.num())
		}
		if g.chance(30) {
			args = append(args, g.opt("BLOCK"), g.pick("10", "-1", "abc"))
		}
		args = append(args, g.opt("STREAMS"), k)
		if g.chance(50) {
			args = append(args, g.key(), id())
		}
		return exact(append(args, id())...)
	case 9:
		args := []string{"XGROUP", g.opt("CREATE"), k, group(), g.pick("$", "0", id())}
		if g.chance(50) {
			args = append(args, g.opt("MKSTREAM"))
		}
		if g.chance(20) {
			args = append(args, g.opt("ENTRIESREAD"), g.num())
		}
		return exact(args...)
	case 10:
		args := []string{"XREADGROUP", g.opt("GROUP"), group(), consumer()}
		if g.chance(50) {
			args = append(args, g.opt("COUNT"), g.count())
		}
		if g.chance(20) {
			args = append(args, g.opt("NOACK"))
		}
		if g.chance(20) {
			args = append(args, g.opt("BLOCK"), "10")
		}
		return exact(append(args, g.opt("STREAMS"), k, g.pick(">", ">", "0", id()))...)
	case 11:
		return exact("XACK", k, group(), id(), id())
	case 12:
		args := []string{"XPENDING", k, group()}
		if g.chance(60) {
			// The extended form reports idle times: kind only.
			args = append(args, id(), id(), g.num())
			if g.chance(30) {
				args = append(args, consumer())
			}
			return kindOnly(args...)
		}
		return exact(args...)
	case 13:
		args := []string{"XCLAIM", k, group(), consumer(), g.pick("0", "100000", "-1", "abc"), id()}
		if g.chance(60) {
			args = append(args, g.opt("JUSTID"))
		}
		if g.chance(20) {
			args = append(args, g.opt(g.pick("FORCE", "RETRYCOUNT", "LASTID", "IDLE")), g.num())
		}
		return exact(args...)
	case 14:
		args := []string{"XAUTOCLAIM", k, group(), consumer(), g.pick("0", "100000", "-1"), id()}
		if g.chance(40) {
			args = append(args, g.opt("COUNT"), g.count())
		}
		if g.chance(40) {
			args = append(args, g.opt("JUSTID"))
		}
		return exact(args...)
	case 15:
		sub := g.pick("SETID", "DESTROY", "CREATECONSUMER", "DELCONSUMER", "BOGUS")
		args := []string{"XGROUP", g.opt(sub), k, group()}
		switch sub {
		case "SETID":
			args = append(args, g.pick("$", id()))
			if g.chance(30) {
				args = append(args, g.opt("ENTRIESREAD"), g.num())
			}
		case "CREATECONSUMER", "DELCONSUMER":
			args = append(args, consumer())
		}
		return exact(args...)
	case 16:
		return exact("XINFO", g.opt("STREAM"), k)
	case 17:
		return kindOnly("XINFO", g.opt(g.pick("CONSUMERS", "GROUPS")), k, group())
	case 18:
		return exact("XSETID", k, id(), g.opt("ENTRIESADDED"), g.num(), g.opt("MAXDELETEDID"), id())
	default:
		return kindOnly("XINFO", g.opt("STREAM"), k, g.opt("FULL"), g.opt("COUNT"), g.num())
	}
}

func genGeo(g *fuzzGen) fuzzCmd {
	k := g.keyOf("geo", "z")
	lon := func() string {
		return g.pick("13.361389", "15.087269", "-180", "180", "180.0001", "0", "-73.9", "nan", "abc", "1e400")
	}
	lat := func() string {
		return g.pick("38.115556", "37.502669", "85.05112878", "85.06", "-85.05112878", "0", "40.7", "inf")
	}
	shapeOpts := func(args []string) []string {
		return g.opts(args, map[string]func() []string{
			"WITHDIST": none, "WITHCOORD": none, "WITHHASH": none, "ASC": none, "DESC": none, "ANY": none,
			"COUNT": func() []string { return []string{g.count()} },
		})
	}
	unit := func() string { return g.opt(g.pick("m", "km", "mi", "ft", "yd")) }
	switch g.n(9) {
	case 0, 1:
		args := []string{"GEOADD", k}
		for _, o := range []string{"NX", "XX", "CH"} {
			if g.chance(10) {
				args = append(args, g.opt(o))
			}
		}
		for i := g.n(2); i >= 0; i-- {
			args = append(args, lon(), lat(), g.member())
		}
		return exact(args...)
	case 2:
		return exact(g.pick("GEOPOS", "GEOHASH"), k, g.member(), g.member())
	case 3:
		args := []string{"GEODIST", k, g.member(), g.member()}
		if g.chance(60) {
			args = append(args, unit())
		}
		return exact(args...)
	case 4, 5:
		args := []string{"GEOSEARCH", k}
		if g.chance(50) {
			args = append(args, g.opt("FROMMEMBER"), g.member())
		} else {
			args = append(args, g.opt("FROMLONLAT"), lon(), lat())
		}
		if g.chance(50) {
			args = append(args, g.opt("BYRADIUS"), g.pick("200", "1000", "0", "-1", "abc"), unit())
		} else {
			args = append(args, g.opt("BYBOX"), g.pick("400", "1e4", "0"), g.pick("400", "2000"), unit())
		}
		return exact(shapeOpts(args)...)
	case 6:
		args := []string{"GEOSEARCHSTORE", g.key(), k, g.opt("FROMLONLAT"), lon(), lat(), g.opt("BYRADIUS"), g.pick("200", "5000"), unit()}
		if g.chance(30) {
			args = append(args, g.opt("STOREDIST"))
		}
		return exact(shapeOpts(args)...)
	case 7:
		args := []string{g.pick("GEORADIUS", "GEORADIUS_RO"), k, lon(), lat(), g.pick("200", "5000", "-1"), unit()}
		return exact(shapeOpts(args)...)
	default:
		args := []string{g.pick("GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"), k, g.member(), g.pick("200", "5000"), unit()}
		if g.chance(20) {
			args = append(args, g.opt(g.pick("STORE", "STOREDIST")), g.key())
		}
		return exact(shapeOpts(args)...)
	}
}

func genSort(g *fuzzGen) fuzzCmd {
	k := g.keyOf("l", "s", "z")
	args := []string{g.pick("SORT", "SORT", "SORT_RO"), k}
	args = g.opts(args, map[string]func() []string{
		"BY":    func() []string { return []string{g.pick("nosort", "h*->m1", "*", "a", "str", "x*", "h->m1", "w_*")} },
		"GET":   func() []string { return []string{g.pick("#", "h*->m1", "*", "a", "h->", "#3")} },
		"LIMIT": func() []string { return []string{g.num(), g.num()} },
		"ASC":   none, "DESC": none, "ALPHA": none,
		"STORE": func() []string { return []string{g.key()} },
	})
	// A BY pattern without "*" (nosort) keeps a set's own (hash) order;
	// with LIMIT it picks a hash-order subset.
	// ALPHA with a BY pattern leaves elements whose weights are both
	// missing tied, in the input's order: a set's hash order again.
	nosort, limit, alpha, by := false, false, false, false
	for i, a := range args {
		if strings.EqualFold(a, "BY") && i+1 < len(args) {
			by = true
			nosort = nosort || !strings.Contains(args[i+1], "*")
		}
		limit = limit || strings.EqualFold(a, "LIMIT")
		alpha = alpha || strings.EqualFold(a, "ALPHA")
	}
	nosort = nosort || alpha && by
	store, get := false, false
	for _, a := range args {
		store = store || strings.EqualFold(a, "STORE")
		get = get || strings.EqualFold(a, "GET")
	}
	switch {
	case nosort && limit:
		return fuzzCmd{args: args, cmp: cmpLen}
	case nosort:
		return unordered(args...)
	case alpha && !store && limit:
		// ALPHA compares with strcoll, which stops at a NUL: "a" and
		// "a\x00b" tie and keep a set's hash order.
		return fuzzCmd{args: args, cmp: cmpLen}
	case alpha && !store && get:
		return unordered(args...)
	case alpha && !store:
		return fuzzCmd{args: args, cmp: cmpCString}
	}
	return exact(args...)
}

func genDump(g *fuzzGen) fuzzCmd {
	k := g.key()
	switch g.n(4) {
	case 0:
		// Hashtable sets and hashes dump in this server's order (documented):
		// the payload is compared by kind; RESTORE of it is compared below.
		return kindOnly("DUMP", k)
	case 1, 2:
		args := []string{"RESTORE", g.key(), g.pick("0", "0", "100000", "-1", "abc"), fuzzDumpToken}
		return exact(g.opts(args, map[string]func() []string{
			"REPLACE": none, "ABSTTL": none,
			"IDLETIME": func() []string { return []string{g.pick("10", "-1", "abc")} },
			"FREQ":     func() []string { return []string{g.pick("10", "256", "-1")} },
		})...)
	default:
		args := []string{"MIGRATE", "127.0.0.1", "1", g.pick(k, ""), "0", "10"}
		if g.chance(30) {
			args = append(args, g.opt(g.pick("COPY", "REPLACE", "AUTH")))
		}
		if g.chance(30) {
			args = append(args, g.opt("KEYS"), g.key())
		}
		return exact(args...)
	}
}

// fuzzDumpToken stands for the payload of the last DUMP each server
// answered, so RESTORE round-trips each server's own payload.
const fuzzDumpToken = "\x00dump\x00"

func genServer(g *fuzzGen) fuzzCmd {
	switch g.n(22) {
	case 0:
		// Which latency events exist depends on how long commands took.
		sub := g.pick("LATEST", "DOCTOR", "HISTORY", "RESET", "GRAPH", "HISTOGRAM", "BOGUS")
		if sub == "BOGUS" {
			return exact("LATENCY", sub)
		}
		return fuzzCmd{args: []string{"LATENCY", g.opt(sub), g.pick("command", "fast-command", "set")}, cmp: cmpSkip}
	case 1:
		return kindOnly("LATENCY", g.opt("HISTOGRAM"))
	case 2:
		return exact("ACL", g.opt(g.pick("WHOAMI", "USERS")))
	case 3:
		// Redis lists categories and commands in its dicts' order.
		if g.chance(30) {
			return unordered("ACL", g.opt("CAT"))
		}
		return unordered("ACL", g.opt("CAT"), g.pick("string", "bogus", "keyspace", ""))
	case 4:
		return exact("ACL", g.opt(g.pick("GETUSER", "DELUSER")), g.pick("nobody", "bob", ""))
	case 5:
		return kindOnly("ACL", g.opt(g.pick("LOG", "GENPASS")), g.pick("1", "0", "-1", "abc", "RESET"))
	case 6:
		return exact("ACL", g.opt("DRYRUN"), "default", g.pick("GET", "SET", "bogus"), g.key())
	case 7:
		// Only harmless rules for default; other users are Revolver's
		// documented refusal.
		return exact("ACL", g.opt("SETUSER"), "default", g.pick("on", "~*", "+@all", "allkeys", "bogusrule", "&*", "allchannels"))
	case 8:
		// No timeout 0: WAIT for a replica would block for ever.
		return exact("WAIT", g.pick("0", "1", "-1", "abc"), g.pick("10", "-1", "abc"))
	case 9:
		return exact("CLUSTER", g.opt(g.pick("INFO", "SLOTS", "SHARDS", "NODES", "MYID", "KEYSLOT", "COUNTKEYSINSLOT", "GETKEYSINSLOT", "BOGUS")), g.pick("{t}1", "0", "16384", "abc"))
	case 10:
		return exact(g.pick("READONLY", "READWRITE", "ASKING"))
	case 11:
		return exact("MODULE", g.opt(g.pick("LIST", "LOAD", "UNLOAD", "LOADEX", "BOGUS")), g.pick("/nonexistent.so", "mod"))
	case 12:
		// LOLWUT's art is random by design.
		return kindOnly("LOLWUT", g.opt("VERSION"), g.pick("5", "6", "7", "abc", "-1"), g.pick("10", "1", "0"))
	case 13:
		return kindOnly("INFO", g.pick("server", "keyspace", "stats", "bogus", "everything"))
	case 14:
		return exact("ECHO", g.value())
	case 15:
		return exact("PING", g.value())
	case 16:
		return exact("SPUBLISH", g.pick("ch", "{t}1", ""), g.value())
	case 17:
		return exact("PUBSUB", g.opt(g.pick("SHARDCHANNELS", "SHARDNUMSUB", "CHANNELS", "NUMSUB", "NUMPAT")), g.pick("*", "ch"))
	case 18:
		return exact("PUBLISH", g.pick("ch", ""), g.value())
	case 19:
		return kindOnly("CLIENT", g.opt(g.pick("ID", "INFO", "LIST", "GETNAME")))
	case 20:
		return exact("CLIENT", g.opt("SETNAME"), g.pick("fz", "", "a b", "x"))
	default:
		return exact("COMMAND", g.opt(g.pick("COUNT", "GETKEYS", "INFO")), g.pick("get", "sort", "bogus", "xread"), g.key())
	}
}

// fuzzConfigParams are parameters safe to change in the run: none of them
// changes how the test connects, persists or limits memory.
var fuzzConfigParams = []string{"hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
	"set-max-listpack-entries", "zset-max-listpack-entries", "zset-max-listpack-value", "list-max-listpack-size",
	"list-compress-depth", "stream-node-max-entries", "stream-node-max-bytes", "maxmemory-policy", "lfu-log-factor",
	"lfu-decay-time", "latency-monitor-threshold", "notify-keyspace-events", "lazyfree-lazy-user-del",
	"lazyfree-lazy-user-flush", "slowlog-log-slower-than", "hll-sparse-max-bytes", "active-expire-effort",
	"maxmemory-samples", "tracking-table-max-keys", "activerehashing", "hz", "bogus-param", "latency-tracking",
	"latency-tracking-info-percentiles", "maxmemory-eviction-tenacity"}

func genConfig(g *fuzzGen) fuzzCmd {
	p := g.pick(fuzzConfigParams...)
	if g.chance(50) {
		// Redis lists matches in its dict's order.
		return unordered("CONFIG", g.opt("GET"), g.pick(p, "*max-*-entries*", "maxmemory*", "zset*"))
	}
	val := g.pick("0", "1", "2", "128", "-1", "abc", "", "yes", "no", "allkeys-lfu", "volatile-lru", "noeviction",
		"KEA", "Ex", "1gb", "10k", "99999999999999999999", "50 99 99.9", "4294967296")
	args := []string{"CONFIG", g.opt("SET"), p, val}
	if g.chance(15) {
		args = append(args, g.pick(fuzzConfigParams...), g.pick("1", "yes"))
	}
	return exact(args...)
}

func genTracking(g *fuzzGen) fuzzCmd {
	switch g.n(6) {
	case 0, 1:
		args := []string{"CLIENT", g.opt("TRACKING"), g.opt(g.pick("ON", "OFF", "MAYBE"))}
		return exact(g.opts(args, map[string]func() []string{
			"BCAST": none, "OPTIN": none, "OPTOUT": none, "NOLOOP": none,
			"PREFIX":   func() []string { return []string{g.pick("a", "s", "")} },
			"REDIRECT": func() []string { return []string{g.pick("999999", "0", "-1", "abc")} },
		})...)
	case 2:
		return exact("CLIENT", g.opt("CACHING"), g.pick("yes", "no", "maybe"))
	case 3:
		return exact("CLIENT", g.opt("GETREDIR"))
	case 4:
		return exact("CLIENT", g.opt("TRACKINGINFO"))
	default:
		return fuzzCmd{args: []string{"CLIENT", g.opt("REPLY"), g.pick("SKIP", "OFF", "ON", "BOGUS")}, cmp: cmpExact}
	}
}

func genTx(g *fuzzGen) fuzzCmd {
	switch g.n(6) {
	case 0:
		return exact("MULTI")
	case 1:
		return exact("EXEC")
	case 2:
		return exact("DISCARD")
	case 3:
		return exact("WATCH", g.key(), g.key())
	case 4:
		return exact("UNWATCH")
	default:
		return exact("RESET")
	}
}
