package engine

import (
	"strconv"
	"time"
)

// Presence: who is online in a room, from heartbeats (seed 002: every 10 s
// per user, 15 million users in the largest room). A user is online until
// the presence TTL passes without a heartbeat. Expiry is coarse: time is cut
// into one-second buckets, each listing the users whose heartbeat fell in
// it; a user's own entry remembers its latest bucket. The room's one
// scheduler entry sweeps the oldest bucket once its users' TTL has passed,
// dropping those whose latest heartbeat is still that bucket's, so a user is
// dropped between TTL and TTL + 1 s after the last heartbeat, with no timer
// per user. Numeric ids (decimal, no leading zero, below 2^64) are kept as
// integers; any other id works too, as a string, at its cost. Presence is
// soft state: not persisted, rebuilt by heartbeats within one TTL.
type presence struct {
	ids     map[uint64]uint32 // numeric id -> second of its latest heartbeat
	names   map[string]uint32 // other ids
	buckets []presenceBucket  // oldest first
	head    int               // buckets[head:] are live
	swept   int               // entries of buckets[head] a sweep has done
}

type presenceBucket struct {
	sec   uint32
	ids   []uint64
	names []string
}

// packUID reads a numeric id: decimal digits, no leading zero (so that it
// prints back the same), within uint64.
func packUID(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 || b[0] == '0' && len(b) > 1 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

func (p *presence) online() int { return len(p.ids) + len(p.names) }

// bucket returns the bucket of second sec, the newest one or a new one.
func (p *presence) bucket(sec uint32) *presenceBucket {
	if n := len(p.buckets); n > p.head && p.buckets[n-1].sec == sec {
		return &p.buckets[n-1]
	}
	p.buckets = append(p.buckets, presenceBucket{sec: sec})
	return &p.buckets[len(p.buckets)-1]
}

// heartbeat marks uid online at second sec; it reports whether uid was
// not online before.
func (p *presence) heartbeat(uid []byte, sec uint32) bool {
	if id, ok := packUID(uid); ok {
		if p.ids == nil {
			p.ids = map[uint64]uint32{}
		}
		old, was := p.ids[id]
		if was && old == sec {
			return false
		}
		p.ids[id] = sec
		b := p.bucket(sec)
		b.ids = append(b.ids, id)
		return !was
	}
	if p.names == nil {
		p.names = map[string]uint32{}
	}
	old, was := p.names[string(uid)]
	if was && old == sec {
		return false
	}
	s := string(uid)
	p.names[s] = sec
	b := p.bucket(sec)
	b.names = append(b.names, s)
	return !was
}

// leave marks uid offline; it reports whether it was online.
func (p *presence) leave(uid []byte) bool {
	if id, ok := packUID(uid); ok {
		_, was := p.ids[id]
		delete(p.ids, id)
		return was
	}
	_, was := p.names[string(uid)]
	delete(p.names, string(uid))
	return was
}

// isOnline reports whether uid's latest heartbeat is within ttl ms of now.
func (p *presence) isOnline(uid []byte, now, ttl int64) bool {
	var sec uint32
	var ok bool
	if id, numeric := packUID(uid); numeric {
		sec, ok = p.ids[id]
	} else {
		sec, ok = p.names[string(uid)]
	}
	return ok && bucketEnd(sec)+ttl > now
}

// bucketEnd is the unix ms at which second sec ends.
func bucketEnd(sec uint32) int64 { return (int64(sec) + 1) * 1000 }

// nextSweep is when the oldest bucket's users' TTL has passed (0: none).
func (p *presence) nextSweep(ttl int64) int64 {
	if p.head == len(p.buckets) {
		return 0
	}
	return bucketEnd(p.buckets[p.head].sec) + ttl
}

// presenceSweepBudget bounds the entries one sweep looks at (and
// fireTimeBudget its time): a bucket of a million users goes in steps of
// under a millisecond under the engine lock
// (the room's scheduler entry, due again a millisecond later, resumes it),
// not in one stall of half a second (issue 36). An entry costs 430 ns in a
// map of a million (cache misses; go test -bench PresenceSweep ./engine).
// A user is then dropped later than its bucket allowed, by about 0.5 s per
// million users that went stale at once.
var presenceSweepBudget = 2048

// sweep drops the users whose latest heartbeat is more than ttl ms before
// now, bucket by bucket, looking at no more than presenceSweepBudget
// entries; it returns how many went offline. nextSweep says whether more
// is due.
func (p *presence) sweep(now, ttl int64) int {
	gone, budget, start := 0, presenceSweepBudget, time.Now()
	for p.head < len(p.buckets) && bucketEnd(p.buckets[p.head].sec)+ttl <= now {
		b := &p.buckets[p.head]
		for ; p.swept < len(b.ids)+len(b.names); p.swept++ {
			if budget == 0 || budget&63 == 0 && time.Since(start) >= fireTimeBudget {
				return gone
			}
			budget--
			if p.swept < len(b.ids) {
				id := b.ids[p.swept]
				if sec, ok := p.ids[id]; ok && sec == b.sec {
					delete(p.ids, id)
					gone++
				}
				continue
			}
			name := b.names[p.swept-len(b.ids)]
			if sec, ok := p.names[name]; ok && sec == b.sec {
				delete(p.names, name)
				gone++
			}
		}
		*b = presenceBucket{}
		p.head++
		p.swept = 0
	}
	if p.head == len(p.buckets) {
		p.buckets, p.head = p.buckets[:0], 0
	} else if p.head > 16 && p.head*2 > len(p.buckets) {
		p.buckets = append(p.buckets[:0:0], p.buckets[p.head:]...)
		p.head = 0
	}
	return gone
}

// members lists online users from cursor, SCAN style: the cursor names a
// bucket (its second, high 32 bits) and a place in it (low 32 bits); a
// user is listed from its latest bucket only, so one online for the whole
// scan is listed at least once (twice if it heartbeats into a bucket the
// scan has not reached). It stops after about count entries were looked
// at and returns the next cursor (0: done).
func (p *presence) members(cursor uint64, count int, now, ttl int64) (uint64, []string) {
	sec, at := uint32(cursor>>32), int(uint32(cursor))
	var out []string
	looked := 0
	for i := p.head; i < len(p.buckets); i++ {
		b := &p.buckets[i]
		if b.sec < sec {
			continue
		}
		if b.sec > sec {
			at = 0
		}
		if bucketEnd(b.sec)+ttl <= now {
			continue // its users are offline, only not swept yet
		}
		ids, names := len(b.ids), len(b.names)
		for ; at < ids+names; at++ {
			if looked >= count {
				return uint64(b.sec)<<32 | uint64(at), out
			}
			looked++
			if at < ids {
				if s, ok := p.ids[b.ids[at]]; ok && s == b.sec {
					out = append(out, strconv.FormatUint(b.ids[at], 10))
				}
			} else if s, ok := p.names[b.names[at-ids]]; ok && s == b.sec {
				out = append(out, b.names[at-ids])
			}
		}
		sec, at = b.sec+1, 0
	}
	return 0, out
}

// memoryUsage estimates presence's heap bytes: the maps' slots with their
// slack, and the buckets' entries.
func (p *presence) memoryUsage() int {
	n := len(p.ids)*26 + len(p.names)*48
	for _, b := range p.buckets[p.head:] {
		n += cap(b.ids)*8 + cap(b.names)*16
	}
	return n
}
