package engine

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
)

// HyperLogLog values are strings, byte for byte the ones Redis 7.0 builds,
// so GET, SET, APPEND and friends see them as any other string and a value
// copied between Redis and Revolver keeps working on both sides.
//
// Layout: a 16-byte header ("HYLL", the encoding byte, three unused bytes,
// the cached cardinality as 8 little-endian bytes whose top bit marks the
// cache stale) followed by the registers. 16384 registers of 6 bits each,
// fed by MurmurHash64A: the hash's low 14 bits pick a register, the run of
// zero bits above them (plus one) is the value the register keeps the
// maximum of.
//
// Two encodings: dense (the registers packed LSB first, 12288 bytes) and
// sparse (run-length opcodes, see hll_sparse.go) for mostly empty sketches.
const (
	hllP         = 14
	hllQ         = 64 - hllP
	hllRegisters = 1 << hllP
	hllPMask     = hllRegisters - 1
	hllBits      = 6
	hllRegMax    = 1<<hllBits - 1
	hllHeaderLen = 16
	hllDenseLen  = hllHeaderLen + (hllRegisters*hllBits+7)/8

	hllEncDense  = 0
	hllEncSparse = 1

	// hllSeed is the MurmurHash64A seed Redis hashes elements with.
	hllSeed = 0xadc83b19
	// hllAlpha is the estimator's constant, 1/(2 ln 2).
	hllAlpha = 0.721347520444481703680
)

// HyperLogLog errors, with Redis's texts.
var (
	ErrNotHLL     = errors.New("WRONGTYPE Key is not a valid HyperLogLog string value.")
	ErrHLLCorrupt = errors.New("INVALIDOBJ Corrupted HLL object detected")
)

// hllRegs is a sketch unpacked to one byte per register: the scratch space
// of multi-key PFCOUNT and PFMERGE.
type hllRegs [hllRegisters]uint8

// hllHisto counts registers by value. Values never exceed 63, so 64 slots
// hold any input, corrupt or not.
type hllHisto [64]int

// murmurHash64A is Austin Appleby's 64-bit MurmurHash2 reading its 8-byte
// blocks little-endian whatever the machine, as Redis does.
func murmurHash64A(data []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(data)) * m)
	for len(data) >= 8 {
		k := binary.LittleEndian.Uint64(data)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		data = data[8:]
	}
	if n := len(data); n > 0 {
		// The tail, most significant byte first, then one multiply: the
		// reference's switch with fall-through.
		for i := n - 1; i >= 0; i-- {
			h ^= uint64(data[i]) << (8 * uint(i))
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen hashes an element into its register and the value it offers
// that register: the position of the lowest set bit above the index bits,
// counting from 1 (a sentinel bit keeps it at most 51).
func hllPatLen(elem []byte) (index int, count uint8) {
	h := murmurHash64A(elem, hllSeed)
	index = int(h & hllPMask)
	h >>= hllP
	h |= 1 << hllQ
	return index, uint8(bits.TrailingZeros64(h) + 1)
}

// isHLL reports whether b is a HyperLogLog Redis would accept: a header
// with the magic, a known encoding, and the exact size when dense.
func isHLL(b []byte) bool {
	if len(b) < hllHeaderLen || b[0] != 'H' || b[1] != 'Y' || b[2] != 'L' || b[3] != 'L' {
		return false
	}
	switch b[4] {
	case hllEncDense:
		return len(b) == hllDenseLen
	case hllEncSparse:
		return true
	}
	return false
}

func hllCacheValid(b []byte) bool { return b[15]&0x80 == 0 }

// hllInvalidate marks the cached cardinality stale. Only the flag bit
// changes: the stale bytes stay, as they do in Redis.
func hllInvalidate(b []byte) { b[15] |= 0x80 }

func hllCached(b []byte) uint64 { return binary.LittleEndian.Uint64(b[8:hllHeaderLen]) }

func hllSetCache(b []byte, card uint64) { binary.LittleEndian.PutUint64(b[8:hllHeaderLen], card) }

// newDenseHLL returns an empty dense sketch (cached cardinality 0, valid).
func newDenseHLL() []byte {
	b := make([]byte, hllDenseLen)
	copy(b, "HYLL")
	return b
}

// denseGet reads register i of packed registers.
func denseGet(regs []byte, i int) uint8 {
	bit := i * hllBits
	at, fb := bit>>3, uint(bit&7)
	v := uint(regs[at]) >> fb
	if fb > 8-hllBits {
		v |= uint(regs[at+1]) << (8 - fb)
	}
	return uint8(v & hllRegMax)
}

// denseSet writes register i of packed registers.
func denseSet(regs []byte, i int, val uint8) {
	bit := i * hllBits
	at, fb := bit>>3, uint(bit&7)
	v := uint(val)
	regs[at] = byte(uint(regs[at])&^(hllRegMax<<fb) | v<<fb)
	if fb > 8-hllBits {
		regs[at+1] = byte(uint(regs[at+1])&^(hllRegMax>>(8-fb)) | v>>(8-fb))
	}
}

// denseRegBytes is the byte range [lo, hi) of packed registers holding
// register i.
func denseRegBytes(i int) (lo, hi int) {
	bit := i * hllBits
	return bit >> 3, (bit+hllBits-1)>>3 + 1
}

// denseRaise sets register i to count when that is larger: 1 if it was.
func denseRaise(regs []byte, i int, count uint8) int {
	if count > denseGet(regs, i) {
		denseSet(regs, i, count)
		return 1
	}
	return 0
}

// denseWord returns the six bytes holding registers 8*g..8*g+7 in the low
// 48 bits of a word (one 64-bit load except for the last group).
func denseWord(regs []byte, g int) uint64 {
	i := g * 6
	if i+8 <= len(regs) {
		return binary.LittleEndian.Uint64(regs[i:])
	}
	var tail [8]byte
	copy(tail[:], regs[i:i+6])
	return binary.LittleEndian.Uint64(tail[:])
}

// histoLanes counts register values in eight histograms, one per register
// position in a group of eight, summed at the end. Neighbouring registers
// mostly hold the same few values, and with one histogram each increment
// would wait for the store of the one before it to the same counter
// (BenchmarkPFCount: 10.4 µs a count with one histogram, 6.7 with lanes).
type histoLanes [8][64]uint32

func (l *histoLanes) addTo(h *hllHisto) {
	for v := range h {
		h[v] += int(l[0][v] + l[1][v] + l[2][v] + l[3][v] + l[4][v] + l[5][v] + l[6][v] + l[7][v])
	}
}

// denseHisto adds the register values of packed registers to h, sixteen
// registers (twelve bytes) at a time: the low six bytes of one load and the
// high six of another, so that no load reads past the end.
func denseHisto(regs []byte, h *hllHisto) {
	var l histoLanes
	regs = regs[:hllRegisters*hllBits/8]
	for i := 0; i+12 <= len(regs); i += 12 {
		// Written out: a method per eight registers is not inlined.
		a := binary.LittleEndian.Uint64(regs[i:])
		b := binary.LittleEndian.Uint64(regs[i+4:]) >> 16
		l[0][a&63]++
		l[1][a>>6&63]++
		l[2][a>>12&63]++
		l[3][a>>18&63]++
		l[4][a>>24&63]++
		l[5][a>>30&63]++
		l[6][a>>36&63]++
		l[7][a>>42&63]++
		l[0][b&63]++
		l[1][b>>6&63]++
		l[2][b>>12&63]++
		l[3][b>>18&63]++
		l[4][b>>24&63]++
		l[5][b>>30&63]++
		l[6][b>>36&63]++
		l[7][b>>42&63]++
	}
	l.addTo(h)
}

// spreadRegisters moves eight packed 6-bit registers (the low 48 bits of
// w) into the eight bytes of a word, register 0 in the low byte: halves of
// 24, 12 and 6 bits are pulled apart into lanes of 32, 16 and 8 bits.
func spreadRegisters(w uint64) uint64 {
	w = w&0xffffff | (w&0xffffff000000)<<8
	w = w&0x00000fff00000fff | (w&0x00fff00000fff000)<<4
	return w&0x003f003f003f003f | (w&0x0fc00fc00fc00fc0)<<2
}

// maxBytes is the bytewise maximum of two words whose bytes are all below
// 128: a byte of a|0x80 minus the same byte of b keeps its top bit exactly
// when a >= b, and never borrows from its neighbour.
func maxBytes(a, b uint64) uint64 {
	const high = 0x8080808080808080
	ge := ((a | high) - b) & high
	m := (ge >> 7) * 0xff
	return a&m | b&^m
}

// denseMergeMax raises each unpacked register to the packed one.
func denseMergeMax(regs []byte, max *hllRegs) {
	for g := 0; g < hllRegisters/8; g++ {
		w := denseWord(regs, g)
		if w&0xffffffffffff == 0 {
			continue
		}
		dst := max[g*8 : g*8+8 : g*8+8]
		binary.LittleEndian.PutUint64(dst, maxBytes(spreadRegisters(w), binary.LittleEndian.Uint64(dst)))
	}
}

// densePack writes unpacked registers into packed ones.
func densePack(regs []byte, src *hllRegs) {
	for i, r := 0, 0; r < hllRegisters; i, r = i+3, r+4 {
		a, b, c, d := src[r], src[r+1], src[r+2], src[r+3]
		regs[i] = a | b<<6
		regs[i+1] = b>>2 | c<<4
		regs[i+2] = c>>4 | d<<2
	}
}

// rawHisto counts unpacked registers by value.
func rawHisto(regs *hllRegs, h *hllHisto) {
	var l histoLanes
	for i := 0; i < hllRegisters; i += 8 {
		w := binary.LittleEndian.Uint64(regs[i:])
		l[0][w&63]++
		l[1][w>>8&63]++
		l[2][w>>16&63]++
		l[3][w>>24&63]++
		l[4][w>>32&63]++
		l[5][w>>40&63]++
		l[6][w>>48&63]++
		l[7][w>>56&63]++
	}
	l.addTo(h)
}

// hllEstimate is Otmar Ertl's improved raw estimator ("New cardinality
// estimation algorithms for HyperLogLog sketches", 2017) over the register
// histogram, evaluated in the same order as Redis so the result is the same
// number. The float64 conversions keep the compiler from fusing a multiply
// and an add, which would round differently.
func hllEstimate(h *hllHisto) uint64 {
	const m = float64(hllRegisters)
	z := m * hllTau((m-float64(h[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += float64(m * hllSigma(float64(h[0])/m))
	return uint64(math.Round(hllAlpha * m * m / z))
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += float64(x * y)
		y += y
		if z == prev {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if z == prev {
			return z / 3
		}
	}
}

// hllCount estimates the cardinality of a valid sketch; false when a
// sparse one turns out corrupt.
func hllCount(b []byte) (uint64, bool) {
	var h hllHisto
	if b[4] == hllEncDense {
		denseHisto(b[hllHeaderLen:], &h)
	} else if !sparseHisto(b[hllHeaderLen:], &h) {
		return 0, false
	}
	return hllEstimate(&h), true
}

// hllMerge raises regs to the registers of a valid sketch; false when a
// sparse one turns out corrupt.
func hllMerge(regs *hllRegs, b []byte) bool {
	if b[4] == hllEncDense {
		denseMergeMax(b[hllHeaderLen:], regs)
		return true
	}
	return sparseMergeMax(b[hllHeaderLen:], regs)
}

// hllAdd adds one element to a valid sketch and returns the sketch (moved
// when it grew or turned dense) and 1 when a register changed, 0 when not,
// -1 when the sketch is corrupt.
func hllAdd(b []byte, elem []byte, sparseMax int64) ([]byte, int) {
	index, count := hllPatLen(elem)
	if b[4] == hllEncDense {
		return b, denseRaise(b[hllHeaderLen:], index, count)
	}
	return sparseSet(b, index, count, sparseMax)
}
