package persistence

import (
	"errors"
	"fmt"
	"time"
)

// segmentBytes is the size past which the active segment is closed and a
// new one started.
const segmentBytes = 64 << 20

// runAppender is the appender goroutine: it appends each group commit to the
// active segment and hands it to the applier.
func (s *Store) runAppender() {
	defer close(s.appenderDone)
	for {
		select {
		case <-s.w.wake:
			s.commitMu.Lock()
			_ = s.commit(false)
			s.commitMu.Unlock()
		case <-s.rotateReq:
			s.commitMu.Lock()
			if s.seg != nil && s.seg.size.Load() > int64(len(segmentMagic)) && !s.w.inRun() {
				_ = s.rotate()
			}
			s.commitMu.Unlock()
		case <-s.stop:
			if s.testKilled.Load() {
				return
			}
			s.commitMu.Lock()
			// Close has set closed, so this commit takes the last changes.
			err := s.commit(false)
			if s.seg != nil {
				err = errors.Join(err, s.rotate())
			}
			s.commitMu.Unlock()
			s.closeErr = err
			return
		}
	}
}

// Sync returns once every change accepted so far is in the log under the
// fsync policy. The caller commits the batch itself unless a commit that
// takes it is already running, which saves handing it to the appender
// goroutine and being woken by it: an event loop calls Sync once per
// iteration for all the commands it ran, so its clients share one write
// (and, with appendfsync always, one fsync). No channel is made: holding
// commitMu means any commit that was running has finished. A run of
// frames (logfmt.go) is closed, with an empty frame if nothing else is
// left: until then start-up would drop it.
func (s *Store) Sync() {
	w := &s.w
	w.mu.Lock()
	var target uint64
	switch {
	case w.open.ops > 0:
		target = w.open.num
	case w.inflight != nil:
		target = w.inflight.num
	case w.runOpen:
		target = w.open.num
	default:
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	s.commitMu.Lock()
	if s.committed < target || w.inRun() {
		_ = s.commit(false)
	}
	s.commitMu.Unlock()
}

// SyncNow is Sync with an fsync whatever the policy: everything changed so
// far is durable when it returns. For start-up (an import's end), when
// nothing else commits or changes the policy.
func (s *Store) SyncNow() error {
	policy := s.Fsync()
	s.SetFsync(FsyncAlways)
	s.Sync()
	s.SetFsync(policy)
	// Sync commits nothing when nothing is pending: what earlier commits
	// wrote may still be unsynced.
	var err error
	s.commitMu.Lock()
	if s.seg != nil {
		err = s.syncSegment(s.seg)
	}
	s.commitMu.Unlock()
	return err
}

// commit appends the open batch to the log with one write(2), fsyncs under
// always, and releases its waiters. The caller holds commitMu. A failed
// write is logged and remembered, and its waiters are released anyway:
// blocking every client forever would not make the data any safer. The
// batch still goes to Pebble, which may well store it.
//
// forced is commitFull's commit of a batch that reached its share of the
// cap while the engine is still running what fills it: its frame begins
// or continues a run, and its waiters wait for the frame that ends the
// run, which any other commit writes (an empty one if the batch is
// empty). A run's frames go to the applier together once it ends, and
// the segment is not rotated in the middle of one, so start-up can drop
// an unfinished run by cutting the newest segment.
func (s *Store) commit(forced bool) error {
	w := &s.w
	w.mu.Lock()
	p := w.open
	if p.ops == 0 && (forced || !w.runOpen) {
		w.mu.Unlock()
		return nil
	}
	w.open = w.other(p)
	w.open.num = p.num + 1
	w.inflight = p
	w.otherCap = cap(p.buf)
	retain := 2 * w.batchLimit
	w.mu.Unlock()

	seq, off, err := s.appendFrame(p, forced)
	s.committed = p.num
	if err != nil {
		err = fmt.Errorf("change log write of %d records: %w", p.ops, err)
		s.log.Error("persistence commit failed", "err", err)
		// Maybe not in the log, so the applier gets a copy; a run with a
		// frame missing is no use held back.
		s.releaseRun()
		s.ap.push(applyItem{recs: p.buf[frameHeaderLen:], num: p.num, ops: p.ops, seg: seq})
		forced = false
	} else {
		s.commits.Add(1)
		s.records.Add(p.ops)
		s.bytes.Add(uint64(len(p.buf)))
		// The applier reads the frame back from the log when it gets to
		// it, so no copy waits in memory however far behind it is.
		it := applyItem{seg: seq, off: off, end: off + int64(len(p.buf)), num: p.num, last: p.num, ops: p.ops,
			bytes: int64(len(p.buf) - frameHeaderLen)}
		if forced {
			s.holdRun(it)
		} else {
			s.releaseRun()
			s.ap.pushRange(it)
		}
	}
	if cap(p.buf) > retain {
		p.buf = make([]byte, frameHeaderLen, initialBatchBytes)
	}
	p.buf = p.buf[:frameHeaderLen]

	w.mu.Lock()
	if err != nil {
		w.lastErr = err
	}
	if p.done != nil {
		if forced {
			w.runDone = append(w.runDone, p.done)
		} else {
			close(p.done)
		}
		p.done = nil
	}
	if !forced {
		for _, ch := range w.runDone {
			close(ch)
		}
		clear(w.runDone)
		w.runDone = w.runDone[:0]
	}
	w.runOpen = forced
	p.ops = 0
	w.inflight = nil
	w.otherCap = cap(p.buf)
	w.mu.Unlock()

	if !forced && s.seg != nil && s.seg.size.Load() >= s.segmentBytes {
		err = errors.Join(err, s.rotate())
	}
	return err
}

// holdRun keeps a run's frame from the applier until the run ends. The
// caller holds commitMu.
func (s *Store) holdRun(it applyItem) {
	r := &s.run
	switch {
	case r.end == 0:
		*r = it
	case r.onDisk(it.seg, it.off, it.num):
		r.end, r.last, r.ops, r.bytes = it.end, it.last, r.ops+it.ops, r.bytes+it.bytes
	default: // not after the run: only a failed write does that, which ends it
		s.ap.pushRange(*r)
		*r = it
	}
}

// releaseRun hands the frames of the run that ends to the applier.
func (s *Store) releaseRun() {
	if s.run.end != 0 {
		s.ap.pushRange(s.run)
		s.run = applyItem{}
	}
}

// appendFrame writes p to the active segment, creating it if needed, and
// returns the segment's number and the frame's offset in it; cont marks
// the frame as one a run goes on after.
func (s *Store) appendFrame(p *logBatch, cont bool) (uint64, int64, error) {
	if s.seg == nil {
		seg, err := createSegment(s.fsys, s.logDir, s.nextSeg)
		if err != nil {
			return 0, 0, err
		}
		s.nextSeg++
		seg.hist = &s.fsyncHist
		s.seg = seg
		s.active.Store(seg)
	}
	// The frame records what the last fsync covered: under always, all
	// the segment before it.
	sealFrame(p.buf, s.seg.synced.Load(), cont)
	off := s.seg.size.Load()
	if err := s.seg.write(p.buf); err != nil {
		return s.seg.seq, off, err
	}
	if s.Fsync() == FsyncAlways {
		return s.seg.seq, off, s.syncSegment(s.seg)
	}
	return s.seg.seq, off, nil
}

func (s *Store) syncSegment(seg *segment) error {
	synced, err := seg.sync()
	if synced {
		s.fsyncs.Add(1)
	}
	return err
}

// rotate closes the active segment (fsyncing it) and tells the applier it
// is complete; the next commit starts a new one.
func (s *Store) rotate() error {
	seg := s.seg
	s.seg = nil
	s.active.Store(nil)
	synced, err := seg.close()
	if synced {
		s.fsyncs.Add(1)
	}
	if err != nil {
		// The segment stays on disk until applied, so only its durability
		// before then is in doubt.
		err = fmt.Errorf("closing log segment %s: %w", seg.path, err)
		s.log.Error("persistence commit failed", "err", err)
		s.w.mu.Lock()
		s.w.lastErr = err
		s.w.mu.Unlock()
	}
	s.ap.push(applyItem{seg: seg.seq, segEnd: true})
	return err
}

// askRotate is the applier asking, after a quiet spell, for the active
// segment to be closed so that it can be applied and deleted.
func (s *Store) askRotate() {
	if seg := s.active.Load(); seg == nil || seg.size.Load() <= int64(len(segmentMagic)) {
		return
	}
	select {
	case s.rotateReq <- struct{}{}:
	default:
	}
}

// runTicker is the everysec fsync of the active segment.
func (s *Store) runTicker() {
	defer close(s.tickerDone)
	tick := s.testTick
	if tick == nil {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-tick:
			if s.Fsync() != FsyncEverySec {
				continue
			}
			if seg := s.active.Load(); seg != nil {
				if err := s.syncSegment(seg); err != nil {
					s.log.Error("change log fsync failed", "segment", seg.path, "err", err)
				}
			}
		case <-s.stop:
			return
		}
	}
}
