package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSmokeEverySuite runs every registered suite end to end against a
// Revolver built from this checkout, with tiny sizes and durations, and
// checks the files it writes. It runs in plain `go test` (about 20 s).
func TestSmokeEverySuite(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "revolver")
	if err := buildRevolver(context.Background(), root, bin); err != nil {
		t.Fatal(err)
	}
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
		"delay":         {"| 10 pending, seed backoff 1-2-4 s", "| 1k pending, 10 ms polling"},
		"memory":        {"| strings: 1k keys", "| zsets: 10 keys × 100"},
		"restart":       {"| 1k keys, AOF of commands", "| 10k keys, after BGREWRITEAOF"},
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
	core, _ := readResult(out, "core", ".json")
	var rep struct{ Rows []*Row }
	json.Unmarshal(core, &rep)
	for _, row := range rep.Rows {
		for _, r := range row.Sides["Revolver"].Rounds {
			if r["errors"] != 0 {
				t.Errorf("core %s saw %v error replies", row.Name, r["errors"])
			}
		}
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
