package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// HLLSelfTest is PFSELFTEST: it checks that every packed register keeps
// what is written to it without disturbing its neighbours, then adds ten
// million distinct elements to a dense and a sparse sketch side by side,
// checking at each power of ten that the sparse one stayed sparse while
// small, that both estimate the same, and that the error is within six
// standard errors. The error texts are Redis's.
func (e *Engine) HLLSelfTest() error {
	const cycles = 1000
	regs := make([]byte, hllDenseLen-hllHeaderLen)
	var want hllRegs
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for range cycles {
		for i := range want {
			v := uint8(rng.Uint32() & hllRegMax)
			want[i] = v
			denseSet(regs, i, v)
		}
		for i, v := range want {
			if got := denseGet(regs, i); got != v {
				return fmt.Errorf("TESTFAILED Register %d should be %d but is %d", i, v, got)
			}
		}
	}

	dense := newDenseHLL()
	sparse := newSparseHLL()
	sparseMax := e.limits.HLLSparseMaxBytes
	relErr := 1.04 / math.Sqrt(hllRegisters)
	seed := rng.Uint64()
	var ele [8]byte
	checkpoint := int64(1)
	for j := int64(1); j <= 10_000_000; j++ {
		binary.LittleEndian.PutUint64(ele[:], uint64(j)^seed)
		hllAdd(dense, ele[:], sparseMax)
		sparse, _ = hllAdd(sparse, ele[:], sparseMax)
		if j != checkpoint {
			continue
		}
		if j < sparseMax/2 && sparse[4] != hllEncSparse {
			return fmt.Errorf("TESTFAILED sparse encoding not used")
		}
		dc, _ := hllCount(dense)
		sc, _ := hllCount(sparse)
		if dc != sc {
			return fmt.Errorf("TESTFAILED dense/sparse disagree")
		}
		maxErr := int64(math.Ceil(relErr * 6 * float64(checkpoint)))
		if j == 10 {
			maxErr = 1
		}
		absErr := checkpoint - int64(dc)
		if absErr < 0 {
			absErr = -absErr
		}
		if absErr > maxErr {
			return fmt.Errorf("TESTFAILED Too big error. card:%d abserr:%d", checkpoint, absErr)
		}
		checkpoint *= 10
	}
	return nil
}
