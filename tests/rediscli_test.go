package tests

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// redisCli finds redis-cli, skipping loudly without it (failing when
// REVOLVER_REQUIRE_REDIS=1).
func redisCli(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-cli")
	if err != nil {
		if os.Getenv("REVOLVER_REQUIRE_REDIS") == "1" {
			t.Fatal("this test needs redis-cli in PATH")
		}
		t.Skip("SKIPPING: redis-cli not found in PATH (set REVOLVER_REQUIRE_REDIS=1 to fail instead)")
	}
	return bin
}

func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// runCli runs redis-cli against addr and returns its standard output.
func runCli(t *testing.T, addr string, args ...string) string {
	t.Helper()
	h, p := hostPort(t, addr)
	cmd := exec.Command(redisCli(t), append([]string{"-h", h, "-p", p}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("redis-cli %v: %v\n%s%s", args, err, out.String(), errb.String())
	}
	return out.String()
}

// runCliFor runs a redis-cli mode that never ends by itself for d, then
// interrupts it (as a user's ^C) and returns what it printed. prefix
// wraps the command (stdbuf, to get its output line by line).
func runCliFor(t *testing.T, d time.Duration, prefix []string, addr string, args ...string) string {
	t.Helper()
	h, p := hostPort(t, addr)
	argv := append(append(prefix, redisCli(t), "-h", h, "-p", p), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(d, func() { cmd.Process.Signal(os.Interrupt) })
	cmd.Wait()
	return out.String()
}

func seedKeys(t *testing.T, addr string) {
	t.Helper()
	c := dialRaw(t, addr)
	for i := 0; i < 25; i++ {
		c.do("SET", "k"+strconv.Itoa(i), strings.Repeat("v", i))
	}
	c.do("SET", "other", "x")
	c.do("SET", "bigkey", strings.Repeat("b", 1000))
	c.do("SELECT", "1")
	c.do("SET", "db1key", "v")
}

// TestRedisCliStat: redis-cli --stat reads keys, memory, clients, blocked
// clients, requests and connections from INFO.
func TestRedisCliStat(t *testing.T) {
	srv := startServer(t)
	seedKeys(t, srv.Addr())
	stdbuf, err := exec.LookPath("stdbuf")
	if err != nil {
		t.Fatal("stdbuf (coreutils) is needed to read redis-cli --stat through a pipe")
	}
	out := runCliFor(t, 1500*time.Millisecond, []string{stdbuf, "-oL"}, srv.Addr(), "--stat", "-i", "0.2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "------- data ------") || !strings.HasPrefix(lines[1], "keys") {
		t.Fatalf("redis-cli --stat printed:\n%s", out)
	}
	row := regexp.MustCompile(`^(\d+)\s+([\d.]+[BKMG])\s+(\d+)\s+(\d+)\s+(\d+) \(\+(\d+)\)\s+(\d+)\s*$`)
	var requests []int
	for _, l := range lines[2:] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("redis-cli --stat line %q", l)
		}
		if m[1] != "28" {
			t.Errorf("keys %s, want 28", m[1])
		}
		if clients, _ := strconv.Atoi(m[3]); clients < 1 {
			t.Errorf("clients %s", m[3])
		}
		if m[4] != "0" {
			t.Errorf("blocked %s", m[4])
		}
		if conns, _ := strconv.Atoi(m[7]); conns < 2 {
			t.Errorf("connections %s", m[7])
		}
		n, _ := strconv.Atoi(m[5])
		requests = append(requests, n)
	}
	for i := 1; i < len(requests); i++ {
		if requests[i] <= requests[i-1] {
			t.Errorf("requests do not grow: %v", requests)
		}
	}
}

// TestRedisCliLatency: redis-cli --latency pings until interrupted and
// prints min, max, avg and the sample count.
func TestRedisCliLatency(t *testing.T) {
	srv := startServer(t)
	out := runCliFor(t, 1500*time.Millisecond, nil, srv.Addr(), "--latency")
	m := regexp.MustCompile(`(?m)^(\d+) (\d+) ([\d.]+) (\d+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("redis-cli --latency printed %q", out)
	}
	if n, _ := strconv.Atoi(m[4]); n < 5 {
		t.Errorf("only %d samples in 1.5 s: %q", n, out)
	}
}

// TestRedisCliScanAndBigkeys: --scan --pattern and --bigkeys walk the
// keyspace with SCAN, TYPE and STRLEN.
func TestRedisCliScanAndBigkeys(t *testing.T) {
	srv := startServer(t)
	seedKeys(t, srv.Addr())
	got := strings.Fields(runCli(t, srv.Addr(), "--scan", "--pattern", "k*"))
	sort.Strings(got)
	var want []string
	for i := 0; i < 25; i++ {
		want = append(want, "k"+strconv.Itoa(i))
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("--scan --pattern k*: %v", got)
	}
	big := runCli(t, srv.Addr(), "--bigkeys")
	for _, want := range []string{"Sampled 27 keys in the keyspace!", `Biggest string found '"bigkey"' has 1000 bytes`,
		"27 strings with "} {
		if !strings.Contains(big, want) {
			t.Errorf("--bigkeys output lacks %q:\n%s", want, big)
		}
	}
	one := runCli(t, srv.Addr(), "-n", "1", "--bigkeys")
	if !strings.Contains(one, "Sampled 1 keys in the keyspace!") {
		t.Errorf("--bigkeys on db 1:\n%s", one)
	}
}

// TestRedisCliCommands: RESP3 through -3, and COMMAND DOCS and help
// rendered by redis-cli itself.
func TestRedisCliCommands(t *testing.T) {
	srv := startServer(t)
	if out := runCli(t, srv.Addr(), "-3", "PING"); out != "PONG\n" {
		t.Errorf("-3 PING: %q", out)
	}
	if out := runCli(t, srv.Addr(), "-3", "HELLO"); !strings.Contains(out, "\nproto 3\n") {
		t.Errorf("-3 HELLO: %q", out)
	}
	docs := runCli(t, srv.Addr(), "COMMAND", "DOCS", "set")
	if !strings.HasPrefix(docs, "set\nsummary\n") || !strings.Contains(docs, "\nsince\n1.0.0\ngroup\nstring\n") ||
		!strings.Contains(docs, "\narguments\nname\nkey\ntype\nkey\nkey_spec_index\n0\n") ||
		!strings.Contains(docs, "\nname\nexpiration\ntype\noneof\nflags\noptional\narguments\n") {
		t.Errorf("redis-cli COMMAND DOCS set:\n%s", docs)
	}
	ansi := regexp.MustCompile("\x1b\\[[0-9;]*m")
	help := func(addr string, cmd ...string) []string {
		out := ansi.ReplaceAllString(runCli(t, addr, append([]string{"help"}, cmd...)...), "")
		var kept []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.Contains(l, "summary:") { // summaries are our own prose
				kept = append(kept, strings.TrimSpace(l))
			}
		}
		return kept
	}
	set := help(srv.Addr(), "set")
	want := "SET key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]"
	if len(set) != 3 || set[0] != want || set[1] != "since: 1.0.0" || set[2] != "group: string" {
		t.Errorf("redis-cli help set:\n%s", strings.Join(set, "\n"))
	}
	if _, err := exec.LookPath("redis-server"); err != nil && os.Getenv("REVOLVER_REQUIRE_REDIS") != "1" {
		t.Skip("SKIPPING the comparison of help with redis-server's: redis-server not found")
	}
	redisAddr := realRedis(t)
	for _, cmd := range [][]string{{"get"}, {"client", "kill"}, {"client", "list"}, {"config", "set"},
		{"hello"}, {"subscribe"}, {"psubscribe"}, {"shutdown"}, {"command", "list"}, {"flushall"}, {"ping"}} {
		w, g := help(redisAddr, cmd...), help(srv.Addr(), cmd...)
		if strings.Join(w, "\n") != strings.Join(g, "\n") {
			t.Errorf("redis-cli help %v\n redis:    %s\n revolver: %s", cmd, strings.Join(w, " / "), strings.Join(g, " / "))
		}
	}
}
