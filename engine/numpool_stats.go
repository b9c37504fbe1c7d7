package engine

// numpoolEngine is NUMPOOL's per-engine state (family.go): what INFO
// numpool reports.
type numpoolEngine struct {
	keys   int              // NUMPOOL keys stored under a name
	counts [numStates]int64 // their numbers by state, summed

	calls, hangups, leaseEnds, noneFree int64
}

var numpoolState = newFamilyState[numpoolEngine]()

func (st *numpoolEngine) resetStats() {
	st.calls, st.hangups, st.leaseEnds, st.noneFree = 0, 0, 0, 0
}

// NumpoolStats are the figures of INFO numpool.
type NumpoolStats struct {
	Keys   int
	Counts [numStates]int64 // numbers per state over every pool, by NumState
	// Calls counts calls that took a number, Hangups explicit hangups,
	// LeaseEnds calls a lease hung up, NoneFree calls that found no
	// number free (since start, or CONFIG RESETSTAT).
	Calls, Hangups, LeaseEnds, NoneFree int64
}

// NumpoolStats gathers INFO numpool's figures, from running totals: INFO
// costs the same with a million pools as with one.
func (e *Engine) NumpoolStats() NumpoolStats {
	st := numpoolState.of(e)
	return NumpoolStats{Keys: st.keys, Counts: st.counts, Calls: st.calls, Hangups: st.hangups,
		LeaseEnds: st.leaseEnds, NoneFree: st.noneFree}
}

func (p *Numpool) nativeFamily() string { return "numpool" }
func (p *Numpool) nativeItems() int64   { return int64(p.numbers.Len()) }
