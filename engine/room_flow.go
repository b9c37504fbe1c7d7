package engine

import (
	"container/heap"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Flow control (seed 002): in a big room, a long-poller that comes back
// sooner than its tier's interval after its previous reply is held until
// the interval passes, never rejected (rejected long-pollers retry faster).
// A tier applies while more users than its count are online; the reply's
// retry-after is the interval in force. A held PULL is answered when its
// hold ends, with every message that arrived meanwhile in one reply: the
// replies it saved are counted in INFO room.
//
// The time of each user's last reply is soft state, kept in two
// generations swapped every longest interval, so an entry lives between
// one and two of them and the maps never hold users long gone.

// RoomTier is one flow-control tier.
type RoomTier struct {
	Online   int64 // applies while more users than this are online
	Interval int64 // ms between a user's replies
}

// ParseRoomTiers reads tiers as pairs "online interval-ms ...", in any
// order; they are returned by online count.
func ParseRoomTiers(words []string) ([]RoomTier, error) {
	if len(words)%2 != 0 {
		return nil, errors.New("ERR TIERS takes pairs of online count and interval in ms")
	}
	var tiers []RoomTier
	for i := 0; i < len(words); i += 2 {
		on, err1 := strconv.ParseInt(words[i], 10, 64)
		iv, err2 := strconv.ParseInt(words[i+1], 10, 64)
		if err1 != nil || err2 != nil || on < 0 || iv < 1 {
			return nil, errors.New("ERR a tier is an online count (0 or more) and an interval (1 ms or more)")
		}
		tiers = append(tiers, RoomTier{Online: on, Interval: iv})
	}
	slices.SortFunc(tiers, func(a, b RoomTier) int { return int(min(max(a.Online-b.Online, -1), 1)) })
	for i := 1; i < len(tiers); i++ {
		if tiers[i].Online == tiers[i-1].Online {
			return nil, errors.New("ERR two tiers for the same online count")
		}
	}
	return tiers, nil
}

// FormatRoomTiers writes tiers as ParseRoomTiers reads them.
func FormatRoomTiers(tiers []RoomTier) string {
	var b strings.Builder
	for i, t := range tiers {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(t.Online, 10))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(t.Interval, 10))
	}
	return b.String()
}

// interval is the tier interval in force for online users (0: none).
func tierInterval(tiers []RoomTier, online int) int64 {
	iv := int64(0)
	for _, t := range tiers {
		if int64(online) > t.Online {
			iv = t.Interval
		}
	}
	return iv
}

// roomFlow is a room's flow-control state.
type roomFlow struct {
	cur, prev map[string]int64 // user -> unix ms of its last reply
	swapAt    int64            // when cur becomes prev
	holds     holdHeap         // the ends of the holds in progress
}

// lastReply is when user last got a reply (0: not within the kept time).
func (f *roomFlow) lastReply(uid []byte) int64 {
	if t, ok := f.cur[string(uid)]; ok {
		return t
	}
	return f.prev[string(uid)]
}

// replied notes a reply to user at now; keep is the longest interval.
func (f *roomFlow) replied(uid []byte, now, keep int64) {
	if now >= f.swapAt {
		f.prev, f.cur = f.cur, nil
		if now >= f.swapAt+keep {
			f.prev = nil // both generations are older than any interval
		}
		f.swapAt = now + keep
	}
	if f.cur == nil {
		f.cur = map[string]int64{}
	}
	f.cur[string(uid)] = now
}

func (f *roomFlow) memoryUsage() int { return (len(f.cur) + len(f.prev)) * 48 }

type holdHeap []int64

func (h holdHeap) Len() int           { return len(h) }
func (h holdHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h holdHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *holdHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *holdHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// nextHoldEnd is the earliest hold end (0: none).
func (f *roomFlow) nextHoldEnd() int64 {
	if len(f.holds) == 0 {
		return 0
	}
	return f.holds[0]
}

// endHolds drops the holds that ended by now; it reports whether any did.
func (f *roomFlow) endHolds(now int64) bool {
	ended := false
	for len(f.holds) > 0 && f.holds[0] <= now {
		heap.Pop(&f.holds)
		ended = true
	}
	return ended
}

// RoomHold is what flow control says of a PULL: the interval in force
// (retry-after) and, when the PULL must wait, until when.
type RoomHold struct {
	Interval int64
	Until    int64 // unix ms; 0: not held
}

// roomTiers are the tiers in force: the room's, else the server's.
func (db *DB) roomTiers(r *Room) []RoomTier {
	if r.conf.Tiers != nil {
		return r.conf.Tiers
	}
	return db.e.limits.RoomTiers
}

// RoomFlow decides whether a PULL by uid must be held, and when it is,
// arms the room's entry at its end and counts it.
func (db *DB) RoomFlow(key, uid []byte) (RoomHold, error) {
	en, found := db.find(key)
	k := str(key)
	if !found {
		return RoomHold{}, nil
	}
	r, ok := en.obj.(*Room)
	if !ok {
		return RoomHold{}, ErrWrongType
	}
	iv := tierInterval(db.roomTiers(r), r.presence.online())
	h := RoomHold{Interval: iv}
	if iv == 0 || uid == nil {
		return h, nil
	}
	if last := r.flow.lastReply(uid); last != 0 && db.e.now < last+iv {
		h.Until = last + iv
		heap.Push(&r.flow.holds, h.Until)
		roomState.of(db.e).held++
		db.armRoom(k, r)
	}
	return h, nil
}

// RoomReplied notes that uid got a reply now, which carried n messages,
// after a hold when held.
func (db *DB) RoomReplied(key, uid []byte, n int, held bool) {
	en, found := db.find(key)
	if !found || uid == nil {
		return
	}
	r, ok := en.obj.(*Room)
	if !ok {
		return
	}
	keep := int64(0)
	for _, t := range db.roomTiers(r) {
		keep = max(keep, t.Interval)
	}
	if keep > 0 {
		r.flow.replied(uid, db.e.now, keep)
	}
	if held && n > 1 {
		roomState.of(db.e).saved += int64(n - 1)
	}
}
