package persistence

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"sync"

	"github.com/revolver-db/revolver/engine"
)

// initialBatchBytes is the size a log batch buffer starts at; it grows up
// to the budget's logBatch (and past it by one record at most).
const initialBatchBytes = 64 << 10

// logBatch is one group commit: the frame the change calls encode into, and
// the channel closed once it is in the log under the fsync policy (made
// only when someone waits).
type logBatch struct {
	buf  []byte // frame header, then records
	ops  uint64
	num  uint64 // position in the log: the first batch is 1
	done chan struct{}
}

func (p *logBatch) doneChan() chan struct{} {
	if p.done == nil {
		p.done = make(chan struct{})
	}
	return p.done
}

// writer is the group-commit state shared by the change calls, the appender
// goroutine and the applier. Change calls encode into open under mu; the
// appender swaps open for the other buffer and appends it to the log as
// inflight, so changes arriving during a write share the next one.
type writer struct {
	mu       sync.Mutex
	bufs     [2]logBatch
	open     *logBatch
	inflight *logBatch
	// otherCap is the capacity of the buffer that is not open, which the
	// appender changes without mu while it is inflight: Stats reads this.
	otherCap int
	closed   bool
	lastErr  error
	rejected bool // a rejected change was logged; log only the first
	log      *slog.Logger
	wake     chan struct{}
	// leaders counts callers that will Sync the changes they make (Lead):
	// while there are any, a batch's first change does not wake the
	// appender goroutine, which then commits only changes nobody syncs.
	leaders int
	// batchLimit is the budget's logBatch: a batch whose records reach it
	// is committed by the change call that filled it (Store.end).
	batchLimit int
	// runOpen: the last frame written began or continued a run (commit),
	// which the next commit of another kind ends; runDone are the Barrier
	// channels of the run's batches, closed then.
	runOpen bool
	runDone []chan struct{}

	// Applier progress. backlog counts record bytes accepted but not yet
	// applied to Pebble; past maxBacklog change calls wait for progress,
	// which is closed and replaced whenever the applier moves on.
	backlog    int64
	maxBacklog int64
	unapplied  uint64 // records accepted but not yet applied
	applied    uint64 // records applied
	appliedNum uint64 // num of the last applied batch
	progress   chan struct{}
}

func (w *writer) init(log *slog.Logger, maxBacklog int64, batchLimit int) {
	w.log = log
	w.maxBacklog = maxBacklog
	w.batchLimit = batchLimit
	w.wake = make(chan struct{}, 1)
	for i := range w.bufs {
		w.bufs[i].buf = make([]byte, frameHeaderLen, initialBatchBytes)
	}
	w.otherCap = initialBatchBytes
	w.open = &w.bufs[0]
	w.open.num = 1
}

// trim shrinks the batch buffers a burst grew back to their initial size,
// except the one a commit is writing.
func (w *writer) trim() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.bufs {
		p := &w.bufs[i]
		if p != w.inflight && p.ops == 0 && cap(p.buf) > initialBatchBytes {
			p.buf = make([]byte, frameHeaderLen, initialBatchBytes)
			if p != w.open {
				w.otherCap = cap(p.buf)
			}
		}
	}
}

func (w *writer) other(p *logBatch) *logBatch {
	if p == &w.bufs[0] {
		return &w.bufs[1]
	}
	return &w.bufs[0]
}

// begin locks the writer and returns the open buffer, or returns nil with
// the lock released when the change cannot be stored.
func (w *writer) begin(db int) []byte {
	w.mu.Lock()
	var err error
	switch {
	case w.closed:
		err = fmt.Errorf("change for database %d dropped: store is closed", db)
	case db < 0 || db > maxDB:
		err = fmt.Errorf("change for database %d dropped: only databases 0-%d can be stored", db, maxDB)
	default:
		return w.open.buf
	}
	w.lastErr = err
	first := !w.rejected
	w.rejected = true
	w.mu.Unlock()
	if first {
		w.log.Error("persistence rejected a change", "err", err)
	}
	return nil
}

// end stores the grown buffer b holding one more record and unlocks. It
// reports whether the batch has reached batchLimit, which the caller then
// commits, and whether the applier is more than maxBacklog behind.
func (w *writer) end(b []byte) (full, behind bool) {
	p := w.open
	w.backlog += int64(len(b) - len(p.buf))
	p.buf = b
	first := p.ops == 0
	p.ops++
	w.unapplied++
	behind = w.backlog > w.maxBacklog
	full = len(b)-frameHeaderLen >= w.batchLimit
	wake := first && w.leaders == 0 && !full
	w.mu.Unlock()
	if wake {
		w.wakeAppender()
	}
	return full, behind
}

// inRun reports whether a run of frames is open.
func (w *writer) inRun() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runOpen
}

// behind reports whether more than half of maxBacklog waits to be applied.
func (w *writer) behind() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.backlog > w.maxBacklog/2
}

// waitBacklog waits until the applier is back within maxBacklog. The
// caller holds the engine lock, so waiting here slows every client down to
// what Pebble absorbs. The backlog is log on disk, not memory: the bound
// keeps replay after a crash, and the disk the log takes, in proportion.
// Nobody waits while a run is open: the applier cannot pass it before the
// command writing it ends.
func (w *writer) waitBacklog() {
	for {
		w.mu.Lock()
		if w.backlog <= w.maxBacklog || w.closed || w.runOpen {
			w.mu.Unlock()
			return
		}
		ch := w.progressChan()
		w.mu.Unlock()
		<-ch
	}
}

// end finishes a change call. A batch that reached its share of the
// memory cap is committed here, by the caller: it holds the engine lock,
// so a command that writes a lot (a script, a large MSET) waits for the
// log write, and with always for the fsync, instead of the batch growing
// until the command ends. Its frame begins or continues a run, which the
// caller's Sync ends.
func (s *Store) end(b []byte) {
	full, behind := s.w.end(b)
	if full {
		s.commitFull()
	}
	if behind {
		s.w.waitBacklog()
	}
}

// commitFull commits the open batch if it is still full: another commit
// may have taken it meanwhile. A caller that does not lead (the timers'
// goroutine) will not Sync, so the appender ends the run.
func (s *Store) commitFull() {
	s.commitMu.Lock()
	w := &s.w
	w.mu.Lock()
	full := len(w.open.buf)-frameHeaderLen >= w.batchLimit
	w.mu.Unlock()
	if full {
		_ = s.commit(true)
		s.capCommits.Add(1)
	}
	s.commitMu.Unlock()
	w.mu.Lock()
	alone := w.leaders == 0
	w.mu.Unlock()
	if alone {
		w.wakeAppender()
	}
}

func (w *writer) wakeAppender() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Lead tells the store that the caller will call Sync, then EndLead, after
// the changes it is about to make: an event loop that executes commands
// and commits their changes itself. The appender goroutine is not woken for
// changes a leader will commit, which saves a thread wake-up per commit.
func (s *Store) Lead() {
	s.w.mu.Lock()
	s.w.leaders++
	s.w.mu.Unlock()
}

// EndLead ends a Lead. The appender goroutine commits what the last leader
// leaves behind: changes made by others after its Sync.
func (s *Store) EndLead() {
	w := &s.w
	w.mu.Lock()
	w.leaders--
	wake := w.leaders == 0 && w.open.ops > 0
	w.mu.Unlock()
	if wake {
		w.wakeAppender()
	}
}

func (w *writer) progressChan() chan struct{} {
	if w.progress == nil {
		w.progress = make(chan struct{})
	}
	return w.progress
}

// applyDone is the applier reporting batches through num as applied, with
// their records and record bytes.
func (w *writer) applyDone(num, ops uint64, bytes int64) {
	w.mu.Lock()
	w.appliedNum = max(w.appliedNum, num)
	w.applied += ops
	w.unapplied -= ops
	w.backlog -= bytes
	if w.progress != nil {
		close(w.progress)
		w.progress = nil
	}
	w.mu.Unlock()
}

// waitApplied waits until every batch through num is applied to Pebble.
// Someone must commit them, and end a run they are in: a caller under the
// engine lock Syncs first (Save).
func (s *Store) waitApplied(num uint64) {
	w := &s.w
	for {
		w.mu.Lock()
		if w.appliedNum >= num {
			w.mu.Unlock()
			return
		}
		ch := w.progressChan()
		w.mu.Unlock()
		s.ap.hurry()
		<-ch
	}
}

// lastNum is the num of the last batch holding a change made so far.
func (w *writer) lastNum() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open.ops > 0 {
		return w.open.num
	}
	return w.open.num - 1
}

func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

// Barrier returns a channel closed once every change made so far is in the
// log under the fsync policy (written with everysec and no, fsynced with
// always), or nil if nothing is pending: the appender goroutine commits
// it. A caller that would rather commit itself than wait calls Sync.
func (s *Store) Barrier() <-chan struct{} {
	w := &s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.open.ops > 0:
		return w.open.doneChan()
	case w.inflight != nil:
		return w.inflight.doneChan()
	case w.runOpen:
		// The appender ends the run with an empty frame.
		w.wakeAppender()
		return w.open.doneChan()
	}
	return nil
}

// The engine.ChangeSink methods below run under the engine lock: they only
// append a record to the open batch, which copies the bytes.

// PutValue implements engine.ChangeSink. The value is stored as the Pebble
// value record (type, payload), so the applier can use it as it is.
func (s *Store) PutValue(db int, key []byte, t engine.Type, payload []byte) {
	b := s.w.begin(db)
	if b == nil {
		return
	}
	b = appendHead(b, opPutValue, db, key)
	b = binary.AppendUvarint(b, uint64(len(payload))+1)
	b = append(b, byte(t))
	s.end(append(b, payload...))
}

// PatchValue implements engine.ChangeSink.
func (s *Store) PatchValue(db int, key []byte, off int, data []byte) {
	if b := s.w.begin(db); b != nil {
		b = binary.AppendUvarint(appendHead(b, opPatchValue, db, key), uint64(off))
		s.end(appendBytes(b, data))
	}
}

// PutExpire implements engine.ChangeSink. The deadline is stored as the
// Pebble expire record.
func (s *Store) PutExpire(db int, key []byte, at int64) {
	b := s.w.begin(db)
	if b == nil {
		return
	}
	b = appendHead(b, opPutExpire, db, key)
	s.end(binary.BigEndian.AppendUint64(b, uint64(at)))
}

// DeleteExpire implements engine.ChangeSink.
func (s *Store) DeleteExpire(db int, key []byte) {
	if b := s.w.begin(db); b != nil {
		s.end(appendHead(b, opDeleteExpire, db, key))
	}
}

// PutItem implements engine.ChangeSink.
func (s *Store) PutItem(db int, key []byte, item []byte, val []byte) {
	b := s.w.begin(db)
	if b == nil {
		return
	}
	b = appendHead(b, opPutItem, db, key)
	b = appendBytes(b, item)
	s.end(appendBytes(b, val))
}

// DeleteItem implements engine.ChangeSink.
func (s *Store) DeleteItem(db int, key []byte, item []byte) {
	if b := s.w.begin(db); b != nil {
		s.end(appendBytes(appendHead(b, opDeleteItem, db, key), item))
	}
}

// DeleteItemRange implements engine.ChangeSink.
func (s *Store) DeleteItemRange(db int, key []byte, from, to []byte) {
	if b := s.w.begin(db); b != nil {
		b = appendBytes(appendHead(b, opDeleteItemRange, db, key), from)
		s.end(appendBytes(b, to))
	}
}

// DeleteKey implements engine.ChangeSink.
func (s *Store) DeleteKey(db int, key []byte, items bool) {
	op := opDeleteKey
	if items {
		op = opDeleteKeyItems
	}
	if b := s.w.begin(db); b != nil {
		s.end(appendHead(b, op, db, key))
	}
}

// FlushDB implements engine.ChangeSink.
func (s *Store) FlushDB(db int) {
	if b := s.w.begin(db); b != nil {
		s.end(append(b, opFlushDB, byte(db)))
	}
}

// PutServer implements engine.ChangeSink.
func (s *Store) PutServer(name, val []byte) {
	if b := s.w.begin(0); b != nil {
		b = appendHead(b, opPutServer, 0, name)
		s.end(appendBytes(b, val))
	}
}

// DeleteServer implements engine.ChangeSink.
func (s *Store) DeleteServer(name []byte) {
	if b := s.w.begin(0); b != nil {
		s.end(appendHead(b, opDeleteServer, 0, name))
	}
}

// FlushAll implements engine.ChangeSink.
func (s *Store) FlushAll() {
	if b := s.w.begin(0); b != nil {
		s.end(append(b, opFlushAll, 0))
	}
}
