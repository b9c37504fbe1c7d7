package engine

import (
	"errors"
)

// Consumer-group errors, with Redis's texts.
var (
	ErrBusyGroup = errors.New("BUSYGROUP Consumer Group name already exists")
)

// invalidEntriesRead is Redis's SCG_INVALID_ENTRIES_READ.
const invalidEntriesRead = -1

// StreamDelivery is one entry a group read, claim or history read hands
// out; Fields is nil for a pending id whose entry is gone.
type StreamDelivery struct {
	ID     StreamID
	Fields [][]byte
}

// streamChanged records a change to a stream's groups. Redis signals the
// key modified (WATCH, tracking) only for changes to its entries, so
// group bookkeeping only counts as dirty.
func (db *DB) streamChanged(key []byte, touch bool) {
	if touch {
		db.modified(key)
		return
	}
	db.e.stats.Dirty++
}

func (db *DB) putGroup(key []byte, g *StreamGroup) {
	db.e.sink.PutItem(db.id, key, streamGroupItem(g.Name), streamGroupValue(g))
}

func (db *DB) putConsumer(key []byte, g *StreamGroup, c *StreamConsumer) {
	db.e.sink.PutItem(db.id, key, streamConsumerItem(g.Name, c.Name), streamConsumerValue(c))
}

func (db *DB) putPending(key []byte, g *StreamGroup, p *PendingEntry) {
	db.e.sink.PutItem(db.id, key, streamPendingItem(g.Name, p.ID), streamPendingValue(p))
}

func (db *DB) deletePending(key []byte, g *StreamGroup, p *PendingEntry) {
	g.pel.Delete(p)
	if p.Consumer != nil {
		p.Consumer.pel.Delete(p)
	}
	db.e.sink.DeleteItem(db.id, key, streamPendingItem(g.Name, p.ID))
}

// prefixEnd is the first byte string after every string starting with p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0xff, 0xff, 0xff, 0xff}
}

// XGroupCreate is XGROUP CREATE on a stream s (nil: created now, for
// MKSTREAM). last is nil for "$".
func (db *DB) XGroupCreate(key []byte, s *Stream, name []byte, last *StreamID, entriesRead int64) error {
	id := StreamID{}
	if last != nil {
		id = *last
	} else if s != nil {
		id = s.lastID
	}
	if s == nil {
		s = db.newStreamAt(key)
	}
	if s.Group(name) != nil {
		return ErrBusyGroup
	}
	g := newStreamGroup(string(name), id, entriesRead)
	s.groups.Set(g)
	db.putGroup(key, g)
	db.streamChanged(key, false)
	return nil
}

// XGroupSetID is XGROUP SETID; last nil is "$".
func (db *DB) XGroupSetID(key []byte, s *Stream, g *StreamGroup, last *StreamID, entriesRead int64) {
	if last != nil {
		g.LastID = *last
	} else {
		g.LastID = s.lastID
	}
	g.EntriesRead = entriesRead
	db.putGroup(key, g)
	db.streamChanged(key, false)
}

// XGroupDestroy removes a group with its consumers and PEL, and signals
// the key so XREADGROUP clients blocked on it get NOGROUP.
func (db *DB) XGroupDestroy(key []byte, s *Stream, g *StreamGroup) {
	s.groups.Delete(g)
	db.e.sink.DeleteItem(db.id, key, streamGroupItem(g.Name))
	for _, p := range []byte{streamItemConsumer, streamItemPending} {
		prefix := streamConsumerItem(g.Name, "")
		prefix[0] = p
		db.e.sink.DeleteItemRange(db.id, key, prefix, prefixEnd(prefix))
	}
	db.streamChanged(key, false)
	db.signalReady(key)
}

// XGroupCreateConsumer adds a consumer; false when it exists.
func (db *DB) XGroupCreateConsumer(key []byte, g *StreamGroup, name []byte) bool {
	if g.Consumer(name) != nil {
		return false
	}
	db.createConsumer(key, g, name)
	return true
}

// createConsumer adds a consumer, with its event.
func (db *DB) createConsumer(key []byte, g *StreamGroup, name []byte) *StreamConsumer {
	c := g.getOrAddConsumer(string(name), db.e.now)
	db.putConsumer(key, g, c)
	db.streamChanged(key, false)
	db.e.notify(NotifyStream, "xgroup-createconsumer", db.id, key)
	return c
}

// seeConsumer looks a consumer up, refreshing its seen time, or creates it.
func (db *DB) seeConsumer(key []byte, g *StreamGroup, name []byte) *StreamConsumer {
	c := g.Consumer(name)
	if c == nil {
		return db.createConsumer(key, g, name)
	}
	if c.SeenTime != db.e.now {
		c.SeenTime = db.e.now
		db.putConsumer(key, g, c)
	}
	return c
}

// XGroupDelConsumer removes a consumer and its pending entries, returning
// how many it had; -1 when there is no such consumer.
func (db *DB) XGroupDelConsumer(key []byte, g *StreamGroup, name []byte) int {
	c := g.Consumer(name)
	if c == nil {
		return -1
	}
	n := c.pel.Len()
	var ps []*PendingEntry
	c.pel.Scan(func(p *PendingEntry) bool { ps = append(ps, p); return true })
	for _, p := range ps {
		db.deletePending(key, g, p)
	}
	g.consumers.Delete(c)
	db.e.sink.DeleteItem(db.id, key, streamConsumerItem(g.Name, c.Name))
	db.streamChanged(key, false)
	return n
}

// rangeHasTombstones is Redis's streamRangeHasTombstones from start on.
func (s *Stream) rangeHasTombstones(start StreamID) bool {
	if s.Len() == 0 || s.maxDeleted.IsZero() {
		return false
	}
	if s.maxDeleted.Less(s.FirstID()) {
		return false
	}
	return !s.maxDeleted.Less(start)
}

// estimateEntriesRead is Redis's streamEstimateDistanceFromFirstEverEntry:
// how many entries precede id (inclusive), or -1 when unknowable.
func (s *Stream) estimateEntriesRead(id StreamID) int64 {
	if s.entriesAdded == 0 {
		return 0
	}
	if s.Len() == 0 && !s.lastID.Less(id) {
		return int64(s.entriesAdded)
	}
	switch id.Compare(s.lastID) {
	case 0:
		return int64(s.entriesAdded)
	case 1:
		return invalidEntriesRead
	}
	first := s.FirstID()
	if s.maxDeleted.IsZero() || s.maxDeleted.Less(first) {
		switch id.Compare(first) {
		case -1:
			return int64(s.entriesAdded) - int64(s.Len())
		case 0:
			return int64(s.entriesAdded) - int64(s.Len()) + 1
		}
	}
	return invalidEntriesRead
}

// Lag is a group's lag; ok is false when it cannot be known.
func (s *Stream) Lag(g *StreamGroup) (int64, bool) {
	if s.entriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != invalidEntriesRead && !s.rangeHasTombstones(g.LastID) {
		return int64(s.entriesAdded) - g.EntriesRead, true
	}
	if n := s.estimateEntriesRead(g.LastID); n != invalidEntriesRead {
		return int64(s.entriesAdded) - n, true
	}
	return 0, false
}

// XReadGroupNew hands consumer the entries after the group's last
// delivered id (count 0: all), moving the group forward and, unless
// noack, adding them to the PELs.
func (db *DB) XReadGroupNew(key []byte, s *Stream, g *StreamGroup, consumer []byte, count int, noack bool) []StreamDelivery {
	c := db.seeConsumer(key, g, consumer)
	start, ok := g.LastID.Incr()
	if !ok {
		return nil
	}
	var out []StreamDelivery
	s.Range(start, MaxStreamID, false, count, func(id StreamID, fields [][]byte) bool {
		out = append(out, StreamDelivery{id, fields})
		return true
	})
	for _, d := range out {
		if g.LastID.Less(d.ID) {
			if g.EntriesRead != invalidEntriesRead && !s.rangeHasTombstones(d.ID) {
				g.EntriesRead++
			} else if s.entriesAdded != 0 {
				g.EntriesRead = s.estimateEntriesRead(d.ID)
			}
			g.LastID = d.ID
		}
		if noack {
			continue
		}
		p := g.Pending(d.ID)
		if p == nil {
			p = &PendingEntry{ID: d.ID}
			g.pel.Set(p)
		} else if p.Consumer != nil {
			p.Consumer.pel.Delete(p)
		}
		p.Consumer, p.DeliveryTime, p.DeliveryCount = c, db.e.now, 1
		c.pel.Set(p)
		db.putPending(key, g, p)
	}
	if len(out) > 0 {
		db.putGroup(key, g)
		db.streamChanged(key, false)
	}
	return out
}

// XReadGroupHistory hands consumer its own pending entries from start
// (count 0: all), counting a new delivery of each that still exists.
func (db *DB) XReadGroupHistory(key []byte, s *Stream, g *StreamGroup, consumer []byte, start StreamID, count int) []StreamDelivery {
	c := db.seeConsumer(key, g, consumer)
	var out []StreamDelivery
	c.PendingRange(start, MaxStreamID, func(p *PendingEntry) bool {
		fields, ok := s.Get(p.ID)
		if ok {
			p.DeliveryTime = db.e.now
			p.DeliveryCount++
			db.putPending(key, g, p)
		}
		out = append(out, StreamDelivery{p.ID, fields})
		return count == 0 || len(out) < count
	})
	if len(out) > 0 {
		db.streamChanged(key, false)
	}
	return out
}

// XAck acknowledges ids, returning how many were pending.
func (db *DB) XAck(key []byte, g *StreamGroup, ids []StreamID) int {
	n := 0
	for _, id := range ids {
		if p := g.Pending(id); p != nil {
			db.deletePending(key, g, p)
			n++
			db.streamChanged(key, false)
		}
	}
	return n
}

// XClaimArgs are XCLAIM's options.
type XClaimArgs struct {
	MinIdle      int64
	DeliveryTime int64 // -1: now
	RetryCount   int64 // -1: not given
	Force        bool
	JustID       bool
	LastID       StreamID
}

// XClaim is XCLAIM: it returns the claimed entries.
func (db *DB) XClaim(key []byte, s *Stream, g *StreamGroup, consumer []byte, ids []StreamID, a *XClaimArgs) []StreamDelivery {
	now := db.e.now
	changedGroup := false
	if g.LastID.Less(a.LastID) {
		g.LastID = a.LastID
		changedGroup = true
	}
	when := a.DeliveryTime
	if when < 0 || when > now {
		when = now
	}
	var c *StreamConsumer
	var out []StreamDelivery
	for _, id := range ids {
		p := g.Pending(id)
		fields, exists := s.Get(id)
		if !exists {
			if p != nil {
				db.deletePending(key, g, p)
				db.streamChanged(key, false)
			}
			continue
		}
		if a.Force && p == nil {
			p = &PendingEntry{ID: id, DeliveryTime: now, DeliveryCount: 1}
			g.pel.Set(p)
		}
		if p == nil {
			continue
		}
		if p.Consumer != nil && a.MinIdle > 0 && now-p.DeliveryTime < a.MinIdle {
			continue
		}
		if c == nil {
			c = db.seeConsumer(key, g, consumer)
		}
		if p.Consumer != c && p.Consumer != nil {
			p.Consumer.pel.Delete(p)
		}
		p.DeliveryTime = when
		if a.RetryCount >= 0 {
			p.DeliveryCount = uint64(a.RetryCount)
		} else if !a.JustID {
			p.DeliveryCount++
		}
		p.Consumer = c
		c.pel.Set(p)
		db.putPending(key, g, p)
		out = append(out, StreamDelivery{id, fields})
		db.streamChanged(key, false)
	}
	if changedGroup {
		db.putGroup(key, g)
		db.streamChanged(key, false)
	}
	return out
}

// XAutoClaim is XAUTOCLAIM: the claimed entries, the id to continue from
// (0-0 at the end of the PEL) and the pending entries dropped because
// their entries were gone (as they were: replicas are told of them).
func (db *DB) XAutoClaim(key []byte, s *Stream, g *StreamGroup, consumer []byte, minIdle int64, start StreamID, count int64, justID bool) (out []StreamDelivery, next StreamID, deleted []PendingEntry) {
	now := db.e.now
	attempts := count * 10
	var c *StreamConsumer
	var pending []*PendingEntry
	g.pel.Ascend(&PendingEntry{ID: start}, func(p *PendingEntry) bool {
		pending = append(pending, p)
		return int64(len(pending)) <= attempts
	})
	i := 0
	for ; i < len(pending) && attempts > 0 && count > 0; i++ {
		attempts--
		p := pending[i]
		fields, exists := s.Get(p.ID)
		if !exists {
			deleted = append(deleted, *p)
			db.deletePending(key, g, p)
			count--
			db.streamChanged(key, false)
			continue
		}
		if minIdle > 0 && now-p.DeliveryTime < minIdle {
			continue
		}
		if c == nil {
			c = db.seeConsumer(key, g, consumer)
		}
		if p.Consumer != c && p.Consumer != nil {
			p.Consumer.pel.Delete(p)
		}
		p.DeliveryTime = now
		if !justID {
			p.DeliveryCount++
		}
		p.Consumer = c
		c.pel.Set(p)
		db.putPending(key, g, p)
		out = append(out, StreamDelivery{p.ID, fields})
		count--
		db.streamChanged(key, false)
	}
	if i < len(pending) {
		next = pending[i].ID
	}
	return out, next, deleted
}

// A stream is key-bound only to hear that it leaves its key (DEL,
// overwrite, expiry, FLUSHDB, RENAME's source): Redis then signals the
// key, so XREADGROUP clients blocked on it are told it no longer exists.
func (s *Stream) attached(*DB, string) {}

func (s *Stream) detached(db *DB, k string) { db.signalReady([]byte(k)) }
