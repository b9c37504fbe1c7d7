package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

type rawConn struct {
	t  *testing.T
	c  net.Conn
	rd *bufio.Reader
}

func dialServer(t *testing.T, s *Server) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, c: c, rd: bufio.NewReader(c)}
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatal(err)
	}
}

// line reads one reply line (a bulk's header and body as one string).
func (r *rawConn) line() string {
	r.t.Helper()
	l, err := r.rd.ReadString('\n')
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	if strings.HasPrefix(l, "$") && l != "$-1\r\n" {
		var n int
		fmt.Sscanf(l, "$%d", &n)
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r.rd, body); err != nil {
			r.t.Fatalf("read bulk: %v", err)
		}
		return l + string(body)
	}
	return l
}

func (r *rawConn) expect(want string) {
	r.t.Helper()
	if got := r.line(); got != want {
		r.t.Fatalf("got %q, want %q", got, want)
	}
}

// Bytes a blocked client sends are read by its loop into the client's own
// buffer (CLIENT LIST counts them in qbuf), and run in order
// once the client is served.
func TestBlockedClientKeepsInput(t *testing.T) {
	s := testServer(t)
	blocked, other := dialServer(t, s), dialServer(t, s)
	key := fmt.Sprintf("blocked-input-%d", time.Now().UnixNano())
	blocked.send("CLIENT ID\r\n")
	id := strings.TrimSpace(strings.TrimPrefix(blocked.line(), ":"))
	blocked.send(multibulk("BLPOP", key, "0"))
	waitBlocked := func(want string) string {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			other.send(multibulk("CLIENT", "LIST", "ID", id))
			l := other.line()
			if strings.Contains(l, "flags=b") && strings.Contains(l, want) {
				return l
			}
		}
		t.Fatalf("client %s never showed flags=b and %s", id, want)
		return ""
	}
	waitBlocked("cmd=blpop")
	blocked.send("ECHO after\r\n" + multibulk("ECHO", "again"))
	waitBlocked(fmt.Sprintf("qbuf=%d ", len("ECHO after\r\n")+len(multibulk("ECHO", "again"))))
	other.send(multibulk("RPUSH", key, "v"))
	other.expect(":1\r\n")
	blocked.expect("*2\r\n")
	blocked.expect(fmt.Sprintf("$%d\r\n%s\r\n", len(key), key))
	blocked.expect("$1\r\nv\r\n")
	blocked.expect("$5\r\nafter\r\n")
	blocked.expect("$5\r\nagain\r\n")
}

// Input that piles up while a client is blocked is bounded by
// client-query-buffer-limit: past it the client is closed, as Redis does,
// and the server goes on.
func TestQueryBufferLimitClosesClient(t *testing.T) {
	s := newMemServer(t)
	defer s.Close()
	c := dialServer(t, s)
	c.send(multibulk("CONFIG", "SET", "client-query-buffer-limit", "1mb"))
	c.expect("+OK\r\n")
	c.send(multibulk("CONFIG", "GET", "client-query-buffer-limit"))
	c.expect("*2\r\n")
	c.expect("$25\r\nclient-query-buffer-limit\r\n")
	c.expect("$7\r\n1048576\r\n")
	c.send(multibulk("CONFIG", "SET", "client-query-buffer-limit", "1000"))
	c.expect("-ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - argument must be between 1048576 and 9223372036854775807 inclusive\r\n")
	c.send(multibulk("BLPOP", "nothing-here", "0"))
	// Under the limit the bytes wait for the client's turn.
	chunk := strings.Repeat("PING\r\n", 100_000) // 600 KB
	c.send(chunk)
	time.Sleep(50 * time.Millisecond)
	alive(t, s.Addr())
	c.send(chunk)
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(c.rd); err != nil || len(b) != 0 {
		t.Fatalf("want the connection closed without a reply, got %q, %v", b, err)
	}
	alive(t, s.Addr())
}

// A command queued by MULTI keeps its arguments however much the client
// sends before EXEC (the reader moves on to new buffers, never overwriting
// the old ones).
func TestQueuedCommandsSurviveLaterInput(t *testing.T) {
	s := testServer(t)
	c := dialServer(t, s)
	key := fmt.Sprintf("queued-%d", time.Now().UnixNano())
	val := strings.Repeat("q", 100)
	c.send(multibulk("MULTI") + multibulk("SET", key, val))
	c.expect("+OK\r\n")
	c.expect("+QUEUED\r\n")
	filler := strings.Repeat("z", 3000)
	for i := 0; i < 40; i++ { // well past a few input buffers
		c.send(multibulk("ECHO", filler))
		c.expect("+QUEUED\r\n")
	}
	c.send("EXEC\r\n")
	c.expect("*41\r\n")
	c.expect("+OK\r\n")
	for i := 0; i < 40; i++ {
		c.expect(fmt.Sprintf("$%d\r\n%s\r\n", len(filler), filler))
	}
	c.send(multibulk("GET", key))
	c.expect(fmt.Sprintf("$%d\r\n%s\r\n", len(val), val))
}

// Inline commands follow sdssplitargs, and a big value sent in small pieces
// arrives whole.
func TestInlineAndBigValues(t *testing.T) {
	s := testServer(t)
	c := dialServer(t, s)
	key := fmt.Sprintf("inline-%d", time.Now().UnixNano())
	c.send(`SET ` + key + ` "a\x41 b\n" ` + "\r\n" + `GET ` + key + "\r\n")
	c.expect("+OK\r\n")
	c.expect("$5\r\naA b\n\r\n")
	big := strings.Repeat("0123456789", 300000)
	req := multibulk("SET", key, big)
	for i := 0; i < len(req); i += 70000 {
		c.send(req[i:min(i+70000, len(req))])
	}
	c.expect("+OK\r\n")
	c.send(multibulk("STRLEN", key))
	c.expect(fmt.Sprintf(":%d\r\n", len(big)))
}
