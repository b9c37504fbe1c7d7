package engine

import (
	"slices"
	"strconv"
	"strings"
)

// The sparse encoding is a run-length code of the registers, three opcodes:
//
//	ZERO  00xxxxxx           1 to 64 registers at 0
//	XZERO 01xxxxxx yyyyyyyy  1 to 16384 registers at 0 (14-bit length)
//	VAL   1vvvvvxx           1 to 4 registers at value 1 to 32
//
// A value above 32, or a sketch growing past hll-sparse-max-bytes, turns it
// dense. Updates rewrite the opcodes in place exactly as Redis does (split,
// then merge equal neighbours), so the same additions give the same bytes.
const (
	sparseXZeroBit    = 0x40
	sparseValBit      = 0x80
	sparseValMaxValue = 32
	sparseValMaxLen   = 4
	sparseZeroMaxLen  = 64
	sparseXZeroMaxLen = 16384
	// newSparseCap leaves room for the first additions.
	newSparseCap = 64
)

func sparseIsZero(op byte) bool  { return op&0xc0 == 0 }
func sparseIsXZero(op byte) bool { return op&0xc0 == sparseXZeroBit }
func sparseIsVal(op byte) bool   { return op&sparseValBit != 0 }
func sparseZeroLen(op byte) int  { return int(op&0x3f) + 1 }
func sparseValValue(op byte) int { return int(op>>2&0x1f) + 1 }
func sparseValLen(op byte) int   { return int(op&3) + 1 }

// sparseXZeroLen reads the XZERO at p. An XZERO cut short by the end of
// the value reads its second byte as 0, as Redis reads the terminator it
// keeps after every string.
func sparseXZeroLen(b []byte, p int) int {
	var lo byte
	if p+1 < len(b) {
		lo = b[p+1]
	}
	return (int(b[p]&0x3f)<<8 | int(lo)) + 1
}

func sparseVal(val, n int) byte { return byte((val-1)<<2|(n-1)) | sparseValBit }

// putSparseZeros writes the opcode for a run of n zero registers and
// returns its length.
func putSparseZeros(dst []byte, n int) int {
	if n > sparseZeroMaxLen {
		dst[0] = byte((n-1)>>8) | sparseXZeroBit
		dst[1] = byte(n - 1)
		return 2
	}
	dst[0] = byte(n - 1)
	return 1
}

// newSparseHLL returns the sketch PFADD creates: sparse, one XZERO covering
// every register, cached cardinality 0.
func newSparseHLL() []byte {
	b := make([]byte, hllHeaderLen, newSparseCap)
	copy(b, "HYLL")
	b[4] = hllEncSparse
	var op [2]byte
	n := putSparseZeros(op[:], hllRegisters)
	return append(b, op[:n]...)
}

// sparseHisto adds the register values of sparse opcodes to h and reports
// whether they cover exactly the 16384 registers.
func sparseHisto(ops []byte, h *hllHisto) bool {
	idx := 0
	for p := 0; p < len(ops); {
		op := ops[p]
		switch {
		case sparseIsZero(op):
			n := sparseZeroLen(op)
			idx += n
			h[0] += n
			p++
		case sparseIsXZero(op):
			n := sparseXZeroLen(ops, p)
			idx += n
			h[0] += n
			p += 2
		default:
			n := sparseValLen(op)
			idx += n
			h[sparseValValue(op)] += n
			p++
		}
	}
	return idx == hllRegisters
}

// sparseWalk calls fn for every VAL run of sparse opcodes and reports
// whether they cover exactly the 16384 registers. It stops, without calling
// fn, at a run that would reach past the last register: the value is
// corrupt, whatever follows (Redis 7.0.15 as patched for CVE-2025-32023).
func sparseWalk(ops []byte, fn func(first, n int, val uint8)) bool {
	idx := 0
	for p := 0; p < len(ops); {
		op := ops[p]
		switch {
		case sparseIsZero(op):
			idx += sparseZeroLen(op)
			p++
		case sparseIsXZero(op):
			idx += sparseXZeroLen(ops, p)
			p += 2
		default:
			n := sparseValLen(op)
			if idx+n > hllRegisters {
				return false
			}
			fn(idx, n, uint8(sparseValValue(op)))
			idx += n
			p++
		}
	}
	return idx == hllRegisters
}

// sparseMergeMax raises each unpacked register to the sparse one; false
// when the opcodes are corrupt.
func sparseMergeMax(ops []byte, max *hllRegs) bool {
	return sparseWalk(ops, func(first, n int, val uint8) {
		for i := first; i < first+n; i++ {
			if val > max[i] {
				max[i] = val
			}
		}
	})
}

// sparseToDense returns the dense form of a sparse sketch: same header
// (cache included), encoding dense. false when the opcodes are corrupt.
func sparseToDense(b []byte) ([]byte, bool) {
	d := make([]byte, hllDenseLen)
	copy(d, b[:hllHeaderLen])
	d[4] = hllEncDense
	regs := d[hllHeaderLen:]
	ok := sparseWalk(b[hllHeaderLen:], func(first, n int, val uint8) {
		for i := first; i < first+n; i++ {
			denseSet(regs, i, val)
		}
	})
	if !ok {
		return nil, false
	}
	return d, true
}

// sparsePromote turns a sparse sketch dense and raises register index to
// count, which the caller knows to be an increase.
func sparsePromote(b []byte, index int, count uint8) ([]byte, int) {
	d, ok := sparseToDense(b)
	if !ok {
		return b, -1
	}
	denseRaise(d[hllHeaderLen:], index, count)
	return d, 1
}

// sparseSet raises register index to count in a sparse sketch. It returns
// the sketch (reallocated when it grew, dense when promoted) and 1 when the
// register changed, 0 when it already held count or more, -1 when the
// opcodes are corrupt.
func sparseSet(b []byte, index int, count uint8, sparseMax int64) ([]byte, int) {
	if count > sparseValMaxValue {
		return sparsePromote(b, index, count)
	}
	// Find the opcode covering the register, and the one before it.
	end := len(b)
	p, prev := hllHeaderLen, -1
	first, span, oplen := 0, 0, 1
	for p < end {
		op := b[p]
		oplen = 1
		switch {
		case sparseIsZero(op):
			span = sparseZeroLen(op)
		case sparseIsVal(op):
			span = sparseValLen(op)
		default:
			span = sparseXZeroLen(b, p)
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return b, -1
	}
	op := b[p]
	isVal := sparseIsVal(op)
	if isVal {
		cur := sparseValValue(op)
		if cur >= int(count) {
			return b, 0
		}
		if span == 1 {
			b[p] = sparseVal(int(count), 1)
			return sparseMergeRuns(b, prev), 1
		}
	} else if sparseIsZero(op) && span == 1 {
		b[p] = sparseVal(int(count), 1)
		return sparseMergeRuns(b, prev), 1
	}

	// Split the opcode into up to three: what precedes the register, the
	// register, what follows.
	var seq [5]byte
	n := 0
	last := first + span - 1
	if isVal {
		cur := sparseValValue(op)
		if index != first {
			seq[n] = sparseVal(cur, index-first)
			n++
		}
		seq[n] = sparseVal(int(count), 1)
		n++
		if index != last {
			seq[n] = sparseVal(cur, last-index)
			n++
		}
	} else {
		if index != first {
			n += putSparseZeros(seq[n:], index-first)
		}
		seq[n] = sparseVal(int(count), 1)
		n++
		if index != last {
			n += putSparseZeros(seq[n:], last-index)
		}
	}
	delta := n - oplen
	if delta > 0 && int64(end+delta) > sparseMax {
		return sparsePromote(b, index, count)
	}
	newLen := end + delta
	if newLen > end {
		b = slices.Grow(b, delta)[:newLen]
	}
	if next := p + oplen; delta != 0 && next < end {
		copy(b[p+n:], b[next:end])
	}
	// Only the bytes below the new length are kept: a cut-short XZERO at
	// the end loses the tail of its replacement, as it does in Redis.
	copy(b[p:newLen], seq[:n])
	return sparseMergeRuns(b[:newLen], prev), 1
}

// sparseMergeRuns merges adjacent VAL opcodes of equal value (while the run
// fits one opcode), scanning up to five opcodes from prev (the opcode before
// the one just changed, -1 for none), then marks the cache stale.
func sparseMergeRuns(b []byte, prev int) []byte {
	p := prev
	if p < 0 {
		p = hllHeaderLen
	}
	for scan := 5; p < len(b) && scan > 0; scan-- {
		op := b[p]
		if sparseIsXZero(op) {
			p += 2
			continue
		}
		if sparseIsZero(op) {
			p++
			continue
		}
		if p+1 < len(b) && sparseIsVal(b[p+1]) {
			v := sparseValValue(op)
			if n := sparseValLen(op) + sparseValLen(b[p+1]); v == sparseValValue(b[p+1]) && n <= sparseValMaxLen {
				b[p+1] = sparseVal(v, n)
				b = b[:p+copy(b[p:], b[p+1:])]
				continue
			}
		}
		p++
	}
	hllInvalidate(b)
	return b
}

// sparseDecode renders the opcodes as PFDEBUG DECODE does: "z:len" for
// ZERO, "Z:len" for XZERO, "v:value,len" for VAL, space-separated.
func sparseDecode(ops []byte) string {
	var sb strings.Builder
	for p := 0; p < len(ops); {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		op := ops[p]
		switch {
		case sparseIsZero(op):
			sb.WriteString("z:")
			sb.WriteString(strconv.Itoa(sparseZeroLen(op)))
			p++
		case sparseIsXZero(op):
			sb.WriteString("Z:")
			sb.WriteString(strconv.Itoa(sparseXZeroLen(ops, p)))
			p += 2
		default:
			sb.WriteString("v:")
			sb.WriteString(strconv.Itoa(sparseValValue(op)))
			sb.WriteByte(',')
			sb.WriteString(strconv.Itoa(sparseValLen(op)))
			p++
		}
	}
	return sb.String()
}
