package tests

import (
	"testing"
)

func TestTLSSmoke(t *testing.T) {
	f := startTLSServer(t)
	c := f.dial(t)
	if v := c.do("SET", "k", "v"); v.Str != "OK" {
		t.Fatalf("SET: %v", v)
	}
	if v := c.do("GET", "k"); v.Str != "v" {
		t.Fatalf("GET: %v", v)
	}
	if f.srv.Addr() != "" {
		t.Fatalf("port 0 with a TLS port listens on %s too", f.srv.Addr())
	}
}
