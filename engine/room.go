package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Room is a ROOM key: one live chat room (seed 002). Every member reads the
// same message lists (read diffusion) with sequence cursors. Normal
// messages live in a ring of the newest MaxMessages; important ones
// (co-host signals, gift animations) in their own list, capped by count and
// age, which normal traffic never evicts. Each list numbers its messages
// from 1 with its own counter, so each holds a contiguous run of sequence
// numbers and a cursor finds its place by subtraction. The epoch names
// this incarnation of the room: a room deleted and made again has another,
// so a cursor from the old one is never read against the new one.
type Room struct {
	objHeader
	normal, important msgRun
	epoch             int64
	conf              RoomConfig
	presence          presence // room_presence.go; not persisted
	uv                roomUV   // room_uv.go
	flow              roomFlow // room_flow.go; not persisted
	armed             int64    // the When of the key's scheduler entry (0: none)
	lim               *Limits  // the engine's, for the unique counters (set by loadLimits)
	bytes             int      // payload bytes held
	// total is the engine's sum over every attached room (INFO room), kept
	// with the presence and the message runs; nil while the room is not
	// stored.
	total *roomTotals
}

// roomTotals are the users online and the messages held in every attached
// room.
type roomTotals struct{ online, messages int64 }

// joinTotals adds the room's users and messages to t, which then follows
// every change; leaveTotals takes them out again.
func (r *Room) joinTotals(t *roomTotals) {
	t.online += int64(r.presence.online())
	t.messages += r.nativeItems()
	r.total = t
}

func (r *Room) leaveTotals() {
	r.total.online -= int64(r.presence.online())
	r.total.messages -= r.nativeItems()
	r.total = nil
}

// counted adds to the totals, when the room is stored.
func (r *Room) counted(online, messages int) {
	if r.total != nil {
		r.total.online += int64(online)
		r.total.messages += int64(messages)
	}
}

// RoomConfig is a room's own settings (ROOM.CONFIG); 0 takes the server's
// default (room-max-messages, room-important-max, room-important-ttl,
// room-presence-ttl).
type RoomConfig struct {
	MaxMessages  int64
	ImportantMax int64
	ImportantTTL int64 // ms
	PresenceTTL  int64 // ms
	// Tiers are the room's flow-control tiers: nil follows the server's
	// room-tiers, empty holds no pull.
	Tiers []RoomTier
}

// RoomDefaults are the settings a room follows: its own, or the server's.
type RoomDefaults = RoomConfig

// roomMsg is one message.
type roomMsg struct {
	at      int64 // unix ms it was published
	payload string
}

// msgRun is a list of messages numbered first, first+1, ... last: a deque
// over a slice, taking from the front and adding at the back.
type msgRun struct {
	msgs     []roomMsg
	head     int    // msgs[head:] are live
	last     uint64 // the last sequence number handed out (0: none yet)
	loadNext uint64 // while loading: the sequence number the next record should have
}

func (r *msgRun) len() int { return len(r.msgs) - r.head }

// first is the sequence number of the oldest message held (last+1 when
// none is).
func (r *msgRun) first() uint64 { return r.last + 1 - uint64(r.len()) }

func (r *msgRun) push(m roomMsg) uint64 {
	r.msgs = append(r.msgs, m)
	r.last++
	return r.last
}

// drop removes the oldest message and returns its sequence number.
func (r *msgRun) drop() (uint64, roomMsg) {
	seq := r.first()
	m := r.msgs[r.head]
	r.msgs[r.head] = roomMsg{}
	r.head++
	if r.head > 32 && r.head*2 > len(r.msgs) {
		r.msgs = append(r.msgs[:0:0], r.msgs[r.head:]...)
		r.head = 0
	}
	return seq, m
}

func (r *msgRun) oldest() *roomMsg { return &r.msgs[r.head] }

// at returns the message of sequence number seq, which must be held.
func (r *msgRun) at(seq uint64) *roomMsg { return &r.msgs[r.head+int(seq-r.first())] }

func (r *msgRun) clone() msgRun {
	return msgRun{msgs: append([]roomMsg(nil), r.msgs[r.head:]...), last: r.last}
}

func newRoom(epoch int64) *Room { return &Room{epoch: epoch} }

// TypeRoom is the type of ROOM keys (TYPE reports "room"). Persisted: never
// renumber it.
const TypeRoom Type = 10

// Type is TypeRoom.
func (r *Room) Type() Type { return TypeRoom }

// Encoding names the structure OBJECT ENCODING reports.
func (r *Room) Encoding() string { return "msgring" }

// MemoryUsage estimates the value's heap bytes.
func (r *Room) MemoryUsage() int {
	return 256 + (cap(r.normal.msgs)+cap(r.important.msgs))*24 + r.bytes + r.presence.memoryUsage() +
		r.uv.memoryUsage() + r.flow.memoryUsage()
}

// Clone copies the messages, counters, epoch and configuration (COPY): the
// copy is the same room to a reader's cursors. Presence, soft state, is
// not copied: the copy's users come online with their heartbeats.
func (r *Room) Clone() Object {
	return &Room{normal: r.normal.clone(), important: r.important.clone(), epoch: r.epoch, conf: r.conf,
		bytes: r.bytes, uv: r.uv.clone()}
}

// The records: the value record holds the format, the epoch, both lists'
// last sequence numbers and the configuration; each message is an item
// record under 'n' (normal) or 'i' (important) and its sequence number,
// big-endian so that a list's records sort in its order, holding the time
// and the payload. Leaving the ring deletes the record.
const (
	roomItemNormal    = 'n'
	roomItemImportant = 'i'
	roomFormat        = 1
)

var errBadRoomRecord = errors.New("malformed room record")

func (r *Room) appendMeta(dst []byte) []byte {
	dst = append(dst, roomFormat)
	dst = binary.AppendVarint(dst, r.epoch)
	dst = binary.AppendUvarint(dst, r.normal.last)
	dst = binary.AppendUvarint(dst, r.important.last)
	dst = binary.AppendVarint(dst, r.conf.MaxMessages)
	dst = binary.AppendVarint(dst, r.conf.ImportantMax)
	dst = binary.AppendVarint(dst, r.conf.ImportantTTL)
	dst = binary.AppendVarint(dst, r.conf.PresenceTTL)
	// The tiers: -1 when the room follows the server's, else their count
	// and pairs.
	if r.conf.Tiers == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(r.conf.Tiers)))
	for _, t := range r.conf.Tiers {
		dst = binary.AppendVarint(dst, t.Online)
		dst = binary.AppendVarint(dst, t.Interval)
	}
	return dst
}

func decodeRoomMeta(b []byte) (*Room, error) {
	if len(b) < 1 || b[0] != roomFormat {
		return nil, errBadRoomRecord
	}
	rd := recordReader{p: b[1:]}
	r := &Room{}
	r.epoch = rd.varint()
	r.normal.last = rd.uvarint()
	r.important.last = rd.uvarint()
	r.conf.MaxMessages = rd.varint()
	r.conf.ImportantMax = rd.varint()
	r.conf.ImportantTTL = rd.varint()
	r.conf.PresenceTTL = rd.varint()
	if n := rd.varint(); n >= 0 && rd.err == nil {
		if n > int64(len(rd.p)) {
			return nil, errBadRoomRecord
		}
		r.conf.Tiers = make([]RoomTier, n)
		for i := range r.conf.Tiers {
			r.conf.Tiers[i] = RoomTier{Online: rd.varint(), Interval: rd.varint()}
		}
	}
	if rd.err != nil || len(rd.p) != 0 {
		return nil, errBadRoomRecord
	}
	return r, nil
}

func roomItemKey(dst []byte, kind byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, kind), seq)
}

func encodeRoomMsg(dst []byte, m *roomMsg) []byte {
	return append(binary.AppendVarint(dst, m.at), m.payload...)
}

// persist writes the value record and every message.
func (r *Room) persist(sink ChangeSink, db int, key []byte) {
	sink.PutValue(db, key, TypeRoom, r.appendMeta(nil))
	var buf []byte
	for _, l := range []struct {
		kind byte
		run  *msgRun
	}{{roomItemNormal, &r.normal}, {roomItemImportant, &r.important}} {
		for seq := l.run.first(); seq <= l.run.last; seq++ {
			buf = roomItemKey(buf[:0], l.kind, seq)
			item := len(buf)
			buf = encodeRoomMsg(buf, l.run.at(seq))
			sink.PutItem(db, key, buf[:item], buf[item:])
		}
	}
	r.uv.persist(sink, db, key)
}

func (r *Room) hasItems() bool { return true }

// loadLimits gives a loading room the engine's limits (uv-exact-max).
func (r *Room) loadLimits(l *Limits) { r.lim = l }

// loadItem adds one message at start-up. Items arrive in key order, so each
// list's messages arrive oldest first, after the value record.
func (r *Room) loadItem(item, val []byte) error {
	if len(item) > 0 && (item[0] == roomItemUVMember || item[0] == roomItemUVSketch) {
		if err := r.uv.loadUVItem(item, val, r.lim); err != nil {
			return fmt.Errorf("unique viewers item %q: %w", item, err)
		}
		return nil
	}
	if len(item) != 9 || item[0] != roomItemNormal && item[0] != roomItemImportant {
		return fmt.Errorf("item %q: %w", item, errBadRoomRecord)
	}
	seq := binary.BigEndian.Uint64(item[1:])
	at, n := binary.Varint(val)
	if n <= 0 || seq == 0 {
		return fmt.Errorf("message %d: %w", seq, errBadRoomRecord)
	}
	run := &r.normal
	if item[0] == roomItemImportant {
		run = &r.important
	}
	if run.loadNext != seq {
		// The first message, or one after a hole: the run starts here.
		r.bytes -= run.payloadBytes()
		run.msgs, run.head = run.msgs[:0], 0
	}
	run.msgs = append(run.msgs, roomMsg{at: at, payload: string(val[n:])})
	run.loadNext = seq + 1
	r.bytes += len(val) - n
	return nil
}

// finishLoad checks that each list's loaded messages end at its last
// sequence number, as every PUB writes the message with the value record
// that counts it; a list that does not is emptied rather than misnumbered.
func (r *Room) finishLoad() {
	for _, run := range []*msgRun{&r.normal, &r.important} {
		if run.loadNext != 0 && run.loadNext != run.last+1 {
			r.bytes -= run.payloadBytes()
			run.msgs, run.head = nil, 0
		}
		run.loadNext = 0
	}
}

func (r *msgRun) payloadBytes() int {
	n := 0
	for _, m := range r.msgs[r.head:] {
		n += len(m.payload)
	}
	return n
}

func init() {
	registerType(TypeRoom, "room", func(payload []byte) (Object, error) {
		r, err := decodeRoomMeta(payload)
		if err != nil {
			return nil, fmt.Errorf("room value record: %w", err)
		}
		return r, nil
	})
}
