package scripting

import (
	"strings"
	"unicode/utf8"

	"github.com/revolver-db/revolver/libm"
	"github.com/revolver-db/revolver/lua"
)

// cjson.decode, as lua-cjson 2.1.0 parses: a tokenizer over the input as
// a C string (it ends at the first NUL), numbers read by strtod (so "+1",
// "0x10", "inf" and "nan" pass while decode_invalid_numbers is on), and
// errors that name the token found and its position.

type jsonTokenType uint8

const (
	tokObjBegin jsonTokenType = iota
	tokObjEnd
	tokArrBegin
	tokArrEnd
	tokString
	tokNumber
	tokBoolean
	tokNull
	tokColon
	tokComma
	tokEnd
	tokWhitespace
	tokError
	tokUnknown
)

var jsonTokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR", "T_UNKNOWN"}

// jsonCharTokens is lua-cjson's ch2token: the token each byte starts.
// tokUnknown needs a closer look (strings, numbers, literals).
var jsonCharTokens = func() (t [256]jsonTokenType) {
	for i := range t {
		t[i] = tokError
	}
	t['{'], t['}'], t['['], t[']'], t[','], t[':'] = tokObjBegin, tokObjEnd, tokArrBegin, tokArrEnd, tokComma, tokColon
	t[0] = tokEnd
	t[' '], t['\t'], t['\n'], t['\r'] = tokWhitespace, tokWhitespace, tokWhitespace, tokWhitespace
	for _, c := range []byte("fiInNt\"+-0123456789") {
		t[c] = tokUnknown
	}
	return t
}()

// jsonUnescapes is lua-cjson's escape2char: what each escape stands for,
// 0 for an invalid one, 'u' for a Unicode escape.
var jsonUnescapes = func() (t [256]byte) {
	t['"'], t['\\'], t['/'], t['u'] = '"', '\\', '/', 'u'
	t['b'], t['t'], t['n'], t['f'], t['r'] = '\b', '\t', '\n', '\f', '\r'
	return t
}()

type jsonToken struct {
	typ   jsonTokenType
	index int    // where it starts (where the error is, for tokError)
	str   string // a string's value; an error's description
	num   float64
	b     bool
}

// jsonDecoder parses data. top counts the values lua-cjson would hold on
// the C stack, whose room bounds the nesting as the depth setting does.
type jsonDecoder struct {
	L     *lua.State
	cfg   *cjsonConfig
	data  string
	ptr   int
	depth int
	top   int
	tmp   []byte
}

func (c *cjsonConfig) decode(L *lua.State) int {
	if L.Top() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	s := L.CheckString(1)
	// JSON text starts with an ASCII character: a NUL among the first two
	// bytes means a wider encoding.
	if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
		L.Errorf("JSON parser does not support UTF-16 or UTF-32")
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	d := &jsonDecoder{L: L, cfg: c, data: s, top: 1}
	var tok jsonToken
	d.next(&tok)
	v := d.value(&tok)
	d.next(&tok)
	if tok.typ != tokEnd {
		d.fail("the end", &tok)
	}
	L.Push(v)
	return 1
}

// at is the byte at i, 0 at the end, as in a C string.
func (d *jsonDecoder) at(i int) byte {
	if i < len(d.data) {
		return d.data[i]
	}
	return 0
}

// fail raises "Expected <what> but found <token> at character <n>".
func (d *jsonDecoder) fail(expected string, tok *jsonToken) {
	found := jsonTokenNames[tok.typ]
	if tok.typ == tokError {
		found = tok.str
	}
	d.L.Errorf("Expected %s but found %s at character %d", expected, found, tok.index+1)
}

func (d *jsonDecoder) tokenError(tok *jsonToken, what string) {
	tok.typ, tok.index, tok.str = tokError, d.ptr, what
}

// next reads the next token into tok.
func (d *jsonDecoder) next(tok *jsonToken) {
	var c byte
	for {
		c = d.at(d.ptr)
		if tok.typ = jsonCharTokens[c]; tok.typ != tokWhitespace {
			break
		}
		d.ptr++
	}
	tok.index = d.ptr
	switch tok.typ {
	case tokError:
		d.tokenError(tok, "invalid token")
		return
	case tokEnd:
		return
	case tokUnknown:
	default:
		d.ptr++
		return
	}
	rest := d.data[d.ptr:]
	switch {
	case c == '"':
		d.string(tok)
	case c == '-' || c >= '0' && c <= '9':
		if d.cfg.decodeInvalid == 0 && d.invalidNumber() {
			d.tokenError(tok, "invalid number")
			return
		}
		d.number(tok)
	case strings.HasPrefix(rest, "true"):
		tok.typ, tok.b = tokBoolean, true
		d.ptr += 4
	case strings.HasPrefix(rest, "false"):
		tok.typ, tok.b = tokBoolean, false
		d.ptr += 5
	case strings.HasPrefix(rest, "null"):
		tok.typ = tokNull
		d.ptr += 4
	case d.cfg.decodeInvalid != 0 && d.invalidNumber():
		// Only what strict JSON refuses gets here (inf, nan, "+1"), so
		// that other bad words stay "invalid token".
		d.number(tok)
	default:
		d.tokenError(tok, "invalid token")
	}
}

// invalidNumber reports a number strict JSON refuses but strtod reads: a
// leading '+', hexadecimal, leading zeros, inf and nan.
func (d *jsonDecoder) invalidNumber() bool {
	p := d.ptr
	switch d.at(p) {
	case '+':
		return true
	case '-':
		p++
	}
	if c := d.at(p); c == '0' {
		c2 := d.at(p + 1)
		return c2|0x20 == 'x' || c2 >= '0' && c2 <= '9'
	} else if c <= '9' || c >= 0x80 { // C compares a signed char
		return false
	}
	w := d.data[p:min(p+3, len(d.data))]
	return strings.EqualFold(w, "inf") || strings.EqualFold(w, "nan")
}

func (d *jsonDecoder) number(tok *jsonToken) {
	f, n, _ := libm.Strtod(d.data[d.ptr:])
	if n == 0 {
		d.tokenError(tok, "invalid number")
		return
	}
	tok.typ, tok.num = tokNumber, f
	d.ptr += n
}

// string reads a string token. Control characters pass as they are; a NUL
// or the end of the input ends the string too early.
func (d *jsonDecoder) string(tok *jsonToken) {
	d.ptr++
	d.tmp = d.tmp[:0]
	for {
		c := d.at(d.ptr)
		switch c {
		case '"':
			d.ptr++
			tok.typ, tok.str = tokString, string(d.tmp)
			return
		case 0:
			d.tokenError(tok, "unexpected end of string")
			return
		case '\\':
			esc := jsonUnescapes[d.at(d.ptr+1)]
			if esc == 'u' {
				if !d.unicodeEscape() {
					d.tokenError(tok, "invalid unicode escape code")
					return
				}
				continue
			}
			if esc == 0 {
				d.tokenError(tok, "invalid escape code")
				return
			}
			d.ptr++
			c = esc
		}
		d.tmp = append(d.tmp, c)
		d.ptr++
	}
}

// unicodeEscape appends the character of the \uXXXX escape at ptr (two
// of them for a UTF-16 surrogate pair) as UTF-8.
func (d *jsonDecoder) unicodeEscape() bool {
	cp := d.hex4(d.ptr + 2)
	if cp < 0 {
		return false
	}
	n := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 || d.at(d.ptr+6) != '\\' || d.at(d.ptr+7) != 'u' {
			return false // a low surrogate first, or no second escape
		}
		low := d.hex4(d.ptr + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = ((cp&0x3FF)<<10 | low&0x3FF) + 0x10000
		n = 12
	}
	d.tmp = utf8.AppendRune(d.tmp, rune(cp))
	d.ptr += n
	return true
}

// hex4 is the value of the four hex digits at i, or -1.
func (d *jsonDecoder) hex4(i int) int {
	v := 0
	for j := i; j < i+4; j++ {
		c := d.at(j)
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			c = (c | 0x20) - 'a' + 10
		default:
			return -1
		}
		v = v<<4 | int(c)
	}
	return v
}

// descend enters an object or an array, which needs slots more values on
// the C stack.
func (d *jsonDecoder) descend(slots int) {
	d.depth++
	if d.depth <= d.cfg.decodeMaxDepth && stackRoom(d.top, slots) {
		return
	}
	// lua-cjson gives the position past the bracket, 0-based.
	d.L.Errorf("Found too many nested data structures (%d) at character %d", d.depth, d.ptr)
}

// value makes the value tok starts (reading the rest of an object or an
// array); it takes a slot on the C stack.
func (d *jsonDecoder) value(tok *jsonToken) lua.Value {
	switch tok.typ {
	case tokString:
		d.top++
		return lua.String(tok.str)
	case tokNumber:
		d.top++
		return lua.Number(tok.num)
	case tokBoolean:
		d.top++
		return lua.Bool(tok.b)
	case tokNull:
		d.top++
		return Null
	case tokObjBegin:
		return d.object()
	case tokArrBegin:
		return d.array()
	}
	d.fail("value", tok)
	return lua.Nil
}

// object reads an object's entries into a table, in their order (which
// shapes its layout, and so the order pairs gives).
func (d *jsonDecoder) object() lua.Value {
	d.descend(3) // the table, a key and a value
	t := lua.NewTable(0, 0)
	d.top++
	var tok jsonToken
	d.next(&tok)
	if tok.typ == tokObjEnd {
		d.depth--
		return lua.TableValue(t)
	}
	for {
		if tok.typ != tokString {
			d.fail("object key string", &tok)
		}
		key := tok.str
		d.top++
		d.next(&tok)
		if tok.typ != tokColon {
			d.fail("colon", &tok)
		}
		d.next(&tok)
		t.SetStr(key, d.value(&tok))
		d.top -= 2
		d.next(&tok)
		if tok.typ == tokObjEnd {
			d.depth--
			return lua.TableValue(t)
		}
		if tok.typ != tokComma {
			d.fail("comma or object end", &tok)
		}
		d.next(&tok)
	}
}

func (d *jsonDecoder) array() lua.Value {
	d.descend(2) // the table and a value
	t := lua.NewTable(0, 0)
	d.top++
	var tok jsonToken
	d.next(&tok)
	if tok.typ == tokArrEnd {
		d.depth--
		return lua.TableValue(t)
	}
	for i := 1; ; i++ {
		t.SetInt(i, d.value(&tok))
		d.top--
		d.next(&tok)
		if tok.typ == tokArrEnd {
			d.depth--
			return lua.TableValue(t)
		}
		if tok.typ != tokComma {
			d.fail("comma or array end", &tok)
		}
		d.next(&tok)
	}
}
