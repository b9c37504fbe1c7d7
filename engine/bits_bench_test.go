package engine

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// bitsBenchEngine holds n random strings of size bytes, "src0".."srcN".
func bitsBenchEngine(b *testing.B, n, size int) (*Engine, [][]byte) {
	e := New(Options{})
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, n)
	e.Lock()
	for i := range keys {
		keys[i] = []byte("src" + strconv.Itoa(i))
		v := make([]byte, size)
		for j := range v {
			v[j] = byte(r.Uint32())
		}
		e.DB(0).SetString(keys[i], v, SetOptions{})
	}
	e.Unlock()
	return e, keys
}

// BenchmarkBitOp is BITOP over 1 MB strings; SetBytes makes -bench report
// the bytes of source folded per second.
func BenchmarkBitOp(b *testing.B) {
	for _, bc := range []struct {
		name string
		op   BitOpKind
		srcs int
	}{{"AND2", BitAnd, 2}, {"OR4", BitOr, 4}, {"XOR2", BitXor, 2}, {"NOT", BitNot, 1}} {
		b.Run(bc.name, func(b *testing.B) {
			const size = 1 << 20
			e, keys := bitsBenchEngine(b, bc.srcs, size)
			e.Lock()
			defer e.Unlock()
			db := e.DB(0)
			b.SetBytes(int64(size * bc.srcs))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := db.BitOp(bc.op, []byte("dst"), keys); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBitfield is one BITFIELD command of a few ops at random offsets
// of a 1 MB string: GETs only, and INCRBYs that change their fields.
func BenchmarkBitfield(b *testing.B) {
	for _, bc := range []struct {
		name string
		kind BitfieldOpKind
	}{{"GET4", BitfieldGet}, {"INCRBY4", BitfieldIncrBy}} {
		b.Run(bc.name, func(b *testing.B) {
			const size = 1 << 20
			e, keys := bitsBenchEngine(b, 1, size)
			e.Lock()
			defer e.Unlock()
			db := e.DB(0)
			r := rand.New(rand.NewPCG(3, 4))
			ops := make([]BitfieldOp, 4)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range ops {
					ops[j] = BitfieldOp{Kind: bc.kind, Signed: j&1 == 0, Bits: uint(8 << (j & 2)),
						Offset: uint64(r.IntN(size*8 - 64)), Value: 1}
				}
				if _, _, err := db.Bitfield(keys[0], ops); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
