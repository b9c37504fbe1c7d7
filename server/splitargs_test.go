package server

import (
	"fmt"
	"testing"
)

// Config lines go through the same splitter as inline requests (the
// reader's cases in reader_test.go cover its rules in full); these are the
// config-side checks.
func TestSplitConfigArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // nil: unbalanced quotes
	}{
		{"", []string{}},
		{"port 7000", []string{"port", "7000"}},
		{"save \"\"", []string{"save", ""}},
		{"\tdir  '/tmp/a b'  ", []string{"dir", "/tmp/a b"}},
		{`requirepass "p w\"\\\n\x01\xc3\xa9"`, []string{"requirepass", "p w\"\\\n\x01é"}},
		{`x 'it\'s' 'back\slash'`, []string{"x", "it's", `back\slash`}},
		{`x "\xZZ" "\q"`, []string{"x", "xZZ", "q"}},
		{`x foo"bar baz"`, []string{"x", "foobar baz"}},
		{"x a\vb c\fd", []string{"x", "a\vb", "c\fd"}},
		{"x a\x00b", []string{"x", "a"}},
		{`x "a"b`, nil},
		{`x 'a`, nil},
		{`x "a\`, nil},
	} {
		got, ok := splitConfigArgs(tc.in)
		if ok != (tc.want != nil) || ok && fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
			t.Errorf("splitConfigArgs(%q) = %q %v, want %q", tc.in, got, ok, tc.want)
		}
	}
}

// configRepr writes what splitConfigArgs reads back, for every byte.
func TestConfigReprRoundTrip(t *testing.T) {
	var all []byte
	for c := 1; c < 256; c++ { // a NUL would end the line, as in Redis
		all = append(all, byte(c))
	}
	for _, v := range []string{"", "plain", "two words", `"'\`, string(all), "é\r\n"} {
		got, ok := splitConfigArgs("name " + configRepr(v))
		if !ok || len(got) != 2 || got[1] != v {
			t.Errorf("configRepr(%q) read back as %q %v", v, got, ok)
		}
	}
}

// The inline path splits in place into a reused list: no allocation.
func TestSplitArgsAllocs(t *testing.T) {
	src := []byte(`SET "a b" 'c\'d' plain "\x41\n"`)
	line := make([]byte, len(src))
	scratch := make([][]byte, 0, 8)
	allocs := testing.AllocsPerRun(100, func() {
		copy(line, src)
		args, ok := splitArgs(line, scratch[:0])
		if !ok || len(args) != 5 {
			t.Fatalf("got %q %v", args, ok)
		}
	})
	if allocs != 0 {
		t.Errorf("splitArgs allocated %v times a call", allocs)
	}
}
