package engine

import (
	"testing"
	"time"
)

// engineFixture is an engine on the manual clock, recording its change
// records, with its lock held for the test: what a native family's
// white-box tests start from.
type engineFixture struct {
	t     *testing.T
	e     *Engine
	clock *ManualClock
	db    *DB
	rec   *listRecorder
}

func newEngineFixture(t *testing.T) engineFixture {
	e, clock, _ := newTestEngine(t)
	rec := &listRecorder{}
	e.SetSink(rec)
	e.Lock()
	t.Cleanup(e.Unlock)
	return engineFixture{t: t, e: e, clock: clock, db: e.DB(0), rec: rec}
}

// advance moves the clock and fires what came due.
func (f *engineFixture) advance(d time.Duration) {
	f.clock.Advance(d)
	f.e.Unlock()
	f.e.RunTimers()
	f.e.Lock()
}

// restart loads what the records written so far leave into a new engine
// with the same limits, its clock later by d, as a restart would.
func (f *engineFixture) restart(d time.Duration) engineFixture {
	store := listStore{}
	store.apply(f.rec.take())
	clock := NewManualClock(time.UnixMilli(f.e.Now()).Add(d))
	e := New(Options{Clock: clock})
	e.SetLimits(f.e.limits)
	e = store.loadInto(f.t, e)
	e.Lock()
	e.FinishLoad()
	f.t.Cleanup(e.Unlock)
	return engineFixture{t: f.t, e: e, clock: clock, db: e.DB(0), rec: &listRecorder{}}
}
