package tests

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// HyperLogLog against redis-server: the same commands on both, every reply
// compared, and after each write the value's bytes (GET), which must be
// identical: Revolver's sketches are Redis's strings.

// hllPair runs pipelined commands on Revolver and Redis and compares the
// replies.
type hllPair struct {
	t          *testing.T
	redis, rev *rawConn
}

func newHLLPair(t *testing.T) *hllPair {
	redisAddr := realRedis(t)
	srv := startServer(t)
	p := &hllPair{t: t, redis: dialRaw(t, redisAddr), rev: dialRaw(t, srv.Addr())}
	p.redis.do("FLUSHALL")
	p.rev.do("FLUSHALL")
	t.Cleanup(func() {
		p.redis.do("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
		p.redis.do("FLUSHALL")
	})
	return p
}

// run sends every command to both servers (pipelined) and compares each
// pair of replies, returning Redis's.
func (p *hllPair) run(cmds ...[]string) []resp.Value {
	p.t.Helper()
	for _, c := range cmds {
		p.redis.send(c...)
		p.rev.send(c...)
	}
	out := make([]resp.Value, len(cmds))
	for i, c := range cmds {
		want, got := p.redis.read(), p.rev.read()
		if msg := compareReplies(want, got, ""); msg != "" {
			p.t.Fatalf("%s: %s\n  redis:    %.300s\n  revolver: %.300s", shortCmd(c), msg, want.String(), got.String())
		}
		out[i] = want
	}
	return out
}

func shortCmd(c []string) string {
	s := strings.Join(c, " ")
	if len(s) > 120 {
		s = s[:120] + fmt.Sprintf("... (%d args)", len(c))
	}
	return fmt.Sprintf("%q", s)
}

func cmd(args ...string) []string { return args }

// randElem draws from a pool small enough that elements repeat.
func randElem(r *rand.Rand, pool int) string {
	switch r.IntN(4) {
	case 0:
		return strconv.Itoa(r.IntN(pool))
	case 1:
		return "user:" + strconv.Itoa(r.IntN(pool))
	case 2:
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return string(b)
	}
	return strings.Repeat("x", r.IntN(30)) + strconv.Itoa(r.IntN(pool))
}

// TestHLLRandomMatchesRedis: random PFADD batches on a few keys, with
// counts, merges and a low sparse limit from time to time; GET after every
// write.
func TestHLLRandomMatchesRedis(t *testing.T) {
	p := newHLLPair(t)
	r := rand.New(rand.NewPCG(11, 12))
	keys := []string{"h0", "h1", "h2", "h3"}
	for step := 0; step < 1500; step++ {
		k := keys[r.IntN(len(keys))]
		switch n := r.IntN(100); {
		case n < 70:
			args := []string{"PFADD", k}
			for i := r.IntN(40); i > 0; i-- {
				args = append(args, randElem(r, 5000))
			}
			p.run(args, cmd("GET", k))
		case n < 80:
			p.run(cmd("PFCOUNT", k), cmd("GET", k), cmd("PFCOUNT", k, keys[r.IntN(len(keys))], "nosuch"))
		case n < 88:
			src := keys[r.IntN(len(keys))]
			p.run(cmd("PFMERGE", k, src, "nosuch"), cmd("GET", k), cmd("PFDEBUG", "ENCODING", k))
		case n < 92:
			p.run(cmd("CONFIG", "SET", "hll-sparse-max-bytes", strconv.Itoa(100+r.IntN(3000))))
		case n < 95:
			p.run(cmd("DEL", k))
		default:
			p.run(cmd("PFDEBUG", "DECODE", k), cmd("STRLEN", k))
		}
	}
}

// TestHLL200kMatchesRedis adds 200,000 random elements in batches of 500 to
// one key on both servers; the bytes and the count agree at every
// checkpoint.
func TestHLL200kMatchesRedis(t *testing.T) {
	p := newHLLPair(t)
	r := rand.New(rand.NewPCG(5, 6))
	const total, batch = 200000, 500
	var pipeline [][]string
	for n := 0; n < total; n += batch {
		args := make([]string, 0, batch+2)
		args = append(args, "PFADD", "big")
		for i := 0; i < batch; i++ {
			args = append(args, strconv.FormatUint(r.Uint64(), 36))
		}
		pipeline = append(pipeline, args)
		if len(pipeline) == 20 || n+batch >= total {
			pipeline = append(pipeline, cmd("PFCOUNT", "big"), cmd("GET", "big"))
			p.run(pipeline...)
			pipeline = pipeline[:0]
		}
	}
	got := p.run(cmd("PFCOUNT", "big"))[0]
	if got.Int < total*98/100 || got.Int > total*102/100 {
		t.Fatalf("PFCOUNT of %d distinct elements: %d", total, got.Int)
	}
}

// TestHLLGoldenCounts: PFCOUNT of "user:1".."user:N", on Revolver and Redis
// alike.
func TestHLLGoldenCounts(t *testing.T) {
	p := newHLLPair(t)
	golden := []struct {
		n    int
		want int64
	}{{500, 499}, {1000, 1007}, {2000, 2008}, {10000, 10089}, {100000, 99471}, {1000000, 999674}}
	prev := 0
	for _, g := range golden {
		if g.n == 1000000 && testing.Short() {
			t.Skip("1M elements skipped in -short")
		}
		var pipeline [][]string
		for i := prev + 1; i <= g.n; i += 1000 {
			args := []string{"PFADD", "users"}
			for j := i; j < i+1000 && j <= g.n; j++ {
				args = append(args, "user:"+strconv.Itoa(j))
			}
			pipeline = append(pipeline, args)
		}
		prev = g.n
		p.run(pipeline...)
		res := p.run(cmd("PFCOUNT", "users"), cmd("PFDEBUG", "ENCODING", "users"), cmd("GET", "users"))
		if res[0].Int != g.want {
			t.Errorf("user:1..user:%d: PFCOUNT %d, want %d", g.n, res[0].Int, g.want)
		}
	}
}

// TestHLLCorruptSparseMatchesRedis writes random sparse opcodes (valid ones,
// short or long covers, cut-short XZEROs) behind a sparse header and runs
// every command on them: same replies, same bytes left behind.
func TestHLLCorruptSparseMatchesRedis(t *testing.T) {
	p := newHLLPair(t)
	r := rand.New(rand.NewPCG(21, 22))
	opcode := func() []byte {
		switch r.IntN(6) {
		case 0:
			return []byte{byte(r.IntN(64))} // ZERO
		case 1, 2:
			n := 1 + r.IntN(16384) // XZERO
			return []byte{byte((n-1)>>8) | 0x40, byte(n - 1)}
		case 3:
			return []byte{0x7f, 0xff}[:1+r.IntN(2)]
		default:
			return []byte{0x80 | byte(r.IntN(128))} // VAL
		}
	}
	for round := 0; round < 400; round++ {
		v := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80")
		for i := r.IntN(6); i >= 0; i-- {
			v = append(v, opcode()...)
		}
		val := string(v)
		elems := []string{"PFADD", "k"}
		for i := r.IntN(4); i > 0; i-- {
			elems = append(elems, randElem(r, 100))
		}
		p.run(cmd("SET", "k", val), cmd("PFDEBUG", "DECODE", "k"), cmd("PFCOUNT", "k"), cmd("PFCOUNT", "k", "nosuch"),
			cmd("PFMERGE", "m", "k"), cmd("GET", "m"), cmd("DEL", "m"),
			elems, cmd("GET", "k"),
			cmd("SET", "k", val), cmd("PFADD", "k", "a", "b", "c"), cmd("GET", "k"),
			cmd("SET", "k", val), cmd("PFDEBUG", "TODENSE", "k"), cmd("GET", "k"),
			cmd("SET", "k", val), cmd("PFDEBUG", "GETREG", "k"))
	}
}

// TestHLLValuesCrossServers: a sketch built by Redis and SET into Revolver
// (and the reverse) keeps working on the other side.
func TestHLLValuesCrossServers(t *testing.T) {
	p := newHLLPair(t)
	for _, n := range []int{3, 900, 5000} {
		args := []string{"PFADD", "src"}
		for i := 0; i < n; i++ {
			args = append(args, "e"+strconv.Itoa(i))
		}
		p.run(cmd("DEL", "src"), args)
		fromRedis := p.redis.do("GET", "src").Str
		fromRev := p.rev.do("GET", "src").Str
		if fromRedis != fromRev {
			t.Fatalf("%d elements: different bytes", n)
		}
		// Each server gets the other's bytes.
		p.redis.do("SET", "x", fromRev)
		p.rev.do("SET", "x", fromRedis)
		p.run(cmd("PFCOUNT", "x"), cmd("GET", "x"), cmd("PFADD", "x", "new1", "new2"), cmd("GET", "x"),
			cmd("PFCOUNT", "x", "src"), cmd("PFMERGE", "x", "src"), cmd("GET", "x"))
	}
}

// TestHLLRestart: sketches in both encodings, with their cached counts,
// come back byte for byte after a restart.
func TestHLLRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	c := dialRaw(t, srv.Addr())
	c.do("PFADD", "sparse", "a", "b", "c")
	args := []string{"PFADD", "dense"}
	for i := 0; i < 3000; i++ {
		args = append(args, strconv.Itoa(i))
	}
	c.do(args...)
	c.do("PFCOUNT", "dense")
	c.do("PFADD", "stale", "x")
	c.do("PFMERGE", "merged", "sparse", "dense")
	// A dense sketch changed by patches (a few raised registers, the cached
	// count) on top of a whole value that the store already holds.
	c.do(append([]string{"PFADD", "patched"}, args[2:]...)...)
	for deadline := time.Now().Add(10 * time.Second); ; {
		info := c.do("INFO", "persistence").Str
		if strings.Contains(info, "store_apply_lag_records:0\r\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the store did not catch up with the log")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 200; i++ {
		c.do("PFADD", "patched", "new:"+strconv.Itoa(i))
		if i%50 == 0 {
			c.do("PFCOUNT", "patched")
		}
	}
	before := map[string]string{}
	for _, k := range []string{"sparse", "dense", "stale", "merged", "patched"} {
		before[k] = c.do("GET", k).Str
	}
	srv.Close()
	srv2 := startServer(t, withPersistence(dir))
	c2 := dialRaw(t, srv2.Addr())
	for k, v := range before {
		if got := c2.do("GET", k).Str; got != v {
			t.Errorf("%s differs after restart", k)
		}
	}
	if n := c2.do("PFCOUNT", "sparse", "dense").Int; n < 2900 || n > 3100 {
		t.Errorf("count after restart: %d", n)
	}
}
