package engine

// ROOM keys in the keyspace: publishing and pulling messages, the
// configuration, their change records, and the key's one scheduler entry,
// at the moment the oldest important message outlives its TTL. A PUB
// signals the key ready, and ServeBlocked hands every long-polling PULL of
// the room its reply in one pass.

// roomEngine is ROOM's per-engine state (family.go): the last epoch handed
// out and what INFO room reports.
type roomEngine struct {
	keys      int
	lastEpoch int64
	totals    roomTotals

	published, publishedImportant, pulls, delivered, gapped, heartbeats int64
	held, saved                                                         int64
}

var roomState = newFamilyState[roomEngine]()

func (st *roomEngine) resetStats() {
	st.published, st.publishedImportant, st.pulls, st.delivered, st.gapped, st.heartbeats = 0, 0, 0, 0, 0, 0
	st.held, st.saved = 0, 0
}

// nextEpoch names a new room: the time in ms, above every epoch this
// engine handed out, so a room deleted and made again in the same
// millisecond still gets another.
func (st *roomEngine) nextEpoch(now int64) int64 {
	st.lastEpoch = max(now, st.lastEpoch+1)
	return st.lastEpoch
}

// roomDefaults are the server's room-* settings (engine Limits).
func (e *Engine) roomDefaults() RoomDefaults {
	return RoomDefaults{MaxMessages: e.limits.RoomMaxMessages, ImportantMax: e.limits.RoomImportantMax,
		ImportantTTL: e.limits.RoomImportantTTL, PresenceTTL: e.limits.RoomPresenceTTL}
}

// limits are the room's settings in force: its own, else the server's.
func (r *Room) limits(d RoomDefaults) RoomDefaults {
	if r.conf.MaxMessages > 0 {
		d.MaxMessages = r.conf.MaxMessages
	}
	if r.conf.ImportantMax > 0 {
		d.ImportantMax = r.conf.ImportantMax
	}
	if r.conf.ImportantTTL > 0 {
		d.ImportantTTL = r.conf.ImportantTTL
	}
	if r.conf.PresenceTTL > 0 {
		d.PresenceTTL = r.conf.PresenceTTL
	}
	return d
}

// roomWrite looks key up for a writing ROOM command, returning the stored
// key name too; create makes an empty room, with a new epoch, when the key
// is absent.
func (db *DB) roomWrite(key []byte, create bool) (string, *Room, error) {
	en, found := db.find(key)
	k := str(key)
	if !found {
		if !create {
			return "", nil, nil
		}
		r := newRoom(roomState.of(db.e).nextEpoch(db.e.now))
		k = str(key)
		db.Set(key, r, true)
		return k, r, nil
	}
	r, ok := en.obj.(*Room)
	if !ok {
		return "", nil, ErrWrongType
	}
	db.touch(en.rec)
	return k, r, nil
}

// roomRead looks key up for a reading ROOM command, first dropping the
// important messages whose TTL ended (as the scheduler entry would at this
// instant), so that what it reads is what the room holds now.
func (db *DB) roomRead(key []byte) (*Room, error) {
	en, found := db.find(key)
	k := str(key)
	if !found {
		db.e.stats.KeyspaceMisses++
		return nil, nil
	}
	r, ok := en.obj.(*Room)
	if !ok {
		return nil, ErrWrongType
	}
	db.e.stats.KeyspaceHits++
	db.touch(en.rec)
	db.roomCatchUp(k, r)
	return r, nil
}

// roomCatchUp applies what came due by now before the scheduler entry
// fires: important messages past their TTL go, users past the presence
// TTL go offline.
func (db *DB) roomCatchUp(k string, r *Room) {
	l := r.limits(db.e.roomDefaults())
	now := db.e.now
	if r.important.len() > 0 && r.important.oldest().at+l.ImportantTTL <= now {
		key := bytesOf(k)
		db.enforceRoom(key, r)
		db.modified(key)
	}
	if s := r.presence.nextSweep(l.PresenceTTL); s != 0 && s <= now {
		r.counted(-r.presence.sweep(now, l.PresenceTTL), 0)
	}
	if r.flow.endHolds(now) {
		db.signalReady(bytesOf(k)) // the held pulls are served now
	}
	db.armRoom(k, r)
}

// roomDone ends a write: the value record, WATCH, the scheduler entry and
// the ready signal for long-polling pullers.
func (db *DB) roomDone(k string, key []byte, r *Room) {
	db.e.sink.PutValue(db.id, key, TypeRoom, r.appendMeta(db.e.recordBuf[:0]))
	db.modified(key)
	db.armRoom(k, r)
	db.signalReady(key)
}

// enforce drops what the room's limits no longer allow: the oldest normal
// messages past MaxMessages, the oldest important ones past ImportantMax or
// older than ImportantTTL; it deletes their records.
func (db *DB) enforceRoom(key []byte, r *Room) {
	l := r.limits(db.e.roomDefaults())
	drop := func(kind byte, run *msgRun) {
		seq, m := run.drop()
		r.counted(0, -1)
		r.bytes -= len(m.payload)
		db.e.recordBuf = roomItemKey(db.e.recordBuf[:0], kind, seq)
		db.e.sink.DeleteItem(db.id, key, db.e.recordBuf)
	}
	for int64(r.normal.len()) > l.MaxMessages {
		drop(roomItemNormal, &r.normal)
	}
	for r.important.len() > 0 &&
		(int64(r.important.len()) > l.ImportantMax || r.important.oldest().at+l.ImportantTTL <= db.e.now) {
		drop(roomItemImportant, &r.important)
	}
}

// armRoom points the key's scheduler entry at the earliest of the oldest
// important message's TTL end and the oldest presence bucket's sweep.
func (db *DB) armRoom(k string, r *Room) {
	l := r.limits(db.e.roomDefaults())
	want := int64(0)
	if r.important.len() > 0 {
		want = r.important.oldest().at + l.ImportantTTL
	}
	if s := r.presence.nextSweep(l.PresenceTTL); s != 0 && (want == 0 || s < want) {
		want = s
	}
	if s := r.flow.nextHoldEnd(); s != 0 && (want == 0 || s < want) {
		want = s
	}
	if want != 0 {
		want = max(want, db.e.now+1)
	}
	if want == r.armed {
		return
	}
	db.disarmRoom(k, r)
	if want != 0 {
		r.armed = want
		db.e.schedule(Timer{When: want, Kind: timerRoom, DB: uint8(db.phys), Key: k})
	}
}

func (db *DB) disarmRoom(k string, r *Room) {
	if r.armed != 0 {
		db.e.unschedule(Timer{When: r.armed, Kind: timerRoom, DB: uint8(db.phys), Key: k})
		r.armed = 0
	}
}

var timerRoom TimerKind

func init() { timerRoom = registerTimerKind("room", (*Engine).fireRoom) }

// fireRoom drops the important messages whose TTL ended and sweeps
// presence, then re-aims the entry.
func (e *Engine) fireRoom(t Timer) {
	db := e.timerDB(t)
	k := t.Key
	r, ok := db.rawObject(bytesOf(k)).(*Room)
	if !ok || r.armed != t.When {
		return
	}
	r.armed = 0
	db.roomCatchUp(k, r)
}

// attached and detached make a ROOM value key-bound (family.go).
func (r *Room) attached(db *DB, k string) {
	st := roomState.of(db.e)
	st.keys++
	st.lastEpoch = max(st.lastEpoch, r.epoch)
	r.finishLoad()
	r.joinTotals(&st.totals)
	db.armRoom(k, r)
}

func (r *Room) detached(db *DB, k string) {
	roomState.of(db.e).keys--
	r.leaveTotals()
	db.disarmRoom(k, r)
}

// RoomPub publishes a message (ROOM.PUB) and returns its sequence number.
func (db *DB) RoomPub(key, payload []byte, important bool) (uint64, error) {
	k, r, err := db.roomWrite(key, true)
	if err != nil {
		return 0, err
	}
	kind, run := byte(roomItemNormal), &r.normal
	st := roomState.of(db.e)
	st.published++
	if important {
		kind, run = roomItemImportant, &r.important
		st.publishedImportant++
	}
	m := roomMsg{at: db.e.now, payload: string(payload)}
	seq := run.push(m)
	r.counted(0, 1)
	r.bytes += len(m.payload)
	db.e.recordBuf = roomItemKey(db.e.recordBuf[:0], kind, seq)
	item := len(db.e.recordBuf)
	db.e.recordBuf = encodeRoomMsg(db.e.recordBuf, &m)
	db.e.sink.PutItem(db.id, key, db.e.recordBuf[:item], db.e.recordBuf[item:])
	db.enforceRoom(key, r)
	db.roomDone(k, key, r)
	return seq, nil
}

// RoomPullArgs are a PULL's cursors and options. A cursor is the last
// sequence number the reader has; Latest ("$") starts from now.
type RoomPullArgs struct {
	NSeq, ISeq       uint64
	NLatest, ILatest bool
	Count            int
	Epoch            int64
	HasEpoch         bool
	UID              []byte // counted among the room's unique viewers
}

// RoomMessage is a message a PULL returns.
type RoomMessage struct {
	Important bool
	Seq       uint64
	Payload   string
	At        int64
}

// RoomPullResult is a PULL's reply: the cursors to send next, how many
// normal messages the reader missed (they left the ring), the room's epoch
// (0: no room), and the messages, important first.
type RoomPullResult struct {
	NSeq, ISeq uint64
	Gap        uint64
	Epoch      int64
	Messages   []RoomMessage
}

// RoomPull reads the messages after the cursors (ROOM.PULL). A cursor from
// another epoch (EPOCH names it) reads the room from its start; the reply's
// epoch tells the reader.
func (db *DB) RoomPull(key []byte, a RoomPullArgs) (RoomPullResult, error) {
	r, err := db.roomRead(key)
	if err != nil {
		return RoomPullResult{}, err
	}
	st := roomState.of(db.e)
	st.pulls++
	if r == nil {
		res := RoomPullResult{NSeq: a.NSeq, ISeq: a.ISeq}
		if a.NLatest {
			res.NSeq = 0
		}
		if a.ILatest {
			res.ISeq = 0
		}
		return res, nil
	}
	if a.UID != nil {
		db.seeUsers(key, r, [][]byte{a.UID})
	}
	if a.HasEpoch && a.Epoch != r.epoch {
		a.NSeq, a.ISeq = 0, 0
	}
	if a.NLatest {
		a.NSeq = r.normal.last
	}
	if a.ILatest {
		a.ISeq = r.important.last
	}
	res := RoomPullResult{NSeq: a.NSeq, ISeq: a.ISeq, Epoch: r.epoch}
	left := a.Count
	// Important first.
	if run := &r.important; a.ISeq < run.last {
		seq := max(a.ISeq+1, run.first())
		for ; seq <= run.last && left > 0; seq++ {
			m := run.at(seq)
			res.Messages = append(res.Messages, RoomMessage{Important: true, Seq: seq, Payload: m.payload, At: m.at})
			left--
		}
		res.ISeq = seq - 1
	}
	if run := &r.normal; a.NSeq < run.last && left > 0 {
		seq := a.NSeq + 1
		if first := run.first(); seq < first {
			res.Gap = first - seq
			st.gapped++
			seq = first
		}
		for ; seq <= run.last && left > 0; seq++ {
			m := run.at(seq)
			res.Messages = append(res.Messages, RoomMessage{Seq: seq, Payload: m.payload, At: m.at})
			left--
		}
		res.NSeq = seq - 1
	}
	st.delivered += int64(len(res.Messages))
	return res, nil
}

// RoomConfigure changes a room's settings, making the room when it is
// absent, and applies them at once.
func (db *DB) RoomConfigure(key []byte, set func(*RoomConfig)) error {
	k, r, err := db.roomWrite(key, true)
	if err != nil {
		return err
	}
	set(&r.conf)
	db.enforceRoom(key, r)
	db.roomDone(k, key, r)
	return nil
}

// RoomInfo is ROOM.INFO: what the room holds, its counters and epoch, the
// settings in force, and how many pullers wait on it.
type RoomInfo struct {
	Messages, Important  int64
	NSeq, ISeq           uint64 // the last sequence numbers
	FirstNSeq, FirstISeq uint64 // the oldest held (last+1 when none)
	Epoch                int64
	Online               int
	UV                   int64
	Interval             int64 // the flow-control interval in force (0: none)
	Tiers                []RoomTier
	Limits               RoomDefaults
	Conf                 RoomConfig
	Blocked              int
}

// RoomInfoOf describes a room; ok is false when there is none.
func (db *DB) RoomInfoOf(key []byte) (info RoomInfo, ok bool, err error) {
	r, err := db.roomRead(key)
	if r == nil || err != nil {
		return info, false, err
	}
	info = RoomInfo{Messages: int64(r.normal.len()), Important: int64(r.important.len()),
		NSeq: r.normal.last, ISeq: r.important.last, FirstNSeq: r.normal.first(), FirstISeq: r.important.first(),
		Epoch: r.epoch, Online: r.presence.online(), UV: r.uv.count(db.e.now, 0),
		Interval: tierInterval(db.roomTiers(r), r.presence.online()), Tiers: db.roomTiers(r), Limits: r.limits(db.e.roomDefaults()), Conf: r.conf,
		Blocked: len(db.e.waiters[dbKey{db.id, str(key)}])}
	return info, true, nil
}

// RoomStats are the figures of INFO room.
type RoomStats struct {
	Keys                                                    int
	Online                                                  int64 // users online, every room summed
	Published, PublishedImportant, Pulls, Delivered, Gapped int64
	Heartbeats                                              int64 // users in heartbeats
	// Held counts pulls flow control held; Saved the replies it saved:
	// the messages beyond the first in a reply that ended a hold.
	Held, Saved int64
	// Messages are the messages stored, normal and important, every room
	// summed; Pullers the clients blocked in ROOM.PULL.
	Messages, Pullers int64
}

// RoomStats gathers INFO room's figures from running totals and the keys
// clients wait on: INFO costs the same with a million rooms as with one.
func (e *Engine) RoomStats() RoomStats {
	st := roomState.of(e)
	s := RoomStats{Keys: st.keys, Published: st.published, PublishedImportant: st.publishedImportant,
		Pulls: st.pulls, Delivered: st.delivered, Gapped: st.gapped, Heartbeats: st.heartbeats,
		Held: st.held, Saved: st.saved, Online: st.totals.online, Messages: st.totals.messages}
	for wk, list := range e.waiters {
		if db := e.dbs[wk.db]; db.bound != nil {
			if b, _ := db.bound.Get(wk.key); b != nil {
				if _, ok := b.(*Room); ok {
					s.Pullers += int64(len(list))
				}
			}
		}
	}
	return s
}

// RoomHeartbeat marks users online (ROOM.HEARTBEAT), making the room when
// it is absent, and returns how many are online.
func (db *DB) RoomHeartbeat(key []byte, uids [][]byte) (int, error) {
	k, r, err := db.roomWrite(key, true)
	if err != nil {
		return 0, err
	}
	db.roomCatchUp(k, r)
	sec := uint32(db.e.now / 1000)
	for _, uid := range uids {
		if r.presence.heartbeat(uid, sec) {
			r.counted(1, 0)
		}
	}
	roomState.of(db.e).heartbeats += int64(len(uids))
	db.seeUsers(key, r, uids)
	db.modified(key)
	db.armRoom(k, r)
	return r.presence.online(), nil
}

// RoomLeave marks users offline (ROOM.LEAVE) and returns how many are
// online.
func (db *DB) RoomLeave(key []byte, uids [][]byte) (int, error) {
	r, err := db.roomRead(key)
	if r == nil || err != nil {
		return 0, err
	}
	for _, uid := range uids {
		if r.presence.leave(uid) {
			r.counted(-1, 0)
		}
	}
	return r.presence.online(), nil
}

// RoomOnline is how many users are online (ROOM.ONLINE).
func (db *DB) RoomOnline(key []byte) (int, error) {
	r, err := db.roomRead(key)
	if r == nil || err != nil {
		return 0, err
	}
	return r.presence.online(), nil
}

// RoomIsOnline reports, for each user, whether it is online (ROOM.ISONLINE).
func (db *DB) RoomIsOnline(key []byte, uids [][]byte) ([]bool, error) {
	out := make([]bool, len(uids))
	r, err := db.roomRead(key)
	if r == nil || err != nil {
		return out, err
	}
	ttl := r.limits(db.e.roomDefaults()).PresenceTTL
	for i, uid := range uids {
		out[i] = r.presence.isOnline(uid, db.e.now, ttl)
	}
	return out, nil
}

// RoomMembers lists online users from cursor (ROOM.MEMBERS), SCAN style.
func (db *DB) RoomMembers(key []byte, cursor uint64, count int) (uint64, []string, error) {
	r, err := db.roomRead(key)
	if r == nil || err != nil {
		return 0, nil, err
	}
	next, out := r.presence.members(cursor, count, db.e.now, r.limits(db.e.roomDefaults()).PresenceTTL)
	return next, out, nil
}

// RoomUV counts the room's unique viewers (ROOM.UV): ever, or within the
// last window ms when window > 0.
func (db *DB) RoomUV(key []byte, window int64) (int64, error) {
	r, err := db.roomRead(key)
	if r == nil || err != nil {
		return 0, err
	}
	return r.uv.count(db.e.now, window), nil
}
