package commands

// Sharded pub/sub (Redis 7.0). Shard channels are declared as keys with the
// not_key flag, as in Redis's table, so COMMAND INFO shows where they are
// while COMMAND GETKEYS, prefetch and the like skip them.

// shardConn is the connection side of SSUBSCRIBE/SUNSUBSCRIBE; each
// writes Redis's confirmations itself.
type shardConn interface {
	ShardSubscribe(names [][]byte)
	ShardUnsubscribe(names [][]byte)
}

// shardHub is the server side: publishing and PUBSUB's shard subcommands.
type shardHub interface {
	ShardPublish(channel, message []byte) int
	ShardChannels(pattern []byte) [][]byte
	ShardNumSub(channel []byte) int
}

var shardPubSub = []*Command{
	{Name: "ssubscribe", Arity: -2, Flags: "pubsub noscript loading stale", Group: "pubsub", Since: "7.0.0",
		Keys:       "not_key @1..-1",
		Complexity: "O(N) where N is the number of shard channels to subscribe to.",
		Summary:    "Listens for messages published to shard channels.", Args: "shardchannel...",
		Run: func(c *Ctx) {
			if sc, ok := c.Conn.(shardConn); ok {
				sc.ShardSubscribe(c.Args[1:])
			}
		}},
	{Name: "sunsubscribe", Arity: -1, Flags: "pubsub noscript loading stale", Group: "pubsub", Since: "7.0.0",
		Keys:       "not_key @1..-1",
		Complexity: "O(N) where N is the number of shard channels to unsubscribe.",
		Summary:    "Stops listening to messages posted to shard channels.", Args: "[shardchannel...]",
		Run: func(c *Ctx) {
			if sc, ok := c.Conn.(shardConn); ok {
				sc.ShardUnsubscribe(c.Args[1:])
			}
		}},
	{Name: "spublish", Arity: 3, Flags: "pubsub loading stale fast may_replicate", Group: "pubsub", Since: "7.0.0",
		Keys:       "not_key @1",
		Complexity: "O(N) where N is the number of clients subscribed to the receiving shard channel.",
		Summary:    "Post a message to a shard channel.", Args: "shardchannel message",
		Run: func(c *Ctx) {
			// As PUBLISH: a subscriber's earlier replies go out before the
			// message it sends itself.
			if q, ok := c.Conn.(interface{ QueueReplies() }); ok {
				q.QueueReplies()
			}
			n := 0
			if h, ok := c.Srv.(shardHub); ok {
				n = h.ShardPublish(c.Args[1], c.Args[2])
			}
			c.W.Int(int64(n))
			c.ForcePropagation()
		}},
}

func pubsubShardChannels(c *Ctx) {
	if len(c.Args) > 3 {
		subcommandSyntaxError(c)
		return
	}
	var pattern []byte
	if len(c.Args) == 3 {
		pattern = c.Args[2]
	}
	var chans [][]byte
	if h, ok := c.Srv.(shardHub); ok {
		chans = h.ShardChannels(pattern)
	}
	c.W.Array(len(chans))
	for _, ch := range chans {
		c.W.Bulk(ch)
	}
}

func pubsubShardNumSub(c *Ctx) {
	h, _ := c.Srv.(shardHub)
	c.W.Array(2 * (len(c.Args) - 2)) // a flat array even in RESP3, as in Redis
	for _, ch := range c.Args[2:] {
		c.W.Bulk(ch)
		n := 0
		if h != nil {
			n = h.ShardNumSub(ch)
		}
		c.W.Int(int64(n))
	}
}
