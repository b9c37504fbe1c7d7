package tests

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// randomDecimal returns number texts of the shapes clients send: short and
// long decimals, exponents, negatives, integers, tiny and huge magnitudes.
func randomDecimal(rng *rand.Rand) string {
	var b strings.Builder
	if rng.IntN(3) == 0 {
		b.WriteByte('-')
	}
	digits := func(n int) {
		for i := 0; i < n; i++ {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	switch rng.IntN(5) {
	case 0: // integer
		b.WriteByte(byte('1' + rng.IntN(9)))
		digits(rng.IntN(19))
	case 1: // short decimal, the common case (prices, scores)
		b.WriteByte(byte('0' + rng.IntN(10)))
		digits(rng.IntN(4))
		b.WriteByte('.')
		digits(1 + rng.IntN(4))
	case 2: // long decimal
		digits(1 + rng.IntN(10))
		b.WriteByte('.')
		digits(1 + rng.IntN(25))
	case 3: // exponent
		b.WriteByte(byte('1' + rng.IntN(9)))
		b.WriteByte('.')
		digits(1 + rng.IntN(17))
		b.WriteByte('e')
		b.WriteString(strconv.Itoa(rng.IntN(80) - 40))
	default: // magnitudes at the edges of what %.17Lf shows
		b.WriteString("0.")
		digits(rng.IntN(20))
		b.WriteByte(byte('1' + rng.IntN(9)))
	}
	return b.String()
}

// TestIncrByFloatRandom compares hundreds of INCRBYFLOAT results (long
// double sums formatted with %.17Lf) between Revolver and redis-server,
// both from fresh values and accumulated on one key.
func TestIncrByFloatRandom(t *testing.T) {
	redisAddr := realRedis(t)
	rev := startServer(t)
	p := newDiffPair(t, redisAddr, rev.Addr(), 2)
	rng := rand.New(rand.NewPCG(7, 11))
	compare := func(args ...string) {
		t.Helper()
		want, got := p.redis.do(args...), p.rev.do(args...)
		if want.String() != got.String() || want.Kind != got.Kind {
			t.Errorf("%q: redis %s, revolver %s", args, want.String(), got.String())
		}
	}
	for i := 0; i < 400; i++ {
		a, b := randomDecimal(rng), randomDecimal(rng)
		compare("SET", "incrbyfloat:fresh", a)
		compare("INCRBYFLOAT", "incrbyfloat:fresh", b)
		compare("INCRBYFLOAT", "incrbyfloat:acc", b)
	}
	compare("GET", "incrbyfloat:acc")
	compare("DEL", "incrbyfloat:fresh", "incrbyfloat:acc")
}
