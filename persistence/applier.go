package persistence

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Applier tuning.
const (
	// Under light load the applier waits up to applyDelay for
	// minApplyBytes of records: a larger pass costs fewer wake-ups, and
	// CPU the server needs is scarcer than applier lag. The records wait
	// in the log on disk, not in memory.
	minApplyBytes = 16 << 20
	applyDelay    = 200 * time.Millisecond
	// holdMinBytes is the length from which a patched value is held
	// between windows rather than rewritten into Pebble by each
	// (window.held); the budget's held share bounds what is held. Held
	// values are written at the latest when their segment is retired,
	// once per 64 MB of log: a 12.5 MB bitmap taking SETBITs was
	// rewritten five times a second before.
	holdMinBytes = 64 << 10
	// idleRotate is how long the log must be quiet before the applier asks
	// for the active segment to be closed, so that it can be deleted and a
	// later start has nothing to replay.
	idleRotate = time.Second
	// memTableSample is how often the applier reads the size of Pebble's
	// memtables for Stats (DB.Metrics takes Pebble's lock).
	memTableSample = 100 * time.Millisecond
)

// applier keeps Pebble up to date with the log, off the acknowledgment
// path. The appender goroutine queues where each batch is in the log once
// it is written there, and a marker once a segment is complete; one
// goroutine reads them back and applies them in order, a bounded piece at
// a time, so what it holds does not depend on how far behind it is. When a
// complete segment is applied, Pebble is synced and the segment deleted.
// Replaying a segment that is already (partly) in Pebble is harmless:
// every operation overwrites or removes, whatever was there.
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
	// budget is the cap's split; SetMaxMemory replaces it.
	budget atomic.Pointer[budget]
	// For Stats, which runs on other goroutines: copies is the capacity of
	// records queued in memory (batches whose log write failed);
	// footprint what the applier goroutine holds between pieces (read
	// buffer, window scratch, Pebble batch); heldValues mirrors
	// win.heldBytes; memTables is the size of Pebble's memtables, read
	// every memTableSample.
	copies     atomic.Int64
	footprint  atomic.Int64
	heldValues atomic.Int64
	memTables  atomic.Int64
	// pebble applies batches and counts those Pebble keeps.
	pebble *pebbleHeap
	// views are the views asked for (view.go), oldest first, under mu;
	// viewsPending counts them, so that the applier's check is a load.
	views        []viewPoint
	viewsPending atomic.Int32

	// Used by the applier goroutine only (and by replay before it starts).
	win   window
	batch *pebble.Batch
	buf   []byte // frames read back from the log
	// seg is the segment being read, segSeq its number.
	seg        vfs.File
	segSeq     uint64
	retired    []uint64 // complete segments applied but not yet deleted
	lastSample time.Time
	// lastNum is the last batch applied; heldFrom, when values are held,
	// the first batch whose changes they may hold, so Pebble has every
	// batch before it (what the applier reports as applied).
	lastNum, heldFrom uint64
	// failed is set after a failed Pebble write or log read: from then on
	// no segment is deleted, so the next start replays them.
	failed bool
}

// applyItem is a run of group commits written one after another in the
// log, a group commit whose write failed (its records copied in memory),
// or a marker that segment seg is complete.
type applyItem struct {
	recs     []byte
	seg      uint64
	off, end int64  // frames [off, end) of segment seg
	num      uint64 // the first batch's; the others follow one by one
	last     uint64 // the last batch's
	ops      uint64
	bytes    int64 // record bytes
	segEnd   bool
}

// onDisk reports whether the frame at off of seg, batch num, extends it.
func (it *applyItem) onDisk(seg uint64, off int64, num uint64) bool {
	return !it.segEnd && it.recs == nil && it.seg == seg && it.end == off && it.last+1 == num
}

func (a *applier) init(db *pebble.DB, ph *pebbleHeap, b budget) {
	a.wake = make(chan struct{}, 1)
	a.pebble = ph
	a.budget.Store(&b)
	a.batch = db.NewBatch(pebble.WithMaxRetainedSizeBytes(2 * b.batch))
	a.win.base = func(key []byte, limit int) ([]byte, int, bool, error) {
		v, closer, err := db.Get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			return nil, 0, false, nil
		}
		if err != nil {
			return nil, 0, false, err
		}
		n := len(v)
		if limit >= 0 && n > limit {
			v = nil
		} else {
			v = bytes.Clone(v)
		}
		return v, n, true, closer.Close()
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
	a.win.spill = func() error { return a.commit(db) }
	a.win.rewrite = func(key []byte, d *deferred) error {
		v, closer, err := db.Get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		n := patchedLen(v, d)
		// Sized exactly and not closed after: Close would put the value's
		// copy in Pebble's batch pool.
		b := db.NewBatchWithSize(batchHeaderLen + 1 + 2*binary.MaxVarintLen64 + len(key) + n)
		op := b.SetDeferred(len(key), n)
		copy(op.Key, key)
		empty := len(v) == 0 // a value record without its type byte: patches change nothing
		patched(op.Value, v, d)
		if err := closer.Close(); err != nil || empty {
			return err
		}
		if err := op.Finish(); err != nil {
			return err
		}
		return ph.apply(db, b)
	}
	a.setLimits(b)
}

// setLimits sizes the window from the budget.
func (a *applier) setLimits(b budget) {
	a.win.maxBytes = b.batch
	a.win.maxScratch = b.window
	a.win.maxHeld = b.held
}

// pushRange queues frames written one after another in a segment (it
// has no recs). Frames that follow the last ones queued join their item.
func (a *applier) pushRange(it applyItem) {
	a.mu.Lock()
	k := len(a.queue) - 1
	if k >= 0 && a.queue[k].onDisk(it.seg, it.off, it.num) {
		q := &a.queue[k]
		q.end, q.last, q.ops, q.bytes = it.end, it.last, q.ops+it.ops, q.bytes+it.bytes
	} else {
		a.queue = append(a.queue, it)
	}
	a.added(it.bytes, k < 0)
}

// push queues a group commit whose log write failed, copying its records,
// or a segment marker.
func (a *applier) push(it applyItem) {
	if len(it.recs) > 0 {
		it.recs = bytes.Clone(it.recs)
		it.bytes = int64(len(it.recs))
		it.last = it.num
		a.copies.Add(int64(cap(it.recs)))
	}
	a.mu.Lock()
	first := len(a.queue) == 0
	a.queue = append(a.queue, it)
	a.added(it.bytes, first)
}

// added counts n more record bytes queued and unlocks mu. Waking the
// applier for every group commit would cost the acknowledgment path a
// context switch each; it only needs to know when to start its timer and
// when the pass is large enough.
func (a *applier) added(n int64, first bool) {
	if first {
		a.since = time.Now()
	}
	before := a.queued
	a.queued += n
	full := before < minApplyBytes && a.queued >= minApplyBytes
	a.mu.Unlock()
	if first || full {
		a.poke()
	}
}

// memoryBytes is what the applier holds: its read buffer, window and
// Pebble batch, copies of failed batches, and the patched values held
// between windows.
func (a *applier) memoryBytes() int64 {
	return a.footprint.Load() + a.copies.Load() + a.heldValues.Load()
}

// publish updates what Stats reads of the applier goroutine's memory.
func (a *applier) publish() {
	n := int64(cap(a.buf)) + a.win.memory()
	if a.batch != nil {
		n += int64(cap(a.batch.Repr()))
	}
	a.footprint.Store(n)
	a.heldValues.Store(int64(a.win.heldBytes))
}

// sampleMemTables reads the size of Pebble's memtables, zombies (flushed
// but still referenced) included, at most every memTableSample.
func (a *applier) sampleMemTables(db *pebble.DB, force bool) {
	if !force && time.Since(a.lastSample) < memTableSample {
		return
	}
	a.lastSample = time.Now()
	m := db.Metrics()
	a.memTables.Store(int64(m.MemTable.Size + m.MemTable.ZombieSize))
}

func (a *applier) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// hurry makes the applier take what is queued now instead of waiting for a
// larger pass: someone waits for it.
func (a *applier) hurry() {
	a.rush.Store(true)
	a.wantHeld.Store(true)
	a.poke()
}

// ready returns the queued items if there are enough to make a good pass
// or they waited long enough; otherwise how long to wait.
func (a *applier) ready(items []applyItem, force bool) ([]applyItem, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) == 0 {
		return items, -1
	}
	if wait := applyDelay - time.Since(a.since); !force && a.queued < minApplyBytes && wait > 0 && !a.rush.Load() {
		return items, wait
	}
	a.rush.Store(false)
	items = append(items, a.queue...)
	clear(a.queue)
	a.queue = a.queue[:0]
	a.queued = 0
	return items, 0
}

// applierNice is the nice value of the applier's thread. Applying is
// background work (acknowledgments wait only for the log), so it yields the
// CPU to the event loops and catches up when they are idle; the memory cap
// on what is accepted but not applied (persistence-max-memory) is the
// backstop when they never are. Pinned to one CPU, redis-benchmark -P 16:
// 1.3-1.6x the throughput and half the p99 of an applier at nice 0, for
// the same CPU per request (bench/results/2026-11-29-tails.md). The
// windows are applied on a thread at that priority (nice.go); once more
// than half the backlog bound is waiting, at normal priority instead
// (applyInTime), so that the applier keeps pace before writers have to
// wait for it under the engine lock.
const applierNice = 10

func (s *Store) runApplier() {
	defer close(s.applierDone)
	low := takeNiceWorker()
	defer low.release()
	applyInTime := func(items []applyItem) {
		if s.w.behind() {
			s.urgentApplies.Add(1)
			s.applyItems(items)
			return
		}
		low.run(func() { s.applyItems(items) })
	}
	a := &s.ap
	timer := time.NewTimer(idleRotate)
	defer timer.Stop()
	var items []applyItem
	stopping := false
	a.win.holdMin = s.holdMin
	for {
		var wait time.Duration
		items, wait = a.ready(items[:0], stopping)
		if len(items) > 0 {
			applyInTime(items)
			clear(items)
			a.sampleMemTables(s.db, false)
			continue
		}
		if a.wantHeld.Swap(false) || stopping {
			s.writeHeld()
			a.publish()
		}
		s.takeViewsApplied()
		if stopping {
			a.closeSegment()
			s.failViews()
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
				a.sampleMemTables(s.db, true)
			}
		case <-s.applierStop:
			if s.testKilled.Load() {
				a.closeSegment()
				s.failViews()
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

// applyItems applies queued batches, reporting progress as it goes, then
// deletes the segments that are now fully in Pebble.
func (s *Store) applyItems(items []applyItem) {
	a := &s.ap
	if b := a.budget.Load(); a.win.maxBytes != b.batch || a.win.maxScratch != b.window || a.win.maxHeld != b.held {
		a.setLimits(*b)
	}
	for _, it := range items {
		switch {
		case it.segEnd:
			if a.segSeq == it.seg {
				a.closeSegment()
			}
			a.retired = append(a.retired, it.seg)
		case it.recs != nil:
			s.applyRecords(it.recs, it.num, it.ops)
			a.copies.Add(-int64(cap(it.recs)))
		default:
			s.applyFrames(it)
		}
	}
	if len(a.retired) > 0 {
		s.writeHeld() // the segments' changes must all be in Pebble
	}
	s.retire()
	a.publish()
}

// applyRecords applies the records of one batch held in memory.
func (s *Store) applyRecords(recs []byte, num, ops uint64) {
	if s.testApplyHook != nil {
		s.testApplyHook()
	}
	if _, err := s.addBatch(num, recs); err != nil {
		s.applyFailed(fmt.Errorf("log batch %d: %w", num, err))
	}
	s.commitApplied(num, num, ops, int64(len(recs)))
}

// applyFrames reads the frames of it back from the log a piece at a time
// (a frame larger than a piece whole) and applies each piece. The frames
// were written by this process and are read back from the page cache; the
// checksum is still checked, as replay would.
func (s *Store) applyFrames(it applyItem) {
	a := &s.ap
	piece := a.budget.Load().read
	off, num := it.off, it.num
	for off < it.end {
		n := int(min(it.end-off, int64(piece)))
		buf, err := s.readLog(it.seg, off, n)
		p, first := 0, num
		var ops uint64
		var recBytes int64
		for err == nil && p < len(buf) {
			var frame []byte
			if frame, err = frameAt(buf[p:], it.end-off-int64(p)); err != nil {
				break
			}
			if frame == nil { // the frame goes on past the piece
				if p > 0 {
					break
				}
				need := frameHeaderLen
				if len(buf) >= frameHeaderLen {
					need += int(binary.LittleEndian.Uint32(buf))
				}
				if buf, err = s.readLog(it.seg, off, need); err != nil {
					break
				}
				continue
			}
			if s.testApplyHook != nil {
				s.testApplyHook()
			}
			var k uint64
			k, err = s.addBatch(num, frame[frameHeaderLen:])
			ops += k
			recBytes += int64(len(frame) - frameHeaderLen)
			p += len(frame)
			num++
		}
		if err != nil {
			// The batches left are reported applied, so that writers do
			// not wait for them; the failure keeps the log for the next
			// start, which replays it.
			s.applyFailed(fmt.Errorf("log segment %s at offset %d: %w", segmentName(it.seg), off+int64(p), err))
			s.commitApplied(first, it.last, it.ops, it.bytes)
			return
		}
		s.commitApplied(first, num-1, ops, recBytes)
		it.ops -= ops
		it.bytes -= recBytes
		off += int64(p)
		if cap(a.buf) > 2*piece {
			a.buf = nil // grown for one large frame, which the window no longer aliases
		}
	}
}

// frameAt returns the frame at the start of buf after checking it, or nil
// if buf ends before it does. left is how much of the run is left from
// buf's start: a frame that claims more is corrupt.
func frameAt(buf []byte, left int64) ([]byte, error) {
	if len(buf) < frameHeaderLen {
		if left > int64(len(buf)) {
			return nil, nil
		}
		return nil, errors.New("incomplete frame header")
	}
	n := int64(binary.LittleEndian.Uint32(buf[0:4]))
	if frameHeaderLen+n > left {
		return nil, fmt.Errorf("frame of %d bytes runs past the batches written", n)
	}
	if frameHeaderLen+n > int64(len(buf)) {
		return nil, nil
	}
	frame := buf[:frameHeaderLen+n]
	if binary.LittleEndian.Uint32(frame[4:8]) != frameCRC(frame[0:4], frame[8:12], frame[frameHeaderLen:]) {
		return nil, errors.New("frame checksum mismatch")
	}
	return frame, nil
}

// readLog reads n bytes at off of segment seq into the applier's buffer,
// which the window's values then alias until its next flush.
func (s *Store) readLog(seq uint64, off int64, n int) ([]byte, error) {
	a := &s.ap
	if a.seg == nil || a.segSeq != seq {
		a.closeSegment()
		f, err := s.fsys.Open(filepath.Join(s.logDir, segmentName(seq)))
		if err != nil {
			return nil, err
		}
		a.seg, a.segSeq = f, seq
	}
	if cap(a.buf) < n {
		a.buf = make([]byte, n)
	}
	buf := a.buf[:n]
	if k, err := a.seg.ReadAt(buf, off); k < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// closeSegment closes the segment being read, if any.
func (a *applier) closeSegment() {
	if a.seg != nil {
		_ = a.seg.Close()
		a.seg, a.segSeq = nil, 0
	}
}

// commitApplied writes the window to Pebble and reports batches first
// through num done, with their records and record bytes.
func (s *Store) commitApplied(first, num, ops uint64, bytes int64) {
	a := &s.ap
	if err := a.commit(s.db); err != nil {
		s.applyFailed(err)
	}
	a.lastNum = num
	switch {
	case !a.win.holding():
		a.heldFrom = 0
	case a.heldFrom == 0:
		a.heldFrom = first
	}
	if a.win.heldBytes > a.budget.Load().held {
		s.writeHeld()
	}
	through := num
	if a.heldFrom != 0 {
		through = a.heldFrom - 1
	}
	s.w.applyDone(through, ops, bytes)
	a.publish()
}

// trimIdle gives back what a burst of writes left allocated once the store
// has been quiet for idleRotate: the read buffer, the window's scratch and
// Pebble batch, the log's batch buffers, and batches Pebble kept. The next burst allocates them
// again, which costs it far less than the memory costs an idle server.
func (s *Store) trimIdle() {
	a := &s.ap
	a.buf = nil
	if len(a.win.ents) == 0 && len(a.win.ranges) == 0 { // every pass ends with the window flushed
		a.win.release()
	}
	if a.batch.Empty() {
		// Not closed: Close puts a batch, buffer and all, in Pebble's pool,
		// where the next NewBatch finds it.
		a.batch = s.db.NewBatch(pebble.WithMaxRetainedSizeBytes(2 * a.budget.Load().batch))
	}
	s.w.trim()
	if err := a.pebble.release(s.db); err != nil {
		s.log.Warn("flushing the store while idle failed", "err", err)
	}
	a.publish()
}

// writeHeld writes the window's held values to Pebble, which then has
// every batch applied so far.
func (s *Store) writeHeld() {
	a := &s.ap
	if !a.win.holding() {
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
