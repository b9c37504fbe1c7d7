package commands

// Cluster is CLUSTER and the cluster client commands. Revolver is a
// standalone server, as redis-server with cluster-enabled no: each of them,
// CLUSTER HELP and KEYSLOT included, answers Redis's refusal (after the
// table's arity check, which Redis makes first too).
var Cluster = []*Command{
	{Name: "cluster", Arity: -2, Group: "cluster", Since: "3.0.0", Complexity: "Depends on subcommand.", Summary: "A container for cluster commands", Subs: []*Command{
		{Name: "addslots", Arity: -3, Flags: "no_async_loading admin stale", Group: "cluster", Since: "3.0.0", Complexity: "O(N) where N is the total number of hash slot arguments", Summary: "Assign new hash slots to receiving node", Args: "slot:integer...", Run: clusterDisabled},
		{Name: "addslotsrange", Arity: -4, Flags: "no_async_loading admin stale", Group: "cluster", Since: "7.0.0", Complexity: "O(N) where N is the total number of the slots between the start slot and end slot arguments.", Summary: "Assign new hash slots to receiving node", Args: "(start-slot:integer end-slot:integer)...", Run: clusterDisabled},
		{Name: "bumpepoch", Arity: 2, Flags: "no_async_loading admin stale", Tips: "nondeterministic_output", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Advance the cluster config epoch", Run: clusterDisabled},
		{Name: "count-failure-reports", Arity: 3, Flags: "admin stale", Tips: "nondeterministic_output", Group: "cluster", Since: "3.0.0", Complexity: "O(N) where N is the number of failure reports", Summary: "Return the number of failure reports active for a given node", Args: "node-id", Run: clusterDisabled},
		{Name: "countkeysinslot", Arity: 3, Flags: "stale", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Return the number of local keys in the specified hash slot", Args: "slot:integer", Run: clusterDisabled},
		{Name: "delslots", Arity: -3, Flags: "no_async_loading admin stale", Group: "cluster", Since: "3.0.0", Complexity: "O(N) where N is the total number of hash slot arguments", Summary: "Set hash slots as unbound in receiving node", Args: "slot:integer...", Run: clusterDisabled},
		{Name: "delslotsrange", Arity: -4, Flags: "no_async_loading admin stale", Group: "cluster", Since: "7.0.0", Complexity: "O(N) where N is the total number of the slots between the start slot and end slot arguments.", Summary: "Set hash slots as unbound in receiving node", Args: "(start-slot:integer end-slot:integer)...", Run: clusterDisabled},
		{Name: "failover", Arity: -2, Flags: "no_async_loading admin stale", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Forces a replica to perform a manual failover of its master.", Args: "[options=FORCE|TAKEOVER]", Run: clusterDisabled},
		{Name: "flushslots", Arity: 2, Flags: "no_async_loading admin stale", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Delete a node's own slots information", Run: clusterDisabled},
		{Name: "forget", Arity: 3, Flags: "no_async_loading admin stale", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Remove a node from the nodes table", Args: "node-id", Run: clusterDisabled},
		{Name: "getkeysinslot", Arity: 4, Flags: "stale", Tips: "nondeterministic_output", Group: "cluster", Since: "3.0.0", Complexity: "O(log(N)) where N is the number of requested keys", Summary: "Return local key names in the specified hash slot", Args: "slot:integer count:integer", Run: clusterDisabled},
		{Name: "help", Arity: 2, Flags: "loading stale", Group: "cluster", Since: "5.0.0", Complexity: "O(1)", Summary: "Show helpful text about the different subcommands", Run: clusterDisabled},
		{Name: "info", Arity: 2, Flags: "stale", Tips: "nondeterministic_output", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Provides info about Redis Cluster node state", Run: clusterDisabled},
		{Name: "keyslot", Arity: 3, Flags: "stale", Group: "cluster", Since: "3.0.0", Complexity: "O(N) where N is the number of bytes in the key", Summary: "Returns the hash slot of the specified key", Args: "key:string", Run: clusterDisabled},
		{Name: "links", Arity: 2, Flags: "stale", Tips: "nondeterministic_output", Group: "cluster", Since: "7.0.0", Complexity: "O(N) where N is the total number of Cluster nodes", Summary: "Returns a list of all TCP links to and from peer nodes in cluster", Run: clusterDisabled},
		{Name: "meet", Arity: -4, Flags: "no_async_loading admin stale", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Force a node cluster to handshake with another node", Args: "ip port:integer [cluster_bus_port:integer]", Run: clusterDisabled},
		{Name: "myid", Arity: 2, Flags: "stale", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Return the node id", Run: clusterDisabled},
		{Name: "nodes", Arity: 2, Flags: "stale", Tips: "nondeterministic_output", Group: "cluster", Since: "3.0.0", Complexity: "O(N) where N is the total number of Cluster nodes", Summary: "Get Cluster config for the node", Run: clusterDisabled},
		{Name: "replicas", Arity: 3, Flags: "admin stale", Tips: "nondeterministic_output", Group: "cluster", Since: "5.0.0", Complexity: "O(1)", Summary: "List replica nodes of the specified master node", Args: "node-id", Run: clusterDisabled},
		{Name: "replicate", Arity: 3, Flags: "no_async_loading admin stale", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Reconfigure a node as a replica of the specified master node", Args: "node-id", Run: clusterDisabled},
		{Name: "reset", Arity: -2, Flags: "admin stale noscript", Group: "cluster", Since: "3.0.0", Complexity: "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect.", Summary: "Reset a Redis Cluster node", Args: "[HARD|SOFT]", Run: clusterDisabled},
		{Name: "saveconfig", Arity: 2, Flags: "no_async_loading admin stale", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Forces the node to save cluster state on disk", Run: clusterDisabled},
		{Name: "set-config-epoch", Arity: 3, Flags: "no_async_loading admin stale", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Set the configuration epoch in a new node", Args: "config-epoch:integer", Run: clusterDisabled},
		{Name: "setslot", Arity: -4, Flags: "no_async_loading admin stale", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Bind a hash slot to a specific node", Args: "slot:integer (subcommand=IMPORTING node-id|MIGRATING node-id|NODE node-id|STABLE)", Run: clusterDisabled},
		{Name: "shards", Arity: 2, Flags: "stale", Tips: "nondeterministic_output", Group: "cluster", Since: "7.0.0", Complexity: "O(N) where N is the total number of cluster nodes", Summary: "Get array of cluster slots to node mappings", Run: clusterDisabled},
		{Name: "slaves", Arity: 3, Flags: "admin stale", Tips: "nondeterministic_output", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "List replica nodes of the specified master node", Args: "node-id", DocFlags: "deprecated", Deprecated: "5.0.0", ReplacedBy: "`CLUSTER REPLICAS`", Run: clusterDisabled},
		{Name: "slots", Arity: 2, Flags: "stale", Tips: "nondeterministic_output", Group: "cluster", Since: "3.0.0", Complexity: "O(N) where N is the total number of Cluster nodes", Summary: "Get array of Cluster slot to node mappings", DocFlags: "deprecated", Deprecated: "7.0.0", ReplacedBy: "`CLUSTER SHARDS`", Run: clusterDisabled},
	}},
	{Name: "asking", Arity: 1, Flags: "fast", ACL: "connection", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Sent by cluster clients after an -ASK redirect", Run: clusterDisabled},
	{Name: "readonly", Arity: 1, Flags: "fast loading stale", ACL: "connection", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Enables read queries for a connection to a cluster replica node", Run: clusterDisabled},
	{Name: "readwrite", Arity: 1, Flags: "fast loading stale", ACL: "connection", Group: "cluster", Since: "3.0.0", Complexity: "O(1)", Summary: "Disables read queries for a connection to a cluster replica node", Run: clusterDisabled},
}

func clusterDisabled(c *Ctx) { c.W.Error("ERR This instance has cluster support disabled") }
