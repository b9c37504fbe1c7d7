package engine

import "errors"

// LCSMatch is one matching range of an LCS IDX reply: inclusive byte ranges
// in the first and second string.
type LCSMatch struct {
	A, B [2]int64
	Len  int64
}

// LCSResult is what LCS computes.
type LCSResult struct {
	Seq     []byte     // the common subsequence (when wanted)
	Len     int64      // its length
	Matches []LCSMatch // ranges, last match first (when wanted)
}

// ErrLCSTooBig is Redis's reply when the dynamic-programming table would
// exceed proto-max-bulk-len.
var ErrLCSTooBig = errors.New("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")

// LCS computes the longest common subsequence of a and b with Redis's
// dynamic-programming table and its backtracking order, so the subsequence
// and the ranges match Redis's byte for byte. wantSeq asks for the
// subsequence and ranges; minMatch filters ranges shorter than it.
func LCS(a, b []byte, wantSeq bool, minMatch int64, maxTable int64) (LCSResult, error) {
	alen, blen := len(a), len(b)
	cells := int64(alen+1) * int64(blen+1)
	if cells*4 > maxTable {
		return LCSResult{}, ErrLCSTooBig
	}
	w := blen + 1
	t := make([]uint32, cells)
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			switch {
			case a[i-1] == b[j-1]:
				t[i*w+j] = t[(i-1)*w+j-1] + 1
			case t[(i-1)*w+j] > t[i*w+j-1]:
				t[i*w+j] = t[(i-1)*w+j]
			default:
				t[i*w+j] = t[i*w+j-1]
			}
		}
	}
	res := LCSResult{Len: int64(t[alen*w+blen])}
	if !wantSeq {
		return res, nil
	}
	idx := res.Len
	res.Seq = make([]byte, idx)
	// aStart == alen marks "no range open", as in Redis.
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0
	i, j := alen, blen
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			res.Seq[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if t[(i-1)*w+j] > t[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			n := int64(aEnd - aStart + 1)
			if minMatch == 0 || n >= minMatch {
				res.Matches = append(res.Matches, LCSMatch{
					A: [2]int64{int64(aStart), int64(aEnd)}, B: [2]int64{int64(bStart), int64(bEnd)}, Len: n,
				})
			}
			aStart = alen
		}
	}
	return res, nil
}
