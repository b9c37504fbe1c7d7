package glob

import (
	"strings"
	"testing"
	"time"
)

// The expectations follow Redis's stringmatchlen, corner cases included;
// tests/testdata/diff/keys_glob.txt checks the same corners against a real
// redis-server through KEYS.
func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		// Literals, ? and *.
		{"", "", true},
		{"", "a", false},
		{"a", "", false},
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"abc", "ab", false},
		{"ab", "abc", false},
		{"?", "a", true},
		{"?", "", false},
		{"?", "ab", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*", "", false}, // the loop never starts on an empty string
		{"*", "anything", true},
		{"**", "", false},
		{"a*", "a", true},
		{"a*", "abc", true},
		{"*c", "abc", true},
		{"*c", "abd", false},
		{"a*c", "ac", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbbd", false},
		{"a**c", "abc", true},
		{"*?*", "", false},
		{"*?*", "x", true},
		{"?*", "", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXcYb", false},
		{"*a", "aaa", true},
		{"x*", "x\x00y", true},
		{"x?y", "x\x00y", true},
		// Character classes.
		{"[abc]", "b", true},
		{"[abc]", "d", false},
		{"[abc]", "", false},
		{"a[bX]c", "aXc", true},
		{"[a-c]", "b", true},
		{"[a-c]", "d", false},
		{"[c-a]", "b", true}, // a reversed range is swapped
		{"[c-a]", "d", false},
		{"[^a]", "b", true},
		{"[^a]", "a", false},
		{"[^a-c]", "b", false},
		{"[^a-c]", "z", true},
		{"[!a]", "!", true}, // only ^ negates
		{"[!a]", "b", false},
		{"[]", "a", false},    // "[]" closes at once: an empty class
		{"a[]c", "ac", false}, // ... that never matches a character
		{"[]]", "]", false},   // the first ] closes, the second is a literal
		{"[]]", "]]", false},
		{"a[]]c", "a]]c", false},
		{"[\\]]", "]", true},
		{"[\\-]", "-", true},
		{"[\\-]", "a", false},
		{"[-]", "-", true},
		{"[a-]", "]", true},  // "a-]" is a range from a to ']' and the class is unclosed
		{"[a-]", "-", false}, // '-' is below 'a'
		{"[a-]x", "bx", false},
		{"[-c]", "-", true},
		{"[-c]", "c", true},
		{"[-c]", "b", false},
		{"[^]", "^", true}, // a negated empty class matches any character
		{"[^]", "a", true},
		{"[^]]", "a", false}, // ... and the second ] is a literal
		{"[^]]", "a]", true},
		{"[[]", "[", true},
		{"[\\[]", "[", true},
		{"[ab", "a", true}, // an unclosed class ends with the pattern
		{"[ab", "b", true},
		{"[ab", "c", false},
		{"a[b", "ab", true},
		{"a[b", "abx", false},
		{"a[", "a", false},
		{"a[", "ab", false}, // an empty unclosed class never matches
		{"[", "[", false},
		{"[^", "a", true}, // negated empty unclosed class
		{"[^", "", false},
		{"[A-a]", "Z", true},
		{"[A-a]", "_", true},
		{"[A-a]", "b", false},
		// High bytes compare as signed chars, as in C.
		{"[\x01-\xff]", "\x80", false},
		{"[\xe0-\xea]", "\xe9", true},
		{"[\xe0-\xea]", "a", false},
		// Escapes.
		{"a\\*c", "a*c", true},
		{"a\\*c", "abc", false},
		{"a\\?c", "a?c", true},
		{"a\\?c", "abc", false},
		{"a\\[c", "a[c", true},
		{"a\\\\c", "a\\c", true},
		{"a\\bc", "abc", true},
		{"\\", "\\", true}, // a trailing backslash is a literal backslash
		{"a\\", "a\\", true},
		{"a\\", "a", false},
		{"\\\\", "\\", true},
		{"ab\\", "ab", false},
		{"[\\", "\\", true},  // escape with nothing after it inside a class
		{"[b\\", "\\", true}, // ... the backslash itself is a member
		{"[\\]", "]", true},
		{"[\\\\]", "\\", true},
		{"[\\a]", "a", true},
	}
	for _, c := range cases {
		if got := Match(c.pattern, c.s); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
		if got := MatchBytes(c.pattern, []byte(c.s)); got != c.want {
			t.Errorf("MatchBytes(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}

func TestMatchFold(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"abc", "ABC", true},
		{"ABC", "abc", true},
		{"a?C", "AbC", true},
		{"[a-c]", "B", true},
		{"[A-C]", "b", true},
		{"[^a-c]", "B", false},
		{"[xyz]", "Y", true},
		{"h*LLO", "HeLlo", true},
		{"\\A", "a", true},
		{"[\\A]", "a", false}, // an escaped class member compares exactly
		{"abc", "abd", false},
	}
	for _, c := range cases {
		if got := MatchFold(c.pattern, c.s); got != c.want {
			t.Errorf("MatchFold(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
	if Match("abc", "ABC") {
		t.Error("Match is case-sensitive")
	}
}

// TestMatchPathological: patterns with many stars against a long string
// that does not match must not take exponential time.
func TestMatchPathological(t *testing.T) {
	s := strings.Repeat("a", 5000)
	for _, p := range []string{"a*a*a*a*b", "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", strings.Repeat("*a", 50) + "b"} {
		start := time.Now()
		if Match(p, s) {
			t.Fatalf("Match(%q, a...a) = true", p)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("Match(%q, 5000 a's) took %v", p, d)
		}
	}
	if !Match("a*a*a*a*b", strings.Repeat("a", 5000)+"b") {
		t.Fatal("a*a*a*a*b does not match a...ab")
	}
}
