package commands

import (
	"strings"

	"github.com/revolver-db/revolver/engine"
)

// Replication is WAIT, FAILOVER, REPLICAOF/SLAVEOF and the commands a
// replica sends its master (SYNC, PSYNC, REPLCONF). Revolver follows a
// master with REPLICAOF (server/replica.go) and serves replicas
// (server/repl_master*.go).
var Replication = []*Command{
	{Name: "wait", Arity: 3, Flags: "noscript", ACL: "connection",
		Tips: "request_policy:all_shards;response_policy:agg_min", Group: "generic", Since: "3.0.0",
		Complexity: "O(1)",
		Summary:    "Wait for the synchronous replication of all the write commands sent in the context of the current connection",
		Args:       "numreplicas:integer timeout:integer", Run: wait},
	{Name: "failover", Arity: -1, Flags: "admin noscript stale", Group: "server", Since: "6.2.0", Complexity: "O(1)",
		Summary: "Start a coordinated failover between this server and one of its replicas.",
		Args:    "[TO (target=host port:integer [FORCE])] [ABORT] [TIMEOUT milliseconds:integer]", Run: failover},
	{Name: "replicaof", Arity: 3, Flags: "no_async_loading admin noscript stale", Group: "server", Since: "5.0.0",
		Complexity: "O(1)", Summary: "Make the server a replica of another instance, or promote it as master.",
		Args: "(args=(host-port=host port:integer)|(no-one=NO ONE))", Run: replicaOf},
	{Name: "slaveof", Arity: 3, Flags: "no_async_loading admin noscript stale", Group: "server", Since: "1.0.0",
		Complexity: "O(1)", Summary: "Make the server a replica of another instance, or promote it as master.",
		Args: "(args=(host-port=host port:integer)|(no-one=NO ONE))", DocFlags: "deprecated", Deprecated: "5.0.0",
		ReplacedBy: "`REPLICAOF`", Run: replicaOf},
	{Name: "psync", Arity: -3, Flags: "no_async_loading admin no_multi noscript", Group: "server", Since: "2.8.0",
		Summary: "Internal command used for replication", Args: "replicationid offset:integer", Run: psync},
	{Name: "sync", Arity: 1, Flags: "no_async_loading admin no_multi noscript", Group: "server", Since: "1.0.0",
		Summary: "Internal command used for replication", Run: syncCmd},
	{Name: "replconf", Arity: -1, Flags: "admin noscript loading stale allow_busy", Group: "server", Since: "3.0.0",
		Complexity: "O(1)", Summary: "An internal command for configuring the replication stream", DocFlags: "syscmd",
		Run: replconf},
	{Name: "bgrewriteaof", Arity: 1, Flags: "no_async_loading admin noscript", Group: "server", Since: "1.0.0",
		Complexity: "O(1)", Summary: "Asynchronously rewrite the append-only file", Run: bgrewriteaof},
}

// wait answers how many replicas acknowledged the client's writes: at once
// when enough did (or inside a transaction), else when enough do or the
// timeout ends (0 waits until CLIENT UNBLOCK or a disconnect), with the
// count then. The wait is an ordinary blocked client on the engine's
// waiters, with no keys; the server ends it when acknowledgements arrive.
func wait(c *Ctx) {
	rs := c.Srv.(replicationServer)
	if _, _, _, _, replica := rs.Role(); replica {
		c.W.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 " +
			"if a replica is configured to be writable (which is not the default) writes to replicas are just " +
			"local and are not propagated.")
		return
	}
	numReplicas, ok := c.Int64(1)
	if !ok {
		return
	}
	ms, ok := engine.ParseInt(c.Args[2])
	if !ok {
		c.W.Error("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		c.W.Error("ERR timeout is negative")
		return
	}
	if acked := rs.ReplicasAcked(c.Conn); acked >= numReplicas {
		c.W.Int(acked)
		return
	}
	// Inside MULTI, Block answers at once with the timeout reply, as Redis
	// answers WAIT in a transaction without blocking.
	conn := c.Conn
	c.Conn.Block(nil, blockDuration(ms), func([]byte) bool { return false },
		func() { c.W.Int(rs.ReplicasAcked(conn)) })
	rs.WaitForAcks(c.Conn, numReplicas)
}

func failover(c *Ctx) {
	if len(c.Args) == 2 && is(c.Args[1], "ABORT") {
		c.W.Error("ERR No failover in progress.")
		return
	}
	var timeout int64
	var force, host bool
	for j := 1; j < len(c.Args); j++ {
		switch {
		case is(c.Args[j], "TIMEOUT") && j+1 < len(c.Args) && timeout == 0:
			n, ok := c.Int64(j + 1)
			if !ok {
				return
			}
			if n <= 0 {
				c.W.Error("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = n
			j++
		case is(c.Args[j], "TO") && j+2 < len(c.Args) && !host:
			if _, ok := c.Int64(j + 2); !ok {
				return
			}
			host = true
			j += 2
		case is(c.Args[j], "FORCE") && !force:
			force = true
		default:
			c.SyntaxError()
			return
		}
	}
	c.W.Error("ERR FAILOVER requires connected replicas.")
}

// replicationServer is the server's side of replication (server/replica.go).
type replicationServer interface {
	// ReplicaOf starts following host:port and returns the status reply.
	ReplicaOf(host string, port int) string
	ReplicaOfNoOne()
	// Role is the replica's view for ROLE; ok is false on a master.
	Role() (host string, port int, state string, offset int64, ok bool)
	// MasterOffset is the replication offset a master's ROLE shows.
	MasterOffset() int64
	// RefusesWrites reports whether writes from conn are refused: the
	// server is a read-only replica and conn is not its master link.
	RefusesWrites(conn Conn) bool
	// MasterAck answers REPLCONF GETACK when conn is this replica's master
	// link, reporting whether it is.
	MasterAck(conn any) bool

	// Sync runs SYNC or PSYNC (args as sent) for conn, returning an error
	// to reply or "" when conn is a replica now (or was one already).
	Sync(conn Conn, args [][]byte) string
	// ReplConf records a REPLCONF option a replica announces (listening-port,
	// ip-address, capa, rdb-only, rdb-filter-only), lower case, checked.
	ReplConf(conn Conn, option string, value []byte)
	// ReplicaAck takes REPLCONF ACK's offset from a replica, reporting
	// whether conn is one (which gets no reply).
	ReplicaAck(conn Conn, offset []byte) bool
	// IsReplicaConn reports whether conn is a replica, which must never
	// get a reply.
	IsReplicaConn(conn Conn) bool
	// ReplicasAcked counts the replicas that acknowledged conn's writes.
	ReplicasAcked(conn Conn) int64
	// WaitForAcks follows conn's WAIT as it blocks: the server ends the
	// wait once num replicas acknowledged.
	WaitForAcks(conn Conn, num int64)
	// RoleReplicas lists a master's online replicas for ROLE.
	RoleReplicas() []ReplicaRole
	// NoGoodReplicas reports whether min-replicas-to-write refuses writes
	// now.
	NoGoodReplicas() bool
}

// ReplicaRole is one replica in a master's ROLE reply.
type ReplicaRole struct {
	IP           string
	Port, Offset int64
}

func replicaOf(c *Ctx) {
	if is(c.Args[1], "NO") && is(c.Args[2], "ONE") {
		c.Srv.(replicationServer).ReplicaOfNoOne()
		c.W.OK()
		return
	}
	port, ok := engine.ParseInt(c.Args[2])
	if !ok || port < 0 || port > 65535 {
		c.W.Error("ERR Invalid master port")
		return
	}
	c.W.Simple(c.Srv.(replicationServer).ReplicaOf(string(c.Args[1]), int(port)))
}

// psync and syncCmd make the connection a replica: the reply is the
// sync itself (+FULLRESYNC and an RDB, or +CONTINUE and the backlog), then
// the replication stream.
func psync(c *Ctx) { syncCmd(c) }

func syncCmd(c *Ctx) {
	if msg := c.Srv.(replicationServer).Sync(c.Conn, c.Args); msg != "" {
		c.W.Error(msg)
	}
}

// replconf checks the options a replica sends as Redis does, and has the
// server remember them, in order (an error stops at its option). ACK and
// GETACK, which Redis leaves unanswered for a client that is not a
// replica, are answered OK here so that no client waits for nothing; a
// replica gets no reply to anything.
func replconf(c *Ctx) {
	if len(c.Args)%2 == 0 {
		c.SyntaxError()
		return
	}
	rs := c.Srv.(replicationServer)
	for j := 1; j < len(c.Args); j += 2 {
		opt, val := c.Args[j], c.Args[j+1]
		switch {
		case is(opt, "LISTENING-PORT"):
			if _, ok := c.Int64(j + 1); !ok {
				return
			}
		case is(opt, "IP-ADDRESS"):
			if len(val) >= 256 { // NET_HOST_STR_LEN
				c.W.Error("ERR REPLCONF ip-address provided by replica instance is too long: " +
					itoa(int64(len(val))) + " bytes")
				return
			}
		case is(opt, "CAPA"):
		case is(opt, "GETACK"):
			if !rs.MasterAck(c.Conn) && !rs.IsReplicaConn(c.Conn) {
				c.W.OK()
			}
			return
		case is(opt, "ACK"):
			if !rs.ReplicaAck(c.Conn, val) {
				c.W.OK()
			}
			return
		case is(opt, "RDB-ONLY"):
			n, ok := engine.ParseInt(val)
			if !ok {
				c.W.Error("ERR value is not an integer or out of range")
				return
			}
			if n < 0 || n > 1 {
				c.W.Error("ERR value is out of range, value must between 0 and 1")
				return
			}
		case is(opt, "RDB-FILTER-ONLY"):
			if bad, ok := rdbFilterOnly(val); !ok {
				c.W.Error("ERR " + bad)
				return
			}
		default:
			c.W.Error("ERR Unrecognized REPLCONF option: " + string(opt))
			return
		}
		rs.ReplConf(c.Conn, strings.ToLower(string(opt)), val)
	}
	if !rs.IsReplicaConn(c.Conn) {
		c.W.OK()
	}
}

// rdbFilterOnly checks REPLCONF RDB-FILTER-ONLY's filter list: only
// "functions" is known. (Redis splits the list with quoting rules; plain
// words are what a replica sends.)
func rdbFilterOnly(val []byte) (string, bool) {
	for _, w := range strings.Fields(string(val)) {
		if !is([]byte(w), "FUNCTIONS") {
			return "Unsupported rdb-filter-only option: " + w, false
		}
	}
	return "", true
}

// aofServer is the server side of BGREWRITEAOF (server/aof.go).
type aofServer interface {
	BGRewriteAOF() error
}

// bgrewriteaof compacts what Revolver has in place of an append-only file:
// it starts the background checkpoint BGSAVE starts, which lets the change
// log be truncated.
func bgrewriteaof(c *Ctx) {
	if err := c.Srv.(aofServer).BGRewriteAOF(); err != nil {
		c.Error(err)
		return
	}
	c.W.Simple("Background append only file rewriting started")
}
