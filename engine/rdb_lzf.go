package engine

import "sync"

// LZF as Redis's RDB writes it (lzf_c.c with HLOG 16 and VERY_FAST): the
// same hash, the same match search and the same conservative output-space
// checks, so a string compresses to the bytes redis-server writes and
// compression is given up exactly when it gives up. One difference: its
// hash table is not cleared between calls, so a stale slot may in rare
// cases make it find an extra match; this table is always clean, so the
// output depends on the input only.

const (
	lzfHashLog = 16
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 1<<8 + 1<<3
)

// lzfTable holds the last position (+1) of each 3-byte hash, stamped with
// the call's generation so that a table is reused without clearing it.
type lzfTable struct {
	gen  uint32
	slot [1 << lzfHashLog]uint64
}

var lzfTables = sync.Pool{New: func() any { return new(lzfTable) }}

func lzfIndex(h uint32) uint32 {
	return ((h >> (3*8 - lzfHashLog)) - h*5) & (1<<lzfHashLog - 1)
}

// lzfCompress compresses in into at most outLen bytes, appending to dst.
// ok is false when the output would not fit (the caller then stores the
// string plain).
func lzfCompress(dst, in []byte, outLen int) (out []byte, ok bool) {
	if len(in) == 0 || outLen == 0 {
		return dst, false
	}
	t := lzfTables.Get().(*lzfTable)
	defer lzfTables.Put(t)
	t.gen++
	if t.gen == 0 { // wrapped: stale stamps could look current
		t.slot = [1 << lzfHashLog]uint64{}
		t.gen = 1
	}
	gen := uint64(t.gen) << 32
	lookup := func(h uint32) (int, bool) {
		v := t.slot[lzfIndex(h)]
		if v&^(1<<32-1) != gen {
			return 0, false
		}
		return int(uint32(v)), true
	}
	store := func(h uint32, pos int) { t.slot[lzfIndex(h)] = gen | uint64(uint32(pos)) }

	base := len(dst)
	o := make([]byte, outLen) // op indexes this; everything stays below outLen
	op, ip, lit := 1, 0, 0    // op 0 is the first literal run's header
	inEnd := len(in)
	hval := uint32(in[0])<<8 | uint32(safeAt(in, 1))
	for ip < inEnd-2 {
		hval = hval<<8 | uint32(in[ip+2])
		ref, found := lookup(hval)
		store(hval, ip)
		if found && ref > 0 && ip-ref-1 < lzfMaxOff && in[ref+2] == in[ip+2] &&
			in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			n := 2
			maxLen := min(inEnd-ip-n, lzfMaxRef)
			if op+3+1 >= outLen {
				back := 0
				if lit == 0 {
					back = 1
				}
				if op-back+3+1 >= outLen {
					return dst, false
				}
			}
			o[op-lit-1] = byte(lit - 1)
			if lit == 0 {
				op--
			}
			matched := false
			if maxLen > 16 {
				for k := 0; k < 16; k++ {
					n++
					if in[ref+n] != in[ip+n] {
						matched = true
						break
					}
				}
			}
			if !matched {
				for {
					n++
					if !(n < maxLen && in[ref+n] == in[ip+n]) {
						break
					}
				}
			}
			n -= 2
			ip++
			if n < 7 {
				o[op] = byte(off>>8 + n<<5)
				op++
			} else {
				o[op] = byte(off>>8 + 7<<5)
				o[op+1] = byte(n - 7)
				op += 2
			}
			o[op] = byte(off)
			op++
			lit = 0
			op++ // start a run
			ip += n + 1
			if ip >= inEnd-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			store(hval, ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			store(hval, ip)
			ip++
			continue
		}
		if op >= outLen {
			return dst, false
		}
		lit++
		o[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			o[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outLen {
		return dst, false
	}
	for ip < inEnd {
		lit++
		o[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			o[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	o[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	dst = append(dst[:base], o[:op]...)
	return dst, true
}

func safeAt(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// lzfMaxRatio bounds how much a compressed stream can expand: a 2-byte back
// reference yields at most 9 bytes, a 3-byte one 264. A declared length
// beyond it is a corrupt payload, refused before anything is allocated.
const lzfMaxRatio = 88

// lzfDecompress expands in into exactly n bytes; false when in is not a
// valid stream of that length.
func lzfDecompress(in []byte, n int) ([]byte, bool) {
	if n <= 0 || n/lzfMaxRatio > len(in) {
		return nil, false
	}
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 { // a literal run of ctrl+1 bytes
			run := ctrl + 1
			if i+run > len(in) || len(out)+run > n {
				return nil, false
			}
			out = append(out, in[i:i+run]...)
			i += run
			continue
		}
		length := ctrl >> 5 // a back reference
		if i >= len(in) {
			return nil, false
		}
		if length == 7 {
			length += int(in[i])
			i++
			if i >= len(in) {
				return nil, false
			}
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		length += 2
		if ref < 0 || len(out)+length > n {
			return nil, false
		}
		for k := 0; k < length; k++ { // byte by byte: the source may overlap what it writes
			out = append(out, out[ref+k])
		}
	}
	return out, len(out) == n
}
