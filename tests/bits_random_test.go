package tests

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// bitsGen makes random BITOP, BITFIELD and BITFIELD_RO commands over a few
// keys, biased towards the edges: values at and past the limits of every
// width, fields straddling bytes, "#" offsets, missing keys, and now and
// then a bad argument or a key of the wrong type.
type bitsGen struct {
	r    *rand.Rand
	keys []string
}

func (g *bitsGen) key() string { return g.keys[g.r.IntN(len(g.keys))] }

func (g *bitsGen) fieldType() (string, uint) {
	if g.r.IntN(40) == 0 {
		return []string{"u64", "i65", "i0", "x8", "I8", "u"}[g.r.IntN(6)], 8
	}
	signed := g.r.IntN(2) == 0
	var bits uint
	switch g.r.IntN(4) {
	case 0:
		bits = []uint{1, 8, 16, 32, 63, 64}[g.r.IntN(6)]
	default:
		bits = 1 + uint(g.r.IntN(64))
	}
	if !signed && bits == 64 {
		bits = 63
	}
	if signed {
		return "i" + strconv.Itoa(int(bits)), bits
	}
	return "u" + strconv.Itoa(int(bits)), bits
}

func (g *bitsGen) offset(bits uint) string {
	switch n := g.r.IntN(30); {
	case n == 0:
		return []string{"-1", "abc", "#", "#-2", "4294967296", "1.5"}[g.r.IntN(6)]
	case n < 6:
		return "#" + strconv.Itoa(g.r.IntN(40))
	case n < 8:
		return strconv.Itoa(g.r.IntN(20000))
	default:
		return strconv.Itoa(g.r.IntN(160))
	}
}

// value is a SET value or an INCRBY increment for a field of bits.
func (g *bitsGen) value(bits uint) string {
	hi := int64(math.MaxInt64 >> (64 - bits))
	var v int64
	switch g.r.IntN(12) {
	case 0:
		v = hi
	case 1:
		v = -hi - 1
	case 2:
		v = hi + 1 // wraps to the int64 minimum for 64 bits
	case 3:
		v = -hi - 2
	case 4:
		v = 2*hi + 1 // the unsigned maximum
	case 5:
		v = math.MaxInt64
	case 6:
		v = math.MinInt64
	case 7:
		v = int64(g.r.Uint64())
	case 8:
		if g.r.IntN(5) == 0 {
			return []string{"abc", "1.5", "", "9223372036854775808"}[g.r.IntN(4)]
		}
		v = g.r.Int64N(5) - 2
	default:
		if bits == 64 {
			v = int64(g.r.Uint64())
		} else {
			v = g.r.Int64N(2*hi+1) - hi
		}
	}
	return strconv.FormatInt(v, 10)
}

func (g *bitsGen) bitfield(readOnly bool) []string {
	cmd := []string{"BITFIELD", g.key()}
	if readOnly {
		cmd[0] = "BITFIELD_RO"
	}
	for n := g.r.IntN(7); n > 0; n-- {
		t, bits := g.fieldType()
		switch k := g.r.IntN(10); {
		case k < 3 || (readOnly && k < 9):
			cmd = append(cmd, "GET", t, g.offset(bits))
		case k < 6:
			cmd = append(cmd, "SET", t, g.offset(bits), g.value(bits))
		case k < 8:
			cmd = append(cmd, "INCRBY", t, g.offset(bits), g.value(bits))
		default:
			mode := []string{"WRAP", "SAT", "FAIL", "sat", "fail"}[g.r.IntN(5)]
			if g.r.IntN(30) == 0 {
				mode = "SOMETIMES"
			}
			cmd = append(cmd, "OVERFLOW", mode)
		}
	}
	return cmd
}

func (g *bitsGen) bitop() []string {
	op := []string{"AND", "OR", "XOR", "NOT", "and", "xor"}[g.r.IntN(6)]
	cmd := []string{"BITOP", op, g.key()}
	n := 1 + g.r.IntN(4)
	if strings.EqualFold(op, "NOT") && g.r.IntN(10) != 0 {
		n = 1
	}
	for ; n > 0; n-- {
		cmd = append(cmd, g.key())
	}
	return cmd
}

// fill gives a key a random string: a few bytes, or a long run for the
// word-wide paths.
func (g *bitsGen) fill() []string {
	b := make([]byte, g.r.IntN(8)+[]int{0, 0, 40, 300}[g.r.IntN(4)])
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return []string{"SET", g.key(), string(b)}
}

// TestBitsRandom runs thousands of random BITOP/BITFIELD/BITFIELD_RO
// commands on Revolver and redis-server and compares every reply and,
// every few commands, every key's value.
func TestBitsRandom(t *testing.T) {
	redisAddr := realRedis(t)
	rev := startServer(t)
	p := newDiffPair(t, redisAddr, rev.Addr(), 2)
	p3 := newDiffPair(t, redisAddr, rev.Addr(), 3)
	g := &bitsGen{r: rand.New(rand.NewPCG(42, 7)),
		keys: []string{"bits:a", "bits:b", "bits:c", "bits:d", "bits:missing", "bits:list"}}
	all := append([]string{"DEL"}, g.keys...)
	p.redis.do(all...)
	p.rev.do(all...)
	failures := 0
	compare := func(pair diffPair, args []string) {
		t.Helper()
		want, got := pair.redis.do(args...), pair.rev.do(args...)
		if msg := compareReplies(want, got, ""); msg != "" {
			failures++
			t.Errorf("%q: %s\n redis:    %s\n revolver: %s", args, msg, indent(want.String()), indent(got.String()))
		}
	}
	compare(p, []string{"RPUSH", "bits:list", "x"})
	for i := 0; i < 4000 && failures < 10; i++ {
		var cmd []string
		switch k := g.r.IntN(20); {
		case k < 10:
			cmd = g.bitfield(false)
		case k < 13:
			cmd = g.bitfield(true)
		case k < 17:
			cmd = g.bitop()
		case k < 19:
			cmd = g.fill()
		default:
			cmd = []string{"DEL", g.key()}
		}
		if cmd[1] == "bits:list" && cmd[0] != "BITOP" && g.r.IntN(2) == 0 {
			cmd[1] = "bits:a" // keep most writes on strings
		}
		pair := p
		if g.r.IntN(8) == 0 {
			pair = p3
		}
		compare(pair, cmd)
		if cmd[0] == "DEL" && cmd[1] == "bits:list" {
			compare(p, []string{"RPUSH", "bits:list", "x"})
		}
		if i%10 == 0 {
			for _, k := range g.keys {
				compare(p, []string{"GET", k})
				compare(p, []string{"OBJECT", "ENCODING", k})
			}
		}
	}
	p.redis.do(all...)
	p.rev.do(all...)
}

// TestBitsRestart: values built by random BITFIELD and BITOP commands,
// patches of long strings included (some on top of values the store
// already holds), come back byte for byte after a restart.
func TestBitsRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	c := dialRaw(t, srv.Addr())
	g := &bitsGen{r: rand.New(rand.NewPCG(9, 10)), keys: []string{"a", "b", "c", "d", "e"}}
	// Long strings, so BITFIELD writes inside them are recorded as patches.
	for _, k := range g.keys[:3] {
		c.do("SETRANGE", k, "3000", "x")
	}
	for i := 0; i < 3000; i++ {
		var cmd []string
		switch k := g.r.IntN(10); {
		case k < 7:
			cmd = g.bitfield(false)
		case k < 9:
			cmd = g.bitop()
		default:
			cmd = g.fill()
		}
		c.do(cmd...)
		if i == 1500 {
			c.do("SAVE") // the store holds the values the later patches apply to
		}
	}
	before := map[string]string{}
	for _, k := range g.keys {
		v := c.do("GET", k)
		before[k] = v.String()
	}
	srv.Close()
	c2 := dialRaw(t, startServer(t, withPersistence(dir)).Addr())
	for _, k := range g.keys {
		if got := c2.do("GET", k).String(); got != before[k] {
			t.Errorf("%s after restart: %.80s..., before: %.80s...", k, got, before[k])
		}
	}
}
