package tests

import (
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// externalIP is an IPv4 address of this machine other than loopback, to
// connect from as another host would; the test skips without one.
func externalIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Skip("SKIPPING: this machine has no non-loopback IPv4 address to connect from")
	return ""
}

// dialFrom connects to addr from the local address ip and returns what
// the server sends before it closes the connection (or, if it does not
// close it, the reply to PING).
func dialFrom(t *testing.T, ip, addr string) string {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("PING\r\n"))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	var got []byte
	for {
		n, err := conn.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil || strings.HasSuffix(string(got), "\r\n") && !strings.HasPrefix(string(got), "-DENIED") {
			return string(got) // closed, or a reply to PING
		}
	}
}

// TestProtectedMode: with protected-mode yes (the default) and no password
// for the default user, a client from another address gets Redis's DENIED
// text (compared with redis-server's own) and is closed, whatever bind
// says; loopback clients, a password, or protected-mode no let it in.
func TestProtectedMode(t *testing.T) {
	ip := externalIP(t)
	redisAddr := startRealRedis(t, "--bind", "127.0.0.1", ip, "--protected-mode", "yes")
	_, redisPort, _ := net.SplitHostPort(redisAddr)
	want := dialFrom(t, ip, net.JoinHostPort(ip, redisPort))
	if !strings.HasPrefix(want, "-DENIED Redis is running in protected mode") {
		t.Fatalf("redis-server answered %q", want)
	}

	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, withConfig("bind", "127.0.0.1 "+ip), withConfig("port", strconv.Itoa(port)))
	ext := net.JoinHostPort(ip, strconv.Itoa(port))
	if got := dialFrom(t, ip, ext); got != want {
		t.Fatalf("from %s: %q\nwant %q", ip, got, want)
	}
	admin := dialRaw(t, srv.Addr())
	if v := admin.do("INFO", "stats"); !strings.Contains(v.Str, "rejected_connections:1\r\n") {
		t.Errorf("INFO stats does not count the refusal")
	}
	if got := dialFrom(t, "127.0.0.1", srv.Addr()); got != "+PONG\r\n" {
		t.Errorf("from loopback: %q", got)
	}
	admin.do("CONFIG", "SET", "requirepass", "pw")
	if got := dialFrom(t, ip, ext); !strings.HasPrefix(got, "-NOAUTH") {
		t.Errorf("with a password: %q", got)
	}
	admin.do("AUTH", "pw")
	admin.do("CONFIG", "SET", "requirepass", "")
	if got := dialFrom(t, ip, ext); got != want {
		t.Errorf("the password removed: %q", got)
	}
	admin.do("CONFIG", "SET", "protected-mode", "no")
	if got := dialFrom(t, ip, ext); got != "+PONG\r\n" {
		t.Errorf("protected-mode no: %q", got)
	}
}

// TestProtectedModeTLS: the DENIED text reaches a TLS client after its
// handshake, as in Redis.
func TestProtectedModeTLS(t *testing.T) {
	ip := externalIP(t)
	f := startTLSServer(t, withConfig("bind", "127.0.0.1 "+ip))
	_, port, _ := net.SplitHostPort(f.srv.TLSAddr())
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	cfg := f.ca.clientTLS(&f.client)
	cfg.ServerName = ""
	cfg.InsecureSkipVerify = true // the certificate names the loopback addresses only
	conn, err := tlsDialWith(d, net.JoinHostPort(ip, port), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(got), "-DENIED Redis is running in protected mode") {
		t.Fatalf("over TLS from %s: %q", ip, got)
	}
}
