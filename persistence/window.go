package persistence

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// window turns log records into Pebble operations cheaply. Point operations
// are collected, deduplicated per Pebble key (the last one wins, as every
// operation overwrites the key whatever it held) and written in key order,
// which Pebble's memtable inserts far faster than random order. A range
// deletion ends the window: what came before is written first, then the
// range deletion, so later operations land after it. Within one Pebble
// batch operations take effect in the order they are added.
type window struct {
	arena []byte   // Pebble keys
	ents  []entry  // point operations in arrival order until sorted
	spare []entry  // the radix sort's other buffer
	vals  [][]byte // values by entry index; they alias log buffers
	bytes int      // keys and values held
	bound [2][]byte
}

type entry struct {
	// abbr is 8 key bytes after the prefix every key of the window shares,
	// zero-padded: unequal abbreviations order keys without touching the
	// arena, which is most of the cost of sorting.
	abbr   uint64
	off, n uint32 // key in arena
	idx    uint32 // arrival order, index into vals
	del    bool
}

func (w *window) key(e entry) []byte { return w.arena[e.off : e.off+e.n] }

// size is what the window adds to a Pebble batch, roughly.
func (w *window) size() int { return w.bytes }

// add queues a point operation on a record key; val nil means delete.
func (w *window) add(db int, key []byte, kind byte, item []byte, val []byte, del bool) {
	off := len(w.arena)
	n := recordKeyLen(key, item)
	w.arena = slices.Grow(w.arena, n)[:off+n]
	putRecordKey(w.arena[off:], db, key, kind, item)
	w.ents = append(w.ents, entry{off: uint32(off), n: uint32(n), idx: uint32(len(w.vals)), del: del})
	w.vals = append(w.vals, val)
	w.bytes += n + len(val)
}

// flush writes the window's surviving operations to b in key order and
// empties the window.
func (w *window) flush(b *pebble.Batch) error {
	if len(w.ents) == 0 {
		return nil
	}
	w.sort()
	var err error
	for i, e := range w.ents {
		k := w.key(e)
		if i+1 < len(w.ents) && bytes.Equal(k, w.key(w.ents[i+1])) {
			continue // a later operation on the same key wins
		}
		if e.del {
			err = b.Delete(k, nil)
		} else {
			err = b.Set(k, w.vals[e.idx], nil)
		}
		if err != nil {
			break
		}
	}
	w.reset()
	return err
}

// sort puts the entries in key order, keeping arrival order among equal
// keys. Abbreviations decide almost every comparison, so they are sorted by
// radix (stable, a pass per byte that is not the same in every entry); only
// runs of equal abbreviations then compare whole keys. On a window of random
// keys this is several times cheaper than a comparison sort, whose calls
// were a tenth of the applier's CPU under INCR of random keys.
func (w *window) sort() {
	w.abbreviate()
	byKey := func(x, y entry) int { return bytes.Compare(w.key(x), w.key(y)) }
	if len(w.ents) < radixMinEntries {
		slices.SortStableFunc(w.ents, func(x, y entry) int {
			if x.abbr != y.abbr {
				return cmp.Compare(x.abbr, y.abbr)
			}
			return byKey(x, y)
		})
		return
	}
	w.radixSort()
	for i := 0; i < len(w.ents); {
		j := i + 1
		for j < len(w.ents) && w.ents[j].abbr == w.ents[i].abbr {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(w.ents[i:j], byKey)
		}
		i = j
	}
}

// radixMinEntries is where the radix sort's fixed cost (a histogram pass
// and a second buffer) starts to pay.
const radixMinEntries = 256

// radixSort orders the entries by abbreviation, least significant byte
// first; each pass is stable, so arrival order survives among equals.
func (w *window) radixSort() {
	var counts [8][256]int
	for _, e := range w.ents {
		for b := range 8 {
			counts[b][byte(e.abbr>>(8*b))]++
		}
	}
	src := w.ents
	dst := slices.Grow(w.spare[:0], len(src))[:len(src)]
	for b := range 8 {
		c := &counts[b]
		if c[byte(src[0].abbr>>(8*b))] == len(src) {
			continue // every entry has the same byte here
		}
		sum := 0
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		for _, e := range src {
			d := byte(e.abbr >> (8 * b))
			dst[c[d]] = e
			c[d]++
		}
		src, dst = dst, src
	}
	w.ents, w.spare = src, dst
}

// abbreviate sets every entry's abbr. If a is a key's abbreviation and b
// another's, a < b implies the first key sorts before the second: at the
// first differing byte either the first key is smaller or it has ended.
func (w *window) abbreviate() {
	first := w.key(w.ents[0])
	common := len(first)
	for _, e := range w.ents[1:] {
		k := w.key(e)
		n := min(common, len(k))
		i := 0
		for i < n && k[i] == first[i] {
			i++
		}
		common = i
	}
	var buf [8]byte
	for i := range w.ents {
		k := w.key(w.ents[i])[common:]
		if len(k) >= 8 {
			w.ents[i].abbr = binary.BigEndian.Uint64(k)
			continue
		}
		buf = [8]byte{}
		copy(buf[:], k)
		w.ents[i].abbr = binary.BigEndian.Uint64(buf[:])
	}
}

func (w *window) reset() {
	w.bytes = 0
	if cap(w.arena) > maxRetainedBytes {
		w.arena, w.ents, w.spare, w.vals = nil, nil, nil, nil
		return
	}
	w.arena = w.arena[:0]
	w.ents = w.ents[:0]
	clear(w.vals)
	w.vals = w.vals[:0]
}

// deleteRange writes the window, then a deletion of [start, end).
func (w *window) deleteRange(b *pebble.Batch, start, end []byte) error {
	if err := w.flush(b); err != nil {
		return err
	}
	return b.DeleteRange(start, end, nil)
}

// addRecords decodes one frame's records into the window and b.
func (w *window) addRecords(b *pebble.Batch, records []byte) (ops uint64, err error) {
	r := recordReader{buf: records}
	for {
		c, ok, err := r.next()
		if !ok {
			return ops, err
		}
		ops++
		if err := w.addChange(b, &c); err != nil {
			return ops, err
		}
	}
}

func (w *window) addChange(b *pebble.Batch, c *change) error {
	switch c.op {
	case opPutValue:
		w.add(c.db, c.key, kindValue, nil, c.val, false)
	case opPutExpire:
		w.add(c.db, c.key, kindExpire, nil, c.val, false)
	case opDeleteExpire:
		w.add(c.db, c.key, kindExpire, nil, nil, true)
	case opPutItem:
		w.add(c.db, c.key, kindItem, c.item, c.val, false)
	case opDeleteItem:
		w.add(c.db, c.key, kindItem, c.item, nil, true)
	case opDeleteKey:
		// Two point deletes leave no range tombstone behind.
		w.add(c.db, c.key, kindValue, nil, nil, true)
		w.add(c.db, c.key, kindExpire, nil, nil, true)
	case opDeleteKeyItems:
		n := recordKeyLen(c.key, nil)
		start, end := w.bounds(n, n)
		putRecordKey(start, c.db, c.key, kindValue, nil)
		putRecordKey(end, c.db, c.key, kindEnd, nil)
		return w.deleteRange(b, start, end)
	case opFlushDB:
		start, end := w.bounds(dbStartLen, dbEndLen(c.db))
		putDBBounds(start, end, c.db)
		return w.deleteRange(b, start, end)
	case opFlushAll:
		return w.deleteRange(b, []byte{keyspaceTag}, []byte{keyspaceEnd})
	}
	return nil
}

// bounds returns scratch buffers for a range's ends; Pebble copies them.
func (w *window) bounds(n, m int) ([]byte, []byte) {
	w.bound[0] = slices.Grow(w.bound[0][:0], n)[:n]
	w.bound[1] = slices.Grow(w.bound[1][:0], m)[:m]
	return w.bound[0], w.bound[1]
}
