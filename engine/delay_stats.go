package engine

import "time"

// delayEngine is DELAY's per-engine state (family.go): DelayPop's scratch
// space and what INFO delay reports.
type delayEngine struct {
	due    []*delayNode
	out    []FiredTimer
	keys   int         // DELAY keys stored under a name
	totals delayTotals // their timers and leases, summed

	fired, redelivered, acked int64
	lateness                  lateWindow
	lateHist                  lateHistogram
}

var delayState = newFamilyState[delayEngine]()

// count counts a pop's deliveries at instant now.
func (st *delayEngine) count(now time.Time, fired []FiredTimer) {
	for _, f := range fired {
		st.fired++
		if f.redelivered {
			st.redelivered++
		}
		late := now.Sub(time.UnixMilli(f.ready))
		st.lateness.record(late)
		st.lateHist.record(late)
	}
}

func (st *delayEngine) resetStats() {
	st.fired, st.redelivered, st.acked = 0, 0, 0
	st.lateness = lateWindow{}
	st.lateHist = lateHistogram{}
}

// DelayLateHistogram is how late every delivery went out after its due
// time (or its lease's end), since start or CONFIG RESETSTAT.
func (e *Engine) DelayLateHistogram() LateCounts { return LateCounts(delayState.of(e).lateHist) }

// DelayStats are the figures of INFO delay.
type DelayStats struct {
	Keys   int   // DELAY keys
	Timers int64 // timers, leased ones included
	Leased int64 // timers out on a lease
	// Fired counts timers delivered by pops (redeliveries included),
	// Redelivered the deliveries of a timer whose lease ran out, Acked the
	// leases settled by DELAY.ACK.
	Fired, Redelivered, Acked int64
	// Lateness is how long after becoming due (or its lease's end) each of
	// the latest deliveries went out: the scheduler's precision for a
	// blocked consumer, plus the polling interval for one that polls.
	Lateness Lateness
}

// DelayStats gathers INFO delay's figures, from running totals: INFO costs
// the same with a million DELAY keys as with one.
func (e *Engine) DelayStats() DelayStats {
	st := delayState.of(e)
	return DelayStats{Keys: st.keys, Timers: st.totals.timers, Leased: st.totals.leased, Fired: st.fired,
		Redelivered: st.redelivered, Acked: st.acked, Lateness: st.lateness.summary()}
}

func (d *Delay) nativeFamily() string { return "delay" }
func (d *Delay) nativeItems() int64   { return int64(d.Len()) }
