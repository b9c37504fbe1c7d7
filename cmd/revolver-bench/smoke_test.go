package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSmokeEverySuite runs every registered suite end to end against a
// Revolver built from this checkout, with tiny sizes and durations, and
// checks the files it writes. It runs in plain `go test` (about 20 s).
func TestSmokeEverySuite(t *testing.T) {
	if testing.Short() {
		t.Skip("every suite end to end: the plain run's (it took 53 s under the race detector)")
	}
	bin := testRevolverBinary(t)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--suite", "all", "--duration", "100ms", "--rounds", "1", "--scale", "0.001", "--clients", "4",
		"--revolver-bin", bin, "--out", out, "--json"}
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("all suites in %v", time.Since(begin).Round(time.Millisecond))
	for _, name := range suiteOrder() {
		md, err := readResult(out, name, ".md")
		if err != nil {
			t.Errorf("suite %s wrote no markdown: %v", name, err)
			continue
		}
		if !strings.Contains(string(md), "# "+name+": Revolver") || !strings.Contains(string(md), "Short check run") ||
			!strings.Contains(string(md), "shares the machine's") {
			t.Errorf("suite %s markdown lacks its header or notes:\n%s", name, md)
		}
		b, err := readResult(out, name, ".json")
		if err != nil {
			t.Errorf("suite %s wrote no json: %v", name, err)
			continue
		}
		var rep struct {
			Rows    []*Row
			Summary []RowSummary
		}
		if err := json.Unmarshal(b, &rep); err != nil || len(rep.Rows) == 0 {
			t.Errorf("suite %s json: %v, %d rows", name, err, len(rep.Rows))
			continue
		}
		measured := 0
		for _, row := range rep.Rows {
			if s := row.Sides["Revolver"]; s != nil && !s.Skip && len(s.Rounds) == 1 {
				measured++
			}
		}
		if measured == 0 {
			t.Errorf("suite %s measured nothing on Revolver", name)
		}
	}
	// Spot checks that each suite measured what it says.
	checks := map[string][]string{
		"core":          {"| SET P1", "| GET P16", "| MSET(10) P16"},
		"durable":       {"| SET c1", "| LPUSH c64"},
		"expiry-events": {"| 0 other volatile keys", "| 1000 other volatile keys"},
		"delay": {"| burst: 10 pending, seed backoff 1-2-4 s", "| burst: 1k pending, 10 ms polling",
			"| at rest: 1k pending, 10 probes, 10 consumers", "| throughput: DELAY.ADD vs ZADD P1",
			"| throughput: DELAY.POP vs ZPOPMIN P16"},
		"memory": {"| strings: 1k keys", "| zsets: 10 keys × 100", "| timers: 1 key × 1k"},
		"numpool": {"| call+hangup P1: EVALSHA script on both", "| call+hangup P16: NUMPOOL.EVENT POLICY fifo",
			"| memory: 1k idle+up numbers"},
		"room": {"| delivery: 1 room × 10 readers, recipe polls every 100ms",
			"| delivery: 10 rooms × 1 reader, recipe polls every 1s"},
		"room-presence": {"| presence: 15k users join (first heartbeat)", "| presence: 15k users heartbeat again",
			"| expiry: 15k users go offline",
			"| flow control: 10 pullers, 200 online, tier 100 → 1000 ms", "| flow control: 10 pullers, 200 online, no tiers"},
		"restart": {"| 1k keys, AOF of commands", "| 10k keys, after BGREWRITEAOF", "| 1k timers, AOF of commands",
			"| 10k timers, after BGREWRITEAOF"},
	}
	for name, wants := range checks {
		md, _ := readResult(out, name, ".md")
		for _, w := range wants {
			if !strings.Contains(string(md), w) {
				t.Errorf("suite %s lacks row %q", name, w)
			}
		}
	}
	if !strings.Contains(stdout.String(), "machine: ") {
		t.Errorf("no machine line on stdout")
	}
	// Every suite: no error replies, no early events, no remark of an
	// error, and lateness rows that say they counted early events.
	for _, suite := range suiteOrder() {
		b, _ := readResult(out, suite, ".json")
		var rep struct{ Rows []*Row }
		json.Unmarshal(b, &rep)
		for _, row := range rep.Rows {
			for name, side := range row.Sides {
				for i, r := range side.Rounds {
					if r["errors"] != 0 || r["early"] != 0 {
						t.Errorf("%s %s on %s, round %d: %v error replies, %v early events (%s)", suite, row.Name,
							name, i+1, r["errors"], r["early"], side.Note)
					}
					if _, ok := r["early"]; !ok && latenessRow(suite, row.Name) {
						t.Errorf("%s %s on %s, round %d: lateness without an early count: %v", suite, row.Name,
							name, i+1, r)
					}
				}
				if strings.Contains(side.Note, "error") {
					t.Errorf("%s %s on %s remarks: %s", suite, row.Name, name, side.Note)
				}
			}
		}
	}
	for _, suite := range []string{"core", "delay"} {
		b, _ := readResult(out, suite, ".json")
		var rep struct{ Rows []*Row }
		json.Unmarshal(b, &rep)
		for _, row := range rep.Rows {
			side := row.Sides["Revolver"]
			if side == nil || side.Skip {
				t.Errorf("%s %s was not measured on Revolver", suite, row.Name)
				continue
			}
			for _, r := range side.Rounds {
				if once, ok := r["once"]; ok && once != 100 {
					t.Errorf("%s %s: %v%% of probes delivered exactly once (%s)", suite, row.Name, once, side.Note)
				}
			}
			if side.Note != "" && !strings.Contains(side.Note, "loading overran") {
				t.Errorf("%s %s remarks: %s", suite, row.Name, side.Note)
			}
		}
	}
	// Each delay view shows only its own rows.
	md, _ := readResult(out, "delay", ".md")
	sections := 0
	for _, part := range strings.Split(string(md), "\n## ")[1:] {
		title, _, _ := strings.Cut(part, "\n")
		for prefix, section := range map[string]string{burstPrefix: "Bursts", restPrefix: "At rest", tpPrefix: "Throughput rows"} {
			if !strings.HasPrefix(title, section) {
				continue
			}
			sections++
			for _, line := range strings.Split(part, "\n") {
				if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| workload") && !strings.HasPrefix(line, "| -") &&
					!strings.HasPrefix(line, "| "+prefix) {
					t.Errorf("delay view %q shows a foreign row %q", title, line)
				}
			}
		}
	}
	if sections != 6 { // 2 burst views, 1 at rest, 3 throughput
		t.Errorf("delay markdown has %d of its 6 views", sections)
	}
}

// readResult reads the one results file of a suite (DATE-SUITE.ext).
func readResult(dir, suite, ext string) ([]byte, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*-"+suite+ext))
	if len(paths) != 1 {
		return nil, os.ErrNotExist
	}
	return os.ReadFile(paths[0])
}

var (
	testBinOnce sync.Once
	testBin     string
	testBinErr  error
)

// testRevolverBinary builds cmd/revolver from this checkout once for all
// the package's smoke tests (each used to build its own).
func testRevolverBinary(t *testing.T) string {
	t.Helper()
	testBinOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			testBinErr = err
			return
		}
		dir, err := os.MkdirTemp("", "revolver-bench-test")
		if err != nil {
			testBinErr = err
			return
		}
		testBin = filepath.Join(dir, "revolver")
		testBinErr = buildRevolver(context.Background(), root, testBin)
	})
	if testBinErr != nil {
		t.Fatal(testBinErr)
	}
	return testBin
}
