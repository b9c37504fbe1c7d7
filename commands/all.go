package commands

// Families lists every command family; the server builds its command table
// and its INFO sections from it. A new family is one file declaring its
// commands (and, for a native family, its INFO section), plus one line here.
func Families() []Family {
	return []Family{
		{Commands: Connection}, {Commands: ServerCmds}, {Commands: Introspection}, {Commands: PubSub}, {Commands: shardPubSub}, {Commands: Latency},
		{Commands: Transactions}, {Commands: Keys}, {Commands: Strings}, {Commands: Lists}, {Commands: Hashes},
		{Commands: Bitmaps},
		{Commands: Sets}, {Commands: ZSets}, {Commands: Geo}, {Commands: HyperLogLog}, {Commands: UV}, {Commands: Scripting}, {Commands: Functions},
		{Commands: Sort}, {Commands: DumpRestore}, {Commands: Streams}, {Commands: StreamGroups}, {Commands: StreamInfo},
		{Commands: ACL}, {Commands: Cluster}, {Commands: Replication}, {Commands: nativeReplication}, {Commands: Module}, {Commands: Lolwut},
		{Commands: Delay, Info: &delayInfo},
		{Commands: Queue, Info: &queueInfo},
		{Commands: Numpool, Info: &numpoolInfoSection},
		{Commands: Room, Info: &roomInfoSection},
	}
}
