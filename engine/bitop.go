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
// source's and which starts zeroed. Each source is folded in with one pass
// of word-wide operations; the tail past a short source is what the
// operation makes of zeros (cleared for AND, kept for OR and XOR).
func bitOpInto(op BitOpKind, res []byte, srcs [][]byte) {
	copy(res, srcs[0])
	if op == BitNot {
		notBytes(res)
		return
	}
	for _, s := range srcs[1:] {
		switch op {
		case BitAnd:
			andBytes(res[:len(s)], s)
			clear(res[len(s):])
		case BitOr:
			orBytes(res[:len(s)], s)
		case BitXor:
			subtle.XORBytes(res, res[:len(s)], s)
		}
	}
}

// andBytes sets dst[i] &= src[i]; dst and src have the same length.
func andBytes(dst, src []byte) {
	le := binary.LittleEndian
	for len(src) >= 32 && len(dst) >= 32 {
		le.PutUint64(dst[0:], le.Uint64(dst[0:])&le.Uint64(src[0:]))
		le.PutUint64(dst[8:], le.Uint64(dst[8:])&le.Uint64(src[8:]))
		le.PutUint64(dst[16:], le.Uint64(dst[16:])&le.Uint64(src[16:]))
		le.PutUint64(dst[24:], le.Uint64(dst[24:])&le.Uint64(src[24:]))
		dst, src = dst[32:], src[32:]
	}
	for len(src) >= 8 && len(dst) >= 8 {
		le.PutUint64(dst, le.Uint64(dst)&le.Uint64(src))
		dst, src = dst[8:], src[8:]
	}
	for i := range src {
		dst[i] &= src[i]
	}
}

// orBytes sets dst[i] |= src[i]; dst and src have the same length.
func orBytes(dst, src []byte) {
	le := binary.LittleEndian
	for len(src) >= 32 && len(dst) >= 32 {
		le.PutUint64(dst[0:], le.Uint64(dst[0:])|le.Uint64(src[0:]))
		le.PutUint64(dst[8:], le.Uint64(dst[8:])|le.Uint64(src[8:]))
		le.PutUint64(dst[16:], le.Uint64(dst[16:])|le.Uint64(src[16:]))
		le.PutUint64(dst[24:], le.Uint64(dst[24:])|le.Uint64(src[24:]))
		dst, src = dst[32:], src[32:]
	}
	for len(src) >= 8 && len(dst) >= 8 {
		le.PutUint64(dst, le.Uint64(dst)|le.Uint64(src))
		dst, src = dst[8:], src[8:]
	}
	for i := range src {
		dst[i] |= src[i]
	}
}

// notBytes inverts every bit of p.
func notBytes(p []byte) {
	le := binary.LittleEndian
	for len(p) >= 32 {
		le.PutUint64(p[0:], ^le.Uint64(p[0:]))
		le.PutUint64(p[8:], ^le.Uint64(p[8:]))
		le.PutUint64(p[16:], ^le.Uint64(p[16:]))
		le.PutUint64(p[24:], ^le.Uint64(p[24:]))
		p = p[32:]
	}
	for len(p) >= 8 {
		le.PutUint64(p, ^le.Uint64(p))
		p = p[8:]
	}
	for i := range p {
		p[i] = ^p[i]
	}
}
