package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{482345, "ops/s", "482k"},
		{62403, "ops/s", "62.4k"},
		{1234567, "/s", "1.23M"},
		{812, "ops/s", "812"},
		{0.412, "ms", "0.412"},
		{12.34, "ms", "12.3"},
		{1234.6, "ms", "1235"},
		{0.0042, "ms", "0.0042"},
		{0, "ms", "0"},
		{355e6, "MB", "355 MB"},
		{123.4, "B", "123"},
		{2.5, "%", "2.50%"},
		{17, "n", "17"},
	} {
		if got := formatValue(c.v, c.unit); got != c.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

func TestSummaryMedianAndSpread(t *testing.T) {
	s := &SideRounds{Rounds: []map[string]float64{{"ops": 3}, {"ops": 1}, {"ops": 2}, {"other": 9}}}
	st, ok := s.Summary("ops")
	if !ok || st.Median != 2 || st.Min != 1 || st.Max != 3 || st.N != 3 {
		t.Fatalf("odd summary %+v %v", st, ok)
	}
	s.Add(map[string]float64{"ops": 10})
	if st, _ := s.Summary("ops"); st.Median != 2.5 || st.Max != 10 {
		t.Fatalf("even summary %+v", st)
	}
	if _, ok := s.Summary("missing"); ok {
		t.Fatal("a metric no round has should not summarise")
	}
	var none *SideRounds
	if _, ok := none.Summary("ops"); ok {
		t.Fatal("nil side should not summarise")
	}
}

// Add on SideRounds keeps the test terse.
func (s *SideRounds) Add(m map[string]float64) { s.Rounds = append(s.Rounds, m) }

func sampleResult() *Result {
	res := &Result{Views: []View{{Title: "Throughput", Metrics: []Metric{
		{Key: "ops", Label: "ops/s", Unit: "ops/s", Spread: true, Ratio: true},
		{Key: "p50", Label: "p50", Unit: "ms"},
	}}}, Notes: []string{"a suite note"}}
	row := res.NewRow("SET P1")
	for _, v := range []float64{60000, 62403, 65000} {
		row.Add("Revolver", map[string]float64{"ops": v, "p50": 0.4})
		row.Add("Redis", map[string]float64{"ops": v * 1.25, "p50": 0.3})
	}
	skipped := res.NewRow("PFADD P1")
	skipped.Skip("Revolver", `skipped: Revolver answers "ERR unknown command"`)
	skipped.Add("Redis", map[string]float64{"ops": 50000, "p50": 0.2})
	skipped.SetRan("Redis", "PFADD myhll element:<rand>")
	return res
}

func TestTableCellsLayout(t *testing.T) {
	res := sampleResult()
	cells := tableCells(res.Views[0], res.Rows, []string{"Revolver", "Redis"})
	wantHead := []string{"workload", "ops/s Revolver", "ops/s Redis", "ops/s ratio", "p50 Revolver", "p50 Redis"}
	if strings.Join(cells[0], "|") != strings.Join(wantHead, "|") {
		t.Fatalf("head %q", cells[0])
	}
	want := []string{"SET P1", "62.4k (60.0k–65.0k)", "78.0k (75.0k–81.2k)", "0.80", "0.400", "0.300"}
	if strings.Join(cells[1], "|") != strings.Join(want, "|") {
		t.Fatalf("row\n got %q\nwant %q", cells[1], want)
	}
	if cells[2][1] != "skipped" || cells[2][3] != "–" || cells[2][2] != "50.0k" {
		t.Fatalf("skipped row %q", cells[2])
	}
	one := tableCells(res.Views[0], res.Rows, []string{"Revolver"})
	if len(one[0]) != 3 || one[0][1] != "ops/s" {
		t.Fatalf("single-server head %q", one[0])
	}
}

func TestMarkdownTableAligned(t *testing.T) {
	var b bytes.Buffer
	writeMarkdownTable(&b, [][]string{{"workload", "ops/s"}, {"SET P16", "482k"}, {"MSET(10) P1", "21.5k (20.0k–22.0k)"}})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("lines %q", lines)
	}
	if lines[1] != "| ----------- | ------------------: |" {
		t.Errorf("separator %q", lines[1])
	}
	for _, l := range lines {
		if len([]rune(l)) != len([]rune(lines[0])) {
			t.Errorf("ragged line %q", l)
		}
	}
	if lines[2] != "| SET P16     |                482k |" {
		t.Errorf("row %q", lines[2])
	}
}

func TestReportFiles(t *testing.T) {
	res := sampleResult()
	rep := &Report{Suite: "core", Date: "2026-11-22", Command: "go run ./cmd/revolver-bench --suite core --vs redis",
		Machine: Machine{Cores: 2, CPU: "Test CPU", Go: "go1.26", Commit: "abc1234", Redis: "redis-server 7.0.15"},
		Servers: []ServerInfo{{Name: "Revolver", Version: "Revolver 0.1.0", Config: "--appendfsync everysec"},
			{Name: "Redis", Version: "redis-server 7.0.15", Config: "--appendonly yes"}},
		Settings: "3 rounds", Notes: []string{"The client shares the machine's 2 cores."}, result: res}
	dir := t.TempDir()
	paths, err := rep.WriteFiles(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || filepath.Base(paths[0]) != "2026-11-22-core.md" || filepath.Base(paths[1]) != "2026-11-22-core.json" {
		t.Fatalf("paths %q", paths)
	}
	md, _ := os.ReadFile(paths[0])
	for _, want := range []string{"# core: Revolver vs Redis", "Commit: abc1234", "redis-server 7.0.15",
		"`go run ./cmd/revolver-bench --suite core --vs redis`", "shares the machine's 2 cores", "## Throughput",
		"| SET P1", "0.80", "## Remarks", `PFADD P1, Revolver: skipped: Revolver answers "ERR unknown command"`,
		"PFADD P1, Redis ran: PFADD myhll"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	var back struct {
		Suite   string
		Machine Machine
		Rows    []Row
		Summary []RowSummary
	}
	b, _ := os.ReadFile(paths[1])
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Suite != "core" || back.Machine.Cores != 2 || len(back.Rows) != 2 || len(back.Summary) != 2 {
		t.Fatalf("json %+v", back)
	}
	st := back.Summary[0].Stats["Revolver"]["ops"]
	if st.Median != 62403 || st.Min != 60000 || st.Max != 65000 || st.N != 3 {
		t.Fatalf("json summary %+v", st)
	}
	if !back.Rows[1].Sides["Revolver"].Skip {
		t.Fatal("skip lost in json")
	}
}

func TestParseOptions(t *testing.T) {
	var errs bytes.Buffer
	o, err := parseOptions([]string{"--suite", "core", "durable", "--vs", "redis", "--pipeline", "1,16,64",
		"--duration", "2s", "--fsync", "always"}, &errs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Suites, ",") != "core,durable" || !o.VsRedis || len(o.Pipelines) != 3 || o.Fsync != "always" ||
		o.Duration.Seconds() != 2 {
		t.Fatalf("options %+v", o)
	}
	if o, _ := parseOptions([]string{"--suite", "all"}, &errs); len(o.Suites) != len(registry) {
		t.Fatalf("all = %q", o.Suites)
	}
	if o, _ := parseOptions(nil, &errs); strings.Join(o.Suites, ",") != "core" || o.Clients != 50 || o.Rounds != 3 {
		t.Fatalf("defaults %+v", o)
	}
	for _, bad := range [][]string{{"--suite", "nope"}, {"--vs", "memcached"}, {"--fsync", "no"}, {"--pipeline", "0"},
		{"stray"}} {
		if _, err := parseOptions(bad, &errs); err == nil {
			t.Errorf("%q should be refused", bad)
		}
	}
}

func TestViewRowPrefix(t *testing.T) {
	res := &Result{Views: []View{
		{Title: "Bursts", RowPrefix: "burst: ", Metrics: []Metric{{Key: "p50", Label: "p50", Unit: "ms"}}},
		{Title: "Throughput", RowPrefix: "throughput: ", Metrics: []Metric{{Key: "ops", Label: "ops/s", Unit: "ops/s"}}},
		{Title: "Everything", Metrics: []Metric{{Key: "p50", Label: "p50", Unit: "ms"}}},
		{Title: "Nothing matches", RowPrefix: "restart: ", Metrics: []Metric{{Key: "p50", Label: "p50", Unit: "ms"}}},
	}}
	res.NewRow("burst: 10k pending").Add("Revolver", map[string]float64{"p50": 1})
	res.NewRow("throughput: DELAY.ADD vs ZADD P1").Add("Revolver", map[string]float64{"ops": 1000})
	res.NewRow("burst: 1M pending").Add("Revolver", map[string]float64{"p50": 2})
	names := func(cells [][]string) string {
		var out []string
		for _, line := range cells[1:] {
			out = append(out, line[0])
		}
		return strings.Join(out, ",")
	}
	sides := []string{"Revolver"}
	if got := names(tableCells(res.Views[0], res.Rows, sides)); got != "burst: 10k pending,burst: 1M pending" {
		t.Errorf("burst view rows %q", got)
	}
	if got := names(tableCells(res.Views[1], res.Rows, sides)); got != "throughput: DELAY.ADD vs ZADD P1" {
		t.Errorf("throughput view rows %q", got)
	}
	if got := tableCells(res.Views[2], res.Rows, sides); len(got) != 4 {
		t.Errorf("a view without a prefix shows every row, got %d lines", len(got))
	}
	rep := &Report{Suite: "delay", Servers: []ServerInfo{{Name: "Revolver"}}, result: res}
	var b bytes.Buffer
	rep.WriteMarkdown(&b)
	md := b.String()
	if strings.Contains(md, "Nothing matches") {
		t.Errorf("a view with no rows should not be written:\n%s", md)
	}
	bursts, tp, all := strings.Index(md, "## Bursts"), strings.Index(md, "## Throughput"), strings.Index(md, "## Everything")
	if bursts < 0 || tp < bursts || all < tp {
		t.Fatalf("views missing or out of order:\n%s", md)
	}
	if strings.Contains(md[bursts:tp], "| throughput:") || strings.Contains(md[tp:all], "| burst:") ||
		!strings.Contains(md[all:], "| throughput:") {
		t.Errorf("views mix their rows:\n%s", md)
	}
}
