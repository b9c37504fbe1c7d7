package tests

// The command families of the differential fuzzer and the generators of
// the older data types (fuzz_commands_new_test.go has this round's).

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
		if g.chance(50) {
			return paired("HGETALL", k)
		}
		return unordered(g.pick("HKEYS", "HVALS"), k)
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
		if args[0] == "HSCAN" || args[0] == "ZSCAN" {
			return fuzzCmd{args: args, cmp: cmpScanPairs}
		}
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
