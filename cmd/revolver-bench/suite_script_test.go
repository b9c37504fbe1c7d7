package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNumpoolScriptMatchesTests: the bench runs the very script the
// differential tests check on Revolver and redis-server.
func TestNumpoolScriptMatchesTests(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "tests", "testdata", "seed003_numpool.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != numpoolScript {
		t.Fatal("numpoolScript differs from tests/testdata/seed003_numpool.lua: copy the file into numpool_script.go")
	}
}

// TestSmokeScriptSuite runs the script suite briefly against a Revolver
// built from this checkout, and against redis-server too when one is in
// PATH: every row measured, no error replies, no call without a free
// number.
func TestSmokeScriptSuite(t *testing.T) {
	bin := testRevolverBinary(t)
	out := t.TempDir()
	args := []string{"--suite", "script", "--duration", "200ms", "--rounds", "1", "--scale", "0.001", "--clients", "8",
		"--revolver-bin", bin, "--out", out, "--json"}
	sides := []string{"Revolver"}
	if _, err := exec.LookPath("redis-server"); err == nil {
		args = append(args, "--vs", "redis")
	} else {
		t.Log("no redis-server in PATH: Revolver only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	md, err := readResult(out, "script", ".md")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"| EVALSHA 3 calls P1", "| EVALSHA 3 calls P16", "| EVALSHA numpool call+hangup P1",
		"| EVALSHA numpool call+hangup P16", "| EVALSHA job add+move P1", "| EVALSHA job add+move P16",
		"srv CPU µs/call"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	b, err := readResult(out, "script", ".json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Rows []*Row }
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Rows) != 6 {
		t.Fatalf("json: %v, %d rows", err, len(rep.Rows))
	}
	for _, row := range rep.Rows {
		for name := range row.Sides {
			if strings.HasPrefix(name, "Redis") && !slices.Contains(sides, name) {
				sides = append(sides, name)
			}
		}
		for _, name := range sides {
			side := row.Sides[name]
			if side == nil || side.Skip || len(side.Rounds) != 1 {
				t.Errorf("%s was not measured on %s: %+v", row.Name, name, side)
				continue
			}
			r := side.Rounds[0]
			if r["ops"] <= 0 || r["errors"] != 0 || r["empty"] != 0 {
				t.Errorf("%s on %s: %v ops/s, %v error replies, %v%% empty (%s)", row.Name, name, r["ops"],
					r["errors"], r["empty"], side.Note)
			}
			if _, ok := r["srvcpu"]; !ok {
				t.Errorf("%s on %s: no server CPU", row.Name, name)
			}
		}
	}
	if len(sides) == 1 && strings.Contains(strings.Join(args, " "), "--vs redis") {
		t.Errorf("ran with --vs redis but no Redis side in the results")
	}
}
