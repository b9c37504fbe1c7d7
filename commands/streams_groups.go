package commands

import (
	"strings"

	"github.com/revolver-db/revolver/engine"
)

// StreamGroups are the consumer-group commands of the stream family.
var StreamGroups = []*Command{
	{Name: "xgroup", Arity: -2, Group: "stream", Since: "5.0.0", Complexity: "Depends on subcommand.",
		Summary: "A container for consumer groups commands", Subs: []*Command{
			{Name: "create", Arity: -5, Flags: "write denyoom", ACL: "stream", Keys: "RW insert @2",
				Group: "stream", Since: "5.0.0", Complexity: "O(1)", Summary: "Create a consumer group.",
				Args: "key groupname (id=id|\"$\":new_id) [MKSTREAM] [ENTRIESREAD entries_read:integer]", Run: xgroupCmd},
			{Name: "createconsumer", Arity: 5, Flags: "write denyoom", ACL: "stream", Keys: "RW insert @2",
				Group: "stream", Since: "6.2.0", Complexity: "O(1)", Summary: "Create a consumer in a consumer group.",
				Args: "key groupname consumername", Run: xgroupCmd},
			{Name: "delconsumer", Arity: 5, Flags: "write", ACL: "stream", Keys: "RW delete @2",
				Group: "stream", Since: "5.0.0", Complexity: "O(1)", Summary: "Delete a consumer from a consumer group.",
				Args: "key groupname consumername", Run: xgroupCmd},
			{Name: "destroy", Arity: 4, Flags: "write", ACL: "stream", Keys: "RW delete @2",
				Group: "stream", Since: "5.0.0",
				Complexity: "O(N) where N is the number of entries in the group's pending entries list (PEL).",
				Summary:    "Destroy a consumer group.", Args: "key groupname", Run: xgroupCmd},
			{Name: "help", Arity: 2, Flags: "loading stale", ACL: "stream", Group: "stream", Since: "5.0.0",
				Complexity: "O(1)", Summary: "Show helpful text about the different subcommands", Run: xgroupHelp},
			{Name: "setid", Arity: -5, Flags: "write", ACL: "stream", Keys: "RW update @2",
				Group: "stream", Since: "5.0.0", Complexity: "O(1)", Summary: "Set a consumer group to an arbitrary last delivered ID value.",
				Args: "key groupname (id=id|\"$\":new_id) [ENTRIESREAD entries_read:integer]", Run: xgroupCmd},
		}},
	{Name: "xreadgroup", Arity: -7, Flags: "write blocking", ACL: "stream", Keys: "RO access @kw:STREAMS:4 ..-1/1/2",
		Group: "stream", Since: "5.0.0",
		Complexity: "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.",
		Summary:    "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.",
		Args:       "GROUP (group_consumer=group consumer) [COUNT count:integer] [BLOCK milliseconds:integer] [NOACK] STREAMS (streams=key... id...)",
		Run:        xreadgroup},
	{Name: "xack", Arity: -4, Flags: "write fast", ACL: "stream", Keys: "RW update @1",
		Group: "stream", Since: "5.0.0", Complexity: "O(1) for each message ID processed.",
		Summary: "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.",
		Args:    "key group id...", Run: xack},
	{Name: "xpending", Arity: -3, Flags: "readonly", ACL: "stream", Keys: "RO access @1",
		Tips: "nondeterministic_output", Group: "stream", Since: "5.0.0",
		Complexity: "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.",
		Summary:    "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.",
		Args:       "key group [filters=[IDLE min-idle-time:integer] start end count:integer [consumer]]", Run: xpending},
	{Name: "xclaim", Arity: -6, Flags: "write fast", ACL: "stream", Keys: "RW update @1",
		Tips: "nondeterministic_output", Group: "stream", Since: "5.0.0", Complexity: "O(log N) with N being the number of messages in the PEL of the consumer group.",
		Summary: "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.",
		Args:    "key group consumer min-idle-time id... [IDLE ms:integer] [TIME unix-time-milliseconds:unix-time] [RETRYCOUNT count:integer] [FORCE] [JUSTID] [LASTID id]",
		Run:     xclaim},
	{Name: "xautoclaim", Arity: -6, Flags: "write fast", ACL: "stream", Keys: "RW delete @1",
		Tips: "nondeterministic_output", Group: "stream", Since: "6.2.0", Complexity: "O(1) if COUNT is small.",
		Summary: "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.",
		Args:    "key group consumer min-idle-time start [COUNT count:integer] [JUSTID]", Run: xautoclaim},
}

// subSyntaxError is Redis's addReplySubcommandSyntaxError.
func subSyntaxError(c *Ctx) {
	c.W.Error("ERR unknown subcommand or wrong number of arguments for '" + clip128(c.Args[1]) + "'. Try " +
		strings.ToUpper(string(c.Args[0])) + " HELP.")
}

func clip128(b []byte) string {
	if len(b) > 128 {
		b = b[:128]
	}
	return string(b)
}

func xgroupHelp(c *Ctx) {
	writeHelp(c, "XGROUP",
		"CREATE <key> <groupname> <id|$> [option]",
		"    Create a new consumer group. Options are:",
		"    * MKSTREAM",
		"      Create the empty stream if it does not exist.",
		"    * ENTRIESREAD entries_read",
		"      Set the group's entries_read counter (internal use).",
		"CREATECONSUMER <key> <groupname> <consumer>",
		"    Create a new consumer in the specified group.",
		"DELCONSUMER <key> <groupname> <consumer>",
		"    Remove the specified consumer.",
		"DESTROY <key> <groupname>",
		"    Remove the specified group.",
		"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
		"    Set the current group ID and entries_read counter.")
}

func xgroupCmd(c *Ctx) {
	sub := strings.ToLower(string(c.Args[1]))
	create, setid := sub == "create", sub == "setid"
	mkstream := false
	entriesRead := int64(-1)
	for i := 5; i < len(c.Args); {
		switch {
		case create && is(c.Args[i], "MKSTREAM"):
			mkstream = true
			i++
		case (create || setid) && is(c.Args[i], "ENTRIESREAD") && i+1 < len(c.Args):
			n, ok := c.Int64(i + 1)
			if !ok {
				return
			}
			if n < 0 && n != -1 {
				c.W.Error("ERR value for ENTRIESREAD must be positive or -1")
				return
			}
			entriesRead = n
			i += 2
		default:
			subSyntaxError(c)
			return
		}
	}
	key, name := c.Args[2], c.Args[3]
	s, err := c.DB.WriteStream(key)
	if err != nil {
		c.Error(err)
		return
	}
	var g *engine.StreamGroup
	if !mkstream {
		if s == nil {
			c.W.Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
			return
		}
		if g = s.Group(name); g == nil && sub != "create" && sub != "destroy" {
			c.W.Error("NOGROUP No such consumer group '" + string(name) + "' for key name '" + string(key) + "'")
			return
		}
	} else if s != nil {
		g = s.Group(name)
	}
	switch {
	case create && len(c.Args) <= 8:
		var last *engine.StreamID
		if string(c.Args[4]) != "$" {
			id, _, err := engine.ParseStreamID(c.Args[4], 0, true, false)
			if err != nil {
				c.Error(err)
				return
			}
			last = &id
		}
		if err := c.DB.XGroupCreate(key, s, name, last, entriesRead); err != nil {
			c.Error(err)
			return
		}
		c.W.OK()
		c.DB.Notify(engine.NotifyStream, "xgroup-create", key)
	case setid && (len(c.Args) == 5 || len(c.Args) == 7):
		var last *engine.StreamID
		if string(c.Args[4]) != "$" {
			id, _, err := engine.ParseStreamID(c.Args[4], 0, false, false)
			if err != nil {
				c.Error(err)
				return
			}
			last = &id
		}
		c.DB.XGroupSetID(key, s, g, last, entriesRead)
		c.W.OK()
		c.DB.Notify(engine.NotifyStream, "xgroup-setid", key)
	case sub == "destroy":
		if g == nil {
			c.W.Int(0)
			return
		}
		c.DB.XGroupDestroy(key, s, g)
		c.W.Int(1)
		c.DB.Notify(engine.NotifyStream, "xgroup-destroy", key)
	case sub == "createconsumer":
		if c.DB.XGroupCreateConsumer(key, g, c.Args[4]) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
	case sub == "delconsumer":
		n := c.DB.XGroupDelConsumer(key, g, c.Args[4])
		if n < 0 {
			c.W.Int(0)
			return
		}
		c.W.Int(int64(n))
		c.DB.Notify(engine.NotifyStream, "xgroup-delconsumer", key)
	default:
		subSyntaxError(c)
	}
}

// writeStreamDeliveries writes entries as XRANGE does; a gone entry is its id
// and a null array.
func writeStreamDeliveries(c *Ctx, ds []engine.StreamDelivery) {
	c.W.Array(len(ds))
	for _, d := range ds {
		if d.Fields == nil {
			c.W.Array(2)
			replyStreamID(c, d.ID)
			c.W.NullArray()
			continue
		}
		replyStreamEntry(c, d.ID, d.Fields)
	}
}

func xreadgroup(c *Ctx) {
	r, ok := parseStreamRead(c, true)
	if !ok {
		return
	}
	// Replicas get what the read changed (claims, the group's last id),
	// never the read itself.
	c.PreventPropagation()
	prop := c.propagateLater()
	type served struct {
		key []byte
		ds  []engine.StreamDelivery
	}
	var out []served
	for i, key := range r.keys {
		s, _ := c.DB.ReadStream(key)
		if s == nil {
			continue
		}
		g := s.Group(r.group)
		if g == nil {
			continue
		}
		switch {
		case !r.newOnly[i]:
			start, _ := r.ids[i].Incr()
			out = append(out, served{key, c.DB.XReadGroupHistory(key, s, g, r.consumer, start, int(min(r.count, 1<<40)))})
		case s.Len() > 0 && g.LastID.Less(s.LastEntryID()):
			out = append(out, served{key, readGroupNew(c.DB, prop, key, s, g, r.consumer, int(min(r.count, 1<<40)), r.noack)})
		}
	}
	if len(out) > 0 {
		writeReadHeader(c, len(out))
		for _, sv := range out {
			writeReadKey(c, sv.key)
			writeStreamDeliveries(c, sv.ds)
		}
		return
	}
	if r.block < 0 {
		c.W.NullArray()
		return
	}
	count := r.count
	if count == 0 {
		count = streamReadDefaultCount
	}
	db, w := c.DB, c.W
	c.Conn.Block(r.keys, blockDuration(r.block), func(key []byte) bool {
		s, isStream := db.Peek(key).(*engine.Stream)
		if !isStream {
			w.Error("UNBLOCKED the stream key no longer exists")
			return true
		}
		g := s.Group(r.group)
		if g == nil {
			w.Error("NOGROUP the consumer group this client was blocked on no longer exists")
			return true
		}
		if !g.LastID.Less(s.LastID()) {
			return false
		}
		ds := readGroupNew(db, prop, key, s, g, r.consumer, int(count), r.noack)
		sub := &Ctx{DB: db, W: w}
		writeReadHeader(sub, 1)
		writeReadKey(sub, key)
		writeStreamDeliveries(sub, ds)
		return true
	}, w.NullArray)
}

// readGroupNew is XREADGROUP's read of new entries, propagated as Redis
// does: an XCLAIM per entry now pending, or with NOACK the consumer's
// creation and the group's new last id.
func readGroupNew(db *engine.DB, prop func(...[]byte), key []byte, s *engine.Stream, g *engine.StreamGroup,
	consumer []byte, count int, noack bool) []engine.StreamDelivery {
	created := g.Consumer(consumer) == nil
	ds := db.XReadGroupNew(key, s, g, consumer, count, noack)
	if noack {
		if created {
			prop([]byte("XGROUP"), []byte("CREATECONSUMER"), key, []byte(g.Name), consumer)
		}
		if len(ds) > 0 {
			propagateGroupID(prop, key, g)
		}
		return ds
	}
	for _, d := range ds {
		if p := g.Pending(d.ID); p != nil {
			propagateClaim(prop, key, []byte(g.Name), p, d.ID)
		}
	}
	return ds
}

// streamGroupFor looks key and its group up for XCLAIM/XAUTOCLAIM/XPENDING,
// writing Redis's NOGROUP error when either is missing.
func streamGroupFor(c *Ctx, key, group []byte) (*engine.Stream, *engine.StreamGroup, bool) {
	s, err := c.DB.ReadStream(key)
	if err != nil {
		c.Error(err)
		return nil, nil, false
	}
	var g *engine.StreamGroup
	if s != nil {
		g = s.Group(group)
	}
	if g == nil {
		c.W.Error("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(group) + "'")
		return nil, nil, false
	}
	return s, g, true
}

func xack(c *Ctx) {
	s, err := c.DB.ReadStream(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	var g *engine.StreamGroup
	if s != nil {
		g = s.Group(c.Args[2])
	}
	if g == nil {
		c.W.Int(0)
		return
	}
	ids, ok := parseStreamIDs(c, c.Args[3:])
	if !ok {
		return
	}
	c.W.Int(int64(c.DB.XAck(c.Args[1], g, ids)))
}

func xpending(c *Ctx) {
	n := len(c.Args)
	if n != 3 && (n < 6 || n > 9) {
		c.SyntaxError()
		return
	}
	var start, end engine.StreamID
	var count, minIdle int64
	var consumer []byte
	if n >= 6 {
		at := 3
		if is(c.Args[3], "IDLE") {
			v, ok := c.Int64(4)
			if !ok {
				return
			}
			minIdle = v
			if n < 8 {
				c.SyntaxError()
				return
			}
			at += 2
		}
		v, ok := c.Int64(at + 2)
		if !ok {
			return
		}
		count = max(v, 0)
		var ex bool
		if start, ex, ok = parseRangeID(c, c.Args[at], 0); !ok {
			return
		}
		if ex {
			if start, ok = start.Incr(); !ok {
				c.W.Error("ERR invalid start ID for the interval")
				return
			}
		}
		if end, ex, ok = parseRangeID(c, c.Args[at+1], ^uint64(0)); !ok {
			return
		}
		if ex {
			if end, ok = end.Decr(); !ok {
				c.W.Error("ERR invalid end ID for the interval")
				return
			}
		}
		if at+3 < n {
			consumer = c.Args[at+3]
		}
	}
	_, g, ok := streamGroupFor(c, c.Args[1], c.Args[2])
	if !ok {
		return
	}
	if n == 3 {
		c.W.Array(4)
		c.W.Int(int64(g.PendingCount()))
		if g.PendingCount() == 0 {
			c.W.Null()
			c.W.Null()
			c.W.NullArray()
			return
		}
		lo, hi := g.PendingBounds()
		replyStreamID(c, lo)
		replyStreamID(c, hi)
		k := 0
		g.Consumers(func(sc *engine.StreamConsumer) {
			if sc.PendingCount() > 0 {
				k++
			}
		})
		c.W.Array(k)
		g.Consumers(func(sc *engine.StreamConsumer) {
			if sc.PendingCount() > 0 {
				c.W.Array(2)
				c.W.BulkString(sc.Name)
				c.W.BulkInt(int64(sc.PendingCount()))
			}
		})
		return
	}
	rangeFn := g.PendingRange
	if consumer != nil {
		sc := g.Consumer(consumer)
		if sc == nil {
			c.W.Array(0)
			return
		}
		rangeFn = sc.PendingRange
	}
	now := c.Eng.Now()
	var list []*engine.PendingEntry
	if count > 0 {
		rangeFn(start, end, func(p *engine.PendingEntry) bool {
			if minIdle != 0 && now-p.DeliveryTime < minIdle {
				return true
			}
			list = append(list, p)
			return int64(len(list)) < count
		})
	}
	c.W.Array(len(list))
	for _, p := range list {
		c.W.Array(4)
		replyStreamID(c, p.ID)
		c.W.BulkString(p.Consumer.Name)
		c.W.Int(max(now-p.DeliveryTime, 0))
		c.W.Int(int64(p.DeliveryCount))
	}
}

func xclaim(c *Ctx) {
	key := c.Args[1]
	s, g, ok := streamGroupFor(c, key, c.Args[2])
	if !ok {
		return
	}
	minIdle, ok := engine.ParseInt(c.Args[4])
	if !ok {
		c.W.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	a := &engine.XClaimArgs{MinIdle: max(minIdle, 0), DeliveryTime: -1, RetryCount: -1}
	j := 5
	var ids []engine.StreamID
	for ; j < len(c.Args); j++ {
		id, _, err := engine.ParseStreamID(c.Args[j], 0, true, false)
		if err != nil {
			break
		}
		ids = append(ids, id)
	}
	now := c.Eng.Now()
	for ; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		opt := c.Args[j]
		intOpt := func(what string) (int64, bool) {
			j++
			v, ok := engine.ParseInt(c.Args[j])
			if !ok {
				c.W.Error("ERR Invalid " + what + " option argument for XCLAIM")
			}
			return v, ok
		}
		switch {
		case is(opt, "FORCE"):
			a.Force = true
		case is(opt, "JUSTID"):
			a.JustID = true
		case is(opt, "IDLE") && more > 0:
			v, ok := intOpt("IDLE")
			if !ok {
				return
			}
			a.DeliveryTime = now - v
		case is(opt, "TIME") && more > 0:
			v, ok := intOpt("TIME")
			if !ok {
				return
			}
			a.DeliveryTime = v
		case is(opt, "RETRYCOUNT") && more > 0:
			v, ok := intOpt("RETRYCOUNT")
			if !ok {
				return
			}
			a.RetryCount = v
		case is(opt, "LASTID") && more > 0:
			j++
			id, _, err := engine.ParseStreamID(c.Args[j], 0, true, false)
			if err != nil {
				c.Error(err)
				return
			}
			a.LastID = id
		default:
			c.W.Error("ERR Unrecognized XCLAIM option '" + string(opt) + "'")
			return
		}
	}
	// What replicas get: an XCLAIM per pending entry claimed, or dropped
	// because its entry is gone (as it was); else the group's last id if
	// LASTID moved it.
	c.PreventPropagation()
	type gone struct {
		p  engine.PendingEntry
		at int
	}
	var dropped []gone
	for i, id := range ids {
		if _, exists := s.Get(id); !exists {
			if p := g.Pending(id); p != nil {
				dropped = append(dropped, gone{*p, i})
			}
		}
	}
	lastBefore := g.LastID
	ds := c.DB.XClaim(key, s, g, c.Args[3], ids, a)
	claimed, k := 0, 0
	for i, id := range ids { // ds and dropped follow the order of ids
		if len(dropped) > 0 && dropped[0].at == i {
			propagateClaim(c.PropagateAs, key, c.Args[2], &dropped[0].p, g.LastID)
			dropped = dropped[1:]
			claimed++
		}
		if k < len(ds) && ds[k].ID == id {
			if p := g.Pending(id); p != nil {
				propagateClaim(c.PropagateAs, key, c.Args[2], p, g.LastID)
				claimed++
			}
			k++
		}
	}
	if claimed == 0 && g.LastID != lastBefore {
		propagateGroupID(c.PropagateAs, key, g)
	}
	if a.JustID {
		c.W.Array(len(ds))
		for _, d := range ds {
			replyStreamID(c, d.ID)
		}
		return
	}
	writeStreamDeliveries(c, ds)
}

func xautoclaim(c *Ctx) {
	key := c.Args[1]
	minIdle, ok := engine.ParseInt(c.Args[4])
	if !ok {
		c.W.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	start, ex, ok := parseRangeID(c, c.Args[5], 0)
	if !ok {
		return
	}
	if ex {
		if start, ok = start.Incr(); !ok {
			c.W.Error("ERR invalid start ID for the interval")
			return
		}
	}
	count, justID := int64(100), false
	for j := 6; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch {
		case is(c.Args[j], "COUNT") && more > 0:
			v, ok := engine.ParseInt(c.Args[j+1])
			if !ok || v < 1 || v > (1<<63-1)/16 {
				c.W.Error("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case is(c.Args[j], "JUSTID"):
			justID = true
		default:
			c.SyntaxError()
			return
		}
	}
	s, g, ok := streamGroupFor(c, key, c.Args[2])
	if !ok {
		return
	}
	ds, next, deleted := c.DB.XAutoClaim(key, s, g, c.Args[3], max(minIdle, 0), start, count, justID)
	// Replicas get an XCLAIM per entry, claimed or dropped, in the PEL's
	// order, as Redis walks it.
	c.PreventPropagation()
	for i, j := 0, 0; i < len(deleted) || j < len(ds); {
		if j == len(ds) || i < len(deleted) && deleted[i].ID.Less(ds[j].ID) {
			propagateClaim(c.PropagateAs, key, c.Args[2], &deleted[i], g.LastID)
			i++
			continue
		}
		if p := g.Pending(ds[j].ID); p != nil {
			propagateClaim(c.PropagateAs, key, c.Args[2], p, g.LastID)
		}
		j++
	}
	c.W.Array(3)
	replyStreamID(c, next)
	if justID {
		c.W.Array(len(ds))
		for _, d := range ds {
			replyStreamID(c, d.ID)
		}
	} else {
		writeStreamDeliveries(c, ds)
	}
	c.W.Array(len(deleted))
	for _, p := range deleted {
		replyStreamID(c, p.ID)
	}
}
