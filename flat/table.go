package flat

import (
	"fmt"
	"hash/maphash"
)

// Table indexes records of an Arena by key. It is an extendible hash table:
// a directory of 2^global entries, indexed by a hash's top bits, names
// segments of 2^segBits 8-byte slots each; a segment of local depth d holds
// the keys whose hashes start with its d-bit prefix, in open addressing with
// linear probing (wrapping within the segment) and backward-shift deletion.
// A full segment splits in two (one segment's work, no whole-table copy);
// two sparse siblings merge back.
//
// A slot is hash bits << HandleBits | handle, 0 when empty: the relBits
// bits of the hash that follow the segment's prefix. Their top segBits bits
// are the key's home slot, the rest filter key comparisons. A split moves
// the prefix one bit down the stored bits, so a segment keeps fp <= relBits
// bits right; when a split would leave fewer than segBits+fpSpare, it hashes
// its keys afresh from their records (one split in nine along a lineage).
type Table struct {
	arena   *Arena
	dir     []uint32 // segment index by the hash's top global bits
	global  uint8
	segBits uint8
	segs    []segment
	count   int
	depths  [65]int32 // segments per local depth: the directory halves when none is at global
	scratch []uint64  // one segment's slots, for split and merge
	spare   []uint64  // a zeroed slot array kept from the last merge
	// accounted is the bytes of the table's arrays (Stats().Bytes), kept
	// current at every change of them.
	accounted int64
}

type segment struct {
	slots  []uint64
	prefix uint64 // the top depth bits of its keys' hashes
	depth  uint8
	fp     uint8 // how many of the stored hash bits are right (from the top)
	count  int32
}

// Pos names a slot of a Table; it is valid until the table's next insert or
// delete.
type Pos uint64

const (
	relBits    = 64 - HandleBits
	relShift   = 64 - relBits
	relMask    = 1<<relBits - 1
	handleMask = 1<<HandleBits - 1

	// DefaultSegmentBits makes 1024-slot (8 KiB) segments: a split moves at
	// most ~900 slots, and the directory stays small (16k segments at 10M keys).
	DefaultSegmentBits = 10
	fpSpare            = 6
)

// hashSeed is per process, so clients cannot aim keys at one segment.
var hashSeed = maphash.MakeSeed()

func hashKey(k []byte) uint64 { return maphash.Bytes(hashSeed, k) }

// NewTable returns an empty table over the records of a.
func NewTable(a *Arena) *Table { return newTable(a, DefaultSegmentBits) }

// newTable lets tests use small segments, to split and merge often.
func newTable(a *Arena, segBits int) *Table {
	if segBits < 4 || segBits > relBits-fpSpare-2 {
		panic(fmt.Sprintf("flat: segment bits %d", segBits))
	}
	return &Table{arena: a, segBits: uint8(segBits)}
}

func (t *Table) segSize() int { return 1 << t.segBits }

// A segment splits before passing 7/8 full; siblings merge when one falls
// below 1/4 and together they fit in 3/8, far enough from a split that a
// key added and removed at the boundary does not flip them back and forth.
func (t *Table) maxLoad() int32    { return int32(t.segSize() * 7 / 8) }
func (t *Table) mergeBelow() int32 { return int32(t.segSize() / 4) }
func (t *Table) mergeMax() int32   { return int32(t.segSize() * 3 / 8) }

func (t *Table) init() {
	t.segs = []segment{{slots: make([]uint64, t.segSize()), fp: relBits}}
	t.dir = []uint32{0}
	t.global = 0
	t.depths = [65]int32{}
	t.depths[0] = 1
	t.account()
}

// Len is the number of keys.
func (t *Table) Len() int { return t.count }

// Clear empties the table (the records stay in the arena).
func (t *Table) Clear() {
	*t = Table{arena: t.arena, segBits: t.segBits}
}

func (t *Table) keyOf(h Handle) []byte { return Record(t.arena.Bytes(h)).Key() }

// segmentOf returns the index of the segment holding hash h.
func (t *Table) segmentOf(h uint64) uint32 { return t.dir[h>>(64-uint(t.global))] }

// fpMask selects the right bits of a segment's stored hash bits.
func fpMask(fp uint8) uint64 { return (1<<fp - 1) << (relBits - fp) }

// Find returns key's handle and slot, or 0 when absent.
func (t *Table) Find(key []byte) (Handle, Pos) {
	if t.count == 0 {
		return 0, 0
	}
	h := hashKey(key)
	si := t.segmentOf(h)
	s := &t.segs[si]
	rel := (h << s.depth) >> relShift
	mask := fpMask(s.fp)
	want := rel & mask
	m := uint64(len(s.slots) - 1)
	for i := rel >> (relBits - t.segBits); ; i = (i + 1) & m {
		v := s.slots[i]
		if v == 0 {
			return 0, 0
		}
		if (v>>HandleBits)&mask == want {
			hd := Handle(v & handleMask)
			if string(t.keyOf(hd)) == string(key) {
				return hd, Pos(uint64(si)<<32 | i)
			}
		}
	}
}

// Get returns key's handle, 0 when absent.
func (t *Table) Get(key []byte) Handle {
	h, _ := t.Find(key)
	return h
}

// Insert points key at hd, a record in the arena whose key is key. It
// returns the handle key pointed at before, 0 when key is new.
func (t *Table) Insert(key []byte, hd Handle) Handle {
	if hd == 0 || hd > handleMask {
		panic(fmt.Sprintf("flat: insert of handle %#x", uint64(hd)))
	}
	if t.segs == nil {
		t.init()
	}
	h := hashKey(key)
	for {
		si := t.segmentOf(h)
		s := &t.segs[si]
		rel := (h << s.depth) >> relShift
		mask := fpMask(s.fp)
		want := rel & mask
		m := uint64(len(s.slots) - 1)
		i := rel >> (relBits - t.segBits)
		for ; s.slots[i] != 0; i = (i + 1) & m {
			v := s.slots[i]
			if (v>>HandleBits)&mask == want {
				old := Handle(v & handleMask)
				if string(t.keyOf(old)) == string(key) {
					s.slots[i] = v&^handleMask | uint64(hd)
					return old
				}
			}
		}
		if s.count >= t.maxLoad() {
			t.split(si)
			continue
		}
		s.slots[i] = rel<<HandleBits | uint64(hd)
		s.count++
		t.count++
		return 0
	}
}

// Handle returns the handle at p (from Find, before any insert or delete).
func (t *Table) Handle(p Pos) Handle {
	return Handle(t.segs[p>>32].slots[uint32(p)] & handleMask)
}

// Replace points the slot p (from Find, before any insert or delete) at hd,
// a record with the same key, and returns the handle it held.
func (t *Table) Replace(p Pos, hd Handle) Handle {
	if hd == 0 || hd > handleMask {
		panic(fmt.Sprintf("flat: replace with handle %#x", uint64(hd)))
	}
	sl := &t.segs[p>>32].slots[uint32(p)]
	old := Handle(*sl & handleMask)
	*sl = *sl&^handleMask | uint64(hd)
	return old
}

// Delete removes key and returns the handle it pointed at, 0 when absent.
func (t *Table) Delete(key []byte) Handle {
	hd, p := t.Find(key)
	if hd != 0 {
		t.DeleteAt(p)
	}
	return hd
}

// DeleteAt removes the key in slot p (from Find, before any insert or
// delete) and returns its handle.
func (t *Table) DeleteAt(p Pos) Handle {
	si := uint32(p >> 32)
	s := &t.segs[si]
	hd := Handle(s.slots[uint32(p)] & handleMask)
	t.removeAt(s, int(uint32(p)))
	t.count--
	if s.count < t.mergeBelow() {
		t.maybeMerge(si)
	}
	return hd
}

// removeAt empties slot i and shifts the rest of its cluster back, each
// entry as far as towards its home slot as it may go, so lookups never meet a
// hole before the key they look for (no tombstones).
func (t *Table) removeAt(s *segment, i int) {
	m := len(s.slots) - 1
	shift := relBits - t.segBits + HandleBits
	for j := (i + 1) & m; s.slots[j] != 0; j = (j + 1) & m {
		v := s.slots[j]
		home := int(v >> shift)
		// v may fill the hole unless its home lies in (i, j].
		if (j-home)&m >= (j-i)&m {
			s.slots[i] = v
			i = j
		}
	}
	s.slots[i] = 0
	s.count--
}

// Relocate points the slot that holds old at nw, a copy of old's record
// (Arena.Compact's move). False when no slot holds old.
func (t *Table) Relocate(old, nw Handle) bool {
	if t.count == 0 {
		return false
	}
	h := hashKey(t.keyOf(nw))
	s := &t.segs[t.segmentOf(h)]
	rel := (h << s.depth) >> relShift
	m := uint64(len(s.slots) - 1)
	for i := rel >> (relBits - t.segBits); s.slots[i] != 0; i = (i + 1) & m {
		if Handle(s.slots[i]&handleMask) == old {
			s.slots[i] = s.slots[i]&^handleMask | uint64(nw)
			return true
		}
	}
	return false
}

// place puts slot value v (hash bits and handle) at its home or the first
// free slot after it; the key must not be present.
func (t *Table) place(s *segment, v uint64) {
	m := len(s.slots) - 1
	i := int(v >> (relBits - t.segBits + HandleBits))
	for s.slots[i] != 0 {
		i = (i + 1) & m
	}
	s.slots[i] = v
	s.count++
}

// TableStats describe a table's shape and memory.
type TableStats struct {
	Keys        int
	Segments    int
	GlobalDepth int
	Bytes       int64   // slot arrays and directory
	Load        float64 // keys per slot
}

// Stats reports the table's shape.
func (t *Table) Stats() TableStats {
	s := TableStats{Keys: t.count, Segments: len(t.segs), GlobalDepth: int(t.global)}
	slots := len(t.segs) * t.segSize()
	s.Bytes = int64(slots+len(t.scratch)+len(t.spare))*8 + int64(len(t.dir))*4
	if slots > 0 {
		s.Load = float64(t.count) / float64(slots)
	}
	return s
}
