package flat

import (
	"fmt"
	"math/rand/v2"
)

// Keyspace is one database's keys: records in an Arena of its own, indexed
// by a Table. Records returned are views valid until that key is written
// or deleted or the keyspace is compacted; copy what must outlive that.
//
// An arena per keyspace keeps FLUSHDB O(pages) (Clear drops the arena) and
// lets Compact know which table to update.
type Keyspace struct {
	arena   Arena
	table   Table
	handles []Handle // Sample's scratch
}

// NewKeyspace returns an empty keyspace.
func NewKeyspace() *Keyspace { return newKeyspace(DefaultSegmentBits) }

func newKeyspace(segBits int) *Keyspace {
	k := &Keyspace{}
	k.table = *newTable(&k.arena, segBits)
	return k
}

// Len is the number of keys.
func (k *Keyspace) Len() int { return k.table.count }

// Record returns the record of h.
func (k *Keyspace) Record(h Handle) Record { return Record(k.arena.Bytes(h)) }

// Get returns key's record, nil when absent.
func (k *Keyspace) Get(key []byte) Record {
	h, _ := k.table.Find(key)
	if h == 0 {
		return nil
	}
	return k.Record(h)
}

// Find returns key's record and slot (for DeleteAt), nil when absent.
func (k *Keyspace) Find(key []byte) (Record, Pos) {
	h, p := k.table.Find(key)
	if h == 0 {
		return nil, 0
	}
	return k.Record(h), p
}

// Put stores a new record for key with room for a valLen-byte value, which
// the caller writes into the returned record's Value(). Any old record of
// key is freed: read what is needed from it first (key itself may be a
// view of the old record).
func (k *Keyspace) Put(key []byte, typ uint8, clock uint32, expire int64, valLen int) Record {
	h, buf := k.arena.Alloc(RecordSize(len(key), valLen, expire != 0))
	r := InitRecord(buf, typ, clock, expire, key, valLen)
	k.link(key, h)
	return r
}

// Set stores key with the value val (copied), replacing any old record;
// key and val may be views of the old record.
func (k *Keyspace) Set(key []byte, typ uint8, clock uint32, expire int64, val []byte) Record {
	h, buf := k.arena.Alloc(RecordSize(len(key), len(val), expire != 0))
	r := PutRecord(buf, typ, clock, expire, key, val)
	k.link(key, h)
	return r
}

// SetRef stores key with a reference to an object the caller keeps,
// replacing any old record.
func (k *Keyspace) SetRef(key []byte, typ uint8, clock uint32, expire int64, ref uint64) Record {
	h, buf := k.arena.Alloc(RefRecordSize(len(key), expire != 0))
	r := PutRefRecord(buf, typ, clock, expire, key, ref)
	k.link(key, h)
	return r
}

func (k *Keyspace) link(key []byte, h Handle) {
	if old := k.table.Insert(key, h); old != 0 {
		k.free(old)
	}
}

func (k *Keyspace) free(h Handle) {
	k.arena.Free(h, k.Record(h).Len())
}

// Delete removes key; false when absent.
func (k *Keyspace) Delete(key []byte) bool {
	h := k.table.Delete(key)
	if h == 0 {
		return false
	}
	k.free(h)
	return true
}

// DeleteAt removes the key of slot p (from Find, with nothing changed
// since).
func (k *Keyspace) DeleteAt(p Pos) {
	k.free(k.table.DeleteAt(p))
}

// SetExpire gives key the deadline at (unix ms; 0 removes it) and returns
// its record, nil when key is absent. A record that has an expire field
// changes in place; adding or removing the field writes a new record.
func (k *Keyspace) SetExpire(key []byte, at int64) Record {
	h, p := k.table.Find(key)
	if h == 0 {
		return nil
	}
	r := k.Record(h)
	if at != 0 && r.SetExpire(at) || at == 0 && !r.HasExpire() {
		return r
	}
	kb, val := r.KeyValue()
	var nh Handle
	var nr Record
	if r.IsRef() {
		var buf []byte
		nh, buf = k.arena.Alloc(RefRecordSize(len(kb), at != 0))
		nr = PutRefRecord(buf, r.Type(), r.Clock(), at, kb, r.Ref())
	} else {
		var buf []byte
		nh, buf = k.arena.Alloc(RecordSize(len(kb), len(val), at != 0))
		nr = PutRecord(buf, r.Type(), r.Clock(), at, kb, val)
	}
	k.table.Replace(p, nh)
	k.free(h)
	return nr
}

// Scan is Table.Scan over records.
func (k *Keyspace) Scan(cursor uint64, count int, fn func(Record)) uint64 {
	return k.table.Scan(cursor, count, func(h Handle) { fn(k.Record(h)) })
}

// ForEach calls fn with every record until it returns false; fn must not
// change the keyspace.
func (k *Keyspace) ForEach(fn func(Record) bool) {
	k.table.ForEach(func(h Handle) bool { return fn(k.Record(h)) })
}

// Random returns a random record, each key equally likely (RANDOMKEY); nil
// when empty.
func (k *Keyspace) Random(r *rand.Rand) Record {
	h := k.table.RandomHandle(r)
	if h == 0 {
		return nil
	}
	return k.Record(h)
}

// Sample appends up to n records of neighbouring keys for eviction (see
// Table.Sample).
func (k *Keyspace) Sample(r *rand.Rand, n int, dst []Record) []Record {
	k.handles = k.table.Sample(r, n, k.handles[:0])
	for _, h := range k.handles {
		dst = append(dst, k.Record(h))
	}
	return dst
}

// Compact moves up to about budget bytes of records out of sparse pages
// (Arena.Compact) and returns the bytes moved. Records move: views taken
// before are stale.
func (k *Keyspace) Compact(budget int) int {
	return k.arena.Compact(budget, func(old, nw Handle) {
		if !k.table.Relocate(old, nw) {
			panic(fmt.Sprintf("flat: compaction moved %#x, which no slot holds", uint64(old)))
		}
	})
}

// Usage is the memory a record takes: its slot (or block) and its share of
// the index, one 8-byte slot at the table's load. A growing table's load
// runs between 7/16 and 7/8; a nearly empty one counts at one half, so a
// key alone in its database is not charged a whole segment. For MEMORY
// USAGE.
func (k *Keyspace) Usage(r Record) int {
	load := max(k.table.Stats().Load, 0.5)
	return SlotSize(r.Len()) + int(8/load+0.5)
}

// LiveBytes is the memory the keys take now: their records' slots and
// blocks, and the index. Free slots in partly used pages are not counted
// (the next records of their size take them), as an allocator's allocated
// bytes leave out its free space.
func (k *Keyspace) LiveBytes() int64 { return k.arena.slotBytes + k.table.accounted }

// Clear removes every key at once (FLUSHDB); pages go to the collector.
func (k *Keyspace) Clear() {
	k.arena.Reset()
	k.table.Clear()
}

// Stats describe a keyspace's memory.
type Stats struct {
	Arena ArenaStats
	Table TableStats
}

// Bytes is all the memory held: pages, blocks and the index.
func (s Stats) Bytes() int64 { return s.Arena.Held + s.Table.Bytes }

// Stats reports the keyspace's memory use.
func (k *Keyspace) Stats() Stats {
	return Stats{Arena: k.arena.Stats(), Table: k.table.Stats()}
}

// Prefetch reads the index slots and record headers that lookups of keys
// are about to read, level by level (all the slots, then all the records),
// so the CPU overlaps their cache misses instead of paying them one command
// at a time (pipelined batches, as engine/prefetch.go does for Dict). It
// changes nothing; the result only keeps the loads from being optimized
// away.
func (k *Keyspace) Prefetch(keys [][]byte) (sink uint64) {
	t := &k.table
	if t.count == 0 {
		return 0
	}
	var found [16]Handle
	for len(keys) > 0 {
		batch := keys[:min(len(keys), len(found))]
		keys = keys[len(batch):]
		for i, key := range batch {
			h := hashKey(key)
			s := &t.segs[t.segmentOf(h)]
			rel := (h << s.depth) >> relShift
			v := s.slots[rel>>(relBits-t.segBits)]
			found[i] = 0
			if v != 0 && (v>>HandleBits^rel)&fpMask(s.fp) == 0 {
				found[i] = Handle(v & handleMask)
			}
			sink += v
		}
		for _, h := range found[:len(batch)] {
			if h != 0 {
				sink += uint64(k.arena.Bytes(h)[recFixed])
			}
		}
	}
	return sink
}
