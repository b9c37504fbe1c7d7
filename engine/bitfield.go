package engine

import (
	"encoding/binary"
	"math"
)

// BitfieldOverflow is how BITFIELD's SET and INCRBY treat a result that
// does not fit the field.
type BitfieldOverflow uint8

// Overflow modes.
const (
	OverflowWrap BitfieldOverflow = iota // keep the low bits (two's complement)
	OverflowSat                          // clamp to the field's minimum or maximum
	OverflowFail                         // write nothing; the op replies null
)

// BitfieldOpKind is one BITFIELD subcommand.
type BitfieldOpKind uint8

// BITFIELD subcommands (OVERFLOW is a parsing state, not an op).
const (
	BitfieldGet BitfieldOpKind = iota
	BitfieldSet
	BitfieldIncrBy
)

// BitfieldOp is one parsed GET, SET or INCRBY.
type BitfieldOp struct {
	Kind     BitfieldOpKind
	Signed   bool
	Bits     uint   // 1..64 signed, 1..63 unsigned
	Offset   uint64 // in bits, from the first bit of the string
	Value    int64  // SET's value or INCRBY's increment
	Overflow BitfieldOverflow
}

// BitfieldReply is one op's reply: an integer, or null (Failed) when
// OVERFLOW FAIL refused it.
type BitfieldReply struct {
	Value  int64
	Failed bool
}

// Bitfield is BITFIELD (and BITFIELD_RO, whose ops are all GETs). Ops that
// only read look the key up as a read command does and never create it;
// otherwise the string is created or zero-grown to reach the farthest
// field any op writes (even one that OVERFLOW FAIL will refuse), as Redis
// does. changed reports whether an op wrote something that counts as a
// change (the caller announces "setbit"): a field given a new value, or any
// successful write when the string had to be created or grown.
func (db *DB) Bitfield(key []byte, ops []BitfieldOp) (replies []BitfieldReply, changed bool, err error) {
	var reach uint64 // one past the farthest byte a write touches
	for _, op := range ops {
		if op.Kind != BitfieldGet {
			reach = max(reach, (op.Offset+uint64(op.Bits)-1)>>3+1)
		}
	}
	replies = make([]BitfieldReply, len(ops))
	if reach == 0 {
		s, err := db.stringAt(key, true)
		if err != nil {
			return nil, false, err
		}
		var p []byte
		if s != nil {
			p = s.b
		}
		for i, op := range ops {
			replies[i].Value = fieldValue(p, op)
		}
		return replies, false, nil
	}
	s, err := db.stringAt(key, false)
	if err != nil {
		return nil, false, err
	}
	created, grown, oldLen := s == nil, false, 0
	if created {
		s = newZeroString(int(reach))
	} else {
		// Redis unshares the value first, which makes it raw.
		db.markRaw(key, s)
		if oldLen = len(s.b); uint64(oldLen) < reach {
			s.b = growZero(s.b, int(reach))
			grown = true
		}
	}
	lo, hi := len(s.b), 0 // bytes written
	changes := 0
	for i, op := range ops {
		if op.Kind == BitfieldGet {
			replies[i].Value = fieldValue(s.b, op)
			continue
		}
		old := fieldValue(s.b, op)
		val, ok := bitfieldResult(op, old)
		if !ok {
			replies[i].Failed = true
			continue
		}
		if op.Kind == BitfieldIncrBy {
			replies[i].Value = val
		} else {
			replies[i].Value = old
		}
		if val != old || created || grown {
			changes++
		}
		if val != old {
			setField(s.b, op.Offset, op.Bits, uint64(val))
			lo = min(lo, int(op.Offset>>3))
			hi = max(hi, int((op.Offset+uint64(op.Bits)-1)>>3)+1)
		}
	}
	switch {
	case changes == 0 && (created || grown):
		// Every write was refused, yet the string was created or grown:
		// Redis keeps it so without signalling the key as modified
		// (WATCH) or counting a change, and so does this.
		db.recordQuietly(key, s, created, oldLen)
	case created:
		db.Set(key, s, false)
	case grown:
		// The patch runs to the new end; zeros between the old end and
		// the first byte written are implied.
		db.ChangedBytes(key, s, min(lo, len(s.b)-1), len(s.b))
	case hi > 0:
		db.ChangedBytes(key, s, lo, hi)
	}
	if changes > 0 {
		// Redis counts every field changed; the write above counted one.
		db.e.stats.Dirty += int64(changes) - 1
	}
	return replies, changes > 0, nil
}

// recordQuietly records a string that was created (stored under key here)
// or grown from oldLen, without marking key modified.
func (db *DB) recordQuietly(key []byte, s *String, created bool, oldLen int) {
	if !created {
		db.recordBytes(key, s, oldLen, len(s.b))
		return
	}
	old, _ := db.slot(key)
	clock := db.e.freshClock(0)
	s.atime = clock
	db.keys.put(key, old, s, clock, 0)
	db.persistValue(key, s)
}

// fieldValue reads op's field from p (zeros past its end), sign-extended
// for a signed type.
func fieldValue(p []byte, op BitfieldOp) int64 {
	v := getField(p, op.Offset, op.Bits)
	if op.Signed && op.Bits < 64 && v>>(op.Bits-1)&1 == 1 {
		v |= math.MaxUint64 << op.Bits
	}
	return int64(v)
}

// bitfieldResult is the value SET or INCRBY stores given the field's
// current value, after the op's overflow mode; ok is false when OVERFLOW
// FAIL refuses the op. Unsigned fields take SET's value as the unsigned
// 64-bit number of its two's complement, so a negative value overflows.
func bitfieldResult(op BitfieldOp, old int64) (val int64, ok bool) {
	base, incr := old, op.Value
	if op.Kind == BitfieldSet {
		base, incr = op.Value, 0
	}
	if op.Signed {
		return signedResult(base, incr, op.Bits, op.Overflow)
	}
	return unsignedResult(uint64(base), incr, op.Bits, op.Overflow)
}

func signedResult(v, incr int64, bits uint, mode BitfieldOverflow) (int64, bool) {
	hiLimit := int64(math.MaxInt64 >> (64 - bits))
	loLimit := -hiLimit - 1
	// Room left to each limit, in wrapping arithmetic like Redis's: for
	// a SET of a value within hiLimit of the int64 minimum the room up
	// wraps negative, so Redis sees an overflow upwards there (SAT gives
	// the maximum) and so does this.
	up, down := int64(uint64(hiLimit)-uint64(v)), loLimit-v
	wide := bits == 64
	over := v > hiLimit || (!wide && incr > up) || (v >= 0 && incr > 0 && incr > up)
	under := !over && (v < loLimit || (!wide && incr < down) || (v < 0 && incr < 0 && incr < down))
	sum := v + incr
	if !over && !under {
		return sum, true
	}
	switch mode {
	case OverflowSat:
		if over {
			return hiLimit, true
		}
		return loLimit, true
	case OverflowFail:
		return 0, false
	}
	// Wrap: keep the low bits and sign-extend them.
	shift := 64 - bits
	return sum << shift >> shift, true
}

func unsignedResult(v uint64, incr int64, bits uint, mode BitfieldOverflow) (int64, bool) {
	limit := uint64(math.MaxUint64) >> (64 - bits)
	sum := v + uint64(incr)
	over := v > limit || (incr > 0 && uint64(incr) > limit-v)
	under := !over && incr < 0 && uint64(-incr) > v
	if !over && !under {
		return int64(sum), true
	}
	switch mode {
	case OverflowSat:
		if over {
			return int64(limit), true
		}
		return 0, true
	case OverflowFail:
		return 0, false
	}
	return int64(sum & limit), true
}

// getField returns the bits-wide big-endian field at bit offset off of p,
// reading zeros past its end. A field spans at most 9 bytes.
func getField(p []byte, off uint64, bits uint) uint64 {
	var w [9]byte
	if i := off >> 3; i < uint64(len(p)) {
		copy(w[:], p[i:])
	}
	shift := off & 7
	v := binary.BigEndian.Uint64(w[:])<<shift | uint64(w[8])>>(8-shift)
	return v >> (64 - bits)
}

// setField writes the low bits of v as the field at bit offset off of p,
// which reaches past the field's last byte.
func setField(p []byte, off uint64, bits uint, v uint64) {
	var w [9]byte
	i := off >> 3
	n := copy(w[:], p[i:])
	shift := off & 7
	mask := uint64(math.MaxUint64) << (64 - bits) // the field, left-aligned
	v <<= 64 - bits
	// The 72-bit window is hi (bytes 0-7) then lo (byte 8); the field
	// starts shift bits into it.
	hi := binary.BigEndian.Uint64(w[:])
	hi = hi&^(mask>>shift) | v>>shift
	binary.BigEndian.PutUint64(w[:], hi)
	if shift > 0 {
		lo := byte(mask << (64 - shift) >> 56)
		w[8] = w[8]&^lo | byte(v<<(64-shift)>>56)
	}
	copy(p[i:], w[:n])
}
