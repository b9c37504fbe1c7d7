package commands

import (
	"github.com/revolver-db/revolver/engine"
)

// Streams is the stream family (Redis 7.0's t_stream.c).
var Streams = []*Command{
	{Name: "xadd", Arity: -5, Flags: "write denyoom fast", ACL: "stream",
		Keys: "RW update @1 notes=UPDATE instead of INSERT because of the optional trimming feature",
		Tips: "nondeterministic_output", Group: "stream", Since: "5.0.0",
		Complexity: "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
		Summary:    "Appends a new entry to a stream",
		Args: "key [NOMKSTREAM] [trim=(strategy=MAXLEN|MINID) [operator=\"=\":equal|\"~\":approximately] threshold [LIMIT count:integer]] " +
			"(id_or_auto=\"*\":auto_id|id) (field_value=field value)...",
		Run: xadd},
	{Name: "xlen", Arity: 2, Flags: "readonly fast", ACL: "stream", Keys: "RO @1",
		Group: "stream", Since: "5.0.0", Complexity: "O(1)",
		Summary: "Return the number of entries in a stream", Args: "key", Run: xlen},
	{Name: "xrange", Arity: -4, Flags: "readonly", ACL: "stream", Keys: "RO access @1",
		Group: "stream", Since: "5.0.0",
		Complexity: "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
		Summary:    "Return a range of elements in a stream, with IDs matching the specified IDs interval",
		Args:       "key start end [COUNT count:integer]", Run: xrange},
	{Name: "xrevrange", Arity: -4, Flags: "readonly", ACL: "stream", Keys: "RO access @1",
		Group: "stream", Since: "5.0.0",
		Complexity: "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
		Summary:    "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE",
		Args:       "key end start [COUNT count:integer]", Run: xrange},
	{Name: "xdel", Arity: -3, Flags: "write fast", ACL: "stream", Keys: "RW delete @1",
		Group: "stream", Since: "5.0.0", Complexity: "O(1) for each single item to delete in the stream, regardless of the stream size.",
		Summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.",
		Args:    "key id...", Run: xdel},
	{Name: "xtrim", Arity: -4, Flags: "write", ACL: "stream", Keys: "RW delete @1",
		Tips: "nondeterministic_output", Group: "stream", Since: "5.0.0",
		Complexity: "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
		Summary:    "Trims the stream to (approximately if '~' is passed) a certain size",
		Args:       "key (trim=(strategy=MAXLEN|MINID) [operator=\"=\":equal|\"~\":approximately] threshold [LIMIT count:integer])", Run: xtrim},
	{Name: "xsetid", Arity: -3, Flags: "write denyoom fast", ACL: "stream", Keys: "RW update @1",
		Group: "stream", Since: "5.0.0", Complexity: "O(1)",
		Summary: "An internal command for replicating stream values",
		Args:    "key last-id [ENTRIESADDED entries_added:integer] [MAXDELETEDID max_deleted_entry_id]", Run: xsetid},
	{Name: "xread", Arity: -4, Flags: "readonly blocking", ACL: "stream", Keys: "RO access @kw:STREAMS:1 ..-1/1/2",
		Group: "stream", Since: "5.0.0",
		Complexity: "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.",
		Summary:    "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.",
		Args:       "[COUNT count:integer] [BLOCK milliseconds:integer] STREAMS (streams=key... id...)", Run: xread},
}

// replyStreamID writes an id as a bulk string.
func replyStreamID(c *Ctx, id engine.StreamID) {
	var buf [44]byte
	c.W.Bulk(id.AppendTo(buf[:0]))
}

// replyStreamEntry writes [id, [field, value, ...]].
func replyStreamEntry(c *Ctx, id engine.StreamID, fields [][]byte) {
	c.W.Array(2)
	replyStreamID(c, id)
	c.W.Array(len(fields))
	for _, f := range fields {
		c.W.Bulk(f)
	}
}

// parseTrimArgs parses XADD's and XTRIM's options from argument 2 as
// Redis's streamParseAddOrTrimArgsOrReply does. For XADD (a non-nil)
// it stops at the id and returns its position; -1 after an error reply.
func parseTrimArgs(c *Ctx, t *engine.StreamTrim, a *engine.XAddArgs) int {
	i := 2
	limitGiven := false
	for ; i < len(c.Args); i++ {
		more := len(c.Args) - 1 - i
		opt := c.Args[i]
		switch {
		case a != nil && len(opt) == 1 && opt[0] == '*':
			goto done
		case (is(opt, "MAXLEN") || is(opt, "MINID")) && more > 0:
			if t.Strategy != engine.TrimNone {
				c.W.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return -1
			}
			t.Approx = false
			next := c.Args[i+1]
			if more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				t.Approx = next[0] == '~'
				i++
			}
			if is(opt, "MAXLEN") {
				n, ok := c.Int64(i + 1)
				if !ok {
					return -1
				}
				if n < 0 {
					c.W.Error("ERR The MAXLEN argument must be >= 0.")
					return -1
				}
				t.Strategy, t.MaxLen = engine.TrimMaxLen, n
			} else {
				id, _, err := engine.ParseStreamID(c.Args[i+1], 0, true, false)
				if err != nil {
					c.Error(err)
					return -1
				}
				t.Strategy, t.MinID = engine.TrimMinID, id
			}
			i++
		case is(opt, "LIMIT") && more > 0:
			n, ok := c.Int64(i + 1)
			if !ok {
				return -1
			}
			if n < 0 {
				c.W.Error("ERR The LIMIT argument must be >= 0.")
				return -1
			}
			t.Limit, limitGiven = n, true
			i++
		case a != nil && is(opt, "NOMKSTREAM"):
			a.NoMkStream = true
		case a != nil:
			id, seqGiven, err := engine.ParseStreamID(opt, 0, true, true)
			if err != nil {
				c.Error(err)
				return -1
			}
			a.ID, a.IDGiven, a.SeqGiven = id, true, seqGiven
			goto done
		default:
			c.SyntaxError()
			return -1
		}
	}
done:
	if t.Limit != 0 && t.Strategy == engine.TrimNone {
		c.W.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return -1
	}
	if a == nil && t.Strategy == engine.TrimNone {
		c.W.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return -1
	}
	if limitGiven {
		if !t.Approx {
			c.W.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
			return -1
		}
	} else if t.Approx {
		t.Limit = -1 // 100 nodes of stream-node-max-entries
	} else {
		t.Limit = 0
	}
	return i
}

func xadd(c *Ctx) {
	a := &engine.XAddArgs{}
	idPos := parseTrimArgs(c, &a.Trim, a)
	if idPos < 0 {
		return
	}
	fieldPos := idPos + 1
	if n := len(c.Args) - fieldPos; n < 2 || n%2 == 1 {
		c.W.Error("ERR wrong number of arguments for 'xadd' command")
		return
	}
	if a.IDGiven && a.SeqGiven && a.ID.IsZero() {
		c.W.Error("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	a.Fields = c.Args[fieldPos:]
	key := c.Args[1]
	id, ok, trimmed, err := c.DB.XAdd(key, a)
	switch {
	case err != nil:
		c.Error(err)
		return
	case !ok:
		c.W.Null()
		return
	}
	replyStreamID(c, id)
	c.DB.Notify(engine.NotifyStream, "xadd", key)
	if trimmed > 0 {
		c.DB.Notify(engine.NotifyStream, "xtrim", key)
	}
	if !a.IDGiven || !a.SeqGiven || a.Trim.Approx {
		c.PropagateAs(xaddPropagated(c, idPos, id, a.Trim)...)
	}
}

// xaddPropagated is XADD as replicas must run it: with the ID it got, and
// an approximate trim made exact at what it left (the length, or the first
// ID), as Redis rewrites it.
func xaddPropagated(c *Ctx, idPos int, id engine.StreamID, t engine.StreamTrim) [][]byte {
	args := append([][]byte(nil), c.Args...)
	args[idPos] = id.AppendTo(nil)
	if !t.Approx {
		return args
	}
	for i := 2; i+1 < idPos; i++ {
		if !is(args[i], "MAXLEN") && !is(args[i], "MINID") {
			continue
		}
		if len(args[i+1]) == 1 && args[i+1][0] == '~' {
			args[i+1] = []byte("=")
			i++
		}
		if st, ok := c.DB.Peek(c.Args[1]).(*engine.Stream); ok {
			if t.Strategy == engine.TrimMaxLen {
				args[i+1] = msArg(int64(st.Len()))
			} else {
				args[i+1] = st.FirstID().AppendTo(nil)
			}
		}
		break
	}
	return args
}

// readStream looks the key of argument 1 up for reading, writing the
// error reply for a key of another type.
func (c *Ctx) readStream() (*engine.Stream, bool) {
	s, err := c.DB.ReadStream(c.Args[1])
	if err != nil {
		c.Error(err)
		return nil, false
	}
	return s, true
}

func xlen(c *Ctx) {
	s, ok := c.readStream()
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.Len()))
}

// parseRangeID parses a range bound: "(" makes it exclusive (and strict).
func parseRangeID(c *Ctx, arg []byte, missingSeq uint64) (id engine.StreamID, exclusive, ok bool) {
	var err error
	if len(arg) > 1 && arg[0] == '(' {
		id, _, err = engine.ParseStreamID(arg[1:], missingSeq, true, false)
		exclusive = true
	} else {
		id, _, err = engine.ParseStreamID(arg, missingSeq, false, false)
	}
	if err != nil {
		c.Error(err)
		return id, false, false
	}
	return id, exclusive, true
}

func xrange(c *Ctx) {
	rev := c.Cmd.Name == "xrevrange"
	startArg, endArg := c.Args[2], c.Args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ex, ok := parseRangeID(c, startArg, 0)
	if !ok {
		return
	}
	if ex {
		if start, ok = start.Incr(); !ok {
			c.W.Error("ERR invalid start ID for the interval")
			return
		}
	}
	end, ex, ok := parseRangeID(c, endArg, ^uint64(0))
	if !ok {
		return
	}
	if ex {
		if end, ok = end.Decr(); !ok {
			c.W.Error("ERR invalid end ID for the interval")
			return
		}
	}
	count := int64(-1)
	for j := 4; j < len(c.Args); j++ {
		if is(c.Args[j], "COUNT") && j+1 < len(c.Args) {
			n, ok := c.Int64(j + 1)
			if !ok {
				return
			}
			count = max(n, 0)
			j++
		} else {
			c.SyntaxError()
			return
		}
	}
	s, ok := c.readStream()
	if !ok {
		return
	}
	if s == nil {
		c.W.Array(0)
		return
	}
	if count == 0 {
		c.W.NullArray()
		return
	}
	if count < 0 {
		count = 0
	}
	replyRange(c, s, start, end, rev, int(min(count, 1<<40)))
}

// replyRange writes the entries in [start, end] (count 0: all).
func replyRange(c *Ctx, s *engine.Stream, start, end engine.StreamID, rev bool, count int) {
	n := 0
	s.Range(start, end, rev, count, func(engine.StreamID, [][]byte) bool { n++; return true })
	c.W.Array(n)
	s.Range(start, end, rev, count, func(id engine.StreamID, fields [][]byte) bool {
		replyStreamEntry(c, id, fields)
		return true
	})
}

// parseStreamIDs parses XDEL's and XACK's ids (a missing sequence is 0),
// replying the error of the first bad one.
func parseStreamIDs(c *Ctx, args [][]byte) ([]engine.StreamID, bool) {
	ids := make([]engine.StreamID, 0, len(args))
	for _, a := range args {
		id, _, err := engine.ParseStreamID(a, 0, true, false)
		if err != nil {
			c.Error(err)
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

func xdel(c *Ctx) {
	s, err := c.DB.WriteStream(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	ids, ok := parseStreamIDs(c, c.Args[2:])
	if !ok {
		return
	}
	n, err := c.DB.XDel(c.Args[1], ids)
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifyStream, "xdel", c.Args[1])
	}
	c.W.Int(int64(n))
}

func xtrim(c *Ctx) {
	var t engine.StreamTrim
	if parseTrimArgs(c, &t, nil) < 0 {
		return
	}
	n, err := c.DB.XTrim(c.Args[1], &t)
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifyStream, "xtrim", c.Args[1])
	}
	c.W.Int(n)
}

func xsetid(c *Ctx) {
	id, _, err := engine.ParseStreamID(c.Args[2], 0, true, false)
	if err != nil {
		c.Error(err)
		return
	}
	entriesAdded := int64(-1)
	var maxDeleted engine.StreamID
	for i := 3; i < len(c.Args); i += 2 {
		more := len(c.Args) - 1 - i
		switch {
		case is(c.Args[i], "ENTRIESADDED") && more > 0:
			n, ok := c.Int64(i + 1)
			if !ok {
				return
			}
			if n < 0 {
				c.W.Error("ERR entries_added must be positive")
				return
			}
			entriesAdded = n
		case is(c.Args[i], "MAXDELETEDID") && more > 0:
			m, _, err := engine.ParseStreamID(c.Args[i+1], 0, true, false)
			if err != nil {
				c.Error(err)
				return
			}
			if id.Less(m) {
				c.W.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			maxDeleted = m
		default:
			c.SyntaxError()
			return
		}
	}
	if err := c.DB.XSetID(c.Args[1], id, entriesAdded, maxDeleted); err != nil {
		c.Error(err)
		return
	}
	c.W.OK()
	c.DB.Notify(engine.NotifyStream, "xsetid", c.Args[1])
}
