package commands

import (
	runtimedebug "runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/revolver-db/revolver/engine"
)

// ServerCmds is the server family.
var ServerCmds = []*Command{
	{Name: "info", Arity: -1, Flags: "loading stale", ACL: "dangerous",
		Tips: "nondeterministic_output;request_policy:all_shards;response_policy:special", Group: "server",
		Since: "1.0.0", Complexity: "O(1)", Summary: "Returns information and statistics about the server.",
		Args: "[section...]", Run: info},
	{Name: "config", Arity: -2, Group: "server", Since: "2.0.0", Complexity: "Depends on subcommand.",
		Summary: "A container for server configuration commands.", Subs: []*Command{
			{Name: "get", Arity: -3, Flags: "admin noscript loading stale", Group: "server", Since: "2.0.0",
				Complexity: "O(N) when N is the number of configuration parameters provided",
				Summary:    "Returns the effective values of configuration parameters.",
				Args:       "(parameter=parameter)...", Run: configGet},
			{Name: "set", Arity: -4, Flags: "admin noscript loading stale", Group: "server", Since: "2.0.0",
				Tips:       "request_policy:all_nodes;response_policy:all_succeeded",
				Complexity: "O(N) when N is the number of configuration parameters provided",
				Summary:    "Sets configuration parameters in-flight.", Args: "(parameter value)...", Run: configSet},
			{Name: "resetstat", Arity: 2, Flags: "admin noscript loading stale", Group: "server", Since: "2.0.0",
				Complexity: "O(1)", Summary: "Resets the server's statistics.", Run: configResetStat},
			{Name: "rewrite", Arity: 2, Flags: "admin noscript loading stale", Group: "server", Since: "2.8.0",
				Complexity: "O(1)", Summary: "Persists the effective configuration to file.", Run: configRewrite},
			{Name: "help", Arity: 2, Flags: "loading stale", Group: "server", Since: "5.0.0", Complexity: "O(1)",
				Summary: "Returns helpful text about the different subcommands.", Run: configHelp},
		}},
	{Name: "dbsize", Arity: 1, Flags: "readonly fast", ACL: "keyspace",
		Tips: "request_policy:all_shards;response_policy:agg_sum", Group: "server", Since: "1.0.0",
		Complexity: "O(1)", Summary: "Returns the number of keys in the database.", Run: dbsize},
	{Name: "flushdb", Arity: -1, Flags: "write", ACL: "keyspace dangerous",
		Tips: "request_policy:all_shards;response_policy:all_succeeded", Group: "server", Since: "1.0.0",
		Complexity: "O(N) where N is the number of keys in the selected database",
		Summary:    "Removes all keys from the current database.", Args: "[async=ASYNC|SYNC]", Run: flushdb},
	{Name: "flushall", Arity: -1, Flags: "write", ACL: "keyspace dangerous",
		Tips: "request_policy:all_shards;response_policy:all_succeeded", Group: "server", Since: "1.0.0",
		Complexity: "O(N) where N is the total number of keys in all databases",
		Summary:    "Removes all keys from all databases.", Args: "[async=ASYNC|SYNC]", Run: flushall},
	{Name: "swapdb", Arity: 3, Flags: "write fast", ACL: "keyspace dangerous", Group: "server", Since: "4.0.0",
		Complexity: "O(N) where N is the count of clients watching or blocking on keys from both databases.",
		Summary:    "Exchanges the contents of two databases.", Args: "index1:integer index2:integer", Run: swapdb},
	{Name: "time", Arity: 1, Flags: "loading stale fast", Tips: "nondeterministic_output", Group: "server",
		Since: "2.6.0", Complexity: "O(1)", Summary: "Returns the server time.", Run: timeCmd},
	{Name: "role", Arity: 1, Flags: "noscript loading stale fast", ACL: "admin dangerous", Group: "server",
		Since: "2.8.12", Complexity: "O(1)", Summary: "Returns the replication role.", Run: role},
	{Name: "save", Arity: 1, Flags: "no_async_loading admin noscript no_multi", Group: "server", Since: "1.0.0",
		Complexity: "O(N) where N is the total number of keys in all databases",
		Summary:    "Synchronously saves a consistent checkpoint of the data.", Run: save},
	{Name: "bgsave", Arity: -1, Flags: "no_async_loading admin noscript", Group: "server", Since: "1.0.0",
		Complexity: "O(N) where N is the total number of keys in all databases",
		Summary:    "Asynchronously saves a consistent checkpoint of the data.", Args: "[SCHEDULE]", Run: bgsave},
	{Name: "lastsave", Arity: 1, Flags: "loading stale fast", ACL: "admin dangerous",
		Tips: "nondeterministic_output", Group: "server", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Returns the Unix timestamp of the last successful save.", Run: lastsave},
	{Name: "shutdown", Arity: -1, Flags: "admin noscript loading stale no_multi allow_busy", Group: "server",
		Since: "1.0.0", Complexity: "O(N) when saving, where N is the total number of keys in all databases",
		Summary: "Flushes and syncs the data to disk and shuts the server down.",
		Args:    "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]", Run: shutdown},
	{Name: "slowlog", Arity: -2, Group: "server", Since: "2.2.12", Complexity: "Depends on subcommand.",
		Summary: "A container for slow log commands.", Subs: []*Command{
			{Name: "get", Arity: -2, Flags: "admin loading stale", Tips: "request_policy:all_nodes;nondeterministic_output",
				Group: "server", Since: "2.2.12", Complexity: "O(N) where N is the number of entries returned",
				Summary: "Returns the slow log's entries.", Args: "[count:integer]", Run: slowlogGet},
			{Name: "len", Arity: 2, Flags: "admin loading stale",
				Tips:  "request_policy:all_nodes;response_policy:agg_sum;nondeterministic_output",
				Group: "server", Since: "2.2.12", Complexity: "O(1)",
				Summary: "Returns the number of entries in the slow log.", Run: slowlogLen},
			{Name: "reset", Arity: 2, Flags: "admin loading stale", Tips: "request_policy:all_nodes;response_policy:all_succeeded",
				Group: "server", Since: "2.2.12", Complexity: "O(N) where N is the number of entries in the slowlog",
				Summary: "Clears all entries from the slow log.", Run: slowlogReset},
			{Name: "help", Arity: 2, Flags: "loading stale", Group: "server", Since: "6.2.0", Complexity: "O(1)",
				Summary: "Returns helpful text about the different subcommands.", Run: slowlogHelp},
		}},
	{Name: "monitor", Arity: 1, Flags: "admin noscript loading stale", Group: "server", Since: "1.0.0",
		Complexity: "O(1)", Summary: "Listens for all requests received by the server in real time.", Run: monitor},
	{Name: "debug", Arity: -2, Flags: "admin noscript loading stale protected", Group: "server", Since: "1.0.0",
		DocFlags: "syscmd", Complexity: "Depends on subcommand.",
		Summary: "A container for debugging commands.", Args: "subcommand [argument...]", Run: debug},
	{Name: "memory", Arity: -2, Group: "server", Since: "4.0.0", Complexity: "Depends on subcommand.",
		Summary: "A container for memory diagnostics commands.", Subs: []*Command{
			{Name: "usage", Arity: -3, Flags: "readonly", Keys: "RO @2", Group: "server", Since: "4.0.0",
				Complexity: "O(N) where N is the number of samples.",
				Summary:    "Estimates the memory usage of a key.", Args: "key [SAMPLES count:integer]", Run: memoryUsage},
			{Name: "stats", Arity: 2, Tips: "nondeterministic_output;request_policy:all_shards;response_policy:special",
				Group: "server", Since: "4.0.0", Complexity: "O(1)",
				Summary: "Returns details about memory usage.", Run: memoryStats},
			{Name: "doctor", Arity: 2, Tips: "nondeterministic_output;request_policy:all_shards;response_policy:special",
				Group: "server", Since: "4.0.0", Complexity: "O(1)",
				Summary: "Outputs a memory problems report.", Run: memoryDoctor},
			{Name: "malloc-stats", Arity: 2,
				Tips:  "nondeterministic_output;request_policy:all_shards;response_policy:special",
				Group: "server", Since: "4.0.0", Complexity: "Depends on how much memory is allocated.",
				Summary: "Returns the allocator statistics.", Run: memoryMallocStats},
			{Name: "purge", Arity: 2, Tips: "request_policy:all_shards;response_policy:all_succeeded", Group: "server",
				Since: "4.0.0", Complexity: "Depends on how much memory is allocated.",
				Summary: "Asks the allocator to release memory.", Run: memoryPurge},
			{Name: "help", Arity: 2, Flags: "loading stale", Group: "server", Since: "4.0.0", Complexity: "O(1)",
				Summary: "Returns helpful text about the different subcommands.", Run: memoryHelp},
		}},
}

func info(c *Ctx) {
	sections := make([]string, 0, len(c.Args)-1)
	for _, a := range c.Args[1:] {
		sections = append(sections, strings.ToLower(string(a)))
	}
	c.W.Verbatim("txt", c.Srv.Info(sections))
}

// configGet follows Redis: a name without glob characters is looked up
// directly and reported as typed; a pattern reports the matching names.
// Each parameter appears once (names compare case-insensitively).
func configGet(c *Ctx) {
	seen := map[string]bool{}
	var out [][2]string
	add := func(name, value string) {
		if k := strings.ToLower(name); !seen[k] {
			seen[k] = true
			out = append(out, [2]string{name, value})
		}
	}
	for _, a := range c.Args[2:] {
		name := string(a)
		if !strings.ContainsAny(name, "[*?") {
			if kv := c.Srv.ConfigGet(name); len(kv) > 0 {
				add(name, kv[0][1])
			}
			continue
		}
		for _, kv := range c.Srv.ConfigGet(name) {
			add(kv[0], kv[1])
		}
	}
	c.W.Map(len(out))
	for _, kv := range out {
		c.W.BulkString(kv[0])
		c.W.BulkString(kv[1])
	}
}

func configSet(c *Ctx) {
	if len(c.Args)%2 != 0 {
		c.SyntaxError()
		return
	}
	var pairs [][2]string
	for i := 2; i < len(c.Args); i += 2 {
		pairs = append(pairs, [2]string{string(c.Args[i]), string(c.Args[i+1])})
	}
	if err := c.Srv.ConfigSet(pairs); err != nil {
		c.Error(err)
		return
	}
	c.W.OK()
}

func configResetStat(c *Ctx) {
	c.Srv.ConfigResetStat()
	c.W.OK()
}

func configRewrite(c *Ctx) {
	if err := c.Srv.ConfigRewrite(); err != nil {
		c.Error(err)
		return
	}
	c.W.OK()
}

func configHelp(c *Ctx) {
	writeHelp(c, "CONFIG",
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.")
}

func dbsize(c *Ctx) { c.W.Int(int64(c.DB.Len())) }

// flushMode validates FLUSHDB/FLUSHALL's optional ASYNC|SYNC.
func flushMode(c *Ctx) bool {
	if len(c.Args) > 2 || (len(c.Args) == 2 && !is(c.Args[1], "ASYNC") && !is(c.Args[1], "SYNC")) {
		c.SyntaxError()
		return false
	}
	return true
}

// flushAsync reports whether a FLUSH command with its optional SYNC|ASYNC
// at argument i is asynchronous: ASYNC, or lazyfree-lazy-user-flush when
// neither is given. What it frees then counts as freed lazily.
func flushAsync(c *Ctx, i int) bool {
	if len(c.Args) > i {
		return is(c.Args[i], "ASYNC")
	}
	return c.Eng.LazyFreeConfig().UserFlush
}

func flushdb(c *Ctx) {
	if flushMode(c) {
		if flushAsync(c, 1) {
			c.DB.FlushAsync()
		} else {
			c.DB.Flush()
		}
		c.W.OK()
	}
}

func flushall(c *Ctx) {
	if flushMode(c) {
		if flushAsync(c, 1) {
			c.Eng.FlushAllAsync()
		} else {
			c.Eng.FlushAll()
		}
		// With save points set Redis saves the emptied dataset at once.
		if s, ok := c.Srv.(interface{ SaveAfterFlushAll() }); ok {
			s.SaveAfterFlushAll()
		}
		c.W.OK()
	}
}

// swapdb exchanges two databases. Both indexes are parsed before either is
// range-checked, so a bad second index wins over an out-of-range first.
func swapdb(c *Ctx) {
	a, okA := swapdbIndex(c.Args[1])
	if !okA {
		c.W.Error("ERR invalid first DB index")
		return
	}
	b, okB := swapdbIndex(c.Args[2])
	if !okB {
		c.W.Error("ERR invalid second DB index")
		return
	}
	n := int64(c.Eng.Databases())
	if a < 0 || a >= n || b < 0 || b >= n {
		c.W.Error("ERR DB index is out of range")
		return
	}
	c.Eng.SwapDB(int(a), int(b))
	c.W.OK()
}

// swapdbIndex parses a SWAPDB index: an integer that fits in 32 bits.
func swapdbIndex(arg []byte) (int64, bool) {
	n, ok := engine.ParseInt(arg)
	return n, ok && n >= -1<<31 && n <= 1<<31-1
}

func timeCmd(c *Ctx) {
	now := time.Now()
	c.W.Array(2)
	c.W.BulkString(strconv.FormatInt(now.Unix(), 10))
	c.W.BulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10))
}

func role(c *Ctx) {
	rs := c.Srv.(replicationServer)
	host, port, state, offset, replica := rs.Role()
	if !replica {
		c.W.Array(3)
		c.W.BulkString("master")
		c.W.Int(rs.MasterOffset())
		replicas := rs.RoleReplicas()
		c.W.Array(len(replicas))
		for _, r := range replicas {
			c.W.Array(3)
			c.W.BulkString(r.IP)
			c.W.BulkString(strconv.FormatInt(r.Port, 10))
			c.W.BulkString(strconv.FormatInt(r.Offset, 10))
		}
		return
	}
	c.W.Array(5)
	c.W.BulkString("slave")
	c.W.BulkString(host)
	c.W.Int(int64(port))
	c.W.BulkString(state)
	if state != "connected" {
		offset = -1
	}
	c.W.Int(offset)
}

func save(c *Ctx) {
	if err := c.Srv.Save(); err != nil {
		c.Error(err)
		return
	}
	c.W.OK()
}

func bgsave(c *Ctx) {
	if len(c.Args) > 2 || (len(c.Args) == 2 && !is(c.Args[1], "SCHEDULE")) {
		c.SyntaxError()
		return
	}
	inExec := false
	if x, ok := c.Conn.(interface{ InExec() bool }); ok {
		inExec = x.InExec()
	}
	reply, err := c.Srv.BGSave(len(c.Args) == 2, inExec)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Simple(reply)
}

func lastsave(c *Ctx) { c.W.Int(c.Srv.LastSave()) }

// ShutdownOptions are SHUTDOWN's flags.
type ShutdownOptions struct {
	Save, NoSave, Now, Force, Abort bool
}

func shutdown(c *Ctx) {
	var o ShutdownOptions
	for _, a := range c.Args[1:] {
		switch {
		case is(a, "NOSAVE"):
			o.NoSave = true
		case is(a, "SAVE"):
			o.Save = true
		case is(a, "NOW"):
			o.Now = true
		case is(a, "FORCE"):
			o.Force = true
		case is(a, "ABORT"):
			o.Abort = true
		default:
			c.SyntaxError()
			return
		}
	}
	if (o.Abort && (o.Save || o.NoSave || o.Now || o.Force)) || (o.Save && o.NoSave) {
		c.SyntaxError()
		return
	}
	wait, err := c.Srv.Shutdown(o)
	switch {
	case err != nil:
		c.Error(err)
	case o.Abort:
		c.W.OK()
	case wait:
		// The connection closes with the server; only an ABORT or a
		// failed save makes a reply, an error.
		c.Conn.Block(nil, 0, func([]byte) bool { return false },
			func() { c.W.Error("ERR Errors trying to SHUTDOWN. Check logs.") })
		c.Srv.WaitForShutdown(c.Conn)
	}
}

func slowlogGet(c *Ctx) {
	n := 10
	if len(c.Args) == 3 {
		v, ok := engine.ParseInt(c.Args[2])
		if !ok || v < -1 {
			c.W.Error("ERR count should be greater than or equal to -1")
			return
		}
		if v == -1 || v > 1<<31 {
			v = 1 << 31
		}
		n = int(v)
	} else if len(c.Args) > 3 {
		subcommandSyntaxError(c)
		return
	}
	entries := c.Srv.SlowlogGet(n)
	c.W.Array(len(entries))
	for _, e := range entries {
		c.W.Array(6)
		c.W.Int(e.ID)
		c.W.Int(e.Time)
		c.W.Int(e.Duration)
		c.W.Array(len(e.Args))
		for _, a := range e.Args {
			c.W.Bulk(a)
		}
		c.W.BulkString(e.Addr)
		c.W.BulkString(e.Name)
	}
}

func slowlogLen(c *Ctx) { c.W.Int(int64(c.Srv.SlowlogLen())) }

func slowlogReset(c *Ctx) {
	c.Srv.SlowlogReset()
	c.W.OK()
}

func slowlogHelp(c *Ctx) {
	writeHelp(c, "SLOWLOG",
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.")
}

func monitor(c *Ctx) {
	// A second MONITOR on a monitoring connection is ignored without a
	// reply, as in Redis.
	if m, ok := c.Conn.(interface{ Monitoring() bool }); ok && m.Monitoring() {
		return
	}
	c.Conn.Monitor()
	c.W.OK()
}

func debug(c *Ctx) {
	switch sub := c.Args[1]; {
	case is(sub, "SLEEP") && len(c.Args) == 3:
		secs := strtodPrefix(c.Args[2])
		// Redis sleeps on its only thread; holding the engine lock here
		// stalls every client the same way.
		time.Sleep(time.Duration(secs * float64(time.Second)))
		c.W.OK()
	case is(sub, "OBJECT") && len(c.Args) == 3:
		obj := c.DB.Peek(c.Args[2])
		if obj == nil {
			c.W.Error("ERR no such key")
			return
		}
		c.W.Simple("Value at:0x0 refcount:1 encoding:" + obj.Encoding() +
			" serializedlength:" + strconv.Itoa(obj.MemoryUsage()) +
			" lru:0 lru_seconds_idle:" + strconv.FormatInt(c.DB.IdleTime(obj), 10))
	case is(sub, "SET-ACTIVE-EXPIRE") && len(c.Args) == 3:
		// Redis reads the flag with atoi: anything but a number is 0.
		c.Eng.SetActiveExpire(int64(strtodPrefix(c.Args[2])) != 0)
		c.W.OK()
	case is(sub, "HELP"):
		writeHelp(c, "DEBUG",
			"OBJECT <key>",
			"    Show low level info about the value at <key>.",
			"SET-ACTIVE-EXPIRE <0|1>",
			"    Setting it to 0 disables expiring keys in background when they are not",
			"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
			"    default.",
			"SLEEP <seconds>",
			"    Stop the server for <seconds>. Decimals allowed.")
	default:
		subcommandSyntaxError(c)
	}
}

// strtodPrefix reads a number the way C's strtod does for DEBUG SLEEP:
// leading spaces, then the longest prefix that is a decimal number; text
// that is no number at all reads as 0.
func strtodPrefix(b []byte) float64 {
	s := strings.TrimLeft(string(b), " \t\n\r\v\f")
	end, digits := 0, false
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end, digits = end+1, true
	}
	if end < len(s) && s[end] == '.' {
		end++
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end, digits = end+1, true
		}
	}
	if !digits {
		return 0
	}
	if end < len(s) && (s[end] == 'e' || s[end] == 'E') {
		exp := end + 1
		if exp < len(s) && (s[exp] == '+' || s[exp] == '-') {
			exp++
		}
		if exp < len(s) && s[exp] >= '0' && s[exp] <= '9' {
			for exp < len(s) && s[exp] >= '0' && s[exp] <= '9' {
				exp++
			}
			end = exp
		}
	}
	f, _ := strconv.ParseFloat(s[:end], 64)
	return f
}

func memoryUsage(c *Ctx) {
	for j := 3; j < len(c.Args); j += 2 {
		if !is(c.Args[j], "SAMPLES") || j+1 >= len(c.Args) {
			c.SyntaxError()
			return
		}
		n, ok := c.Int64(j + 1)
		if !ok {
			return
		}
		if n < 0 {
			c.SyntaxError()
			return
		}
	}
	if _, ok := c.DB.PeekType(c.Args[2]); !ok {
		c.W.Null()
		return
	}
	c.W.Int(int64(c.DB.KeyMemoryUsage(c.Args[2])))
}

func memoryStats(c *Ctx) {
	stats := c.Srv.MemoryStats()
	c.W.Map(len(stats))
	for _, kv := range stats {
		c.W.BulkString(kv[0].(string))
		switch v := kv[1].(type) {
		case int64:
			c.W.Int(v)
		case float64:
			c.W.Double(v)
		case string:
			c.W.BulkString(v)
		}
	}
}

func memoryDoctor(c *Ctx) {
	c.W.Verbatim("txt", "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.")
}

func memoryMallocStats(c *Ctx) {
	c.W.Verbatim("txt", "Stats not supported for the current allocator")
}

// memoryPurge runs a full garbage collection and returns freed pages to
// the OS: Go's equivalent of asking jemalloc to purge its dirty pages, and
// what makes INFO's used_memory read only live data afterwards.
func memoryPurge(c *Ctx) {
	runtimedebug.FreeOSMemory()
	c.W.OK()
}

func memoryHelp(c *Ctx) {
	writeHelp(c, "MEMORY",
		"DOCTOR",
		"    Return memory problems reports.",
		"MALLOC-STATS",
		"    Return internal statistics report from the memory allocator.",
		"PURGE",
		"    Attempt to purge dirty pages for reclamation by the allocator.",
		"STATS",
		"    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]",
		"    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).")
}
