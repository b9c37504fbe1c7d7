package persistence

import (
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// pebbleHeap follows the batches Pebble keeps in the Go heap after they are
// applied. A batch of about half a memtable or more (a full apply window)
// is not copied into a memtable: Pebble queues the batch itself as a
// "flushable batch" and holds its bytes until a flush has written it to a
// table. Pebble reports those only mixed with its memtables, which it
// allocates outside the Go heap, so the store counts its own, for what
// maxmemory leaves out (Stats.BufferBytes).
type pebbleHeap struct {
	mu      sync.Mutex
	pending []flushableBatch // oldest first
	bytes   atomic.Int64     // their capacities
	// kept is set when Pebble kept a batch: even flushed, it stays
	// reachable until Pebble's memtable queue is reallocated (release).
	kept atomic.Bool
}

// flushableBatch is one batch Pebble holds: inuse is its size as Pebble
// reports flushes (records, without the header), held its buffer's
// capacity, what it costs.
type flushableBatch struct{ inuse, held int64 }

// batchHeaderLen is the length of a batch's header (sequence number and
// count), which Pebble's flush sizes leave out.
const batchHeaderLen = 12

// apply applies b and, when Pebble kept its bytes as a flushable batch,
// counts them. Pebble drops a flushable batch's buffer from b (its length
// is then a header's), which is how one is told.
func (p *pebbleHeap) apply(db *pebble.DB, b *pebble.Batch) error {
	repr := b.Repr()
	fb := flushableBatch{inuse: int64(len(repr) - batchHeaderLen), held: int64(cap(repr))}
	err := db.Apply(b, pebble.NoSync)
	if err == nil && b.Len() < len(repr) {
		p.mu.Lock()
		p.pending = append(p.pending, fb)
		p.mu.Unlock()
		p.bytes.Add(fb.held)
		p.kept.Store(true)
	}
	return err
}

// release makes Pebble let go of the flushable batches it has flushed.
// Pebble drops a flushed entry from its memtable queue by reslicing
// (queue = queue[n:]), so the array behind the queue keeps the entry, and
// the batch's whole buffer, reachable until an append reallocates it:
// two memtable rotations at most. A store that goes quiet after a batch
// of a large value kept that value's copy for good (a 40 MB SET: 64 MB of
// live heap); two flushes rotate the memtable twice. The applier calls it
// once idle, when a batch was kept since it last did.
func (p *pebbleHeap) release(db *pebble.DB) error {
	if !p.kept.Swap(false) {
		return nil
	}
	for range 2 {
		if err := db.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// flushed forgets the flushable batches a flush wrote out. Pebble flushes
// the oldest queue entries, memtables and flushable batches alike, and
// reports their count and bytes in use; the oldest pending batches that
// fit in both are taken as flushed. A memtable in the same flush can only
// make that take more, and so leave less out of maxmemory, never more.
func (p *pebbleHeap) flushed(info pebble.FlushInfo) {
	if info.Err != nil || info.Ingest {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	left, n, freed := int64(info.InputBytes), 0, int64(0)
	for n < len(p.pending) && n < info.Input && p.pending[n].inuse <= left {
		left -= p.pending[n].inuse
		freed += p.pending[n].held
		n++
	}
	p.pending = append(p.pending[:0], p.pending[n:]...)
	p.bytes.Add(-freed)
}
