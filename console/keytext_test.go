package console

import (
	"testing"
	"unicode/utf8"
)

func TestKeyTextRoundTrips(t *testing.T) {
	for _, k := range []string{"", "jobs", "clé:été", "\xff", "a\x00b\xfe", "\xe2\x82", "\uf700x", "\uf7ff\xc0\x80",
		"emoji 🎉", "\xed\xa0\x80"} {
		txt := keyText(k)
		if !utf8.ValidString(txt) {
			t.Errorf("keyText(%q) = %q is not UTF-8", k, txt)
		}
		if back := textKey(txt); back != k {
			t.Errorf("textKey(keyText(%q)) = %q", k, back)
		}
		if utf8.ValidString(k) && k != "\uf700x" && k != "\uf7ff\xc0\x80" && txt != k {
			t.Errorf("text key %q shown as %q", k, txt)
		}
	}
}

func FuzzKeyText(f *testing.F) {
	f.Add([]byte("jobs\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k := string(b)
		txt := keyText(k)
		if !utf8.ValidString(txt) || textKey(txt) != k {
			t.Fatalf("%q -> %q -> %q", k, txt, textKey(txt))
		}
	})
}
