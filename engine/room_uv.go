package engine

// Unique viewers: the distinct users a room has seen, by HEARTBEAT or by
// PULL UID. The total is the UV counter (uv.go): exact up to uv-exact-max,
// then a HyperLogLog fed as PFADD feeds one. It is persisted within the
// room's records: one item record per member while exact ('u' and the
// member), the counter's sketch once approximate ('h'). The sliding window
// (ROOM.UV WINDOW ms) keeps one counter per minute, merged on read; those
// are soft state like presence, counting what the server saw since it
// started.

const (
	roomItemUVMember = 'u'
	roomItemUVSketch = 'h'
	roomUVMinutes    = 24 * 60 // the longest window kept
)

// roomUV is a room's unique counters.
type roomUV struct {
	total   *UV
	minutes []uvMinute // oldest first
}

type uvMinute struct {
	minute int64 // unix ms / 60,000
	uv     *UV
}

// seeUsers counts users in the room's unique counters, recording what
// changed in the total.
func (db *DB) seeUsers(key []byte, r *Room, uids [][]byte) {
	u := &r.uv
	if u.total == nil {
		u.total = newUV(&db.e.limits)
	}
	sink := db.e.sink
	if t := u.total; t.members != nil {
		for _, m := range uids {
			if _, _, created := t.members.Insert(str(m)); created {
				db.e.recordBuf = append(append(db.e.recordBuf[:0], roomItemUVMember), m...)
				sink.PutItem(db.id, key, db.e.recordBuf, nil)
			}
		}
		if t.overLimit() {
			t.toApprox()
			sink.DeleteItemRange(db.id, key, []byte{roomItemUVMember}, []byte{roomItemUVMember + 1})
			sink.PutItem(db.id, key, []byte{roomItemUVSketch}, t.blob)
		}
	} else if raiseUV(t, uids) {
		sink.PutItem(db.id, key, []byte{roomItemUVSketch}, t.blob)
	}
	now := db.e.now / 60_000
	if n := len(u.minutes); n == 0 || u.minutes[n-1].minute != now {
		u.minutes = append(u.minutes, uvMinute{minute: now, uv: newUV(&db.e.limits)})
		for len(u.minutes) > 1 && u.minutes[0].minute <= now-roomUVMinutes {
			u.minutes = u.minutes[1:]
		}
	}
	m := u.minutes[len(u.minutes)-1].uv
	if m.members != nil {
		for _, id := range uids {
			m.members.Insert(str(id))
		}
		if m.overLimit() {
			m.toApprox()
		}
	} else {
		raiseUV(m, uids)
	}
}

// raiseUV adds members to an approximate counter; it reports whether a
// register rose.
func raiseUV(u *UV, members [][]byte) bool {
	regs := u.sketch()[hllHeaderLen:]
	changed := false
	for _, m := range members {
		i, c := hllPatLen(m)
		if denseRaise(regs, i, c) == 1 {
			changed = true
		}
	}
	if changed {
		hllInvalidate(u.sketch())
	}
	return changed
}

// count is the room's unique viewers: ever, or within the last window ms
// (minutes overlapping the window count whole).
func (u *roomUV) count(now, window int64) int64 {
	if window <= 0 {
		if u.total == nil {
			return 0
		}
		return u.total.Count()
	}
	from := (now - window) / 60_000
	var us []*UV
	exact := true
	for _, m := range u.minutes {
		if m.minute >= from {
			us = append(us, m.uv)
			exact = exact && m.uv.members != nil
		}
	}
	return uvUnionCount(us, exact)
}

// loadUVItem restores the total from its records.
func (u *roomUV) loadUVItem(item, val []byte, lim *Limits) error {
	if u.total == nil {
		u.total = newUV(lim)
	}
	switch {
	case item[0] == roomItemUVMember && u.total.members != nil:
		u.total.members.Insert(string(item[1:]))
	case item[0] == roomItemUVSketch && len(item) == 1 && len(val) == uvBlobHead+hllDenseLen:
		u.total.members, u.total.blob = nil, append([]byte(nil), val...)
	default:
		return errBadRoomRecord
	}
	return nil
}

func (u *roomUV) clone() roomUV {
	if u.total == nil {
		return roomUV{}
	}
	return roomUV{total: u.total.Clone().(*UV)}
}

func (u *roomUV) memoryUsage() int {
	n := 0
	if u.total != nil {
		n += u.total.MemoryUsage()
	}
	for _, m := range u.minutes {
		n += m.uv.MemoryUsage()
	}
	return n
}

// persistUV writes the total's records.
func (u *roomUV) persist(sink ChangeSink, db int, key []byte) {
	if u.total == nil {
		return
	}
	if u.total.members == nil {
		sink.PutItem(db, key, []byte{roomItemUVSketch}, u.total.blob)
		return
	}
	u.total.members.ForEach(func(m string, _ *struct{}) bool {
		sink.PutItem(db, key, append([]byte{roomItemUVMember}, m...), nil)
		return true
	})
}
