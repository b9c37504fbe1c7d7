package persistence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Applier tuning.
const (
	// applyChunkBytes is how many record bytes go into one Pebble batch:
	// large enough to amortize the commit, small enough that writers held
	// back by the backlog bound see progress often.
	applyChunkBytes = 16 << 20
	// Under light load the applier waits up to applyDelay for
	// minApplyBytes of records: sorting a larger window pays for itself in
	// cheaper Pebble inserts, and CPU the server needs is scarcer than
	// applier lag.
	minApplyBytes = 16 << 20
	applyDelay    = 200 * time.Millisecond
	// holdMinBytes is the length from which a patched value is held
	// between windows rather than rewritten into Pebble by each
	// (window.held); maxHeldBytes bounds what is held. Held values are
	// written at the latest when their segment is retired, once per 64 MB
	// of log: a 12.5 MB bitmap taking SETBITs was rewritten five times a
	// second before.
	holdMinBytes = 64 << 10
	maxHeldBytes = 64 << 20
	// idleRotate is how long the log must be quiet before the applier asks
	// for the active segment to be closed, so that it can be deleted and a
	// later start has nothing to replay.
	idleRotate = time.Second
)

// applier keeps Pebble up to date with the log, off the acknowledgment
// path. The appender goroutine queues each batch once it is in the log, and
// a marker once a segment is complete; one goroutine applies them in order.
// When a complete segment is applied, Pebble is synced and the segment
// deleted. Replaying a segment that is already (partly) in Pebble is
// harmless: every operation overwrites or removes, whatever was there.
type applier struct {
	mu     sync.Mutex
	queue  []applyItem
	queued int64     // record bytes in queue
	since  time.Time // when queue became non-empty
	wake   chan struct{}
	rush   atomic.Bool
	// wantHeld asks the applier to write its held values to Pebble:
	// someone waits for the store to have every change.
	wantHeld atomic.Bool
	// Queued records are copied into chunks; the chunks behind queue are
	// held, and come back to free once applied.
	chunk []byte
	held  [][]byte
	free  [][]byte
	// chunkBytes is the capacity of every chunk alive: queued, being
	// applied or kept for reuse.
	chunkBytes int64
	// heldValues mirrors win.heldBytes for Stats, which runs on other
	// goroutines.
	heldValues atomic.Int64
	// pebble applies batches and counts those Pebble keeps.
	pebble *pebbleHeap

	// Used by the applier goroutine only (and by replay before it starts).
	win     window
	batch   *pebble.Batch
	retired []uint64 // complete segments applied but not yet deleted
	// lastNum is the last batch applied; heldFrom, when values are held,
	// the first batch whose changes they may hold, so Pebble has every
	// batch before it (what the applier reports as applied).
	lastNum, heldFrom uint64
	// failed is set after a failed Pebble write: from then on no segment is
	// deleted, so the next start replays them.
	failed bool
}

// applyItem is one group commit in the log, or a marker that segment seg
// is complete.
type applyItem struct {
	recs   []byte
	num    uint64
	ops    uint64
	seg    uint64
	segEnd bool
}

func (a *applier) init(db *pebble.DB, ph *pebbleHeap) {
	a.wake = make(chan struct{}, 1)
	a.pebble = ph
	a.batch = db.NewBatch(pebble.WithMaxRetainedSizeBytes(maxRetainedBytes))
	a.win.base = func(key []byte) ([]byte, bool, error) {
		v, closer, err := db.Get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		v = bytes.Clone(v)
		return v, true, closer.Close()
	}
	a.win.apply = func(b *pebble.Batch) error {
		err := ph.apply(db, b)
		b.Reset()
		return err
	}
	a.win.excise = func(start, end []byte) error {
		return db.Excise(context.Background(), pebble.KeyRange{Start: start, End: end})
	}
	a.win.diskUsage = func(start, end []byte) uint64 {
		n, err := db.EstimateDiskUsage(start, end)
		if err != nil {
			return 0 // a range deletion is always correct
		}
		return n
	}
}

// push queues a written batch, copying its records, or a segment marker.
func (a *applier) push(it applyItem) {
	a.mu.Lock()
	if n := len(it.recs); n > 0 {
		if cap(a.chunk)-len(a.chunk) < n {
			a.newChunk(n)
		}
		off := len(a.chunk)
		a.chunk = append(a.chunk, it.recs...)
		it.recs = a.chunk[off:len(a.chunk):len(a.chunk)]
	}
	first := len(a.queue) == 0
	if first {
		a.since = time.Now()
	}
	before := a.queued
	a.queue = append(a.queue, it)
	a.queued += int64(len(it.recs))
	full := before < minApplyBytes && a.queued >= minApplyBytes
	a.mu.Unlock()
	// Waking the applier for every group commit would cost the
	// acknowledgment path a context switch each; it only needs to know
	// when to start its timer and when the window is full.
	if first || full {
		a.poke()
	}
}

// newChunk starts a chunk with room for n bytes. The caller holds mu.
func (a *applier) newChunk(n int) {
	if k := len(a.free); k > 0 && cap(a.free[k-1]) >= n {
		a.chunk = a.free[k-1]
		a.free = a.free[:k-1]
	} else {
		a.chunk = make([]byte, 0, max(n, minApplyBytes))
		a.chunkBytes += int64(cap(a.chunk))
	}
	a.held = append(a.held, a.chunk)
}

// memoryBytes is what the applier holds in memory: its chunks and the
// patched values held between windows.
func (a *applier) memoryBytes() int64 {
	a.mu.Lock()
	n := a.chunkBytes
	a.mu.Unlock()
	return n + a.heldValues.Load()
}

// recycle takes back chunks whose records are applied.
func (a *applier) recycle(chunks [][]byte) {
	a.mu.Lock()
	for _, c := range chunks {
		if len(a.free) < 4 && cap(c) <= maxRetainedBytes {
			a.free = append(a.free, c[:0])
		} else {
			a.chunkBytes -= int64(cap(c))
		}
	}
	a.mu.Unlock()
}

func (a *applier) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// hurry makes the applier take what is queued now instead of waiting for a
// larger window: someone waits for it.
func (a *applier) hurry() {
	a.rush.Store(true)
	a.wantHeld.Store(true)
	a.poke()
}

// ready returns the queued items, and the chunks holding their records, if
// there are enough to make a good window or they waited long enough;
// otherwise how long to wait.
func (a *applier) ready(items []applyItem, chunks [][]byte, force bool) ([]applyItem, [][]byte, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) == 0 {
		return items, chunks, -1
	}
	if wait := applyDelay - time.Since(a.since); !force && a.queued < minApplyBytes && wait > 0 && !a.rush.Load() {
		return items, chunks, wait
	}
	a.rush.Store(false)
	items = append(items, a.queue...)
	clear(a.queue)
	a.queue = a.queue[:0]
	a.queued = 0
	chunks = append(chunks, a.held...)
	clear(a.held)
	a.held = a.held[:0]
	a.chunk = nil // later records go to a new chunk
	return items, chunks, 0
}

func (s *Store) runApplier() {
	defer close(s.applierDone)
	a := &s.ap
	timer := time.NewTimer(idleRotate)
	defer timer.Stop()
	var items []applyItem
	var chunks [][]byte
	stopping := false
	a.win.holdMin = s.holdMin
	for {
		var wait time.Duration
		items, chunks, wait = a.ready(items[:0], chunks[:0], stopping)
		if len(items) > 0 {
			s.applyItems(items)
			clear(items)
			a.recycle(chunks)
			clear(chunks)
			a.heldValues.Store(int64(a.win.heldBytes))
			continue
		}
		if a.wantHeld.Swap(false) || stopping {
			s.writeHeld()
			a.heldValues.Store(int64(a.win.heldBytes))
		}
		if stopping {
			return // the appender has exited, so nothing more comes
		}
		idle := wait < 0
		if idle {
			wait = idleRotate
		}
		timer.Reset(wait)
		select {
		case <-a.wake:
		case <-timer.C:
			if idle {
				s.askRotate()
				s.trimIdle()
			}
		case <-s.applierStop:
			if s.testKilled.Load() {
				return
			}
			stopping = true
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// applyItems applies queued batches in chunks, reporting each chunk's
// progress, then deletes the segments that are now fully in Pebble.
func (s *Store) applyItems(items []applyItem) {
	a := &s.ap
	start, size := 0, int64(0)
	for i, p := range items {
		if p.segEnd {
			a.retired = append(a.retired, p.seg)
			continue
		}
		if s.testApplyHook != nil {
			s.testApplyHook()
		}
		if _, err := a.win.addRecords(a.batch, p.recs); err != nil {
			s.applyFailed(fmt.Errorf("log batch %d in segment %s: %w", p.num, segmentName(p.seg), err))
		}
		size += int64(len(p.recs))
		if size >= applyChunkBytes || i == len(items)-1 {
			s.commitApplied(items[start : i+1])
			start, size = i+1, 0
		}
	}
	if start < len(items) {
		s.commitApplied(items[start:])
	}
	if len(a.retired) > 0 {
		s.writeHeld() // the segments' changes must all be in Pebble
	}
	s.retire()
}

// commitApplied writes the window to Pebble and reports the batches done.
func (s *Store) commitApplied(used []applyItem) {
	a := &s.ap
	if err := a.commit(s.db); err != nil {
		s.applyFailed(err)
	}
	var first, num, ops uint64
	var bytes int64
	for _, p := range used {
		if p.segEnd {
			continue
		}
		if first == 0 {
			first = p.num
		}
		num, ops, bytes = p.num, ops+p.ops, bytes+int64(len(p.recs))
	}
	if num == 0 {
		return
	}
	a.lastNum = num
	switch {
	case len(a.win.held) == 0:
		a.heldFrom = 0
	case a.heldFrom == 0:
		a.heldFrom = first
	}
	if a.win.heldBytes > maxHeldBytes {
		s.writeHeld()
	}
	through := num
	if a.heldFrom != 0 {
		through = a.heldFrom - 1
	}
	s.w.applyDone(through, ops, bytes)
}

// trimIdle gives back what a burst of writes left allocated once the store
// has been quiet for idleRotate: the recycled apply chunks (up to 64 MB),
// the window's scratch and Pebble batch (up to 16 MB each) and the log's
// batch buffers (up to 16 MB each). The next burst allocates them again,
// which costs it far less than the memory costs an idle server.
func (s *Store) trimIdle() {
	a := &s.ap
	a.mu.Lock()
	for _, c := range a.free {
		a.chunkBytes -= int64(cap(c))
	}
	clear(a.free)
	a.free = nil
	a.mu.Unlock()
	if len(a.win.ents) == 0 && len(a.win.ranges) == 0 { // every pass ends with the window flushed
		a.win.release()
	}
	if a.batch.Empty() {
		_ = a.batch.Close()
		a.batch = s.db.NewBatch(pebble.WithMaxRetainedSizeBytes(maxRetainedBytes))
	}
	s.w.trim()
}

// writeHeld writes the window's held values to Pebble, which then has
// every batch applied so far.
func (s *Store) writeHeld() {
	a := &s.ap
	if len(a.win.held) == 0 {
		return
	}
	err := a.win.writeHeld(a.batch)
	if err == nil {
		err = a.pebble.apply(s.db, a.batch)
	}
	a.batch.Reset()
	if err != nil {
		s.applyFailed(fmt.Errorf("writing held values: %w", err))
	}
	a.heldFrom = 0
	s.w.applyDone(a.lastNum, 0, 0)
}

// commit writes the window into the batch and applies it without a sync:
// retire syncs once per segment instead.
func (a *applier) commit(db *pebble.DB) error {
	err := a.win.flush(a.batch)
	if err == nil && !a.batch.Empty() {
		err = a.pebble.apply(db, a.batch)
	}
	a.batch.Reset()
	return err
}

func (s *Store) applyFailed(err error) {
	s.ap.failed = true
	s.log.Error("applying the change log to the store failed; the log is kept for the next start", "err", err)
	s.w.mu.Lock()
	s.w.lastErr = err
	s.w.mu.Unlock()
}

// retire makes Pebble durable and deletes the complete segments it now
// holds.
func (s *Store) retire() {
	a := &s.ap
	if len(a.retired) == 0 || a.failed {
		return
	}
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		s.applyFailed(fmt.Errorf("syncing the store: %w", err))
		return
	}
	if s.testKeepLog {
		a.retired = a.retired[:0]
		return
	}
	var err error
	for _, seq := range a.retired {
		if rerr := s.fsys.Remove(filepath.Join(s.logDir, segmentName(seq))); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	a.retired = a.retired[:0]
	if err == nil {
		err = syncDir(s.fsys, s.logDir)
	}
	if err != nil {
		s.log.Error("deleting applied log segments failed", "err", err)
	}
}
