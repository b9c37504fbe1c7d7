package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
	"github.com/revolver-db/revolver/server"
)

// TestFuzzCommands is a seeded differential fuzzer: random commands of
// every family (fuzz_commands_families_test.go), with arguments on parsing
// edges, go in lockstep to a private redis-server and to Revolver, over a
// RESP2 and a RESP3 connection each. It checks that Revolver never closes
// the connection, never takes longer than a deadline to answer and never
// recovers from a command panic, and that every reply matches Redis's:
// exactly, or where the reply is random or time-based by kind and error
// text (each generator says which).
//
// The default run is short. REVOLVER_FUZZ_N sets the number of commands per
// seed, REVOLVER_FUZZ_SEED the first seed and REVOLVER_FUZZ_SEEDS how many
// seeds to run, each on fresh servers:
//
//	REVOLVER_FUZZ_N=20000 REVOLVER_FUZZ_SEED=7 REVOLVER_FUZZ_SEEDS=10 go test ./tests -run TestFuzzCommands
func TestFuzzCommands(t *testing.T) {
	long(t)
	realRedis(t) // skips (or fails under REVOLVER_REQUIRE_REDIS) like the other differential tests
	n := envInt(t, "REVOLVER_FUZZ_N", 5000)
	first := envInt(t, "REVOLVER_FUZZ_SEED", 1)
	seeds := envInt(t, "REVOLVER_FUZZ_SEEDS", 3)
	for seed := first; seed < first+seeds; seed++ {
		t.Run("seed"+strconv.Itoa(seed), func(t *testing.T) { fuzzRun(t, int64(seed), n) })
	}
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return v
}

// fuzzPanicLog collects Revolver's log to find recovered command panics
// (server/dispatch.go logs "command panicked" with the stack).
type fuzzPanicLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *fuzzPanicLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *fuzzPanicLog) panicked() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := strings.Index(l.buf.String(), "command panicked"); i >= 0 {
		return l.buf.String()[i:]
	}
	return ""
}

// startFuzzServers starts a private redis-server (CONFIG SET changes must
// not leak into other tests) and a Revolver whose log is kept.
func startFuzzServers(t *testing.T) (redisAddr string, rev *server.Server, log *fuzzPanicLog) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", t.TempDir(), "--daemonize", "no", "--loglevel", "warning")
	cmd.SysProcAttr = dieWithTests()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	redisAddr = "127.0.0.1:" + strconv.Itoa(port)
	waitFor(t, 5*time.Second, "redis-server", func() bool {
		c, err := net.Dial("tcp", redisAddr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	log = &fuzzPanicLog{}
	cfg := server.DefaultConfig()
	cfg.Port, cfg.Persistence, cfg.Dir = 0, false, t.TempDir()
	rev, err = server.Start(cfg, slog.New(slog.NewTextHandler(log, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rev.Close() })
	return redisAddr, rev, log
}

// fuzzConn is one protocol's pair of connections and its state.
type fuzzConn struct {
	pair     diffPair
	proto    int
	inMulti  bool
	db       string    // the selected database, for the probe
	queued   []fuzzCmd // the queued commands, to compare each reply in EXEC's by its mode
	lastDump [2]string // per server: redis, revolver
}

const fuzzDeadline = 5 * time.Second

// fuzzRead reads one reply, skipping RESP3 pushes (tracking invalidations
// arrive around replies, as in Redis). A closed connection or a reply
// later than the deadline is an error.
func fuzzRead(c *rawConn) (resp.Value, error) {
	c.conn.SetReadDeadline(time.Now().Add(fuzzDeadline))
	for {
		v, err := c.rd.Read()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return v, fmt.Errorf("no reply within %v (hang)", fuzzDeadline)
			}
			if errors.Is(err, io.EOF) {
				return v, fmt.Errorf("connection closed")
			}
			return v, err
		}
		if v.Kind != resp.KindPush {
			return v, nil
		}
	}
}

func fuzzSend(c *rawConn, args []string) error {
	c.conn.SetWriteDeadline(time.Now().Add(fuzzDeadline))
	_, err := c.conn.Write(encodeCommand(args))
	return err
}

func fuzzRun(t *testing.T, seed int64, n int) {
	redisAddr, rev, log := startFuzzServers(t)
	g := &fuzzGen{r: rand.New(rand.NewSource(seed))}
	conns := []*fuzzConn{
		{pair: newDiffPair(t, redisAddr, rev.Addr(), 2), proto: 2},
		{pair: newDiffPair(t, redisAddr, rev.Addr(), 3), proto: 3},
	}
	probe := dialRaw(t, redisAddr) // looks at redis-server's keys without touching them
	var history []string
	failures := 0
	for step := 0; step < n; step++ {
		c := conns[0]
		if g.chance(20) {
			c = conns[1]
		}
		cmd := g.next(fuzzFamilies)
		for c.inMulti && (isClientReply(cmd.args) || isSort(cmd.args)) {
			cmd = g.next(fuzzFamilies) // see below: not modelled inside MULTI
		}
		if !c.inMulti && undefinedLexOrder(t, probe, c.db, cmd.args) {
			cmd = exact("PING") // Redis's answer depends on its skiplist's random levels
		}
		// CLIENT REPLY OFF/SKIP silence replies: run them as a group whose
		// one reply is the last command's. The silenced command is one that
		// does not change the connection's state.
		batch, discard := [][]string{cmd.args}, 0
		if isSort(cmd.args) {
			// redis-server's SORT tests errno after strtod without clearing
			// it, so a weight fails on an ERANGE that any earlier command
			// left (a "1e400" or subnormal argument parsed somewhere). Clear
			// it first with a command that parses a double (string2d sets
			// errno to 0) on a key that never exists.
			batch, discard = [][]string{{"GEORADIUS", "fuzz:errno", "0", "0", "1", "m"}, cmd.args}, 1
		}
		if isClientReply(cmd.args) {
			inner := g.next(fuzzFamilies)
			for changesConnState(inner.args) {
				inner = g.next(fuzzFamilies)
			}
			switch strings.ToUpper(cmd.args[2]) {
			case "SKIP":
				batch = append(batch, inner.args, []string{"ECHO", "after-skip"})
			case "OFF":
				batch = append(batch, inner.args, []string{"CLIENT", "REPLY", "ON"})
			}
		}
		line := fmt.Sprintf("step %d (RESP%d): %s", step, c.proto, fuzzQuote(batch))
		history = append(history, line)
		var replies [2]resp.Value
		for side, rc := range []*rawConn{c.pair.redis, c.pair.rev} {
			for _, args := range batch {
				if err := fuzzSend(rc, substituteDump(args, c.lastDump[side])); err != nil {
					t.Fatalf("%s\n  write to %s: %v", line, serverName(side), err)
				}
			}
			for i := 0; i <= discard; i++ {
				v, err := fuzzRead(rc)
				if err != nil {
					t.Fatalf("%s\n  %s: %v\n  history:\n%s", line, serverName(side), err, fuzzTail(history))
				}
				replies[side] = v
			}
		}
		if p := log.panicked(); p != "" {
			t.Fatalf("%s\n  Revolver recovered a panic:\n%s", line, p)
		}
		want, got := replies[0], replies[1]
		if got.Kind == resp.KindError && strings.Contains(got.Str, "internal error") {
			t.Fatalf("%s\n  Revolver: %s", line, got.Str)
		}
		if isClientReply(cmd.args) && len(batch) > 1 {
			cmd.cmp = cmpExact // the reply compared is the group's last command's
		}
		msg := ""
		if c.inMulti && strings.EqualFold(cmd.args[0], "EXEC") {
			msg = fuzzCompareExec(c.queued, want, got)
		} else {
			msg = fuzzCompare(cmd.cmp, want, got)
		}
		fuzzTrack(c, cmd, want, got)
		if msg != "" {
			failures++
			t.Errorf("%s\n  redis:    %s\n  revolver: %s\n  (%s)\n  history:\n%s\n  keys:\n%s", line, indent(want.String()),
				indent(got.String()), msg, fuzzTail(history), fuzzKeyDump(c, cmd.args))
			if failures >= 10 {
				t.Fatalf("stopping after %d divergences", failures)
			}
			// Start again from equal states, so one bug is reported once.
			for _, fc := range conns {
				for _, rc := range []*rawConn{fc.pair.redis, fc.pair.rev} {
					if fc.inMulti {
						fuzzSend(rc, []string{"DISCARD"})
						fuzzRead(rc)
					}
					fuzzSend(rc, []string{"FLUSHALL"})
					fuzzRead(rc)
				}
				fc.inMulti = false
			}
		}
	}
}

// fuzzKeyDump shows the keys a divergent command names, on both servers,
// to tell a wrong reply from an earlier wrong write.
func fuzzKeyDump(c *fuzzConn, args []string) string {
	if c.inMulti {
		return "    (in MULTI)"
	}
	var b strings.Builder
	for _, k := range fuzzKeys {
		named := false
		for _, a := range args[1:] {
			named = named || a == k
		}
		if !named {
			continue
		}
		for side, rc := range []*rawConn{c.pair.redis, c.pair.rev} {
			fuzzSend(rc, []string{"TYPE", k})
			typ, _ := fuzzRead(rc)
			read := map[string][]string{"string": {"GET", k}, "list": {"LRANGE", k, "0", "-1"},
				"set": {"SMEMBERS", k}, "zset": {"ZRANGE", k, "0", "-1", "WITHSCORES"}, "hash": {"HGETALL", k},
				"stream": {"XRANGE", k, "-", "+"}}[typ.Str]
			val := resp.Value{}
			if read != nil {
				fuzzSend(rc, read)
				val, _ = fuzzRead(rc)
			}
			fmt.Fprintf(&b, "    %s %s %s: %s\n", serverName(side), k, typ.Str, indent(val.String()))
		}
	}
	return b.String()
}

func isSort(args []string) bool {
	return strings.EqualFold(args[0], "SORT") || strings.EqualFold(args[0], "SORT_RO")
}

// undefinedLexOrder reports a lexicographic range command on a sorted set
// whose scores differ and that redis-server keeps as a skiplist: Redis
// documents the result as undefined, and its skiplist search then depends
// on the random levels of the nodes.
func undefinedLexOrder(t *testing.T, probe *rawConn, db string, args []string) bool {
	lex := false
	switch strings.ToUpper(args[0]) {
	case "ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZLEXCOUNT", "ZREMRANGEBYLEX":
		lex = true
	case "ZRANGE", "ZRANGESTORE":
		for _, a := range args {
			lex = lex || strings.EqualFold(a, "BYLEX")
		}
	}
	if !lex || len(args) < 2 {
		return false
	}
	key := args[1]
	if strings.EqualFold(args[0], "ZRANGESTORE") && len(args) > 2 {
		key = args[2]
	}
	if db == "" {
		db = "0"
	}
	probe.do("SELECT", db)
	if enc := probe.do("OBJECT", "ENCODING", key); enc.Str != "skiplist" {
		return false
	}
	scores := probe.do("ZRANGE", key, "0", "-1", "WITHSCORES")
	for i := 3; i < len(scores.Elems); i += 2 {
		if scores.Elems[i].Str != scores.Elems[1].Str {
			return true
		}
	}
	return false
}

func isClientReply(args []string) bool {
	return len(args) == 3 && strings.EqualFold(args[0], "CLIENT") && strings.EqualFold(args[1], "REPLY")
}

func changesConnState(args []string) bool {
	switch strings.ToUpper(args[0]) {
	case "MULTI", "EXEC", "DISCARD", "RESET", "WATCH", "UNWATCH", "CLIENT", "HELLO", "SELECT":
		return true
	}
	return false
}

func serverName(side int) string { return [2]string{"redis-server", "Revolver"}[side] }

// fuzzTrack follows each connection's MULTI state (and how to compare what
// it queued) and DUMP payloads.
func fuzzTrack(c *fuzzConn, cmd fuzzCmd, want, got resp.Value) {
	args := cmd.args
	switch name := strings.ToUpper(args[0]); {
	case name == "SELECT" && !c.inMulti && want.Kind == resp.KindSimple:
		c.db = args[1]
	case name == "RESET":
		c.db, c.inMulti = "", false
	case name == "MULTI" && want.Kind == resp.KindSimple:
		c.inMulti, c.queued = true, nil
	case name == "EXEC" || name == "DISCARD" || name == "RESET":
		if want.Kind != resp.KindError || !strings.Contains(want.Str, "without MULTI") {
			c.inMulti = false
		}
	case c.inMulti && want.Kind == resp.KindSimple && want.Str == "QUEUED":
		if len(args) > 1 && strings.EqualFold(args[0], "OBJECT") && strings.EqualFold(args[1], "REFCOUNT") {
			// In EXEC, redis-server's value may still be shared with a
			// queued command's argument (refcount 2): memory layout.
			cmd.cmp = cmpKind
		}
		c.queued = append(c.queued, cmd)
	case name == "DUMP" && want.Kind == resp.KindBulk:
		c.lastDump = [2]string{want.Str, got.Str}
	}
}

func substituteDump(args []string, payload string) []string {
	for i, a := range args {
		if a == fuzzDumpToken {
			out := append([]string(nil), args...)
			out[i] = payload
			return out
		}
	}
	return args
}

// fuzzCompareExec compares EXEC's replies each by its command's mode.
func fuzzCompareExec(queued []fuzzCmd, want, got resp.Value) string {
	if want.Kind != resp.KindArray || got.Kind != resp.KindArray || len(want.Elems) != len(queued) {
		return fuzzCompare(cmpExact, want, got)
	}
	if len(got.Elems) != len(want.Elems) {
		return fmt.Sprintf("%d replies vs %d", len(want.Elems), len(got.Elems))
	}
	for i, q := range queued {
		if msg := fuzzCompare(q.cmp, want.Elems[i], got.Elems[i]); msg != "" {
			return fmt.Sprintf("reply %d, to %s: %s\n  redis:    %s\n  revolver: %s", i+1, fuzzQuote([][]string{q.args}), msg,
				want.Elems[i], got.Elems[i])
		}
	}
	return ""
}

// fuzzCompare returns "" when the replies agree under mode.
func fuzzCompare(mode cmpMode, want, got resp.Value) string {
	if mode == cmpSkip {
		return ""
	}
	if want.Kind != got.Kind || want.Nil2 != got.Nil2 {
		return fmt.Sprintf("type %q vs %q", want.Kind, got.Kind)
	}
	if want.Kind == resp.KindError {
		if want.Str != got.Str {
			return "different error"
		}
		return ""
	}
	switch mode {
	case cmpExact:
		return compareReplies(want, got, "")
	case cmpUnordered:
		return compareReplies(want, got, "~")
	case cmpPairs:
		return compareReplies(want, got, "&")
	case cmpCString:
		if msg := compareReplies(want, got, "~"); msg != "" {
			return msg
		}
		for i := range want.Elems {
			a, _, _ := strings.Cut(want.Elems[i].Str, "\x00")
			b, _, _ := strings.Cut(got.Elems[i].Str, "\x00")
			if a != b {
				return "different order"
			}
		}
	case cmpLen:
		if len(want.Elems) != len(got.Elems) {
			return fmt.Sprintf("%d elements vs %d", len(want.Elems), len(got.Elems))
		}
	case cmpScan, cmpScanPairs:
		// Cursors are each server's own; a scan that finished in one call
		// returned every match on both.
		if len(want.Elems) == 2 && len(got.Elems) == 2 && want.Elems[0].Str == "0" && got.Elems[0].Str == "0" {
			marker := "~"
			if mode == cmpScanPairs {
				marker = "&"
			}
			return compareReplies(want.Elems[1], got.Elems[1], marker)
		}
	}
	return ""
}

func fuzzQuote(batch [][]string) string {
	var parts []string
	for _, args := range batch {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = strconv.Quote(a)
		}
		parts = append(parts, strings.Join(q, " "))
	}
	return strings.Join(parts, " ; ")
}

func fuzzTail(history []string) string {
	keep := 25
	if n, err := strconv.Atoi(os.Getenv("REVOLVER_FUZZ_HISTORY")); err == nil {
		keep = n // more context to reproduce a divergence
	}
	if len(history) > keep {
		history = history[len(history)-keep:]
	}
	return "    " + strings.Join(history, "\n    ")
}
