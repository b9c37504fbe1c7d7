package engine

import (
	"encoding/binary"

	"github.com/tidwall/btree"
)

// StreamGroup is a consumer group: the last id it delivered, how many
// entries it read (-1 when unknown, Redis's SCG_INVALID_ENTRIES_READ), its
// pending entries list by id, and its consumers by name.
type StreamGroup struct {
	Name        string
	LastID      StreamID
	EntriesRead int64
	pel         *btree.BTreeG[*PendingEntry]
	consumers   *btree.BTreeG[*StreamConsumer]
}

// StreamConsumer is one consumer of a group and its own pending entries.
type StreamConsumer struct {
	Name     string
	SeenTime int64 // unix ms of its last activity
	pel      *btree.BTreeG[*PendingEntry]
}

// PendingEntry is an entry delivered and not yet acknowledged.
type PendingEntry struct {
	ID            StreamID
	Consumer      *StreamConsumer
	DeliveryTime  int64 // unix ms
	DeliveryCount uint64
}

func pendingLess(a, b *PendingEntry) bool    { return a.ID.Less(b.ID) }
func consumerLess(a, b *StreamConsumer) bool { return a.Name < b.Name }
func newPEL() *btree.BTreeG[*PendingEntry] {
	return btree.NewBTreeGOptions(pendingLess, btree.Options{NoLocks: true})
}
func newConsumers() *btree.BTreeG[*StreamConsumer] {
	return btree.NewBTreeGOptions(consumerLess, btree.Options{NoLocks: true})
}

func newStreamGroup(name string, last StreamID, entriesRead int64) *StreamGroup {
	return &StreamGroup{Name: name, LastID: last, EntriesRead: entriesRead, pel: newPEL(), consumers: newConsumers()}
}

// Group finds a group by name.
func (s *Stream) Group(name []byte) *StreamGroup {
	g, _ := s.groups.Get(&StreamGroup{Name: string(name)})
	return g
}

// Groups calls fn for each group in name order.
func (s *Stream) Groups(fn func(g *StreamGroup)) {
	s.groups.Scan(func(g *StreamGroup) bool { fn(g); return true })
}

// GroupCount is the number of groups.
func (s *Stream) GroupCount() int { return s.groups.Len() }

// Consumer finds a consumer by name.
func (g *StreamGroup) Consumer(name []byte) *StreamConsumer {
	c, _ := g.consumers.Get(&StreamConsumer{Name: string(name)})
	return c
}

// Consumers calls fn for each consumer in name order.
func (g *StreamGroup) Consumers(fn func(c *StreamConsumer)) {
	g.consumers.Scan(func(c *StreamConsumer) bool { fn(c); return true })
}

// ConsumerCount is the number of consumers.
func (g *StreamGroup) ConsumerCount() int { return g.consumers.Len() }

// PendingCount is the size of the group's PEL.
func (g *StreamGroup) PendingCount() int { return g.pel.Len() }

// Pending returns the PEL entry of id.
func (g *StreamGroup) Pending(id StreamID) *PendingEntry {
	p, _ := g.pel.Get(&PendingEntry{ID: id})
	return p
}

// PendingRange calls fn for the group's pending entries in [start, end]
// in id order until it returns false.
func (g *StreamGroup) PendingRange(start, end StreamID, fn func(p *PendingEntry) bool) {
	pelRange(g.pel, start, end, fn)
}

// PendingRange calls fn for the consumer's pending entries in [start, end].
func (c *StreamConsumer) PendingRange(start, end StreamID, fn func(p *PendingEntry) bool) {
	pelRange(c.pel, start, end, fn)
}

// PendingCount is the size of the consumer's PEL.
func (c *StreamConsumer) PendingCount() int { return c.pel.Len() }

func pelRange(t *btree.BTreeG[*PendingEntry], start, end StreamID, fn func(p *PendingEntry) bool) {
	if end.Less(start) {
		return
	}
	t.Ascend(&PendingEntry{ID: start}, func(p *PendingEntry) bool {
		if end.Less(p.ID) {
			return false
		}
		return fn(p)
	})
}

// PendingBounds returns the smallest and largest pending ids.
func (g *StreamGroup) PendingBounds() (lo, hi StreamID) {
	if p, ok := g.pel.Min(); ok {
		lo = p.ID
	}
	if p, ok := g.pel.Max(); ok {
		hi = p.ID
	}
	return lo, hi
}

func (g *StreamGroup) clone() *StreamGroup {
	c := newStreamGroup(g.Name, g.LastID, g.EntriesRead)
	cons := map[*StreamConsumer]*StreamConsumer{}
	g.consumers.Scan(func(sc *StreamConsumer) bool {
		nc := &StreamConsumer{Name: sc.Name, SeenTime: sc.SeenTime, pel: newPEL()}
		cons[sc] = nc
		c.consumers.Set(nc)
		return true
	})
	g.pel.Scan(func(p *PendingEntry) bool {
		np := &PendingEntry{ID: p.ID, Consumer: cons[p.Consumer], DeliveryTime: p.DeliveryTime, DeliveryCount: p.DeliveryCount}
		c.pel.Set(np)
		np.Consumer.pel.Set(np)
		return true
	})
	return c
}

func (g *StreamGroup) memoryUsage() int {
	return 128 + len(g.Name) + g.pel.Len()*96 + g.consumers.Len()*96
}

// Item records of groups, consumers and pending entries.

func streamGroupItem(name string) []byte {
	return append([]byte{streamItemGroup}, name...)
}

func streamGroupValue(g *StreamGroup) []byte {
	b := g.LastID.encode(nil)
	return binary.BigEndian.AppendUint64(b, uint64(g.EntriesRead))
}

func streamConsumerItem(group, consumer string) []byte {
	b := binary.AppendUvarint([]byte{streamItemConsumer}, uint64(len(group)))
	b = append(b, group...)
	return append(b, consumer...)
}

func streamConsumerValue(c *StreamConsumer) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(c.SeenTime))
}

func streamPendingItem(group string, id StreamID) []byte {
	b := binary.AppendUvarint([]byte{streamItemPending}, uint64(len(group)))
	b = append(b, group...)
	return id.encode(b)
}

func streamPendingValue(p *PendingEntry) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(p.DeliveryTime))
	b = binary.BigEndian.AppendUint64(b, p.DeliveryCount)
	return append(b, p.Consumer.Name...)
}

func (g *StreamGroup) persist(sink ChangeSink, db int, key []byte) {
	sink.PutItem(db, key, streamGroupItem(g.Name), streamGroupValue(g))
	g.consumers.Scan(func(c *StreamConsumer) bool {
		sink.PutItem(db, key, streamConsumerItem(g.Name, c.Name), streamConsumerValue(c))
		return true
	})
	g.pel.Scan(func(p *PendingEntry) bool {
		sink.PutItem(db, key, streamPendingItem(g.Name, p.ID), streamPendingValue(p))
		return true
	})
}

// loadGroup finds or makes the group a loading record names; consumer
// records sort before the group's own record.
func (s *Stream) loadGroup(name string) *StreamGroup {
	g, _ := s.groups.Get(&StreamGroup{Name: name})
	if g == nil {
		g = newStreamGroup(name, StreamID{}, -1)
		s.groups.Set(g)
	}
	return g
}

func (s *Stream) loadGroupItem(item, val []byte) error {
	kind := item[0]
	if kind == streamItemGroup {
		if len(val) != 24 {
			return errBadStreamRecord
		}
		g := s.loadGroup(string(item[1:]))
		g.LastID = decodeStreamID(val)
		g.EntriesRead = int64(binary.BigEndian.Uint64(val[16:]))
		return nil
	}
	r := &byteReader{b: item[1:]}
	group := string(r.take(r.uvarint()))
	if r.err {
		return errBadStreamRecord
	}
	g := s.loadGroup(group)
	if kind == streamItemConsumer {
		if len(val) != 8 {
			return errBadStreamRecord
		}
		c := g.getOrAddConsumer(string(r.b), 0)
		c.SeenTime = int64(binary.BigEndian.Uint64(val))
		return nil
	}
	if len(r.b) != 16 || len(val) < 16 {
		return errBadStreamRecord
	}
	c := g.getOrAddConsumer(string(val[16:]), 0)
	p := &PendingEntry{ID: decodeStreamID(r.b), Consumer: c,
		DeliveryTime: int64(binary.BigEndian.Uint64(val)), DeliveryCount: binary.BigEndian.Uint64(val[8:])}
	g.pel.Set(p)
	c.pel.Set(p)
	return nil
}

func (g *StreamGroup) getOrAddConsumer(name string, now int64) *StreamConsumer {
	c, _ := g.consumers.Get(&StreamConsumer{Name: name})
	if c == nil {
		c = &StreamConsumer{Name: name, SeenTime: now, pel: newPEL()}
		g.consumers.Set(c)
	}
	return c
}
