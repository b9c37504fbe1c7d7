package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Blocking sorted-set pops (BZPOPMIN, BZPOPMAX, BZMPOP) through go-redis,
// in RESP2 and RESP3.

// zsetBlockedClients reads INFO's blocked_clients.
func zsetBlockedClients(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(ctx, "clients").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "blocked_clients:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatalf("no blocked_clients in INFO:\n%s", info)
	return 0
}

func zsetWaitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	waitFor(t, 5*time.Second, fmt.Sprintf("%d blocked clients", n), func() bool {
		return zsetBlockedClients(t, c) == n
	})
}

// popResult is what one blocked pop returned.
type popResult struct {
	key     string
	members []string
	err     error
}

func (r popResult) String() string {
	if r.err != nil {
		return "error " + r.err.Error()
	}
	return r.key + ":" + strings.Join(r.members, ",")
}

// blockingPop runs one blocking pop command on c.
func blockingPop(c *redis.Client, cmd string, timeout time.Duration, count int64, keys ...string) popResult {
	switch cmd {
	case "BZPOPMIN", "BZPOPMAX":
		f := c.BZPopMin
		if cmd == "BZPOPMAX" {
			f = c.BZPopMax
		}
		v, err := f(ctx, timeout, keys...).Result()
		if err != nil {
			return popResult{err: err}
		}
		return popResult{key: v.Key, members: []string{v.Member.(string)}}
	default:
		order := strings.TrimPrefix(cmd, "BZMPOP-")
		key, zs, err := c.BZMPop(ctx, timeout, order, count, keys...).Result()
		if err != nil {
			return popResult{err: err}
		}
		r := popResult{key: key}
		for _, z := range zs {
			r.members = append(r.members, z.Member.(string))
		}
		return r
	}
}

// TestZSetBlockingFIFO: clients blocked on a key are served in the order
// they blocked, by one ZADD, each getting the next element(s) from its end.
func TestZSetBlockingFIFO(t *testing.T) {
	srv := startServer(t)
	cases := []struct {
		cmd   string
		count int64
		want  []string // per waiter, in blocking order
		rest  string   // what remains in the key
	}{
		{"BZPOPMIN", 1, []string{"k:a", "k:b", "k:c", "k:d"}, ""},
		{"BZPOPMAX", 1, []string{"k:d", "k:c", "k:b", "k:a"}, ""},
		{"BZMPOP-MIN", 1, []string{"k:a", "k:b", "k:c", "k:d"}, ""},
		{"BZMPOP-MAX", 2, []string{"k:d,c", "k:b,a"}, ""},
	}
	for _, proto := range []int{2, 3} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("RESP%d/%s", proto, tc.cmd), func(t *testing.T) {
				admin := goRedis(t, srv.Addr(), proto)
				admin.Del(ctx, "k")
				results := make([]chan popResult, len(tc.want)+1)
				for i := range results {
					results[i] = make(chan popResult, 1)
					c := goRedis(t, srv.Addr(), proto)
					go func() { results[i] <- blockingPop(c, tc.cmd, 0, tc.count, "k") }()
					zsetWaitBlocked(t, admin, i+1)
				}
				if err := admin.ZAdd(ctx, "k", redis.Z{Score: 4, Member: "d"}, redis.Z{Score: 1, Member: "a"},
					redis.Z{Score: 3, Member: "c"}, redis.Z{Score: 2, Member: "b"}).Err(); err != nil {
					t.Fatal(err)
				}
				for i, want := range tc.want {
					if got := (<-results[i]).String(); got != want {
						t.Errorf("waiter %d got %s, want %s", i+1, got, want)
					}
				}
				// The last waiter found the key drained and still waits.
				zsetWaitBlocked(t, admin, 1)
				if got := strings.Join(admin.ZRange(ctx, "k", 0, -1).Val(), ","); got != tc.rest {
					t.Errorf("left in the key: %q, want %q", got, tc.rest)
				}
				admin.ZAdd(ctx, "k", redis.Z{Score: 9, Member: "z"})
				if got := (<-results[len(tc.want)]).String(); !strings.HasPrefix(got, "k:") {
					t.Errorf("last waiter got %s", got)
				}
				zsetWaitBlocked(t, admin, 0)
			})
		}
	}
}

// TestZSetBlockingTimeout: a pop with nothing to take returns nil after its
// timeout, not before.
func TestZSetBlockingTimeout(t *testing.T) {
	long(t)
	srv := startServer(t)
	for _, proto := range []int{2, 3} {
		c := goRedis(t, srv.Addr(), proto)
		for _, cmd := range []string{"BZPOPMIN", "BZPOPMAX", "BZMPOP-MIN"} {
			start := time.Now()
			r := blockingPop(c, cmd, 200*time.Millisecond, 1, "none1", "none2")
			elapsed := time.Since(start)
			if r.err != redis.Nil {
				t.Errorf("RESP%d %s: %v, want a nil reply", proto, cmd, r)
			}
			if elapsed < 200*time.Millisecond || elapsed > 3*time.Second {
				t.Errorf("RESP%d %s: timed out after %v, want 200ms", proto, cmd, elapsed)
			}
		}
	}
}

// TestZSetBlockingMultipleKeys: a pop over several keys takes from the first
// non-empty one at once, or from whichever a later write fills.
func TestZSetBlockingMultipleKeys(t *testing.T) {
	srv := startServer(t)
	for _, proto := range []int{2, 3} {
		admin, c := goRedis(t, srv.Addr(), proto), goRedis(t, srv.Addr(), proto)
		admin.FlushAll(ctx)
		admin.ZAdd(ctx, "k3", redis.Z{Score: 1, Member: "three"})
		admin.ZAdd(ctx, "k2", redis.Z{Score: 1, Member: "two"})
		if got := blockingPop(c, "BZPOPMIN", 0, 1, "k1", "k2", "k3").String(); got != "k2:two" {
			t.Errorf("RESP%d immediate: %s", proto, got)
		}
		done := make(chan popResult, 1)
		go func() { done <- blockingPop(c, "BZMPOP-MAX", 0, 5, "k1", "k2", "k4") }()
		zsetWaitBlocked(t, admin, 1)
		admin.ZAdd(ctx, "k3", redis.Z{Score: 2, Member: "not-watched"})
		admin.Set(ctx, "k1", "a string", 0) // not a sorted set: the waiter stays
		admin.ZAdd(ctx, "k4", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2, Member: "y"})
		if got := (<-done).String(); got != "k4:y,x" {
			t.Errorf("RESP%d served: %s", proto, got)
		}
	}
}

// TestZSetBlockingMultiExec: a ZADD inside MULTI serves the waiter after
// EXEC, seeing the whole transaction; a transaction that adds and removes
// serves nobody.
func TestZSetBlockingMultiExec(t *testing.T) {
	srv := startServer(t)
	for _, proto := range []int{2, 3} {
		admin, c := goRedis(t, srv.Addr(), proto), goRedis(t, srv.Addr(), proto)
		admin.FlushAll(ctx)
		done := make(chan popResult, 1)
		go func() { done <- blockingPop(c, "BZPOPMIN", 0, 1, "k") }()
		zsetWaitBlocked(t, admin, 1)
		_, err := admin.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, "k", redis.Z{Score: 1, Member: "a"})
			p.ZRem(ctx, "k", "a")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := zsetBlockedClients(t, admin); n != 1 {
			t.Fatalf("RESP%d: a transaction leaving the key empty unblocked the waiter (%d blocked)", proto, n)
		}
		_, err = admin.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, "k", redis.Z{Score: 1, Member: "a"})
			p.ZAdd(ctx, "k", redis.Z{Score: 0, Member: "first"})
			p.ZAdd(ctx, "k", redis.Z{Score: 2, Member: "b"})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := (<-done).String(); got != "k:first" {
			t.Errorf("RESP%d served after EXEC: %s", proto, got)
		}
		if got := strings.Join(admin.ZRange(ctx, "k", 0, -1).Val(), ","); got != "a,b" {
			t.Errorf("RESP%d left: %s", proto, got)
		}
	}
}

// TestZSetBlockingDisconnect: a blocked client that goes away leaves no
// waiter behind: a later ZADD keeps its member.
func TestZSetBlockingDisconnect(t *testing.T) {
	srv := startServer(t)
	admin := goRedis(t, srv.Addr(), 3)
	for _, cmd := range [][]string{{"BZPOPMIN", "gone", "0"}, {"BZMPOP", "0", "1", "gone", "MAX", "COUNT", "3"}} {
		raw := dialRaw(t, srv.Addr())
		raw.send(cmd...)
		zsetWaitBlocked(t, admin, 1)
		raw.conn.Close()
		zsetWaitBlocked(t, admin, 0)
		admin.ZAdd(ctx, "gone", redis.Z{Score: 1, Member: "kept"})
		if got := admin.ZRange(ctx, "gone", 0, -1).Val(); len(got) != 1 || got[0] != "kept" {
			t.Errorf("%s: after the blocked client left, the key holds %q", cmd[0], got)
		}
		admin.Del(ctx, "gone")
	}
}
