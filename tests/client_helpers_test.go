package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClientScriptHelpers runs the script helpers applications use, from the
// client libraries themselves, on both servers: ioredis defineCommand and
// node-redis defineScript (tests/clients/script_helpers.js), redis-py
// register_script (tests/clients/script_helpers.py). Each computes the
// script's SHA1, sends EVALSHA and recovers from NOSCRIPT its own way.
//
// The libraries come from `npm ci` in tests/clients and Debian's
// python3-redis; .ci/run installs both. Without them the subtests skip
// loudly, or fail under REVOLVER_REQUIRE_CLIENTS=1 (CI sets it).
func TestClientScriptHelpers(t *testing.T) {
	dir, err := filepath.Abs("clients")
	if err != nil {
		t.Fatal(err)
	}
	runners := []struct {
		name string
		find func() ([]string, string) // the command line, or why there is none
	}{
		{"node", func() ([]string, string) {
			node, err := exec.LookPath("node")
			if err != nil {
				return nil, "node is not installed"
			}
			for _, lib := range []string{"ioredis", "redis"} {
				if _, err := os.Stat(filepath.Join(dir, "node_modules", lib)); err != nil {
					return nil, "tests/clients/node_modules/" + lib + " is missing (run npm ci in tests/clients)"
				}
			}
			return []string{node, filepath.Join(dir, "script_helpers.js")}, ""
		}},
		{"python", func() ([]string, string) {
			// Debian's python3-redis installs for the system's python3,
			// which may not be the first python3 in PATH.
			for _, py := range []string{"/usr/bin/python3", "python3"} {
				if exec.Command(py, "-c", "import redis").Run() == nil {
					return []string{py, filepath.Join(dir, "script_helpers.py")}, ""
				}
			}
			return nil, "no python3 with the redis package (apt-get install python3-redis)"
		}},
	}
	onBothServers(t, func(t *testing.T, addr string) {
		for _, r := range runners {
			t.Run(r.name, func(t *testing.T) {
				argv, missing := r.find()
				if missing != "" {
					if os.Getenv("REVOLVER_REQUIRE_CLIENTS") == "1" {
						t.Fatalf("client helper test needs its library: %s", missing)
					}
					t.Skipf("SKIPPING: %s (set REVOLVER_REQUIRE_CLIENTS=1 to fail instead)", missing)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				out, err := exec.CommandContext(ctx, argv[0], append(argv[1:], addr)...).CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
				}
				t.Logf("%s", out)
				if !strings.Contains(string(out), "ok ") || strings.Contains(string(out), "FAIL") {
					t.Fatalf("unexpected output:\n%s", out)
				}
			})
		}
	})
}
