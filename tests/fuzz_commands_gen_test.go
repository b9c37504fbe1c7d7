package tests

import (
	"math/rand"
	"strconv"
	"strings"
)

// The command generator of the differential fuzzer (fuzz_commands_test.go):
// random commands of every family over a dozen key names, with arguments
// drawn from a vocabulary of edge cases.

// fuzzKeys is the shared keyspace: few enough names that types collide and
// WRONGTYPE paths run. "{t}" keys share a hash slot (irrelevant here, but
// the braces are edge input for CLUSTER KEYSLOT).
var fuzzKeys = []string{"a", "b", "c", "s", "h", "l", "z", "x", "str", "geo", "{t}1", "{t}2"}

// fuzzEdges are arguments that sit on parsing edges: empty, NUL bytes,
// signs, overflow, floats Redis rejects or accepts, range syntax.
var fuzzEdges = []string{"", "\x00", "a\x00b", "0", "1", "-1", "-0", "+1", " 1", "1 ", "01", "1.5", "-1.5",
	"1e400", "-1e400", "1e5", "nan", "NaN", "inf", "+inf", "-inf", "Infinity", "(1", "(1.5", "[a", "(a", "+", "-",
	"#3", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"18446744073709551615", "4294967295", "4294967296", "2147483647", "-2147483649", "0x10", "abc", "*", "$",
	">", "~", "=", "0.0", "-0.0", "1e-320", ".5", "5.", "  "}

type fuzzGen struct {
	r *rand.Rand
}

func (g *fuzzGen) n(k int) int       { return g.r.Intn(k) }
func (g *fuzzGen) chance(p int) bool { return g.r.Intn(100) < p }

func (g *fuzzGen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }

func (g *fuzzGen) key() string { return fuzzKeys[g.r.Intn(len(fuzzKeys))] }

// keyOf prefers the key names a family usually lives under, so values build
// up, and sometimes takes any key so types collide.
func (g *fuzzGen) keyOf(pref ...string) string {
	if g.chance(70) {
		return g.pick(pref...)
	}
	return g.key()
}

func (g *fuzzGen) edge() string { return fuzzEdges[g.r.Intn(len(fuzzEdges))] }

// member is a short member or field name, sometimes an edge.
func (g *fuzzGen) member() string {
	if g.chance(15) {
		return g.edge()
	}
	return g.pick("m1", "m2", "m3", "m4", "m5", "1", "2", "10", "-3", "a", "b", "c")
}

// value is a value to store: small, numeric, or an edge.
func (g *fuzzGen) value() string {
	switch g.n(10) {
	case 0, 1:
		return g.edge()
	case 2, 3:
		return strconv.Itoa(g.n(200) - 50)
	case 4:
		return strings.Repeat("x", g.n(70))
	default:
		return g.pick("v", "hello", "world", "1.5", "foo bar", "\xff\xfe")
	}
}

// num is an integer argument where any value is harmless (indexes, ranges,
// scores): small numbers mostly, edges sometimes.
func (g *fuzzGen) num() string {
	if g.chance(25) {
		return g.edge()
	}
	return strconv.Itoa(g.n(14) - 4)
}

// count is a count where a huge valid value would make a reply or a value
// huge (SRANDMEMBER -N, SETRANGE offsets): small, or invalid.
func (g *fuzzGen) count() string {
	if g.chance(15) {
		return g.pick("", "-0", "abc", "1.5", "9223372036854775808", "nan", "0x1", " 2")
	}
	return strconv.Itoa(g.n(12) - 3)
}

func (g *fuzzGen) score() string {
	if g.chance(30) {
		return g.edge()
	}
	return g.pick("0", "1", "2", "2.5", "-1", "10", "100", "1e3", "-inf", "+inf")
}

// rangeBound is a ZRANGEBYSCORE/ZRANGEBYLEX style bound.
func (g *fuzzGen) rangeBound() string {
	if g.chance(40) {
		return g.edge()
	}
	return g.pick("-inf", "+inf", "(1", "1", "2", "(2.5", "[a", "(m2", "[m5", "-", "+", "[", "(")
}

// expiry is a TTL in seconds or ms that cannot run out during the run (a
// key expiring between the two servers' commands would diverge them) or
// an invalid or non-positive one.
func (g *fuzzGen) expiry() string {
	return g.pick("1000", "100000", "0", "-1", "-100", "9223372036854775807", "9223372036854775", "abc", "", "1.5", "4611686018427387")
}

// bitOffset is a bit offset: small, or at/over the 2^32 bit limit. Huge
// valid offsets are only used for reads (they would allocate 512 MB).
func (g *fuzzGen) bitOffset(write bool) string {
	if g.chance(20) {
		if write {
			return g.pick("4294967296", "-1", "abc", "", "4294967297", "18446744073709551616")
		}
		return g.pick("4294967295", "4294967294", "4294967296", "-1", "abc", "#3", "#536870911", "#536870912")
	}
	if g.chance(20) {
		return "#" + strconv.Itoa(g.n(10))
	}
	return strconv.Itoa(g.n(100))
}

// opt writes an option name in random case.
func (g *fuzzGen) opt(name string) string {
	switch g.n(4) {
	case 0:
		return strings.ToLower(name)
	case 1:
		b := []byte(name)
		for i := range b {
			if g.chance(50) {
				b[i] ^= 0x20 * byte(btoi(b[i] >= 'A' && b[i] <= 'Z' || b[i] >= 'a' && b[i] <= 'z'))
			}
		}
		return string(b)
	default:
		return name
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// opts appends options chosen from a table of option templates; each
// template is the option and a generator of its values. It sometimes
// duplicates one, drops a value, or adds an unknown option.
func (g *fuzzGen) opts(args []string, table map[string]func() []string) []string {
	names := make([]string, 0, len(table))
	for name := range table {
		names = append(names, name)
	}
	sortStrings(names) // map order is random; the run must be seeded
	for i, k := 0, g.n(3); i < k; i++ {
		name := names[g.n(len(names))]
		args = append(args, g.opt(name))
		vals := table[name]()
		if g.chance(5) && len(vals) > 0 {
			vals = vals[:len(vals)-1] // a missing value
		}
		args = append(args, vals...)
	}
	if g.chance(4) {
		args = append(args, g.pick("BOGUS", "", "-", "1"))
	}
	return args
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func none() []string { return nil }

// A fuzzCmd is a generated command and how its replies are compared.
type fuzzCmd struct {
	args []string
	cmp  cmpMode
}

type cmpMode int

const (
	cmpExact     cmpMode = iota
	cmpUnordered         // hash order: compare as sorted collections
	cmpPairs             // hash order of field/value pairs (HGETALL, CONFIG GET): pairs kept together
	cmpKind              // random or time-based: the kind (and an error's text)
	cmpLen               // random picks: the kind and the number of elements
	cmpScan              // cursors: the elements only when both scans finished in one call
	cmpScanPairs         // cmpScan of field/value pairs (HSCAN, ZSCAN)
	cmpCString           // SORT ALPHA: in order up to each element's first NUL, and the same elements
	cmpSkip              // Revolver's documented choice differs; only liveness is checked
)

func exact(args ...string) fuzzCmd     { return fuzzCmd{args: args, cmp: cmpExact} }
func unordered(args ...string) fuzzCmd { return fuzzCmd{args: args, cmp: cmpUnordered} }
func paired(args ...string) fuzzCmd    { return fuzzCmd{args: args, cmp: cmpPairs} }
func kindOnly(args ...string) fuzzCmd  { return fuzzCmd{args: args, cmp: cmpKind} }

// fuzzFamily is a weighted group of command generators.
type fuzzFamily struct {
	name   string
	weight int
	gen    func(g *fuzzGen) fuzzCmd
}

func (g *fuzzGen) next(families []fuzzFamily) fuzzCmd {
	total := 0
	for _, f := range families {
		total += f.weight
	}
	n := g.n(total)
	for _, f := range families {
		if n < f.weight {
			return f.gen(g)
		}
		n -= f.weight
	}
	panic("unreachable")
}
