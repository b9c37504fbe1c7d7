package tests

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// Differential tests run the same command scripts against a real
// redis-server and against Revolver and compare every reply: its RESP type
// and its value. Scripts live in testdata/diff/*.txt, one command per line.
// A line may start with a marker:
//
//	?  run on both, do not compare (setup whose reply differs by design)
//	~  compare as an unordered collection (KEYS, SMEMBERS, ...)
//	%  compare only the reply type
//	@3 run this line with RESP3 (on a second connection per server)
//
// Each script starts from FLUSHALL and runs in RESP2; lines marked @3 use a
// RESP3 connection to the same servers, so RESP3 encodings are compared too.

var (
	redisOnce sync.Once
	redisAddr string
	redisErr  error
)

// realRedis starts one redis-server (no persistence, random port) for the
// whole test binary. Without redis-server it skips loudly, or fails when
// REVOLVER_REQUIRE_REDIS=1 (CI sets it).
func realRedis(t testing.TB) string {
	t.Helper()
	redisOnce.Do(func() { redisAddr, redisErr = spawnRedis() })
	if redisErr != nil {
		if os.Getenv("REVOLVER_REQUIRE_REDIS") == "1" {
			t.Fatalf("differential test needs redis-server: %v", redisErr)
		}
		t.Skipf("SKIPPING differential test: %v (install redis-server, or set REVOLVER_REQUIRE_REDIS=1 to fail instead)", redisErr)
	}
	return redisAddr
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func spawnRedis() (string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server not found in PATH")
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "revolver-diff-redis")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--enable-debug-command", "yes", "--daemonize", "no",
		"--loglevel", "warning")
	// The server lives as long as the test binary (on Linux).
	cmd.SysProcAttr = dieWithTests()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			go cmd.Wait()
			return addr, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	cmd.Process.Kill()
	return "", fmt.Errorf("redis-server did not start on %s", addr)
}

// diffPair is one connection to each server in one protocol.
type diffPair struct {
	redis, rev *rawConn
}

func newDiffPair(t *testing.T, redisAddr, revAddr string, proto int) diffPair {
	p := diffPair{redis: dialRaw(t, redisAddr), rev: dialRaw(t, revAddr)}
	if proto == 3 {
		p.redis.do("HELLO", "3")
		p.rev.do("HELLO", "3")
	}
	return p
}

// runDiffScript runs lines on both servers and reports every mismatch.
func runDiffScript(t *testing.T, redisAddr, revAddr string, lines []string) {
	t.Helper()
	p2 := newDiffPair(t, redisAddr, revAddr, 2)
	var p3 *diffPair
	p2.redis.do("FLUSHALL")
	p2.rev.do("FLUSHALL")
	for n, line := range lines {
		mode := ""
		for len(line) > 0 && strings.ContainsRune("?~%", rune(line[0])) || strings.HasPrefix(line, "@3") {
			if strings.HasPrefix(line, "@3") {
				mode += "3"
				line = strings.TrimSpace(line[2:])
				continue
			}
			mode += line[:1]
			line = strings.TrimSpace(line[1:])
		}
		args, err := splitCommandLine(line)
		if err != nil || len(args) == 0 {
			t.Fatalf("line %d: %q: %v", n+1, line, err)
		}
		pair := &p2
		if strings.Contains(mode, "3") {
			if p3 == nil {
				np := newDiffPair(t, redisAddr, revAddr, 3)
				p3 = &np
			}
			pair = p3
		}
		want := pair.redis.do(args...)
		got := pair.rev.do(args...)
		if strings.Contains(mode, "?") {
			continue
		}
		if msg := compareReplies(want, got, mode); msg != "" {
			t.Errorf("line %d: %s\n  redis:    %s\n  revolver: %s\n  (%s)", n+1, line,
				indent(want.String()), indent(got.String()), msg)
		}
	}
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n            ") }

// compareReplies returns "" when the replies match under mode.
func compareReplies(want, got resp.Value, mode string) string {
	if want.Kind != got.Kind || want.Nil2 != got.Nil2 {
		return fmt.Sprintf("type %q vs %q", want.Kind, got.Kind)
	}
	if strings.Contains(mode, "%") {
		return ""
	}
	if strings.Contains(mode, "~") {
		a, b := flatten(want), flatten(got)
		sort.Strings(a)
		sort.Strings(b)
		if strings.Join(a, "\x00") != strings.Join(b, "\x00") {
			return "different elements"
		}
		return ""
	}
	if want.String() != got.String() {
		return "different value"
	}
	return ""
}

func flatten(v resp.Value) []string {
	var out []string
	for _, e := range v.Elems {
		s := e.String()
		if len(e.Elems) > 0 { // a nested collection (SCAN's keys) is unordered too
			inner := flatten(e)
			sort.Strings(inner)
			s = string(e.Kind) + strings.Join(inner, "\x00")
		}
		out = append(out, s)
	}
	return out
}

// TestDifferential runs every script in testdata/diff against both servers.
func TestDifferential(t *testing.T) {
	redisAddr := realRedis(t)
	rev := startServer(t)
	files, _ := filepath.Glob("testdata/diff/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/diff")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			runDiffScript(t, redisAddr, rev.Addr(), readScript(t, f))
		})
	}
}
