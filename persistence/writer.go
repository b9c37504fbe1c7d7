package persistence

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/revolver-db/revolver/engine"
)

// maxOpenBytes bounds the open batch while a commit is in flight: past it a
// change waits for that commit, so a slow disk slows writers instead of
// growing memory without limit.
const maxOpenBytes = 256 << 20

// maxRetainedBytes is how much of a committed batch's buffer is kept for
// reuse: enough that a busy server stops regrowing it on every commit.
const maxRetainedBytes = 16 << 20

// pending is one batch of changes and the channel closed once it is
// committed. done is made only when someone waits on it.
type pending struct {
	b    *pebble.Batch
	ops  uint64
	done chan struct{}
}

func (p *pending) doneChan() chan struct{} {
	if p.done == nil {
		p.done = make(chan struct{})
	}
	return p.done
}

// writer is the group-commit state. Change calls encode into open under mu;
// the writer goroutine swaps open for the other buffer and commits it as
// inflight, so changes arriving during a commit share the next one. One
// goroutine applies batches in swap order, so Pebble sees changes in call
// order.
type writer struct {
	mu       sync.Mutex
	bufs     [2]pending
	open     *pending
	inflight *pending
	closed   bool
	lastErr  error
	rejected bool // a rejected change was logged; log only the first
	log      *slog.Logger
	wake     chan struct{}
	// drainErr is the final commit's error, written by the writer goroutine
	// before it exits.
	drainErr error
}

func (w *writer) init(db *pebble.DB, log *slog.Logger) {
	for i := range w.bufs {
		w.bufs[i].b = db.NewBatch(pebble.WithMaxRetainedSizeBytes(maxRetainedBytes))
	}
	w.open = &w.bufs[0]
	w.log = log
	w.wake = make(chan struct{}, 1)
}

func (w *writer) other(p *pending) *pending {
	if p == &w.bufs[0] {
		return &w.bufs[1]
	}
	return &w.bufs[0]
}

// begin locks the writer and returns the open batch, or returns nil with the
// lock released when the change cannot be stored.
func (w *writer) begin(db int) *pebble.Batch {
	w.mu.Lock()
	var err error
	switch {
	case w.closed:
		err = fmt.Errorf("change for database %d dropped: store is closed", db)
	case db < 0 || db > maxDB:
		err = fmt.Errorf("change for database %d dropped: only databases 0-%d can be stored", db, maxDB)
	default:
		return w.open.b
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

// end records ops operations added since begin, unlocks, and wakes the
// writer goroutine if the open batch was empty.
func (w *writer) end(ops uint64) {
	p := w.open
	first := p.ops == 0
	p.ops += ops
	var wait chan struct{}
	if w.inflight != nil && p.b.Len() >= maxOpenBytes {
		wait = w.inflight.doneChan()
	}
	w.mu.Unlock()
	if first {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	if wait != nil {
		<-wait
	}
}

func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

func (w *writer) pending() (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.open.ops
	if w.inflight != nil {
		n += w.inflight.ops
	}
	return n, w.lastErr
}

func (w *writer) release() {
	for i := range w.bufs {
		_ = w.bufs[i].b.Close()
	}
}

// Barrier returns a channel closed once every change made so far is
// committed under the fsync policy, or nil if nothing is pending. The
// server waits on it before replying, so a reply never reveals a change
// that could still be lost.
func (s *Store) Barrier() <-chan struct{} {
	w := &s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open.ops > 0 {
		return w.open.doneChan()
	}
	if w.inflight != nil {
		return w.inflight.doneChan()
	}
	return nil
}

func (s *Store) runWriter() {
	defer close(s.writerDone)
	for {
		select {
		case <-s.w.wake:
			_ = s.commit()
		case <-s.stop:
			// Close has set closed, so this commit takes the last changes.
			s.w.drainErr = s.commit()
			return
		}
	}
}

// commit applies the open batch. A failed commit is logged and remembered,
// and its waiters are released anyway: blocking every client forever would
// not make the data any safer.
func (s *Store) commit() error {
	w := &s.w
	w.mu.Lock()
	p := w.open
	if p.ops == 0 {
		w.mu.Unlock()
		return nil
	}
	w.open = w.other(p)
	w.inflight = p
	w.mu.Unlock()

	size := p.b.Len()
	err := s.db.Apply(p.b, pebble.Sync)
	if err != nil {
		err = fmt.Errorf("commit of %d records: %w", p.ops, err)
		s.log.Error("persistence commit failed", "err", err)
	} else {
		s.commits.Add(1)
		s.records.Add(p.ops)
		s.bytes.Add(uint64(size))
	}
	p.b.Reset()

	w.mu.Lock()
	if err != nil {
		w.lastErr = err
	}
	if p.done != nil {
		close(p.done)
		p.done = nil
	}
	p.ops = 0
	w.inflight = nil
	w.mu.Unlock()
	return err
}

// The engine.ChangeSink methods below run under the engine lock: they only
// encode into the open batch, which copies the bytes.

// PutValue implements engine.ChangeSink.
func (s *Store) PutValue(db int, key []byte, t engine.Type, payload []byte) {
	b := s.w.begin(db)
	if b == nil {
		return
	}
	op := b.SetDeferred(recordKeyLen(key, nil), 1+len(payload))
	putRecordKey(op.Key, db, key, kindValue, nil)
	op.Value[0] = byte(t)
	copy(op.Value[1:], payload)
	_ = op.Finish()
	s.w.end(1)
}

// PutExpire implements engine.ChangeSink.
func (s *Store) PutExpire(db int, key []byte, at int64) {
	b := s.w.begin(db)
	if b == nil {
		return
	}
	op := b.SetDeferred(recordKeyLen(key, nil), 8)
	putRecordKey(op.Key, db, key, kindExpire, nil)
	putExpire(op.Value, at)
	_ = op.Finish()
	s.w.end(1)
}

// DeleteExpire implements engine.ChangeSink.
func (s *Store) DeleteExpire(db int, key []byte) {
	b := s.w.begin(db)
	if b == nil {
		return
	}
	s.deleteRecord(b, db, key, kindExpire, nil)
	s.w.end(1)
}

// PutItem implements engine.ChangeSink.
func (s *Store) PutItem(db int, key []byte, item []byte, val []byte) {
	b := s.w.begin(db)
	if b == nil {
		return
	}
	op := b.SetDeferred(recordKeyLen(key, item), len(val))
	putRecordKey(op.Key, db, key, kindItem, item)
	copy(op.Value, val)
	_ = op.Finish()
	s.w.end(1)
}

// DeleteItem implements engine.ChangeSink.
func (s *Store) DeleteItem(db int, key []byte, item []byte) {
	b := s.w.begin(db)
	if b == nil {
		return
	}
	s.deleteRecord(b, db, key, kindItem, item)
	s.w.end(1)
}

// DeleteKey implements engine.ChangeSink. Without items two point deletes
// suffice and leave no range tombstone behind.
func (s *Store) DeleteKey(db int, key []byte, items bool) {
	b := s.w.begin(db)
	if b == nil {
		return
	}
	if !items {
		s.deleteRecord(b, db, key, kindValue, nil)
		s.deleteRecord(b, db, key, kindExpire, nil)
		s.w.end(2)
		return
	}
	n := recordKeyLen(key, nil)
	op := b.DeleteRangeDeferred(n, n)
	putRecordKey(op.Key, db, key, kindValue, nil)
	putRecordKey(op.Value, db, key, kindEnd, nil)
	_ = op.Finish()
	s.w.end(1)
}

// FlushDB implements engine.ChangeSink.
func (s *Store) FlushDB(db int) {
	b := s.w.begin(db)
	if b == nil {
		return
	}
	op := b.DeleteRangeDeferred(dbStartLen, dbEndLen(db))
	putDBBounds(op.Key, op.Value, db)
	_ = op.Finish()
	s.w.end(1)
}

// FlushAll implements engine.ChangeSink.
func (s *Store) FlushAll() {
	b := s.w.begin(0)
	if b == nil {
		return
	}
	op := b.DeleteRangeDeferred(1, 1)
	op.Key[0], op.Value[0] = keyspaceTag, keyspaceEnd
	_ = op.Finish()
	s.w.end(1)
}

func (s *Store) deleteRecord(b *pebble.Batch, db int, key []byte, kind byte, item []byte) {
	op := b.DeleteDeferred(recordKeyLen(key, item))
	putRecordKey(op.Key, db, key, kind, item)
	_ = op.Finish()
}
