package engine

import (
	"encoding/binary"
	"math"
	"strconv"
)

// DUMP payloads (Redis's createDumpPayload): one RDB object, its type byte
// then its encoding, followed by the RDB version (2 bytes) and the CRC-64
// of everything before (8 bytes), both little-endian. Each Redis type is
// written in the encoding Redis 7.0 writes for the encoding OBJECT ENCODING
// reports, so for the same value the payload is byte for byte redis-server's
// wherever the layout is deterministic (strings, listpacks, intsets, the
// skiplist's order); hashtables are written in this server's order.
// Revolver's own types travel as an RDB module value (rdb_native.go).

// RDB object types and string encodings (rdb.h).
const (
	rdbTypeString        = 0
	rdbTypeList          = 1
	rdbTypeSet           = 2
	rdbTypeZSet          = 3
	rdbTypeHash          = 4
	rdbTypeZSet2         = 5
	rdbTypeModule2       = 7
	rdbTypeHashZipmap    = 9
	rdbTypeListZiplist   = 10
	rdbTypeSetIntset     = 11
	rdbTypeZSetZiplist   = 12
	rdbTypeHashZiplist   = 13
	rdbTypeListQuicklist = 14
	rdbTypeHashListpack  = 16
	rdbTypeZSetListpack  = 17
	rdbTypeQuicklist2    = 18

	rdbEncInt8  = 0
	rdbEncInt16 = 1
	rdbEncInt32 = 2
	rdbEncLZF   = 3

	// RDBVersion is the version DUMP writes (Redis 7.0's) and the newest
	// RESTORE accepts.
	RDBVersion = 10

	// Quicklist node containers.
	qlNodePlain  = 1
	qlNodePacked = 2
	// qlNodeMaxBytes is list-max-listpack-size -2: a node's listpack is
	// at most 8 KB; qlEntryOverhead is what quicklist adds to an element's
	// length when it estimates whether it still fits.
	qlNodeMaxBytes  = 8192
	qlEntryOverhead = 8
)

// DumpPayload serializes obj as DUMP does.
func DumpPayload(obj Object) []byte {
	var w rdbWriter
	w.object(obj)
	w.b = binary.LittleEndian.AppendUint16(w.b, RDBVersion)
	w.b = binary.LittleEndian.AppendUint64(w.b, rdbCRC64(w.b))
	return w.b
}

type rdbWriter struct {
	b  []byte
	lp lpBuilder // scratch for listpacks
	// verbatim leaves long strings uncompressed (rdbcompression no).
	verbatim bool
}

func (w *rdbWriter) length(n uint64) {
	switch {
	case n < 1<<6:
		w.b = append(w.b, byte(n))
	case n < 1<<14:
		w.b = append(w.b, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		w.b = binary.BigEndian.AppendUint32(append(w.b, 0x80), uint32(n))
	default:
		w.b = binary.BigEndian.AppendUint64(append(w.b, 0x81), n)
	}
}

// str writes s as rdbSaveRawString does: a short canonical integer that
// fits 32 bits as an integer, a string over 20 bytes LZF-compressed when
// that saves at least 4 bytes, anything else verbatim.
func (w *rdbWriter) str(s []byte) {
	if len(s) <= 11 {
		if v, ok := ParseInt(s); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			w.int(v)
			return
		}
	}
	if len(s) > 20 && !w.verbatim {
		start := len(w.b)
		// Room for the header (at most 1 + 5 + 5 bytes) is added after.
		if out, ok := lzfCompress(w.b, s, len(s)-4); ok {
			comp := append([]byte(nil), out[start:]...)
			w.b = append(out[:start], 0xC0|rdbEncLZF)
			w.length(uint64(len(comp)))
			w.length(uint64(len(s)))
			w.b = append(w.b, comp...)
			return
		}
		w.b = w.b[:start]
	}
	w.length(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *rdbWriter) int(v int64) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		w.b = append(w.b, 0xC0|rdbEncInt8, byte(v))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		w.b = binary.LittleEndian.AppendUint16(append(w.b, 0xC0|rdbEncInt16), uint16(v))
	default:
		w.b = binary.LittleEndian.AppendUint32(append(w.b, 0xC0|rdbEncInt32), uint32(v))
	}
}

func (w *rdbWriter) object(obj Object) {
	switch v := obj.(type) {
	case *String:
		w.b = append(w.b, rdbTypeString)
		w.str(v.b)
	case *List:
		w.list(v)
	case *Set:
		w.set(v)
	case *Hash:
		w.hash(v)
	case *ZSet:
		w.zset(v)
	case *Stream:
		w.stream(v)
	default:
		w.native(obj)
	}
}

// list writes a quicklist of listpack nodes cut where Redis's quicklist
// cuts a list built by pushes at the tail: a node takes the next element
// while its listpack, the element and the estimate's overhead stay within
// 8 KB.
func (w *rdbWriter) list(l *List) {
	w.b = append(w.b, rdbTypeQuicklist2)
	var nodes [][]byte
	lb := newLPBuilder(nil)
	l.Each(0, l.Len(), false, func(v []byte) {
		if lb.n > 0 && lb.size()+len(v)+qlEntryOverhead > qlNodeMaxBytes {
			nodes = append(nodes, lb.finish())
			lb = newLPBuilder(nil)
		}
		lb.appendString(v)
	})
	if lb.n > 0 {
		nodes = append(nodes, lb.finish())
	}
	w.length(uint64(len(nodes)))
	for _, n := range nodes {
		w.length(qlNodePacked)
		w.str(n)
	}
}

func (w *rdbWriter) set(s *Set) {
	if s.dict == nil {
		w.b = append(w.b, rdbTypeSetIntset)
		w.str(appendIntset(nil, s.ints))
		return
	}
	w.b = append(w.b, rdbTypeSet)
	w.length(uint64(s.Len()))
	s.Each(func(m []byte) { w.str(m) })
}

func (w *rdbWriter) hash(h *Hash) {
	if h.dict == nil {
		w.b = append(w.b, rdbTypeHashListpack)
		w.lp = newLPBuilder(w.lp.b)
		h.pack.each(func(f, v []byte) bool {
			w.lp.appendString(f)
			w.lp.appendString(v)
			return true
		})
		w.str(w.lp.finish())
		return
	}
	w.b = append(w.b, rdbTypeHash)
	w.length(uint64(h.Len()))
	h.Each(func(f, v []byte) {
		w.str(f)
		w.str(v)
	})
}

// zset writes a listpack set as (member, score) pairs with scores as
// zzlInsertAt stores them, and a skiplist set from its greatest member to
// its least, with binary scores, as Redis walks its skiplist backwards.
func (w *rdbWriter) zset(z *ZSet) {
	if z.packed() {
		w.b = append(w.b, rdbTypeZSetListpack)
		w.lp = newLPBuilder(w.lp.b)
		var num [32]byte
		z.walk(0, false, func(it zitem) bool {
			w.lp.appendString(bytesOf(it.member))
			if i, ok := listpackScoreInt(it.score); ok {
				w.lp.appendInt(i)
			} else {
				w.lp.appendString(appendScore17g(num[:0], it.score))
			}
			return true
		})
		w.str(w.lp.finish())
		return
	}
	w.b = append(w.b, rdbTypeZSet2)
	w.length(uint64(z.Len()))
	z.walk(z.Len()-1, true, func(it zitem) bool {
		w.str(bytesOf(it.member))
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(it.score))
		return true
	})
}

// listpackScoreInt is Redis's double2ll: a score that is integral within
// ±2^62 is stored as an integer (-0 as 0).
func listpackScoreInt(f float64) (int64, bool) {
	if f < -(1<<62) || f > 1<<62 || f != math.Trunc(f) {
		return 0, false
	}
	return int64(f), true
}

// appendScore17g is d2string for a score that is not integral: printf's
// "%.17g" (which Go's 'g' with 17 digits matches), with C's spelling of
// the infinities.
func appendScore17g(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}
