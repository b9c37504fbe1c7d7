package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Metric is one measured quantity of a row.
type Metric struct {
	Key    string `json:"key"`
	Label  string `json:"label"`
	Unit   string `json:"unit"` // ops/s, /s, ms, µs, B, MB, s, %, n
	Spread bool   `json:"-"`    // show min–max next to the median
	Ratio  bool   `json:"-"`    // add a Revolver/Redis column
}

// View is one table of a suite's results: a subset of its metrics, over
// the rows whose name starts with RowPrefix (every row when it is empty), so
// a suite can hold rows of different shapes, each shown in its own tables.
type View struct {
	Title     string
	Metrics   []Metric
	RowPrefix string
}

// rows returns the rows the view shows.
func (v View) rows(all []*Row) []*Row {
	if v.RowPrefix == "" {
		return all
	}
	var out []*Row
	for _, r := range all {
		if strings.HasPrefix(r.Name, v.RowPrefix) {
			out = append(out, r)
		}
	}
	return out
}

// SideRounds holds one server's rounds for a row.
type SideRounds struct {
	Ran    string               `json:"ran,omitempty"` // what this side ran, when the row's name does not say
	Note   string               `json:"note,omitempty"`
	Skip   bool                 `json:"skipped,omitempty"`
	Rounds []map[string]float64 `json:"rounds"`
}

// Row is one workload (or size, or type) measured on each server.
type Row struct {
	Name  string                 `json:"name"`
	Sides map[string]*SideRounds `json:"sides"`
}

// Result is what a suite hands back: rows, the tables to show them in, and
// notes that explain how the numbers were made.
type Result struct {
	Rows  []*Row
	Views []View
	Notes []string
	// Failures are broken promises found while measuring (early events):
	// the results are written with them, then the run fails.
	Failures []string
}

// NewRow adds a row to the result.
func (r *Result) NewRow(name string) *Row {
	row := &Row{Name: name, Sides: map[string]*SideRounds{}}
	r.Rows = append(r.Rows, row)
	return row
}

func (row *Row) side(name string) *SideRounds {
	s := row.Sides[name]
	if s == nil {
		s = &SideRounds{}
		row.Sides[name] = s
	}
	return s
}

// Add records one round's sample for a server.
func (row *Row) Add(side string, sample map[string]float64) {
	s := row.side(side)
	s.Rounds = append(s.Rounds, sample)
}

// Skip marks the row as not measurable on a server, with the reason.
func (row *Row) Skip(side, why string) {
	s := row.side(side)
	s.Skip, s.Note = true, why
}

// Skipped reports whether the row was skipped on a server.
func (row *Row) Skipped(side string) bool { return row.Sides[side] != nil && row.Sides[side].Skip }

// SetRan says what a server actually ran for this row.
func (row *Row) SetRan(side, what string) { row.side(side).Ran = what }

// Note attaches a remark to a server's cell.
func (row *Row) Note(side, note string) {
	s := row.side(side)
	if s.Note == "" {
		s.Note = note
	} else if !strings.Contains(s.Note, note) {
		s.Note += "; " + note
	}
}

// Stat summarises a metric over rounds.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"rounds"`
}

// Summary is the median and min–max of a metric over the rounds that have it.
func (s *SideRounds) Summary(key string) (Stat, bool) {
	if s == nil {
		return Stat{}, false
	}
	var vals []float64
	for _, r := range s.Rounds {
		if v, ok := r[key]; ok && !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return Stat{}, false
	}
	sort.Float64s(vals)
	st := Stat{Min: vals[0], Max: vals[len(vals)-1], N: len(vals)}
	if n := len(vals); n%2 == 1 {
		st.Median = vals[n/2]
	} else {
		st.Median = (vals[n/2-1] + vals[n/2]) / 2
	}
	return st, true
}

// formatValue renders v in unit with about three significant digits.
func formatValue(v float64, unit string) string {
	switch unit {
	case "ops/s", "/s":
		return si(v)
	case "MB":
		return sig(v/1e6) + " MB"
	case "B":
		return sig(v)
	case "%":
		return sig(v) + "%"
	case "n":
		return fmt.Sprintf("%.0f", v)
	}
	return sig(v)
}

func sig(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.4f", v)
}

func si(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return sig(v/1e6) + "M"
	case a >= 1e3:
		return sig(v/1e3) + "k"
	}
	return sig(v)
}

// cell renders one side's metric: the median, with min–max when asked.
func cell(s *SideRounds, m Metric) string {
	if s != nil && s.Skip {
		return "skipped"
	}
	st, ok := s.Summary(m.Key)
	if !ok {
		return "–"
	}
	out := formatValue(st.Median, m.Unit)
	if m.Spread && st.N > 1 {
		out += " (" + formatValue(st.Min, m.Unit) + "–" + formatValue(st.Max, m.Unit) + ")"
	}
	return out
}

// tableCells lays out a view: one column per metric per server, plus a
// ratio column (first server / second) for metrics that ask for one. Only
// the view's rows (RowPrefix) are laid out.
func tableCells(v View, rows []*Row, sides []string) [][]string {
	rows = v.rows(rows)
	head := []string{"workload"}
	for _, m := range v.Metrics {
		for _, s := range sides {
			if len(sides) == 1 {
				head = append(head, m.Label)
			} else {
				head = append(head, m.Label+" "+s)
			}
		}
		if m.Ratio && len(sides) == 2 {
			head = append(head, m.Label+" ratio")
		}
	}
	out := [][]string{head}
	for _, row := range rows {
		line := []string{row.Name}
		for _, m := range v.Metrics {
			for _, s := range sides {
				line = append(line, cell(row.Sides[s], m))
			}
			if m.Ratio && len(sides) == 2 {
				line = append(line, ratioCell(row, sides, m))
			}
		}
		out = append(out, line)
	}
	return out
}

func ratioCell(row *Row, sides []string, m Metric) string {
	a, okA := row.Sides[sides[0]].Summary(m.Key)
	b, okB := row.Sides[sides[1]].Summary(m.Key)
	if !okA || !okB || row.Skipped(sides[0]) || row.Skipped(sides[1]) || b.Median == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a.Median/b.Median)
}

// writeMarkdownTable writes cells as a Markdown table padded so that it
// also reads as plain text on a terminal.
func writeMarkdownTable(w io.Writer, cells [][]string) {
	widths := make([]int, len(cells[0]))
	for _, line := range cells {
		for i, c := range line {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	writeLine := func(line []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range line {
			pad := widths[i] - utf8.RuneCountInString(c)
			if i == 0 {
				b.WriteString(" " + c + strings.Repeat(" ", pad) + " |")
			} else {
				b.WriteString(" " + strings.Repeat(" ", pad) + c + " |")
			}
		}
		fmt.Fprintln(w, b.String())
	}
	writeLine(cells[0])
	sep := make([]string, len(widths))
	for i, wd := range widths {
		if i == 0 {
			sep[i] = strings.Repeat("-", wd)
		} else {
			sep[i] = strings.Repeat("-", wd-1) + ":"
		}
	}
	var b strings.Builder
	b.WriteString("|")
	for _, s := range sep {
		b.WriteString(" " + s + " |")
	}
	fmt.Fprintln(w, b.String())
	for _, line := range cells[1:] {
		writeLine(line)
	}
}

// Report is one suite's run with everything needed to judge its numbers.
type Report struct {
	Suite    string       `json:"suite"`
	Date     string       `json:"date"`
	Command  string       `json:"command"`
	Machine  Machine      `json:"machine"`
	Servers  []ServerInfo `json:"servers"`
	Settings string       `json:"settings"`
	Notes    []string     `json:"notes"`
	Rows     []*Row       `json:"rows"`
	Summary  []RowSummary `json:"summary"`
	result   *Result
}

// ServerInfo names one side of the comparison.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Config  string `json:"config"`
}

// RowSummary is the JSON copy's digest of a row: per server, per metric,
// median and spread.
type RowSummary struct {
	Name  string                     `json:"name"`
	Stats map[string]map[string]Stat `json:"stats"`
}

func (r *Report) sideNames() []string {
	names := make([]string, len(r.Servers))
	for i, s := range r.Servers {
		names[i] = s.Name
	}
	return names
}

// WriteMarkdown renders the report.
func (r *Report) WriteMarkdown(w io.Writer) {
	sides := r.sideNames()
	title := strings.Join(sides, " vs ")
	fmt.Fprintf(w, "# %s: %s\n\n", r.Suite, title)
	fmt.Fprintf(w, "- Date: %s. Suite: `%s`. Commit: %s.\n", r.Date, r.Suite, r.Machine.Commit)
	fmt.Fprintf(w, "- Machine: %s.\n", r.Machine.String())
	for _, s := range r.Servers {
		fmt.Fprintf(w, "- %s: %s, %s.\n", s.Name, s.Version, s.Config)
	}
	fmt.Fprintf(w, "- Command: `%s`\n", r.Command)
	fmt.Fprintf(w, "- Settings: %s.\n", r.Settings)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	for _, v := range r.result.Views {
		if len(v.rows(r.result.Rows)) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n## %s\n\n", v.Title)
		writeMarkdownTable(w, tableCells(v, r.result.Rows, sides))
	}
	var remarks []string
	for _, row := range r.result.Rows {
		for _, s := range sides {
			sr := row.Sides[s]
			if sr == nil {
				continue
			}
			if sr.Ran != "" {
				remarks = append(remarks, fmt.Sprintf("%s, %s ran: %s", row.Name, s, sr.Ran))
			}
			if sr.Note != "" {
				remarks = append(remarks, fmt.Sprintf("%s, %s: %s", row.Name, s, sr.Note))
			}
		}
	}
	if len(remarks) > 0 {
		fmt.Fprintf(w, "\n## Remarks\n\n")
		for _, m := range remarks {
			fmt.Fprintf(w, "- %s\n", m)
		}
	}
}

// summarize fills the JSON digest.
func (r *Report) summarize() {
	r.Rows = r.result.Rows
	r.Summary = nil
	keys := map[string]bool{}
	for _, row := range r.Rows {
		for _, s := range row.Sides {
			for _, rd := range s.Rounds {
				for k := range rd {
					keys[k] = true
				}
			}
		}
	}
	for _, row := range r.Rows {
		rs := RowSummary{Name: row.Name, Stats: map[string]map[string]Stat{}}
		for side, s := range row.Sides {
			m := map[string]Stat{}
			for k := range keys {
				if st, ok := s.Summary(k); ok {
					m[k] = st
				}
			}
			rs.Stats[side] = m
		}
		r.Summary = append(r.Summary, rs)
	}
}

// WriteFiles writes DIR/DATE-SUITE.md and, with asJSON, the .json copy;
// it returns the paths written. A file of that name already there (an
// earlier run of the day, perhaps with other flags) is kept: the new one
// is DATE-SUITE-2.md, -3, ...
func (r *Report) WriteFiles(dir string, asJSON bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, r.Date+"-"+r.Suite)
	for n := 2; ; n++ {
		if _, err := os.Stat(base + ".md"); os.IsNotExist(err) {
			break
		}
		base = filepath.Join(dir, r.Date+"-"+r.Suite+"-"+strconv.Itoa(n))
	}
	f, err := os.Create(base + ".md")
	if err != nil {
		return nil, err
	}
	r.WriteMarkdown(f)
	if err := f.Close(); err != nil {
		return nil, err
	}
	paths := []string{base + ".md"}
	if asJSON {
		r.summarize()
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return paths, err
		}
		if err := os.WriteFile(base+".json", append(b, '\n'), 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, base+".json")
	}
	return paths, nil
}

// sideMedian is a row's median of key on one server; false when that
// server skipped the row or did not record the figure.
func sideMedian(row *Row, side, key string) (float64, bool) {
	if row.Skipped(side) {
		return 0, false
	}
	st, ok := row.Sides[side].Summary(key)
	return st.Median, ok
}

// positiveMedian is sideMedian for figures a ratio divides by.
func positiveMedian(row *Row, side, key string) (float64, bool) {
	v, ok := sideMedian(row, side, key)
	return v, ok && v > 0
}

// metText states a target's verdict in a results file.
func metText(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// comparedPair names the first Revolver and the first Redis among the
// servers, the two a suite's targets compare; "" when one is missing.
func comparedPair(servers []*Server) (rev, red string) {
	for _, s := range servers {
		if s.Kind == kindRevolver && rev == "" {
			rev = s.Name
		}
		if s.Kind == kindRedis && red == "" {
			red = s.Name
		}
	}
	return rev, red
}
