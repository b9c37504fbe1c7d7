package tests

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// With io-threads N, connections are spread over N event loops. Everything
// that crosses connections must also cross loops: a push served to a client
// blocked on another loop, a message to a subscriber there, a kill, a
// WATCH broken by another loop's write, and atomic commands from all of
// them at once.
func TestSeveralEventLoops(t *testing.T) {
	s := startServer(t, withConfig("io-threads", "3"))
	addr := s.Addr()
	// Consecutive connections go to consecutive loops, so any two
	// neighbours below are on different loops.
	conns := make([]*rawConn, 6)
	for i := range conns {
		conns[i] = dialRaw(t, addr)
	}
	if v := conns[0].do("CONFIG", "GET", "io-threads"); v.String() != "1) \"io-threads\"\n2) \"3\"" {
		t.Fatalf("CONFIG GET io-threads: %s", v)
	}

	t.Run("blocked client served from another loop", func(t *testing.T) {
		conns[0].send("BLPOP", "cross:list", "0")
		waitFor(t, 5*time.Second, "the client to block", func() bool {
			return strings.Contains(conns[1].do("CLIENT", "LIST").String(), "cmd=blpop")
		})
		if v := conns[1].do("RPUSH", "cross:list", "x"); v.String() != "(integer) 1" {
			t.Fatalf("RPUSH: %s", v)
		}
		if v := conns[0].read(); v.String() != "1) \"cross:list\"\n2) \"x\"" {
			t.Fatalf("BLPOP: %s", v)
		}
	})

	t.Run("blocking timeout on its own loop", func(t *testing.T) {
		start := time.Now()
		if v := conns[2].do("BLPOP", "cross:none", "0.1"); v.String() != "(nil array)" {
			t.Fatalf("BLPOP timeout: %s", v)
		}
		if d := time.Since(start); d < 100*time.Millisecond {
			t.Fatalf("BLPOP returned after %v, before its timeout", d)
		}
	})

	t.Run("message to a subscriber on another loop", func(t *testing.T) {
		if v := conns[3].do("SUBSCRIBE", "cross:chan"); v.String() != "1) \"subscribe\"\n2) \"cross:chan\"\n3) (integer) 1" {
			t.Fatalf("SUBSCRIBE: %s", v)
		}
		if v := conns[4].do("PUBLISH", "cross:chan", "hi"); v.String() != "(integer) 1" {
			t.Fatalf("PUBLISH: %s", v)
		}
		if v := conns[3].read(); v.String() != "1) \"message\"\n2) \"cross:chan\"\n3) \"hi\"" {
			t.Fatalf("message: %s", v)
		}
	})

	t.Run("WATCH broken by a write on another loop", func(t *testing.T) {
		conns[5].do("WATCH", "cross:w")
		conns[0].do("SET", "cross:w", "1")
		conns[5].do("MULTI")
		conns[5].do("INCR", "cross:w")
		if v := conns[5].do("EXEC"); v.String() != "(nil array)" {
			t.Fatalf("EXEC after a concurrent write: %s", v)
		}
	})

	t.Run("CLIENT KILL from another loop", func(t *testing.T) {
		victim := dialRaw(t, addr)
		id := strconv.FormatInt(victim.do("CLIENT", "ID").Int, 10)
		if v := conns[1].do("CLIENT", "KILL", "ID", id); v.String() != "(integer) 1" {
			t.Fatalf("CLIENT KILL: %s", v)
		}
		expectClosed(t, victim, "the client killed from another loop")
	})

	t.Run("atomic commands from every loop", func(t *testing.T) {
		const workers, each = 6, 500
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
				defer c.Close()
				for i := 0; i < each; i++ {
					if err := c.Incr(ctx, "cross:counter").Err(); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if v := conns[2].do("GET", "cross:counter"); v.String() != `"`+strconv.Itoa(workers*each)+`"` {
			t.Fatalf("counter: %s", v)
		}
	})
}
