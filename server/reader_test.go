package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/revolver-db/revolver/engine"
)

// chunks is a source that returns its input in the given pieces, one per
// Read, then EOF.
type chunks struct{ parts [][]byte }

func (c *chunks) Read(p []byte) (int, error) {
	for len(c.parts) > 0 && len(c.parts[0]) == 0 {
		c.parts = c.parts[1:]
	}
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	return n, nil
}

func splitAt(in string, cuts ...int) *chunks {
	var parts [][]byte
	prev := 0
	for _, c := range cuts {
		if c < prev || c > len(in) {
			continue
		}
		parts = append(parts, []byte(in[prev:c]))
		prev = c
	}
	return &chunks{parts: append(parts, []byte(in[prev:]))}
}

func byteByByte(in string) *chunks {
	parts := make([][]byte, len(in))
	for i := range in {
		parts[i] = []byte{in[i]}
	}
	return &chunks{parts: parts}
}

type parseResult struct {
	cmds    []string // each command's arguments, quoted, space-separated
	batches int
	err     string // the protocol error, "" at EOF
}

func testReader(src io.Reader, authed bool) *reader {
	var maxBulk atomic.Int64
	maxBulk.Store(512 << 20)
	var a atomic.Bool
	a.Store(authed)
	return newReader(src, &maxBulk, &a)
}

func fmtArgs(args [][]byte) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(parts, " ")
}

// readAllCommands drains rd, as a connection would.
func readAllCommands(t testing.TB, rd *reader) parseResult {
	t.Helper()
	var res parseResult
	for {
		batch, err := rd.next()
		if len(batch) > 0 {
			res.batches++
			for _, args := range batch {
				if len(args) == 0 {
					t.Fatal("empty command returned")
				}
				for _, a := range args {
					if cap(a) != len(a) {
						t.Fatalf("argument %q has spare capacity %d: an append would overwrite the buffer", a, cap(a)-len(a))
					}
				}
				res.cmds = append(res.cmds, fmtArgs(args))
			}
		}
		if err != nil {
			var perr *protoError
			if errors.As(err, &perr) {
				res.err = perr.msg
			} else if err != io.EOF {
				t.Fatalf("read error: %v", err)
			}
			return res
		}
	}
}

func parseString(t testing.TB, in string, authed bool) parseResult {
	return readAllCommands(t, testReader(&chunks{parts: [][]byte{[]byte(in)}}, authed))
}

var readerCases = []struct {
	name string
	in   string
	want []string // commands, arguments quoted
	err  string
}{
	{"multibulk", "*1\r\n$4\r\nPING\r\n", []string{`"PING"`}, ""},
	{"pipelined", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n",
		[]string{`"GET" "k"`, `"SET" "k" "hello"`}, ""},
	{"empty and binary bulks", "*3\r\n$3\r\nSET\r\n$0\r\n\r\n$4\r\n\x00\r\n\xff\r\n", []string{`"SET" "" "\x00\r\n\xff"`}, ""},
	{"bytes after a bulk are skipped unread", "*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n", []string{`"PING"`, `"PING"`}, ""},
	{"byte after a header CR is skipped unread", "*1\rX$4\rYPING\r\n", []string{`"PING"`}, ""},
	{"empty and null multibulks are skipped", "*0\r\n*-1\r\n*-5\r\n*1\r\n$4\r\nPING\r\n", []string{`"PING"`}, ""},
	{"inline", "PING\r\nECHO hello\nSET a  b\r\n", []string{`"PING"`, `"ECHO" "hello"`, `"SET" "a" "b"`}, ""},
	{"blank inline lines are skipped", "\r\n\n   \r\n\t\nPING\r\n", []string{`"PING"`}, ""},
	{"only one CR is stripped", "PING\r\r\n", []string{`"PING"`}, ""},
	{"inline blanks", " \v\fa\tb\rc \r\n", []string{`"a" "b" "c"`}, ""},
	{"vertical tab inside a word", "a\vb\r\n", []string{`"a\vb"`}, ""},
	{"double quotes", `SET "a b" "c\"d" "\n\r\t\b\a\\\q\x41\x4a\x4Z"` + "\r\n",
		[]string{`"SET" "a b" "c\"d" "\n\r\t\b\a\\qAJx4Z"`}, ""},
	{"single quotes", `SET 'a b' 'it\'s' 'back\slash\n'` + "\r\n", []string{`"SET" "a b" "it's" "back\\slash\\n"`}, ""},
	{"empty quoted arguments", `SET "" ''` + "\r\n", []string{`"SET" "" ""`}, ""},
	{"quotes inside a word", `foo"bar baz"qux` + "\r\n", nil, errProtoQuotes},
	{"quote opening mid-word", `foo"bar baz"` + "\r\n", []string{`"foobar baz"`}, ""},
	{"NUL ends the line", "a\x00b c\r\nPING\r\n", []string{`"a"`, `"PING"`}, ""},
	{"NUL first", "\x00\x01\x02\xff\r\nPING\r\n", []string{`"PING"`}, ""},
	{"closing quote then NUL", "\"a\"\x00b\r\n", []string{`"a"`}, ""},
	{"unbalanced double quote", "PING\r\nSET \"a\r\n", []string{`"PING"`}, errProtoQuotes},
	{"unbalanced single quote", "SET 'a\r\n", nil, errProtoQuotes},
	{"closing quote followed by a letter", "\"a\"b\r\n", nil, errProtoQuotes},
	{"closing single quote followed by a letter", "'a'b\r\n", nil, errProtoQuotes},
	{"backslash ending a quoted line", "\"a\\\r\n", nil, errProtoQuotes},
	{"NUL inside quotes", "\"a\x00\"\r\n", nil, errProtoQuotes},
	{"bad multibulk count", "*x\r\n", nil, errProtoMbulk},
	{"leading zero count", "*01\r\n$4\r\nPING\r\n", nil, errProtoMbulk},
	{"minus zero count", "*-0\r\n", nil, errProtoMbulk},
	{"plus count", "*+1\r\n", nil, errProtoMbulk},
	{"empty count", "*\r\n", nil, errProtoMbulk},
	{"count over the cap", "*1048577\r\n", nil, errProtoMbulk},
	{"count overflow", "*99999999999999999999\r\n", nil, errProtoMbulk},
	{"smallest int64 count is skipped", "*-9223372036854775808\r\n*1\r\n$4\r\nPING\r\n", []string{`"PING"`}, ""},
	{"below int64 count", "*-9223372036854775809\r\n", nil, errProtoMbulk},
	{"negative bulk", "*1\r\n$-1\r\n", nil, errProtoBulk},
	{"bad bulk length", "*1\r\n$1x\r\n", nil, errProtoBulk},
	{"bulk over proto-max-bulk-len", "*1\r\n$536870913\r\n", nil, errProtoBulk},
	{"expected dollar", "*1\r\nPING\r\n", nil, "ERR Protocol error: expected '$', got 'P'"},
	{"expected dollar, got a star", "*2\r\n*1\r\n$1\r\nx\r\n", nil, "ERR Protocol error: expected '$', got '*'"},
	{"fast and slow headers agree", "*2\r\n$3\r\nGET\r\n$18\r\n123456789012345678\r\n*1\r\n$0\r\n\r\n",
		[]string{`"GET" "123456789012345678"`, `""`}, ""},
	{"header with 19 digits", "*1\r\n$1234567890123456789\r\n", nil, errProtoBulk},
	{"leading zero bulk", "*1\r\n$04\r\nPING\r\n", nil, errProtoBulk},
	{"expected dollar, CR", "*1\r\n\r\r\n", nil, "ERR Protocol error: expected '$', got ' '"},
	{"commands before a bad frame run", "*1\r\n$4\r\nPING\r\nECHO x\r\n*2\r\n$3\r\nGET\r\n$600000000\r\n",
		[]string{`"PING"`, `"ECHO" "x"`}, errProtoBulk},
	{"commands before bad quotes run", "PING\r\n*1\r\n$4\r\nPING\r\n'\r\n", []string{`"PING"`, `"PING"`}, errProtoQuotes},
	{"inline too big", strings.Repeat("x", inlineMax+1), nil, errProtoInline},
	{"inline at the limit", strings.Repeat("x", inlineMax) + "\n", []string{`"` + strings.Repeat("x", inlineMax) + `"`}, ""},
	{"inline line over the limit", strings.Repeat("x", inlineMax+1) + "\n", nil, errProtoInline},
	{"mbulk count too long", "*" + strings.Repeat("1", inlineMax), nil, errProtoMbulkLine},
	{"bulk count too long", "*1\r\n$" + strings.Repeat("1", inlineMax), nil, errProtoBulkLine},
	{"incomplete at EOF", "*2\r\n$3\r\nGET\r\n$1\r\n", nil, ""},
}

func TestReaderCases(t *testing.T) {
	for _, tc := range readerCases {
		t.Run(tc.name, func(t *testing.T) {
			got := parseString(t, tc.in, true)
			if fmt.Sprint(got.cmds) != fmt.Sprint(tc.want) || got.err != tc.err {
				t.Errorf("got %q err %q\nwant %q err %q", got.cmds, got.err, tc.want, tc.err)
			}
		})
	}
}

// Frames split anywhere, down to one byte per read, parse the same.
func TestReaderSplits(t *testing.T) {
	for _, tc := range readerCases {
		if len(tc.in) > 4096 {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			whole := parseString(t, tc.in, true)
			for i := 0; i <= len(tc.in); i++ {
				got := readAllCommands(t, testReader(splitAt(tc.in, i), true))
				if fmt.Sprint(got.cmds) != fmt.Sprint(whole.cmds) || got.err != whole.err {
					t.Fatalf("split at %d: got %q err %q, whole %q err %q", i, got.cmds, got.err, whole.cmds, whole.err)
				}
			}
			got := readAllCommands(t, testReader(byteByByte(tc.in), true))
			if fmt.Sprint(got.cmds) != fmt.Sprint(whole.cmds) || got.err != whole.err {
				t.Fatalf("byte by byte: got %q err %q, whole %q err %q", got.cmds, got.err, whole.cmds, whole.err)
			}
		})
	}
}

func multibulk(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

func TestReaderUnauthenticatedLimits(t *testing.T) {
	eleven := multibulk("DEL", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10")
	ten := multibulk("DEL", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	bigBulk := multibulk("SET", "k", strings.Repeat("v", unauthBulk+1))
	maxBulk := multibulk("SET", "k", strings.Repeat("v", unauthBulk))
	for _, tc := range []struct {
		name, in, err string
		n             int
	}{
		{"11 elements", eleven, errProtoUnauthMb, 0},
		{"10 elements", ten, "", 1},
		{"big bulk", bigBulk, errProtoUnauthB, 0},
		{"bulk at the limit", maxBulk, "", 1},
		{"inline has no element limit", "DEL 1 2 3 4 5 6 7 8 9 10 11\r\n", "", 1},
		{"commands before run first", multibulk("PING") + eleven, errProtoUnauthMb, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseString(t, tc.in, false)
			if got.err != tc.err || len(got.cmds) != tc.n {
				t.Errorf("got %q err %q, want %d commands, err %q", got.cmds, got.err, tc.n, tc.err)
			}
		})
	}
}

// "AUTH pass" pipelined ahead of a big command authenticates it: the big
// frame is judged only after the commands before it ran, as Redis parses
// each command after running the previous one.
func TestReaderPipelinedAuth(t *testing.T) {
	big := multibulk("SET", "k", strings.Repeat("v", unauthBulk+1))
	eleven := multibulk("DEL", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10")
	for _, frame := range []string{big, eleven} {
		in := multibulk("AUTH", "pass") + frame
		for cut := 0; cut <= len(in); cut += max(1, len(in)/50) {
			rd := testReader(splitAt(in, cut), false)
			batch, err := rd.next()
			for len(batch) == 0 && err == nil {
				batch, err = rd.next()
			}
			if err != nil || len(batch) != 1 || string(batch[0][0]) != "AUTH" {
				t.Fatalf("cut %d: first batch %v %v, want AUTH alone", cut, batch, err)
			}
			rd.authed.Store(true) // AUTH ran
			batch, err = rd.next()
			if err != nil || len(batch) != 1 {
				t.Fatalf("cut %d: second batch %v %v", cut, batch, err)
			}
		}
		// A wrong password leaves the client unauthenticated: the frame is
		// then an error.
		rd := testReader(splitAt(in), false)
		if batch, err := rd.next(); err != nil || len(batch) != 1 {
			t.Fatalf("first batch %v %v", batch, err)
		}
		if _, err := rd.next(); err == nil {
			t.Fatal("big frame accepted without authentication")
		}
	}
	// Authenticated, but a RESET ahead may log the client out: the frame
	// waits for it too.
	rd := testReader(splitAt(multibulk("RESET")+eleven), true)
	if batch, err := rd.next(); err != nil || len(batch) != 1 {
		t.Fatalf("RESET batch %v %v", batch, err)
	}
	rd.authed.Store(false)
	if _, err := rd.next(); err == nil || err.Error() != errProtoUnauthMb {
		t.Fatalf("after RESET: %v", err)
	}
	// Nothing that could change it: one batch.
	rd = testReader(splitAt(multibulk("PING")+eleven), true)
	if batch, err := rd.next(); err != nil || len(batch) != 2 {
		t.Fatalf("authenticated batch %v %v", batch, err)
	}
}

// Arguments handed out are never overwritten, however much is read after
// them, and the buffers are replaced rather than reused.
func TestReaderArgumentsStayValid(t *testing.T) {
	var in strings.Builder
	var want []string
	for i := 0; i < 20000; i++ {
		k, v := fmt.Sprintf("key:%d", i), strings.Repeat(string(rune('a'+i%26)), i%300)
		if i%7 == 0 {
			in.WriteString("SET " + k + " \"" + v + "\\x41\"\r\n")
			v += "A"
		} else {
			in.WriteString(multibulk("SET", k, v))
		}
		want = append(want, k+"="+v)
	}
	src := in.String()
	// Irregular reads.
	var cuts []int
	for c := 1; c < len(src); c += 1 + (c*7919)%9000 {
		cuts = append(cuts, c)
	}
	rd := testReader(splitAt(src, cuts...), true)
	var kept [][][]byte
	for {
		batch, err := rd.next()
		kept = append(kept, batch...) // the argument lists themselves, not copies
		if err != nil {
			break
		}
	}
	if len(kept) != len(want) {
		t.Fatalf("%d commands, want %d", len(kept), len(want))
	}
	for i, args := range kept {
		if got := string(args[1]) + "=" + string(args[2]); got != want[i] {
			t.Fatalf("command %d now reads %q, want %q", i, got, want[i])
		}
	}
}

// A bulk larger than the buffer gets a buffer that holds it whole as soon as
// its header is read; bigger than eagerBulk, the buffer grows by doubling as
// the bytes arrive.
func TestReaderBigBulks(t *testing.T) {
	for _, size := range []int{readBufSize - 10, readBufSize * 3, 1 << 20, eagerBulk + 5<<20} {
		val := bytes.Repeat([]byte{'v'}, size)
		in := multibulk("SET", "k", string(val)) + multibulk("GET", "k")
		rd := testReader(splitAt(in, 7, 30, 4000, min(70000, len(in)/2), len(in)/2), true)
		res := readAllCommands(t, rd)
		if len(res.cmds) != 2 || res.err != "" {
			t.Fatalf("size %d: %d commands, err %q", size, len(res.cmds), res.err)
		}
		if want := fmt.Sprintf("%q %q %q", "SET", "k", val); res.cmds[0] != want {
			t.Fatalf("size %d: value mangled", size)
		}
		if size <= eagerBulk && rd.rbp.Load() > int64(size+readBufSize+minRead) {
			t.Errorf("size %d: buffer peaked at %d", size, rd.rbp.Load())
		}
	}
}

// A huge element count allocates for the elements that arrive, not for the
// count.
func TestReaderHugeCount(t *testing.T) {
	in := "*1000000\r\n" + strings.Repeat("$1\r\nx\r\n", 10)
	rd := testReader(splitAt(in), true)
	res := readAllCommands(t, rd)
	if len(res.cmds) != 0 || res.err != "" || len(rd.cur) != 10 {
		t.Fatalf("got %v %q, %d partial arguments", res.cmds, res.err, len(rd.cur))
	}
}

// The reader parses headers with engine.ParseInt: Redis's string2ll rules.
func TestHeaderNumbers(t *testing.T) {
	for _, tc := range []struct {
		in string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true}, {"9223372036854775807", 1<<63 - 1, true},
		{"-9223372036854775808", -1 << 63, true}, {"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false}, {"18446744073709551616", 0, false}, {"", 0, false}, {"-", 0, false},
		{"00", 0, false}, {"01", 0, false}, {"-0", 0, false}, {"+1", 0, false}, {" 1", 0, false}, {"1 ", 0, false},
		{"1a", 0, false}, {"123456789012345678901", 0, false},
	} {
		n, ok := engine.ParseInt([]byte(tc.in))
		if n != tc.n || ok != tc.ok {
			t.Errorf("ParseInt(%q) = %d %v, want %d %v", tc.in, n, ok, tc.n, tc.ok)
		}
	}
}

// FuzzReaderSplit: the commands and the error do not depend on where reads
// split the input.
func FuzzReaderSplit(f *testing.F) {
	for _, tc := range readerCases {
		if len(tc.in) < 1024 {
			f.Add([]byte(tc.in), uint16(len(tc.in)/2))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		whole := parseString(t, string(in), true)
		c := int(cut) % (len(in) + 1)
		split := readAllCommands(t, testReader(splitAt(string(in), c), true))
		if fmt.Sprint(split.cmds) != fmt.Sprint(whole.cmds) || split.err != whole.err {
			t.Fatalf("split at %d: %q %q, whole: %q %q", c, split.cmds, split.err, whole.cmds, whole.err)
		}
	})
}

// Commands longer than a slab take their own argument list; shorter ones
// around them still share slabs.
func TestReaderLongCommands(t *testing.T) {
	var in strings.Builder
	var want []string
	for _, n := range []int{1, 17, 600, 3, slabArgs, slabArgs + 1, 2} {
		args := make([]string, n)
		quoted := make([]string, n)
		for i := range args {
			args[i] = fmt.Sprintf("a%d", i)
			quoted[i] = fmt.Sprintf("%q", args[i])
		}
		in.WriteString(multibulk(args...))
		want = append(want, strings.Join(quoted, " "))
	}
	for _, src := range []io.Reader{splitAt(in.String()), byteByByte(in.String())} {
		got := readAllCommands(t, testReader(src, true))
		if fmt.Sprint(got.cmds) != fmt.Sprint(want) || got.err != "" {
			t.Fatalf("got %d commands, err %q", len(got.cmds), got.err)
		}
	}
}

// FuzzHeader: the fast path of header agrees with the general one.
func FuzzHeader(f *testing.F) {
	for _, s := range []string{"$3\r\n", "$0\r\n", "$01\r\n", "$-1\r\n", "*123456789012345678\r\n",
		"$1234567890123456789\r\n", "$9223372036854775807\r\n", "$3\r", "$\r\n", "x3\r\n", "$3 \r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, buf []byte) {
		if len(buf) == 0 {
			return
		}
		kind := buf[0]
		if kind != '*' {
			kind = '$'
		}
		n, next, err := header(buf, 0, kind, "long", "invalid")
		// The general path alone.
		var wn int64
		wnext, werr := -1, ""
		switch cr := lineEnd(buf, 0); {
		case cr == tooLong:
			werr = "long"
		case cr < 0:
		case buf[0] != kind:
			werr = errProtoDollar + printable(buf[0]) + "'"
		default:
			if v, ok := engine.ParseInt(buf[1:cr]); ok {
				wn, wnext = v, cr+2
			} else {
				werr = "invalid"
			}
		}
		if n != wn || next != wnext || err != werr {
			t.Fatalf("%q: header = %d %d %q, general path %d %d %q", buf, n, next, err, wn, wnext, werr)
		}
	})
}

// next, for tests, reads a blocking source as the event loop reads a
// socket: it returns the commands complete in the buffer, reading first when
// there are none. A *protoError comes alone: the commands before the bad
// frame were returned by earlier calls. The batch is valid until the next
// call; the arguments in it, forever.
func (rd *reader) next() ([][][]byte, error) {
	for {
		cmds, err := rd.parse()
		rd.publish()
		if len(cmds) > 0 || err != nil {
			return cmds, err
		}
		rd.release()
		if err := rd.fill(); err != nil {
			return nil, err
		}
	}
}
