package lua

import (
	"fmt"
	"strings"
)

// The lexer follows Lua 5.1's llex.c step by step: error messages quote
// the lexer's buffer and line as they are at the moment of the error, so
// the order in which characters are read and saved matters.

// token is a byte for single-character tokens, or one of the tk
// constants (above every byte, as Lua's FIRST_RESERVED is).
type token int

const firstReserved token = 257

// Reserved words, then multi-character symbols and token classes, in
// Lua's order (tokenNames is indexed by token-firstReserved).
const (
	tkAnd token = firstReserved + iota
	tkBreak
	tkDo
	tkElse
	tkElseif
	tkEnd
	tkFalse
	tkFor
	tkFunction
	tkIf
	tkIn
	tkLocal
	tkNil
	tkNot
	tkOr
	tkRepeat
	tkReturn
	tkThen
	tkTrue
	tkUntil
	tkWhile
	tkConcat
	tkDots
	tkEq
	tkGe
	tkLe
	tkNe
	tkNumber
	tkName
	tkString
	tkEOS
)

var tokenNames = [...]string{
	"and", "break", "do", "else", "elseif",
	"end", "false", "for", "function", "if",
	"in", "local", "nil", "not", "or", "repeat",
	"return", "then", "true", "until", "while",
	"..", "...", "==", ">=", "<=", "~=",
	"<number>", "<name>", "<string>", "<eof>",
}

var reservedWords = func() map[string]token {
	m := make(map[string]token)
	for t := tkAnd; t <= tkWhile; t++ {
		m[tokenNames[t-firstReserved]] = t
	}
	return m
}()

// compatLongStringNesting is Lua 5.1's LUA_COMPAT_LSTR == 1: "[[" inside
// a "[[...]]" string or comment is an error ("nesting of [[...]] is
// deprecated"). Redis's bundled Lua has it; the reference server (Debian's
// redis-server 7.0.15, on its own Lua build) does not, and takes "[[" as
// plain text.
const compatLongStringNesting = false

// maxSourceID is Lua's MAXSRC: the room syntax errors give a chunk's name.
const maxSourceID = 80

// eoz is the "character" past the end of the source.
const eoz = -1

// maxSyntaxLevels is Lua's LUAI_MAXCCALLS: the nesting the parser allows.
const maxSyntaxLevels = 200

// tokenInfo is a token with its value. line is the lexer's line just
// after reading it (where a multi-line string ends).
type tokenInfo struct {
	t    token
	num  float64
	str  string
	line int
}

type lexer struct {
	src string
	// more, for a chunk read in pieces (load's reader), gives the next
	// piece; "" ends the chunk. The lexer asks only when it needs a
	// character, so a reader that never ends meets the first syntax
	// error, as in Lua.
	more     func() string
	pos      int // index of the byte after current
	current  int // the character being looked at, or eoz
	line     int // Lua's linenumber: the line of current
	lastLine int // Lua's lastline: the line of the last token consumed
	buf      []byte
	chunk    string // the chunk's name as messages show it
	tok      tokenInfo
	ahead    tokenInfo // valid when ahead.t != tkEOS, as in Lua
}

func newLexer(src, chunkname string) *lexer {
	lx := &lexer{src: src, line: 1, lastLine: 1, chunk: chunkIDSize(chunkname, maxSourceID)}
	lx.ahead.t = tkEOS
	lx.nextChar()
	return lx
}

func (lx *lexer) nextChar() {
	if lx.pos >= len(lx.src) && lx.more != nil {
		if piece := lx.more(); piece != "" {
			lx.src, lx.pos = piece, 0
		} else {
			lx.more = nil
		}
	}
	if lx.pos < len(lx.src) {
		lx.current = int(lx.src[lx.pos])
		lx.pos++
	} else {
		lx.current = eoz
	}
}

func (lx *lexer) save(c int) { lx.buf = append(lx.buf, byte(c)) }

func (lx *lexer) saveAndNext() {
	lx.save(lx.current)
	lx.nextChar()
}

func (lx *lexer) currentIsNewline() bool { return lx.current == '\n' || lx.current == '\r' }

// checkNext saves and skips current if it is one of set.
func (lx *lexer) checkNext(set string) bool {
	if lx.current == eoz || strings.IndexByte(set, byte(lx.current)) < 0 {
		return false
	}
	lx.saveAndNext()
	return true
}

// tokenText is how messages show a token (luaX_token2str).
func tokenText(t token) string {
	if t >= firstReserved {
		return tokenNames[t-firstReserved]
	}
	if t < 32 || t == 127 {
		return fmt.Sprintf("char(%d)", int(t))
	}
	return string([]byte{byte(t)})
}

// nearText is what "near '...'" shows for t: names, strings and numbers
// show the buffer, which holds the raw text read so far (txtToken). Lua
// reads the buffer as a C string, so it ends at a NUL.
func (lx *lexer) nearText(t token) string {
	switch t {
	case tkName, tkString, tkNumber:
		s := string(lx.buf)
		if i := strings.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		return s
	}
	return tokenText(t)
}

// lexError raises msg at the current line, near t unless t is 0
// (luaX_lexerror).
func (lx *lexer) lexError(msg string, t token) {
	msg = fmt.Sprintf("%s:%d: %s", lx.chunk, lx.line, msg)
	if t != 0 {
		msg = fmt.Sprintf("%s near '%s'", msg, lx.nearText(t))
	}
	panic(&SyntaxError{Msg: msg})
}

// syntaxError raises msg near the current token.
func (lx *lexer) syntaxError(msg string) { lx.lexError(msg, lx.tok.t) }

// incLine skips a newline: \n, \r, \r\n or \n\r.
func (lx *lexer) incLine() {
	old := lx.current
	lx.nextChar()
	if lx.currentIsNewline() && lx.current != old {
		lx.nextChar()
	}
	lx.line++
}

// next advances to the next token (luaX_next).
func (lx *lexer) next() {
	lx.lastLine = lx.line
	if lx.ahead.t != tkEOS {
		lx.tok = lx.ahead
		lx.ahead.t = tkEOS
		return
	}
	lx.tok = lx.lex()
}

// lookahead reads the token after the current one (luaX_lookahead).
func (lx *lexer) lookahead() { lx.ahead = lx.lex() }

func (lx *lexer) lex() tokenInfo {
	t := lx.scan()
	t.line = lx.line
	return t
}

func (lx *lexer) scan() tokenInfo {
	lx.buf = lx.buf[:0]
	for {
		switch c := lx.current; c {
		case '\n', '\r':
			lx.incLine()
		case '-':
			lx.nextChar()
			if lx.current != '-' {
				return tokenInfo{t: '-'}
			}
			lx.nextChar()
			lx.skipComment()
		case '[':
			sep := lx.skipSep()
			if sep >= 0 {
				return tokenInfo{t: tkString, str: lx.readLongString(sep, true)}
			}
			if sep != -1 {
				lx.lexError("invalid long string delimiter", tkString)
			}
			return tokenInfo{t: '['}
		case '=', '<', '>', '~':
			lx.nextChar()
			if lx.current != '=' {
				return tokenInfo{t: token(c)}
			}
			lx.nextChar()
			return tokenInfo{t: withEquals(c)}
		case '"', '\'':
			return tokenInfo{t: tkString, str: lx.readString(c)}
		case '.':
			lx.saveAndNext()
			if lx.checkNext(".") {
				if lx.checkNext(".") {
					return tokenInfo{t: tkDots}
				}
				return tokenInfo{t: tkConcat}
			}
			if lx.current == eoz || !isDigit(byte(lx.current)) {
				return tokenInfo{t: '.'}
			}
			return tokenInfo{t: tkNumber, num: lx.readNumeral()}
		case eoz:
			return tokenInfo{t: tkEOS}
		default:
			b := byte(c)
			switch {
			case isSpace(b):
				lx.nextChar()
			case isDigit(b):
				return tokenInfo{t: tkNumber, num: lx.readNumeral()}
			case isAlpha(b) || b == '_':
				for lx.current != eoz && (isAlnum(byte(lx.current)) || lx.current == '_') {
					lx.saveAndNext()
				}
				name := string(lx.buf)
				if t, ok := reservedWords[name]; ok {
					return tokenInfo{t: t}
				}
				return tokenInfo{t: tkName, str: name}
			default:
				lx.nextChar()
				return tokenInfo{t: token(c)}
			}
		}
	}
}

// withEquals is the two-character token of c followed by "=".
func withEquals(c int) token {
	switch c {
	case '=':
		return tkEq
	case '<':
		return tkLe
	case '>':
		return tkGe
	}
	return tkNe
}

// skipComment skips what follows "--": a long comment or the rest of the
// line.
func (lx *lexer) skipComment() {
	if lx.current == '[' {
		sep := lx.skipSep()
		lx.buf = lx.buf[:0]
		if sep >= 0 {
			lx.readLongString(sep, false)
			lx.buf = lx.buf[:0]
			return
		}
	}
	for !lx.currentIsNewline() && lx.current != eoz {
		lx.nextChar()
	}
}

// readNumeral reads a number as Lua 5.1 does: digits and dots, an
// optional exponent sign, then any letters, digits and underscores; what
// strtod does not take whole is malformed.
func (lx *lexer) readNumeral() float64 {
	for {
		lx.saveAndNext()
		if lx.current == eoz || !isDigit(byte(lx.current)) && lx.current != '.' {
			break
		}
	}
	if lx.checkNext("Ee") {
		lx.checkNext("+-")
	}
	for lx.current != eoz && (isAlnum(byte(lx.current)) || lx.current == '_') {
		lx.saveAndNext()
	}
	f, ok := StringToNumber(string(lx.buf))
	if !ok {
		lx.lexError("malformed number", tkNumber)
	}
	return f
}

// skipSep reads a long bracket's "[" or "]" and its "="s: the level if
// the same bracket follows, else -(level)-1.
func (lx *lexer) skipSep() int {
	s := lx.current
	count := 0
	lx.saveAndNext()
	for lx.current == '=' {
		lx.saveAndNext()
		count++
	}
	if lx.current == s {
		return count
	}
	return -count - 1
}

// readLongString reads a long string (or, when keep is false, a long
// comment) of level sep; the opening bracket's first part is in the
// buffer.
func (lx *lexer) readLongString(sep int, keep bool) string {
	lx.saveAndNext()
	if lx.currentIsNewline() {
		lx.incLine()
	}
	for {
		switch lx.current {
		case eoz:
			if keep {
				lx.lexError("unfinished long string", tkEOS)
			}
			lx.lexError("unfinished long comment", tkEOS)
		case '[':
			if !compatLongStringNesting {
				lx.saveOrSkip(keep)
				break
			}
			if lx.skipSep() == sep {
				lx.saveAndNext()
				if sep == 0 {
					lx.lexError("nesting of [[...]] is deprecated", '[')
				}
			}
		case ']':
			if lx.skipSep() == sep {
				lx.saveAndNext()
				if !keep {
					return ""
				}
				return string(lx.buf[2+sep : len(lx.buf)-(2+sep)])
			}
		case '\n', '\r':
			lx.save('\n')
			lx.incLine()
			if !keep {
				lx.buf = lx.buf[:0]
			}
		default:
			lx.saveOrSkip(keep)
		}
	}
}

func (lx *lexer) saveOrSkip(keep bool) {
	if keep {
		lx.saveAndNext()
	} else {
		lx.nextChar()
	}
}

// readString reads a quoted string; the buffer keeps the opening quote
// and the decoded characters, which is what messages show.
func (lx *lexer) readString(del int) string {
	lx.saveAndNext()
	for lx.current != del {
		switch lx.current {
		case eoz:
			lx.lexError("unfinished string", tkEOS)
		case '\n', '\r':
			lx.lexError("unfinished string", tkString)
		case '\\':
			lx.nextChar()
			lx.readEscape()
		default:
			lx.saveAndNext()
		}
	}
	lx.saveAndNext()
	return string(lx.buf[1 : len(lx.buf)-1])
}

// readEscape decodes the escape after a backslash.
func (lx *lexer) readEscape() {
	var c int
	switch lx.current {
	case 'a':
		c = '\a'
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'v':
		c = '\v'
	case '\n', '\r':
		lx.save('\n')
		lx.incLine()
		return
	case eoz:
		return // the string's loop reports it unfinished
	default:
		if !isDigit(byte(lx.current)) {
			lx.saveAndNext() // \\, \", \' and any other character as itself
			return
		}
		for i := 0; i < 3 && lx.current != eoz && isDigit(byte(lx.current)); i++ {
			c = 10*c + lx.current - '0'
			lx.nextChar()
		}
		if c > 255 {
			lx.lexError("escape sequence too large", tkString)
		}
		lx.save(c)
		return
	}
	lx.save(c)
	lx.nextChar()
}
