package tests

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/resp"
)

const testPassword = "s3cret"

// redisTool finds one of Redis's programs in PATH, skipping the test
// loudly without it (failing when REVOLVER_REQUIRE_REDIS=1).
func redisTool(t *testing.T, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("REVOLVER_REQUIRE_REDIS") == "1" {
			t.Fatalf("this test needs %s in PATH", name)
		}
		t.Skipf("SKIPPING: %s not found in PATH (set REVOLVER_REQUIRE_REDIS=1 to fail instead)", name)
	}
	return bin
}

// startRealRedis runs a private redis-server with extra configuration
// arguments for one test, skipping loudly without redis-server (failing
// when REVOLVER_REQUIRE_REDIS=1).
func startRealRedis(t *testing.T, args ...string) string {
	t.Helper()
	bin := redisTool(t, "redis-server")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--daemonize", "no", "--loglevel", "warning"}, args...)
	cmd := exec.Command(bin, all...)
	var out bytes.Buffer // its log, shown when the test fails
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() && out.Len() > 0 {
			t.Logf("redis-server on port %d said:\n%s", port, out.String())
		}
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// Answered, not merely listening: redis-server listens before it reads
	// its aclfile, which a test may rewrite as soon as it is in.
	waitFor(t, 5*time.Second, "redis-server to answer", func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return false
		}
		buf := make([]byte, 64)
		n, _ := c.Read(buf)
		return n > 0 && (buf[0] == '+' || buf[0] == '-')
	})
	return addr
}

// TestAuthMatchesRedis runs the requirepass conversation on both servers:
// only AUTH, HELLO, QUIT and RESET run before authentication, failures are
// WRONGPASS, and RESET forgets the authentication.
func TestAuthMatchesRedis(t *testing.T) {
	redisAddr := startRealRedis(t, "--requirepass", testPassword)
	srv := startServer(t, withConfig("requirepass", testPassword))
	runDiffScript(t, redisAddr, srv.Addr(), strings.Split(`GET k
PING
ECHO x
SELECT 1
CLIENT ID
CONFIG GET maxmemory
COMMAND COUNT
SUBSCRIBE ch
NOSUCHCOMMAND
GET
AUTH
AUTH wrong
AUTH default wrong
AUTH nosuch `+testPassword+`
AUTH a b c
AUTH "" ""
HELLO
HELLO 3
HELLO 4
HELLO 3 AUTH default wrong
HELLO 3 AUTH nosuch `+testPassword+`
HELLO 3 SETNAME early
HELLO 2 AUTH default
GET k
AUTH `+testPassword+`
GET k
SET k v
GET k
CLIENT GETNAME
AUTH wrong
GET k
RESET
GET k
AUTH default `+testPassword+`
GET k
RESET
%HELLO 2 AUTH default `+testPassword+` SETNAME named
CLIENT GETNAME
GET k
RESET
CLIENT GETNAME
GET k
QUIT`, "\n"))
}

// TestAuthGoRedis connects with go-redis, which authenticates through
// HELLO (RESP3) or HELLO/AUTH (RESP2).
func TestAuthGoRedis(t *testing.T) {
	srv := startServer(t, withConfig("requirepass", testPassword))
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			good := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: proto, Password: testPassword,
				ClientName: "authed", DisableIdentity: proto == 2})
			defer good.Close()
			if err := good.Set(ctx, "k", "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if name, err := good.ClientGetName(ctx).Result(); err != nil || name != "authed" {
				t.Errorf("CLIENT GETNAME: %q %v", name, err)
			}
			userPass := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: proto, Username: "default",
				Password: testPassword, DisableIdentity: proto == 2})
			defer userPass.Close()
			if v, err := userPass.Get(ctx, "k").Result(); err != nil || v != "v" {
				t.Errorf("GET with username: %q %v", v, err)
			}
			wrong := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: proto, Password: "nope",
				DisableIdentity: true, MaxRetries: -1})
			defer wrong.Close()
			if err := wrong.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
				t.Errorf("wrong password: %v", err)
			}
			none := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
			defer none.Close()
			if err := none.Get(ctx, "k").Err(); err == nil || err.Error() != "NOAUTH Authentication required." {
				t.Errorf("no password: %v", err)
			}
		})
	}
	// HELLO 3 AUTH ... SETNAME ... in one go, on a raw connection.
	c := dialRaw(t, srv.Addr())
	hello := c.do("HELLO", "3", "AUTH", "default", testPassword, "SETNAME", "x")
	if hello.Kind != resp.KindMap || mapField(hello, "proto").Int != 3 || mapField(hello, "server").Str != "redis" {
		t.Fatalf("HELLO 3 AUTH: %s", hello)
	}
	if v := c.do("CLIENT", "GETNAME"); v.Str != "x" {
		t.Errorf("name after HELLO: %s", v)
	}
	if v := c.do("GET", "k"); v.Kind != resp.KindBulk || v.Str != "v" {
		t.Errorf("GET after HELLO AUTH: %s", v)
	}
}

// mapField returns the value of key in a RESP3 map (or RESP2 flat array).
func mapField(m resp.Value, key string) resp.Value {
	for i := 0; i+1 < len(m.Elems); i += 2 {
		if m.Elems[i].Str == key {
			return m.Elems[i+1]
		}
	}
	return resp.Value{}
}

// TestRequirePassAtRuntime sets and clears requirepass with CONFIG SET, on
// both servers: connected clients keep their state, new ones need AUTH, and
// clearing the password lets everyone in.
func TestRequirePassAtRuntime(t *testing.T) {
	redisAddr := startRealRedis(t)
	srv := startServer(t)
	for _, addr := range []string{redisAddr, srv.Addr()} {
		admin := dialRaw(t, addr)
		if v := admin.do("CONFIG", "SET", "requirepass", testPassword); v.Str != "OK" {
			t.Fatalf("%s: CONFIG SET requirepass: %s", addr, v)
		}
		if v := admin.do("PING"); v.Str != "PONG" {
			t.Errorf("%s: an existing client must stay authenticated: %s", addr, v)
		}
		late := dialRaw(t, addr)
		if v := late.do("PING"); v.Str != "NOAUTH Authentication required." {
			t.Errorf("%s: new client before AUTH: %s", addr, v)
		}
		if v := admin.do("CONFIG", "SET", "requirepass", ""); v.Str != "OK" {
			t.Fatalf("%s: clearing requirepass: %s", addr, v)
		}
		if v := late.do("PING"); v.Str != "PONG" {
			t.Errorf("%s: with no password every client is in: %s", addr, v)
		}
		if v := late.do("AUTH", "x"); !strings.HasPrefix(v.Str, "ERR AUTH <password> called without any password") {
			t.Errorf("%s: AUTH without a password configured: %s", addr, v)
		}
	}
}

// readAll reads what the server sends until it closes the connection.
func readAll(t *testing.T, c net.Conn) (string, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b bytes.Buffer
	_, err := io.Copy(&b, c)
	return b.String(), err
}

// TestUnauthenticatedLimits checks the protocol limits Redis puts on
// clients that have not authenticated: more than 10 elements in a
// multibulk or more than 16384 bytes in a bulk is a protocol error that
// closes the connection. The exact bytes are compared with redis-server's.
func TestUnauthenticatedLimits(t *testing.T) {
	redisAddr := startRealRedis(t, "--requirepass", testPassword)
	srv := startServer(t, withConfig("requirepass", testPassword))
	bulks := func(n int, size int) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "*%d\r\n$3\r\nDEL\r\n", n)
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", size, strings.Repeat("k", size))
		}
		return b.Bytes()
	}
	cases := []struct {
		name    string
		request []byte
		authed  bool // AUTH first, waiting for its reply
		piped   bool // AUTH first, in the same write as the request
		want    string
		closes  bool
	}{
		{"11 elements", bulks(11, 1), false, false, "-ERR Protocol error: unauthenticated multibulk length\r\n", true},
		{"10 elements", bulks(10, 1), false, false, "-NOAUTH Authentication required.\r\n", false},
		{"20000-byte bulk", bulks(2, 20000), false, false, "-ERR Protocol error: unauthenticated bulk length\r\n", true},
		{"16384-byte bulk", bulks(2, 16384), false, false, "-NOAUTH Authentication required.\r\n", false},
		{"11 elements authenticated", bulks(11, 1), true, false, ":0\r\n", false},
		{"20000-byte bulk authenticated", bulks(2, 20000), true, false, ":0\r\n", false},
		// Redis runs AUTH before it parses what follows it in its buffer.
		{"11 elements pipelined after AUTH", bulks(11, 1), false, true, ":0\r\n", false},
		{"20000-byte bulk pipelined after AUTH", bulks(2, 20000), false, true, ":0\r\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for name, addr := range map[string]string{"redis": redisAddr, "revolver": srv.Addr()} {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				request := tc.request
				switch {
				case tc.authed:
					c.Write(encodeCommand([]string{"AUTH", testPassword}))
					c.SetReadDeadline(time.Now().Add(5 * time.Second))
					ok := make([]byte, 5)
					if _, err := io.ReadFull(c, ok); err != nil || string(ok) != "+OK\r\n" {
						t.Fatalf("%s: AUTH: %q %v", name, ok, err)
					}
				case tc.piped:
					request = append(encodeCommand([]string{"AUTH", testPassword}), request...)
				}
				c.Write(request)
				if !tc.closes {
					c.Write(encodeCommand([]string{"QUIT"}))
				}
				out, err := readAll(t, c)
				if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
					t.Errorf("%s: reading until close: %v", name, err)
				}
				got[name] = out
			}
			want := tc.want
			if tc.piped {
				want = "+OK\r\n" + want
			}
			if !tc.closes {
				want += "+OK\r\n"
			}
			if got["redis"] != want {
				t.Errorf("redis-server replied %q, expected %q", got["redis"], want)
			}
			if got["revolver"] != got["redis"] {
				t.Errorf("revolver replied %q, redis-server %q", got["revolver"], got["redis"])
			}
		})
	}
}

// TestHelloMatchesRedis compares HELLO's reply with redis-server's in both
// protocols, the connection id aside (it must be CLIENT ID's).
func TestHelloMatchesRedis(t *testing.T) {
	redisAddr := realRedis(t)
	srv := startServer(t)
	for _, args := range [][]string{{"HELLO"}, {"HELLO", "2"}, {"HELLO", "3"}, {"HELLO", "3", "SETNAME", "n"},
		{"HELLO", "2", "AUTH", "default", "anything"}} {
		var replies []string
		for _, addr := range []string{redisAddr, srv.Addr()} {
			c := dialRaw(t, addr)
			v := c.do(args...)
			id := c.do("CLIENT", "ID")
			for i := 0; i+1 < len(v.Elems); i += 2 {
				if v.Elems[i].Str == "id" {
					if v.Elems[i+1].Int != id.Int {
						t.Errorf("%s %v: id %d, CLIENT ID %d", addr, args, v.Elems[i+1].Int, id.Int)
					}
					v.Elems[i+1].Int = 0
				}
			}
			replies = append(replies, v.String())
		}
		if replies[0] != replies[1] {
			t.Errorf("%v\n redis:    %s\n revolver: %s", args, indent(replies[0]), indent(replies[1]))
		}
	}
}

// TestRequirePassNeverShown: CONFIG GET shows requirepass as the hash of
// the password (issue 34: never in clear), and that value set back (as
// CONFIG REWRITE writes it) keeps the same password.
func TestRequirePassNeverShown(t *testing.T) {
	srv := startServer(t)
	admin := dialRaw(t, srv.Addr())
	admin.do("CONFIG", "SET", "requirepass", testPassword)
	sum := sha256.Sum256([]byte(testPassword))
	want := "#" + hex.EncodeToString(sum[:])
	got := admin.do("CONFIG", "GET", "requirepass")
	if len(got.Elems) != 2 || got.Elems[1].Str != want {
		t.Fatalf("CONFIG GET requirepass: %v, want the hash %s", got, want)
	}
	admin.do("CONFIG", "SET", "requirepass", want)
	c := dialRaw(t, srv.Addr())
	if v := c.do("AUTH", testPassword); v.Str != "OK" {
		t.Fatalf("AUTH after requirepass was set back from its hash: %v", v)
	}
	if v := dialRaw(t, srv.Addr()).do("AUTH", want); v.Str == "OK" {
		t.Fatal("the hash itself authenticates")
	}
}
