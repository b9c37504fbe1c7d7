package server

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/commands"
)

// The latency monitor (LATENCY LATEST/HISTORY/RESET/GRAPH/DOCTOR) and the
// per-command latency histograms (LATENCY HISTOGRAM, INFO latencystats), as
// in Redis 7.0. Everything here runs under the engine lock.
//
// Events Revolver measures truthfully, with Redis's names:
//   - command, fast-command: a command's run time (the fast flag decides),
//     a client's or one a script calls;
//   - command-unblocking: the making of a blocked client's reply when it is
//     served (callstats.go);
//   - aof-fsync-always, aof-write: an event loop's commit of its
//     iteration's change records to the log (write, and with appendfsync
//     always the fsync), which Redis's AOF write and fsync correspond to;
//   - expire-cycle: a wake-up of the scheduler that expired keys (Revolver
//     deletes each key at its deadline; the wake-up is its cycle).
// Revolver has no fork, RDB or AOF rewrite, eviction cycle or
// defragmentation, so those events never appear.

// latencyTSLen is how many samples an event keeps (one per second at most).
const latencyTSLen = 160

type latencySample struct{ time, ms int64 }

type latencySeries struct {
	samples [latencyTSLen]latencySample
	next    int
	max     int64
}

type latencyState struct {
	threshold   atomic.Int64 // ms; 0 disables the monitor (read outside the lock by syncLog)
	fsyncAlways atomic.Bool  // names the log commit's event
	tracking    bool         // latency-tracking: per-command histograms
	percentiles []float64
	events      map[string]*latencySeries
	hists       []*cmdHistogram // by commands.Command.Index
}

// applyLatency follows latency-monitor-threshold, latency-tracking and
// latency-tracking-info-percentiles.
func (s *Server) applyLatency() {
	s.lat.threshold.Store(s.cfg.extraInt("latency-monitor-threshold"))
	s.lat.tracking = s.cfg.extraString("latency-tracking") == "yes"
	s.lat.fsyncAlways.Store(s.cfg.AppendFsync == "always")
	s.lat.percentiles = s.lat.percentiles[:0]
	for _, f := range strings.Fields(s.cfg.extraString("latency-tracking-info-percentiles")) {
		p, _ := strconv.ParseFloat(f, 64)
		s.lat.percentiles = append(s.lat.percentiles, p)
	}
	if s.lat.hists == nil {
		s.lat.hists = make([]*cmdHistogram, s.table.Count())
		s.eng.SetExpiryObserver(func(d time.Duration) { s.addLatencySample("expire-cycle", d) })
	}
}

// observeHistogram records one command's time in its latency histogram.
func (s *Server) observeHistogram(cmd *commands.Command, elapsed time.Duration) {
	if s.lat.tracking {
		h := s.lat.hists[cmd.Index()]
		if h == nil {
			h = new(cmdHistogram)
			s.lat.hists[cmd.Index()] = h
		}
		h.record(elapsed)
	}
}

// observeLatency samples one command's run time for the latency monitor.
func (s *Server) observeLatency(cmd *commands.Command, elapsed time.Duration) {
	if s.lat.threshold.Load() > 0 {
		event := "command"
		if cmd.Has(commands.FlagFast) {
			event = "fast-command"
		}
		s.addLatencySample(event, elapsed)
	}
}

// addLatencySample adds a sample when it reaches the threshold; in one
// second an event keeps only its worst sample.
func (s *Server) addLatencySample(event string, d time.Duration) {
	ms := d.Milliseconds()
	if t := s.lat.threshold.Load(); t == 0 || ms < t {
		return
	}
	if s.lat.events == nil {
		s.lat.events = map[string]*latencySeries{}
	}
	ts := s.lat.events[event]
	if ts == nil {
		ts = &latencySeries{}
		s.lat.events[event] = ts
	}
	ts.max = max(ts.max, ms)
	now := s.clock.Now().Unix()
	last := &ts.samples[(ts.next+latencyTSLen-1)%latencyTSLen]
	if last.time == now {
		last.ms = max(last.ms, ms)
		return
	}
	ts.samples[ts.next] = latencySample{now, ms}
	ts.next = (ts.next + 1) % latencyTSLen
}

// observeLogCommit samples an event loop's commit of the change log, made
// outside the engine lock: only a commit over the threshold takes the lock.
func (s *Server) observeLogCommit(start time.Time) {
	t := s.lat.threshold.Load()
	if t == 0 {
		return
	}
	d := s.clock.Now().Sub(start)
	if d.Milliseconds() < t {
		return
	}
	event := "aof-write"
	if s.lat.fsyncAlways.Load() {
		event = "aof-fsync-always"
	}
	s.eng.Lock()
	s.addLatencySample(event, d)
	s.eng.Unlock()
}

// ordered lists an event's samples, oldest first.
func (ts *latencySeries) ordered() []latencySample {
	var out []latencySample
	for j := 0; j < latencyTSLen; j++ {
		if sm := ts.samples[(ts.next+j)%latencyTSLen]; sm.time != 0 {
			out = append(out, sm)
		}
	}
	return out
}

func (s *Server) latencyEventNames() []string {
	names := make([]string, 0, len(s.lat.events))
	for n := range s.lat.events {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LatencyLatest is LATENCY LATEST: per event, the time and latency of its
// latest sample and its all-time maximum.
func (s *Server) LatencyLatest() []commands.LatencyEvent {
	var out []commands.LatencyEvent
	for _, n := range s.latencyEventNames() {
		ts := s.lat.events[n]
		last := ts.samples[(ts.next+latencyTSLen-1)%latencyTSLen]
		out = append(out, commands.LatencyEvent{Name: n, Time: last.time, Latency: last.ms, Max: ts.max})
	}
	return out
}

// LatencyHistory is LATENCY HISTORY: the event's (time, latency) samples.
func (s *Server) LatencyHistory(event string) [][2]int64 {
	ts := s.lat.events[event]
	if ts == nil {
		return nil
	}
	var out [][2]int64
	for _, sm := range ts.ordered() {
		out = append(out, [2]int64{sm.time, sm.ms})
	}
	return out
}

// LatencyReset is LATENCY RESET: drops the named events (case-insensitive),
// or all of them, and returns how many it dropped.
func (s *Server) LatencyReset(events []string) int {
	n := 0
	for name := range s.lat.events {
		match := len(events) == 0
		for _, e := range events {
			match = match || strings.EqualFold(e, name)
		}
		if match {
			delete(s.lat.events, name)
			n++
		}
	}
	return n
}

// LatencyGraph is LATENCY GRAPH: Redis's header line, then a column chart
// of the samples, oldest on the left, with how long ago each was under it.
func (s *Server) LatencyGraph(event string) (string, bool) {
	ts := s.lat.events[event]
	if ts == nil {
		return "", false
	}
	samples := ts.ordered()
	lo, hi := samples[0].ms, samples[0].ms
	for _, sm := range samples {
		lo, hi = min(lo, sm.ms), max(hi, sm.ms)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, hi, lo, ts.max)
	b.WriteString(strings.Repeat("-", 80) + "\n")
	if len(samples) > 80 {
		samples = samples[len(samples)-80:]
	}
	const rows = 4
	for r := rows; r >= 1; r-- {
		line := make([]byte, len(samples))
		for i, sm := range samples {
			level := rows
			if hi > lo {
				level = 1 + int((sm.ms-lo)*(rows-1)/(hi-lo))
			}
			line[i] = ' '
			if level >= r {
				line[i] = '#'
			}
		}
		b.WriteString(strings.TrimRight(string(line), " ") + "\n")
	}
	// Under each column, how long ago, written downwards.
	now := s.clock.Now().Unix()
	labels := make([]string, len(samples))
	width := 0
	for i, sm := range samples {
		labels[i] = agoLabel(now - sm.time)
		width = max(width, len(labels[i]))
	}
	for r := 0; r < width; r++ {
		line := make([]byte, len(samples))
		for i, l := range labels {
			line[i] = ' '
			if r < len(l) {
				line[i] = l[r]
			}
		}
		b.WriteString(strings.TrimRight(string(line), " ") + "\n")
	}
	return b.String(), true
}

func agoLabel(secs int64) string {
	switch {
	case secs < 60:
		return strconv.FormatInt(secs, 10) + "s"
	case secs < 3600:
		return strconv.FormatInt(secs/60, 10) + "m"
	case secs < 86400:
		return strconv.FormatInt(secs/3600, 10) + "h"
	}
	return strconv.FormatInt(secs/86400, 10) + "d"
}

// LatencyDoctor is LATENCY DOCTOR: Redis's fixed answers when there is
// nothing to analyse, else one line of statistics per event (Redis's
// format) and advice that applies to Revolver.
func (s *Server) LatencyDoctor() string {
	if len(s.lat.events) == 0 && s.lat.threshold.Load() == 0 {
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. " +
			"You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. " +
			"If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	if len(s.lat.events) == 0 {
		return "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the " +
			"slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n"
	}
	var b strings.Builder
	b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
	advice := map[string]bool{}
	for i, n := range s.latencyEventNames() {
		ts := s.lat.events[n]
		samples := ts.ordered()
		sum := int64(0)
		for _, sm := range samples {
			sum += sm.ms
		}
		avg := sum / int64(len(samples))
		dev := int64(0)
		for _, sm := range samples {
			dev += max(sm.ms-avg, avg-sm.ms)
		}
		period := float64(s.clock.Now().Unix()-samples[0].time) / float64(len(samples))
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). "+
			"Worst all time event %dms.\n", i+1, n, len(samples), avg, dev/int64(len(samples)), period, ts.max)
		switch n {
		case "command", "fast-command":
			advice["slowlog"] = true
		case "aof-fsync-always", "aof-write":
			advice["disk"] = true
		}
	}
	b.WriteString("\nI have a few advices for you:\n\n")
	if advice["slowlog"] {
		b.WriteString("- Check your slow log (SLOWLOG GET) for the commands that took longest; with large values, " +
			"commands that read or write many elements (KEYS, SMEMBERS, LRANGE over whole lists, SORT) block every client.\n")
	}
	if advice["disk"] {
		b.WriteString("- Writes waited for the change log. With appendfsync always every write waits for an fsync: " +
			"consider everysec, and a local SSD for the data directory.\n")
	}
	b.WriteString("- Make sure the machine is not swapping and that other processes do not compete for its CPUs.\n")
	return b.String()
}

// LatencyHistogram is one command's LATENCY HISTOGRAM entry.
func (s *Server) LatencyHistogram(cmd *commands.Command) (calls int64, cdf [][2]int64, ok bool) {
	if s.lat.hists == nil {
		return 0, nil, false
	}
	h := s.lat.hists[cmd.Index()]
	if h == nil {
		return 0, nil, false
	}
	return h.calls, h.cdf(), true
}

// resetLatencyHistograms forgets every command's histogram (CONFIG
// RESETSTAT, as Redis's resetCommandTableStats).
func (s *Server) resetLatencyHistograms() { clear(s.lat.hists) }

// infoLatencyStats writes INFO latencystats: per command with a histogram,
// its percentiles in microseconds.
func (s *Server) infoLatencyStats(ib *infoBuilder) {
	var walk func(cmds []*commands.Command)
	type row struct {
		name string
		h    *cmdHistogram
	}
	var rows []row
	walk = func(cmds []*commands.Command) {
		for _, c := range cmds {
			if h := s.lat.hists[c.Index()]; h != nil {
				rows = append(rows, row{c.FullName(), h})
			}
			walk(c.Subcommands())
		}
	}
	if s.lat.hists != nil {
		walk(s.table.All())
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	for _, r := range rows {
		parts := make([]string, len(s.lat.percentiles))
		for i, p := range s.lat.percentiles {
			parts[i] = fmt.Sprintf("p%s=%.3f", trimFloat(fmt.Sprintf("%f", p)), float64(r.h.percentile(p))/1000)
		}
		ib.add("latency_percentiles_usec_"+r.name, strings.Join(parts, ","))
	}
}
