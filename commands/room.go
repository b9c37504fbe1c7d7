package commands

import (
	"math"
	"strconv"
	"strings"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// Room is the ROOM family: live chat rooms read by sequence cursors, with
// long polling and important messages kept apart from the ring of normal
// ones, and presence from heartbeats (engine.Room). SPEC.md §2 and issue
// 24 are the contract; unique viewers and flow control come next.
var Room = []*Command{
	{Name: "room.pub", Arity: -3, Flags: "write denyoom fast", Keys: "RW insert @1",
		Group: "room", Since: "0.4.0", Complexity: "O(1)",
		Summary: "Publishes a message to a room and returns its sequence number; IMPORTANT puts it in the list " +
			"of important messages, which normal traffic never evicts.",
		Args: "key payload [IMPORTANT]", Run: roomPub},
	{Name: "room.pull", Arity: -4, Flags: "write blocking", Keys: "RW access update @1",
		Group: "room", Since: "0.4.0", Complexity: "O(M) for M messages returned.",
		Summary: "Returns the messages after the cursors, important first, as [nseq, iseq, gap, retry-after, " +
			"epoch, messages]; BLOCK waits for one (long polling).",
		Args: "key nseq iseq [UID uid] [COUNT count:integer] [BLOCK milliseconds:integer] [EPOCH epoch:integer]",
		Run:  roomPull},
	{Name: "room.config", Arity: -2, Flags: "write denyoom", Keys: "RW update @1",
		Group: "room", Since: "0.4.0", Complexity: "O(1)",
		Summary: "Sets a room's limits (0 follows the server's room-* default), or with none returns those in force.",
		Args: "key [MAXMESSAGES count:integer] [IMPORTANT-MAX count:integer] " +
			"[IMPORTANT-TTL milliseconds:integer] [PRESENCE-TTL milliseconds:integer] " +
			"[TIERS (tiers=NONE|DEFAULT|(tier=online:integer interval:integer)...)]",
		Run: roomConfig},
	{Name: "room.heartbeat", Arity: -3, Flags: "write denyoom", Keys: "RW update @1",
		Group: "room", Since: "0.4.0", Complexity: "O(M) for M users.",
		Summary: "Marks users online in a room until the presence TTL passes without a heartbeat; returns how many " +
			"are online. A gateway sends its users in one command.",
		Args: "key uid...", Run: roomHeartbeat},
	{Name: "room.leave", Arity: -3, Flags: "write", Keys: "RW update @1",
		Group: "room", Since: "0.4.0", Complexity: "O(M) for M users.",
		Summary: "Marks users offline in a room; returns how many are online.", Args: "key uid...", Run: roomLeave},
	{Name: "room.online", Arity: 2, Flags: "readonly fast", Keys: "RO access @1",
		Group: "room", Since: "0.4.0", Complexity: "O(1)",
		Summary: "Returns how many users are online in a room.", Args: "key", Run: roomOnline},
	{Name: "room.isonline", Arity: -3, Flags: "readonly", Keys: "RO access @1",
		Group: "room", Since: "0.4.0", Complexity: "O(M) for M users.",
		Summary: "Returns 1 or 0 for each user: whether it is online in the room.", Args: "key uid...",
		Run: roomIsOnline},
	{Name: "room.members", Arity: -2, Flags: "readonly", Keys: "RO access @1",
		Group: "room", Since: "0.4.0", Complexity: "O(1) for every call. O(N) for a complete iteration.",
		Summary: "Iterates over the users online in a room as SCAN does, as [cursor, [uid, ...]].",
		Args:    "key [CURSOR cursor:integer] [COUNT count:integer]", Run: roomMembers},
	{Name: "room.uv", Arity: -2, Flags: "readonly fast", Keys: "RO access @1",
		Group: "room", Since: "0.4.0", Complexity: "O(1); with WINDOW, O(M) for the M minutes it spans.",
		Summary: "Returns how many distinct users the room has seen (HEARTBEAT, PULL UID): exact up to " +
			"uv-exact-max, then a HyperLogLog estimate; WINDOW counts those seen in the last ms.",
		Args: "key [WINDOW milliseconds:integer]", Run: roomUV},
	{Name: "room.info", Arity: 2, Flags: "readonly fast", Keys: "RO access @1",
		Group: "room", Since: "0.4.0", Complexity: "O(1)",
		Summary: "Describes a room: messages held, sequence numbers, epoch, pullers waiting, limits in force; " +
			"nil when there is none.",
		Args: "key", Run: roomInfo},
}

func roomPub(c *Ctx) {
	important := false
	p := c.options(3)
	for p.next() {
		switch p.name {
		case "IMPORTANT":
			important = true
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	key := c.Args[1]
	seq, err := c.DB.RoomPub(key, c.Args[2], important)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(seq))
	c.DB.Notify(engine.NotifyModule, "room.pub", key)
}

// roomCursor reads a PULL cursor: a sequence number, or "$" for the
// room's last.
func roomCursor(c *Ctx, b []byte) (seq uint64, latest, ok bool) {
	if string(b) == "$" {
		return 0, true, true
	}
	n, ok := engine.ParseInt(b)
	if !ok || n < 0 {
		c.W.Error("ERR a cursor must be a sequence number (0 or more) or $")
		return 0, false, false
	}
	return uint64(n), false, true
}

// roomPullDefaultCount is how many messages a PULL returns at most without
// COUNT.
const roomPullDefaultCount = 100

func roomPull(c *Ctx) {
	var a engine.RoomPullArgs
	var ok bool
	if a.NSeq, a.NLatest, ok = roomCursor(c, c.Args[2]); !ok {
		return
	}
	if a.ISeq, a.ILatest, ok = roomCursor(c, c.Args[3]); !ok {
		return
	}
	count, block := int64(roomPullDefaultCount), int64(-1)
	p := c.options(4)
	for p.next() {
		switch p.name {
		case "COUNT":
			count = p.positive()
		case "BLOCK":
			block = p.millis(0)
		case "EPOCH":
			a.Epoch, a.HasEpoch = p.atLeast(0), true
		case "UID":
			a.UID = p.value()
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	a.Count = int(min(count, math.MaxInt32))
	key := c.Args[1]
	hold, err := c.DB.RoomFlow(key, a.UID)
	if err != nil {
		c.Error(err)
		return
	}
	// A held PULL reads nothing now, only resolves its cursors ($, another
	// epoch): what is there goes out when the hold ends.
	probe := a
	if hold.Until != 0 {
		probe.Count = 0
	}
	res, err := c.DB.RoomPull(key, probe)
	if err != nil {
		c.Error(err)
		return
	}
	db, w, eng, uid := c.DB, c.W, c.Eng, a.UID
	reply := func(res engine.RoomPullResult, held bool) {
		writeRoomPull(w, res, hold.Interval)
		db.RoomReplied(key, uid, len(res.Messages), held)
	}
	if hold.Until == 0 && (len(res.Messages) > 0 || block < 0) {
		reply(res, false)
		return
	}
	// Wait from the cursors as this pull resolved them: until the hold
	// ends (flow control), and for a message (long polling, BLOCK).
	a.NSeq, a.ISeq, a.NLatest, a.ILatest = res.NSeq, res.ISeq, false, false
	if res.Epoch != 0 {
		a.Epoch, a.HasEpoch = res.Epoch, true
	}
	held := hold.Until != 0
	var wait int64 // ms; 0 waits for a message however long it takes
	switch now := eng.Now(); {
	case block < 0:
		wait = hold.Until - now // held, answered when the hold ends
	case block > 0:
		wait = max(block, hold.Until-now)
	}
	c.Conn.Block([][]byte{key}, blockDuration(wait), func(key []byte) bool {
		if eng.Now() < hold.Until {
			return false
		}
		res, err := db.RoomPull(key, a)
		if err != nil || len(res.Messages) == 0 && block >= 0 {
			return false
		}
		reply(res, held)
		return true
	}, func() { writeRoomPull(w, res, hold.Interval) })
}

func writeRoomPull(w *resp.Writer, res engine.RoomPullResult, retryAfter int64) {
	w.Array(6)
	w.Int(int64(res.NSeq))
	w.Int(int64(res.ISeq))
	w.Int(int64(res.Gap))
	w.Int(retryAfter)
	w.Int(res.Epoch)
	w.Array(len(res.Messages))
	for _, m := range res.Messages {
		w.Array(4)
		if m.Important {
			w.BulkString("important")
		} else {
			w.BulkString("normal")
		}
		w.Int(int64(m.Seq))
		w.BulkString(m.Payload)
		w.Int(m.At)
	}
}

func roomConfig(c *Ctx) {
	key := c.Args[1]
	if len(c.Args) == 2 {
		info, ok, err := c.DB.RoomInfoOf(key)
		switch {
		case err != nil:
			c.Error(err)
		case !ok:
			c.W.Null()
		default:
			writeRoomConfig(c, info)
		}
		return
	}
	var sets []func(*engine.RoomConfig)
	p := c.options(2)
	for p.next() {
		switch p.name {
		case "MAXMESSAGES":
			v := p.atLeast(0)
			sets = append(sets, func(r *engine.RoomConfig) { r.MaxMessages = v })
		case "IMPORTANT-MAX":
			v := p.atLeast(0)
			sets = append(sets, func(r *engine.RoomConfig) { r.ImportantMax = v })
		case "IMPORTANT-TTL":
			v := p.millis(0)
			sets = append(sets, func(r *engine.RoomConfig) { r.ImportantTTL = v })
		case "TIERS":
			tiers, ok := roomTiersOption(p)
			if ok {
				sets = append(sets, func(r *engine.RoomConfig) { r.Tiers = tiers })
			}
		case "PRESENCE-TTL":
			v := p.millis(0)
			if v != 0 && v < 1000 && !p.err {
				p.fail("ERR PRESENCE-TTL must be 0 or at least 1000 ms")
			}
			sets = append(sets, func(r *engine.RoomConfig) { r.PresenceTTL = v })
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	err := c.DB.RoomConfigure(key, func(r *engine.RoomConfig) {
		for _, s := range sets {
			s(r)
		}
	})
	if err != nil {
		c.Error(err)
		return
	}
	c.W.OK()
}

func roomInfo(c *Ctx) {
	info, ok, err := c.DB.RoomInfoOf(c.Args[1])
	switch {
	case err != nil:
		c.Error(err)
		return
	case !ok:
		c.W.Null()
		return
	}
	writePairs(c.W, []string{"messages", "important", "nseq", "iseq", "first-nseq", "first-iseq", "epoch",
		"pullers", "online", "uv", "retry-after", "max-messages", "important-max", "important-ttl", "presence-ttl"},
		[]int64{info.Messages, info.Important, int64(info.NSeq), int64(info.ISeq), int64(info.FirstNSeq),
			int64(info.FirstISeq), info.Epoch, int64(info.Blocked), int64(info.Online), info.UV, info.Interval,
			info.Limits.MaxMessages,
			info.Limits.ImportantMax, info.Limits.ImportantTTL, info.Limits.PresenceTTL})
}

// roomInfoSection is INFO room.
var roomInfoSection = InfoSection{Name: "room", Title: "Room", Fields: func(e *engine.Engine, add func(string, any)) {
	s := e.RoomStats()
	add("room_keys", s.Keys)
	add("room_online", s.Online)
	add("room_heartbeats", s.Heartbeats)
	add("room_published", s.Published)
	add("room_published_important", s.PublishedImportant)
	add("room_pulls", s.Pulls)
	add("room_delivered", s.Delivered)
	add("room_pulls_with_gap", s.Gapped)
	add("room_pulls_held", s.Held)
	add("room_replies_saved", s.Saved)
	add("room_messages", s.Messages)
	add("room_pullers", s.Pullers)
}}

func roomHeartbeat(c *Ctx) {
	n, err := c.DB.RoomHeartbeat(c.Args[1], c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(n))
}

func roomLeave(c *Ctx) {
	n, err := c.DB.RoomLeave(c.Args[1], c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(n))
}

func roomOnline(c *Ctx) {
	n, err := c.DB.RoomOnline(c.Args[1])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(n))
}

func roomIsOnline(c *Ctx) {
	on, err := c.DB.RoomIsOnline(c.Args[1], c.Args[2:])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Array(len(on))
	for _, o := range on {
		c.W.Int(b2i(o))
	}
}

func roomMembers(c *Ctx) {
	cursor, count := uint64(0), int64(10)
	p := c.options(2)
	for p.next() {
		switch p.name {
		case "CURSOR":
			v := p.value()
			n, ok := parseCursor(v)
			if !ok && !p.err {
				p.fail("ERR invalid cursor")
			}
			cursor = n
		case "COUNT":
			count = p.positive()
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	next, uids, err := c.DB.RoomMembers(c.Args[1], cursor, int(min(count, math.MaxInt32)))
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Array(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.Array(len(uids))
	for _, u := range uids {
		c.W.BulkString(u)
	}
}

func roomUV(c *Ctx) {
	window := int64(0)
	p := c.options(2)
	for p.next() {
		switch p.name {
		case "WINDOW":
			window = p.millis(1)
		default:
			p.unknown()
		}
	}
	if p.err {
		return
	}
	n, err := c.DB.RoomUV(c.Args[1], window)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(n)
}

// writeRoomConfig is ROOM.CONFIG's reply: the limits in force and the
// flow-control tiers ("online interval ..." pairs, "" for none).
func writeRoomConfig(c *Ctx, info engine.RoomInfo) {
	w := c.W
	w.Map(5)
	for _, f := range []struct {
		name string
		v    int64
	}{{"max-messages", info.Limits.MaxMessages}, {"important-max", info.Limits.ImportantMax},
		{"important-ttl", info.Limits.ImportantTTL}, {"presence-ttl", info.Limits.PresenceTTL}} {
		w.BulkString(f.name)
		w.Int(f.v)
	}
	w.BulkString("tiers")
	w.BulkString(engine.FormatRoomTiers(info.Tiers))
}

// roomTiersOption reads TIERS' value: NONE (no flow control in this room),
// DEFAULT (the server's room-tiers), or pairs of online count and interval.
func roomTiersOption(p *optionParser) ([]engine.RoomTier, bool) {
	v := p.value()
	if p.err {
		return nil, false
	}
	switch strings.ToUpper(string(v)) {
	case "NONE":
		return []engine.RoomTier{}, true
	case "DEFAULT":
		return nil, true
	}
	words := []string{string(v)}
	for p.i < len(p.args) {
		if _, ok := engine.ParseInt(p.args[p.i]); !ok {
			break
		}
		words = append(words, string(p.args[p.i]))
		p.i++
	}
	tiers, err := engine.ParseRoomTiers(words)
	if err != nil {
		p.fail(err.Error())
		return nil, false
	}
	return tiers, true
}
