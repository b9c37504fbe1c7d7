package main

import "fmt"

// Lateness rows (expiry events, delay timers) measure arrival minus due
// time. Every server measured promises never to deliver early (SPEC.md §1:
// a key is deleted at its deadline; §2: DELAY.POP returns only timers whose
// due time has passed; Redis expires a key once its time is past), and
// client and server read the same clock, so an early event is a broken
// promise, not noise: it is counted, shown in its row, and fails the run.

// earlyMetric is the column every lateness view shows, so a recorded row
// says that early events were counted (0) rather than read as on time.
var earlyMetric = Metric{Key: "early", Label: "early", Unit: "n"}

// addEarly adds h's early events to a lateness sample: "early", the count,
// always; "earliest", ms before the due time at most, when there were any.
func addEarly(s map[string]float64, h *Histogram) {
	n, lowest := h.Below()
	s["early"] = float64(n)
	if n > 0 {
		s["earliest"] = ms(-lowest)
	}
}

// noteEarly makes a sample's early events visible: a remark on the row and
// a failure of the run (the results are still written, then the run exits
// non-zero).
func (r *Result) noteEarly(row *Row, side string, round int, sample map[string]float64) {
	n := sample["early"]
	if n == 0 {
		return
	}
	msg := fmt.Sprintf("round %d: %.0f events arrived before their due time, up to %s ms early", round, n,
		sig(sample["earliest"]))
	row.Note(side, msg)
	r.Failures = append(r.Failures, fmt.Sprintf("%s on %s, %s", row.Name, side, msg))
}
