package commands

import (
	"bytes"

	"github.com/revolver-db/revolver/engine"
)

// streamReadDefaultCount caps what a blocked XREAD without COUNT is sent
// when it wakes, as Redis's XREAD_BLOCKED_DEFAULT_COUNT does.
const streamReadDefaultCount = 1000

// streamRead is a parsed XREAD or XREADGROUP.
type streamRead struct {
	block    int64 // -1: no BLOCK
	count    int64
	keys     [][]byte
	ids      []engine.StreamID
	newOnly  []bool // XREADGROUP's ">"
	group    []byte
	consumer []byte
	noack    bool
}

// parseStreamRead parses the options as Redis's xreadCommand does; false
// after an error reply.
func parseStreamRead(c *Ctx, group bool) (*streamRead, bool) {
	r := &streamRead{block: -1}
	streamsAt := 0
	for i := 1; i < len(c.Args); i++ {
		more := len(c.Args) - i - 1
		o := c.Args[i]
		switch {
		case is(o, "BLOCK") && more > 0:
			if _, inScript := c.Conn.(*scriptConn); inScript {
				// The name as the script wrote it, as Redis prints argv[0].
				c.W.Error("ERR " + clean(c.Args[0]) + " command is not allowed with BLOCK option from scripts")
				return nil, false
			}
			i++
			n, ok := engine.ParseInt(c.Args[i])
			if !ok {
				c.W.Error("ERR timeout is not an integer or out of range")
				return nil, false
			}
			if n < 0 {
				c.W.Error("ERR timeout is negative")
				return nil, false
			}
			r.block = n
		case is(o, "COUNT") && more > 0:
			i++
			n, ok := c.Int64(i)
			if !ok {
				return nil, false
			}
			r.count = max(n, 0)
		case is(o, "STREAMS") && more > 0:
			streamsAt = i + 1
			if (len(c.Args)-streamsAt)%2 != 0 {
				// XREADGROUP's error says XREAD too, as Redis's does.
				c.W.Error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return nil, false
			}
			i = len(c.Args)
		case is(o, "GROUP") && more >= 2:
			if !group {
				c.W.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return nil, false
			}
			r.group, r.consumer = bytes.Clone(c.Args[i+1]), bytes.Clone(c.Args[i+2])
			i += 2
		case is(o, "NOACK"):
			if !group {
				c.W.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return nil, false
			}
			r.noack = true
		default:
			c.SyntaxError()
			return nil, false
		}
	}
	if streamsAt == 0 {
		c.SyntaxError()
		return nil, false
	}
	if group && r.group == nil {
		c.W.Error("ERR Missing GROUP option for XREADGROUP")
		return nil, false
	}
	n := (len(c.Args) - streamsAt) / 2
	r.keys = listCloneKeys(c.Args[streamsAt : streamsAt+n])
	r.ids = make([]engine.StreamID, n)
	r.newOnly = make([]bool, n)
	for i := 0; i < n; i++ {
		key, arg := r.keys[i], c.Args[streamsAt+n+i]
		s, err := c.DB.ReadStream(key)
		if err != nil {
			c.Error(err)
			return nil, false
		}
		if group && (s == nil || s.Group(r.group) == nil) {
			c.W.Error("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(r.group) +
				"' in XREADGROUP with GROUP option")
			return nil, false
		}
		switch string(arg) {
		case "$":
			if group {
				c.W.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history " +
					"of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID " +
					"would just return an empty result set.")
				return nil, false
			}
			if s != nil {
				r.ids[i] = s.LastID()
			}
			continue
		case ">":
			if !group {
				c.W.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return nil, false
			}
			r.newOnly[i] = true
			continue
		}
		id, _, err := engine.ParseStreamID(arg, 0, true, false)
		if err != nil {
			c.Error(err)
			return nil, false
		}
		r.ids[i] = id
	}
	return r, true
}

func xread(c *Ctx) {
	r, ok := parseStreamRead(c, false)
	if !ok {
		return
	}
	// Serve at once every key with entries past its id (looked up again,
	// as Redis does).
	type ready struct {
		i int
		s *engine.Stream
	}
	var now []ready
	for i, key := range r.keys {
		s, _ := c.DB.ReadStream(key)
		if s != nil && s.Len() > 0 && r.ids[i].Less(s.LastEntryID()) {
			now = append(now, ready{i, s})
		}
	}
	if len(now) > 0 {
		writeReadHeader(c, len(now))
		for _, rd := range now {
			writeReadKey(c, r.keys[rd.i])
			start, _ := r.ids[rd.i].Incr()
			replyRange(c, rd.s, start, engine.MaxStreamID, false, int(min(r.count, 1<<40)))
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
		i := indexOfKey(r.keys, key)
		s, err := db.ReadStream(key)
		if i < 0 || err != nil || s == nil || !r.ids[i].Less(s.LastID()) {
			return false
		}
		start, _ := r.ids[i].Incr()
		sub := &Ctx{DB: db, W: w}
		writeReadHeader(sub, 1)
		writeReadKey(sub, key)
		replyRange(sub, s, start, engine.MaxStreamID, false, int(count))
		return true
	}, w.NullArray)
}

func indexOfKey(keys [][]byte, key []byte) int {
	for i, k := range keys {
		if bytes.Equal(k, key) {
			return i
		}
	}
	return -1
}

// writeReadHeader opens XREAD's reply: an array of [key, entries] in
// RESP2, a map of key to entries in RESP3.
func writeReadHeader(c *Ctx, n int) {
	if c.W.RESP3() {
		c.W.Map(n)
		return
	}
	c.W.Array(n)
}

func writeReadKey(c *Ctx, key []byte) {
	if !c.W.RESP3() {
		c.W.Array(2)
	}
	c.W.Bulk(key)
}
