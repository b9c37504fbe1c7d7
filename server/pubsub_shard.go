package server

import (
	"sort"

	"github.com/revolver-db/revolver/glob"
)

// Sharded pub/sub (SSUBSCRIBE, SPUBLISH): in Redis 7.0 a shard channel
// lives in the slot of its name and its messages stay on the shard that owns
// that slot. Revolver is one shard, so shard channels are a second, separate
// channel namespace with no patterns: a PUBLISH never reaches an SSUBSCRIBE
// of the same name and the other way round. Like the rest of the hub, all of
// this runs under the engine lock.

var smsgKind = []byte("smessage")

// globalSubs counts channels and patterns: what (P)SUBSCRIBE confirmations
// report. Shard channels are counted apart (7.0's ssubscribe count).
func (c *Client) globalSubs() int { return len(c.channels) + len(c.patterns) }

// ShardSubscribe is SSUBSCRIBE: one confirmation per name, each with the
// number of shard channels the client now has.
func (c *Client) ShardSubscribe(names [][]byte) {
	if c.inExec {
		// Inside EXEC the client expects one reply per command, so Redis
		// refuses it there (SUBSCRIBE keeps an old exception, SSUBSCRIBE not).
		c.w.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	h := c.s.hub
	if c.shard == nil {
		c.shard = map[string]struct{}{}
	}
	for _, n := range names {
		name := string(n)
		if _, ok := c.shard[name]; !ok {
			c.shard[name] = struct{}{}
			set := h.shard[name]
			if set == nil {
				set = map[*Client]struct{}{}
				h.shard[name] = set
			}
			set[c] = struct{}{}
		}
		c.subReply("ssubscribe", n, len(c.shard))
	}
	c.enterPushMode()
}

// ShardUnsubscribe is SUNSUBSCRIBE; no names means every shard channel.
func (c *Client) ShardUnsubscribe(names [][]byte) {
	if len(names) == 0 {
		c.s.hub.shardUnsubscribeAll(c, true)
		return
	}
	for _, n := range names {
		c.s.hub.shardRemove(c, string(n))
		c.subReply("sunsubscribe", n, len(c.shard))
	}
}

func (h *hub) shardRemove(c *Client, name string) {
	if _, ok := c.shard[name]; !ok {
		return
	}
	delete(c.shard, name)
	delete(h.shard[name], c)
	if len(h.shard[name]) == 0 {
		delete(h.shard, name)
	}
}

// shardUnsubscribeAll drops every shard subscription of c, confirming each
// (or, with none, one confirmation with a nil name) when reply is set.
func (h *hub) shardUnsubscribeAll(c *Client, reply bool) {
	if len(c.shard) == 0 {
		if reply {
			c.subReply("sunsubscribe", nil, 0)
		}
		return
	}
	names := make([]string, 0, len(c.shard))
	for n := range c.shard {
		names = append(names, n)
	}
	sort.Strings(names) // Redis walks a hash table; sorted is one of its possible orders
	for _, n := range names {
		h.shardRemove(c, n)
		if reply {
			c.subReply("sunsubscribe", []byte(n), len(c.shard))
		}
	}
}

// ShardPublish is SPUBLISH: the number of clients that received msg.
func (s *Server) ShardPublish(channel, msg []byte) int {
	set := s.hub.shard[string(channel)]
	if len(set) == 0 {
		return 0
	}
	f := frames{kind: smsgKind, channel: channel, msg: msg}
	for c := range set {
		c.push(f.get(c.w.Proto()))
	}
	return len(set)
}

// ShardChannels is PUBSUB SHARDCHANNELS: shard channels with subscribers,
// those matching pattern when it is not nil.
func (s *Server) ShardChannels(pattern []byte) [][]byte {
	var out [][]byte
	for name := range s.hub.shard {
		if pattern == nil || glob.Match(string(pattern), name) {
			out = append(out, []byte(name))
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i]) < string(out[j]) })
	return out
}

// ShardNumSub is one PUBSUB SHARDNUMSUB count.
func (s *Server) ShardNumSub(channel []byte) int { return len(s.hub.shard[string(channel)]) }
