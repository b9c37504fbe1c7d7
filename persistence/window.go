package persistence

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
)

// window turns log records into Pebble operations cheaply. Point operations
// are collected, deduplicated per Pebble key (the last one wins, as every
// operation overwrites the key whatever it held) and written in key order,
// which Pebble's memtable inserts far faster than random order.
//
// Deletions of item ranges (popped list runs) join the window too: the
// window writes them first, merged where they touch, and drops the point
// operations that arrived before a range covering their key; the points
// written after the ranges all arrived later, and within one Pebble batch
// operations take effect in the order they are added. Any other range
// deletion (a whole key, a database) ends the window: what came before is
// written first, then the range deletion.
type window struct {
	arena  []byte     // Pebble keys
	ents   []entry    // point operations in arrival order until sorted
	spare  []entry    // the radix sort's other buffer
	ranges []rangeDel // item range deletions
	// lastRange is 1 + the index in ranges of the last operation added
	// when that was a range, else 0: a range continuing it merges into it.
	lastRange int
	vals      [][]byte // values by arrival index; they alias log buffers
	bytes     int      // keys and values held
	bound     [2][]byte
	heap      []rangeDel // flush's scratch: ranges covering the current key
	// patches counts the window's value patches. A patch with no whole
	// value before it in the window applies to the value Pebble holds:
	// base reads it (a copy, unless it is longer than a limit that is not
	// negative: then only its size), and apply first commits what the
	// batch holds from earlier windows so that Pebble has it. Both are nil
	// in tests of the window alone (no value to patch).
	patches int
	base    func(key []byte, limit int) (val []byte, size int, ok bool, err error)
	apply   func(b *pebble.Batch) error
	// excise removes every record in [start, end) from Pebble, after apply
	// has committed what came before; diskUsage is what Pebble's tables
	// hold in a span. Nil in tests of the window alone, which then write a
	// range deletion instead.
	excise    func(start, end []byte) error
	diskUsage func(start, end []byte) uint64
	// held keeps patched values of holdMin bytes or more, by Pebble key,
	// instead of writing them: a long string that keeps changing (APPEND
	// to a log, SETBIT on a large bitmap) would otherwise be rewritten
	// whole into Pebble every window. The next window's patches apply to
	// the held value, and any other operation on its key drops it. The
	// applier writes them with writeHeld before Pebble must have them (a
	// segment is retired, someone waits for the store). holdMin 0 holds
	// nothing.
	held      map[string][]byte
	heldBytes int // their capacity, deferred patches included: what they cost
	holdMin   int
	// maxHeld is the budget's held share (0: no limit). A patched value
	// that would take more than half of it is not held: it is written, its
	// key marked large, and the patches that come for a large key next are
	// deferred (kept, not applied) until writeHeld reads the value back
	// from Pebble once and applies them all. A log string taking APPENDs
	// or a bitmap taking SETBITs, too large to hold, is then rewritten once
	// per held share of patches, not once per window.
	maxHeld  int
	deferred map[string]*deferred
	large    map[string]struct{}
	// rewrite writes key's value with ps applied straight to Pebble, in
	// a batch of its own (the applier's: one copy of the value, where
	// base and a window batch take three). Nil in tests of the window
	// alone, which go through base and b.
	rewrite func(key []byte, d *deferred) error
	// spill, when set, writes the window to Pebble in the middle of a
	// frame once its keys and values reach maxBytes or its scratch
	// maxScratch (memory), so a window's size never depends on how many
	// records a frame or a pass holds.
	spill      func() error
	maxBytes   int
	maxScratch int
}

// Sizes of the window's scratch elements, for memory.
const (
	entrySize    = int(unsafe.Sizeof(entry{}))
	rangeDelSize = int(unsafe.Sizeof(rangeDel{}))
	valSize      = int(unsafe.Sizeof([]byte(nil)))
)

// memory is the capacity of the window's scratch: what it costs, held
// values aside.
func (w *window) memory() int64 {
	return int64(cap(w.arena) + (cap(w.ents)+cap(w.spare))*entrySize + cap(w.vals)*valSize +
		(cap(w.ranges)+cap(w.heap))*rangeDelSize + cap(w.bound[0]) + cap(w.bound[1]))
}

// pebbleNodeBytes is what Pebble counts for an operation in a memtable
// besides its key and value: a skiplist node of the greatest height, the
// key's trailer, alignment (arenaskl.MaxNodeSize). A batch is kept whole,
// outside the memtables, when these add up to half a memtable.
const pebbleNodeBytes = 200

// full reports whether the window should be written before it takes more:
// its operations would make too large a Pebble batch, or its scratch
// (counted by length, with room for the growth of what it appends to)
// passes its share.
func (w *window) full() bool {
	if w.maxBytes > 0 && w.bytes+(len(w.ents)+len(w.ranges))*pebbleNodeBytes >= w.maxBytes {
		return true
	}
	n := len(w.arena) + len(w.ents)*(2*entrySize+valSize) + len(w.ranges)*2*rangeDelSize
	return w.maxScratch > 0 && n*5 >= w.maxScratch*4
}

// rangeDel deletes the Pebble keys in [start, end), both in the arena.
type rangeDel struct {
	s, sn, e, en uint32 // start and end: offset and length
	idx          uint32 // arrival order, shared with entries
}

func (w *window) rangeStart(r rangeDel) []byte { return w.arena[r.s : r.s+r.sn] }
func (w *window) rangeEnd(r rangeDel) []byte   { return w.arena[r.e : r.e+r.en] }

type entry struct {
	// abbr is 8 key bytes after the prefix every key of the window shares,
	// zero-padded: unequal abbreviations order keys without touching the
	// arena, which is most of the cost of sorting.
	abbr   uint64
	off, n uint32 // key in arena
	idx    uint32 // arrival order, index into vals
	del    bool
	dead   bool // deleted by a range that arrived later
	patch  bool // overwrite bytes of the value at patchOff instead of all of it
}

func (w *window) key(e entry) []byte { return w.arena[e.off : e.off+e.n] }

// add queues a point operation on a record key; val nil means delete.
func (w *window) add(db int, key []byte, kind byte, item []byte, val []byte, del bool) {
	off := len(w.arena)
	n := recordKeyLen(key, item)
	w.arena = slices.Grow(w.arena, n)[:off+n]
	putRecordKey(w.arena[off:], db, key, kind, item)
	w.ents = append(w.ents, entry{off: uint32(off), n: uint32(n), idx: uint32(len(w.vals)), del: del})
	w.vals = append(w.vals, val)
	w.bytes += n + len(val)
	w.lastRange = 0
}

// addServer queues a point operation on a server record.
func (w *window) addServer(name []byte, val []byte, del bool) {
	off := len(w.arena)
	w.arena = append(append(w.arena, serverTag), name...)
	n := len(w.arena) - off
	w.ents = append(w.ents, entry{off: uint32(off), n: uint32(n), idx: uint32(len(w.vals)), del: del})
	w.vals = append(w.vals, val)
	w.bytes += n + len(val)
	w.lastRange = 0
}

// addPatch queues a patch of a string value record's payload: data at off.
// The offset is kept in the arena right after the key.
func (w *window) addPatch(db int, key []byte, off int, data []byte) {
	w.add(db, key, kindValue, nil, data, false)
	w.ents[len(w.ents)-1].patch = true
	w.arena = binary.BigEndian.AppendUint32(w.arena, uint32(off))
	w.bytes += 4
	w.patches++
}

func (w *window) patchOff(e entry) int {
	return int(binary.BigEndian.Uint32(w.arena[e.off+e.n:]))
}

// addItemRange queues the deletion of key's items in [from, to). A range
// that continues the one added just before it (the next pop off the same
// end of a list) extends that one instead: nothing arrived in between, so
// the union covers exactly what the two would.
func (w *window) addItemRange(db int, key, from, to []byte) {
	off := len(w.arena)
	sn, en := recordKeyLen(key, from), recordKeyLen(key, to)
	w.arena = slices.Grow(w.arena, sn+en)[:off+sn+en]
	putRecordKey(w.arena[off:], db, key, kindItem, from)
	putRecordKey(w.arena[off+sn:], db, key, kindItem, to)
	r := rangeDel{s: uint32(off), sn: uint32(sn), e: uint32(off + sn), en: uint32(en), idx: uint32(len(w.vals))}
	w.vals = append(w.vals, nil)
	w.bytes += sn + en
	if w.lastRange > 0 {
		last := &w.ranges[w.lastRange-1]
		if bytes.Equal(w.rangeEnd(r), w.rangeStart(*last)) {
			last.s, last.sn, last.idx = r.s, r.sn, r.idx
			return
		}
		if bytes.Equal(w.rangeStart(r), w.rangeEnd(*last)) {
			last.e, last.en, last.idx = r.e, r.en, r.idx
			return
		}
	}
	w.ranges = append(w.ranges, r)
	w.lastRange = len(w.ranges)
}

// flush writes the window's surviving operations to b and empties the
// window: item range deletions first, merged, then point operations in key
// order.
func (w *window) flush(b *pebble.Batch) error {
	if len(w.ents) == 0 && len(w.ranges) == 0 {
		return nil
	}
	if len(w.ents) > 0 {
		w.sort()
	}
	var err error
	if w.patches > 0 && !b.Empty() && w.apply != nil {
		err = w.apply(b)
	}
	if err == nil && len(w.ranges) > 0 {
		err = w.writeRanges(b)
	}
	for i := 0; i < len(w.ents) && err == nil; {
		j := i + 1
		for j < len(w.ents) && bytes.Equal(w.key(w.ents[i]), w.key(w.ents[j])) {
			j++
		}
		err = w.writeKey(b, w.ents[i:j])
		i = j
	}
	w.reset()
	return err
}

// writeKey writes what the operations on one key, in arrival order, leave:
// the last one wins, unless patches follow it.
func (w *window) writeKey(b *pebble.Batch, ops []entry) error {
	last := ops[len(ops)-1]
	k := w.key(last)
	if last.patch {
		return w.writePatched(b, k, ops)
	}
	if w.holding() {
		w.dropHeld(k) // this operation came later
	}
	switch {
	case last.dead:
		return nil
	case last.del:
		if err := w.room(b, len(k)); err != nil {
			return err
		}
		return b.Delete(k, nil)
	default:
		if err := w.room(b, len(k)+len(w.vals[last.idx])); err != nil {
			return err
		}
		return b.Set(k, w.vals[last.idx], nil)
	}
}

// room applies b first if an operation of n key and value bytes would take
// it to maxBytes of memtable space: a window's operations can take more
// than its records (a patch rewrites its whole value), and Pebble keeps a
// batch of half a memtable or more whole in the Go heap. Applying a window
// in several batches is as correct as applying it in one: windows are cut
// anywhere already.
func (w *window) room(b *pebble.Batch, n int) error {
	if w.maxBytes == 0 || w.apply == nil || b.Empty() {
		return nil
	}
	if b.Len()+(int(b.Count())+1)*pebbleNodeBytes+n <= w.maxBytes {
		return nil
	}
	return w.apply(b)
}

// writePatched applies the patches that end ops to the value the last whole
// value or deletion before them left, or, without one, to the value Pebble
// holds. A patch that ends past the value extends it, with zeros before the
// patch if it starts past the end too (APPEND, SETRANGE and SETBIT grow
// strings so). A patch without a value changes nothing: that happens only
// when a replay runs over history Pebble already holds, and the records
// after the patch then rewrite or delete the key. Patches only ever write
// given bytes at given places, so replaying them over a later state and
// then replaying what followed gives that state again.
func (w *window) writePatched(b *pebble.Batch, k []byte, ops []entry) error {
	var cur []byte
	present, owned, fromWindow := false, false, false
	first := 0
	for i := len(ops) - 1; i >= 0; i-- {
		if !ops[i].patch {
			first, fromWindow = i+1, true
			present = !ops[i].del
			if present {
				cur = w.vals[ops[i].idx]
			}
			break
		}
	}
	if held, ok := w.held[string(k)]; ok && !fromWindow {
		cur, present, owned = held, true, true
	} else if _, ok := w.large[string(k)]; ok && !fromWindow {
		w.deferPatches(k, ops[first:])
		return nil
	} else if !fromWindow && w.base != nil {
		limit := -1
		if w.holdMin > 0 && w.maxHeld > 0 {
			limit = w.maxHeld / 2
		}
		v, n, ok, err := w.base(k, limit)
		if err != nil {
			return err
		}
		if ok && v == nil && n > 0 {
			// Too large to hold: Pebble keeps it until writeHeld.
			w.markLarge(k)
			w.deferPatches(k, ops[first:])
			return nil
		}
		cur, present, owned = v, ok, true
	}
	for _, e := range ops[first:] {
		data, at := w.vals[e.idx], 1+w.patchOff(e) // after the record's type byte
		if !present || len(cur) == 0 {
			continue // no value, or a value record without its type byte
		}
		cur, owned = patchBytes(cur, owned, at, data)
	}
	if w.holding() {
		w.dropHeld(k) // older than this window's operations
	}
	if present && owned && w.holdMin > 0 && len(cur) >= w.holdMin {
		if w.maxHeld == 0 || cap(cur) <= w.maxHeld/2 {
			w.hold(k, cur)
			return nil
		}
		w.markLarge(k)
	}
	switch {
	case present:
		if err := w.room(b, len(k)+len(cur)); err != nil {
			return err
		}
		return b.Set(k, cur, nil)
	case fromWindow:
		if err := w.room(b, len(k)); err != nil {
			return err
		}
		return b.Delete(k, nil)
	default:
		return nil // nothing to patch, nothing to write
	}
}

// patchBytes writes data into cur at off, growing it with zeros before off
// if off is past its end, and returns the result and whether the caller
// owns it. A value it does not own (the window's record, Pebble's value) is
// copied first. Growth keeps spare capacity, so a run of APPENDs in one
// window costs a copy per doubling, not a copy of the whole value each.
func patchBytes(cur []byte, owned bool, off int, data []byte) ([]byte, bool) {
	n, end := len(cur), off+len(data)
	switch {
	case end > cap(cur) || !owned && end > n:
		grown := make([]byte, n, max(end, 2*n))
		copy(grown, cur)
		cur, owned = grown, true
	case !owned:
		cur, owned = bytes.Clone(cur), true
	}
	if end > n {
		cur = cur[:end]
		clear(cur[n:max(n, off)]) // spare capacity may hold anything
	}
	copy(cur[off:], data)
	return cur, owned
}

// deferred is the patches of a large value's payload kept for writeHeld:
// each patch's offset and the end of its bytes in data, all in two slices
// per key (SETBITs defer a byte each).
type deferred struct {
	patches []deferredPatch
	data    []byte
}

type deferredPatch struct{ off, end int }

const deferredPatchSize = int(unsafe.Sizeof(deferredPatch{}))

// bytes is what d costs.
func (d *deferred) bytes() int { return cap(d.patches)*deferredPatchSize + cap(d.data) }

// each calls fn with every patch, in order.
func (d *deferred) each(fn func(off int, data []byte)) {
	start := 0
	for _, p := range d.patches {
		fn(p.off, d.data[start:p.end])
		start = p.end
	}
}

func (w *window) hold(k, v []byte) {
	if w.held == nil {
		w.held = make(map[string][]byte)
	}
	w.heldBytes += cap(v) - cap(w.held[string(k)])
	w.held[string(k)] = v
}

// deferPatches keeps copies of ops' patches (the window's values alias the
// log) for writeHeld.
func (w *window) deferPatches(k []byte, ops []entry) {
	if w.deferred == nil {
		w.deferred = make(map[string]*deferred)
	}
	d := w.deferred[string(k)]
	if d == nil {
		d = &deferred{}
		w.deferred[string(k)] = d
	}
	before := d.bytes()
	for _, e := range ops {
		off, data := w.patchOff(e), w.vals[e.idx]
		d.data = append(d.data, data...)
		// A patch right after the last one (APPEND) extends it.
		if last := len(d.patches) - 1; last >= 0 && d.patches[last].off+d.patches[last].end-d.start(last) == off {
			d.patches[last].end = len(d.data)
			continue
		}
		d.patches = append(d.patches, deferredPatch{off: off, end: len(d.data)})
	}
	w.heldBytes += d.bytes() - before
}

// start is where patch i's bytes begin in data.
func (d *deferred) start(i int) int {
	if i == 0 {
		return 0
	}
	return d.patches[i-1].end
}

func (w *window) markLarge(k []byte) {
	if w.large == nil {
		w.large = make(map[string]struct{})
	}
	w.large[string(k)] = struct{}{}
}

// holding reports whether values are held or patches deferred.
func (w *window) holding() bool { return len(w.held) > 0 || len(w.deferred) > 0 }

// dropHeld forgets k's held value or deferred patches, and that it is
// large: an operation other than a patch came after them.
func (w *window) dropHeld(k []byte) {
	if v, ok := w.held[string(k)]; ok {
		w.heldBytes -= cap(v)
		delete(w.held, string(k))
	}
	if d, ok := w.deferred[string(k)]; ok {
		w.heldBytes -= d.bytes()
		delete(w.deferred, string(k))
	}
	delete(w.large, string(k))
}

// patchedLen is the length of value record v once d is applied.
func patchedLen(v []byte, d *deferred) int {
	n := len(v)
	d.each(func(off int, data []byte) { n = max(n, 1+off+len(data)) })
	return n
}

// patched writes value record v with d applied into dst, of
// patchedLen(v, d) bytes. As patchBytes does one by one: a patch past the
// end extends the value, with zeros before it, and later patches win.
func patched(dst, v []byte, d *deferred) []byte {
	clear(dst[copy(dst, v):])
	d.each(func(off int, data []byte) { copy(dst[1+off:], data) }) // after the record's type byte
	return dst
}

// dropHeldSpan forgets the held values and deferred patches a range
// deletion of [start, end) removes: they are older than it.
func (w *window) dropHeldSpan(start, end []byte) {
	for k, v := range w.held {
		if k >= string(start) && k < string(end) {
			w.heldBytes -= cap(v)
			delete(w.held, k)
		}
	}
	for k, d := range w.deferred {
		if k >= string(start) && k < string(end) {
			w.heldBytes -= d.bytes()
			delete(w.deferred, k)
		}
	}
	for k := range w.large {
		if k >= string(start) && k < string(end) {
			delete(w.large, k)
		}
	}
}

// writeHeld writes the held values to b, and the large values with their
// deferred patches applied, and forgets them; b goes to Pebble whenever it
// is full, as a window's does (room), and before a large value is read
// back, so that Pebble has what came before its patches.
func (w *window) writeHeld(b *pebble.Batch) error {
	for k, v := range w.held {
		if err := w.room(b, len(k)+len(v)); err != nil {
			return err
		}
		if err := b.Set([]byte(k), v, nil); err != nil {
			return err
		}
	}
	clear(w.held)
	for k, d := range w.deferred {
		if !b.Empty() && w.apply != nil {
			if err := w.apply(b); err != nil {
				return err
			}
		}
		if w.rewrite != nil {
			if err := w.rewrite([]byte(k), d); err != nil {
				return err
			}
			continue
		}
		v, _, ok, err := w.base([]byte(k), -1)
		if err != nil {
			return err
		}
		if !ok || len(v) == 0 {
			continue // patches of nothing change nothing (writePatched)
		}
		v = patched(make([]byte, patchedLen(v, d)), v, d)
		if err := w.room(b, len(k)+len(v)); err != nil {
			return err
		}
		if err := b.Set([]byte(k), v, nil); err != nil {
			return err
		}
	}
	clear(w.deferred)
	w.heldBytes = 0
	return nil
}

// writeRanges writes the item range deletions, overlapping or touching ones
// as one, and marks dead every point operation (the entries are sorted)
// that arrived before a range covering its key. A sweep in key order keeps
// the ranges that started at or before the current key in a heap ordered by
// arrival, newest on top; those that ended are dropped from the top when
// they surface, which is enough because only the newest covering range
// matters.
func (w *window) writeRanges(b *pebble.Batch) error {
	rs := w.ranges
	slices.SortFunc(rs, func(x, y rangeDel) int { return bytes.Compare(w.rangeStart(x), w.rangeStart(y)) })
	h := w.heap[:0]
	less := func(i, j int) bool { return h[i].idx > h[j].idx }
	next := 0
	for i := range w.ents {
		k := w.key(w.ents[i])
		for next < len(rs) && bytes.Compare(w.rangeStart(rs[next]), k) <= 0 {
			h = append(h, rs[next])
			heapUp(h, len(h)-1, less)
			next++
		}
		for len(h) > 0 && bytes.Compare(w.rangeEnd(h[0]), k) <= 0 {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
			heapDown(h, 0, less)
		}
		if len(h) > 0 && h[0].idx > w.ents[i].idx {
			w.ents[i].dead = true
		}
	}
	w.heap = h[:0]
	start, end := w.rangeStart(rs[0]), w.rangeEnd(rs[0])
	for _, r := range rs[1:] {
		if bytes.Compare(w.rangeStart(r), end) <= 0 {
			if e := w.rangeEnd(r); bytes.Compare(e, end) > 0 {
				end = e
			}
			continue
		}
		if err := b.DeleteRange(start, end, nil); err != nil {
			return err
		}
		start, end = w.rangeStart(r), w.rangeEnd(r)
	}
	return b.DeleteRange(start, end, nil)
}

// heapUp and heapDown restore a binary heap ordered by less after a change
// at i.
func heapUp[T any](h []T, i int, less func(i, j int) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(i, p) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func heapDown[T any](h []T, i int, less func(i, j int) bool) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && less(c+1, c) {
			c++
		}
		if !less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// sort puts the entries in key order, keeping arrival order among equal
// keys. Abbreviations decide almost every comparison, so they are sorted by
// radix (stable, a pass per byte that is not the same in every entry); only
// runs of equal abbreviations then compare whole keys. On a window of random
// keys this is several times cheaper than a comparison sort, whose calls
// were a tenth of the applier's CPU under INCR of random keys.
func (w *window) sort() {
	w.abbreviate()
	if w.monotonic() {
		return
	}
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

// monotonic puts entries whose abbreviations strictly rise or strictly fall
// in order in one pass and reports true; false leaves them as they were.
// Pushes onto a list write positions one after another (LPUSH downwards,
// RPUSH upwards), and so do keys that grow with time: no sort needed.
func (w *window) monotonic() bool {
	e := w.ents
	up, down := true, true
	for i := 1; i < len(e) && (up || down); i++ {
		up = up && e[i-1].abbr < e[i].abbr
		down = down && e[i-1].abbr > e[i].abbr
	}
	if down && !up {
		slices.Reverse(e) // strictly falling: every key differs
	}
	return up || down
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
	w.lastRange = 0
	w.patches = 0
	keep := minRetainedScratch
	if w.maxScratch > 0 {
		keep = 2 * w.maxScratch
	}
	if w.memory() > int64(keep) {
		w.release()
		return
	}
	w.arena = w.arena[:0]
	w.ents = w.ents[:0]
	w.ranges = w.ranges[:0]
	clear(w.vals)
	w.vals = w.vals[:0]
}

// minRetainedScratch is how much scratch a window keeps from one flush to
// the next without a maxScratch (replay, tests).
const minRetainedScratch = 16 << 20

// release drops an empty window's scratch buffers; held values stay.
func (w *window) release() {
	w.arena, w.ents, w.spare, w.ranges, w.vals, w.heap = nil, nil, nil, nil, nil, nil
}

// deleteRange writes the window, then a deletion of [start, end).
func (w *window) deleteRange(b *pebble.Batch, start, end []byte) error {
	if err := w.flush(b); err != nil {
		return err
	}
	w.dropHeldSpan(start, end)
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
		if w.spill != nil && w.full() {
			if err := w.spill(); err != nil {
				return ops, err
			}
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
	case opDeleteItemRange:
		w.addItemRange(c.db, c.key, c.item, c.val)
	case opPatchValue:
		w.addPatch(c.db, c.key, c.off, c.val)
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
		return w.clearSpan(b, start, end)
	case opFlushAll:
		return w.clearSpan(b, []byte{keyspaceTag}, []byte{keyspaceEnd})
	case opPutServer:
		w.addServer(c.key, c.val, false)
	case opDeleteServer:
		w.addServer(c.key, nil, true)
	}
	return nil
}

// exciseMinBytes is how much of Pebble's tables a FLUSHALL or FLUSHDB must
// empty to excise them rather than write a range deletion. An excision
// costs a memtable flush and a manifest write, so back-to-back flushes of
// a small store would stall Pebble on memtables; past this size that is
// less than compacting the deleted data away.
const exciseMinBytes = 8 << 20

// clearSpan removes every record in [start, end): a whole database or the
// whole keyspace. A range deletion there would leave compactions to read
// and drop everything it covers, minutes of background work after the
// FLUSHALL of a large store; excising drops the tables inside the span at
// once and cuts the ones straddling it virtually, so the space comes back
// without rewriting. Operations before it are committed first, as the
// excision applies to Pebble directly.
func (w *window) clearSpan(b *pebble.Batch, start, end []byte) error {
	if w.excise == nil || w.diskUsage(start, end) < exciseMinBytes {
		return w.deleteRange(b, start, end)
	}
	if err := w.flush(b); err != nil {
		return err
	}
	w.dropHeldSpan(start, end)
	if !b.Empty() {
		if err := w.apply(b); err != nil {
			return err
		}
	}
	if w.excise(start, end) != nil {
		// A failed excision leaves Pebble as it was (a store in an older
		// format cannot excise at all); the range deletion still empties
		// the span.
		return b.DeleteRange(start, end, nil)
	}
	return nil
}

// bounds returns scratch buffers for a range's ends; Pebble copies them.
func (w *window) bounds(n, m int) ([]byte, []byte) {
	w.bound[0] = slices.Grow(w.bound[0][:0], n)[:n]
	w.bound[1] = slices.Grow(w.bound[1][:0], m)[:m]
	return w.bound[0], w.bound[1]
}
