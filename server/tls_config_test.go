package server

import (
	"crypto/tls"
	"slices"
	"testing"
)

func TestParseTLSProtocols(t *testing.T) {
	for _, tc := range []struct {
		in       string
		min, max uint16
		ok       bool
	}{
		{"", tls.VersionTLS12, tls.VersionTLS13, true},
		{"TLSv1.2", tls.VersionTLS12, tls.VersionTLS12, true},
		{"tlsv1.3 TLSv1", tls.VersionTLS10, tls.VersionTLS13, true}, // a range: 1.1 and 1.2 come along
		{"TLSv1.2  TLSv1.3", 0, 0, false},                           // an empty word between two spaces, as Redis's split
		{"SSLv3", 0, 0, false},
	} {
		minV, maxV, err := parseTLSProtocols(tc.in)
		if (err == nil) != tc.ok || tc.ok && (minV != tc.min || maxV != tc.max) {
			t.Errorf("%q: %x-%x %v", tc.in, minV, maxV, err)
		}
	}
}

func TestParseTLS12Ciphers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint16
	}{
		{"ECDHE-RSA-AES128-GCM-SHA256", []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}},
		{"bogus:ECDHE-ECDSA-AES256-GCM-SHA384", []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}},
		{"bogus", nil},
		{"ecdhe-rsa-aes128-gcm-sha256", nil},           // OpenSSL's names are case-sensitive
		{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", nil}, // and IANA's are not among them
		{"+AES128-SHA", nil},
		{"high", nil},
		{"TLS_AES_128_GCM_SHA256", nil}, // a TLS 1.3 suite is not a tls-ciphers name
		{"ECDHE-RSA-AES128-GCM-SHA256:!ECDHE-RSA-AES128-GCM-SHA256", nil},
	} {
		if got := parseTLS12Ciphers(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
	}
	high := parseTLS12Ciphers("HIGH:!aNULL")
	if len(high) == 0 || slices.Contains(high, tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA) {
		t.Errorf("HIGH: %v", high)
	}
	for in, ok := range map[string]bool{"TLS_AES_256_GCM_SHA384": true, "bogus:TLS_CHACHA20_POLY1305_SHA256": true,
		"bogus": false, "tls_aes_256_gcm_sha384": false} {
		if validTLS13Suites(in) != ok {
			t.Errorf("tls-ciphersuites %q: valid %v", in, !ok)
		}
	}
}
