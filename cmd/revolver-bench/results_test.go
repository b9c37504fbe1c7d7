package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// latenessRow reports whether a suite's row measures arrival against a due
// time: its rounds must count early events ("early").
func latenessRow(suite, row string) bool {
	switch suite {
	case "expiry-events":
		return true
	case "delay":
		return strings.HasPrefix(row, burstPrefix) || strings.HasPrefix(row, restPrefix)
	}
	return false
}

// recheckNote starts the note added by hand to a recorded result whose run
// could hide error replies or early events (issue 31, item 8): history is
// kept, and says what its numbers cannot rule out.
const recheckNote = "Issue 31, item 8"

// unrecordedErrors are the suites whose runs once neither recorded error
// replies nor failed on them; their rounds now record "errors".
var unrecordedErrors = map[string]bool{"evict": true}

// errorsAllowed lets a recorded row show error replies, keyed
// "file|row|side", with the reason. None does.
var errorsAllowed = map[string]string{}

// checkRecorded returns what is wrong with one recorded run (file, its
// suite, rows and markdown), one line per row and side.
func checkRecorded(file, suite string, rows []*Row, md string) []string {
	noted := strings.Contains(md, recheckNote)
	var out []string
	for _, row := range rows {
		sides := make([]string, 0, len(row.Sides))
		for side := range row.Sides {
			sides = append(sides, side)
		}
		sort.Strings(sides)
		for _, side := range sides {
			sr := row.Sides[side]
			where := fmt.Sprintf("%s: %s on %s", file, row.Name, side)
			allowed := errorsAllowed[file+"|"+row.Name+"|"+side] != ""
			var problems []string
			var noEarly, noErrors bool
			for i, r := range sr.Rounds {
				if r["errors"] > 0 && !allowed {
					problems = append(problems, fmt.Sprintf("round %d counted %v error replies", i+1, r["errors"]))
				}
				if r["early"] > 0 {
					problems = append(problems, fmt.Sprintf("round %d recorded %v early events", i+1, r["early"]))
				}
				_, ok := r["early"]
				noEarly = noEarly || !ok && latenessRow(suite, row.Name)
				_, ok = r["errors"]
				noErrors = noErrors || !ok && unrecordedErrors[suite]
			}
			if noEarly && !noted {
				problems = append(problems, fmt.Sprintf("lateness from before early events were counted (they "+
					"read as 0 ms late), and no %q note", recheckNote))
			}
			if noErrors && !noted {
				problems = append(problems, fmt.Sprintf("from before error replies were recorded or failed the "+
					"run, and no %q note", recheckNote))
			}
			if strings.Contains(sr.Note, "error") && !allowed {
				problems = append(problems, "remarks on errors: "+sr.Note)
			}
			if len(problems) > 0 {
				out = append(out, where+": "+strings.Join(problems, "; "))
			}
		}
	}
	return out
}

// TestRecordedResults checks every run recorded in bench/results for error
// replies counted as work and for lateness that could hide early events.
func TestRecordedResults(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(root, "bench", "results", "*.json"))
	if len(paths) == 0 {
		t.Fatal("no recorded results found")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Suite string
			Rows  []*Row
		}
		if err := json.Unmarshal(b, &rep); err != nil || rep.Suite == "" {
			t.Errorf("%s: %v (suite %q)", filepath.Base(p), err, rep.Suite)
			continue
		}
		md, err := os.ReadFile(strings.TrimSuffix(p, ".json") + ".md")
		if err != nil {
			t.Errorf("%s has no markdown beside it: %v", filepath.Base(p), err)
		}
		for _, problem := range checkRecorded(filepath.Base(p), rep.Suite, rep.Rows, string(md)) {
			t.Error(problem)
		}
	}
}

// The checks catch what they are for, and a note only excuses what could
// not be told from an old run, never a recorded error or early event.
func TestCheckRecordedCatches(t *testing.T) {
	side := func(note string, rounds ...map[string]float64) *Row {
		return &Row{Name: "r", Sides: map[string]*SideRounds{"Revolver": {Note: note, Rounds: rounds}}}
	}
	for _, c := range []struct {
		suite, md string
		row       *Row
		want      string // a problem containing this; "" for none
	}{
		{"core", "", side("", map[string]float64{"ops": 1, "errors": 0}), ""},
		{"core", "", side("", map[string]float64{"ops": 1, "errors": 3}), "counted 3 error replies"},
		{"core", recheckNote, side("", map[string]float64{"errors": 3}), "counted 3 error replies"},
		{"core", "", side("error replies (first: \"ERR x\")", map[string]float64{"errors": 0}), "remarks on errors"},
		{"expiry-events", "", side("", map[string]float64{"p50": 1}), "before early events were counted"},
		{"expiry-events", recheckNote, side("", map[string]float64{"p50": 1}), ""},
		{"expiry-events", "", side("", map[string]float64{"p50": 1, "early": 0}), ""},
		{"expiry-events", recheckNote, side("", map[string]float64{"p50": 1, "early": 2}), "recorded 2 early events"},
		{"delay", "", &Row{Name: burstPrefix + "10k", Sides: map[string]*SideRounds{"Redis": {
			Rounds: []map[string]float64{{"p50": 1}}}}}, "before early events were counted"},
		{"delay", "", &Row{Name: tpPrefix + "DELAY.ADD", Sides: map[string]*SideRounds{"Redis": {
			Rounds: []map[string]float64{{"ops": 1, "errors": 0}}}}}, ""},
		{"evict", "", side("", map[string]float64{"ops": 1}), "before error replies were recorded"},
		{"evict", recheckNote, side("", map[string]float64{"ops": 1}), ""},
		{"evict", "", side("", map[string]float64{"ops": 1, "errors": 0}), ""},
	} {
		got := strings.Join(checkRecorded("f.json", c.suite, []*Row{c.row}, c.md), "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s %v (md %q): got %q, want %q", c.suite, c.row.Sides, c.md, got, c.want)
		}
	}
}
