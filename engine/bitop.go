package engine

import (
	"crypto/subtle"
	"encoding/binary"
)

// BitOpKind is BITOP's operation.
type BitOpKind uint8

// BITOP operations.
const (
	BitAnd BitOpKind = iota
	BitOr
	BitXor
	BitNot
)

// BitOp is BITOP: it combines the string values of keys (a missing key is
// an empty string, and shorter strings count as padded with zero bytes)
// into dst, replacing whatever dst held and its deadline. An empty result
// deletes dst instead. n is the length stored; deleted says whether an
// empty result removed an existing dst. The sources are read like a read
// command reads them; a source of another type is ErrWrongType, with
// nothing written.
func (db *DB) BitOp(op BitOpKind, dst []byte, keys [][]byte) (n int, deleted bool, err error) {
	srcs := make([][]byte, len(keys))
	for i, k := range keys {
		s, err := db.stringAt(k, true)
		if err != nil {
			return 0, false, err
		}
		if s != nil {
			srcs[i] = s.b
			n = max(n, len(s.b))
		}
	}
	if n == 0 {
		return 0, db.Delete(dst), nil
	}
	res := newZeroString(n)
	bitOpInto(op, res.b, srcs)
	db.Set(dst, res, false)
	return n, false, nil
}

// bitOpInto computes op over srcs into res, whose length is the longest
// source's and which starts zeroed. The first two sources are combined in
// one pass, and every further source is folded in with another, all with
// word-wide operations; past the end of a shorter source the result is
// what the operation makes of zeros (cleared for AND, kept for OR and XOR).
func bitOpInto(op BitOpKind, res []byte, srcs [][]byte) {
	first := srcs[0]
	if op == BitNot {
		notBytes(res, first)
		return
	}
	if len(srcs) == 1 {
		copy(res, first)
		return
	}
	a, b := first, srcs[1]
	if len(a) < len(b) {
		a, b = b, a
	}
	n := len(b)
	switch op {
	case BitAnd:
		andBytes(res, a[:n], b) // the rest stays zero
	case BitOr:
		orBytes(res, a[:n], b)
		copy(res[n:], a[n:])
	case BitXor:
		subtle.XORBytes(res, a[:n], b)
		copy(res[n:], a[n:])
	}
	for _, s := range srcs[2:] {
		n := len(s)
		switch op {
		case BitAnd:
			andBytes(res, res[:n], s)
			clear(res[n:])
		case BitOr:
			orBytes(res, res[:n], s)
		case BitXor:
			subtle.XORBytes(res, res[:n], s)
		}
	}
}

// andBytes sets dst[i] = a[i] & b[i] for every i of b; a is as long as b,
// dst at least as long, and dst may be a.
func andBytes(dst, a, b []byte) {
	le := binary.LittleEndian
	a, dst = a[:len(b)], dst[:len(b)]
	for len(b) >= 32 {
		le.PutUint64(dst[0:], le.Uint64(a[0:])&le.Uint64(b[0:]))
		le.PutUint64(dst[8:], le.Uint64(a[8:])&le.Uint64(b[8:]))
		le.PutUint64(dst[16:], le.Uint64(a[16:])&le.Uint64(b[16:]))
		le.PutUint64(dst[24:], le.Uint64(a[24:])&le.Uint64(b[24:]))
		dst, a, b = dst[32:], a[32:], b[32:]
	}
	for len(b) >= 8 {
		le.PutUint64(dst, le.Uint64(a)&le.Uint64(b))
		dst, a, b = dst[8:], a[8:], b[8:]
	}
	for i := range b {
		dst[i] = a[i] & b[i]
	}
}

// orBytes is andBytes with |.
func orBytes(dst, a, b []byte) {
	le := binary.LittleEndian
	a, dst = a[:len(b)], dst[:len(b)]
	for len(b) >= 32 {
		le.PutUint64(dst[0:], le.Uint64(a[0:])|le.Uint64(b[0:]))
		le.PutUint64(dst[8:], le.Uint64(a[8:])|le.Uint64(b[8:]))
		le.PutUint64(dst[16:], le.Uint64(a[16:])|le.Uint64(b[16:]))
		le.PutUint64(dst[24:], le.Uint64(a[24:])|le.Uint64(b[24:]))
		dst, a, b = dst[32:], a[32:], b[32:]
	}
	for len(b) >= 8 {
		le.PutUint64(dst, le.Uint64(a)|le.Uint64(b))
		dst, a, b = dst[8:], a[8:], b[8:]
	}
	for i := range b {
		dst[i] = a[i] | b[i]
	}
}

// notBytes sets dst[i] = ^src[i] for every i of src; dst is at least as
// long.
func notBytes(dst, src []byte) {
	le := binary.LittleEndian
	dst = dst[:len(src)]
	for len(src) >= 32 {
		le.PutUint64(dst[0:], ^le.Uint64(src[0:]))
		le.PutUint64(dst[8:], ^le.Uint64(src[8:]))
		le.PutUint64(dst[16:], ^le.Uint64(src[16:]))
		le.PutUint64(dst[24:], ^le.Uint64(src[24:]))
		dst, src = dst[32:], src[32:]
	}
	for len(src) >= 8 {
		le.PutUint64(dst, ^le.Uint64(src))
		dst, src = dst[8:], src[8:]
	}
	for i := range src {
		dst[i] = ^src[i]
	}
}
