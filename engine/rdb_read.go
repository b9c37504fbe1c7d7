package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// RESTORE's side of DUMP payloads: every encoding Redis 7.0's
// rdbLoadObject accepts for strings, lists, sets, sorted sets and hashes
// (Redis 6's ziplists and older included) and Revolver's own module value.
// Everything is bounds-checked and validated the way Redis's deep
// sanitization validates it; nothing is allocated from a declared size
// before the bytes that back it are known to be there. The value is built
// in Revolver's representation with the encoding Redis would give it after
// its RESTORE, from the engine's thresholds.

// Errors of RESTORE, with Redis's texts.
var (
	ErrDumpPayload   = errors.New("ERR DUMP payload version or checksum are wrong")
	ErrBadDataFormat = errors.New("ERR Bad data format")
	// errBadDump is what the decoders return; RESTORE reports any of them
	// as ErrBadDataFormat.
	errBadDump = errors.New("corrupt dump payload")
)

// ParseDumpPayload checks a DUMP payload's footer and decodes its object,
// using the engine's encoding thresholds.
func (e *Engine) ParseDumpPayload(p []byte) (Object, error) {
	if err := VerifyDumpPayload(p); err != nil {
		return nil, err
	}
	// Like Redis, the object is read from the whole payload: a value
	// that claims more bytes than it has reads into the footer.
	obj, err := decodeDump(p, &e.limits)
	if err != nil {
		return nil, ErrBadDataFormat
	}
	if _, ok := obj.(keyBound); ok {
		// A native value builds its indexes and scheduler entries when it
		// is stored (attached), trusting what its records say. Records from
		// a client are tried first on a scratch engine: a forged one that
		// breaks the family's invariants is refused, not stored.
		if !e.trialAttach(p) {
			return nil, ErrBadDataFormat
		}
	}
	return obj, nil
}

// trialAttach decodes p again and stores it in a scratch engine at the same
// time, reporting whether that, and a dump of it, went without a panic.
func (e *Engine) trialAttach(p []byte) (ok bool) {
	obj, err := decodeDump(p, &e.limits)
	if err != nil {
		return false
	}
	scratch := New(Options{Databases: 1, Clock: NewManualClock(time.UnixMilli(e.now))})
	scratch.limits = e.limits
	scratch.now = e.now
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	db := scratch.dbs[0]
	db.add([]byte("k"), obj, 0)
	db.DumpKey([]byte("k"))
	db.Delete([]byte("k"))
	return true
}

// VerifyDumpPayload checks the RDB version and the CRC-64 of a payload.
func VerifyDumpPayload(p []byte) error {
	if len(p) < 10 {
		return ErrDumpPayload
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > RDBVersion ||
		binary.LittleEndian.Uint64(footer[2:]) != rdbCRC64(p[:len(p)-8]) {
		return ErrDumpPayload
	}
	return nil
}

// decodeDump decodes the object at the start of b (bytes after it, the
// footer included, are ignored, as Redis ignores them).
func decodeDump(b []byte, lim *Limits) (Object, error) {
	r := rdbReader{b: b}
	if len(r.b) == 0 {
		return nil, errBadDump
	}
	t := r.b[0]
	r.b = r.b[1:]
	return r.object(t, lim)
}

// object reads a value of RDB type t (its type byte already read),
// advancing r past it.
func (r *rdbReader) object(t byte, lim *Limits) (Object, error) {
	switch t {
	case rdbTypeString:
		s, err := r.str()
		if err != nil {
			return nil, err
		}
		return NewString(s), nil
	case rdbTypeList:
		return r.plainList()
	case rdbTypeListQuicklist, rdbTypeQuicklist2:
		return r.quicklist(t == rdbTypeQuicklist2)
	case rdbTypeListZiplist:
		zl, err := r.str()
		if err != nil {
			return nil, err
		}
		l := NewList()
		if _, err := zlEach(zl, func(v []byte) error { l.pushBack(v); return nil }); err != nil {
			return nil, err
		}
		return nonEmpty(l, l.Len())
	case rdbTypeSet:
		return r.plainSet(lim)
	case rdbTypeSetIntset:
		return r.intsetSet(lim)
	case rdbTypeZSet, rdbTypeZSet2:
		return r.plainZSet(lim, t == rdbTypeZSet2)
	case rdbTypeZSetListpack, rdbTypeZSetZiplist:
		return r.packedZSet(lim, t == rdbTypeZSetListpack)
	case rdbTypeHash:
		return r.plainHash(lim)
	case rdbTypeHashListpack, rdbTypeHashZiplist, rdbTypeHashZipmap:
		return r.packedHash(lim, t)
	case rdbTypeModule2:
		return r.native(lim)
	case rdbTypeStreamListpacks, rdbTypeStreamListpacks2:
		obj, err := r.stream(t == rdbTypeStreamListpacks2)
		if err == nil {
			obj.(*Stream).lim = lim
		}
		return obj, err
	}
	return nil, errBadDump
}

// errEmptyKey is a well-formed value with no elements: RESTORE refuses it
// like any bad payload, an RDB file load skips the key (as Redis does,
// files from before its fix for empty keys may hold some).
var errEmptyKey = fmt.Errorf("%w: empty value", errBadDump)

func nonEmpty(obj Object, n int) (Object, error) {
	if n == 0 {
		return nil, errEmptyKey
	}
	return obj, nil
}

// rdbReader reads RDB lengths and strings, checking every bound.
type rdbReader struct {
	b []byte
	// short records that a read failed for want of bytes (an RDB file's
	// loader then reads more, or reports a truncated file).
	short bool
}

// lengthOrEnc reads a length, or with enc set a special string encoding.
func (r *rdbReader) lengthOrEnc() (n uint64, enc bool, err error) {
	if len(r.b) == 0 {
		r.short = true
		return 0, false, errBadDump
	}
	c := r.b[0]
	switch c >> 6 {
	case 0:
		r.b = r.b[1:]
		return uint64(c & 0x3F), false, nil
	case 1:
		if len(r.b) < 2 {
			r.short = true
			return 0, false, errBadDump
		}
		n = uint64(c&0x3F)<<8 | uint64(r.b[1])
		r.b = r.b[2:]
		return n, false, nil
	case 3:
		r.b = r.b[1:]
		return uint64(c & 0x3F), true, nil
	}
	switch {
	case c == 0x80 && len(r.b) >= 5:
		n = uint64(binary.BigEndian.Uint32(r.b[1:]))
		r.b = r.b[5:]
		return n, false, nil
	case c == 0x81 && len(r.b) >= 9:
		n = binary.BigEndian.Uint64(r.b[1:])
		r.b = r.b[9:]
		return n, false, nil
	}
	r.short = c == 0x80 || c == 0x81
	return 0, false, errBadDump
}

// length reads a plain length.
func (r *rdbReader) length() (uint64, error) {
	n, enc, err := r.lengthOrEnc()
	if err == nil && enc {
		err = errBadDump
	}
	return n, err
}

func (r *rdbReader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)) {
		r.short = true
		return nil, errBadDump
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v, nil
}

// maxDumpString bounds a decompressed string: proto-max-bulk-len's
// ceiling, so a forged length cannot ask for more.
const maxDumpString = 512 << 20

// str reads a string in any of RDB's encodings. A verbatim string aliases
// the payload.
func (r *rdbReader) str() ([]byte, error) {
	n, enc, err := r.lengthOrEnc()
	if err != nil {
		return nil, err
	}
	if !enc {
		return r.take(n)
	}
	switch n {
	case rdbEncInt8, rdbEncInt16, rdbEncInt32:
		v, err := r.take(1 << n)
		if err != nil {
			return nil, err
		}
		var i int64
		switch n {
		case rdbEncInt8:
			i = int64(int8(v[0]))
		case rdbEncInt16:
			i = int64(int16(binary.LittleEndian.Uint16(v)))
		default:
			i = int64(int32(binary.LittleEndian.Uint32(v)))
		}
		return strconv.AppendInt(nil, i, 10), nil
	case rdbEncLZF:
		clen, err := r.length()
		if err != nil {
			return nil, err
		}
		ulen, err := r.length()
		if err != nil {
			return nil, err
		}
		comp, err := r.take(clen)
		if err != nil || ulen == 0 || ulen > maxDumpString {
			return nil, errBadDump
		}
		out, ok := lzfDecompress(comp, int(ulen))
		if !ok {
			return nil, errBadDump
		}
		return out, nil
	}
	return nil, errBadDump
}

func (r *rdbReader) plainList() (Object, error) {
	n, err := r.length()
	if err != nil {
		return nil, err
	}
	l := NewList()
	for ; n > 0; n-- {
		v, err := r.str()
		if err != nil {
			return nil, err
		}
		l.pushBack(v)
	}
	return nonEmpty(l, l.Len())
}

// quicklist reads a list of ziplist nodes (RDB_TYPE_LIST_QUICKLIST) or of
// listpack and plain nodes (RDB_TYPE_LIST_QUICKLIST_2). Empty nodes are
// skipped, as Redis skips them.
func (r *rdbReader) quicklist(v2 bool) (Object, error) {
	nodes, err := r.length()
	if err != nil {
		return nil, err
	}
	l := NewList()
	push := func(v []byte) error { l.pushBack(v); return nil }
	for ; nodes > 0; nodes-- {
		container := uint64(qlNodePacked)
		if v2 {
			if container, err = r.length(); err != nil {
				return nil, err
			}
			if container != qlNodePacked && container != qlNodePlain {
				return nil, errBadDump
			}
		}
		data, err := r.str()
		if err != nil || len(data) == 0 {
			return nil, errBadDump
		}
		switch {
		case container == qlNodePlain:
			l.pushBack(data)
		case v2:
			_, err = lpEach(data, push)
		default:
			_, err = zlEach(data, push)
		}
		if err != nil {
			return nil, err
		}
	}
	return nonEmpty(l, l.Len())
}

func (r *rdbReader) plainSet(lim *Limits) (Object, error) {
	n, err := r.length()
	if err != nil {
		return nil, err
	}
	s := &Set{lim: lim}
	if n > uint64(s.maxIntset()) {
		s.dict = NewDict[struct{}]()
	}
	for ; n > 0; n-- {
		m, err := r.str()
		if err != nil {
			return nil, err
		}
		if !s.add(m) {
			return nil, errBadDump // duplicate members
		}
	}
	return nonEmpty(s, s.Len())
}

func (r *rdbReader) intsetSet(lim *Limits) (Object, error) {
	b, err := r.str()
	if err != nil {
		return nil, err
	}
	ints, err := readIntset(b)
	if err != nil {
		return nil, err
	}
	s := &Set{lim: lim, ints: ints}
	if int64(len(ints)) > s.maxIntset() {
		s.convert()
	}
	return s, nil
}

// plainZSet reads (member, score) pairs, scores binary (ZSET_2) or as
// strings (the old ZSET), and gives the set Redis's encoding: listpack
// when it is within both thresholds.
func (r *rdbReader) plainZSet(lim *Limits, binaryScores bool) (Object, error) {
	n, err := r.length()
	if err != nil {
		return nil, err
	}
	type pair struct {
		m []byte
		s float64
	}
	var pairs []pair
	seen := map[string]struct{}{}
	maxLen := 0
	for ; n > 0; n-- {
		m, err := r.str()
		if err != nil {
			return nil, err
		}
		var score float64
		if binaryScores {
			v, err := r.take(8)
			if err != nil {
				return nil, err
			}
			score = math.Float64frombits(binary.LittleEndian.Uint64(v))
		} else if score, err = r.stringScore(); err != nil {
			return nil, err
		}
		if math.IsNaN(score) {
			return nil, errBadDump
		}
		if _, dup := seen[string(m)]; dup {
			return nil, errBadDump
		}
		seen[string(m)] = struct{}{}
		maxLen = max(maxLen, len(m))
		pairs = append(pairs, pair{m, score})
	}
	if len(pairs) == 0 {
		return nil, errEmptyKey
	}
	z := NewZSet()
	if int64(len(pairs)) > lim.ZSetMaxListpackEntries || int64(maxLen) > lim.ZSetMaxListpackValue {
		z.toSkiplist()
	}
	for _, p := range pairs {
		z.insertNew(string(p.m), z.storedScore(p.s))
	}
	return z, nil
}

// stringScore reads an old-style score: a length byte (253 NaN, 254 +inf,
// 255 -inf) and that many characters.
func (r *rdbReader) stringScore() (float64, error) {
	if len(r.b) == 0 {
		r.short = true
		return 0, errBadDump
	}
	n := r.b[0]
	r.b = r.b[1:]
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	v, err := r.take(uint64(n))
	if err != nil {
		return 0, err
	}
	f, ok := parseDumpScore(v)
	if !ok {
		return 0, errBadDump
	}
	return f, nil
}

// parseDumpScore parses a score as strtod would (inf spelled either way).
func parseDumpScore(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, !math.IsNaN(f)
}

// packedZSet reads a listpack or ziplist of (member, score) pairs. Like
// Redis it converts to a skiplist only when there are too many members
// (it does not scan the lengths).
func (r *rdbReader) packedZSet(lim *Limits, listpack bool) (Object, error) {
	b, err := r.str()
	if err != nil {
		return nil, err
	}
	// A first pass validates and counts, so that a set bound for the
	// skiplist form is built there (a listpack insert costs O(n)).
	var n int
	if listpack {
		n, err = lpEach(b, func([]byte) error { return nil })
	} else {
		n, err = zlEach(b, func([]byte) error { return nil })
	}
	if err != nil {
		return nil, err
	}
	z := NewZSet()
	if int64(n/2) > lim.ZSetMaxListpackEntries {
		z.toSkiplist()
	}
	seen := map[string]struct{}{}
	var member []byte
	even := true
	each := func(v []byte) error {
		if even {
			if _, dup := seen[string(v)]; dup {
				return errBadDump
			}
			seen[string(v)] = struct{}{}
			member = append(member[:0], v...)
		} else {
			score, ok := parseDumpScore(v)
			if !ok {
				return errBadDump
			}
			z.insertNew(string(member), z.storedScore(score))
		}
		even = !even
		return nil
	}
	if listpack {
		_, err = lpEach(b, each)
	} else {
		_, err = zlEach(b, each)
	}
	if err != nil {
		return nil, err
	}
	if !even {
		return nil, errBadDump
	}
	return nonEmpty(z, z.Len())
}

// plainHash reads field-value pairs: a hashtable from the start when there
// are more than hash-max-listpack-entries, else a listpack until a field or
// value is too long, as Redis loads it.
func (r *rdbReader) plainHash(lim *Limits) (Object, error) {
	n, err := r.length()
	if err != nil {
		return nil, err
	}
	h := &Hash{lim: lim}
	if int64(n) > lim.HashMaxListpackEntries || n > 1<<62 {
		h.dict = NewDict[hashValue]()
	}
	for ; n > 0; n-- {
		f, err := r.str()
		if err != nil {
			return nil, err
		}
		v, err := r.str()
		if err != nil {
			return nil, err
		}
		if h.Has(f) {
			return nil, errBadDump
		}
		h.set(f, v)
	}
	return nonEmpty(h, h.Len())
}

// packedHash reads a listpack, ziplist or zipmap of field-value pairs.
// Like Redis, a listpack or ziplist becomes a hashtable only when it has
// too many fields; a zipmap also when a field or value is too long.
func (r *rdbReader) packedHash(lim *Limits, t byte) (Object, error) {
	b, err := r.str()
	if err != nil {
		return nil, err
	}
	h := &Hash{lim: lim}
	seen := map[string]struct{}{}
	maxLen := 0
	add := func(f, v []byte) error {
		if _, dup := seen[string(f)]; dup {
			return errBadDump
		}
		seen[string(f)] = struct{}{}
		maxLen = max(maxLen, len(f), len(v))
		h.pack.appendNew(f, v)
		return nil
	}
	if t == rdbTypeHashZipmap {
		err = zmEach(b, add)
	} else {
		var field []byte
		even := true
		each := func(v []byte) error {
			even = !even
			if !even {
				field = append(field[:0], v...)
				return nil
			}
			return add(field, v)
		}
		if t == rdbTypeHashListpack {
			_, err = lpEach(b, each)
		} else {
			_, err = zlEach(b, each)
		}
		if err == nil && !even {
			err = errBadDump
		}
	}
	if err != nil {
		return nil, err
	}
	if int64(h.pack.n) > lim.HashMaxListpackEntries ||
		(t == rdbTypeHashZipmap && int64(maxLen) > lim.HashMaxListpackValue) {
		h.convert()
	}
	return nonEmpty(h, h.Len())
}
