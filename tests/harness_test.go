// Package tests holds Revolver's black-box tests: everything here talks to a
// server over the network, as a Redis client would.
package tests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/resp"
	"github.com/revolver-db/revolver/server"
)

// serverOpt adjusts the configuration of an in-process server.
type serverOpt func(*server.Config)

func withPersistence(dir string) serverOpt {
	return func(c *server.Config) { c.Persistence, c.Dir = true, dir }
}

func withConfig(name, value string) serverOpt {
	return func(c *server.Config) {
		if err := c.Set(name, value); err != nil {
			panic(err)
		}
	}
}

// startServer runs Revolver in-process on a free loopback port. Without
// withPersistence it runs memory-only.
func startServer(t testing.TB, opts ...serverOpt) *server.Server {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Port = 0
	cfg.Persistence = false
	cfg.Dir = t.TempDir()
	for _, o := range opts {
		o(&cfg)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("REVOLVER_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	s, err := server.Start(cfg, logger, nil)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// goRedis returns a go-redis client speaking proto (2 or 3).
func goRedis(t testing.TB, addr string, proto int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, DisableIdentity: proto == 2})
	t.Cleanup(func() { c.Close() })
	return c
}

var ctx = context.Background()

// rawConn is a minimal RESP client that returns replies exactly as they
// arrived (type and value), for differential and golden tests.
type rawConn struct {
	t    testing.TB
	conn net.Conn
	rd   *resp.Reader
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawConn{t: t, conn: conn, rd: resp.NewReader(conn)}
}

func encodeCommand(args []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}

// do sends one command and reads one reply.
func (r *rawConn) do(args ...string) resp.Value {
	r.t.Helper()
	r.send(args...)
	return r.read()
}

func (r *rawConn) send(args ...string) {
	r.t.Helper()
	r.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.conn.Write(encodeCommand(args)); err != nil {
		r.t.Fatalf("write %q: %v", args, err)
	}
}

func (r *rawConn) read() resp.Value {
	r.t.Helper()
	r.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	v, err := r.rd.Read()
	if err != nil {
		r.t.Fatalf("read reply: %v", err)
	}
	return v
}

// splitCommandLine splits a script line like redis-cli does: spaces
// separate arguments, "double quotes" allow \n \r \t \" \\ \xHH escapes and
// 'single quotes' keep text as is.
func splitCommandLine(line string) ([]string, error) {
	var out []string
	i := 0
	for {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i >= len(line) {
			return out, nil
		}
		var cur strings.Builder
		switch q := line[i]; q {
		case '"', '\'':
			i++
			for {
				if i >= len(line) {
					return nil, fmt.Errorf("unbalanced quotes in %q", line)
				}
				c := line[i]
				if c == q {
					i++
					break
				}
				if c == '\\' && q == '"' && i+1 < len(line) {
					i++
					switch e := line[i]; e {
					case 'n':
						cur.WriteByte('\n')
					case 'r':
						cur.WriteByte('\r')
					case 't':
						cur.WriteByte('\t')
					case 'x':
						v, err := strconv.ParseUint(line[i+1:i+3], 16, 8)
						if err != nil {
							return nil, fmt.Errorf("bad \\x escape in %q", line)
						}
						cur.WriteByte(byte(v))
						i += 2
					default:
						cur.WriteByte(e)
					}
					i++
					continue
				}
				cur.WriteByte(c)
				i++
			}
		default:
			for i < len(line) && line[i] != ' ' {
				cur.WriteByte(line[i])
				i++
			}
		}
		out = append(out, cur.String())
	}
}

// readScript reads a test script: one command per line; blank lines and
// lines starting with '#' are skipped. A line ending in whitespace is an
// error: its author may have meant an empty last argument, which is "".
func readScript(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if strings.TrimRight(l, " \t") != l {
			t.Fatalf("%s:%d ends in whitespace (write an empty argument as \"\")", path, n)
		}
		lines = append(lines, l)
	}
	return lines
}

// waitFor polls cond every few milliseconds until it holds or timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// long skips a test under -short. CI's race run is short; its plain run
// covers these in full. They are the long ones whose subject is what replies
// say, not how goroutines share memory.
func long(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("long; the run without -short covers it")
	}
}
