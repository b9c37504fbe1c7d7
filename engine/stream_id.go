package engine

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// StreamID is a stream entry id: milliseconds and a sequence number, both
// unsigned 64-bit, ordered as one 128-bit number.
type StreamID struct {
	Ms, Seq uint64
}

// MaxStreamID is the largest id ("+").
var MaxStreamID = StreamID{^uint64(0), ^uint64(0)}

// Stream id errors, with Redis's texts.
var (
	ErrStreamBadID = errors.New("ERR Invalid stream ID specified as stream command argument")
)

// Less orders ids.
func (a StreamID) Less(b StreamID) bool {
	return a.Ms < b.Ms || (a.Ms == b.Ms && a.Seq < b.Seq)
}

// Compare returns -1, 0 or 1.
func (a StreamID) Compare(b StreamID) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

// IsZero reports whether the id is 0-0.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Incr returns the next id; ok is false when a is the largest.
func (a StreamID) Incr() (StreamID, bool) {
	switch {
	case a.Seq != ^uint64(0):
		a.Seq++
	case a.Ms != ^uint64(0):
		a.Ms++
		a.Seq = 0
	default:
		return a, false
	}
	return a, true
}

// Decr returns the previous id; ok is false for 0-0.
func (a StreamID) Decr() (StreamID, bool) {
	switch {
	case a.Seq != 0:
		a.Seq--
	case a.Ms != 0:
		a.Ms--
		a.Seq = ^uint64(0)
	default:
		return a, false
	}
	return a, true
}

// AppendTo writes "ms-seq".
func (a StreamID) AppendTo(dst []byte) []byte {
	dst = strconv.AppendUint(dst, a.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, a.Seq, 10)
}

func (a StreamID) String() string { return string(a.AppendTo(nil)) }

// encode writes the id as 16 big-endian bytes, so byte order is id order.
func (a StreamID) encode(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, a.Ms)
	return binary.BigEndian.AppendUint64(dst, a.Seq)
}

func decodeStreamID(b []byte) StreamID {
	return StreamID{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}

// ParseStreamID parses an id argument as Redis's stream commands do:
// "ms-seq", or "ms" with missingSeq as the sequence; "-" and "+" are the
// smallest and largest ids unless strict. With allowAutoSeq, "ms-*" is
// accepted and seqGiven is false for it.
func ParseStreamID(b []byte, missingSeq uint64, strict, allowAutoSeq bool) (id StreamID, seqGiven bool, err error) {
	if len(b) > 127 {
		return id, false, ErrStreamBadID
	}
	// Redis copies the argument into a C string: a NUL ends it.
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		if strict {
			return id, false, ErrStreamBadID
		}
		if b[0] == '-' {
			return StreamID{}, true, nil
		}
		return MaxStreamID, true, nil
	}
	msPart, seqPart, hasSeq := b, []byte(nil), false
	for i, c := range b {
		if c == '-' {
			msPart, seqPart, hasSeq = b[:i], b[i+1:], true
			break
		}
	}
	ms, ok := parseStreamUint(msPart)
	if !ok {
		return id, false, ErrStreamBadID
	}
	seqGiven = true
	seq := missingSeq
	if hasSeq {
		if allowAutoSeq && len(seqPart) == 1 && seqPart[0] == '*' {
			seq, seqGiven = 0, false
		} else if seq, ok = parseStreamUint(seqPart); !ok {
			return id, false, ErrStreamBadID
		}
	}
	return StreamID{ms, seq}, seqGiven, nil
}

// parseStreamUint is Redis's string2ull: a canonical signed integer that
// is not negative, or else what strtoull accepts in full (leading spaces,
// a sign, which for '-' wraps around, and no overflow).
func parseStreamUint(b []byte) (uint64, bool) {
	if v, ok := ParseInt(b); ok {
		if v < 0 {
			return 0, false
		}
		return uint64(v), true
	}
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false // ERANGE
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}
