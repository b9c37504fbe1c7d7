package commands

// Transactions is MULTI/EXEC/DISCARD/WATCH/UNWATCH. Queueing and execution
// are the connection's business (server), which knows what the client has
// queued and watched.
var Transactions = []*Command{
	{Name: "multi", Arity: 1, Flags: "noscript loading stale fast allow_busy", ACL: "transaction",
		Group: "transactions", Since: "1.2.0", Complexity: "O(1)", Summary: "Starts a transaction.",
		Run: func(c *Ctx) { c.Conn.Multi() }},
	{Name: "exec", Arity: 1, Flags: "noscript loading stale skip_slowlog", ACL: "transaction",
		Group: "transactions", Since: "1.2.0", Complexity: "Depends on commands in the transaction",
		Summary: "Executes all commands in a transaction.", Run: func(c *Ctx) { c.Conn.Exec() }},
	{Name: "discard", Arity: 1, Flags: "noscript loading stale fast allow_busy", ACL: "transaction",
		Group: "transactions", Since: "2.0.0", Complexity: "O(N), when N is the number of queued commands",
		Summary: "Discards a transaction.", Run: func(c *Ctx) { c.Conn.Discard() }},
	{Name: "watch", Arity: -2, Flags: "noscript loading stale fast allow_busy", ACL: "transaction",
		Keys: "RO @1..-1", Group: "transactions", Since: "2.2.0", Complexity: "O(1) for every key.",
		Summary: "Monitors changes to keys to determine the execution of a transaction.", Args: "key...",
		Run: func(c *Ctx) { c.Conn.Watch(c.Args[1:]) }},
	{Name: "unwatch", Arity: 1, Flags: "noscript loading stale fast allow_busy", ACL: "transaction",
		Group: "transactions", Since: "2.2.0", Complexity: "O(1)",
		Summary: "Forgets about watched keys of a transaction.", Run: func(c *Ctx) { c.Conn.Unwatch() }},
}
