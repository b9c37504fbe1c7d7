package persistence

import "fmt"

// A view is a Pebble snapshot holding exactly the changes made up to a
// point of the change log: a replica's full sync is written from it in the
// background, so that the event loop is not stopped for the length of the
// transfer (Redis forks for it). The applier takes it: Pebble trails the
// log, and the applier is the one place that knows when Pebble holds every
// change up to the point and none after it. Values it holds back (large
// patched values, window.go) are written first.

// viewPoint is a view asked for at a point of the log: batch num with the
// first bytes of its records, or all of it when bytes < 0.
type viewPoint struct {
	num   uint64
	bytes int
	done  func(*Checkpoint, error)
}

// ViewThen asks for a view of the store holding every change made so far
// and calls done with it, from the applier's goroutine, once Pebble has
// them: soon, unless the applier is far behind. The caller holds the
// engine lock, so that what "so far" means is one point of the keyspace's
// history; it must Close the view. done gets an error instead if the
// store closes first.
func (s *Store) ViewThen(done func(*Checkpoint, error)) error {
	w := &s.w
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	p := viewPoint{num: w.open.num - 1, bytes: -1, done: done}
	if w.open.ops > 0 {
		p.num, p.bytes = w.open.num, len(w.open.buf)-frameHeaderLen
	}
	// Queued before mu is let go: Close marks the writer closed before
	// the applier exits, which answers every view queued by then.
	a := &s.ap
	a.mu.Lock()
	a.views = append(a.views, p)
	a.mu.Unlock()
	a.viewsPending.Add(1)
	w.mu.Unlock()
	w.wakeAppender() // the open batch goes to the log now, not at the next tick
	a.hurry()
	return nil
}

// nextView returns the oldest view asked for, if any. Applier goroutine.
func (a *applier) nextView() (viewPoint, bool) {
	if a.viewsPending.Load() == 0 {
		return viewPoint{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.views) == 0 {
		return viewPoint{}, false
	}
	return a.views[0], true
}

// takeView makes Pebble hold every change the applier has added (the
// window and held values written), snapshots it for the oldest view and
// hands it over. Applier goroutine.
func (s *Store) takeView() {
	a := &s.ap
	a.mu.Lock()
	p := a.views[0]
	a.views = a.views[1:]
	a.mu.Unlock()
	a.viewsPending.Add(-1)
	err := a.commit(s.db)
	if err == nil && a.win.holding() {
		s.writeHeld()
	}
	if err != nil || a.failed {
		p.done(nil, fmt.Errorf("store view: the store could not apply its log: %v", err))
		return
	}
	p.done(&Checkpoint{db: s.db.NewSnapshot(), dir: s.dir}, nil)
}

// addBatch adds the records of batch num to the window, taking first every
// view asked for at a point before the batch or inside it as the applier
// reaches that point. Applier goroutine.
func (s *Store) addBatch(num uint64, recs []byte) (uint64, error) {
	a := &s.ap
	var ops uint64
	added := 0
	for {
		p, ok := a.nextView()
		if !ok || p.num > num || p.num == num && p.bytes < 0 {
			break
		}
		if n := min(p.bytes, len(recs)); p.num == num && n > added {
			k, err := a.win.addRecords(a.batch, recs[added:n])
			ops, added = ops+k, n
			if err != nil {
				return ops, err
			}
		}
		s.takeView()
	}
	k, err := a.win.addRecords(a.batch, recs[added:])
	return ops + k, err
}

// takeViewsApplied takes the views asked for at points the applier has
// passed while it is idle, every batch through lastNum added. A point
// inside a batch was taken as the batch was added. Applier goroutine.
func (s *Store) takeViewsApplied() {
	for {
		p, ok := s.ap.nextView()
		if !ok || p.num > s.ap.lastNum {
			return
		}
		s.takeView()
	}
}

// failViews answers the views still asked for once the store closes.
func (s *Store) failViews() {
	for {
		p, ok := s.ap.nextView()
		if !ok {
			return
		}
		s.ap.mu.Lock()
		s.ap.views = s.ap.views[1:]
		s.ap.mu.Unlock()
		s.ap.viewsPending.Add(-1)
		p.done(nil, errClosed)
	}
}
