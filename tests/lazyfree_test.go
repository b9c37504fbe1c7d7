package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLazyfreedObjects compares INFO's lazyfreed_objects on both servers
// after each step: UNLINK of values large enough to free in the background
// (a hashtable hash, set and sorted set of over 64 elements, a list of over
// 64 quicklist nodes, a stream) and of small ones, ASYNC flushes (their
// keys), SCRIPT FLUSH ASYNC and FUNCTION FLUSH ASYNC (over 64 scripts or
// functions), the tracking table on an ASYNC flush, and the
// lazyfree-lazy-* parameters (DEL, overwrites and RENAME's target,
// expiry, FLUSHALL without ASYNC).
func TestLazyfreedObjects(t *testing.T) {
	var got [2][]string
	for i, addr := range []string{realRedis(t), startServer(t).Addr()} {
		c := dialRaw(t, addr)
		c.do("FLUSHALL")
		c.do("SCRIPT", "FLUSH")
		c.do("FUNCTION", "FLUSH")
		for _, p := range []string{"user-del", "server-del", "expire", "eviction", "user-flush"} {
			t.Cleanup(func() { c.do("CONFIG", "SET", "lazyfree-lazy-"+p, "no") })
		}
		c.do("CONFIG", "RESETSTAT")
		var out []string
		// Redis frees in a thread: read the count once nothing is pending.
		step := func(what string, cmds ...[]string) {
			for _, cmd := range cmds {
				c.do(cmd...)
			}
			waitFor(t, 5*time.Second, "lazy frees done", func() bool {
				return infoField(c, "memory", "lazyfree_pending_objects") == "0"
			})
			out = append(out, what+" "+infoField(c, "memory", "lazyfreed_objects"))
		}
		fill := func(key string, n int, add func(i int) []string) {
			for j := 0; j < n; j++ {
				c.do(add(j)...)
			}
		}
		big := func() {
			fill("h", 200, func(j int) []string { return []string{"HSET", "h", "f" + strconv.Itoa(j), "v"} })
			fill("s", 70, func(j int) []string { return []string{"SADD", "s", "m" + strconv.Itoa(j)} })
			fill("z", 200, func(j int) []string { return []string{"ZADD", "z", strconv.Itoa(j), "m" + strconv.Itoa(j)} })
			fill("l", 600, func(j int) []string { return []string{"RPUSH", "l", strings.Repeat("x", 1000)} })
			fill("x", 300, func(j int) []string { return []string{"XADD", "x", "*", "f", strconv.Itoa(j)} })
			c.do("XGROUP", "CREATE", "x", "g", "0")
			c.do("XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "x", ">")
		}
		big()
		fill("small", 10, func(j int) []string { return []string{"HSET", "hsmall", "f" + strconv.Itoa(j), "v"} })
		c.do("RPUSH", "lsmall", "a", "b")
		c.do("SET", "str", "v")
		step("unlink", []string{"UNLINK", "h", "s", "z", "l", "x", "hsmall", "lsmall", "str", "nosuch"})
		big()
		step("del", []string{"DEL", "h", "s"})
		step("del lazy-user-del", []string{"CONFIG", "SET", "lazyfree-lazy-user-del", "yes"}, []string{"DEL", "z", "l"})
		big()
		step("overwrite", []string{"SET", "h", "v"}, []string{"RENAME", "s", "z"})
		step("overwrite lazy-server-del", []string{"CONFIG", "SET", "lazyfree-lazy-server-del", "yes"},
			[]string{"SET", "l", "v"}, []string{"RENAME", "x", "z"})
		big()
		step("expire lazy-expire", []string{"CONFIG", "SET", "lazyfree-lazy-expire", "yes"},
			[]string{"PEXPIRE", "h", "0"}, []string{"PEXPIRE", "s", "200"})
		waitFor(t, 5*time.Second, "s expired", func() bool { return c.do("EXISTS", "s").Int == 0 })
		step("expired")
		c.do("SET", "k1", "v")
		c.do("SET", "k2", "v")
		step("flushdb async", []string{"FLUSHDB", "ASYNC"})
		big()
		step("flushall", []string{"FLUSHALL"})
		big()
		step("flushall lazy-user-flush", []string{"CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"}, []string{"FLUSHALL"})
		big()
		step("flushall sync", []string{"FLUSHALL", "SYNC"})
		for j := 0; j < 70; j++ {
			c.do("SCRIPT", "LOAD", "return "+strconv.Itoa(j))
		}
		step("script flush", []string{"SCRIPT", "FLUSH"})
		var lib strings.Builder
		lib.WriteString("#!lua name=many\n")
		for j := 0; j < 70; j++ {
			lib.WriteString("redis.register_function('f" + strconv.Itoa(j) + "', function() return 1 end)\n")
		}
		c.do("FUNCTION", "LOAD", lib.String())
		step("function flush", []string{"FUNCTION", "FLUSH", "ASYNC"})
		tr := dialRaw(t, addr)
		tr.do("CLIENT", "TRACKING", "on")
		for j := 0; j < 70; j++ {
			tr.do("GET", "tk"+strconv.Itoa(j))
		}
		step("tracking table", []string{"FLUSHDB", "ASYNC"})
		got[i] = out
	}
	if testing.Verbose() {
		t.Logf("revolver:\n  %s", strings.Join(got[1], "\n  "))
	}
	if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") {
		t.Errorf("redis:\n  %s\nrevolver:\n  %s", strings.Join(got[0], "\n  "), strings.Join(got[1], "\n  "))
	}
}

// TestLazyFreeReclaimsMemory: the memory of a large value UNLINK dropped,
// and of a database FLUSHDB ASYNC dropped, comes back soon on an idle
// server, as Redis's lazy free thread gives it back: used_memory falls.
// Revolver runs as a process of its own: in-process, used_memory (the
// live heap at the last collection) would hold what the other tests
// running meanwhile allocate.
func TestLazyFreeReclaimsMemory(t *testing.T) {
	servers := map[string]func(t *testing.T) string{
		"redis":    func(t *testing.T) string { return startRealRedis(t) },
		"revolver": func(t *testing.T) string { return startProcess(t, t.TempDir(), "--persistence", "off").addr },
	}
	for _, name := range []string{"redis", "revolver"} {
		t.Run(name, func(t *testing.T) { checkLazyFreeReclaims(t, servers[name](t)) })
	}
}

func checkLazyFreeReclaims(t *testing.T, addr string) {
	c := dialRaw(t, addr)
	c.do("FLUSHALL")
	used := func() int64 {
		n, _ := strconv.ParseInt(infoField(c, "memory", "used_memory"), 10, 64)
		return n
	}
	for _, drop := range [][]string{{"UNLINK", "h"}, {"FLUSHDB", "ASYNC"}} {
		c.do("MEMORY", "PURGE")
		before := used()
		c.do("EVAL", "for i = 1, 200000 do redis.call('hset', 'h', 'field:' .. i, 'value:' .. i) end", "0")
		grown := used()
		if grown-before < 4<<20 {
			t.Fatalf("used_memory grew by %d bytes only", grown-before)
		}
		c.do(drop...)
		var now int64
		// Generous: the memory comes back at a collection, which a machine
		// busy with CI's other packages can delay (it took over 5 s once).
		waitFor(t, 20*time.Second, drop[0]+" reclaiming", func() bool {
			now = used()
			return now < before+(grown-before)/2
		})
	}
}
