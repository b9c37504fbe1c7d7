package server

import (
	"sort"
	"strconv"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/glob"
	"github.com/revolver-db/revolver/resp"
)

// hub routes published messages and keyspace events to subscribers. Every
// method runs under the engine lock (PUBLISH and SUBSCRIBE are commands,
// keyspace events come from the engine), so the hub needs no lock of its own
// and a message can never overtake the confirmation of the subscription
// that receives it.
type hub struct {
	channels map[string]map[*Client]struct{}
	patterns map[string]map[*Client]struct{}
	shard    map[string]map[*Client]struct{} // SSUBSCRIBE's channels (pubsub_shard.go)
}

func newHub() *hub {
	return &hub{channels: map[string]map[*Client]struct{}{}, patterns: map[string]map[*Client]struct{}{},
		shard: map[string]map[*Client]struct{}{}}
}

func (h *hub) table(pattern bool) map[string]map[*Client]struct{} {
	if pattern {
		return h.patterns
	}
	return h.channels
}

func (c *Client) subs(pattern bool) map[string]struct{} {
	if pattern {
		if c.patterns == nil {
			c.patterns = map[string]struct{}{}
		}
		return c.patterns
	}
	if c.channels == nil {
		c.channels = map[string]struct{}{}
	}
	return c.channels
}

func subscribeKind(pattern, sub bool) string {
	switch {
	case pattern && sub:
		return "psubscribe"
	case pattern:
		return "punsubscribe"
	case sub:
		return "subscribe"
	}
	return "unsubscribe"
}

// writeSubReply writes a (un)subscribe confirmation: kind, name, count.
func writeSubReply(w *resp.Writer, kind string, name []byte, count int) {
	w.Push(3)
	w.BulkString(kind)
	if name == nil {
		w.Null()
	} else {
		w.Bulk(name)
	}
	w.Int(int64(count))
}

// subReply gives c a (un)subscribe confirmation. It is a push to Redis
// (CLIENT_PUSHING), in RESP2 too, so CLIENT REPLY OFF and SKIP do not
// silence it: then it goes out at once, after the replies of the commands
// before this one, while what this command wrote before it stays silenced.
func (c *Client) subReply(kind string, name []byte, count int) {
	if !c.quiet() {
		writeSubReply(&c.w, kind, name, count)
		return
	}
	c.enterPushMode()
	if mark := min(c.topMark, c.w.Len()); mark > 0 {
		c.push(c.w.Bytes()[:mark])
		own := append([]byte(nil), c.w.Bytes()[mark:]...)
		c.w.Reset()
		c.w.Raw(own)
		c.topMark = 0
	}
	var w resp.Writer
	w.SetProto(c.w.Proto())
	writeSubReply(&w, kind, name, count)
	c.push(w.Bytes())
}

// Subscribe implements commands.Conn.
func (c *Client) Subscribe(names [][]byte, pattern bool) {
	h := c.s.hub
	mine := c.subs(pattern)
	for _, n := range names {
		name := string(n)
		if _, ok := mine[name]; !ok {
			mine[name] = struct{}{}
			set := h.table(pattern)[name]
			if set == nil {
				set = map[*Client]struct{}{}
				h.table(pattern)[name] = set
			}
			set[c] = struct{}{}
		}
		c.subReply(subscribeKind(pattern, true), n, c.globalSubs())
	}
	c.enterPushMode()
}

// Unsubscribe implements commands.Conn.
func (c *Client) Unsubscribe(names [][]byte, pattern bool) {
	if len(names) == 0 {
		c.s.hub.unsubscribeAll(c, pattern, true)
		return
	}
	for _, n := range names {
		c.s.hub.remove(c, string(n), pattern)
		c.subReply(subscribeKind(pattern, false), n, c.globalSubs())
	}
}

func (h *hub) remove(c *Client, name string, pattern bool) {
	mine := c.subs(pattern)
	if _, ok := mine[name]; !ok {
		return
	}
	delete(mine, name)
	t := h.table(pattern)
	delete(t[name], c)
	if len(t[name]) == 0 {
		delete(t, name)
	}
}

// unsubscribeAll drops every channel (or pattern) subscription of c,
// confirming each one when reply is set.
func (h *hub) unsubscribeAll(c *Client, pattern, reply bool) {
	mine := c.subs(pattern)
	if len(mine) == 0 {
		if reply {
			c.subReply(subscribeKind(pattern, false), nil, c.globalSubs())
		}
		return
	}
	names := make([]string, 0, len(mine))
	for n := range mine {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h.remove(c, n, pattern)
		if reply {
			c.subReply(subscribeKind(pattern, false), []byte(n), c.globalSubs())
		}
	}
}

// dropClient forgets a closed connection.
func (h *hub) dropClient(c *Client) {
	h.unsubscribeAll(c, false, false)
	h.unsubscribeAll(c, true, false)
	h.shardUnsubscribeAll(c, false)
}

// frames lazily encodes a message once per protocol.
type frames struct {
	kind, pattern, channel, msg []byte
	enc                         [4][]byte
}

func (f *frames) get(proto int) []byte {
	if f.enc[proto] == nil {
		var w resp.Writer
		w.SetProto(proto)
		if f.pattern != nil {
			w.Push(4)
			w.Bulk(f.kind)
			w.Bulk(f.pattern)
		} else {
			w.Push(3)
			w.Bulk(f.kind)
		}
		w.Bulk(f.channel)
		w.Bulk(f.msg)
		f.enc[proto] = w.Bytes()
	}
	return f.enc[proto]
}

var (
	msgKind  = []byte("message")
	pmsgKind = []byte("pmessage")
)

// publish delivers msg to the subscribers of channel and of every matching
// pattern and returns how many received it.
func (h *hub) publish(channel, msg []byte) int {
	n := 0
	if set := h.channels[string(channel)]; len(set) > 0 {
		f := frames{kind: msgKind, channel: channel, msg: msg}
		for c := range set {
			c.push(f.get(c.w.Proto()))
			n++
		}
	}
	for pat, set := range h.patterns {
		if !glob.MatchBytes(pat, channel) {
			continue
		}
		f := frames{kind: pmsgKind, pattern: []byte(pat), channel: channel, msg: msg}
		for c := range set {
			c.push(f.get(c.w.Proto()))
			n++
		}
	}
	return n
}

func (h *hub) idle() bool { return len(h.channels) == 0 && len(h.patterns) == 0 }

// KeyspaceEvent implements engine.Notifier.
func (h *hub) KeyspaceEvent(flags engine.NotifyClass, event string, db int, key []byte) {
	if h.idle() {
		return
	}
	dbs := strconv.Itoa(db)
	if flags&engine.NotifyKeyspace != 0 {
		ch := make([]byte, 0, 16+len(dbs)+len(key))
		ch = append(append(append(append(ch, "__keyspace@"...), dbs...), "__:"...), key...)
		h.publish(ch, []byte(event))
	}
	if flags&engine.NotifyKeyevent != 0 {
		ch := make([]byte, 0, 16+len(dbs)+len(event))
		ch = append(append(append(append(ch, "__keyevent@"...), dbs...), "__:"...), event...)
		h.publish(ch, key)
	}
}

// channelNames lists channels with subscribers, filtered by pattern.
func (h *hub) channelNames(pattern []byte) [][]byte {
	var out [][]byte
	for name := range h.channels {
		if pattern == nil || glob.Match(string(pattern), name) {
			out = append(out, []byte(name))
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i]) < string(out[j]) })
	return out
}
