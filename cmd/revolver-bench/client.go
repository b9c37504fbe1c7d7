package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// Conn is the benchmark's RESP2 client: one TCP connection, an output buffer
// that commands are appended to, and a reader that can either skip a reply
// without allocating (the load loop) or parse it fully (control commands).
// Both servers are driven by this same code.
//
// It exists because go-redis's per-command cost (a Cmd object, interface
// boxing of every argument, a reply decoded into Go values) is paid on the
// same two cores the server runs on; see BenchmarkClient* in client_test.go.
type Conn struct {
	nc  net.Conn
	br  *bufio.Reader
	out []byte
}

// ReplyError is an error reply from the server.
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

// unknownCommand reports whether err is a server's "unknown command" reply,
// the signal that a workload does not exist on that server yet.
func unknownCommand(err error) bool {
	var re ReplyError
	return errors.As(err, &re) && strings.HasPrefix(string(re), "ERR unknown command")
}

// Dial connects to addr.
func Dial(addr string, timeout time.Duration) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &Conn{nc: nc, br: bufio.NewReaderSize(nc, 64*1024), out: make([]byte, 0, 16*1024)}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Append encodes one command of string arguments into the output buffer.
func (c *Conn) Append(args ...string) {
	c.out = appendHeader(c.out, '*', len(args))
	for _, a := range args {
		c.out = appendBulkString(c.out, a)
	}
}

// AppendRaw adds pre-encoded command bytes to the output buffer.
func (c *Conn) AppendRaw(b []byte) { c.out = append(c.out, b...) }

// Flush writes the output buffer to the socket.
func (c *Conn) Flush() error {
	if len(c.out) == 0 {
		return nil
	}
	_, err := c.nc.Write(c.out)
	c.out = c.out[:0]
	return err
}

// Do sends one command and parses its reply; an error reply is returned as
// a ReplyError.
func (c *Conn) Do(args ...string) (resp.Value, error) {
	c.Append(args...)
	if err := c.Flush(); err != nil {
		return resp.Value{}, err
	}
	return c.Read()
}

// DoTimeout is Do with a deadline on the whole exchange.
func (c *Conn) DoTimeout(d time.Duration, args ...string) (resp.Value, error) {
	c.nc.SetDeadline(time.Now().Add(d))
	defer c.nc.SetDeadline(time.Time{})
	return c.Do(args...)
}

// Read parses the next reply fully; error replies come back as ReplyError.
func (c *Conn) Read() (resp.Value, error) {
	v, err := c.readValue()
	if err == nil && v.Kind == resp.KindError {
		return v, ReplyError(v.Str)
	}
	return v, err
}

func (c *Conn) line() ([]byte, error) {
	ln, err := c.br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(ln) < 3 || ln[len(ln)-2] != '\r' {
		return nil, fmt.Errorf("protocol error: bad line %q", ln)
	}
	return ln[:len(ln)-2], nil
}

func (c *Conn) readValue() (resp.Value, error) {
	ln, err := c.line()
	if err != nil {
		return resp.Value{}, err
	}
	kind, rest := resp.Kind(ln[0]), ln[1:]
	switch kind {
	case resp.KindSimple, resp.KindError:
		return resp.Value{Kind: kind, Str: string(rest)}, nil
	case resp.KindInt:
		n, err := strconv.ParseInt(string(rest), 10, 64)
		return resp.Value{Kind: kind, Int: n}, err
	case resp.KindBulk:
		n, err := atoi(rest)
		if err != nil {
			return resp.Value{}, err
		}
		if n < 0 {
			return resp.Value{Kind: resp.KindNull, Nil2: '$'}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.br, buf); err != nil {
			return resp.Value{}, err
		}
		return resp.Value{Kind: kind, Str: string(buf[:n])}, nil
	case resp.KindArray:
		n, err := atoi(rest)
		if err != nil {
			return resp.Value{}, err
		}
		if n < 0 {
			return resp.Value{Kind: resp.KindNull, Nil2: '*'}, nil
		}
		v := resp.Value{Kind: kind, Elems: make([]resp.Value, 0, n)}
		for i := 0; i < n; i++ {
			e, err := c.readValue()
			if err != nil {
				return resp.Value{}, err
			}
			v.Elems = append(v.Elems, e)
		}
		return v, nil
	}
	return resp.Value{}, fmt.Errorf("protocol error: unexpected reply type %q (the bench speaks RESP2)", ln[0])
}

// reply summarises a skipped reply: enough to count errors and empty
// results (nil, empty array) without keeping its content.
type reply struct {
	err   string // error text, "" if none
	empty bool
}

// Skip consumes the next reply without allocating (except for error text).
func (c *Conn) Skip() (reply, error) {
	ln, err := c.line()
	if err != nil {
		return reply{}, err
	}
	switch ln[0] {
	case '+', ':':
		return reply{}, nil
	case '-':
		return reply{err: string(ln[1:])}, nil
	case '$':
		n, err := atoi(ln[1:])
		if err != nil {
			return reply{}, err
		}
		if n < 0 {
			return reply{empty: true}, nil
		}
		_, err = c.br.Discard(n + 2)
		return reply{}, err
	case '*':
		n, err := atoi(ln[1:])
		if err != nil {
			return reply{}, err
		}
		if n <= 0 {
			return reply{empty: true}, nil
		}
		var out reply
		for i := 0; i < n; i++ {
			r, err := c.Skip()
			if err != nil {
				return reply{}, err
			}
			if r.err != "" && out.err == "" {
				out.err = r.err
			}
		}
		return out, nil
	}
	return reply{}, fmt.Errorf("protocol error: unexpected reply type %q", ln[0])
}

func atoi(b []byte) (int, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, errors.New("protocol error: empty length")
	}
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("protocol error: bad length %q", b)
		}
		n = n*10 + int(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// Encoding helpers used by the workload generators; they append to dst and
// never allocate beyond dst's growth.

func appendHeader(dst []byte, prefix byte, n int) []byte {
	dst = append(dst, prefix)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

func appendBulkString(dst []byte, s string) []byte {
	dst = appendHeader(dst, '$', len(s))
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

func appendBulkInt(dst []byte, n int64) []byte {
	var tmp [20]byte
	b := strconv.AppendInt(tmp[:0], n, 10)
	dst = appendHeader(dst, '$', len(b))
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// appendRandArg appends prefix followed by n as 12 zero-padded digits, the
// shape redis-benchmark gives "__rand_int__" (e.g. key:000000123456).
func appendRandArg(dst []byte, prefix string, n uint64) []byte {
	dst = appendHeader(dst, '$', len(prefix)+12)
	dst = append(dst, prefix...)
	var digits [12]byte
	for i := 11; i >= 0; i-- {
		digits[i] = byte('0' + n%10)
		n /= 10
	}
	dst = append(dst, digits[:]...)
	return append(dst, '\r', '\n')
}

// command appends a whole command of fixed string arguments.
func appendCommand(dst []byte, args ...string) []byte {
	dst = appendHeader(dst, '*', len(args))
	for _, a := range args {
		dst = appendBulkString(dst, a)
	}
	return dst
}
