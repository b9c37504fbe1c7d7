package flat

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestSizeClasses(t *testing.T) {
	for c, s := range classSizes {
		if s%8 != 0 {
			t.Errorf("class %d: size %d is not a multiple of 8", c, s)
		}
		if c > 0 {
			prev := classSizes[c-1]
			if s <= prev {
				t.Fatalf("class %d: size %d after %d", c, s, prev)
			}
			if prev >= 64 && float64(s)/float64(prev) > 1.18 {
				t.Errorf("classes %d and %d are %.1f%% apart", prev, s, 100*(float64(s)/float64(prev)-1))
			}
		}
		if waste := pageSize % s; waste > pageSize/100 {
			t.Errorf("class %d wastes %d bytes of each page", s, waste)
		}
	}
	if classSizes[len(classSizes)-1] != MaxSmall {
		t.Errorf("largest class %d, want %d", classSizes[len(classSizes)-1], MaxSmall)
	}
	for n := 0; n <= MaxSmall; n++ {
		c := classOf(n)
		if classSizes[c] < n || (c > 0 && classSizes[c-1] >= n) {
			t.Fatalf("classOf(%d) = size %d", n, classSizes[c])
		}
	}
	if got := SlotSize(49); got != 56 {
		t.Errorf("SlotSize(49) = %d", got)
	}
}

// fill writes a pattern derived from h into b, so an overlap between two
// live allocations shows as a mismatch.
func fill(b []byte, h Handle) {
	for i := range b {
		b[i] = byte(uint64(h)>>(8*(i%5))) ^ byte(i)
	}
}

func checkFill(t *testing.T, b []byte, h Handle) {
	t.Helper()
	want := make([]byte, len(b))
	fill(want, h)
	if !bytes.Equal(b, want) {
		t.Fatalf("handle %#x: contents overwritten", uint64(h))
	}
}

func TestArenaAllocFree(t *testing.T) {
	var a Arena
	rng := rand.New(rand.NewPCG(1, 2))
	live := map[Handle]int{}
	var requested int64
	for round := 0; round < 20; round++ {
		for i := 0; i < 3000; i++ {
			n := rng.IntN(200)
			if rng.IntN(50) == 0 {
				n = MaxSmall + rng.IntN(10000)
			}
			h, b := a.Alloc(n)
			if h == 0 || uint64(h) >= 1<<HandleBits {
				t.Fatalf("handle %#x", uint64(h))
			}
			if _, dup := live[h]; dup {
				t.Fatalf("handle %#x handed out twice", uint64(h))
			}
			if len(b) != n || cap(b) != SlotSize(n) {
				t.Fatalf("alloc %d: len %d cap %d", n, len(b), cap(b))
			}
			fill(b, h)
			live[h] = n
			requested += int64(n)
		}
		for h, n := range live {
			checkFill(t, a.Bytes(h)[:n], h)
			if rng.IntN(3) > 0 {
				a.Free(h, n)
				delete(live, h)
				requested -= int64(n)
			}
		}
		st := a.Stats()
		if st.Requested != requested {
			t.Fatalf("requested %d, want %d", st.Requested, requested)
		}
		checkArena(t, &a, live)
	}
	for h, n := range live {
		a.Free(h, n)
	}
	st := a.Stats()
	if st.Requested != 0 || st.Allocated != 0 || st.Pages != 0 || st.Large != 0 {
		t.Fatalf("after freeing everything: %+v", st)
	}
	if st.Held != int64(st.Pooled)*pageSize || st.Pooled > pagePool {
		t.Fatalf("held %d with %d pooled", st.Held, st.Pooled)
	}
}

// checkArena verifies the arena's bookkeeping against the live set: per-page
// and per-class live counts, free lists that cover exactly the free slots,
// partial lists that hold exactly the pages with room.
func checkArena(t *testing.T, a *Arena, live map[Handle]int) {
	t.Helper()
	perPage := map[uint32]int{}
	var slotBytes int64
	for h, n := range live {
		if h&largeFlag != 0 {
			slotBytes += int64(n)
			continue
		}
		perPage[uint32(h>>slotBits)]++
		slotBytes += int64(SlotSize(n))
	}
	if a.slotBytes != slotBytes {
		t.Fatalf("slot bytes %d, want %d", a.slotBytes, slotBytes)
	}
	classLive := make([]int, numClasses)
	classPages := make([]int, numClasses)
	for id := 1; id < len(a.pages); id++ {
		p := &a.pages[id]
		if p.buf == nil {
			if perPage[uint32(id)] != 0 {
				t.Fatalf("released page %d has live slots", id)
			}
			continue
		}
		c := int(p.class)
		classPages[c]++
		classLive[c] += int(p.live)
		if int(p.live) != perPage[uint32(id)] {
			t.Fatalf("page %d: live %d, want %d", id, p.live, perPage[uint32(id)])
		}
		size := classSizes[c]
		free := 0
		seen := map[int]bool{}
		for f := p.free; f != 0; {
			s := int(f - 1)
			if s >= int(p.bump) || seen[s] {
				t.Fatalf("page %d: free list loops or runs past bump at slot %d", id, s)
			}
			if _, isLive := live[Handle(id)<<slotBits|Handle(s)]; isLive {
				t.Fatalf("page %d: live slot %d is on the free list", id, s)
			}
			seen[s] = true
			free++
			f = uint16(p.buf[s*size]) | uint16(p.buf[s*size+1])<<8
		}
		if free+int(p.live) != int(p.bump) {
			t.Fatalf("page %d: %d free + %d live != bump %d", id, free, p.live, p.bump)
		}
		room := free > 0 || int(p.bump) < slotsPerPage(c)
		if room != (p.onPartial || p.evacuating) {
			t.Fatalf("page %d: room %v, on partial list %v", id, room, p.onPartial)
		}
	}
	for c := range a.classes {
		if a.classes[c].live != classLive[c] || a.classes[c].pages != classPages[c] {
			t.Fatalf("class %d: live %d pages %d, want %d %d", classSizes[c], a.classes[c].live, a.classes[c].pages, classLive[c], classPages[c])
		}
		n := 0
		for id := a.classes[c].partial; id != 0; id = a.pages[id].next {
			if !a.pages[id].onPartial || int(a.pages[id].class) != c {
				t.Fatalf("class %d: page %d on its partial list", c, id)
			}
			n++
		}
		for id := 1; id < len(a.pages); id++ {
			if a.pages[id].onPartial && int(a.pages[id].class) == c {
				n--
			}
		}
		if n != 0 {
			t.Fatalf("class %d: partial list and flags disagree", c)
		}
	}
}

func TestArenaReleasesEmptyPages(t *testing.T) {
	var a Arena
	var hs []Handle
	for i := 0; i < 10*(pageSize/48); i++ {
		h, b := a.Alloc(48)
		fill(b, h)
		hs = append(hs, h)
	}
	if st := a.Stats(); st.Pages != 10 {
		t.Fatalf("%d pages for 10 pages of slots", st.Pages)
	}
	// Free all but one slot of every page but the first: nine pages stay.
	per := pageSize / 48
	for i, h := range hs {
		if i >= per && i%per != 0 {
			a.Free(h, 48)
		}
	}
	if st := a.Stats(); st.Pages != 10 {
		t.Fatalf("%d pages held", st.Pages)
	}
	for i, h := range hs {
		if i >= per && i%per == 0 {
			a.Free(h, 48)
		}
	}
	st := a.Stats()
	if st.Pages != 1 || st.Pooled != pagePool {
		t.Fatalf("after emptying 9 pages: %d pages, %d pooled", st.Pages, st.Pooled)
	}
	for _, h := range hs[:per] {
		checkFill(t, a.Bytes(h)[:48], h)
	}
}

func TestArenaFreeChecks(t *testing.T) {
	var a Arena
	h, _ := a.Alloc(40)
	lh, _ := a.Alloc(MaxSmall + 1)
	for name, f := range map[string]func(){
		"wrong class":      func() { a.Free(h, 100) },
		"unknown page":     func() { a.Free(h+1<<slotBits, 40) },
		"zero":             func() { a.Free(0, 40) },
		"large wrong size": func() { a.Free(lh, MaxSmall) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	a.Free(lh, MaxSmall+1)
	a.Free(h, 33)
	if st := a.Stats(); st.Requested != 7 {
		// 40 in, 33 out: the size is only for the count, within the class.
		t.Fatalf("requested %d", st.Requested)
	}
}

func TestArenaCompact(t *testing.T) {
	var a Arena
	rng := rand.New(rand.NewPCG(3, 4))
	live := map[Handle]int{}
	for i := 0; i < 200000; i++ {
		n := 30 + rng.IntN(60)
		h, b := a.Alloc(n)
		fill(b, h)
		live[h] = n
	}
	for h, n := range live {
		if rng.IntN(10) < 8 {
			a.Free(h, n)
			delete(live, h)
		}
	}
	// Contents follow their handle's pattern; keep the pattern of the
	// original handle across moves.
	orig := map[Handle]Handle{}
	for h := range live {
		orig[h] = h
	}
	before := a.Stats()
	calls, moved := 0, 0
	for {
		n := a.Compact(16<<10, func(old, nw Handle) {
			if _, ok := live[old]; !ok {
				t.Fatalf("moved %#x, which is not live", uint64(old))
			}
			if _, ok := live[nw]; ok {
				t.Fatalf("moved onto live %#x", uint64(nw))
			}
			if old>>slotBits == nw>>slotBits {
				t.Fatalf("moved within its page")
			}
			live[nw], orig[nw] = live[old], orig[old]
			delete(live, old)
			delete(orig, old)
		})
		if n == 0 {
			break
		}
		if n > 16<<10+MaxSmall {
			t.Fatalf("moved %d bytes for a budget of %d", n, 16<<10)
		}
		moved += n
		calls++
		if calls%16 == 0 {
			checkArena(t, &a, live)
		}
		if calls > 10000 {
			t.Fatal("compaction does not finish")
		}
	}
	checkArena(t, &a, live)
	after := a.Stats()
	for h, n := range live {
		checkFill(t, a.Bytes(h)[:n], orig[h])
	}
	t.Logf("compaction: %d calls, %d KiB moved, pages %d -> %d, held/requested %.2f -> %.2f",
		calls, moved>>10, before.Pages, after.Pages, before.Fragmentation(), after.Fragmentation())
	if after.Pages > before.Pages/3 {
		t.Errorf("pages %d -> %d: compaction freed too little", before.Pages, after.Pages)
	}
	for _, c := range after.Classes {
		per := pageSize / c.Size
		if c.Slots-c.Live >= 2*per {
			t.Errorf("class %d: %d free slots in %d pages after compaction", c.Size, c.Slots-c.Live, c.Pages)
		}
	}
}
