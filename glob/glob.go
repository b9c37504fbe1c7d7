// Package glob matches strings against Redis glob-style patterns (KEYS, SCAN
// MATCH, PSUBSCRIBE, CONFIG GET): `*`, `?`, `[abc]`, `[^a-z]` and `\`
// escapes, with exactly Redis's treatment of the odd corners (an unclosed
// bracket, reversed ranges, a trailing backslash).
package glob

// Match reports whether s matches pattern.
func Match(pattern, s string) bool {
	skip := false
	return match(pattern, s, false, &skip)
}

// MatchFold is Match ignoring ASCII case.
func MatchFold(pattern, s string) bool {
	skip := false
	return match(pattern, s, true, &skip)
}

// MatchBytes is Match for byte slices without copying.
func MatchBytes(pattern string, s []byte) bool {
	skip := false
	return match(pattern, string(s), false, &skip)
}

// at returns p[i], or 0 past the end: Redis reads the C string terminator in
// the same places.
func at(p string, i int) byte {
	if i < len(p) {
		return p[i]
	}
	return 0
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// match follows Redis's stringmatchlen. skipLonger stops the search early
// once the rest of the pattern cannot match anywhere in the rest of s, which
// keeps patterns like "a*a*a*a*b" from taking exponential time.
func match(p, s string, fold bool, skipLonger *bool) bool {
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if match(p[1:], s, fold, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := at(p, 0) == '^'
			if not {
				p = p[1:]
			}
			matched := false
			c := s[0]
			for {
				if at(p, 0) == '\\' && len(p) >= 2 {
					p = p[1:]
					if p[0] == c {
						matched = true
					}
				} else if at(p, 0) == ']' && len(p) > 0 {
					break
				} else if len(p) == 0 {
					// Unclosed bracket: Redis steps back so the shared
					// advance below lands on the end of the pattern.
					p = "\x00"
					break
				} else if len(p) >= 3 && p[1] == '-' {
					// C compares these as signed chars.
					start, end, ch := int(int8(p[0])), int(int8(p[2])), int(int8(c))
					if start > end {
						start, end = end, start
					}
					if fold {
						start, end, ch = int(int8(lower(byte(start)))), int(int8(lower(byte(end)))), int(int8(lower(byte(ch))))
					}
					p = p[2:]
					if ch >= start && ch <= end {
						matched = true
					}
				} else if fold {
					if lower(p[0]) == lower(c) {
						matched = true
					}
				} else if p[0] == c {
					matched = true
				}
				p = p[1:]
			}
			if not {
				matched = !matched
			}
			if !matched {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if fold {
				if lower(p[0]) != lower(s[0]) {
					return false
				}
			} else if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}
