package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestWatchAcrossClients: a write by another client, an expiry, a
// FLUSHDB or a DEL of a watched key makes EXEC fail with a null reply;
// untouched watches let it run.
func TestWatchAcrossClients(t *testing.T) {
	srv := startServer(t)
	for _, proto := range []int{2, 3} {
		a, b := goRedis(t, srv.Addr(), proto), goRedis(t, srv.Addr(), proto)
		cases := []struct {
			name    string
			disturb func()
			fails   bool
		}{
			{"untouched", func() {}, false},
			{"set by another client", func() { b.Set(ctx, "w", "other", 0) }, true},
			{"deleted", func() { b.Del(ctx, "w") }, true},
			{"expire set", func() { b.Expire(ctx, "w", time.Hour) }, true},
			{"flushdb", func() { b.FlushDB(ctx) }, true},
			{"other key written", func() { b.Set(ctx, "unrelated", "x", 0) }, false},
		}
		for _, tc := range cases {
			a.Set(ctx, "w", "v", 0)
			err := a.Watch(ctx, func(tx *redis.Tx) error {
				tc.disturb()
				_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, "w", "mine", 0)
					return nil
				})
				return err
			}, "w")
			if tc.fails && err != redis.TxFailedErr {
				t.Errorf("RESP%d %s: EXEC should fail, got %v", proto, tc.name, err)
			}
			if !tc.fails && err != nil {
				t.Errorf("RESP%d %s: EXEC should succeed, got %v", proto, tc.name, err)
			}
		}
	}
}

// TestWatchedKeyExpiring: a watched key that reaches its deadline before
// EXEC (deleted by the scheduler) fails the transaction.
func TestWatchedKeyExpiring(t *testing.T) {
	srv := startServer(t)
	c := goRedis(t, srv.Addr(), 3)
	c.Set(ctx, "short", "v", 50*time.Millisecond)
	err := c.Watch(ctx, func(tx *redis.Tx) error {
		waitFor(t, 2*time.Second, "the watched key to expire", func() bool {
			return c.Exists(ctx, "short").Val() == 0
		})
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "short", "again", 0)
			return nil
		})
		return err
	}, "short")
	if err != redis.TxFailedErr {
		t.Fatalf("EXEC after the watched key expired: %v, want a failed transaction", err)
	}
}

// TestMultiExecIsAtomic: commands queued by one client run together; a
// concurrent client's command lands before or after the whole block.
func TestMultiExecIsAtomic(t *testing.T) {
	srv := startServer(t)
	a, b := goRedis(t, srv.Addr(), 3), goRedis(t, srv.Addr(), 3)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			b.Set(ctx, "x", "b", 0)
		}
	}()
	for i := 0; i < 200; i++ {
		cmds, err := a.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "x", "a", 0)
			p.Get(ctx, "x")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if v := cmds[1].(*redis.StringCmd).Val(); v != "a" {
			t.Fatalf("another client's SET ran inside the transaction (GET = %q)", v)
		}
	}
	<-done
}

// TestExecRules: EXEC's own rejections end the transaction (EXEC with
// arguments; over maxmemory with a write queued), while a transaction of
// reads queued before memory went over the limit still runs, and inside
// MULTI over the limit every command but EXEC/DISCARD is refused. Run on
// both servers; the replies must be the same.
func TestExecRules(t *testing.T) {
	var got [2][]string
	for i, s := range bothServers {
		t.Run(s.name, func(t *testing.T) {
			addr := s.addr(t)
			a, b := dialRaw(t, addr), dialRaw(t, addr)
			defer b.do("CONFIG", "SET", "maxmemory", "0") // the Redis is shared
			steps := []struct {
				c    *rawConn
				args []string
			}{
				{a, []string{"SET", "x", "0"}},
				{a, []string{"MULTI"}}, {a, []string{"SET", "x", "1"}}, {a, []string{"GET", "x"}},
				{b, []string{"CONFIG", "SET", "maxmemory", "1"}},
				{a, []string{"EXEC"}}, {a, []string{"EXEC"}},
				{b, []string{"CONFIG", "SET", "maxmemory", "0"}},
				{a, []string{"MULTI"}}, {a, []string{"GET", "x"}}, {a, []string{"PING"}},
				{b, []string{"CONFIG", "SET", "maxmemory", "1"}},
				{a, []string{"EXEC"}},
				{a, []string{"MULTI"}}, {a, []string{"GET", "x"}}, {a, []string{"EXEC"}},
				{a, []string{"MULTI"}}, {a, []string{"DISCARD"}},
				{b, []string{"CONFIG", "SET", "maxmemory", "0"}},
				{a, []string{"MULTI"}}, {a, []string{"SET", "x", "2"}}, {a, []string{"EXEC", "NX"}},
				{a, []string{"EXEC"}}, {a, []string{"GET", "x"}},
				{a, []string{"MULTI"}}, {a, []string{"SET", "x", "3"}}, {a, []string{"NOSUCH"}},
				{a, []string{"EXEC", "a", "b"}}, {a, []string{"GET", "x"}},
			}
			for _, st := range steps {
				got[i] = append(got[i], strings.Join(st.args, " ")+" -> "+st.c.do(st.args...).String())
			}
		})
	}
	if got[0] == nil || got[1] == nil {
		return
	}
	if r, v := strings.Join(got[0], "\n"), strings.Join(got[1], "\n"); r != v {
		t.Errorf("replies differ\n%s:\n%s\n%s:\n%s", bothServers[0].name, r, bothServers[1].name, v)
	}
}
