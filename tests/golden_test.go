package tests

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
	"github.com/revolver-db/revolver/server"
)

// Golden transcripts pin Revolver-only behaviour (native commands, our own
// INFO fields, limits Redis does not have) in text files under
// testdata/golden. A file is a sequence of cases separated by blank lines;
// a case is a command or a directive, "----", and what it printed:
//
//	DELAY.ADD q m IN 100
//	----
//	(integer) 1
//
// The output is resp.Value.String() of the reply (text of several lines,
// such as INFO's, is shown as its lines). Each file runs twice, once
// with every connection speaking RESP2 and once RESP3; where RESP3 prints
// something else, a "---- resp3" section after the first holds it.
//
// The server runs in-process on a manual clock starting at goldenEpoch
// (unix ms 1800000000000), which only the transcript moves, so due times,
// TTLs and timeouts are exact numbers. The steps:
//
//	CMD args...       runs on connection A
//	B> CMD args...    runs on connection B (any name; opened on first use)
//	:advance MS       moves the clock MS ms and fires what came due
//	:restart [MS]     stops the server cleanly and starts it again on the
//	                  same data directory, the clock moved MS ms meanwhile
//	:crash [MS]       the same, but the server stops as kill -9 leaves it
//
// "B> QUIT" closes B; using the name again opens a new connection. An
// argument {B.id} is connection B's client id. A command whose client
// blocks prints "(blocked)"; its reply, when a later step wakes it, is
// printed in that step's output as "B> reply". A subscribed connection's
// messages during a step are printed there too, one line each:
// "N> pmessage pattern channel payload". A step that prints nothing needs
// no "----". Lines starting with '#' are comments; the ones before a case
// stay with it when the file is rewritten.
// Arguments are split as redis-cli splits them ("double quotes" with \n,
// \xHH escapes; 'single quotes').
//
// `go test ./tests -run Golden -rewrite` writes the actual outputs into
// the files (then read the diff!).

var rewrite = flag.Bool("rewrite", false, "rewrite golden transcripts with the actual outputs")

// goldenEpoch is where the manual clock of a transcript starts.
const goldenEpoch = 1800000000000

// goldenFamilies are the prefixes of transcripts that must exist: a folder
// renamed, emptied or half-deleted fails instead of checking nothing.
var goldenFamilies = []string{"delay_", "queue_", "numpool_", "room_", "streams_times", "empty_values",
	"revolver_config", "swapdb_native"}

func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.txt")
	for _, prefix := range goldenFamilies {
		if !slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(filepath.Base(f), prefix) }) {
			t.Fatalf("no golden transcript testdata/golden/%s*.txt", prefix)
		}
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			t.Parallel()
			tr := parseTranscript(t, f)
			if len(tr.cases) == 0 {
				t.Fatalf("%s holds no case", f)
			}
			got := map[int][]string{}
			for _, proto := range []int{2, 3} {
				got[proto] = runTranscript(t, tr, proto)
			}
			if *rewrite {
				if err := os.WriteFile(f, []byte(tr.render(got[2], got[3])), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for i, c := range tr.cases {
				for _, proto := range []int{2, 3} {
					if want := c.want(proto); got[proto][i] != want {
						t.Errorf("%s:%d (RESP%d)\n%s\n want: %s\n  got: %s", f, c.line, proto, c.step,
							indent(want), indent(got[proto][i]))
					}
				}
			}
		})
	}
}

// transcript is a parsed golden file.
type transcript struct {
	header string // the file's leading comment block
	cases  []goldenCase
	// persist: the transcript restarts the server, so it runs with a data
	// directory; others run memory-only.
	persist bool
}

type goldenCase struct {
	line     int      // where the case starts in the file
	comments []string // comment lines before the step
	step     string   // the command or directive line, as written
	want2    string
	want3    string
	has3     bool // a "---- resp3" section
}

func (c goldenCase) want(proto int) string {
	if proto == 3 && c.has3 {
		return c.want3
	}
	return c.want2
}

func parseTranscript(t *testing.T, path string) *transcript {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr := &transcript{}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); {
		for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
			i++
		}
		start := i
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			i++
		}
		if start == i {
			break
		}
		block := lines[start:i]
		var c goldenCase
		c.line = start + 1
		j := 0
		for j < len(block) && strings.HasPrefix(block[j], "#") {
			c.comments = append(c.comments, block[j])
			j++
		}
		if j == len(block) {
			if start == 0 || len(tr.cases) == 0 && tr.header == "" {
				tr.header = strings.Join(block, "\n")
			}
			continue // a comment block of its own
		}
		c.step = block[j]
		rest := block[j+1:]
		if len(rest) > 0 {
			if rest[0] != "----" {
				t.Fatalf("%s:%d: expected ---- after %q", path, c.line, c.step)
			}
			rest = rest[1:]
			at := slices.Index(rest, "---- resp3")
			if at >= 0 {
				c.want3, c.has3 = strings.Join(rest[at+1:], "\n"), true
				rest = rest[:at]
			}
			c.want2 = strings.Join(rest, "\n")
		}
		if strings.HasPrefix(c.step, ":restart") || strings.HasPrefix(c.step, ":crash") {
			tr.persist = true
		}
		tr.cases = append(tr.cases, c)
	}
	return tr
}

// render writes the transcript back with the outputs of both runs.
func (tr *transcript) render(out2, out3 []string) string {
	var b strings.Builder
	if tr.header != "" {
		b.WriteString(tr.header + "\n\n")
	}
	for i, c := range tr.cases {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, l := range c.comments {
			b.WriteString(l + "\n")
		}
		b.WriteString(c.step + "\n")
		if out2[i] != "" || out3[i] != "" {
			b.WriteString("----\n")
			if out2[i] != "" {
				b.WriteString(out2[i] + "\n")
			}
			if out3[i] != out2[i] {
				b.WriteString("---- resp3\n" + out3[i] + "\n")
			}
		}
	}
	return b.String()
}

// runTranscript runs every step on a fresh server whose connections speak
// proto, and returns each step's output.
func runTranscript(t *testing.T, tr *transcript, proto int) []string {
	r := &goldenRun{t: t, proto: proto, clock: engine.NewManualClock(time.UnixMilli(goldenEpoch)),
		dir: t.TempDir(), persist: tr.persist, conns: map[string]*goldenConn{}}
	r.start()
	defer func() { r.srv.Close() }()
	out := make([]string, len(tr.cases))
	for i, c := range tr.cases {
		out[i] = r.run(c)
	}
	return out
}

// goldenRun is one run of a transcript.
type goldenRun struct {
	t       *testing.T
	proto   int
	clock   *engine.ManualClock
	dir     string
	persist bool
	srv     *server.Server
	conns   map[string]*goldenConn
	ctl     *rawConn // asks the server which clients are blocked
}

func (r *goldenRun) start() {
	opts := []serverOpt{func(c *server.Config) { c.Clock = r.clock }}
	if r.persist {
		opts = append(opts, withPersistence(r.dir))
	}
	r.srv = startServer(r.t, opts...)
	// What came due while the server was down fires before the first step.
	r.srv.RunTimers()
	r.ctl = dialRaw(r.t, r.srv.Addr())
}

// stop ends the server, cleanly or as a crash; connections go with it.
func (r *goldenRun) stop(crash bool) {
	var err error
	if crash {
		err = r.srv.Crash()
	} else {
		err = r.srv.Close()
	}
	if err != nil {
		r.t.Fatalf("stopping the server: %v", err)
	}
	for _, c := range r.conns {
		c.close()
	}
	clear(r.conns)
	r.ctl.conn.Close()
}

// run performs one step and returns what it printed.
func (r *goldenRun) run(c goldenCase) string {
	r.t.Helper()
	var out []string
	if dir, ok := strings.CutPrefix(c.step, ":"); ok {
		r.directive(c, dir)
	} else {
		name, line := "A", c.step
		if n, rest, ok := strings.Cut(c.step, "> "); ok && isConnName(n) {
			name, line = n, rest
		}
		args, err := splitCommandLine(line)
		if err != nil || len(args) == 0 {
			r.t.Fatalf("line %d: bad command %q: %v", c.line, c.step, err)
		}
		conn := r.conn(name)
		for i, a := range args {
			// {B.id} is connection B's client id (CLIENT KILL, UNBLOCK).
			if n, ok := strings.CutSuffix(a, ".id}"); ok && strings.HasPrefix(n, "{") && isConnName(n[1:]) {
				args[i] = strconv.FormatInt(r.conn(n[1:]).id, 10)
			}
		}
		out = append(out, conn.command(r, args))
		if strings.EqualFold(args[0], "QUIT") {
			// The server closes it; the name opens a new one next time.
			// Wait until the server has forgotten it, so that what its
			// closing sets off (RELEASE-ON-DISCONNECT) is part of this step.
			conn.close()
			delete(r.conns, name)
			waitFor(r.t, 10*time.Second, "the server to close "+name, func() bool {
				return r.ctl.do("CLIENT", "LIST", "ID", strconv.FormatInt(conn.id, 10)).Str == ""
			})
		}
	}
	return strings.Join(append(out, r.settle()...), "\n")
}

func isConnName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		if !letter && (i == 0 || c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func (r *goldenRun) directive(c goldenCase, dir string) {
	f := strings.Fields(dir)
	ms := int64(0)
	if len(f) == 2 {
		var err error
		if ms, err = strconv.ParseInt(f[1], 10, 64); err != nil || ms < 0 {
			r.t.Fatalf("line %d: bad duration in %q", c.line, c.step)
		}
	}
	switch {
	case f[0] == "advance" && len(f) == 2:
		r.clock.Advance(time.Duration(ms) * time.Millisecond)
		r.srv.RunTimers()
	case (f[0] == "restart" || f[0] == "crash") && len(f) <= 2:
		r.stop(f[0] == "crash")
		r.clock.Advance(time.Duration(ms) * time.Millisecond)
		r.start()
	default:
		r.t.Fatalf("line %d: unknown directive %q", c.line, c.step)
	}
}

// settle collects what arrived on other connections because of the step:
// replies of clients it unblocked, and messages to subscribers.
func (r *goldenRun) settle() []string {
	var out []string
	names := make([]string, 0, len(r.conns))
	for n := range r.conns {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		c := r.conns[n]
		switch {
		case c.pending && !r.blocked(c):
			c.pending = false
			out = append(out, prefixed(n, show(c.reply(r))))
		case c.subscribed:
			// A PING answered after the messages queued before it: every
			// message the step caused has arrived once its reply has.
			c.send(r, []string{"PING"})
			for {
				v := c.reply(r)
				if isPong(v) {
					break
				}
				out = append(out, prefixed(n, message(v)))
			}
		}
	}
	return out
}

// message renders a pub/sub message on one line, the same in RESP2 and
// RESP3 ("pmessage pattern channel payload"); the shape of the frames is
// the pub/sub tests' business, what was announced is a transcript's.
func message(v resp.Value) string {
	if (v.Kind != resp.KindArray && v.Kind != resp.KindPush) || len(v.Elems) < 3 {
		return v.String()
	}
	parts := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		if e.Kind != resp.KindBulk {
			return v.String()
		}
		parts[i] = e.Str
		if e.Str == "" || strings.ContainsAny(e.Str, " \"'") || strconv.Quote(e.Str) != `"`+e.Str+`"` {
			parts[i] = strconv.Quote(e.Str)
		}
	}
	if k := parts[0]; k != "message" && k != "pmessage" && k != "smessage" {
		return v.String()
	}
	return strings.Join(parts, " ")
}

func isPong(v resp.Value) bool {
	if v.Kind == resp.KindSimple {
		return v.Str == "PONG"
	}
	return v.Kind == resp.KindArray && len(v.Elems) == 2 && v.Elems[0].Str == "pong"
}

// show renders a reply as resp.Value.String does, except text of several
// CRLF-ended lines (INFO, CLIENT LIST), bulk or verbatim: "(text)" and
// then its lines, the same in RESP2 and RESP3.
func show(v resp.Value) string {
	text := v.Str
	if v.Kind == resp.KindVerbatim && len(text) >= 4 && text[3] == ':' {
		text = text[4:]
	}
	if (v.Kind != resp.KindBulk && v.Kind != resp.KindVerbatim) || !strings.Contains(text, "\r\n") {
		return v.String()
	}
	lines := strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n")
	return "(text) " + strings.Join(lines, "\n       ")
}

// prefixed labels a reply with its connection, lining up its other lines.
func prefixed(name, s string) string {
	pad := strings.Repeat(" ", len(name)+2)
	return name + "> " + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// blocked asks the server whether c waits in a blocking command.
func (r *goldenRun) blocked(c *goldenConn) bool {
	v := r.ctl.do("CLIENT", "LIST", "ID", strconv.FormatInt(c.id, 10))
	for _, f := range strings.Fields(v.Str) {
		if flags, ok := strings.CutPrefix(f, "flags="); ok {
			return strings.Contains(flags, "b")
		}
	}
	return false
}

// conn returns the named connection, opening it on first use.
func (r *goldenRun) conn(name string) *goldenConn {
	if c := r.conns[name]; c != nil {
		return c
	}
	c := dialGolden(r.t, r.srv.Addr())
	if r.proto == 3 {
		c.send(r, []string{"HELLO", "3"})
		c.reply(r)
	}
	c.send(r, []string{"CLIENT", "ID"})
	c.id = c.reply(r).Int
	r.conns[name] = c
	return c
}

// goldenConn is a transcript's connection: a goroutine reads its replies,
// so a step can wait for one with a deadline without breaking the stream.
type goldenConn struct {
	*rawConn
	replies    chan resp.Value
	done       chan error
	id         int64
	pending    bool // a command's reply has not come: the client blocked
	subscribed bool
}

func dialGolden(t *testing.T, addr string) *goldenConn {
	c := &goldenConn{rawConn: dialRaw(t, addr), replies: make(chan resp.Value, 1024), done: make(chan error, 1)}
	go func() {
		for {
			v, err := c.rd.Read()
			if err != nil {
				c.done <- err
				return
			}
			c.replies <- v
		}
	}()
	return c
}

func (c *goldenConn) close() { c.conn.Close() }

func (c *goldenConn) send(r *goldenRun, args []string) {
	if _, err := c.conn.Write(encodeCommand(args)); err != nil {
		r.t.Fatalf("write %q: %v", args, err)
	}
}

// reply waits for the next reply; a connection the server closed reads as
// "(connection closed)".
func (c *goldenConn) reply(r *goldenRun) resp.Value {
	select {
	case v := <-c.replies:
		return v
	case <-c.done:
		if v, ok := c.lastReply(); ok {
			return v
		}
		return resp.Value{Kind: resp.KindSimple, Str: "(connection closed)"}
	case <-time.After(10 * time.Second):
		r.t.Fatal("no reply in 10 s")
		return resp.Value{}
	}
}

// lastReply takes a reply that arrived just before the server closed the
// connection: select picks at random between the two when both are ready.
func (c *goldenConn) lastReply() (resp.Value, bool) {
	select {
	case v := <-c.replies:
		return v, true
	default:
		return resp.Value{}, false
	}
}

// command sends one command and returns its output: the reply, the
// confirmations of a (P)SUBSCRIBE or UNSUBSCRIBE, or "(blocked)".
func (c *goldenConn) command(r *goldenRun, args []string) string {
	if c.pending {
		r.t.Fatalf("a transcript cannot send %q on a blocked connection", args)
	}
	c.send(r, args)
	var v resp.Value
	for got := false; !got; {
		select {
		case v = <-c.replies:
			got = true
		case <-c.done:
			if v, got = c.lastReply(); !got {
				return "(connection closed)"
			}
		case <-time.After(2 * time.Millisecond):
			if r.blocked(c) {
				c.pending = true
				return "(blocked)"
			}
		}
	}
	outs := []string{show(v)}
	if left, ok := subscription(v); ok {
		// One confirmation per channel named, or, for an UNSUBSCRIBE of
		// all, until none is left.
		n := len(args) - 1
		for i := 1; n == 0 && left > 0 || i < n; i++ {
			v = c.reply(r)
			outs = append(outs, v.String())
			left, _ = subscription(v)
		}
		c.subscribed = left > 0
	}
	return strings.Join(outs, "\n")
}

// subscription reads a (un)subscribe confirmation: how many subscriptions
// the connection has left.
func subscription(v resp.Value) (left int64, ok bool) {
	if (v.Kind != resp.KindArray && v.Kind != resp.KindPush) || len(v.Elems) != 3 ||
		!strings.HasSuffix(strings.ToLower(v.Elems[0].Str), "subscribe") || v.Elems[2].Kind != resp.KindInt {
		return 0, false
	}
	return v.Elems[2].Int, true
}
