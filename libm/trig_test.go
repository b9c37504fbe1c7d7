package libm

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestTrigCorrectlyRounded checks the double-double sine, cosine and
// arcsine against values computed with 200 bits and rounded once.
func TestTrigCorrectlyRounded(t *testing.T) {
	f, err := os.Open("testdata/trig.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		var v [5]float64
		for i, s := range strings.Fields(line) {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatal(err)
			}
		}
		n++
		if got := Sin(v[0]); got != v[1] {
			t.Errorf("sin(%v) = %v, want %v", v[0], got, v[1])
		}
		if got := Cos(v[0]); got != v[2] {
			t.Errorf("cos(%v) = %v, want %v", v[0], got, v[2])
		}
		if got := Asin(v[3]); got != v[4] {
			t.Errorf("asin(%v) = %v, want %v", v[3], got, v[4])
		}
	}
	if n < 500 {
		t.Fatalf("only %d samples", n)
	}
}

// TestTrigShortSeries: the series cut to the argument give the same
// correctly rounded values as the full twelve terms with five in
// double-double, over arguments of every scale a search produces.
func TestTrigShortSeries(t *testing.T) {
	full := func(coef *[trigTerms]dd, r2 dd) dd {
		tail := coef[trigTerms-1].hi
		for k := trigTerms - 2; k >= 5; k-- {
			tail = tail*r2.hi + coef[k].hi
		}
		v := dd{tail, 0}
		for k := 4; k >= 0; k-- {
			v = v.mul(r2).addFast(coef[k])
		}
		return v
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 400_000; i++ {
		// Magnitudes from 1e-9 to pi/4, uniform in the exponent.
		x := math.Pow(10, -9+9*rng.Float64()) * math.Pi / 4
		if rng.IntN(2) == 0 {
			x = -x
		}
		r := dd{x, 0}
		r2 := r.mul(r)
		if got, want := sinReduced(r).hi, full(&sinCoef, r2).mul(r).hi; got != want {
			t.Fatalf("sin(%v): %v, the full series %v", x, got, want)
		}
		if got, want := cosReduced(r).hi, full(&cosCoef, r2).hi; got != want {
			t.Fatalf("cos(%v): %v, the full series %v", x, got, want)
		}
	}
}
