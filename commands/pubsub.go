package commands

// PubSub is the publish/subscribe family. Subscriptions belong to the
// connection; the server's hub delivers messages and keyspace events.
var PubSub = []*Command{
	{Name: "subscribe", Arity: -2, Flags: "pubsub noscript loading stale", Group: "pubsub", Since: "2.0.0",
		Complexity: "O(N) where N is the number of channels to subscribe to.",
		Summary:    "Listens for messages published to channels.", Args: "channel...",
		Run: func(c *Ctx) { c.Conn.Subscribe(c.Args[1:], false) }},
	{Name: "psubscribe", Arity: -2, Flags: "pubsub noscript loading stale", Group: "pubsub", Since: "2.0.0",
		Complexity: "O(N) where N is the number of patterns to subscribe to.",
		Summary:    "Listens for messages published to channels that match patterns.", Args: "(pattern=pattern:pattern)...",
		Run: func(c *Ctx) { c.Conn.Subscribe(c.Args[1:], true) }},
	{Name: "unsubscribe", Arity: -1, Flags: "pubsub noscript loading stale", Group: "pubsub", Since: "2.0.0",
		Complexity: "O(N) where N is the number of channels to unsubscribe.",
		Summary:    "Stops listening to messages posted to channels.", Args: "[channel...]",
		Run: func(c *Ctx) { c.Conn.Unsubscribe(c.Args[1:], false) }},
	{Name: "punsubscribe", Arity: -1, Flags: "pubsub noscript loading stale", Group: "pubsub", Since: "2.0.0",
		Complexity: "O(N) where N is the number of patterns to unsubscribe.",
		Summary:    "Stops listening to messages published to channels that match patterns.", Args: "[pattern:pattern...]",
		Run: func(c *Ctx) { c.Conn.Unsubscribe(c.Args[1:], true) }},
	{Name: "publish", Arity: 3, Flags: "pubsub loading stale fast may_replicate", Group: "pubsub", Since: "2.0.0",
		Complexity: "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns.",
		Summary:    "Posts a message to a channel.", Args: "channel message",
		Run: publish},
	{Name: "pubsub", Arity: -2, Group: "pubsub", Since: "2.8.0", Complexity: "Depends on subcommand.",
		Summary: "A container for Pub/Sub introspection commands.", Subs: []*Command{
			{Name: "channels", Arity: -2, Flags: "pubsub loading stale", Group: "pubsub", Since: "2.8.0",
				Complexity: "O(N) where N is the number of active channels.",
				Summary:    "Returns the active channels.", Args: "[pattern:pattern]", Run: pubsubChannels},
			{Name: "numsub", Arity: -2, Flags: "pubsub loading stale", Group: "pubsub", Since: "2.8.0",
				Complexity: "O(N) for the NUMSUB subcommand, where N is the number of requested channels",
				Summary:    "Returns a count of subscribers to channels.", Args: "[channel...]", Run: pubsubNumSub},
			{Name: "numpat", Arity: 2, Flags: "pubsub loading stale", Group: "pubsub", Since: "2.8.0",
				Complexity: "O(1)", Summary: "Returns a count of unique pattern subscriptions.",
				Run: func(c *Ctx) { c.W.Int(int64(c.Srv.PubSubNumPat())) }},
			{Name: "shardchannels", Arity: -2, Flags: "pubsub loading stale", Group: "pubsub", Since: "7.0.0",
				Complexity: "O(N) where N is the number of active shard channels.",
				Summary:    "Returns the active shard channels.",
				Args:       "[pattern:pattern]", Run: pubsubShardChannels},
			{Name: "shardnumsub", Arity: -2, Flags: "pubsub loading stale", Group: "pubsub", Since: "7.0.0",
				Complexity: "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels",
				Summary:    "Returns the count of subscribers of shard channels.", Args: "[shardchannel...]",
				Run: pubsubShardNumSub},
			{Name: "help", Arity: 2, Flags: "loading stale", Group: "pubsub", Since: "6.2.0", Complexity: "O(1)",
				Summary: "Returns helpful text about the different subcommands.", Run: pubsubHelp},
		}},
}

func publish(c *Ctx) {
	// A subscriber publishing to one of its own channels receives the
	// message after the replies of the commands before this one and before
	// this one's reply, as in Redis: those replies go out first.
	if q, ok := c.Conn.(interface{ QueueReplies() }); ok {
		q.QueueReplies()
	}
	c.W.Int(int64(c.Srv.Publish(c.Args[1], c.Args[2])))
	c.ForcePropagation() // the replicas' subscribers get it too
}

func pubsubChannels(c *Ctx) {
	if len(c.Args) > 3 {
		subcommandSyntaxError(c)
		return
	}
	var pattern []byte
	if len(c.Args) == 3 {
		pattern = c.Args[2]
	}
	chans := c.Srv.PubSubChannels(pattern)
	c.W.Array(len(chans))
	for _, ch := range chans {
		c.W.Bulk(ch)
	}
}

func pubsubNumSub(c *Ctx) {
	c.W.Array(2 * (len(c.Args) - 2)) // a flat array even in RESP3, as in Redis
	for _, ch := range c.Args[2:] {
		c.W.Bulk(ch)
		c.W.Int(int64(c.Srv.PubSubNumSub(ch)))
	}
}

func pubsubHelp(c *Ctx) {
	writeHelp(c, "PUBSUB",
		"CHANNELS [<pattern>]",
		"    List the channels that have subscribers, optionally only those matching <pattern>.",
		"NUMPAT",
		"    Count the pattern subscriptions of all clients.",
		"NUMSUB [<channel> ...]",
		"    Count the subscribers of each <channel>.",
		"SHARDCHANNELS [<pattern>]",
		"    List the shard channels that have subscribers, optionally only those matching <pattern>.",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Count the subscribers of each shard channel.")
}
