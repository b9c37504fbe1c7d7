// Package resp encodes replies in RESP2 or RESP3 and parses replies for tests
// and tools. Handlers describe a reply by its shape ("map of n", "double",
// "null") and the Writer renders what the connection's protocol expects, the
// way Redis's addReply* family does.
package resp

import (
	"math"
	"strconv"
)

// Writer appends encoded replies to an in-memory buffer. It never does I/O:
// the connection owns the socket and decides when the bytes go out.
type Writer struct {
	buf   []byte
	proto int
}

// NewWriter returns a Writer speaking RESP2.
func NewWriter() *Writer { return &Writer{proto: 2} }

// SetProto switches between RESP2 and RESP3 (HELLO).
func (w *Writer) SetProto(p int) { w.proto = p }

// Proto reports the protocol version in use.
func (w *Writer) Proto() int { return w.proto }

// RESP3 reports whether the connection speaks RESP3.
func (w *Writer) RESP3() bool { return w.proto == 3 }

// Bytes returns the encoded replies.
func (w *Writer) Bytes() []byte { return w.buf }

// Len is the number of encoded bytes.
func (w *Writer) Len() int { return len(w.buf) }

// Reset empties the buffer, keeping its capacity unless it grew large.
func (w *Writer) Reset() {
	if cap(w.buf) > 1<<20 {
		w.buf = nil
		return
	}
	w.buf = w.buf[:0]
}

// Truncate drops everything written after mark (see Len); used to replace a
// half-written reply with an error.
func (w *Writer) Truncate(mark int) { w.buf = w.buf[:mark] }

// Raw appends pre-encoded protocol bytes.
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

func (w *Writer) header(prefix byte, n int64) {
	w.buf = append(w.buf, prefix)
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.buf = append(w.buf, '\r', '\n')
}

// OK writes +OK.
func (w *Writer) OK() { w.buf = append(w.buf, "+OK\r\n"...) }

// Simple writes a status reply (+msg).
func (w *Writer) Simple(s string) {
	w.buf = append(w.buf, '+')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// Error writes an error reply. msg carries its own code ("ERR ...",
// "WRONGTYPE ..."); line breaks are replaced so the frame stays valid.
func (w *Writer) Error(msg string) {
	w.buf = append(w.buf, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		w.buf = append(w.buf, c)
	}
	w.buf = append(w.buf, '\r', '\n')
}

// Int writes an integer reply.
func (w *Writer) Int(n int64) {
	switch {
	case n == 0:
		w.buf = append(w.buf, ":0\r\n"...)
	case n == 1:
		w.buf = append(w.buf, ":1\r\n"...)
	default:
		w.header(':', n)
	}
}

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	w.header('$', int64(len(b)))
	w.buf = append(w.buf, b...)
	w.buf = append(w.buf, '\r', '\n')
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) {
	w.header('$', int64(len(s)))
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// BulkInt writes an integer formatted as a bulk string.
func (w *Writer) BulkInt(n int64) {
	var tmp [24]byte
	w.Bulk(strconv.AppendInt(tmp[:0], n, 10))
}

// Null writes the null bulk string ($-1 in RESP2, _ in RESP3).
func (w *Writer) Null() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "$-1\r\n"...)
}

// NullArray writes the null array (*-1 in RESP2, _ in RESP3).
func (w *Writer) NullArray() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "*-1\r\n"...)
}

// Array writes an array header; n elements must follow.
func (w *Writer) Array(n int) { w.header('*', int64(n)) }

// Map writes a map header; n key/value pairs must follow. RESP2 sees a flat
// array of 2n elements.
func (w *Writer) Map(n int) {
	if w.proto == 3 {
		w.header('%', int64(n))
		return
	}
	w.header('*', int64(2*n))
}

// Set writes a set header; RESP2 sees an array.
func (w *Writer) Set(n int) {
	if w.proto == 3 {
		w.header('~', int64(n))
		return
	}
	w.header('*', int64(n))
}

// Push writes a push header (out-of-band data); RESP2 sees an array.
func (w *Writer) Push(n int) {
	if w.proto == 3 {
		w.header('>', int64(n))
		return
	}
	w.header('*', int64(n))
}

// Bool writes a boolean; RESP2 sees :1 or :0.
func (w *Writer) Bool(b bool) {
	switch {
	case w.proto == 3 && b:
		w.buf = append(w.buf, "#t\r\n"...)
	case w.proto == 3:
		w.buf = append(w.buf, "#f\r\n"...)
	case b:
		w.buf = append(w.buf, ":1\r\n"...)
	default:
		w.buf = append(w.buf, ":0\r\n"...)
	}
}

// Double writes a floating point number the way Redis 7.0 does: "%.17g"
// (RESP3 double, RESP2 bulk string), with inf spelled out.
func (w *Writer) Double(f float64) {
	var tmp [32]byte
	var s []byte
	switch {
	case math.IsInf(f, 1):
		s = append(tmp[:0], "inf"...)
	case math.IsInf(f, -1):
		s = append(tmp[:0], "-inf"...)
	case math.IsNaN(f) && math.Signbit(f):
		s = append(tmp[:0], "-nan"...) // glibc's printf of 0/0
	case math.IsNaN(f):
		s = append(tmp[:0], "nan"...)
	default:
		s = AppendFloat17g(tmp[:0], f)
	}
	if w.proto == 3 {
		w.buf = append(w.buf, ',')
		w.buf = append(w.buf, s...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.Bulk(s)
}

// BigNumber writes a RESP3 big number ("(digits"); RESP2 sees a bulk
// string.
func (w *Writer) BigNumber(digits string) {
	if w.proto != 3 {
		w.BulkString(digits)
		return
	}
	w.buf = append(w.buf, '(')
	w.buf = append(w.buf, digits...)
	w.buf = append(w.buf, '\r', '\n')
}

// Verbatim writes a verbatim string (RESP3 "=len\r\ntxt:..."); RESP2 sees a
// bulk string.
func (w *Writer) Verbatim(format string, s string) {
	if w.proto != 3 {
		w.BulkString(s)
		return
	}
	w.header('=', int64(len(s)+4))
	w.buf = append(w.buf, format...)
	w.buf = append(w.buf, ':')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// AppendFloat17g formats f like C's printf("%.17g").
func AppendFloat17g(dst []byte, f float64) []byte {
	if math.IsNaN(f) {
		return append(dst, "nan"...)
	}
	if math.IsInf(f, 0) {
		if f > 0 {
			return append(dst, "inf"...)
		}
		return append(dst, "-inf"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	// %g picks the style from the decimal exponent X of the value rounded to
	// 17 significant digits: scientific when X < -4 or X >= 17.
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', 16, 64)
	// e is like "-1.2345678901234567e+05"
	mant, exp := splitExp(e)
	if exp < -4 || exp >= 17 {
		mant = trimFraction(mant)
		dst = append(dst, mant...)
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	fixed := strconv.AppendFloat(tmp[:0], f, 'f', 16-exp, 64)
	return append(dst, trimFraction(fixed)...)
}

func splitExp(e []byte) ([]byte, int) {
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] == 'e' {
			n, _ := strconv.Atoi(string(e[i+1:]))
			return e[:i], n
		}
	}
	return e, 0
}

// trimFraction removes trailing zeros after a decimal point, and the point.
func trimFraction(b []byte) []byte {
	dot := -1
	for i, c := range b {
		if c == '.' {
			dot = i
			break
		}
	}
	if dot < 0 {
		return b
	}
	end := len(b)
	for end > dot+1 && b[end-1] == '0' {
		end--
	}
	if end == dot+1 {
		end = dot
	}
	return b[:end]
}

// AppendCommand appends args as a request: a multibulk of bulk strings, the
// form clients send and a master feeds its replicas (MIGRATE, replication).
func AppendCommand(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}
