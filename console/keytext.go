package console

import (
	"strings"
	"unicode/utf8"
)

// Keys, job ids and members are binary-safe, JSON strings are UTF-8, and
// the pages hand a key back in the next request. keyText maps any bytes to
// valid UTF-8 reversibly (textKey undoes it): valid UTF-8 stays as it is,
// and each byte of anything else (an invalid sequence, or a character of
// the private-use block U+F700-U+F7FF the mapping itself uses) becomes the
// character U+F700 plus that byte. So a key that is text reads as itself,
// and any other still round-trips through the pages exactly.

const byteEscape = 0xF700

func keyText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, isByteEscape) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || isByteEscape(r) {
			for j := range n {
				b.WriteRune(byteEscape + rune(s[i+j]))
			}
			if n == 0 {
				n = 1
			}
			i += n
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

func isByteEscape(r rune) bool { return r >= byteEscape && r <= byteEscape+0xFF }

// textKey is keyText's inverse; text that keyText cannot have made (an
// invalid sequence) is taken as it is.
func textKey(t string) string {
	if !strings.ContainsFunc(t, isByteEscape) {
		return t
	}
	var b strings.Builder
	for _, r := range t {
		if isByteEscape(r) {
			b.WriteByte(byte(r - byteEscape))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
