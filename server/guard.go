package server

import (
	"errors"
	"net"
	"sync/atomic"
)

// The protocol guard sits between the socket and redcon's reader. redcon
// parses frames but has no limits: a "$600000000" header would make it
// buffer 600 MB. The guard follows the frame headers as bytes stream by
// (bodies are skipped by count, so the cost is per header byte) and enforces
// Redis's limits with Redis's replies: proto-max-bulk-len, the inline and
// header line lengths, the unauthenticated sizes, and a cap of 1M elements
// per multibulk. On a violation it lets the bytes before the bad frame
// through (the commands already complete still run and get their replies),
// then writes the error and ends the connection, as Redis does.

const (
	inlineMax         = 64 * 1024
	multibulkMax      = 1024 * 1024
	unauthMultibulk   = 10
	unauthBulk        = 16 * 1024
	errGuardInline    = "ERR Protocol error: too big inline request"
	errGuardMbulkLine = "ERR Protocol error: too big mbulk count string"
	errGuardBulkLine  = "ERR Protocol error: too big bulk count string"
	errGuardMbulk     = "ERR Protocol error: invalid multibulk length"
	errGuardBulk      = "ERR Protocol error: invalid bulk length"
	errGuardUnauthMb  = "ERR Protocol error: unauthenticated multibulk length"
	errGuardUnauthB   = "ERR Protocol error: unauthenticated bulk length"
)

var errProtocolClosed = errors.New("protocol error")

type guardState uint8

const (
	gsStart      guardState = iota // at the first byte of a command
	gsInline                       // inside an inline command line
	gsCount                        // inside "*<count>"
	gsBulkStart                    // expecting '$'
	gsBulkLen                      // inside "$<len>"
	gsBulkBody                     // skipping a bulk body and its CRLF
	gsHeaderLF                     // header digits read, expecting '\n'
	gsBulkHeadLF                   // bulk length read, expecting '\n'
)

// guardListener wraps accepted connections.
type guardListener struct {
	net.Listener
	s *Server
}

func (l guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &guardConn{Conn: c, s: l.s}, nil
}

// guardConn is a net.Conn whose reads are checked frame by frame.
type guardConn struct {
	net.Conn
	s      *Server
	authed *atomic.Bool // set once the client exists

	state     guardState
	lineLen   int   // bytes of the current header or inline line
	num       int64 // header number being parsed
	neg       bool
	digits    int
	bad       bool  // header had a non-digit
	remaining int64 // bulks left in this multibulk
	body      int64 // body bytes (plus CRLF) left
	lineStart int   // offset in the current chunk where the header began (-1: earlier chunk)
	// frameStart is where the current command began in this chunk (-1: in
	// an earlier one). An unauthenticated-size violation is judged only
	// after the commands before it ran: "AUTH pass" pipelined ahead of a
	// big command must authenticate it, as in Redis. Until then the rest of
	// the chunk waits in held.
	frameStart int
	held       []byte

	fail string // error to send once the bytes before it are consumed
}

// Write skips empty writes: redcon flushes its (unused) writer after every
// batch, and an empty write would still cost a syscall.
func (g *guardConn) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	return g.Conn.Write(b)
}

func (g *guardConn) Read(p []byte) (int, error) {
	if g.fail != "" {
		g.Conn.Write([]byte("-" + g.fail + "\r\n"))
		return 0, errProtocolClosed
	}
	var n int
	var err error
	if len(g.held) > 0 {
		n = copy(p, g.held)
		g.held = g.held[n:]
	} else {
		n, err = g.Conn.Read(p)
	}
	if n > 0 {
		n = g.scan(p[:n])
		if g.fail != "" && n == 0 {
			g.Conn.Write([]byte("-" + g.fail + "\r\n"))
			return 0, errProtocolClosed
		}
	}
	return n, err
}

func (g *guardConn) isAuthed() bool { return g.authed == nil || g.authed.Load() }

// scan follows frames through b and returns how many bytes redcon may see:
// all of them, or those before a violation (recorded in g.fail). Empty
// multibulks ("*0", "*-1"), which Redis skips and redcon rejects, are cut out
// when they lie within one read.
func (g *guardConn) scan(b []byte) int {
	out := 0 // write index for compaction
	g.lineStart, g.frameStart = -1, -1
	if g.state == gsStart {
		g.lineStart, g.frameStart = 0, 0
	}
	for i := 0; i < len(b); i++ {
		ch := b[i]
		switch g.state {
		case gsStart:
			g.lineStart, g.frameStart = out, out
			g.lineLen = 0
			if ch == '*' {
				g.state = gsCount
				g.resetNum()
			} else {
				g.state = gsInline
				i-- // the byte belongs to the inline line
				continue
			}
		case gsInline:
			g.lineLen++
			if ch == '\n' {
				g.state = gsStart
			} else if g.lineLen > inlineMax {
				return g.violate(errGuardInline, out)
			}
		case gsCount, gsBulkLen:
			g.lineLen++
			if ch == '\r' {
				if g.state == gsCount {
					g.state = gsHeaderLF
				} else {
					g.state = gsBulkHeadLF
				}
			} else {
				g.digit(ch)
				if g.lineLen > inlineMax {
					if g.state == gsCount {
						return g.violate(errGuardMbulkLine, out)
					}
					return g.violate(errGuardBulkLine, out)
				}
			}
		case gsHeaderLF:
			count, ok := g.number()
			switch {
			case !ok || count > multibulkMax:
				return g.violate(errGuardMbulk, g.cutPoint(out))
			case count > unauthMultibulk && !g.isAuthed():
				if pass, ok := g.holdForAuth(b, out, i); ok {
					return pass
				}
				return g.violate(errGuardUnauthMb, g.cutPoint(out))
			case count <= 0:
				g.state = gsStart
				if g.lineStart >= 0 && ch == '\n' {
					out = g.lineStart // drop the empty multibulk
					continue
				}
			default:
				g.remaining = count
				g.state = gsBulkStart
			}
		case gsBulkStart:
			if ch != '$' {
				// redcon answers "expected '$', got ..." itself.
				g.state = gsStart
				break
			}
			g.state = gsBulkLen
			g.lineLen = 1
			g.resetNum()
		case gsBulkHeadLF:
			size, ok := g.number()
			switch {
			case !ok || size < 0 || size > g.s.maxBulkLen.Load():
				return g.violate(errGuardBulk, out)
			case size > unauthBulk && !g.isAuthed():
				if pass, ok := g.holdForAuth(b, out, i); ok {
					return pass
				}
				return g.violate(errGuardUnauthB, out)
			}
			g.body = size + 2
			g.state = gsBulkBody
		case gsBulkBody:
			// Skip the body by count rather than byte by byte.
			take := int64(len(b) - i)
			if take > g.body {
				take = g.body
			}
			if out != i {
				copy(b[out:], b[i:i+int(take)])
			}
			out += int(take)
			i += int(take) - 1
			g.body -= take
			if g.body == 0 {
				g.remaining--
				if g.remaining == 0 {
					g.state = gsStart
				} else {
					g.state = gsBulkStart
				}
			}
			continue
		}
		if out != i {
			b[out] = ch
		}
		out++
	}
	return out
}

// holdForAuth defers an unauthenticated-size violation when whole commands
// precede the offending one in this chunk: those pass now, and the rest
// (from the offending command's start) is scanned again on the next read,
// after they ran. b[:out] is the compacted output so far, b[i:] the input
// not yet scanned.
func (g *guardConn) holdForAuth(b []byte, out, i int) (int, bool) {
	if g.frameStart <= 0 {
		return 0, false
	}
	rest := make([]byte, 0, out-g.frameStart+len(b)-i+len(g.held))
	rest = append(rest, b[g.frameStart:out]...)
	rest = append(rest, b[i:]...)
	g.held = append(rest, g.held...)
	g.state = gsStart
	return g.frameStart, true
}

// cutPoint is where to stop passing bytes for a bad multibulk header: its
// start when it began in this read, else everything before this byte.
func (g *guardConn) cutPoint(out int) int {
	if g.lineStart >= 0 {
		return g.lineStart
	}
	return out
}

func (g *guardConn) violate(msg string, pass int) int {
	g.fail = msg
	return pass
}

func (g *guardConn) resetNum() {
	g.num, g.neg, g.digits, g.bad = 0, false, 0, false
}

func (g *guardConn) digit(ch byte) {
	switch {
	case ch == '-' && g.digits == 0 && !g.neg:
		g.neg = true
	case ch >= '0' && ch <= '9':
		if g.num > (1<<62)/10 {
			g.bad = true
		}
		g.num = g.num*10 + int64(ch-'0')
		g.digits++
	default:
		g.bad = true
	}
}

// number returns the parsed header value with string2ll's rules.
func (g *guardConn) number() (int64, bool) {
	if g.bad || g.digits == 0 {
		return 0, false
	}
	if g.neg {
		return -g.num, true
	}
	return g.num, true
}
