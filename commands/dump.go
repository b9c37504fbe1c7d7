package commands

import (
	"github.com/revolver-db/revolver/engine"
)

// DumpRestore is DUMP, RESTORE, RESTORE-ASKING and MIGRATE: values moved in
// Redis's serialization format (engine/rdb_*.go).
var DumpRestore = []*Command{
	{Name: "dump", Arity: 2, Flags: "readonly", ACL: "keyspace", Keys: "RO access @1",
		Tips: "nondeterministic_output", Group: "generic", Since: "2.6.0",
		Complexity: "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
		Summary:    "Return a serialized version of the value stored at the specified key.",
		Args:       "key", Run: dumpCmd},
	{Name: "restore", Arity: -4, Flags: "write denyoom", ACL: "keyspace dangerous", Keys: "OW update @1",
		Group: "generic", Since: "2.6.0", Complexity: restoreComplexity,
		Summary: "Create a key using the provided serialized value, previously obtained using DUMP.",
		Args:    restoreArgs, Run: restoreCmd},
	{Name: "restore-asking", Arity: -4, Flags: "write denyoom asking", ACL: "keyspace dangerous",
		Keys: "OW update @1", Group: "server", Since: "3.0.0", Complexity: restoreComplexity,
		DocFlags: "syscmd", Summary: "An internal command for migrating keys in a cluster",
		Args: restoreArgs, Run: restoreCmd},
	{Name: "migrate", Arity: -6, Flags: "write", ACL: "keyspace dangerous",
		Keys: "RW access delete @3;RW access delete incomplete @kw:KEYS:-2 ..-1",
		Tips: "nondeterministic_output", Group: "generic", Since: "2.6.0",
		Complexity: "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed.",
		Summary:    "Atomically transfer a key from a Redis instance to another one.",
		Args: `host port:integer (key_or_empty_string= key | "":empty_string) destination-db:integer timeout:integer ` +
			`[COPY] [REPLACE] [authentication= [AUTH password] | [AUTH2 (username_password= username password)]] [KEYS key...]`,
		Run: migrateCmd},
}

const (
	restoreComplexity = "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N))."
	restoreArgs       = "key ttl:integer serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds:integer] [FREQ frequency:integer]"
)

func dumpCmd(c *Ctx) {
	payload, _, ok := c.DB.DumpKey(c.Args[1])
	if !ok {
		c.W.Null()
		return
	}
	c.W.Bulk(payload)
}

// restoreCmd checks in Redis's order: the options, the key's absence, the
// TTL, the payload's footer, then its contents.
func restoreCmd(c *Ctx) {
	o := engine.RestoreOptions{IdleTime: -1, Freq: -1}
	for j := 4; j < len(c.Args); j++ {
		more := len(c.Args) - j - 1
		switch a := c.Args[j]; {
		case is(a, "REPLACE"):
			o.Replace = true
		case is(a, "ABSTTL"):
			o.AbsTTL = true
		case is(a, "IDLETIME") && more >= 1 && o.Freq == -1:
			n, ok := c.Int64(j + 1)
			if !ok {
				return
			}
			if n < 0 {
				c.W.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			o.IdleTime = n
			j++
		case is(a, "FREQ") && more >= 1 && o.IdleTime == -1:
			n, ok := c.Int64(j + 1)
			if !ok {
				return
			}
			if n < 0 || n > 255 {
				c.W.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			o.Freq = n
			j++
		default:
			c.SyntaxError()
			return
		}
	}
	key := c.Args[1]
	if !o.Replace && c.DB.Exists(key) {
		c.W.Error("BUSYKEY Target key name already exists.")
		return
	}
	ttl, ok := c.Int64(2)
	if !ok {
		return
	}
	if ttl < 0 {
		c.W.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	o.TTL = ttl
	obj, err := c.Eng.ParseDumpPayload(c.Args[3])
	if err != nil {
		c.Error(err)
		return
	}
	c.DB.Restore(key, obj, o)
	c.W.OK()
}
