package tests

import (
	"strconv"
	"strings"
)

// The fuzzer's generators for the commands added this round: streams, geo,
// SORT, DUMP/RESTORE/MIGRATE, the server group, CONFIG, tracking, and
// transactions.

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
		// Redis lists categories and commands in its dicts' order; with no
		// category Revolver lists its own after Redis's.
		if g.chance(30) {
			return kindOnly("ACL", g.opt("CAT"))
		}
		return unordered("ACL", g.opt("CAT"), g.pick("string", "bogus", "keyspace", ""))
	case 4:
		return exact("ACL", g.opt(g.pick("GETUSER", "DELUSER")), g.pick("nobody", "bob", ""))
	case 5:
		return kindOnly("ACL", g.opt(g.pick("LOG", "GENPASS")), g.pick("1", "0", "-1", "abc", "RESET"))
	case 6:
		return exact("ACL", g.opt("DRYRUN"), "default", g.pick("GET", "SET", "bogus"), g.key())
	case 7:
		// Only harmless rules for default (other users: acl_users.txt).
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
		return paired("CONFIG", g.opt("GET"), g.pick(p, "*max-*-entries*", "maxmemory*", "zset*"))
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
