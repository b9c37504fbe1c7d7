package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Kind is the wire type of a parsed reply.
type Kind byte

// Reply kinds, named by their RESP type byte.
const (
	KindSimple    Kind = '+'
	KindError     Kind = '-'
	KindInt       Kind = ':'
	KindBulk      Kind = '$'
	KindArray     Kind = '*'
	KindNull      Kind = '_'
	KindDouble    Kind = ','
	KindBool      Kind = '#'
	KindVerbatim  Kind = '='
	KindBigNumber Kind = '('
	KindMap       Kind = '%'
	KindSet       Kind = '~'
	KindPush      Kind = '>'
	KindAttribute Kind = '|'
	KindBlobError Kind = '!'
)

// Value is one parsed reply. RESP2's null bulk and null array both parse as
// KindNull with Nil2 recording which one it was.
type Value struct {
	Kind  Kind
	Str   string  // simple, error, bulk, verbatim (with its "txt:" prefix), double and big number text
	Int   int64   // integer, bool (1/0)
	Elems []Value // array, set, push; map as k1,v1,k2,v2...
	Nil2  byte    // for RESP2 nulls: '$' or '*'
}

// Reader parses replies from a stream.
type Reader struct {
	rd *bufio.Reader
}

// NewReader wraps r.
func NewReader(r io.Reader) *Reader { return &Reader{rd: bufio.NewReaderSize(r, 64*1024)} }

// Reset makes the reader read from r, dropping anything buffered: one
// reader (and its buffer) can parse many sources in turn.
func (r *Reader) Reset(src io.Reader) { r.rd.Reset(src) }

// ErrProtocol reports a malformed reply.
var ErrProtocol = errors.New("resp: protocol error")

func (r *Reader) line() (string, error) {
	s, err := r.rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(s) < 2 || s[len(s)-2] != '\r' {
		return "", ErrProtocol
	}
	return s[:len(s)-2], nil
}

// Read parses the next reply.
func (r *Reader) Read() (Value, error) {
	ln, err := r.line()
	if err != nil {
		return Value{}, err
	}
	if ln == "" {
		return Value{}, ErrProtocol
	}
	kind, rest := Kind(ln[0]), ln[1:]
	switch kind {
	case KindSimple, KindError, KindDouble, KindBigNumber:
		return Value{Kind: kind, Str: rest}, nil
	case KindNull:
		return Value{Kind: KindNull}, nil
	case KindInt:
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return Value{}, ErrProtocol
		}
		return Value{Kind: KindInt, Int: n}, nil
	case KindBool:
		if rest != "t" && rest != "f" {
			return Value{}, ErrProtocol
		}
		v := Value{Kind: KindBool}
		if rest == "t" {
			v.Int = 1
		}
		return v, nil
	case KindBulk, KindVerbatim, KindBlobError:
		n, err := strconv.Atoi(rest)
		if err != nil {
			return Value{}, ErrProtocol
		}
		if n < 0 {
			return Value{Kind: KindNull, Nil2: '$'}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r.rd, buf); err != nil {
			return Value{}, err
		}
		if kind == KindBlobError {
			kind = KindError
		}
		return Value{Kind: kind, Str: string(buf[:n])}, nil
	case KindArray, KindSet, KindPush, KindMap, KindAttribute:
		n, err := strconv.Atoi(rest)
		if err != nil {
			return Value{}, ErrProtocol
		}
		if n < 0 {
			return Value{Kind: KindNull, Nil2: '*'}, nil
		}
		count := n
		if kind == KindMap || kind == KindAttribute {
			count = 2 * n
		}
		v := Value{Kind: kind, Elems: make([]Value, 0, count)}
		for i := 0; i < count; i++ {
			e, err := r.Read()
			if err != nil {
				return Value{}, err
			}
			v.Elems = append(v.Elems, e)
		}
		if kind == KindAttribute { // attributes decorate the next reply; skip them
			return r.Read()
		}
		return v, nil
	}
	return Value{}, fmt.Errorf("%w: unexpected type byte %q", ErrProtocol, ln[0])
}

// String renders a value in a compact, unambiguous text form used by golden
// transcripts and test failure messages, e.g. `"OK"`, `(integer) 3`,
// `(nil)`, `1) "a"` nested by indentation.
func (v Value) String() string {
	var b strings.Builder
	v.format(&b, "")
	return b.String()
}

func (v Value) format(b *strings.Builder, indent string) {
	switch v.Kind {
	case KindSimple:
		b.WriteString("+" + v.Str)
	case KindError:
		b.WriteString("(error) " + v.Str)
	case KindInt:
		b.WriteString("(integer) " + strconv.FormatInt(v.Int, 10))
	case KindBulk:
		b.WriteString(strconv.Quote(v.Str))
	case KindVerbatim:
		b.WriteString("(verbatim) " + strconv.Quote(v.Str))
	case KindNull:
		if v.Nil2 == '*' {
			b.WriteString("(nil array)") // RESP2's *-1, where $-1 is (nil)
		} else {
			b.WriteString("(nil)")
		}
	case KindDouble:
		b.WriteString("(double) " + v.Str)
	case KindBigNumber:
		b.WriteString("(big number) " + v.Str)
	case KindBool:
		if v.Int != 0 {
			b.WriteString("(true)")
		} else {
			b.WriteString("(false)")
		}
	case KindMap:
		// As redis-cli shows a map: one numbered "key => value" line a pair.
		if len(v.Elems) == 0 {
			b.WriteString("(empty hash)")
			return
		}
		for i := 0; i+1 < len(v.Elems); i += 2 {
			if i > 0 {
				b.WriteString("\n" + indent)
			}
			prefix := strconv.Itoa(i/2+1) + "# "
			b.WriteString(prefix)
			v.Elems[i].format(b, indent+strings.Repeat(" ", len(prefix)))
			b.WriteString(" => ")
			v.Elems[i+1].format(b, indent+strings.Repeat(" ", len(prefix)+4))
		}
	case KindArray, KindSet, KindPush:
		label := map[Kind]string{KindArray: "", KindSet: "(set) ", KindPush: "(push) "}[v.Kind]
		if len(v.Elems) == 0 {
			b.WriteString(label + "(empty)")
			return
		}
		b.WriteString(label)
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteString("\n" + indent + strings.Repeat(" ", len(label)))
			}
			prefix := strconv.Itoa(i+1) + ") "
			b.WriteString(prefix)
			e.format(b, indent+strings.Repeat(" ", len(label)+len(prefix)))
		}
	default:
		b.WriteString("(unknown)")
	}
}
