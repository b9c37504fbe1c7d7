package flat

import "encoding/binary"

// compactState is where incremental compaction is: the page being emptied
// (0 when none) and the class to look at next.
type compactState struct {
	page      uint32
	nextClass int
}

// candidateScan bounds how many partial pages Compact looks at to choose
// the emptiest one, so choosing stays cheap in a class of thousands.
const candidateScan = 64

// Compact moves live slots out of the emptiest page of a class whose free
// slots add up to more than a page, into free slots of the class's other
// pages, so the emptied page can be released. It copies at most about budget
// bytes and returns how many it copied (0: nothing worth moving).
//
// For each slot it copies the bytes, then calls move(old, new) so the owner
// of the handle (the index) can point at the copy, then frees old. move must
// not allocate from or free into this arena. Compaction never runs on its own:
// the caller spreads it over time (a budget per tick).
func (a *Arena) Compact(budget int, move func(old, new Handle)) int {
	done := 0
	for done < budget {
		if a.compact.page == 0 && !a.pickEvacuee() {
			break
		}
		n := a.evacuate(budget-done, move)
		if n == 0 {
			break
		}
		done += n
	}
	return done
}

// pickEvacuee chooses the next page to empty, looking at the classes in
// turn, and takes it off its partial list. False when no class has a page
// whose live slots fit in the free slots of its other pages.
func (a *Arena) pickEvacuee() bool {
	for range numClasses {
		c := a.compact.nextClass
		a.compact.nextClass = (c + 1) % numClasses
		cs := &a.classes[c]
		per := slotsPerPage(c)
		holes := cs.pages*per - cs.live
		if cs.pages < 2 || holes < per {
			continue
		}
		best, bestLive := uint32(0), per
		id := cs.partial
		for i := 0; id != 0 && i < candidateScan; i++ {
			if l := int(a.pages[id].live); l < bestLive {
				best, bestLive = id, l
			}
			id = a.pages[id].next
		}
		if best == 0 || holes-(per-bestLive) < bestLive {
			continue
		}
		a.unlinkPartial(best)
		a.pages[best].evacuating = true
		a.compact.page = best
		return true
	}
	return false
}

// evacuate moves live slots of the page being emptied, up to about budget
// bytes, and returns the bytes moved.
func (a *Arena) evacuate(budget int, move func(old, new Handle)) int {
	id := a.compact.page
	c := int(a.pages[id].class)
	size := classSizes[c]
	if a.classes[c].partial == 0 {
		// No room left elsewhere (the class filled up since the page was
		// chosen): give up on this page rather than open a new one.
		a.stopEvacuating()
		return 0
	}
	var free [pageSize / minClass / 64]uint64
	p := &a.pages[id]
	for f := p.free; f != 0; {
		s := int(f - 1)
		free[s/64] |= 1 << (s % 64)
		f = binary.LittleEndian.Uint16(p.buf[s*size:])
	}
	done := 0
	bump := int(p.bump)
	for s := 0; s < bump && done < budget; s++ {
		if free[s/64]&(1<<(s%64)) != 0 {
			continue
		}
		if a.classes[c].partial == 0 {
			a.stopEvacuating()
			break
		}
		old := Handle(id)<<slotBits | Handle(s)
		nh := a.allocSlot(c)
		copy(a.Bytes(nh), a.Bytes(old))
		move(old, nh)
		last := a.pages[id].live == 1
		a.freeSlot(old) // releases the page after its last slot
		done += size
		if last {
			break
		}
	}
	return done
}

// stopEvacuating returns the page being emptied to normal use.
func (a *Arena) stopEvacuating() {
	id := a.compact.page
	a.compact.page = 0
	p := &a.pages[id]
	p.evacuating = false
	if p.free != 0 || int(p.bump) < slotsPerPage(int(p.class)) {
		a.linkPartial(id)
	}
}
