package tests

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// Differential tests run the same command scripts against a real
// redis-server and against Revolver and compare every reply: its RESP type
// and its value. Scripts live in testdata/diff/*.txt, one command per line,
// its arguments split as redis-cli splits them (an empty argument is "";
// a line may not end in whitespace, which would hide a lost argument).
// By default a line's replies must be identical. A line may start with
// markers:
//
//	?  setup: both servers must succeed (any reply but an error); the
//	   values are not compared (they differ by design: DEBUG, CONFIG SET
//	   of a Revolver-only value, ...)
//	!  both servers must reply with an error; the texts are not compared
//	~  compare as unordered collections, at every depth (KEYS, SMEMBERS,
//	   SCAN from cursor 0); scalars and error texts still exactly
//	&  as ~, but flat arrays are field/value pairs kept together
//	   (HGETALL, CONFIG GET, HSCAN, HRANDFIELD ... WITHVALUES); RESP3 maps
//	   are compared as pairs under ~ and & alike
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
		mode, line := diffMarkers(line)
		args, err := splitCommandLine(line)
		if err != nil || len(args) == 0 {
			t.Fatalf("line %d: %q: %v", n+1, line, err)
		}
		if msg := checkMarkers(mode, args); msg != "" {
			t.Fatalf("line %d: %s: %s", n+1, line, msg)
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
		if msg := compareLine(mode, want, got); msg != "" {
			t.Errorf("line %d: %s\n  redis:    %s\n  revolver: %s\n  (%s)", n+1, line,
				indent(want.String()), indent(got.String()), msg)
		}
	}
}

// diffMarkers splits a script line into its markers and its command.
func diffMarkers(line string) (mode, cmd string) {
	for {
		switch {
		case strings.HasPrefix(line, "@3"):
			mode += "3"
			line = strings.TrimSpace(line[2:])
		case len(line) > 0 && strings.ContainsRune("?!~&%", rune(line[0])):
			mode += line[:1]
			line = strings.TrimSpace(line[1:])
		default:
			return mode, line
		}
	}
}

// pairedReply reports whether a command's RESP2 reply is a flat
// field/value list: compared unordered, it needs & (pairs kept), never ~.
func pairedReply(args []string) bool {
	switch strings.ToUpper(args[0]) {
	case "HGETALL", "HSCAN", "ZSCAN":
		return true
	case "CONFIG":
		return len(args) > 1 && strings.EqualFold(args[1], "GET")
	case "HRANDFIELD", "ZRANDMEMBER":
		return slices.ContainsFunc(args, func(a string) bool {
			return strings.EqualFold(a, "WITHVALUES") || strings.EqualFold(a, "WITHSCORES")
		})
	}
	return false
}

// checkMarkers refuses combinations that would check less than they seem to.
func checkMarkers(mode string, args []string) string {
	if strings.Count(mode, "?")+strings.Count(mode, "!")+strings.Count(mode, "%") > 1 {
		return "at most one of ?, ! and % per line"
	}
	if strings.Contains(mode, "~") && pairedReply(args) {
		return "a field/value reply compared unordered needs & (pairs kept), not ~"
	}
	return ""
}

// compareLine checks one line's replies under its markers.
func compareLine(mode string, want, got resp.Value) string {
	switch {
	case strings.Contains(mode, "?"):
		if want.Kind == resp.KindError || got.Kind == resp.KindError {
			return "a setup line failed (mark it ! if an error is expected)"
		}
		return ""
	case strings.Contains(mode, "!"):
		if want.Kind != resp.KindError || got.Kind != resp.KindError {
			return "expected an error from both servers"
		}
		return ""
	}
	return compareReplies(want, got, mode)
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n            ") }

// TestDifferential runs every script in testdata/diff against both servers.
func TestDifferential(t *testing.T) {
	long(t)
	redisAddr := realRedis(t)
	rev := startServer(t)
	files, _ := filepath.Glob("testdata/diff/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/diff")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			lines := readScript(t, f)
			if len(lines) == 0 {
				t.Fatalf("%s holds no command", f)
			}
			runDiffScript(t, redisAddr, rev.Addr(), lines)
		})
	}
}
