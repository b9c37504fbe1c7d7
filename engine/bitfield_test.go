package engine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// refGetField reads a field bit by bit, the definition.
func refGetField(p []byte, off uint64, bits uint) uint64 {
	var v uint64
	for i := uint64(0); i < uint64(bits); i++ {
		v = v<<1 | uint64(GetBit(p, off+i))
	}
	return v
}

func refSetField(p []byte, off uint64, bits uint, v uint64) {
	for i := uint64(0); i < uint64(bits); i++ {
		bit := byte(v>>(uint64(bits)-1-i)) & 1
		j, shift := (off+i)>>3, 7-(off+i)&7
		p[j] = p[j]&^(1<<shift) | bit<<shift
	}
}

// TestBitfieldFieldsMatchBitByBit: the 9-byte window reads and writes the
// same bits as a loop over single bits, for every width at every alignment,
// near the end of the string too, and leaves the bits around the field
// alone.
func TestBitfieldFieldsMatchBitByBit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		p := make([]byte, 1+r.IntN(20))
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		bits := 1 + uint(r.IntN(64))
		off := uint64(r.IntN(len(p)*8 + 16))
		if got, want := getField(p, off, bits), refGetField(p, off, bits); got != want {
			t.Fatalf("getField(%x, %d, %d) = %#x, want %#x", p, off, bits, got, want)
		}
		if off+uint64(bits) > uint64(len(p))*8 {
			continue // writes only go where the string was grown to
		}
		v := r.Uint64()
		got, want := bytes.Clone(p), bytes.Clone(p)
		setField(got, off, bits, v)
		refSetField(want, off, bits, v)
		if !bytes.Equal(got, want) {
			t.Fatalf("setField(%x, %d, %d, %#x) = %x, want %x", p, off, bits, v, got, want)
		}
	}
}

// refBitOp is BITOP by definition: byte by byte over the longest length,
// missing bytes counting as zeros.
func refBitOp(op BitOpKind, srcs [][]byte) []byte {
	n := 0
	for _, s := range srcs {
		n = max(n, len(s))
	}
	at := func(s []byte, i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	out := make([]byte, n)
	for i := range out {
		v := at(srcs[0], i)
		for _, s := range srcs[1:] {
			switch op {
			case BitAnd:
				v &= at(s, i)
			case BitOr:
				v |= at(s, i)
			case BitXor:
				v ^= at(s, i)
			}
		}
		if op == BitNot {
			v = ^v
		}
		out[i] = v
	}
	return out
}

func TestBitOpMatchesBytewise(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 3000; n++ {
		op := BitOpKind(r.IntN(4))
		k := 1 + r.IntN(18)
		if op == BitNot {
			k = 1
		}
		srcs := make([][]byte, k)
		for i := range srcs {
			size := r.IntN(80)
			if r.IntN(10) == 0 {
				size = r.IntN(3000)
			}
			srcs[i] = make([]byte, size)
			for j := range srcs[i] {
				// Mostly set bits, so AND keeps something to compare.
				srcs[i][j] = byte(r.Uint32()) | byte(r.Uint32())
			}
		}
		want := refBitOp(op, srcs)
		if len(want) == 0 {
			continue
		}
		got := make([]byte, len(want))
		bitOpInto(op, got, srcs)
		if !bytes.Equal(got, want) {
			t.Fatalf("op %d over %d sources: got %x, want %x", op, k, got, want)
		}
	}
}

// TestBitfieldRecords: BITFIELD on a long string records patches of the
// bytes it wrote (growth included), nothing when no field changed, and the
// whole value for a new key; BITOP records its destination whole or its
// deletion. Either way the records rebuild every value exactly.
func TestBitfieldRecords(t *testing.T) {
	e, _, log := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	sink := newHSRecordSink()
	e.SetSink(sink)
	persisted := func(key string) {
		t.Helper()
		if got := sink.keys[hsSinkKey{0, key}].payload; !bytes.Equal(got, rawValue(t, db, key)) {
			t.Fatalf("%s: the records give %x, the value is %x", key, got, rawValue(t, db, key))
		}
	}
	step := func(what, want, wantEvents string, change func()) {
		t.Helper()
		log.take()
		change()
		e.FlushChanges()
		if got := sink.take(); got != want {
			t.Fatalf("%s wrote %s, want %s", what, got, want)
		}
		if got := log.take(); got != wantEvents {
			t.Fatalf("%s: engine events %q, want %q", what, got, wantEvents)
		}
	}
	set := func(off uint64, bits uint, v int64) BitfieldOp {
		return BitfieldOp{Kind: BitfieldSet, Bits: bits, Offset: off, Value: v}
	}
	incr := func(off uint64, bits uint, v int64, mode BitfieldOverflow) BitfieldOp {
		return BitfieldOp{Kind: BitfieldIncrBy, Bits: bits, Offset: off, Value: v, Overflow: mode, Signed: true}
	}
	run := func(key string, ops ...BitfieldOp) []BitfieldReply {
		t.Helper()
		replies, _, err := db.Bitfield(b(key), ops)
		if err != nil {
			t.Fatal(err)
		}
		return replies
	}
	step("BITFIELD creating a bitmap", "[value=1]", "new bf", func() { run("bf", set(8*1000, 8, 7)) })
	persisted("bf")
	step("SETs inside it", "[patch=1]", "", func() { run("bf", set(8*10+3, 16, 1000), set(8*500, 64, -1)) })
	step("SET of the same value", "[]", "", func() { run("bf", set(8*1000, 8, 7)) })
	step("GETs", "[]", "", func() {
		run("bf", BitfieldOp{Kind: BitfieldGet, Bits: 8, Offset: 0}, BitfieldOp{Kind: BitfieldGet, Bits: 64, Offset: 1 << 20})
	})
	step("a refused INCRBY", "[]", "", func() {
		if r := run("bf", incr(8*500, 64, -1<<63, OverflowFail)); !r[0].Failed {
			t.Fatalf("INCRBY -1 by the int64 minimum under FAIL: %+v", r)
		}
	})
	step("growth", "[patch=1]", "", func() { run("bf", set(8*3000+4, 8, 1)) })
	persisted("bf")
	step("growth by a refused write", "[patch=1]", "", func() { run("bf", incr(8*4000, 8, 1000, OverflowFail)) })
	persisted("bf")
	dirty := e.stats.Dirty
	step("a refused write creating its key", "[value=1]", "new nf", func() { run("nf", incr(8, 8, 1000, OverflowFail)) })
	persisted("nf")
	if e.stats.Dirty != dirty {
		t.Fatal("refused writes counted as changes")
	}
	step("GET-only on a missing key", "[]", "keymiss nosuch", func() {
		run("nosuch", BitfieldOp{Kind: BitfieldGet, Bits: 8})
	})
	if db.Exists(b("nosuch")) {
		t.Fatal("a GET-only BITFIELD created its key")
	}
	step("a short string", "[value=1]", "new short", func() { run("short", set(0, 8, 1), set(30, 5, 3)) })
	step("a short string again", "[value=1]", "", func() { run("short", set(0, 8, 2)) })
	persisted("short")

	step("BITOP", "[value=1]", "keymiss nosuch,new dst", func() { db.BitOp(BitOr, b("dst"), [][]byte{b("bf"), b("nosuch")}) })
	persisted("dst")
	step("BITOP emptying dst", "[delkey=1]", "keymiss nosuch,keymiss nosuch2", func() {
		if n, deleted, _ := db.BitOp(BitAnd, b("dst"), [][]byte{b("nosuch"), b("nosuch2")}); n != 0 || !deleted {
			t.Fatalf("BITOP of missing keys: %d, %v", n, deleted)
		}
	})
	if db.Exists(b("dst")) {
		t.Fatal("an empty BITOP result left dst")
	}
}

// TestBitfieldOverflowEdges pins the overflow arithmetic at the limits of
// a few widths, including Redis's quirk: a SET of a value within the
// field's maximum of the int64 minimum counts as an overflow upwards, so
// SAT stores the maximum.
func TestBitfieldOverflowEdges(t *testing.T) {
	const minI64, maxI64 = -1 << 63, 1<<63 - 1
	cases := []struct {
		op   BitfieldOp
		old  int64
		want string // WRAP, SAT, FAIL
	}{
		{BitfieldOp{Kind: BitfieldIncrBy, Signed: true, Bits: 8, Value: 1}, 127, "-128 127 fail"},
		{BitfieldOp{Kind: BitfieldIncrBy, Signed: true, Bits: 8, Value: -1}, -128, "127 -128 fail"},
		{BitfieldOp{Kind: BitfieldSet, Signed: true, Bits: 8, Value: minI64}, 0, "0 127 fail"},
		{BitfieldOp{Kind: BitfieldSet, Signed: true, Bits: 8, Value: minI64 + 127}, 0, "127 127 fail"},
		{BitfieldOp{Kind: BitfieldSet, Signed: true, Bits: 8, Value: minI64 + 128}, 0, "-128 -128 fail"},
		{BitfieldOp{Kind: BitfieldSet, Signed: true, Bits: 8, Value: -129}, 0, "127 -128 fail"},
		{BitfieldOp{Kind: BitfieldSet, Signed: true, Bits: 8, Value: -128}, 0, "-128 -128 -128"},
		{BitfieldOp{Kind: BitfieldIncrBy, Signed: true, Bits: 64, Value: 1}, maxI64, "-9223372036854775808 9223372036854775807 fail"},
		{BitfieldOp{Kind: BitfieldIncrBy, Signed: true, Bits: 64, Value: minI64}, -1, "9223372036854775807 -9223372036854775808 fail"},
		{BitfieldOp{Kind: BitfieldIncrBy, Signed: true, Bits: 64, Value: minI64}, 0, "-9223372036854775808 -9223372036854775808 -9223372036854775808"},
		{BitfieldOp{Kind: BitfieldIncrBy, Signed: true, Bits: 1, Value: 1}, -1, "0 0 0"},
		{BitfieldOp{Kind: BitfieldIncrBy, Signed: true, Bits: 1, Value: 1}, 0, "-1 0 fail"},
		{BitfieldOp{Kind: BitfieldSet, Bits: 8, Value: -1}, 0, "255 255 fail"},
		{BitfieldOp{Kind: BitfieldIncrBy, Bits: 8, Value: -1}, 0, "255 0 fail"},
		{BitfieldOp{Kind: BitfieldIncrBy, Bits: 63, Value: maxI64}, 1, "0 9223372036854775807 fail"},
		{BitfieldOp{Kind: BitfieldIncrBy, Bits: 63, Value: minI64}, 5, "5 0 fail"},
		{BitfieldOp{Kind: BitfieldIncrBy, Bits: 1, Value: 1}, 1, "0 1 fail"},
	}
	for _, tc := range cases {
		var parts []string
		for _, mode := range []BitfieldOverflow{OverflowWrap, OverflowSat, OverflowFail} {
			tc.op.Overflow = mode
			if v, ok := bitfieldResult(tc.op, tc.old); ok {
				parts = append(parts, fmt.Sprint(v))
			} else {
				parts = append(parts, "fail")
			}
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("%+v from %d: %s, want %s", tc.op, tc.old, got, tc.want)
		}
	}
}
