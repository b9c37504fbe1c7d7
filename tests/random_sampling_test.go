package tests

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// Black-box uniformity of the random commands on hashtable-encoded values
// (Redis's "SRANDMEMBER histogram distribution" test, with more draws):
// each command is run until every one of 10 elements is expected about
// 2,000 times, and the counts' chi-square against the uniform distribution
// must stay below the quantile at p = 1e-9 (60.7 for 9 degrees of freedom;
// Redis's suite uses 40 with 1,000 draws). A pick that favours entries of
// short hash chains scores in the thousands. The same draws on redis-server,
// when it is installed, are logged as a reference (its fair pick samples a
// few buckets, close to uniform).
func TestRandomSamplingUniform(t *testing.T) {
	type target struct {
		name, addr string
		enforce    bool
	}
	rev := startServer(t)
	targets := []target{{"revolver", rev.Addr(), true}}
	if _, err := exec.LookPath("redis-server"); err == nil || os.Getenv("REVOLVER_REQUIRE_REDIS") == "1" {
		targets = append(targets, target{"redis", realRedis(t), false})
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			c := dialRaw(t, tg.addr)
			restore := map[string]string{}
			for _, name := range []string{"set-max-intset-entries", "zset-max-listpack-entries"} {
				v := c.do("CONFIG", "GET", name)
				if len(v.Elems) != 2 {
					t.Fatalf("CONFIG GET %s: %s", name, v.String())
				}
				restore[name] = v.Elems[1].Str
			}
			c.do("SELECT", "9")
			c.do("FLUSHDB")
			t.Cleanup(func() {
				c.do("SELECT", "10")
				c.do("FLUSHDB")
				c.do("SELECT", "9")
				c.do("FLUSHDB")
				for name, v := range restore {
					c.do("CONFIG", "SET", name, v)
				}
			})
			s := &sampler{t: t, c: c, enforce: tg.enforce}
			s.sets()
			s.hashes()
			s.zsets()
			s.randomKey()
		})
	}
}

const (
	samplingElems = 10
	samplingDraws = 20000
)

type sampler struct {
	t       *testing.T
	c       *rawConn
	enforce bool // fail on a non-uniform tally (else only log it)
}

// pipeline sends cmds in batches and returns their replies.
func (s *sampler) pipeline(cmds [][]string) []resp.Value {
	s.t.Helper()
	var out []resp.Value
	for len(cmds) > 0 {
		n := min(len(cmds), 256)
		var buf bytes.Buffer
		for _, cmd := range cmds[:n] {
			buf.Write(encodeCommand(cmd))
		}
		s.c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := s.c.conn.Write(buf.Bytes()); err != nil {
			s.t.Fatalf("write: %v", err)
		}
		for range n {
			v := s.c.read()
			if v.Kind == resp.KindError {
				s.t.Fatalf("%q: %s", cmds[0], v.Str)
			}
			out = append(out, v)
		}
		cmds = cmds[n:]
	}
	return out
}

func repeatCmd(n int, cmds ...[]string) [][]string {
	var out [][]string
	for range n {
		out = append(out, cmds...)
	}
	return out
}

func (s *sampler) mustEncoding(key, want string) {
	s.t.Helper()
	if v := s.c.do("OBJECT", "ENCODING", key); v.Str != want {
		s.t.Fatalf("OBJECT ENCODING %s = %q, want %q", key, v.Str, want)
	}
}

// check computes the chi-square of counts over universe: total draws
// picks in all, in subsets of k distinct elements (k 0 for single picks).
// For subsets the Pearson sum is scaled by 1/((1-k/n)·n/(n-1)), which
// makes it chi-square with n-1 degrees of freedom for uniform subsets.
func (s *sampler) check(what string, universe []string, counts map[string]int, picks, k int) {
	s.t.Helper()
	in := map[string]bool{}
	for _, m := range universe {
		in[m] = true
	}
	total := 0
	for m, c := range counts {
		if !in[m] {
			s.t.Fatalf("%s: %q is not an element", what, m)
		}
		total += c
	}
	if total != picks {
		s.t.Fatalf("%s: %d picks, want %d", what, total, picks)
	}
	n := float64(len(universe))
	exp := float64(picks) / n
	chi := 0.0
	for _, m := range universe {
		d := float64(counts[m]) - exp
		chi += d * d / exp
	}
	if k > 0 {
		p := float64(k) / n
		chi /= (1 - p) * n / (n - 1)
	}
	df := len(universe) - 1
	bound := chiSquareQuantile(df, 1e-9)
	s.t.Logf("%-44s chi2 %7.1f  df %d  bound %.1f", what, chi, df, bound)
	if chi > bound && s.enforce {
		s.t.Errorf("%s: not uniform: chi-square %.1f > %.1f", what, chi, bound)
	}
}

// tallyArray counts the elements of array replies (every step-th from
// first: 2 skips the values of WITHVALUES/WITHSCORES), checking distinct
// elements when distinct is set.
func (s *sampler) tallyArrays(what string, replies []resp.Value, step int, distinct bool, pair func(m, v string)) (map[string]int, int) {
	s.t.Helper()
	counts := map[string]int{}
	picks := 0
	for _, r := range replies {
		seen := map[string]bool{}
		for i := 0; i < len(r.Elems); i += step {
			m := r.Elems[i].Str
			if distinct && seen[m] {
				s.t.Fatalf("%s: %s twice in one reply", what, m)
			}
			seen[m] = true
			if pair != nil {
				pair(m, r.Elems[i+1].Str)
			}
			counts[m]++
			picks++
		}
	}
	return counts, picks
}

func (s *sampler) tallyBulks(replies []resp.Value) (map[string]int, int) {
	counts := map[string]int{}
	for _, r := range replies {
		counts[r.Str]++
	}
	return counts, len(replies)
}

func (s *sampler) sets() {
	// Integers in a hashtable, as in Redis's test.
	s.c.do("CONFIG", "SET", "set-max-intset-entries", "0")
	var members []string
	for i := range samplingElems {
		members = append(members, strconv.Itoa(i))
	}
	s.c.do(append([]string{"SADD", "s"}, members...)...)
	s.mustEncoding("s", "hashtable")

	counts, picks := s.tallyArrays("SRANDMEMBER -n", []resp.Value{s.c.do("SRANDMEMBER", "s", strconv.Itoa(-samplingDraws))}, 1, false, nil)
	s.check("SRANDMEMBER s -20000", members, counts, picks, 0)

	counts, picks = s.tallyBulks(s.pipeline(repeatCmd(samplingDraws, []string{"SRANDMEMBER", "s"})))
	s.check("SRANDMEMBER s (x20000)", members, counts, picks, 0)

	// Redis's case 4 (count*3 <= size: random picks until count distinct)
	// and case 3 (most of the set).
	for _, k := range []int{3, 5} {
		what := fmt.Sprintf("SRANDMEMBER s %d (x%d)", k, samplingDraws/k)
		counts, picks = s.tallyArrays(what, s.pipeline(repeatCmd(samplingDraws/k, []string{"SRANDMEMBER", "s", strconv.Itoa(k)})), 1, true, nil)
		s.check(what, members, counts, picks, k)
	}

	// SPOP from a fresh copy each time.
	replies := s.pipeline(repeatCmd(samplingDraws, []string{"COPY", "s", "t", "REPLACE"}, []string{"SPOP", "t"}))
	var pops []resp.Value
	for i := 1; i < len(replies); i += 2 {
		pops = append(pops, replies[i])
	}
	counts, picks = s.tallyBulks(pops)
	s.check("SPOP t (x20000)", members, counts, picks, 0)
	s.mustEncoding("t", "hashtable")

	// Case 2 (pop one by one) and case 3 (keep a random rest).
	for _, k := range []int{3, 9} {
		reps := samplingDraws / k
		what := fmt.Sprintf("SPOP t %d (x%d)", k, reps)
		replies = s.pipeline(repeatCmd(reps, []string{"COPY", "s", "t", "REPLACE"}, []string{"SPOP", "t", strconv.Itoa(k)}))
		pops = pops[:0]
		for i := 1; i < len(replies); i += 2 {
			if len(replies[i].Elems) != k {
				s.t.Fatalf("%s: %s", what, replies[i].String())
			}
			pops = append(pops, replies[i])
		}
		counts, picks = s.tallyArrays(what, pops, 1, true, nil)
		s.check(what, members, counts, picks, k)
	}
}

func (s *sampler) hashes() {
	// One field longer than hash-max-listpack-value makes a hashtable.
	var fields []string
	args := []string{"HSET", "h"}
	for i := range samplingElems {
		f := "f" + strconv.Itoa(i)
		if i == 0 {
			f = strings.Repeat("x", 80)
		}
		fields = append(fields, f)
		args = append(args, f, "v:"+f)
	}
	s.c.do(args...)
	s.mustEncoding("h", "hashtable")
	pair := func(f, v string) {
		if v != "v:"+f {
			s.t.Fatalf("HRANDFIELD: field %q with value %q", f, v)
		}
	}

	n := strconv.Itoa(-samplingDraws)
	counts, picks := s.tallyArrays("HRANDFIELD -n", []resp.Value{s.c.do("HRANDFIELD", "h", n)}, 1, false, nil)
	s.check("HRANDFIELD h -20000", fields, counts, picks, 0)
	counts, picks = s.tallyArrays("HRANDFIELD -n WITHVALUES", []resp.Value{s.c.do("HRANDFIELD", "h", n, "WITHVALUES")}, 2, false, pair)
	s.check("HRANDFIELD h -20000 WITHVALUES", fields, counts, picks, 0)

	counts, picks = s.tallyBulks(s.pipeline(repeatCmd(samplingDraws, []string{"HRANDFIELD", "h"})))
	s.check("HRANDFIELD h (x20000)", fields, counts, picks, 0)

	for _, k := range []int{3, 5} {
		what := fmt.Sprintf("HRANDFIELD h %d WITHVALUES (x%d)", k, samplingDraws/k)
		counts, picks = s.tallyArrays(what, s.pipeline(repeatCmd(samplingDraws/k, []string{"HRANDFIELD", "h", strconv.Itoa(k), "WITHVALUES"})), 2, true, pair)
		s.check(what, fields, counts, picks, k)
	}
}

func (s *sampler) zsets() {
	for _, c := range []struct{ key, enc, long string }{
		{"zl", "listpack", ""},
		{"zs", "skiplist", strings.Repeat("y", 80)},
	} {
		var members []string
		args := []string{"ZADD", c.key}
		for i := range samplingElems {
			m := "m" + strconv.Itoa(i)
			if i == 0 && c.long != "" {
				m = c.long
			}
			members = append(members, m)
			args = append(args, strconv.Itoa(i%3), m)
		}
		s.c.do(args...)
		s.mustEncoding(c.key, c.enc)

		what := fmt.Sprintf("ZRANDMEMBER %s -20000 WITHSCORES", c.key)
		counts, picks := s.tallyArrays(what, []resp.Value{s.c.do("ZRANDMEMBER", c.key, strconv.Itoa(-samplingDraws), "WITHSCORES")}, 2, false, nil)
		s.check(what, members, counts, picks, 0)

		counts, picks = s.tallyBulks(s.pipeline(repeatCmd(samplingDraws, []string{"ZRANDMEMBER", c.key})))
		s.check(fmt.Sprintf("ZRANDMEMBER %s (x20000)", c.key), members, counts, picks, 0)

		what = fmt.Sprintf("ZRANDMEMBER %s 3 (x%d)", c.key, samplingDraws/3)
		counts, picks = s.tallyArrays(what, s.pipeline(repeatCmd(samplingDraws/3, []string{"ZRANDMEMBER", c.key, "3"})), 1, true, nil)
		s.check(what, members, counts, picks, 3)
	}
}

func (s *sampler) randomKey() {
	s.c.do("SELECT", "10")
	s.c.do("FLUSHDB")
	var keys []string
	for i := range samplingElems {
		k := "key:" + strconv.Itoa(i)
		keys = append(keys, k)
		s.c.do("SET", k, "v")
	}
	counts, picks := s.tallyBulks(s.pipeline(repeatCmd(samplingDraws, []string{"RANDOMKEY"})))
	s.check("RANDOMKEY (x20000)", keys, counts, picks, 0)
	s.c.do("FLUSHDB")
	s.c.do("SELECT", "9")
}

// chiSquareQuantile is the x a chi-square variable with df degrees of
// freedom exceeds with probability p, by bisection on its survival
// function Q(df/2, x/2) (closed forms for integer and half-integer
// parameters, summed in log space).
func chiSquareQuantile(df int, p float64) float64 {
	sf := func(x float64) float64 {
		y := x / 2
		a, q := 0.0, 0.0
		if df%2 == 1 {
			a, q = 0.5, math.Erfc(math.Sqrt(y))
		}
		for ; a < float64(df)/2-1e-9; a++ {
			lg, _ := math.Lgamma(a + 1)
			q += math.Exp(-y + a*math.Log(y) - lg)
		}
		return q
	}
	lo, hi := float64(df), float64(df)+100*math.Sqrt(float64(df))+100
	for range 100 {
		mid := (lo + hi) / 2
		if sf(mid) > p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
