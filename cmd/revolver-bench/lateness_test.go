package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An expired event before the key's deadline is counted as early, not as
// 0 ms late.
func TestExpirySampleCountsEarlyEvents(t *testing.T) {
	deadline := time.UnixMilli(1_700_000_000_000)
	deadlines := map[string]int64{"late": deadline.UnixMilli(), "early": deadline.UnixMilli()}
	arrived := map[string]time.Time{
		"late":  deadline.Add(500 * time.Microsecond),
		"early": deadline.Add(-300 * time.Microsecond),
	}
	s := expirySample(deadlines, arrived)
	if s["arrived"] != 100 || s["early"] != 1 || s["earliest"] != 0.3 {
		t.Errorf("sample %v: want arrived 100, early 1, earliest 0.3", s)
	}
	if s["p50"] < 0.5 || s["max"] < 0.5 {
		t.Errorf("the early event pulled the quantiles down: %v", s)
	}
	none := expirySample(deadlines, map[string]time.Time{"late": arrived["late"]})
	if e, ok := none["early"]; !ok || e != 0 {
		t.Errorf("a sample without early events must say early 0: %v", none)
	}
}

// A delay probe held before its due time is counted as early.
func TestProbeTallyCountsEarlyProbes(t *testing.T) {
	due := time.UnixMilli(1_700_000_000_000)
	tally := newProbeTally("probe:1:", 2, func(int) int64 { return due.UnixMilli() })
	tally.record("probe:1:0", due.Add(-2*time.Millisecond))
	tally.record("probe:1:1", due.Add(time.Millisecond))
	s := map[string]float64{}
	addEarly(s, tally.hist)
	if s["early"] != 1 || s["earliest"] != 2 || tally.held != 2 || tally.hist.Count() != 1 {
		t.Errorf("sample %v, held %d, on time or late %d: want early 1, earliest 2 ms, held 2, 1",
			s, tally.held, tally.hist.Count())
	}
}

// lateSuite is a suite whose one row saw an early event.
type lateSuite struct{}

func (lateSuite) Name() string                 { return "late" }
func (lateSuite) About() string                { return "test" }
func (lateSuite) Config(*Options) ServerConfig { return ServerConfig{} }
func (lateSuite) Run(ctx context.Context, env *Env) (*Result, error) {
	res := &Result{Views: []View{{Title: "Lateness", Metrics: []Metric{{Key: "p50", Label: "p50", Unit: "ms"}, earlyMetric}}}}
	row := res.NewRow("probe row")
	h := NewHistogram()
	h.Record(int64(time.Millisecond))
	h.Record(-int64(400 * time.Microsecond))
	sample := map[string]float64{"p50": ms(h.Quantile(0.5))}
	addEarly(sample, h)
	row.Add("Revolver", sample)
	res.noteEarly(row, "Revolver", 1, sample)
	clean := map[string]float64{"p50": 1}
	addEarly(clean, NewHistogram())
	res.noteEarly(row, "Revolver", 2, clean)
	return res, nil
}

// A run with early events writes its results, with the events in the row
// and the failure at the top, and then fails.
func TestEarlyEventsFailTheRunAfterWriting(t *testing.T) {
	f := newFakeServer(t, func(args []string) string {
		info := "revolver_version:0.1.0\r\n"
		return "$" + strconv.Itoa(len(info)) + "\r\n" + info + "\r\n"
	})
	out := t.TempDir()
	o := &Options{Addr: f.addr, Out: out, JSON: true, Date: "2026-01-01", Rounds: 1, Duration: time.Second, Scale: 1}
	var stdout bytes.Buffer
	err := runSuite(context.Background(), lateSuite{}, o, out, t.TempDir(), Machine{}, NewProgress(nil), &stdout, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "1 events arrived before their due time, up to 0.400 ms early") {
		t.Fatalf("runSuite: %v; want the early event as its error", err)
	}
	md, err1 := os.ReadFile(out + "/2026-01-01-late.md")
	js, err2 := os.ReadFile(out + "/2026-01-01-late.json")
	if err1 != nil || err2 != nil {
		t.Fatalf("no results written: %v %v", err1, err2)
	}
	if !strings.Contains(string(md), "**This run failed**: probe row on Revolver, round 1: 1 events arrived") ||
		!strings.Contains(string(md), "| early |") {
		t.Errorf("markdown lacks the failure or the early column:\n%s", md)
	}
	var rep struct{ Rows []*Row }
	if err := json.Unmarshal(js, &rep); err != nil || rep.Rows[0].Sides["Revolver"].Rounds[0]["early"] != 1 {
		t.Errorf("json lacks early: %v\n%s", err, js)
	}
}
