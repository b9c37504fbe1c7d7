package lua

import "strings"

// Lua 5.1's patterns (lstrlib.c): find, match, gmatch and gsub.
//
// Lua reads a pattern as a C string: it ends at its first NUL, and
// reading past its end yields a NUL, which is what the matcher checks
// for. The subject, by contrast, is read to its full length.

const (
	maxCaptures = 32 // LUA_MAXCAPTURES
	// maxMatchDepth bounds nested match calls (Lua 5.2's MAXCCALLS) so a
	// huge pattern cannot exhaust the Go stack; Lua 5.1 has no bound.
	maxMatchDepth = 200

	capUnfinished = -1
	capPosition   = -2

	patternEsc = '%'
	specials   = "^$*+?.([%-"
)

type capture struct {
	init   int // offset in the subject
	length int // or capUnfinished, capPosition
}

type matchState struct {
	L       *State
	src     string
	pat     string // cut at its first NUL
	level   int    // captures, finished or not
	depth   int    // nested match calls left
	capture [maxCaptures]capture
}

// cString is s as C code reads it: up to its first NUL.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// p is the pattern byte at i, NUL past the end.
func (ms *matchState) p(i int) byte {
	if i < len(ms.pat) {
		return ms.pat[i]
	}
	return 0
}

// s is the subject byte at i, NUL at the end (Lua strings end with one).
func (ms *matchState) s(i int) byte {
	if i < len(ms.src) {
		return ms.src[i]
	}
	return 0
}

func (ms *matchState) checkCapture(c byte) int {
	l := int(c) - '1'
	if l < 0 || l >= ms.level || ms.capture[l].length == capUnfinished {
		ms.L.Errorf("invalid capture index")
	}
	return l
}

func (ms *matchState) captureToClose() int {
	for level := ms.level - 1; level >= 0; level-- {
		if ms.capture[level].length == capUnfinished {
			return level
		}
	}
	ms.L.Errorf("invalid pattern capture")
	return 0
}

// classEnd is the index just past the single-character class at p.
func (ms *matchState) classEnd(p int) int {
	c := ms.p(p)
	p++
	switch c {
	case patternEsc:
		if p >= len(ms.pat) {
			ms.L.Errorf("malformed pattern (ends with %s)", "'%'")
		}
		return p + 1
	case '[':
		if ms.p(p) == '^' {
			p++
		}
		// The first character is part of the set even if it is ']'.
		for {
			if p >= len(ms.pat) {
				ms.L.Errorf("malformed pattern (missing ']')")
			}
			c := ms.pat[p]
			p++
			if c == patternEsc && p < len(ms.pat) {
				p++
			}
			if ms.p(p) == ']' {
				return p + 1
			}
		}
	}
	return p
}

// C's ctype classes in the C locale, by byte.
const (
	ctAlpha uint16 = 1 << iota
	ctCntrl
	ctDigit
	ctLower
	ctPunct
	ctSpace
	ctUpper
	ctXdigit
)

var ctype = func() (t [256]uint16) {
	for c := range 128 {
		b := byte(c)
		switch {
		case b >= 'a' && b <= 'z':
			t[c] |= ctAlpha | ctLower
		case b >= 'A' && b <= 'Z':
			t[c] |= ctAlpha | ctUpper
		case b >= '0' && b <= '9':
			t[c] |= ctDigit
		case b < 32 || b == 127:
			t[c] |= ctCntrl
		case b != ' ':
			t[c] |= ctPunct
		}
		if isSpace(b) {
			t[c] |= ctSpace
		}
		if isHexDigit(b) {
			t[c] |= ctXdigit
		}
	}
	return t
}()

// matchClass reports whether c is in the class %cl; an upper-case class
// letter is the complement, any other character stands for itself.
func matchClass(c, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = ctype[c]&ctAlpha != 0
	case 'c':
		res = ctype[c]&ctCntrl != 0
	case 'd':
		res = ctype[c]&ctDigit != 0
	case 'l':
		res = ctype[c]&ctLower != 0
	case 'p':
		res = ctype[c]&ctPunct != 0
	case 's':
		res = ctype[c]&ctSpace != 0
	case 'u':
		res = ctype[c]&ctUpper != 0
	case 'w':
		res = ctype[c]&(ctAlpha|ctDigit) != 0
	case 'x':
		res = ctype[c]&ctXdigit != 0
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if ctype[cl]&ctUpper != 0 {
		return !res
	}
	return res
}

// matchBracketClass reports whether c is in the set from p (its '[') to
// ec (its ']').
func (ms *matchState) matchBracketClass(c byte, p, ec int) bool {
	sig := true
	if ms.p(p+1) == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case ms.pat[p] == patternEsc:
			p++
			if matchClass(c, ms.p(p)) {
				return sig
			}
		case ms.p(p+1) == '-' && p+2 < ec:
			p += 2
			if ms.pat[p-2] <= c && c <= ms.pat[p] {
				return sig
			}
		case ms.pat[p] == c:
			return sig
		}
	}
	return !sig
}

// singleMatch reports whether c matches the class from p to ep.
func (ms *matchState) singleMatch(c byte, p, ep int) bool {
	if pc := ms.pat[p]; pc != '.' && pc != patternEsc && pc != '[' {
		return pc == c
	}
	return ms.classMatch(c, p, ep)
}

func (ms *matchState) classMatch(c byte, p, ep int) bool {
	switch ms.pat[p] {
	case '.':
		return true
	case patternEsc:
		return matchClass(c, ms.p(p+1))
	case '[':
		return ms.matchBracketClass(c, p, ep-1)
	}
	return ms.pat[p] == c
}

func (ms *matchState) matchBalance(s, p int) int {
	if p+1 >= len(ms.pat) {
		ms.L.Errorf("unbalanced pattern")
	}
	if s >= len(ms.src) || ms.src[s] != ms.pat[p] {
		return -1
	}
	open, close := ms.pat[p], ms.pat[p+1]
	depth := 1
	for s++; s < len(ms.src); s++ {
		switch ms.src[s] {
		case close:
			if depth--; depth == 0 {
				return s + 1
			}
		case open:
			depth++
		}
	}
	return -1
}

// maxExpand matches as many repetitions of the class at p..ep as it can,
// then backs off one at a time until the rest of the pattern matches.
func (ms *matchState) maxExpand(s, p, ep int) int {
	i := 0
	for s+i < len(ms.src) && ms.singleMatch(ms.src[s+i], p, ep) {
		i++
	}
	lit, ok := ms.literalAt(ep + 1)
	for ; i >= 0; i-- {
		if ok && ms.s(s+i) != lit {
			continue // the rest cannot match here: skip the call
		}
		if res := ms.match(s+i, ep+1); res >= 0 {
			return res
		}
	}
	return -1
}

// literalAt reports the character the pattern from p must first match,
// if it starts with one that is neither special nor optional. It says
// nothing when a match call would fail on its depth instead.
func (ms *matchState) literalAt(p int) (byte, bool) {
	c := ms.p(p)
	if c == 0 || strings.IndexByte(specials, c) >= 0 || c == ')' || ms.depth <= 0 {
		return 0, false
	}
	switch ms.p(p + 1) {
	case '?', '*', '-':
		return 0, false
	}
	return c, true
}

// minExpand tries the rest of the pattern after as few repetitions as
// possible, adding one at a time.
func (ms *matchState) minExpand(s, p, ep int) int {
	for {
		if res := ms.match(s, ep+1); res >= 0 {
			return res
		}
		if s < len(ms.src) && ms.singleMatch(ms.src[s], p, ep) {
			s++
		} else {
			return -1
		}
	}
}

func (ms *matchState) startCapture(s, p, what int) int {
	level := ms.level
	if level >= maxCaptures {
		ms.L.Errorf("too many captures")
	}
	ms.capture[level] = capture{init: s, length: what}
	ms.level = level + 1
	res := ms.match(s, p)
	if res < 0 {
		ms.level--
	}
	return res
}

func (ms *matchState) endCapture(s, p int) int {
	l := ms.captureToClose()
	ms.capture[l].length = s - ms.capture[l].init
	res := ms.match(s, p)
	if res < 0 {
		ms.capture[l].length = capUnfinished
	}
	return res
}

func (ms *matchState) matchCapture(s int, c byte) int {
	l := ms.checkCapture(c)
	cp := ms.capture[l]
	// A position capture's length (capPosition) is huge to C's size_t:
	// it never matches.
	if cp.length >= 0 && len(ms.src)-s >= cp.length && ms.src[cp.init:cp.init+cp.length] == ms.src[s:s+cp.length] {
		return s + cp.length
	}
	return -1
}

// match matches the pattern from p against the subject from s and
// returns where the match ends, or -1. It loops where Lua's match
// tail-calls itself, so only captures, repetitions and '?' nest.
func (ms *matchState) match(s, p int) int {
	if ms.depth--; ms.depth < 0 {
		ms.L.Errorf("pattern too complex")
	}
	res := ms.doMatch(s, p)
	ms.depth++
	return res
}

func (ms *matchState) doMatch(s, p int) int {
	for {
		switch ms.p(p) {
		case '(':
			if ms.p(p+1) == ')' {
				return ms.startCapture(s, p+2, capPosition)
			}
			return ms.startCapture(s, p+1, capUnfinished)
		case ')':
			return ms.endCapture(s, p+1)
		case 0:
			return s
		case '$':
			if p+1 == len(ms.pat) {
				if s == len(ms.src) {
					return s
				}
				return -1
			}
		case patternEsc:
			switch next := ms.p(p + 1); {
			case next == 'b':
				if s = ms.matchBalance(s, p+2); s < 0 {
					return -1
				}
				p += 4
				continue
			case next == 'f':
				p += 2
				if ms.p(p) != '[' {
					ms.L.Errorf("missing '[' after %s in pattern", "'%f'")
				}
				ep := ms.classEnd(p)
				var prev byte
				if s > 0 {
					prev = ms.src[s-1]
				}
				if ms.matchBracketClass(prev, p, ep-1) || !ms.matchBracketClass(ms.s(s), p, ep-1) {
					return -1
				}
				p = ep
				continue
			case isDigit(next):
				if s = ms.matchCapture(s, next); s < 0 {
					return -1
				}
				p += 2
				continue
			}
		}
		// A single-character class, maybe repeated.
		ep := ms.classEnd(p)
		m := s < len(ms.src) && ms.singleMatch(ms.src[s], p, ep)
		switch ms.p(ep) {
		case '?':
			if m {
				if res := ms.match(s+1, ep+1); res >= 0 {
					return res
				}
			}
			p = ep + 1
		case '*':
			return ms.maxExpand(s, p, ep)
		case '+':
			if !m {
				return -1
			}
			return ms.maxExpand(s+1, p, ep)
		case '-':
			return ms.minExpand(s, p, ep)
		default:
			if !m {
				return -1
			}
			s++
			p = ep
		}
	}
}

// reset readies ms for a match attempt.
func (ms *matchState) reset() {
	ms.level = 0
	ms.depth = maxMatchDepth
}

// getCapture is capture i of a match from s to e: the whole match when
// the pattern has no captures and i is 0.
func (ms *matchState) getCapture(i, s, e int) Value {
	if i >= ms.level {
		if i != 0 {
			ms.L.Errorf("invalid capture index")
		}
		return String(ms.src[s:e])
	}
	c := ms.capture[i]
	switch c.length {
	case capUnfinished:
		ms.L.Errorf("unfinished capture")
	case capPosition:
		return Number(float64(c.init + 1))
	}
	return String(ms.src[c.init : c.init+c.length])
}

// pushCaptures pushes a match's captures (the whole match if there are
// none and wholeIfNone) and returns how many.
func (ms *matchState) pushCaptures(s, e int, wholeIfNone bool) int {
	n := ms.level
	if n == 0 && wholeIfNone {
		n = 1
	}
	for i := range n {
		ms.L.Push(ms.getCapture(i, s, e))
	}
	return n
}

// captures is a match's captures as pushCaptures gives them.
func (ms *matchState) captures(s, e int) []Value {
	n := max(ms.level, 1)
	vals := make([]Value, n)
	for i := range n {
		vals[i] = ms.getCapture(i, s, e)
	}
	return vals
}

func strFind(L *State) int  { return strFindAux(L, true) }
func strMatch(L *State) int { return strFindAux(L, false) }

func strFindAux(L *State, find bool) int {
	s := L.CheckString(1)
	pat := L.CheckString(2)
	init := posrelat(L.OptInteger(3, 1), len(s)) - 1
	init = min(max(init, 0), len(s))
	cpat := cString(pat)
	if find && (L.Get(4).Truthy() || !strings.ContainsAny(cpat, specials)) {
		// A plain search, for the whole pattern, NULs included.
		if i := strings.Index(s[init:], pat); i >= 0 {
			L.Push(Number(float64(init + i + 1)))
			L.Push(Number(float64(init + i + len(pat))))
			return 2
		}
		L.Push(Nil)
		return 1
	}
	ms := &matchState{L: L, src: s, pat: cpat}
	p := 0
	anchor := ms.p(0) == '^'
	if anchor {
		p = 1
	}
	for s1 := init; ; s1++ {
		ms.reset()
		if e := ms.match(s1, p); e >= 0 {
			if find {
				L.Push(Number(float64(s1 + 1)))
				L.Push(Number(float64(e)))
				return ms.pushCaptures(0, 0, false) + 2
			}
			return ms.pushCaptures(s1, e, true)
		}
		if s1 >= len(s) || anchor {
			break
		}
	}
	L.Push(Nil)
	return 1
}

// strGmatch returns an iterator over the matches of a pattern; '^' is an
// ordinary character to it, as in Lua 5.1.
func strGmatch(L *State) int {
	src := L.CheckString(1)
	pat := cString(L.CheckString(2))
	pos := 0
	ms := &matchState{src: src, pat: pat}
	iter := func(L *State) int {
		ms.L = L // the thread calling the iterator, for its errors
		for s := pos; s <= len(src); s++ {
			ms.reset()
			if e := ms.match(s, 0); e >= 0 {
				pos = e
				if e == s {
					pos++ // an empty match: move on at least one position
				}
				return ms.pushCaptures(s, e, true)
			}
		}
		return 0
	}
	L.Push(FunctionValue(NewFunction("gmatch", iter)))
	return 1
}

func strGsub(L *State) int {
	src := L.CheckString(1)
	pat := cString(L.CheckString(2))
	repl := L.Get(3)
	maxN := L.OptInt(4, len(src)+1)
	switch repl.Type() {
	case TypeNumber:
		repl = String(NumberToString(repl.num()))
	case TypeString, TypeTable, TypeFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	ms := &matchState{L: L, src: src, pat: pat}
	p := 0
	anchor := ms.p(0) == '^'
	if anchor {
		p = 1
	}
	var b strings.Builder
	s, n := 0, 0
loop:
	for n < maxN {
		ms.reset()
		e := ms.match(s, p)
		if e >= 0 {
			n++
			ms.addValue(&b, s, e, repl)
		}
		switch {
		case e > s:
			s = e
		case s < len(src):
			b.WriteByte(src[s])
			s++
		default:
			break loop
		}
		if anchor {
			break
		}
	}
	b.WriteString(src[s:])
	L.Push(String(b.String()))
	L.Push(Number(float64(n)))
	return 2
}

// addValue appends the replacement of the match from s to e.
func (ms *matchState) addValue(b *strings.Builder, s, e int, repl Value) {
	L := ms.L
	var v Value
	switch repl.Type() {
	case TypeString:
		ms.addString(b, s, e, repl.str())
		return
	case TypeFunction:
		v = L.Call(repl, ms.captures(s, e), 1)[0]
	case TypeTable:
		v = L.Index(repl, ms.getCapture(0, s, e))
	}
	if !v.Truthy() {
		b.WriteString(ms.src[s:e]) // nil or false keeps the match
		return
	}
	str, ok := v.ToString()
	if !ok {
		L.Errorf("invalid replacement value (a %s)", v.TypeName())
	}
	b.WriteString(str)
}

// addString appends a replacement string: %0 is the whole match, %1-%9
// the captures, and '%' before anything else is that character (a NUL
// if the string ends with the '%', as Lua reads its terminator).
func (ms *matchState) addString(b *strings.Builder, s, e int, news string) {
	for i := 0; i < len(news); i++ {
		c := news[i]
		if c != patternEsc {
			b.WriteByte(c)
			continue
		}
		i++
		var next byte
		if i < len(news) {
			next = news[i]
		}
		switch {
		case !isDigit(next):
			b.WriteByte(next)
		case next == '0':
			b.WriteString(ms.src[s:e])
		default:
			v := ms.getCapture(int(next-'1'), s, e)
			str, _ := v.ToString()
			b.WriteString(str)
		}
	}
}
