package tests

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Golden transcripts pin Revolver-only behaviour (native commands, our own
// INFO fields, limits Redis does not have). A file in testdata/golden holds
// cases separated by blank lines:
//
//	SET foo bar
//	----
//	+OK
//
// The expected text is resp.Value.String() of the reply. A command line
// starting with "@3" runs on a RESP3 connection. `go test ./tests -run
// Golden -rewrite` regenerates the expectations (then read the diff!).

var rewrite = flag.Bool("rewrite", false, "rewrite golden transcripts with the actual replies")

type goldenCase struct {
	command string
	want    string
}

// parseGolden returns the cases and the file's leading comment block, which
// -rewrite keeps.
func parseGolden(t *testing.T, path string) (cases []goldenCase, header string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, block := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n\n") {
		block = strings.Trim(block, "\n")
		if block == "" || strings.HasPrefix(block, "#") && !strings.Contains(block, "----") {
			if i == 0 {
				header = block
			}
			continue
		}
		cmd, want, ok := strings.Cut(block, "\n----\n")
		if !ok {
			cmd, ok = strings.CutSuffix(block, "\n----")
			if !ok {
				t.Fatalf("%s: case without ---- separator:\n%s", path, block)
			}
		}
		var kept []string
		for _, l := range strings.Split(cmd, "\n") {
			if !strings.HasPrefix(l, "#") {
				kept = append(kept, l)
			}
		}
		cases = append(cases, goldenCase{command: strings.Join(kept, "\n"), want: want})
	}
	return cases, header
}

func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.txt")
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			srv := startServer(t)
			c2, c3 := dialRaw(t, srv.Addr()), dialRaw(t, srv.Addr())
			c3.do("HELLO", "3")
			cases, header := parseGolden(t, f)
			var out strings.Builder
			if header != "" {
				out.WriteString(header + "\n\n")
			}
			for i, gc := range cases {
				line := gc.command
				conn := c2
				if rest, ok := strings.CutPrefix(line, "@3"); ok {
					line, conn = strings.TrimSpace(rest), c3
				}
				args, err := splitCommandLine(line)
				if err != nil {
					t.Fatal(err)
				}
				got := conn.do(args...).String()
				if *rewrite {
					if i > 0 {
						out.WriteString("\n")
					}
					out.WriteString(gc.command + "\n----\n" + got + "\n")
					continue
				}
				if got != gc.want {
					t.Errorf("%s\n want: %s\n  got: %s", gc.command, indent(gc.want), indent(got))
				}
			}
			if *rewrite {
				if err := os.WriteFile(f, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
