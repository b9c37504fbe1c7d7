package engine

// The HyperLogLog commands' engine side. A sketch is a String: the
// commands change its bytes in place and persist the whole value, as any
// string write does, except where a few bytes change in a 12 KB dense
// sketch (PFADD) or in the header (PFCOUNT's cached count): those bytes are
// recorded as patches of the value.

import "slices"

// hllString looks key up as a HyperLogLog: nil when absent, ErrWrongType
// for another type, ErrNotHLL for a string that is not a sketch.
func (db *DB) hllString(key []byte, read bool) (*String, error) {
	s, err := db.stringAt(key, read)
	if s == nil || err != nil {
		return nil, err
	}
	if !isHLL(s.b) {
		return nil, ErrNotHLL
	}
	return s, nil
}

// newHLLString wraps sketch bytes as a raw string value, as Redis creates
// them.
func newHLLString(b []byte) *String { return &String{enc: encRaw, b: b} }

// persistQuiet persists a value changed as a side effect (an encoding
// change) without announcing a modification: Redis counts a change but
// does not invalidate WATCH there.
func (db *DB) persistQuiet(key []byte, obj Object) {
	db.persistChanged(key, obj)
	db.e.stats.Dirty++
}

// PFAdd is PFADD: it reports whether a register changed or the key was
// created (what makes PFADD reply 1).
func (db *DB) PFAdd(key []byte, elems [][]byte) (bool, error) {
	s, err := db.hllString(key, false)
	if err != nil {
		return false, err
	}
	var b []byte
	updated := 0
	if s == nil {
		b = newSparseHLL()
		updated = 1
	} else {
		b = s.b
		db.markRaw(key, s) // Redis unshares the value into a raw string
	}
	sparseMax := db.e.limits.HLLSparseMaxBytes
	// A dense sketch stays dense: the registers it raises are recorded as
	// patches of their bytes (up to maxHLLPatches, else the whole value).
	dense := s != nil && b[4] == hllEncDense
	raised := db.e.hllRaised[:0]
	for _, el := range elems {
		if dense {
			index, count := hllPatLen(el)
			if denseRaise(b[hllHeaderLen:], index, count) > 0 {
				updated++
				if len(raised) <= maxHLLPatches {
					raised = append(raised, index)
				}
			}
			continue
		}
		var r int
		if b, r = hllAdd(b, el, sparseMax); r < 0 {
			// Only a sparse sketch can be corrupt, and every sparse update
			// already marked the cache stale: keep what the elements
			// before this one changed.
			if s != nil {
				s.b = b
				if updated > 0 {
					db.persistQuiet(key, s)
				} else {
					db.storeBack(key, s)
				}
			}
			return false, ErrHLLCorrupt
		}
		updated += r
	}
	db.e.hllRaised = raised
	if updated == 0 {
		return false, nil
	}
	wasStale := !hllCacheValid(b)
	hllInvalidate(b)
	switch {
	case s == nil:
		db.Set(key, newHLLString(b), false)
	case dense && len(raised) <= maxHLLPatches:
		db.patchDense(key, s, raised, wasStale)
	default:
		s.b = b
		db.Changed(key, s)
	}
	db.e.stats.Dirty += int64(updated) - 1
	return true, nil
}

// PFCount is PFCOUNT. One key answers from the cached cardinality, or
// computes it and writes it back into the value; several keys are merged
// into scratch registers and nothing is written.
func (db *DB) PFCount(keys [][]byte) (int64, error) {
	if len(keys) == 1 {
		return db.pfCountOne(keys[0])
	}
	var regs hllRegs
	for _, k := range keys {
		s, err := db.hllString(k, true)
		if err != nil {
			return 0, err
		}
		if s != nil && !hllMerge(&regs, s.b) {
			return 0, ErrHLLCorrupt
		}
	}
	var h hllHisto
	rawHisto(&regs, &h)
	return int64(hllEstimate(&h)), nil
}

func (db *DB) pfCountOne(key []byte) (int64, error) {
	s, err := db.hllString(key, true)
	if s == nil || err != nil {
		return 0, err
	}
	db.markRaw(key, s)
	if hllCacheValid(s.b) {
		return int64(hllCached(s.b)), nil
	}
	card, ok := hllCount(s.b)
	if !ok {
		return 0, ErrHLLCorrupt
	}
	hllSetCache(s.b, card)
	db.storeBack(key, s)
	db.e.sink.PatchValue(db.id, key, 8, s.b[8:hllHeaderLen])
	db.modified(key)
	return int64(card), nil
}

// maxHLLPatches bounds the patches one PFADD records; past it the whole
// value is cheaper.
const maxHLLPatches = 64

// patchDense records the registers a PFADD raised in a dense sketch as
// patches of the bytes holding them (registers whose bytes touch share one),
// plus the header byte that marks the cached count stale when it was not.
func (db *DB) patchDense(key []byte, s *String, regs []int, wasStale bool) {
	if !wasStale {
		db.e.sink.PatchValue(db.id, key, 15, s.b[15:16])
	}
	slices.Sort(regs)
	for i := 0; i < len(regs); {
		lo, hi := denseRegBytes(regs[i])
		i++
		for ; i < len(regs); i++ {
			nlo, nhi := denseRegBytes(regs[i])
			if nlo > hi {
				break
			}
			hi = max(hi, nhi)
		}
		db.e.sink.PatchValue(db.id, key, hllHeaderLen+lo, s.b[hllHeaderLen+lo:hllHeaderLen+hi])
	}
	db.modified(key)
}

// PFMerge is PFMERGE: the union of keys[1:] and the destination keys[0]
// itself is stored in the destination, dense when any input was dense.
func (db *DB) PFMerge(keys [][]byte) error {
	var regs hllRegs
	dense := false
	for _, k := range keys {
		s, err := db.hllString(k, true)
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		if s.b[4] == hllEncDense {
			dense = true
		}
		if !hllMerge(&regs, s.b) {
			return ErrHLLCorrupt
		}
	}
	dest := keys[0]
	s, err := db.hllString(dest, false)
	if err != nil {
		return err
	}
	var b []byte
	if s == nil {
		b = newSparseHLL()
	} else {
		b = s.b
		s.enc = encRaw
	}
	if dense && b[4] == hllEncSparse {
		d, ok := sparseToDense(b)
		if !ok {
			return ErrHLLCorrupt
		}
		b = d
	}
	if b[4] == hllEncSparse {
		// Register by register, as Redis does, so the opcodes come out the
		// same; once promoted, the rest is a plain copy.
		sparseMax := db.e.limits.HLLSparseMaxBytes
		for j, v := range regs {
			if v == 0 {
				continue
			}
			b, _ = sparseSet(b, j, v, sparseMax)
			if b[4] == hllEncDense {
				break
			}
		}
	}
	if b[4] == hllEncDense {
		// The destination was one of the inputs, so its registers are
		// exactly the merged ones.
		densePack(b[hllHeaderLen:], &regs)
	}
	hllInvalidate(b)
	if s == nil {
		db.Set(dest, newHLLString(b), false)
	} else {
		s.b = b
		db.Changed(dest, s)
	}
	return nil
}

// PFDebugKey looks key up for PFDEBUG (a write lookup): nil when absent.
func (db *DB) PFDebugKey(key []byte) (*String, error) {
	s, err := db.hllString(key, false)
	if s != nil {
		db.markRaw(key, s)
	}
	return s, err
}

// PFDebugToDense converts the sketch s (from PFDebugKey) to the dense
// encoding; false when it already was.
func (db *DB) PFDebugToDense(key []byte, s *String) (bool, error) {
	if s.b[4] == hllEncDense {
		return false, nil
	}
	d, ok := sparseToDense(s.b)
	if !ok {
		return false, ErrHLLCorrupt
	}
	s.b = d
	db.persistQuiet(key, s)
	return true, nil
}

// PFDebugRegisters converts s to dense (PFDEBUG GETREG does) and returns
// its registers.
func (db *DB) PFDebugRegisters(key []byte, s *String) ([]uint8, error) {
	if _, err := db.PFDebugToDense(key, s); err != nil {
		return nil, err
	}
	out := make([]uint8, hllRegisters)
	regs := s.b[hllHeaderLen:]
	for i := range out {
		out[i] = denseGet(regs, i)
	}
	return out, nil
}

// HLLEncoding is PFDEBUG ENCODING: "dense" or "sparse".
func HLLEncoding(s *String) string {
	if s.b[4] == hllEncDense {
		return "dense"
	}
	return "sparse"
}

// HLLDecode is PFDEBUG DECODE: the sparse opcodes as text; false when the
// sketch is dense.
func HLLDecode(s *String) (string, bool) {
	if s.b[4] != hllEncSparse {
		return "", false
	}
	return sparseDecode(s.b[hllHeaderLen:]), true
}
