package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The TLS configuration, built from the tls-* parameters as Redis's
// tlsConfigure builds its SSL_CTX (src/tls.c): the same checks in the same
// order, each failure logged with Redis's words and reported to CONFIG SET
// as Redis reports it. A context is built whole and then swapped in, so a
// bad file leaves the previous one serving; connections already made keep
// the context they were accepted with. What crypto/tls cannot follow is
// accepted and said so (decision 0018): TLS 1.3 suites cannot be chosen,
// the server's cipher preference and a session cache size do not apply to
// session tickets, and there are no finite-field DH parameters.

// tlsContext is one built configuration.
type tlsContext struct {
	servers [3]*tls.Config // by tls-auth-clients: no, yes, optional
	client  *tls.Config    // the replica's side of tls-replication
}

// Redis's tls-auth-clients values, as the enum stores them.
const (
	tlsAuthNo = iota
	tlsAuthYes
	tlsAuthOptional
)

var errTLSUpdate = errors.New("Unable to update TLS configuration. Check server logs.")

// tlsEnabled is Redis's condition for configuring TLS at all: something
// uses it.
func (c *Config) tlsEnabled() bool {
	return c.extraInt("tls-port") != 0 || c.extraString("tls-replication") == "yes" ||
		c.extraString("tls-cluster") == "yes"
}

// buildTLS makes a context of the configuration, or logs why it cannot
// (Redis's messages) and fails.
func (s *Server) buildTLS() (*tlsContext, error) {
	ctx, err := buildTLSContext(&s.cfg)
	if err != nil {
		s.log.Warn(err.Error())
		return nil, err
	}
	return ctx, nil
}

func buildTLSContext(c *Config) (*tlsContext, error) {
	str := c.extraString
	certFile, keyFile := str("tls-cert-file"), str("tls-key-file")
	caFile, caDir := str("tls-ca-cert-file"), str("tls-ca-cert-dir")
	switch {
	case certFile == "":
		return nil, errors.New("No tls-cert-file configured!")
	case keyFile == "":
		return nil, errors.New("No tls-key-file configured!")
	case (str("tls-auth-clients") != "no" || str("tls-cluster") == "yes" || str("tls-replication") == "yes") &&
		caFile == "" && caDir == "":
		return nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, " +
			"tls-replication or tls-auth-clients are enabled!")
	}
	minVer, maxVer, err := parseTLSProtocols(str("tls-protocols"))
	if err != nil {
		return nil, err
	}
	cert, err := loadKeyPair(certFile, keyFile, str("tls-key-file-pass"))
	if err != nil {
		return nil, err
	}
	// No CA configured (tls-auth-clients no): nothing is verified against
	// the system's roots either, as OpenSSL without verify locations.
	pool := x509.NewCertPool()
	if caFile != "" || caDir != "" {
		if pool, err = loadCAs(caFile, caDir); err != nil {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %v", err)
		}
	}
	var suites []uint16
	if v := str("tls-ciphers"); v != "" {
		if suites = parseTLS12Ciphers(v); len(suites) == 0 {
			return nil, fmt.Errorf("Failed to configure ciphers: %s", v)
		}
	}
	if v := str("tls-ciphersuites"); v != "" && !validTLS13Suites(v) {
		return nil, fmt.Errorf("Failed to configure ciphersuites: %s", v)
	}
	if f := str("tls-dh-params-file"); f != "" {
		if _, err := os.ReadFile(f); err != nil {
			return nil, fmt.Errorf("Failed to load %s: %v", f, pathErr(err))
		}
	}
	base := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   minVer,
		MaxVersion:   maxVer,
		CipherSuites: suites,
		ClientCAs:    pool,
		// Full-size records: the loops write whole batches of replies, and
		// the first bytes' latency is not worth more records.
		DynamicRecordSizingDisabled: true,
		SessionTicketsDisabled:      str("tls-session-caching") != "yes",
	}
	limitTicketAge(base, time.Duration(c.extraInt("tls-session-cache-timeout"))*time.Second)
	ctx := &tlsContext{}
	for mode, auth := range [3]tls.ClientAuthType{tls.NoClientCert, tls.RequireAndVerifyClientCert,
		tls.VerifyClientCertIfGiven} {
		cfg := base.Clone()
		cfg.ClientAuth = auth
		ctx.servers[mode] = cfg
	}
	// The replica presents tls-client-cert-file when both client files
	// are set, else the server's certificate, and checks the master's
	// chain against the CAs but not its name (as Redis's OpenSSL setup).
	clientCert := cert
	if cf, kf := str("tls-client-cert-file"), str("tls-client-key-file"); cf != "" && kf != "" {
		if clientCert, err = loadKeyPair(cf, kf, str("tls-client-key-file-pass")); err != nil {
			return nil, err
		}
	}
	ctx.client = &tls.Config{
		Certificates:       []tls.Certificate{clientCert},
		MinVersion:         minVer,
		MaxVersion:         maxVer,
		CipherSuites:       suites,
		InsecureSkipVerify: true, // the chain is verified below, without a host name
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the master sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, ic := range cs.PeerCertificates[1:] {
				inter.AddCert(ic)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter})
			return err
		},
	}
	return ctx, nil
}

// parseTLSProtocols reads tls-protocols (empty: TLS 1.2 and 1.3) into a
// range of versions; crypto/tls takes a range, not a set.
func parseTLSProtocols(v string) (minVer, maxVer uint16, err error) {
	if v == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	for _, tok := range strings.Split(v, " ") {
		var ver uint16
		switch strings.ToLower(tok) {
		case "tlsv1":
			ver = tls.VersionTLS10
		case "tlsv1.1":
			ver = tls.VersionTLS11
		case "tlsv1.2":
			ver = tls.VersionTLS12
		case "tlsv1.3":
			ver = tls.VersionTLS13
		default:
			return 0, 0, errors.New("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', " +
				"'TLSv1.2' and 'TLSv1.3'.")
		}
		if minVer == 0 || ver < minVer {
			minVer = ver
		}
		maxVer = max(maxVer, ver)
	}
	return minVer, maxVer, nil
}

// loadKeyPair reads a certificate chain and its private key, decrypting a
// key encrypted with a passphrase (the legacy PEM encryption OpenSSL's
// "-aes256" writes; an encrypted PKCS#8 key is refused with a message).
func loadKeyPair(certFile, keyFile, pass string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err == nil && !hasPEMCertificate(certPEM) {
		err = errors.New("no certificate found")
	}
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load certificate: %s: %v", certFile, pathErr(err))
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err == nil {
		keyPEM, err = decryptKeyPEM(keyPEM, pass)
	}
	var cert tls.Certificate
	if err == nil {
		cert, err = tls.X509KeyPair(certPEM, keyPEM)
	}
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %v", keyFile, pathErr(err))
	}
	return cert, nil
}

func hasPEMCertificate(b []byte) bool {
	for {
		var block *pem.Block
		if block, b = pem.Decode(b); block == nil {
			return false
		}
		if block.Type == "CERTIFICATE" {
			_, err := x509.ParseCertificate(block.Bytes)
			return err == nil
		}
	}
}

// decryptKeyPEM returns the key file with its private key decrypted when
// it is encrypted.
func decryptKeyPEM(b []byte, pass string) ([]byte, error) {
	rest := b
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return b, nil
		}
		switch {
		case block.Type == "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("encrypted PKCS#8 keys are not supported: use PEM encryption (openssl -traditional) or none")
		case x509.IsEncryptedPEMBlock(block): // deprecated as weak, but what "openssl -aes256" keys use
			if pass == "" {
				return nil, errors.New("the key is encrypted and tls-key-file-pass is not set")
			}
			der, err := x509.DecryptPEMBlock(block, []byte(pass))
			if err != nil {
				return nil, errors.New("bad decrypt: wrong tls-key-file-pass")
			}
			return pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: der}), nil
		case strings.HasSuffix(block.Type, "PRIVATE KEY"):
			return b, nil
		}
	}
}

// loadCAs reads the CA file, which must hold a certificate, and every
// certificate file of the CA directory.
func loadCAs(file, dir string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, pathErr(err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%s: no certificate found", file)
		}
	}
	if dir != "" {
		// As OpenSSL's lookup directory, one that cannot be read is not an
		// error: it just holds no CA.
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Type().IsRegular() {
				if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
					pool.AppendCertsFromPEM(b)
				}
			}
		}
	}
	return pool, nil
}

// pathErr drops the path os repeats in its errors (the message names it).
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// tls12Names maps OpenSSL's names of the TLS 1.0-1.2 suites crypto/tls
// has to their IDs.
var tls12Names = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	"ECDHE-ECDSA-AES128-SHA256":     tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-RSA-AES128-SHA256":       tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	"AES128-GCM-SHA256":             tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	"AES256-GCM-SHA384":             tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	"AES128-SHA":                    tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	"AES256-SHA":                    tls.TLS_RSA_WITH_AES_256_CBC_SHA,
	"AES128-SHA256":                 tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
	"DES-CBC3-SHA":                  tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA,
	"ECDHE-RSA-DES-CBC3-SHA":        tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA,
}

// parseTLS12Ciphers reads an OpenSSL cipher list as OpenSSL does for what
// crypto/tls can honour: OpenSSL's names (case matters, as there) add a
// suite, "!" or "-" before one removes it, "+" only reorders in OpenSSL and
// adds nothing here, DEFAULT/ALL/HIGH stand for crypto/tls's secure suites,
// other words and unknown names are skipped. An empty result is the failure
// OpenSSL reports.
func parseTLS12Ciphers(v string) []uint16 {
	var out []uint16
	removed := map[uint16]bool{}
	add := func(id uint16) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, tok := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		switch {
		case tok[0] == '!' || tok[0] == '-':
			if id, ok := tls12Names[tok[1:]]; ok {
				removed[id] = true
			}
		case tok == "DEFAULT" || tok == "ALL" || tok == "HIGH":
			for _, cs := range tls.CipherSuites() {
				if !isTLS13Only(cs) {
					add(cs.ID)
				}
			}
		default:
			if id, ok := tls12Names[tok]; ok {
				add(id)
			}
		}
	}
	kept := out[:0]
	for _, id := range out {
		if !removed[id] {
			kept = append(kept, id)
		}
	}
	return kept
}

func isTLS13Only(cs *tls.CipherSuite) bool {
	return len(cs.SupportedVersions) == 1 && cs.SupportedVersions[0] == tls.VersionTLS13
}

// tls13Suites are the names OpenSSL accepts in tls-ciphersuites.
// crypto/tls picks TLS 1.3 suites itself: a valid list is accepted and
// changes nothing (decision 0018).
var tls13Suites = []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
	"TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256"}

// validTLS13Suites: at least one known name, unknown ones skipped, as
// OpenSSL's SSL_CTX_set_ciphersuites.
func validTLS13Suites(v string) bool {
	for _, tok := range strings.Split(v, ":") {
		for _, name := range tls13Suites {
			if tok == name {
				return true
			}
		}
	}
	return false
}

// limitTicketAge makes session tickets older than tls-session-cache-timeout
// unusable (0: none is resumed): the issue time travels encrypted in the
// ticket, beside crypto/tls's own state.
func limitTicketAge(cfg *tls.Config, timeout time.Duration) {
	cfg.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		ss.Extra = append(ss.Extra, binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano())))
		return cfg.EncryptTicket(cs, ss)
	}
	cfg.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := cfg.DecryptTicket(identity, cs)
		if ss == nil || err != nil {
			return nil, err
		}
		if n := len(ss.Extra); n == 0 || len(ss.Extra[n-1]) != 8 ||
			time.Since(time.Unix(0, int64(binary.BigEndian.Uint64(ss.Extra[n-1])))) >= timeout {
			return nil, nil // a full handshake instead
		}
		return ss, nil
	}
}

// applyTLS follows a runtime change of a tls-* parameter: with TLS in use
// the context is built again (Redis's applyTlsCfg), and a failure leaves
// the previous one.
func (s *Server) applyTLS() error {
	if !s.cfg.tlsEnabled() {
		return nil
	}
	ctx, err := s.buildTLS()
	if err != nil {
		return errTLSUpdate
	}
	s.tls.ctx.Store(ctx)
	return nil
}

// applyTLSAuth follows tls-auth-clients, which Redis reads at each accept.
func (s *Server) applyTLSAuth() {
	switch s.cfg.extraString("tls-auth-clients") {
	case "no":
		s.tls.auth.Store(tlsAuthNo)
	case "optional":
		s.tls.auth.Store(tlsAuthOptional)
	default:
		s.tls.auth.Store(tlsAuthYes)
	}
}
