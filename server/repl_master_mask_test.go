package server

import (
	"bytes"
	"strings"
	"testing"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/resp"
)

// Every length a native command can have is matched exactly by the ECHO
// that replaces it, and what replaces it parses as an ECHO and newlines.
func TestEchoOfLen(t *testing.T) {
	for n := 20; n < 3000; n++ {
		b := appendEchoOfLen([]byte("x"), n)[1:]
		if len(b) != n {
			t.Fatalf("appendEchoOfLen(%d) made %d bytes: %q", n, len(b), b)
		}
		name, end, ok := commandAt(b, 0)
		if !ok || string(name) != "ECHO" || len(bytes.Trim(b[end:], "\n")) != 0 || end < n-2 {
			t.Fatalf("appendEchoOfLen(%d) = %q", n, b)
		}
	}
}

func TestMaskNative(t *testing.T) {
	s := &Server{table: commands.NewTable(commands.Families()...)}
	set := resp.AppendCommand(nil, []byte("SET"), []byte("k"), []byte("v"))
	tick := resp.AppendCommand(nil, []byte("REVOLVER.REPL"), []byte("TICK"), []byte("1764412345678"))
	push := resp.AppendCommand(nil, []byte("queue.push"), []byte("jobs"), []byte("payload"))
	stream := bytes.Join([][]byte{set, tick, set, push, set}, nil)
	got := s.maskNative(stream)
	if len(got) != len(stream) {
		t.Fatalf("masked stream is %d bytes, was %d", len(got), len(stream))
	}
	var names []string
	for p := 0; p < len(got); {
		for p < len(got) && got[p] == '\n' {
			p++
		}
		name, end, ok := commandAt(got, p)
		if !ok {
			t.Fatalf("masked stream does not parse at %d: %q", p, got[p:])
		}
		names = append(names, string(name))
		p = end
	}
	if got, want := strings.Join(names, " "), "SET ECHO SET ECHO SET"; got != want {
		t.Fatalf("commands %s, want %s", got, want)
	}
	if out := s.maskNative(set); &out[0] != &set[0] {
		t.Fatal("a stream without native commands was copied")
	}
}
