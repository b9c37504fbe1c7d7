package engine

import (
	"math"

	"github.com/revolver-db/revolver/libm"
)

// Sorted-set arguments are parsed the way Redis parses them, which is C's
// strtod underneath: scores and weights with string2d's strict rules,
// ZRANGEBYSCORE bounds with strtod alone (leading blanks allowed, an empty
// text is 0, hex floats, "inf"). Go's ParseFloat does the arithmetic; this
// file decides which text strtod would have consumed.

// ParseScore parses a score, weight or increment as Redis's string2d does:
// strtod syntax (decimal or hex, inf/infinity), no leading blank, nothing
// left over, no overflow and no underflow to zero; NaN is rejected.
func ParseScore(b []byte) (float64, bool) {
	if len(b) == 0 || isCSpace(b[0]) {
		return 0, false
	}
	v, n, erange := libm.Strtod(b)
	if n != len(b) || math.IsNaN(v) || (erange && (math.IsInf(v, 0) || v == 0)) {
		return 0, false
	}
	return v, true
}

// ScoreRange is a score interval of ZRANGEBYSCORE, ZCOUNT and friends.
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

// ParseScoreRange parses min and max ("(" marks an exclusive bound); false
// when either is not a number (Redis: "min or max is not a float").
func ParseScoreRange(min, max []byte) (ScoreRange, bool) {
	var r ScoreRange
	var ok bool
	if r.Min, r.MinEx, ok = parseScoreBound(min); !ok {
		return r, false
	}
	if r.Max, r.MaxEx, ok = parseScoreBound(max); !ok {
		return r, false
	}
	return r, true
}

// parseScoreBound reads one bound as Redis does: as a C string (it ends at
// the first NUL) handed to strtod, which must consume all of it.
func parseScoreBound(b []byte) (v float64, ex bool, ok bool) {
	b = cString(b)
	if len(b) > 0 && b[0] == '(' {
		ex = true
		b = b[1:]
	}
	v, n, _ := libm.Strtod(b)
	if n != len(b) || math.IsNaN(v) {
		return 0, false, false
	}
	return v, ex, true
}

// gteMin and lteMax test a score against the bounds.
func (r *ScoreRange) gteMin(v float64) bool {
	if r.MinEx {
		return v > r.Min
	}
	return v >= r.Min
}

func (r *ScoreRange) lteMax(v float64) bool {
	if r.MaxEx {
		return v < r.Max
	}
	return v <= r.Max
}

// contains reports whether v is inside the range.
func (r *ScoreRange) contains(v float64) bool { return r.gteMin(v) && r.lteMax(v) }

// LexRange is a member interval of ZRANGEBYLEX, ZLEXCOUNT and friends.
type LexRange struct {
	Min, Max lexBound
}

// lexBound is one end: a member ("[a" inclusive, "(a" exclusive) or one of
// the infinities "-" and "+".
type lexBound struct {
	s   string
	inf int8 // -1 for "-", +1 for "+", 0 for a member
	ex  bool
}

// ParseLexRange parses min and max; false when either is not a valid
// range item (Redis: "min or max not valid string range item").
func ParseLexRange(min, max []byte) (LexRange, bool) {
	var r LexRange
	var ok bool
	if r.Min, ok = parseLexBound(min); !ok {
		return r, false
	}
	if r.Max, ok = parseLexBound(max); !ok {
		return r, false
	}
	return r, true
}

func parseLexBound(b []byte) (lexBound, bool) {
	if len(b) == 0 {
		return lexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		// Redis reads the item as a C string: "+" must end right there.
		if len(b) > 1 && b[1] != 0 {
			return lexBound{}, false
		}
		if b[0] == '+' {
			return lexBound{inf: 1, ex: true}, true
		}
		return lexBound{inf: -1, ex: true}, true
	case '(':
		return lexBound{s: string(b[1:]), ex: true}, true
	case '[':
		return lexBound{s: string(b[1:])}, true
	}
	return lexBound{}, false
}

// cmpLex compares a member with a bound, the infinities sorting below and
// above every member.
func cmpLex(member string, b *lexBound) int {
	switch b.inf {
	case -1:
		return 1
	case 1:
		return -1
	}
	switch {
	case member < b.s:
		return -1
	case member > b.s:
		return 1
	}
	return 0
}

func (r *LexRange) gteMin(member string) bool {
	c := cmpLex(member, &r.Min)
	if r.Min.ex {
		return c > 0
	}
	return c >= 0
}

func (r *LexRange) lteMax(member string) bool {
	c := cmpLex(member, &r.Max)
	if r.Max.ex {
		return c < 0
	}
	return c <= 0
}

// empty reports a range no member can be in: min above max, or equal with
// an exclusive end. Two equal infinities compare equal, as in Redis.
func (r *LexRange) empty() bool {
	var c int
	switch {
	case r.Min.inf != 0 && r.Min.inf == r.Max.inf:
		c = 0
	case r.Min.inf == -1 || r.Max.inf == 1:
		c = -1
	case r.Min.inf == 1 || r.Max.inf == -1:
		c = 1
	case r.Min.s < r.Max.s:
		c = -1
	case r.Min.s > r.Max.s:
		c = 1
	}
	return c > 0 || (c == 0 && (r.Min.ex || r.Max.ex))
}

// cString cuts b at its first NUL, as C code reading it would.
func cString(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

func isCSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}
