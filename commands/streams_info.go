package commands

import (
	"strings"

	"github.com/revolver-db/revolver/engine"
)

// StreamInfo is XINFO.
var StreamInfo = []*Command{
	{Name: "xinfo", Arity: -2, Group: "stream", Since: "5.0.0", Complexity: "Depends on subcommand.",
		Summary: "A container for stream introspection commands", Subs: []*Command{
			{Name: "consumers", Arity: 4, Flags: "readonly", ACL: "stream", Keys: "RO access @2",
				Tips: "nondeterministic_output", Group: "stream", Since: "5.0.0", Complexity: "O(1)",
				Summary: "List the consumers in a consumer group", Args: "key groupname", Run: xinfoCmd},
			{Name: "groups", Arity: 3, Flags: "readonly", ACL: "stream", Keys: "RO access @2",
				Group: "stream", Since: "5.0.0", Complexity: "O(1)",
				Summary: "List the consumer groups of a stream", Args: "key", Run: xinfoCmd},
			{Name: "help", Arity: 2, Flags: "loading stale", ACL: "stream", Group: "stream", Since: "5.0.0",
				Complexity: "O(1)", Summary: "Show helpful text about the different subcommands", Run: xinfoHelp},
			{Name: "stream", Arity: -3, Flags: "readonly", ACL: "stream", Keys: "RO access @2",
				Group: "stream", Since: "5.0.0", Complexity: "O(1)",
				Summary: "Get information about a stream", Args: "key [FULL (full=[COUNT count:integer])]", Run: xinfoCmd},
		}},
}

func xinfoHelp(c *Ctx) {
	writeHelp(c, "XINFO",
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.")
}

func xinfoCmd(c *Ctx) {
	sub := strings.ToLower(string(c.Args[1]))
	s, err := c.DB.ReadStream(c.Args[2])
	if err != nil {
		c.Error(err)
		return
	}
	if s == nil {
		c.W.Error("ERR no such key")
		return
	}
	switch sub {
	case "consumers":
		g := s.Group(c.Args[3])
		if g == nil {
			c.W.Error("NOGROUP No such consumer group '" + string(c.Args[3]) + "' for key name '" + string(c.Args[2]) + "'")
			return
		}
		now := c.Eng.Now()
		c.W.Array(g.ConsumerCount())
		g.Consumers(func(sc *engine.StreamConsumer) {
			c.W.Map(3)
			c.W.BulkString("name")
			c.W.BulkString(sc.Name)
			c.W.BulkString("pending")
			c.W.Int(int64(sc.PendingCount()))
			c.W.BulkString("idle")
			c.W.Int(max(now-sc.SeenTime, 0))
		})
	case "groups":
		c.W.Array(s.GroupCount())
		s.Groups(func(g *engine.StreamGroup) {
			c.W.Map(6)
			c.W.BulkString("name")
			c.W.BulkString(g.Name)
			c.W.BulkString("consumers")
			c.W.Int(int64(g.ConsumerCount()))
			c.W.BulkString("pending")
			c.W.Int(int64(g.PendingCount()))
			c.W.BulkString("last-delivered-id")
			replyStreamID(c, g.LastID)
			writeGroupCounters(c, s, g)
		})
	default:
		xinfoStream(c, s)
	}
}

// writeGroupCounters writes entries-read and lag (null when unknown).
func writeGroupCounters(c *Ctx, s *engine.Stream, g *engine.StreamGroup) {
	c.W.BulkString("entries-read")
	if g.EntriesRead != -1 {
		c.W.Int(g.EntriesRead)
	} else {
		c.W.Null()
	}
	c.W.BulkString("lag")
	if lag, ok := s.Lag(g); ok {
		c.W.Int(lag)
	} else {
		c.W.Null()
	}
}

func xinfoStream(c *Ctx, s *engine.Stream) {
	opts := c.Args[3:]
	full, count := len(opts) > 0, int64(10)
	if full {
		if len(opts) != 1 && len(opts) != 3 || !is(opts[0], "FULL") {
			subSyntaxError(c)
			return
		}
		if len(opts) == 3 {
			if !is(opts[1], "COUNT") {
				subSyntaxError(c)
				return
			}
			n, ok := c.Int64(5)
			if !ok {
				return
			}
			if n < 0 {
				n = 10
			}
			count = n
		}
	}
	if full {
		c.W.Map(9)
	} else {
		c.W.Map(10)
	}
	c.W.BulkString("length")
	c.W.Int(int64(s.Len()))
	c.W.BulkString("radix-tree-keys")
	c.W.Int(int64(s.NodeCount()))
	c.W.BulkString("radix-tree-nodes")
	c.W.Int(int64(s.RaxNodes()))
	c.W.BulkString("last-generated-id")
	replyStreamID(c, s.LastID())
	c.W.BulkString("max-deleted-entry-id")
	replyStreamID(c, s.MaxDeletedID())
	c.W.BulkString("entries-added")
	c.W.Int(int64(s.EntriesAdded()))
	c.W.BulkString("recorded-first-entry-id")
	replyStreamID(c, s.FirstID())
	if !full {
		c.W.BulkString("groups")
		c.W.Int(int64(s.GroupCount()))
		for _, rev := range []bool{false, true} {
			if rev {
				c.W.BulkString("last-entry")
			} else {
				c.W.BulkString("first-entry")
			}
			found := false
			s.Range(engine.StreamID{}, engine.MaxStreamID, rev, 1, func(id engine.StreamID, fields [][]byte) bool {
				replyStreamEntry(c, id, fields)
				found = true
				return false
			})
			if !found {
				c.W.Null()
			}
		}
		return
	}
	lim := int(min(count, 1<<40))
	c.W.BulkString("entries")
	replyRange(c, s, engine.StreamID{}, engine.MaxStreamID, false, lim)
	c.W.BulkString("groups")
	c.W.Array(s.GroupCount())
	s.Groups(func(g *engine.StreamGroup) {
		c.W.Map(7)
		c.W.BulkString("name")
		c.W.BulkString(g.Name)
		c.W.BulkString("last-delivered-id")
		replyStreamID(c, g.LastID)
		writeGroupCounters(c, s, g)
		c.W.BulkString("pel-count")
		c.W.Int(int64(g.PendingCount()))
		c.W.BulkString("pending")
		pel := firstPending(g.PendingRange, lim)
		c.W.Array(len(pel))
		for _, p := range pel {
			c.W.Array(4)
			replyStreamID(c, p.ID)
			c.W.BulkString(p.Consumer.Name)
			c.W.Int(p.DeliveryTime)
			c.W.Int(int64(p.DeliveryCount))
		}
		c.W.BulkString("consumers")
		c.W.Array(g.ConsumerCount())
		g.Consumers(func(sc *engine.StreamConsumer) {
			c.W.Map(4)
			c.W.BulkString("name")
			c.W.BulkString(sc.Name)
			c.W.BulkString("seen-time")
			c.W.Int(sc.SeenTime)
			c.W.BulkString("pel-count")
			c.W.Int(int64(sc.PendingCount()))
			c.W.BulkString("pending")
			cp := firstPending(sc.PendingRange, lim)
			c.W.Array(len(cp))
			for _, p := range cp {
				c.W.Array(3)
				replyStreamID(c, p.ID)
				c.W.Int(p.DeliveryTime)
				c.W.Int(int64(p.DeliveryCount))
			}
		})
	})
}

// firstPending collects the first lim entries (0: all) of a pending
// entries list, by id, from its PendingRange.
func firstPending(pendingRange func(start, end engine.StreamID, fn func(*engine.PendingEntry) bool), lim int) []*engine.PendingEntry {
	var pel []*engine.PendingEntry
	pendingRange(engine.StreamID{}, engine.MaxStreamID, func(p *engine.PendingEntry) bool {
		pel = append(pel, p)
		return lim == 0 || len(pel) < lim
	})
	return pel
}
