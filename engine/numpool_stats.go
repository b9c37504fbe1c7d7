package engine

// numpoolEngine is NUMPOOL's per-engine state (family.go): what INFO
// numpool reports.
type numpoolEngine struct {
	keys int // NUMPOOL keys stored under a name

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

// NumpoolStats gathers INFO numpool's figures; it visits every NUMPOOL key.
func (e *Engine) NumpoolStats() NumpoolStats {
	st := numpoolState.of(e)
	s := NumpoolStats{Keys: st.keys, Calls: st.calls, Hangups: st.hangups, LeaseEnds: st.leaseEnds,
		NoneFree: st.noneFree}
	for _, db := range e.dbs {
		db.eachBound(func(_ string, b keyBound) {
			if p, ok := b.(*Numpool); ok {
				for i, c := range p.counts {
					s.Counts[i] += int64(c)
				}
			}
		})
	}
	return s
}

func (p *Numpool) nativeFamily() string { return "numpool" }
func (p *Numpool) nativeItems() int64   { return int64(p.numbers.Len()) }
