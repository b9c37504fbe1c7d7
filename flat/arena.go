package flat

import (
	"encoding/binary"
	"fmt"
)

// Handle names one allocation of an Arena; 0 names none. It uses at most
// HandleBits bits, so a Table slot can keep it next to hash bits.
type Handle uint64

// HandleBits is the width of a Handle.
const HandleBits = 40

const (
	pageShift = 16
	pageSize  = 1 << pageShift // 64 KiB: a large object for Go, freed as a whole span

	// slotBits bits of a small handle name the slot in its page (a page
	// holds at most pageSize/16 = 4096 slots); the bits above name the page.
	slotBits = 12
	slotMask = 1<<slotBits - 1

	// largeFlag marks a handle naming a dedicated block; the bits below it
	// are the block's index.
	largeFlag = Handle(1) << (HandleBits - 1)
	maxPages  = 1 << (HandleBits - 1 - slotBits)

	minClass = 16
	// MaxSmall is the largest allocation served from a page; larger ones get
	// a block of their own.
	MaxSmall = 4096

	// pagePool empty page buffers are kept for reuse, so a class that
	// empties and refills (one key set and deleted in a loop) does not
	// allocate a page each time.
	pagePool = 2
)

// classSizes are the slot sizes: 8-byte steps up to 128 bytes (most
// records are small, and a step there wastes 3.5 bytes on average), then
// about 6.25% apart, up to MaxSmall (12.5% steps left a 1 KB value's record
// 10% of slack, which a cache of such values pays in keys it can hold). Records are read bytewise and the free
// list's link is 2 bytes, so 8-byte alignment is plenty.
var classSizes []int

// classOf8 maps (n+7)/8 to the class of an n-byte allocation.
var classOf8 [MaxSmall/8 + 1]uint8

func init() {
	var sizes []int
	for s := minClass; s < MaxSmall; {
		sizes = append(sizes, s)
		if s < 128 {
			s += 8
		} else {
			s = max((s+s/16+4)&^7, s+8) // 6.25% up, to the nearest 8
		}
	}
	sizes = append(sizes, MaxSmall)
	// Grow each class to the largest size with as many slots per page, so
	// a page's tail is never more than a few bytes (this merges a few
	// classes near 2 KiB).
	for _, s := range sizes {
		s = (pageSize / (pageSize / s)) &^ 7
		if n := len(classSizes); n == 0 || classSizes[n-1] != s {
			classSizes = append(classSizes, s)
		}
	}
	if len(classSizes) != numClasses {
		panic(fmt.Sprintf("flat: %d size classes, numClasses is %d", len(classSizes), numClasses))
	}
	c := 0
	for u := range classOf8 {
		for classSizes[c] < u*8 {
			c++
		}
		classOf8[u] = uint8(c)
	}
}

// numClasses is len(classSizes), fixed by the rule above.
const numClasses = 72

func classOf(n int) int { return int(classOf8[(n+7)>>3]) }

// SlotSize is the memory an allocation of n bytes takes: its class's slot
// size, or n for a block of its own.
func SlotSize(n int) int {
	if n > MaxSmall {
		return n
	}
	return classSizes[classOf(n)]
}

func slotsPerPage(class int) int { return pageSize / classSizes[class] }

// page is one pageSize buffer cut into slots of one class. Slots below bump
// have been handed out at least once; the free ones among them form a list
// threaded through the slots themselves (2 bytes: 1 + the next free slot's
// index). A page on its class's partial list has a free slot.
type page struct {
	buf        []byte // nil once released
	class      uint8
	onPartial  bool
	evacuating bool // being emptied by Compact: takes no allocations
	live       uint16
	bump       uint16
	free       uint16 // 1 + index of the first free slot; 0 when none
	prev, next uint32 // partial-list neighbours (page ids; 0 = none)
}

type classState struct {
	partial uint32 // first page with a free slot; 0 when none
	pages   int    // pages held by the class
	live    int    // slots in use
}

// Arena is a slab allocator whose memory holds no pointers: the collector
// marks each 64 KiB page as one object and never looks inside. Allocations
// of up to MaxSmall bytes take a slot of the smallest class that fits; larger
// ones get a []byte of their own in a side table.
//
// Free lists are per page, with a per-class list of the pages that have free
// slots: releasing an emptied page then unlinks one page instead of walking a
// class-wide list for its slots.
type Arena struct {
	pages   []page   // index 0 unused, so no handle is 0
	freeIDs []uint32 // ids of released pages, for reuse
	pool    [][]byte // empty page buffers kept for reuse
	classes [numClasses]classState

	large     [][]byte
	largeFree []uint32

	requested  int64 // bytes asked for by live allocations
	slotBytes  int64 // bytes of the slots and blocks they occupy
	largeBytes int64
	held       int64 // bytes of pages (in use and pooled) and blocks

	compact compactState
}

// Alloc returns a new allocation of n bytes: its handle and its bytes (len
// n, cap the slot's size). The contents are not zeroed.
func (a *Arena) Alloc(n int) (Handle, []byte) {
	if n < 0 {
		panic("flat: negative allocation")
	}
	if n > MaxSmall {
		return a.allocLarge(n)
	}
	c := classOf(n)
	h := a.allocSlot(c)
	a.requested += int64(n)
	size := classSizes[c]
	off := int(h&slotMask) * size
	return h, a.pages[h>>slotBits].buf[off : off+n : off+size]
}

// allocSlot takes a slot of class c, from the first page with a free one or
// a new page. It leaves the requested-bytes count to its caller.
func (a *Arena) allocSlot(c int) Handle {
	cs := &a.classes[c]
	id := cs.partial
	if id == 0 {
		id = a.newPage(c)
	}
	p := &a.pages[id]
	size := classSizes[c]
	var slot int
	if p.free != 0 {
		slot = int(p.free - 1)
		p.free = binary.LittleEndian.Uint16(p.buf[slot*size:])
	} else {
		slot = int(p.bump)
		p.bump++
	}
	p.live++
	cs.live++
	a.slotBytes += int64(size)
	if p.free == 0 && int(p.bump) == slotsPerPage(c) {
		a.unlinkPartial(id)
	}
	return Handle(id)<<slotBits | Handle(slot)
}

func (a *Arena) newPage(c int) uint32 {
	var id uint32
	if n := len(a.freeIDs); n > 0 {
		id = a.freeIDs[n-1]
		a.freeIDs = a.freeIDs[:n-1]
	} else {
		if len(a.pages) == 0 {
			a.pages = append(a.pages, page{}) // id 0 is never used
		}
		if len(a.pages) >= maxPages {
			panic("flat: arena full")
		}
		id = uint32(len(a.pages))
		a.pages = append(a.pages, page{})
	}
	var buf []byte
	if n := len(a.pool); n > 0 {
		buf = a.pool[n-1]
		a.pool[n-1] = nil
		a.pool = a.pool[:n-1]
	} else {
		buf = make([]byte, pageSize)
		a.hold(pageSize)
	}
	a.pages[id] = page{buf: buf, class: uint8(c)}
	a.classes[c].pages++
	a.linkPartial(id)
	return id
}

// linkPartial puts page id at the head of its class's partial list: a page
// that just gained a free slot is mostly full, and filling it first lets
// the emptier pages drain and be released.
func (a *Arena) linkPartial(id uint32) {
	p := &a.pages[id]
	cs := &a.classes[p.class]
	p.onPartial = true
	p.prev = 0
	p.next = cs.partial
	if cs.partial != 0 {
		a.pages[cs.partial].prev = id
	}
	cs.partial = id
}

func (a *Arena) unlinkPartial(id uint32) {
	p := &a.pages[id]
	if !p.onPartial {
		return
	}
	if p.prev != 0 {
		a.pages[p.prev].next = p.next
	} else {
		a.classes[p.class].partial = p.next
	}
	if p.next != 0 {
		a.pages[p.next].prev = p.prev
	}
	p.prev, p.next, p.onPartial = 0, 0, false
}

// Bytes returns the whole of h's slot (or block): a view into the arena,
// valid until h is freed or moved. A slot may be longer than what was
// allocated; the record format knows its own length.
func (a *Arena) Bytes(h Handle) []byte {
	if h&largeFlag != 0 {
		return a.large[h&^largeFlag]
	}
	p := &a.pages[h>>slotBits]
	size := classSizes[p.class]
	off := int(h&slotMask) * size
	return p.buf[off : off+size : off+size]
}

// Free releases h, an allocation of n bytes (the n given to Alloc). The
// size only keeps the requested-bytes count; a size of another class
// panics, to catch a wrong handle early.
func (a *Arena) Free(h Handle, n int) {
	if h&largeFlag != 0 {
		a.freeLarge(h, n)
		return
	}
	id := uint32(h >> slotBits)
	if h == 0 || int(id) >= len(a.pages) || a.pages[id].buf == nil {
		panic(fmt.Sprintf("flat: free of unknown handle %#x", uint64(h)))
	}
	if n > MaxSmall || classOf(n) != int(a.pages[id].class) {
		panic(fmt.Sprintf("flat: free of %#x with size %d, not its class %d", uint64(h), n, classSizes[a.pages[id].class]))
	}
	a.requested -= int64(n)
	a.freeSlot(h)
}

// freeSlot returns a slot to its page's free list and releases the page
// when that was its last live slot.
func (a *Arena) freeSlot(h Handle) {
	id := uint32(h >> slotBits)
	p := &a.pages[id]
	c := int(p.class)
	size := classSizes[c]
	slot := int(h & slotMask)
	binary.LittleEndian.PutUint16(p.buf[slot*size:], p.free)
	p.free = uint16(slot + 1)
	p.live--
	cs := &a.classes[c]
	cs.live--
	a.slotBytes -= int64(size)
	if p.live == 0 {
		a.releasePage(id)
		return
	}
	if !p.onPartial && !p.evacuating {
		a.linkPartial(id)
	}
}

// releasePage drops an empty page: its buffer goes to the pool or to the
// collector (which can then return it to the OS), its id to reuse.
func (a *Arena) releasePage(id uint32) {
	a.unlinkPartial(id)
	p := &a.pages[id]
	if len(a.pool) < pagePool {
		a.pool = append(a.pool, p.buf)
	} else {
		a.hold(-pageSize)
	}
	a.classes[p.class].pages--
	if a.compact.page == id {
		a.compact.page = 0
	}
	*p = page{}
	a.freeIDs = append(a.freeIDs, id)
}

func (a *Arena) allocLarge(n int) (Handle, []byte) {
	buf := make([]byte, n)
	var i uint32
	if k := len(a.largeFree); k > 0 {
		i = a.largeFree[k-1]
		a.largeFree = a.largeFree[:k-1]
		a.large[i] = buf
	} else {
		if Handle(len(a.large)) >= largeFlag {
			panic("flat: too many large blocks")
		}
		i = uint32(len(a.large))
		a.large = append(a.large, buf)
	}
	a.requested += int64(n)
	a.slotBytes += int64(n)
	a.largeBytes += int64(n)
	a.hold(int64(n))
	return largeFlag | Handle(i), buf
}

func (a *Arena) freeLarge(h Handle, n int) {
	i := uint32(h &^ largeFlag)
	if int(i) >= len(a.large) || a.large[i] == nil {
		panic(fmt.Sprintf("flat: free of unknown handle %#x", uint64(h)))
	}
	if len(a.large[i]) != n {
		panic(fmt.Sprintf("flat: free of %#x with size %d, not its %d", uint64(h), n, len(a.large[i])))
	}
	a.large[i] = nil
	a.largeFree = append(a.largeFree, i)
	a.requested -= int64(n)
	a.slotBytes -= int64(n)
	a.largeBytes -= int64(n)
	a.hold(-int64(n))
}

// Reset frees everything at once (FLUSHDB): pages and blocks go to the
// collector.
func (a *Arena) Reset() { *a = Arena{} }

// ArenaStats describe an arena's memory, for INFO and MEMORY.
type ArenaStats struct {
	Requested int64 // bytes asked for by live allocations
	Allocated int64 // bytes of the slots and blocks they occupy (>= Requested)
	Held      int64 // bytes of pages held (in use or pooled) plus blocks (>= Allocated)
	Pages     int   // pages in use
	Pooled    int   // empty pages kept for reuse
	Large     int   // dedicated blocks
	Classes   []ClassStats
}

// ClassStats describe one size class; classes with no page are left out.
type ClassStats struct {
	Size  int // slot size
	Pages int // pages of this class
	Live  int // slots in use
	Slots int // slots in those pages
}

// Fragmentation is Held/Requested: 1 means every byte held was asked for.
func (s ArenaStats) Fragmentation() float64 {
	if s.Requested == 0 {
		return 1
	}
	return float64(s.Held) / float64(s.Requested)
}

// Stats reports the arena's memory use.
func (a *Arena) Stats() ArenaStats {
	s := ArenaStats{
		Requested: a.requested,
		Allocated: a.slotBytes,
		Pooled:    len(a.pool),
		Large:     len(a.large) - len(a.largeFree),
	}
	for c := range a.classes {
		cs := &a.classes[c]
		s.Pages += cs.pages
		if cs.pages > 0 {
			s.Classes = append(s.Classes, ClassStats{
				Size: classSizes[c], Pages: cs.pages, Live: cs.live, Slots: cs.pages * slotsPerPage(c),
			})
		}
	}
	s.Held = int64(s.Pages+s.Pooled)*pageSize + a.largeBytes
	return s
}
