package engine

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestLCSExample(t *testing.T) {
	// The example of Redis's LCS documentation.
	res, err := LCS([]byte("ohmytext"), []byte("mynewtext"), true, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Seq) != "mytext" || res.Len != 6 {
		t.Fatalf("LCS = %q (%d)", res.Seq, res.Len)
	}
	want := []LCSMatch{
		{A: [2]int64{4, 7}, B: [2]int64{5, 8}, Len: 4},
		{A: [2]int64{2, 3}, B: [2]int64{0, 1}, Len: 2},
	}
	if len(res.Matches) != len(want) {
		t.Fatalf("matches %+v", res.Matches)
	}
	for i := range want {
		if res.Matches[i] != want[i] {
			t.Fatalf("match %d = %+v, want %+v", i, res.Matches[i], want[i])
		}
	}
	res, _ = LCS([]byte("ohmytext"), []byte("mynewtext"), true, 4, 1<<20)
	if len(res.Matches) != 1 || res.Matches[0].Len != 4 || res.Len != 6 {
		t.Fatalf("MINMATCHLEN 4: %+v", res)
	}
	res, _ = LCS([]byte("ohmytext"), []byte("mynewtext"), false, 0, 1<<20)
	if res.Len != 6 || res.Seq != nil || res.Matches != nil {
		t.Fatalf("length only: %+v", res)
	}
}

func TestLCSEdges(t *testing.T) {
	for _, c := range []struct{ a, b, seq string }{
		{"", "", ""},
		{"", "abc", ""},
		{"abc", "", ""},
		{"abc", "def", ""},
		{"abc", "abc", "abc"},
		{"aaaa", "aa", "aa"},
		{"a\x00b", "\x00b", "\x00b"},
	} {
		res, err := LCS([]byte(c.a), []byte(c.b), true, 0, 1<<20)
		if err != nil || string(res.Seq) != c.seq || res.Len != int64(len(c.seq)) {
			t.Errorf("LCS(%q, %q) = %q, %d, %v; want %q", c.a, c.b, res.Seq, res.Len, err, c.seq)
		}
	}
	// The table of (len(a)+1)*(len(b)+1) uint32 may not exceed the limit.
	a, b := make([]byte, 99), make([]byte, 99)
	if _, err := LCS(a, b, false, 0, 100*100*4); err != nil {
		t.Fatalf("a table of exactly the limit: %v", err)
	}
	if _, err := LCS(a, b, false, 0, 100*100*4-1); err != ErrLCSTooBig {
		t.Fatalf("a table over the limit: %v", err)
	}
}

// lcsLen is the textbook dynamic program.
func lcsLen(a, b []byte) int64 {
	prev := make([]int64, len(b)+1)
	cur := make([]int64, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func isSubsequence(s, of []byte) bool {
	for _, c := range of {
		if len(s) > 0 && s[0] == c {
			s = s[1:]
		}
	}
	return len(s) == 0
}

// TestLCSRandom: the subsequence has the optimal length and is common to
// both strings; the ranges are equal in both strings, ordered from the end,
// disjoint, and cover the whole subsequence when no minimum is set.
func TestLCSRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 2000; i++ {
		gen := func() []byte {
			p := make([]byte, rng.IntN(30))
			for j := range p {
				p[j] = "abcd"[rng.IntN(2+rng.IntN(3))]
			}
			return p
		}
		a, b := gen(), gen()
		minMatch := int64(0)
		if rng.IntN(3) == 0 {
			minMatch = int64(rng.IntN(4))
		}
		res, err := LCS(a, b, true, minMatch, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if want := lcsLen(a, b); res.Len != want || int64(len(res.Seq)) != want {
			t.Fatalf("LCS(%q, %q) length %d (%q), want %d", a, b, res.Len, res.Seq, want)
		}
		if !isSubsequence(res.Seq, a) || !isSubsequence(res.Seq, b) {
			t.Fatalf("LCS(%q, %q) = %q is not common to both", a, b, res.Seq)
		}
		var covered int64
		prevA, prevB := int64(len(a)), int64(len(b))
		for _, m := range res.Matches {
			if m.A[1]-m.A[0] != m.B[1]-m.B[0] || m.Len != m.A[1]-m.A[0]+1 {
				t.Fatalf("LCS(%q, %q): inconsistent match %+v", a, b, m)
			}
			if !bytes.Equal(a[m.A[0]:m.A[1]+1], b[m.B[0]:m.B[1]+1]) {
				t.Fatalf("LCS(%q, %q): match %+v is not equal in both", a, b, m)
			}
			if m.A[1] >= prevA || m.B[1] >= prevB {
				t.Fatalf("LCS(%q, %q): matches out of order: %+v", a, b, res.Matches)
			}
			if minMatch > 0 && m.Len < minMatch {
				t.Fatalf("LCS(%q, %q): match %+v shorter than %d", a, b, m, minMatch)
			}
			prevA, prevB = m.A[0], m.B[0]
			covered += m.Len
		}
		if minMatch == 0 && covered != res.Len {
			t.Fatalf("LCS(%q, %q): matches cover %d of %d", a, b, covered, res.Len)
		}
	}
}
