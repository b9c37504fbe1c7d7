package server

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"

	"github.com/revolver-db/revolver/engine"
)

// The request reader: one pass over the bytes a client sends turns them into
// commands and enforces Redis's protocol limits with Redis's error texts
// (networking.c processInlineBuffer and processMultibulkBuffer, sds.c
// sdssplitargs for inline commands, in splitargs.go).
//
// Arguments alias the input buffer; nothing is copied per command. The rule
// that makes this safe: a byte handed out in an argument is never written
// again. Reads go to the free tail of the current buffer; when the tail is
// too small, a fresh buffer takes over and only the bytes not yet parsed are
// copied into it (the old one lives on as long as arguments point into it).
// The [][]byte argument headers are carved from a slab that is replaced, not
// reset, when used up, because commands can outlive their batch (the MULTI
// queue keeps them). Steady state costs one allocation per ~16 KB of input
// and one per ~512 arguments, not one per command.

const (
	inlineMax       = 64 * 1024   // PROTO_INLINE_MAX_SIZE: an inline request or a header line
	multibulkMax    = 1024 * 1024 // elements per multibulk (Redis allows INT_MAX)
	unauthMultibulk = 10          // before AUTH
	unauthBulk      = 16 * 1024   // before AUTH

	errProtoInline    = "ERR Protocol error: too big inline request"
	errProtoMbulkLine = "ERR Protocol error: too big mbulk count string"
	errProtoBulkLine  = "ERR Protocol error: too big bulk count string"
	errProtoMbulk     = "ERR Protocol error: invalid multibulk length"
	errProtoBulk      = "ERR Protocol error: invalid bulk length"
	errProtoUnauthMb  = "ERR Protocol error: unauthenticated multibulk length"
	errProtoUnauthB   = "ERR Protocol error: unauthenticated bulk length"
	errProtoQuotes    = "ERR Protocol error: unbalanced quotes in request"
	errProtoDollar    = "ERR Protocol error: expected '$', got '"

	readBufSize = 16 * 1024 // a fresh input buffer (Redis's PROTO_IOBUF_LEN)
	minRead     = 2 * 1024  // less free tail than this and the next read goes to a fresh buffer
	bigBuf      = 64 * 1024 // a buffer larger than this is dropped once everything in it is parsed
	eagerBulk   = 32 << 20  // a bulk up to this size gets a buffer holding it whole once its header is read
	slabArgs    = 512       // argument headers per slab
	keepScratch = 4096      // largest scratch argument list kept between commands
)

// protoError is a protocol violation: the client gets msg, then the
// connection closes.
type protoError struct{ msg string }

func (e *protoError) Error() string { return e.msg }

// reader parses one connection's requests. Only the connection's event
// loop uses it (also while the client is parked in a blocking command, to
// keep what it sends meanwhile); the counters at the end are for CLIENT
// LIST and INFO.
type reader struct {
	src  io.Reader
	buf  []byte // buf[:w] has been read; buf[:r] is parsed
	r, w int
	rerr error // a read error that came with data, reported after the data

	// The multibulk being parsed when its bytes have not all arrived.
	want   int      // elements still to come; 0 between commands
	bulk   int      // length of the bulk body awaited, -1 when its header comes next
	cur    [][]byte // its arguments so far (they stay valid wherever they point)
	inSlab bool     // cur is the front of slab, else it is scratch

	slab     [][]byte   // unused argument headers
	slabSize int        // of the last slab
	scratch  [][]byte   // inline arguments, and those of multibulks too long for a slab
	cmds     [][][]byte // the batch being returned (reused)
	sizes    []int      // the bytes each command of the batch took (CLIENT LIST's qbuf)
	big      []bool     // whether each had a bulk of bigArg bytes or more
	curBig   bool       // the command in progress has one
	partial  int        // bytes of the command in progress parsed by earlier calls
	failed   string     // a final error found behind commands that run first

	maxBulk *atomic.Int64 // proto-max-bulk-len
	authed  *atomic.Bool

	published uint64        // the last value stored in queue
	queue     atomic.Uint64 // see publish
	rbs, rbp  atomic.Int64  // buffer size, and its peak
}

func newReader(src io.Reader, maxBulk *atomic.Int64, authed *atomic.Bool) *reader {
	return &reader{src: src, bulk: -1, maxBulk: maxBulk, authed: authed}
}

// prefill puts bytes read elsewhere (a replication link's handshake read
// ahead) in front of what the socket will bring.
func (rd *reader) prefill(b []byte) {
	if len(b) == 0 {
		return
	}
	rd.buf = append(make([]byte, 0, max(readBufSize, len(b)+minRead)), b...)
	rd.r, rd.w = 0, len(b)
	rd.rbs.Store(int64(cap(rd.buf)))
	rd.buf = rd.buf[:cap(rd.buf)]
}

// pending reports whether bytes wait to be parsed: commands that arrived
// while the client was busy, a frame to judge again after the commands
// before it ran, or the start of a command still arriving.
func (rd *reader) pending() bool { return rd.r < rd.w || rd.failed != "" }

// release drops a buffer grown for a big request once everything in it is
// parsed and run: an idle connection does not keep it.
func (rd *reader) release() {
	if rd.r == rd.w && len(rd.buf) > bigBuf {
		rd.buf, rd.r, rd.w = nil, 0, 0
		rd.rbs.Store(0)
	}
}

// publish updates the buffer figures CLIENT LIST shows: one atomic store
// (of both, packed), and none when they did not change. The bytes queued
// count those of a command partly parsed, as Redis keeps a command it has
// not run in its query buffer.
func (rd *reader) publish() {
	v := uint64(min(int64(rd.w-rd.r+rd.partial), 1<<32-1))<<32 | uint64(min(int64(len(rd.buf)-rd.w), 1<<32-1))
	if v != rd.published {
		rd.published = v
		rd.queue.Store(v)
	}
}

// queued returns the bytes of commands not yet parsed whole and the free
// room after them (CLIENT LIST's qbuf and qbuf-free).
func (rd *reader) queued() (qbuf, free int64) {
	v := rd.queue.Load()
	return int64(v >> 32), int64(v & (1<<32 - 1))
}

// fill reads once into the free tail of the buffer, moving the unparsed
// bytes to a fresh buffer first when the tail is too small for the read or
// for a bulk whose size is known.
func (rd *reader) fill() error {
	if err := rd.rerr; err != nil {
		rd.rerr = nil
		return err
	}
	if len(rd.buf)-rd.w < minRead ||
		(rd.bulk >= 0 && rd.r+rd.bulk+2 > len(rd.buf) && rd.target() > len(rd.buf)-rd.r) {
		rd.grow()
	}
	n, err := rd.src.Read(rd.buf[rd.w:])
	rd.w += n
	if n > 0 && err != nil {
		if err != errWouldBlock {
			rd.rerr = err
		}
		err = nil
	}
	return err
}

// target is the size of the next buffer: room for the unparsed bytes and a
// read, doubling while one request keeps outgrowing its buffer, and the
// whole awaited bulk when its size is known (past eagerBulk, growing by
// doubling as the bytes arrive rather than trusting the header at once).
func (rd *reader) target() int {
	pending := rd.w - rd.r
	size := max(readBufSize, pending+minRead)
	if pending > readBufSize/2 {
		size = max(size, 2*pending)
	}
	if rd.bulk >= 0 {
		body := rd.bulk + 2
		if body > eagerBulk {
			body = min(body, max(eagerBulk, 2*pending))
		}
		size = max(size, body+minRead)
	}
	return size
}

func (rd *reader) grow() {
	nb := make([]byte, rd.target())
	n := copy(nb, rd.buf[rd.r:rd.w])
	rd.buf, rd.r, rd.w = nb, 0, n
	rd.rbs.Store(int64(len(nb)))
	if int64(len(nb)) > rd.rbp.Load() {
		rd.rbp.Store(int64(len(nb)))
	}
}

// parse turns the buffered bytes into commands, as many as are complete.
// Where a frame breaks a limit, the commands before it are returned first
// and the frame is judged again, unparsed, once they ran: they may change
// the verdict ("AUTH pass" pipelined ahead of a big command authenticates
// it, as in Redis, which runs each command before it parses the next).
func (rd *reader) parse() ([][][]byte, error) {
	rd.sizes, rd.big = rd.sizes[:0], rd.big[:0]
	cmds, err := rd.parseInto(rd.cmds[:0])
	rd.cmds = cmds
	return cmds, err
}

// bigArg is Redis's PROTO_MBULK_BIG_ARG: a bulk this long becomes its
// argument without a copy, its query buffer with it, and a new one begins.
const bigArg = 32 * 1024

// batchBytes is the bytes the commands of the batch parse returned took,
// from command from on.
func (rd *reader) batchBytes(from int) int64 {
	n := 0
	for _, s := range rd.sizes[min(from, len(rd.sizes)):] {
		n += s
	}
	return int64(n)
}

// queryBytes is what Redis's query buffer holds of the batch while its
// command cur runs: the commands from from on (those before went with a
// blocked command), less any up to the last one before or at cur that had
// a big argument.
func (rd *reader) queryBytes(from, cur int) int64 {
	for i := from; i <= cur && i < len(rd.big); i++ {
		if rd.big[i] {
			from = i + 1
		}
	}
	return rd.batchBytes(from)
}

func (rd *reader) parseInto(cmds [][][]byte) ([][][]byte, error) {
	if rd.failed != "" {
		return cmds, &protoError{rd.failed}
	}
	buf := rd.buf[:rd.w]
	r := rd.r
	start := r // where the command being parsed began in this call
	defer func() { rd.partial += rd.r - start }()
	emit := func(cmds [][][]byte) [][][]byte {
		rd.sizes = append(rd.sizes, rd.partial+r-start)
		rd.big = append(rd.big, rd.curBig)
		rd.partial, start, rd.curBig = 0, r, false
		return rd.emit(cmds)
	}
	maxBulk := rd.maxBulk.Load()
	bad := ""      // the limit the frame at r breaks
	final := false // ... after its bytes were rewritten: it cannot be parsed again
loop:
	for r < len(buf) {
		if rd.want == 0 {
			if buf[r] != '*' {
				next, err := rd.inline(buf, r)
				switch {
				case err != "":
					bad, final = err, next >= 0
					break loop
				case next < 0:
					break loop
				}
				r = next
				if len(rd.cur) > 0 {
					cmds = emit(cmds)
				}
				continue
			}
			n, next, err := header(buf, r, '*', errProtoMbulkLine, errProtoMbulk)
			switch {
			case err != "":
				bad = err
				break loop
			case next < 0:
				break loop
			case n > multibulkMax:
				bad = errProtoMbulk
				break loop
			case n > unauthMultibulk && rd.mustWait(cmds):
				bad = errProtoUnauthMb
				break loop
			}
			r = next
			if n <= 0 {
				continue // Redis skips empty and null multibulks
			}
			rd.want, rd.bulk = int(n), -1
			if n <= slabArgs {
				// The arguments go straight to where they are handed out.
				if len(rd.slab) < int(n) {
					rd.newSlab(int(n))
				}
				rd.cur, rd.inSlab = rd.slab[:0:n], true
			} else {
				rd.cur = rd.scratch[:0]
			}
		}
		for rd.want > 0 {
			if rd.bulk < 0 {
				if r >= len(buf) {
					break loop
				}
				n, next, err := header(buf, r, '$', errProtoBulkLine, errProtoBulk)
				switch {
				case err != "":
					bad = err
					break loop
				case next < 0:
					break loop
				case n < 0 || n > maxBulk:
					bad = errProtoBulk
					break loop
				case n > unauthBulk && rd.mustWait(cmds):
					bad = errProtoUnauthB
					break loop
				}
				r, rd.bulk = next, int(n)
				rd.curBig = rd.curBig || n >= bigArg
			}
			if len(buf)-r < rd.bulk+2 {
				break loop
			}
			end := r + rd.bulk
			rd.cur = append(rd.cur, buf[r:end:end])
			r = end + 2 // the two bytes after a bulk are skipped unread, as Redis does
			rd.bulk = -1
			rd.want--
		}
		cmds = emit(cmds)
	}
	rd.r = r
	switch {
	case bad == "":
	case len(cmds) == 0:
		return cmds, &protoError{bad}
	case final:
		rd.failed = bad
	}
	return cmds, nil
}

// header reads the "*<n>" or "$<n>" line at buf[r], whose first byte must
// be kind: next is the index after the line, -1 when it has not all
// arrived. err is tooLongErr for a line past inlineMax, invalidErr for a
// number engine.ParseInt (Redis's string2ll) rejects, or "expected '$'".
func header(buf []byte, r int, kind byte, tooLongErr, invalidErr string) (n int64, next int, err string) {
	// The usual header: a few digits, '\r', one more byte.
	if buf[r] == kind {
		i, lim := r+1, min(len(buf), r+19)
		v := int64(0)
		for ; i < lim && buf[i]-'0' <= 9; i++ {
			v = v*10 + int64(buf[i]-'0')
		}
		if digits := i - r - 1; i+1 < len(buf) && buf[i] == '\r' && digits > 0 && digits <= 18 &&
			(buf[r+1] != '0' || digits == 1) {
			return v, i + 2, ""
		}
	}
	cr := lineEnd(buf, r)
	switch {
	case cr == tooLong:
		return 0, -1, tooLongErr
	case cr < 0:
		return 0, -1, ""
	case buf[r] != kind:
		return 0, -1, errProtoDollar + printable(buf[r]) + "'"
	}
	n, ok := engine.ParseInt(buf[r+1 : cr])
	if !ok {
		return 0, -1, invalidErr
	}
	return n, cr + 2, ""
}

// tooLong is lineEnd's answer for a header line past inlineMax.
const tooLong = -2

// lineEnd finds the '\r' ending the header line at buf[r]: its index, -1
// when the line has not all arrived, tooLong when it is longer than
// inlineMax. Like Redis it wants one more byte after the '\r' (and skips it
// unread, not checking that it is '\n').
func lineEnd(buf []byte, r int) int {
	lim := min(len(buf), r+inlineMax+1)
	for i := r; i < lim; i++ {
		if buf[i] == '\r' {
			if i+1 >= len(buf) {
				return -1
			}
			return i
		}
	}
	if len(buf)-r > inlineMax {
		return tooLong
	}
	return -1
}

// printable is the byte as Redis's error text shows it: CR and LF become
// spaces (they would break the reply line).
func printable(c byte) string {
	if c == '\r' || c == '\n' {
		return " "
	}
	return string([]byte{c})
}

// mustWait reports whether a frame past the unauthenticated limits cannot be
// accepted now: the client is not authenticated, or a command before it in
// this batch may change that (AUTH, HELLO ... AUTH, RESET, EXEC of a queued
// AUTH). parse then returns the error, or the commands before the frame.
func (rd *reader) mustWait(cmds [][][]byte) bool {
	if !rd.authed.Load() {
		return true
	}
	for _, args := range cmds {
		switch name := args[0]; len(name) {
		case 4:
			if strings.EqualFold(string(name), "auth") || strings.EqualFold(string(name), "exec") {
				return true
			}
		case 5:
			if strings.EqualFold(string(name), "hello") || strings.EqualFold(string(name), "reset") {
				return true
			}
		}
	}
	return false
}

// emit appends the finished command's arguments to the batch. They are
// capped (an append by a handler cannot reach the next command's), and
// taken off the slab for good.
func (rd *reader) emit(cmds [][][]byte) [][][]byte {
	n := len(rd.cur)
	if rd.inSlab {
		args := rd.cur // already rd.slab[:n:n]
		rd.slab = rd.slab[n:]
		rd.cur, rd.inSlab = nil, false
		return append(cmds, args)
	}
	var args [][]byte
	if n <= slabArgs {
		if len(rd.slab) < n {
			rd.newSlab(n)
		}
		args = rd.slab[:n:n]
		rd.slab = rd.slab[n:]
	} else {
		args = make([][]byte, n)
	}
	copy(args, rd.cur)
	if cap(rd.cur) > keepScratch {
		rd.scratch = nil
	} else {
		clear(rd.cur)
		rd.scratch = rd.cur[:0]
	}
	rd.cur = nil
	return append(cmds, args)
}

// newSlab replaces the slab (its unused rest stays unused). Slabs double
// from 16 headers to slabArgs, so that a connection that sends little keeps
// little.
func (rd *reader) newSlab(n int) {
	rd.slabSize = max(min(max(2*rd.slabSize, 16), slabArgs), n)
	rd.slab = make([][]byte, rd.slabSize)
}

// inline parses the inline request at buf[r]: next is the index after its
// line, or -1 when the line is incomplete or too long (err set). Its
// arguments go to rd.cur, in scratch (none for a blank line, which Redis
// ignores).
func (rd *reader) inline(buf []byte, r int) (next int, err string) {
	lim := min(len(buf), r+inlineMax+1)
	nl := bytes.IndexByte(buf[r:lim], '\n')
	if nl < 0 {
		if len(buf)-r > inlineMax {
			return -1, errProtoInline
		}
		return -1, ""
	}
	line := buf[r : r+nl]
	if nl > 0 && line[nl-1] == '\r' {
		line = line[:nl-1]
	}
	args, ok := splitArgs(line, rd.scratch[:0])
	if !ok {
		clear(args)
		rd.scratch = args[:0]
		return r + nl + 1, errProtoQuotes
	}
	rd.cur = args
	return r + nl + 1, ""
}
