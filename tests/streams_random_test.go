package tests

import (
	"fmt"
	"math/rand"
	"strconv"
	"testing"
)

// TestStreamRandomAgainstRedis runs random stream and consumer-group
// commands with explicit ids on Revolver and redis-server and compares
// every reply, then the streams' XINFO (nodes included, so the listpack
// node model is checked), groups and pending summaries. Nothing compared
// carries a time.
func TestStreamRandomAgainstRedis(t *testing.T) {
	long(t)
	redisAddr := realRedis(t)
	srv := startServer(t)
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) {
			p := newDiffPair(t, redisAddr, srv.Addr(), 2)
			randomStreamOps(t, &p, seed, 600, nil)
		})
	}
}

// TestStreamRandomRestarts is the same against a persistent Revolver
// restarted every 100 steps: the nodes, counters, groups and PELs it
// loads must go on behaving as redis-server's, which never restarted.
func TestStreamRandomRestarts(t *testing.T) {
	redisAddr := realRedis(t)
	outer := t
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	for seed := int64(100); seed <= 102; seed++ {
		t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) {
			p := newDiffPair(t, redisAddr, srv.Addr(), 2)
			randomStreamOps(t, &p, seed, 600, func() {
				srv.Close()
				srv = startServer(outer, withPersistence(dir)) // outlives the subtest
				p.rev = dialRaw(t, srv.Addr())
			})
		})
	}
}

// randomStreamOps runs steps random commands on one key; restart, when
// set, runs every 100 steps.
func randomStreamOps(t *testing.T, p *diffPair, seed int64, steps int, restart func()) {
	{
		{
			r := rand.New(rand.NewSource(seed))
			key := fmt.Sprintf("rnd%d", seed)
			p.redis.do("DEL", key)
			p.rev.do("DEL", key)
			p.redis.do("CONFIG", "SET", "stream-node-max-entries", "7")
			defer p.redis.do("CONFIG", "SET", "stream-node-max-entries", "100")
			p.rev.do("CONFIG", "SET", "stream-node-max-entries", "7")
			next := uint64(1)
			id := func() string { // an id near the stream's, existing or not
				return fmt.Sprintf("%d-%d", uint64(r.Intn(int(next)+3)), r.Intn(3))
			}
			consumers := []string{"c1", "c2", "c3"}
			for step := 0; step < steps; step++ {
				if restart != nil && step > 0 && step%100 == 0 {
					restart()
					p.rev.do("CONFIG", "SET", "stream-node-max-entries", "7")
				}
				var cmd []string
				switch op := r.Intn(100); {
				case op < 40:
					next += uint64(r.Intn(3))
					cmd = []string{"XADD", key}
					if r.Intn(5) == 0 {
						cmd = append(cmd, "MAXLEN", []string{"~", "="}[r.Intn(2)], strconv.Itoa(r.Intn(40)))
					}
					seq := "*"
					if r.Intn(2) == 0 {
						seq = strconv.Itoa(r.Intn(4))
					}
					cmd = append(cmd, fmt.Sprintf("%d-%s", next, seq))
					for f := 0; f <= r.Intn(3); f++ {
						cmd = append(cmd, []string{"f", "g", "h"}[r.Intn(3)], strconv.Itoa(r.Intn(1000)))
					}
				case op < 50:
					cmd = []string{"XDEL", key, id(), id()}
				case op < 55:
					if r.Intn(2) == 0 {
						cmd = []string{"XTRIM", key, "MINID", []string{"~", "="}[r.Intn(2)], id()}
					} else {
						cmd = []string{"XTRIM", key, "MAXLEN", "~", strconv.Itoa(r.Intn(30))}
					}
				case op < 60:
					cmd = []string{"XGROUP", "CREATE", key, fmt.Sprint("g", r.Intn(3)), []string{"$", "0", id()}[r.Intn(3)], "MKSTREAM"}
				case op < 75:
					cmd = []string{"XREADGROUP", "GROUP", fmt.Sprint("g", r.Intn(3)), consumers[r.Intn(3)], "COUNT", strconv.Itoa(1 + r.Intn(5))}
					if r.Intn(4) == 0 {
						cmd = append(cmd, "NOACK")
					}
					cmd = append(cmd, "STREAMS", key, []string{">", ">", "0"}[r.Intn(3)])
				case op < 82:
					cmd = []string{"XACK", key, fmt.Sprint("g", r.Intn(3)), id(), id()}
				case op < 88:
					cmd = []string{"XCLAIM", key, fmt.Sprint("g", r.Intn(3)), consumers[r.Intn(3)], "0", id(), id(), "JUSTID"}
				case op < 92:
					cmd = []string{"XAUTOCLAIM", key, fmt.Sprint("g", r.Intn(3)), consumers[r.Intn(3)], "0", id(), "COUNT", "3", "JUSTID"}
				case op < 95:
					cmd = []string{"XGROUP", "SETID", key, fmt.Sprint("g", r.Intn(3)), id()}
				case op < 97:
					cmd = []string{"XGROUP", "DELCONSUMER", key, fmt.Sprint("g", r.Intn(3)), consumers[r.Intn(3)]}
				default:
					cmd = []string{"XRANGE", key, id(), "+", "COUNT", "5"}
				}
				checks := [][]string{cmd, {"XINFO", "STREAM", key}, {"XINFO", "GROUPS", key}}
				for g := 0; g < 3; g++ {
					checks = append(checks, []string{"XPENDING", key, fmt.Sprint("g", g)})
				}
				for _, c := range checks {
					want, got := p.redis.do(c...), p.rev.do(c...)
					if want.String() != got.String() {
						t.Fatalf("step %d: %v\n redis:    %s\n revolver: %s", step, c, want, got)
					}
				}
			}
			p.rev.do("CONFIG", "SET", "stream-node-max-entries", "100")
		}
	}
}
