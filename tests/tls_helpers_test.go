package tests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/resp"
	"github.com/revolver-db/revolver/server"
)

// testCA is a certificate authority made for one test: ECDSA P-256, valid
// for an hour, written to the test's temporary directory.
type testCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	dir     string
	name    string
	CertPEM string // the CA certificate's file
}

// testCert is a leaf certificate and its key, as files and as a
// tls.Certificate.
type testCert struct {
	CertFile, KeyFile string
	TLS               tls.Certificate
}

var serialNo = big.NewInt(time.Now().UnixNano())

func nextSerial() *big.Int {
	serialNo = new(big.Int).Add(serialNo, big.NewInt(1))
	return serialNo
}

func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{cert: cert, key: key, dir: t.TempDir(), name: name}
	ca.CertPEM = filepath.Join(ca.dir, name+"-ca.crt")
	writePEM(t, ca.CertPEM, "CERTIFICATE", der)
	return ca
}

// issue makes a certificate for 127.0.0.1, ::1 and localhost, good for a
// server and a client alike.
func (ca *testCA) issue(t testing.TB, name string) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := testCert{CertFile: filepath.Join(ca.dir, name+".crt"), KeyFile: filepath.Join(ca.dir, name+".key")}
	writePEM(t, c.CertFile, "CERTIFICATE", der)
	writePEM(t, c.KeyFile, "EC PRIVATE KEY", keyDER)
	if c.TLS, err = tls.LoadX509KeyPair(c.CertFile, c.KeyFile); err != nil {
		t.Fatal(err)
	}
	return c
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// pool is a certificate pool of the CA alone.
func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// clientTLS is a client's configuration trusting ca, presenting cert when
// it is not nil.
func (ca *testCA) clientTLS(cert *testCert) *tls.Config {
	cfg := &tls.Config{RootCAs: ca.pool(), ServerName: "localhost"}
	if cert != nil {
		// Presented whatever CAs the server names (crypto/tls would
		// otherwise send none from a CA the server does not list).
		c := cert.TLS
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c, nil }
	}
	return cfg
}

// tlsServerOpts configures a server's TLS port (a free port) with the
// CA's server certificate; port 0 then serves TLS only.
func tlsServerOpts(t testing.TB, ca *testCA, srvCert testCert) []serverOpt {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return []serverOpt{withConfig("tls-port", strconv.Itoa(port)), withConfig("tls-cert-file", srvCert.CertFile),
		withConfig("tls-key-file", srvCert.KeyFile), withConfig("tls-ca-cert-file", ca.CertPEM)}
}

// tlsFixture is a server with a TLS port, its CA, and a client
// certificate that CA issued.
type tlsFixture struct {
	srv    *server.Server
	ca     *testCA
	server testCert
	client testCert
}

func startTLSServer(t testing.TB, opts ...serverOpt) *tlsFixture {
	t.Helper()
	f := &tlsFixture{ca: newTestCA(t, "revolver-test")}
	f.server = f.ca.issue(t, "server")
	f.client = f.ca.issue(t, "client")
	f.srv = startServer(t, append(tlsServerOpts(t, f.ca, f.server), opts...)...)
	if f.srv.TLSAddr() == "" {
		t.Fatal("the server does not listen on its TLS port")
	}
	return f
}

// dial opens a TLS connection presenting the fixture's client certificate.
func (f *tlsFixture) dial(t testing.TB) *rawConn {
	t.Helper()
	return dialTLSRaw(t, f.srv.TLSAddr(), f.ca.clientTLS(&f.client))
}

// goRedis is a go-redis client over TLS with the client certificate.
func (f *tlsFixture) goRedis(t testing.TB, proto int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: f.srv.TLSAddr(), Protocol: proto, DisableIdentity: proto == 2,
		TLSConfig: f.ca.clientTLS(&f.client)})
	t.Cleanup(func() { c.Close() })
	return c
}

func dialTLSRaw(t testing.TB, addr string, cfg *tls.Config) *rawConn {
	t.Helper()
	conn, err := tlsDial(addr, cfg)
	if err != nil {
		t.Fatalf("TLS dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawConn{t: t, conn: conn, rd: resp.NewReader(conn)}
}

// tlsDial connects and completes the handshake; with TLS 1.3 a server
// that refuses the client's certificate says so only at the first read,
// so a PING is exchanged too.
func tlsDial(addr string, cfg *tls.Config) (*tls.Conn, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tlsDialWith(d, addr, cfg)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		conn.Close()
		return nil, err
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(conn, buf); err != nil {
		conn.Close()
		return nil, err
	}
	if string(buf) != "+PONG\r\n" {
		conn.Close()
		return nil, &net.OpError{Op: "ping", Err: os.ErrInvalid}
	}
	conn.SetDeadline(time.Time{})
	return conn, nil
}

// tlsDialWith connects with d and completes the handshake.
func tlsDialWith(d *net.Dialer, addr string, cfg *tls.Config) (*tls.Conn, error) {
	return tls.DialWithDialer(d, "tcp", addr, cfg)
}
