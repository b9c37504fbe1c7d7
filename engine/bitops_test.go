package engine

import (
	"math/rand/v2"
	"testing"
)

func bitAt(p []byte, i int64) int { return int(p[i>>3]>>(7-i&7)) & 1 }

// refBitBounds clamps a range like Redis and returns it in bits; ok is false
// when the range is empty.
func refBitBounds(n int64, r BitRange) (lo, hi int64, ok bool) {
	total := n
	if r.Bit {
		total *= 8
	}
	s, e := r.Start, r.End
	if s < 0 {
		s += total
	}
	if e < 0 {
		e += total
	}
	s, e = max(s, 0), max(e, 0)
	e = min(e, total-1)
	if s > e {
		return 0, 0, false
	}
	if r.Bit {
		return s, e, true
	}
	return s * 8, e*8 + 7, true
}

func refBitCount(p []byte, r *BitRange) int64 {
	lo, hi := int64(0), int64(len(p))*8-1
	if r != nil {
		if r.Start < 0 && r.End < 0 && r.Start > r.End {
			return 0
		}
		var ok bool
		if lo, hi, ok = refBitBounds(int64(len(p)), *r); !ok {
			return 0
		}
	}
	var n int64
	for i := lo; i <= hi; i++ {
		n += int64(bitAt(p, i))
	}
	return n
}

// refBitPos is BITPOS by definition: the first bit equal to bit in the
// range; when a clear bit is wanted and no end was given, the string counts
// as padded with zeros, so the answer is the first bit past its end.
func refBitPos(p []byte, bit int, r *BitRange, endGiven bool) int64 {
	lo, hi := int64(0), int64(len(p))*8-1
	if r != nil {
		rr := *r
		if !endGiven {
			rr.End = -1
		}
		var ok bool
		if lo, hi, ok = refBitBounds(int64(len(p)), rr); !ok {
			return -1
		}
	}
	if len(p) == 0 {
		return -1
	}
	for i := lo; i <= hi; i++ {
		if bitAt(p, i) == bit {
			return i
		}
	}
	if bit == 0 && !endGiven {
		return hi + 1
	}
	return -1
}

func TestGetBit(t *testing.T) {
	p := []byte{0x80, 0x01}
	for off, want := range map[uint64]int{0: 1, 1: 0, 7: 0, 15: 1, 16: 0, 1 << 40: 0} {
		if got := GetBit(p, off); got != want {
			t.Errorf("GetBit(%d) = %d, want %d", off, got, want)
		}
	}
}

func TestBitCountExamples(t *testing.T) {
	p := []byte("foobar")
	cases := []struct {
		r    *BitRange
		want int64
	}{
		{nil, 26},
		{&BitRange{0, 0, false}, 4},
		{&BitRange{1, 1, false}, 6},
		{&BitRange{5, 30, true}, 17},
		{&BitRange{-2, -1, false}, 7},
		{&BitRange{-1, -2, false}, 0},
		{&BitRange{3, 1, false}, 0},
		{&BitRange{47, 1000, true}, 0},
		{&BitRange{-1000, 1000, true}, 26},
		{&BitRange{-9223372036854775808, 9223372036854775807, true}, 26},
	}
	for _, c := range cases {
		if got := BitCount(p, c.r); got != c.want {
			t.Errorf("BitCount(foobar, %+v) = %d, want %d", c.r, got, c.want)
		}
	}
	if got := BitCount(nil, nil); got != 0 {
		t.Errorf("BitCount of an empty string = %d", got)
	}
}

func TestBitPosExamples(t *testing.T) {
	p := []byte{0xff, 0xf0, 0x00}
	cases := []struct {
		bit      int
		r        *BitRange
		endGiven bool
		want     int64
	}{
		{0, nil, false, 12},
		{1, nil, false, 0},
		{0, &BitRange{Start: 2}, false, 16},
		{1, &BitRange{Start: 2}, false, -1},
		{1, &BitRange{Start: 12, Bit: true}, false, -1},
		{0, &BitRange{Start: 0, End: 11, Bit: true}, true, -1},
		{0, &BitRange{Start: 0, End: 12, Bit: true}, true, 12},
		{1, &BitRange{Start: 9, End: 11, Bit: true}, true, 9},
		{0, &BitRange{Start: 100}, false, -1},
		{1, &BitRange{Start: 5, End: 3, Bit: true}, true, -1},
	}
	for _, c := range cases {
		if got := BitPos(p, c.bit, c.r, c.endGiven); got != c.want {
			t.Errorf("BitPos(%d, %+v, %v) = %d, want %d", c.bit, c.r, c.endGiven, got, c.want)
		}
	}
	ff := []byte{0xff, 0xff}
	if got := BitPos(ff, 0, nil, false); got != 16 {
		t.Errorf("BitPos(ffff, 0) = %d, want 16 (past the end)", got)
	}
	if got := BitPos(ff, 0, &BitRange{Start: 0, End: -1}, true); got != -1 {
		t.Errorf("BitPos(ffff, 0, 0, -1) = %d, want -1", got)
	}
	if got := BitPos(nil, 0, nil, false); got != -1 {
		t.Errorf("BitPos of an empty string = %d, want -1", got)
	}
}

// TestBitOpsRandom compares BITCOUNT and BITPOS with their definitions on
// random strings and ranges, in byte and bit units.
func TestBitOpsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	patterns := []func() byte{
		func() byte { return byte(rng.IntN(256)) },
		func() byte { return 0 },
		func() byte { return 0xff },
		func() byte { return []byte{0, 0xff, 0x80, 0x01}[rng.IntN(4)] },
	}
	for i := 0; i < 20000; i++ {
		n := rng.IntN(24)
		gen := patterns[rng.IntN(len(patterns))]
		p := make([]byte, n)
		for j := range p {
			p[j] = gen()
		}
		span := int64(n)*8 + 10
		r := &BitRange{Start: rng.Int64N(2*span) - span, End: rng.Int64N(2*span) - span, Bit: rng.IntN(2) == 0}
		if rng.IntN(10) == 0 {
			r = nil
		}
		if got, want := BitCount(p, r), refBitCount(p, r); got != want {
			t.Fatalf("BitCount(%x, %+v) = %d, want %d", p, r, got, want)
		}
		bit, endGiven := rng.IntN(2), rng.IntN(2) == 0
		if r == nil {
			endGiven = false
		}
		if got, want := BitPos(p, bit, r, endGiven), refBitPos(p, bit, r, endGiven); got != want {
			t.Fatalf("BitPos(%x, %d, %+v, end given %v) = %d, want %d", p, bit, r, endGiven, got, want)
		}
	}
}

func TestSetBit(t *testing.T) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	old, changed, err := db.SetBit([]byte("b"), 9, 1)
	if old != 0 || !changed || err != nil {
		t.Fatalf("SetBit on a new key = %d, %v, %v", old, changed, err)
	}
	if v, _, _ := db.Get([]byte("b")); string(v) != "\x00\x40" {
		t.Fatalf("value %q", v)
	}
	if old, changed, _ = db.SetBit([]byte("b"), 9, 1); old != 1 || changed {
		t.Fatalf("setting a set bit again: %d, %v", old, changed)
	}
	if old, changed, _ = db.SetBit([]byte("b"), 9, 0); old != 1 || !changed {
		t.Fatalf("clearing: %d, %v", old, changed)
	}
	if old, changed, _ = db.SetBit([]byte("b"), 100, 0); old != 0 || !changed {
		t.Fatalf("growing with a zero bit: %d, %v", old, changed)
	}
	if v, _, _ := db.Get([]byte("b")); len(v) != 13 {
		t.Fatalf("length after growing to bit 100: %d", len(v))
	}
	// An unchanged bit still leaves the value raw, as Redis's unsharing does.
	db.SetString([]byte("e"), []byte("12345"), SetOptions{})
	if _, changed, _ = db.SetBit([]byte("e"), 2, 1); changed {
		t.Fatal("bit 2 of '1' was not set")
	}
	if enc := db.Peek([]byte("e")).Encoding(); enc != "raw" {
		t.Fatalf("encoding after SETBIT = %s, want raw", enc)
	}
}
