package tests

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/server"
)

// TestTLSClientCertificates: tls-auth-clients yes wants a certificate of
// the configured CA, optional takes none but refuses a wrong one, no asks
// for none; a certificate from another CA never gets in.
func TestTLSClientCertificates(t *testing.T) {
	f := startTLSServer(t)
	other := newTestCA(t, "other")
	stranger := other.issue(t, "stranger")
	admin := f.dial(t)
	try := func(cert *testCert) error {
		conn, err := tlsDial(f.srv.TLSAddr(), f.ca.clientTLS(cert))
		if err == nil {
			conn.Close()
		}
		return err
	}
	for _, tc := range []struct {
		mode              string
		none, wrong, good bool // whether each client gets in
	}{
		{"yes", false, false, true},
		{"optional", true, false, true},
		{"no", true, true, true},
	} {
		if v := admin.do("CONFIG", "SET", "tls-auth-clients", tc.mode); v.Str != "OK" {
			t.Fatalf("CONFIG SET tls-auth-clients %s: %v", tc.mode, v)
		}
		for _, c := range []struct {
			what string
			cert *testCert
			in   bool
		}{{"no certificate", nil, tc.none}, {"another CA's certificate", &stranger, tc.wrong},
			{"the CA's certificate", &f.client, tc.good}} {
			if err := try(c.cert); (err == nil) != c.in {
				t.Errorf("tls-auth-clients %s, %s: got in %v (%v), want %v", tc.mode, c.what, err == nil, err, c.in)
			}
		}
	}
	if v := admin.do("PING"); v.Str != "PONG" {
		t.Fatalf("the first connection after the refusals: %v", v)
	}
}

// TestTLSHostileBytes: plain text, junk and half a handshake on the TLS
// port are refused without a reply; a corrupt record after the handshake
// closes that connection only; a silent connection does not hold up
// shutdown.
func TestTLSHostileBytes(t *testing.T) {
	f := startTLSServer(t)
	for _, payload := range [][]byte{
		[]byte("PING\r\n"),
		encodeCommand([]string{"SET", "k", "v"}),
		{0x80, 0x2e, 0x01, 0x03, 0x01},       // an SSLv2 hello
		{0x16, 0x03, 0x01, 0x40, 0x00, 0x01}, // a handshake record announcing 16 KB, then nothing
		bytes.Repeat([]byte{0xff}, 4096),
	} {
		conn, err := net.Dial("tcp", f.srv.TLSAddr())
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(payload)
		if len(payload) == 6 {
			conn.(*net.TCPConn).CloseWrite() // half a record: the handshake reads the end
		}
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		got, err := io.ReadAll(conn)
		conn.Close()
		if bytes.Contains(got, []byte("PONG")) || bytes.Contains(got, []byte("+OK")) || err != nil && !isReset(err) {
			t.Errorf("%q on the TLS port: read %q, %v", payload, got, err)
		}
	}

	// A record that does not decrypt, after a good handshake.
	raw, err := net.Dial("tcp", f.srv.TLSAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tc := tls.Client(raw, f.ca.clientTLS(&f.client))
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	raw.Write([]byte{0x17, 0x03, 0x03, 0x00, 0x20})
	raw.Write(bytes.Repeat([]byte{0x42}, 0x20))
	raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(raw); err != nil && !isReset(err) {
		t.Errorf("after a corrupt record: %v", err)
	}
	if v := f.dial(t).do("PING"); v.Str != "PONG" {
		t.Fatalf("PING after the hostile connections: %v", v)
	}

	// A connection that never starts its handshake is closed by Close.
	silent, err := net.Dial("tcp", f.srv.TLSAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	start := time.Now()
	f.srv.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v with a handshake pending", d)
	}
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}

// TestTLSRedisCLI: the real redis-cli speaks to the TLS port with its
// certificate options, and is refused without a client certificate.
func TestTLSRedisCLI(t *testing.T) {
	cli := redisTool(t, "redis-cli")
	f := startTLSServer(t)
	_, port, _ := net.SplitHostPort(f.srv.TLSAddr())
	run := func(withCert bool, args ...string) (string, error) {
		all := []string{"-h", "127.0.0.1", "-p", port, "--tls", "--cacert", f.ca.CertPEM}
		if withCert {
			all = append(all, "--cert", f.client.CertFile, "--key", f.client.KeyFile)
		}
		out, err := exec.Command(cli, append(all, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for _, step := range [][2]string{{"SET k hello", "OK"}, {"GET k", "hello"}, {"LPUSH l a b c", "3"},
		{"LRANGE l 0 -1", "c\nb\na"}} {
		if out, err := run(true, strings.Fields(step[0])...); err != nil || out != step[1] {
			t.Errorf("redis-cli --tls %s: %q %v, want %q", step[0], out, err, step[1])
		}
	}
	if out, _ := run(false, "PING"); strings.Contains(out, "PONG") {
		t.Errorf("redis-cli without a certificate got in: %q", out)
	}
}

// TestTLSGoRedis: go-redis over TLS, RESP2 and RESP3, with replies larger
// than a TLS record and pipelines larger than the request reader's buffer.
func TestTLSGoRedis(t *testing.T) {
	f := startTLSServer(t)
	for _, proto := range []int{2, 3} {
		c := f.goRedis(t, proto)
		big := strings.Repeat("x", 3<<20+17)
		if err := c.Set(ctx, "big", big, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Get(ctx, "big").Result(); err != nil || got != big {
			t.Fatalf("RESP%d: a 3 MB value came back with %d bytes, %v", proto, len(got), err)
		}
		pipe := c.Pipeline()
		val := strings.Repeat("v", 10_000)
		for i := range 600 {
			pipe.Set(ctx, fmt.Sprint("p", i), val+strconv.Itoa(i), 0)
		}
		gets := make([]*redis.StringCmd, 600)
		for i := range gets {
			gets[i] = pipe.Get(ctx, fmt.Sprint("p", i))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for i, g := range gets {
			if g.Val() != val+strconv.Itoa(i) {
				t.Fatalf("RESP%d: pipelined GET %d: %d bytes", proto, i, len(g.Val()))
			}
		}
		if v := c.Do(ctx, "HELLO", strconv.Itoa(proto)).Val(); v == nil {
			t.Fatalf("RESP%d: HELLO answered nothing", proto)
		}
	}
}

// TestTLSDeliveredLater: what reaches a client that is not running a
// command (a blocked command served, pub/sub messages, MONITOR, CLIENT
// KILL, the end of CLIENT PAUSE, a ROOM long poll) reaches a TLS client.
func TestTLSDeliveredLater(t *testing.T) {
	f := startTLSServer(t)
	admin := f.dial(t)
	blockedClients := func() int {
		v := admin.do("INFO", "clients")
		for _, line := range strings.Split(v.Str, "\r\n") {
			if n, ok := strings.CutPrefix(line, "blocked_clients:"); ok {
				k, _ := strconv.Atoi(n)
				return k
			}
		}
		return -1
	}
	t.Run("blocking", func(t *testing.T) {
		c := f.dial(t)
		c.send("BLPOP", "q", "10")
		waitFor(t, 5*time.Second, "BLPOP to block", func() bool { return blockedClients() == 1 })
		admin.do("RPUSH", "q", "x")
		if v := c.read(); len(v.Elems) != 2 || v.Elems[1].Str != "x" {
			t.Fatalf("BLPOP: %v", v)
		}
	})
	t.Run("pubsub", func(t *testing.T) {
		c := f.dial(t)
		c.do("SUBSCRIBE", "ch")
		if v := admin.do("PUBLISH", "ch", "hello"); v.Int != 1 {
			t.Fatalf("PUBLISH reached %d", v.Int)
		}
		if v := c.read(); len(v.Elems) != 3 || v.Elems[2].Str != "hello" {
			t.Fatalf("message: %v", v)
		}
	})
	t.Run("monitor", func(t *testing.T) {
		c := f.dial(t)
		if v := c.do("MONITOR"); v.Str != "OK" {
			t.Fatal(v)
		}
		admin.do("SET", "watched", "1")
		if v := c.read(); !strings.Contains(v.Str, `"SET" "watched" "1"`) {
			t.Fatalf("MONITOR line: %v", v)
		}
	})
	t.Run("client-kill", func(t *testing.T) {
		c := f.dial(t)
		id := c.do("CLIENT", "ID").Int
		if v := admin.do("CLIENT", "KILL", "ID", strconv.FormatInt(id, 10)); v.Int != 1 {
			t.Fatalf("CLIENT KILL: %v", v)
		}
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.rd.Read(); err == nil {
			t.Fatal("the killed TLS client still reads replies")
		}
	})
	t.Run("client-pause", func(t *testing.T) {
		c := f.dial(t)
		admin.do("CLIENT", "PAUSE", "60000", "WRITE")
		c.send("SET", "paused", "1")
		waitFor(t, 5*time.Second, "the write to wait for the pause", func() bool {
			return strings.Contains(admin.do("CLIENT", "LIST").Str, "flags=b")
		})
		admin.do("CLIENT", "UNPAUSE")
		if v := c.read(); v.Str != "OK" {
			t.Fatalf("SET after the pause: %v", v)
		}
	})
	t.Run("room-long-poll", func(t *testing.T) {
		c := f.dial(t)
		c.send("ROOM.PULL", "room", "0", "0", "BLOCK", "10000")
		waitFor(t, 5*time.Second, "ROOM.PULL to wait", func() bool { return blockedClients() == 1 })
		admin.do("ROOM.PUB", "room", "hi")
		v := c.read()
		if len(v.Elems) != 6 || !strings.Contains(fmt.Sprint(v.Elems[5]), "hi") {
			t.Fatalf("ROOM.PULL: %v", v)
		}
	})
}

// TestTLSClientInfo: CLIENT INFO of a TLS client shows what Redis shows
// (nothing TLS-specific; laddr is the TLS port), and INFO's tcp_port is
// the TLS port when it is the only one.
func TestTLSClientInfo(t *testing.T) {
	f := startTLSServer(t)
	c := f.dial(t)
	info := c.do("CLIENT", "INFO").Str
	if !strings.Contains(info, " laddr="+f.srv.TLSAddr()+" ") || !strings.Contains(info, " flags=N ") {
		t.Errorf("CLIENT INFO: %s", info)
	}
	_, port, _ := net.SplitHostPort(f.srv.TLSAddr())
	if !strings.Contains(c.do("INFO", "server").Str, "tcp_port:"+port+"\r\n") {
		t.Errorf("INFO server does not give the TLS port %s as tcp_port", port)
	}
}

// TestTLSConfigMatchesRedis: the tls-* parameters' CONFIG SET errors and
// values, side by side with a redis-server that has a TLS port (the same
// certificate files).
func TestTLSConfigMatchesRedis(t *testing.T) {
	ca := newTestCA(t, "diff")
	srvCert := ca.issue(t, "server")
	tlsPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	redisAddr := startRealRedis(t, "--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", srvCert.CertFile,
		"--tls-key-file", srvCert.KeyFile, "--tls-ca-cert-file", ca.CertPEM)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, append(tlsServerOpts(t, ca, srvCert), withConfig("port", strconv.Itoa(port)))...)
	runDiffScript(t, redisAddr, srv.Addr(), strings.Split(`CONFIG SET tls-protocols "TLSv1.2 bogus"
CONFIG SET tls-protocols "TLSv1.2  TLSv1.3"
CONFIG SET tls-protocols "tlsv1.2 TLSv1.3"
CONFIG GET tls-protocols
CONFIG SET tls-ciphers bogus
CONFIG SET tls-ciphers "bogus:ECDHE-ECDSA-AES128-GCM-SHA256"
CONFIG SET tls-ciphers "HIGH:!aNULL"
CONFIG GET tls-ciphers
CONFIG SET tls-ciphersuites bogus
CONFIG SET tls-ciphersuites "TLS_AES_256_GCM_SHA384:bogus"
CONFIG GET tls-ciphersuites
CONFIG SET tls-cert-file /nonexistent/cert.pem
CONFIG GET tls-cert-file
CONFIG SET tls-key-file /nonexistent/key.pem
CONFIG SET tls-ca-cert-file /nonexistent/ca.pem
CONFIG SET tls-ca-cert-file ""
CONFIG SET tls-ca-cert-dir /nonexistent
CONFIG SET tls-ca-cert-dir ""
CONFIG SET tls-auth-clients maybe
CONFIG SET tls-auth-clients OPTIONAL
CONFIG GET tls-auth-clients
CONFIG SET tls-session-cache-size -1
CONFIG SET tls-session-cache-size 100
CONFIG SET tls-session-cache-timeout 60
CONFIG GET tls-session-cache-size
CONFIG GET tls-session-cache-timeout
CONFIG SET tls-port 70000
CONFIG SET tls-port abc
CONFIG SET tls-replication maybe
CONFIG SET tls-prefer-server-ciphers yes
CONFIG GET tls-prefer-server-ciphers
CONFIG SET tls-session-caching no
CONFIG SET tls-dh-params-file /nonexistent/dh.pem
CONFIG SET tls-protocols TLSv1.2 tls-cert-file /nonexistent/cert.pem
CONFIG GET tls-protocols
CONFIG SET protected-mode maybe
CONFIG GET protected-mode`, "\n"))
}

// TestTLSReload: CONFIG SET of the certificate files serves new
// connections with the new certificate (also a file rewritten in place and
// set again), a bad file fails with Redis's error and keeps the old ones,
// and connections already made carry on.
func TestTLSReload(t *testing.T) {
	f := startTLSServer(t)
	old := f.dial(t)
	next := newTestCA(t, "next")
	nextCert := next.issue(t, "server2")
	if v := old.do("CONFIG", "SET", "tls-cert-file", "/nonexistent.crt"); v.Str !=
		"ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs." {
		t.Fatalf("a missing certificate file: %v", v)
	}
	if v := old.do("CONFIG", "GET", "tls-cert-file"); v.Elems[1].Str != f.server.CertFile {
		t.Fatalf("the failed CONFIG SET changed tls-cert-file to %q", v.Elems[1].Str)
	}
	if v := old.do("CONFIG", "SET", "tls-cert-file", nextCert.CertFile, "tls-key-file", nextCert.KeyFile); v.Str != "OK" {
		t.Fatalf("CONFIG SET of the new pair: %v", v)
	}
	if _, err := tlsDial(f.srv.TLSAddr(), f.ca.clientTLS(&f.client)); err == nil {
		t.Error("a client that trusts only the old CA accepted the new certificate")
	}
	// The server still verifies clients against the configured CA file.
	if conn, err := tlsDial(f.srv.TLSAddr(), next.clientTLS(&f.client)); err != nil {
		t.Fatalf("the new certificate: %v", err)
	} else {
		conn.Close()
	}
	if v := old.do("PING"); v.Str != "PONG" {
		t.Fatalf("the connection made before the reload: %v", v)
	}
	// Rewritten in place: the same name, set again, is read again.
	third := f.ca.issue(t, "server3")
	for _, p := range [][2]string{{third.CertFile, nextCert.CertFile}, {third.KeyFile, nextCert.KeyFile}} {
		b, err := os.ReadFile(p[0])
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(p[1], b, 0o600)
	}
	if v := old.do("CONFIG", "SET", "tls-cert-file", nextCert.CertFile); v.Str != "OK" {
		t.Fatalf("CONFIG SET of the rewritten file: %v", v)
	}
	if conn, err := tlsDial(f.srv.TLSAddr(), f.ca.clientTLS(&f.client)); err != nil {
		t.Fatalf("the certificate rewritten in place: %v", err)
	} else {
		conn.Close()
	}
}

// TestTLSProtocolsAndSessions: tls-protocols bounds the versions a
// handshake may use; tickets resume sessions while tls-session-caching is
// on and younger than tls-session-cache-timeout.
func TestTLSProtocolsAndSessions(t *testing.T) {
	f := startTLSServer(t)
	admin := f.dial(t)
	dial := func(minV, maxV uint16, cache tls.ClientSessionCache) (*tls.Conn, error) {
		cfg := f.ca.clientTLS(&f.client)
		cfg.MinVersion, cfg.MaxVersion, cfg.ClientSessionCache = minV, maxV, cache
		return tlsDial(f.srv.TLSAddr(), cfg)
	}
	admin.do("CONFIG", "SET", "tls-protocols", "TLSv1.3")
	if _, err := dial(tls.VersionTLS12, tls.VersionTLS12, nil); err == nil {
		t.Error("a TLS 1.2 client got in with tls-protocols TLSv1.3")
	}
	admin.do("CONFIG", "SET", "tls-protocols", "TLSv1.2")
	if _, err := dial(tls.VersionTLS13, tls.VersionTLS13, nil); err == nil {
		t.Error("a TLS 1.3 client got in with tls-protocols TLSv1.2")
	}
	if c, err := dial(tls.VersionTLS12, tls.VersionTLS13, nil); err != nil || c.ConnectionState().Version != tls.VersionTLS12 {
		t.Errorf("tls-protocols TLSv1.2: %v", err)
	}
	admin.do("CONFIG", "SET", "tls-protocols", "")

	resumed := func() bool {
		cache := tls.NewLRUClientSessionCache(4)
		c, err := dial(tls.VersionTLS12, tls.VersionTLS13, cache)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		c, err = dial(tls.VersionTLS12, tls.VersionTLS13, cache)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().DidResume
	}
	if !resumed() {
		t.Error("no resumption with tls-session-caching yes")
	}
	admin.do("CONFIG", "SET", "tls-session-cache-timeout", "0")
	if resumed() {
		t.Error("a session resumed with tls-session-cache-timeout 0")
	}
	admin.do("CONFIG", "SET", "tls-session-cache-timeout", "300", "tls-session-caching", "no")
	if resumed() {
		t.Error("a session resumed with tls-session-caching no")
	}
}

// tlsFiles are the configuration lines giving a server the fixture's
// certificate, key and CA (tls-replication needs them too).
func (f *tlsFixture) files() []string {
	return []string{"--tls-cert-file", f.server.CertFile, "--tls-key-file", f.server.KeyFile,
		"--tls-ca-cert-file", f.ca.CertPEM}
}

// writeReplData writes keys for a replica to receive: many small ones and
// one larger than many TLS records (the replication tests of replica*.go
// check the types; these check the transport).
func writeReplData(t *testing.T, c *redis.Client, round int) {
	t.Helper()
	pipe := c.Pipeline()
	for i := range 2000 {
		pipe.Set(ctx, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d-%d", i, round), 0)
	}
	pipe.RPush(ctx, "list", round, "x", "y")
	pipe.Set(ctx, fmt.Sprint("big", round), strings.Repeat(strconv.Itoa(round), 2<<20), 0)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// sameReplData compares what writeReplData wrote on both servers.
func sameReplData(t *testing.T, master, replica *redis.Client) {
	t.Helper()
	waitReplicaInSync(t, master, replica)
	keys := []string{"list"}
	for i := range 2000 {
		keys = append(keys, fmt.Sprintf("k%d", i))
	}
	for _, k := range append(keys, "big1", "big2") {
		want, _ := master.Dump(ctx, k).Result()
		if got, _ := replica.Dump(ctx, k).Result(); got != want || want == "" {
			t.Fatalf("key %s: %d bytes on the master, %d on the replica", k, len(want), len(got))
		}
	}
	if a, b := master.DBSize(ctx).Val(), replica.DBSize(ctx).Val(); a != b {
		t.Fatalf("DBSIZE %d on the master, %d on the replica", a, b)
	}
}

// startTLSMaster is a Revolver with a plain port (for the checks) and a
// TLS port (for its replicas), with data.
func startTLSMaster(t *testing.T) (*tlsFixture, *redis.Client) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	f := startTLSServer(t, withConfig("port", strconv.Itoa(port)), withConfig("repl-diskless-sync-delay", "0"))
	master := goRedis(t, f.srv.Addr(), 2)
	writeReplData(t, master, 1)
	return f, master
}

// TestTLSReplication: a Revolver replica with tls-replication follows a
// Revolver master through its TLS port: the full sync, then the stream.
func TestTLSReplication(t *testing.T) {
	f, master := startTLSMaster(t)
	rep := startServer(t, withConfig("tls-replication", "yes"), withConfig("tls-cert-file", f.client.CertFile),
		withConfig("tls-key-file", f.client.KeyFile), withConfig("tls-ca-cert-file", f.ca.CertPEM))
	replica := goRedis(t, rep.Addr(), 2)
	replicaOf(t, replica, f.srv.TLSAddr())
	waitReplicaInSync(t, master, replica)
	writeReplData(t, master, 2)
	sameReplData(t, master, replica)
	if got := master.Do(ctx, "CLIENT", "LIST", "TYPE", "replica").Val().(string); !strings.Contains(got,
		"laddr="+f.srv.TLSAddr()) {
		t.Errorf("the replica is not on the TLS port: %s", got)
	}
}

// TestTLSReplicationWithRedis: redis-server replicates a Revolver master
// over TLS, and Revolver replicates a redis-server master over TLS.
func TestTLSReplicationWithRedis(t *testing.T) {
	t.Run("redis-replica", func(t *testing.T) {
		f, master := startTLSMaster(t)
		host, port, _ := net.SplitHostPort(f.srv.TLSAddr())
		replicaAddr := startRealRedis(t, append([]string{"--replicaof", host, port, "--tls-replication", "yes"},
			f.files()...)...)
		replica := goRedis(t, replicaAddr, 2)
		waitReplicaInSync(t, master, replica)
		writeReplData(t, master, 2)
		sameReplData(t, master, replica)
	})
	t.Run("redis-master", func(t *testing.T) {
		ca := newTestCA(t, "redis-master")
		f := &tlsFixture{ca: ca, server: ca.issue(t, "server"), client: ca.issue(t, "client")}
		tlsPort, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		masterAddr := startRealRedis(t, append([]string{"--tls-port", strconv.Itoa(tlsPort),
			"--repl-diskless-sync-delay", "0"}, f.files()...)...)
		master := goRedis(t, masterAddr, 2)
		writeReplData(t, master, 1)
		rep := startServer(t, withConfig("tls-replication", "yes"), withConfig("tls-cert-file", f.client.CertFile),
			withConfig("tls-key-file", f.client.KeyFile), withConfig("tls-ca-cert-file", f.ca.CertPEM))
		replica := goRedis(t, rep.Addr(), 2)
		replicaOf(t, replica, "127.0.0.1:"+strconv.Itoa(tlsPort))
		waitReplicaInSync(t, master, replica)
		writeReplData(t, master, 2)
		sameReplData(t, master, replica)
	})
}

// TestTLSStartAndFiles: a server whose TLS cannot be configured does not
// start (Redis's message); a key encrypted with a passphrase loads with
// tls-key-file-pass; the CAs may come from tls-ca-cert-dir.
func TestTLSStartAndFiles(t *testing.T) {
	ca := newTestCA(t, "files")
	srvCert := ca.issue(t, "server")
	for _, bad := range [][2]string{{"tls-cert-file", "/nonexistent.crt"}, {"tls-ca-cert-file", ""},
		{"tls-protocols", "TLSv1.2 SSLv3"}} {
		cfg := server.DefaultConfig()
		cfg.Persistence, cfg.Dir = false, t.TempDir()
		for _, o := range append(tlsServerOpts(t, ca, srvCert), withConfig(bad[0], bad[1])) {
			o(&cfg)
		}
		if s, err := server.Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil); err == nil {
			s.Close()
			t.Errorf("started with %s %q", bad[0], bad[1])
		} else if err.Error() != "Failed to configure TLS. Check logs for more info." {
			t.Errorf("%s %q: %v", bad[0], bad[1], err)
		}
	}

	// The key, encrypted as "openssl ec -aes256" writes it.
	keyPEM, err := os.ReadFile(srvCert.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(keyPEM)
	enc, err := x509.EncryptPEMBlock(rand.Reader, block.Type, block.Bytes, []byte("pw"), x509.PEMCipherAES256)
	if err != nil {
		t.Fatal(err)
	}
	encFile := filepath.Join(t.TempDir(), "enc.key")
	os.WriteFile(encFile, pem.EncodeToMemory(enc), 0o600)
	caDir := t.TempDir()
	caPEM, _ := os.ReadFile(ca.CertPEM)
	os.WriteFile(filepath.Join(caDir, "ca.pem"), caPEM, 0o600)
	client := ca.issue(t, "client")
	srv := startServer(t, append(tlsServerOpts(t, ca, srvCert), withConfig("tls-key-file", encFile),
		withConfig("tls-key-file-pass", "pw"), withConfig("tls-ca-cert-file", ""),
		withConfig("tls-ca-cert-dir", caDir))...)
	c := dialTLSRaw(t, srv.TLSAddr(), ca.clientTLS(&client))
	if v := c.do("CONFIG", "SET", "tls-key-file-pass", "wrong"); !strings.Contains(v.Str, "Unable to update TLS configuration") {
		t.Errorf("a wrong passphrase: %v", v)
	}
	if v := c.do("CONFIG", "GET", "tls-key-file-pass"); v.Elems[1].Str != "pw" {
		t.Errorf("the failed CONFIG SET kept %q", v.Elems[1].Str)
	}
	if _, err := tlsDial(srv.TLSAddr(), ca.clientTLS(&client)); err != nil {
		t.Errorf("after the refused passphrase: %v", err)
	}
}
