package tests

import (
	"regexp"
	"strings"
	"testing"
)

// TestSlowlogAsRedis compares SLOWLOG entries on both servers: a blocking
// command is logged when it is served or unblocked (after the command that
// served it), as the client sent it, under its name; one that times out is
// not logged; one CLIENT UNBLOCK releases is logged without its arguments,
// which Redis has freed by then; a script's commands are logged under the Lua client ("?:0",
// no name); arguments past 32 and bytes past 128 are cut as Redis cuts
// them.
func TestSlowlogAsRedis(t *testing.T) {
	addrRE := regexp.MustCompile(`127\.0\.0\.1:\d+`)
	var got [2][]string
	for i, addr := range []string{realRedis(t), startServer(t).Addr()} {
		h := dialRaw(t, addr)
		h.do("FLUSHALL")
		h.do("CONFIG", "SET", "slowlog-log-slower-than", "0")
		t.Cleanup(func() { h.do("CONFIG", "SET", "slowlog-log-slower-than", "10000") })
		h.do("SLOWLOG", "RESET")
		r1, r2, r3 := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
		r1.do("CLIENT", "SETNAME", "blk")
		r1.send("BLPOP", "l", "0")
		waitBlocked(t, h, "1")
		h.do("LPUSH", "l", "a")
		r1.read()
		r2.do("BLPOP", "l", "0.01")
		id3 := clientIDOf(r3)
		r3.send("BLMOVE", "l", "m", "LEFT", "RIGHT", "0")
		waitBlocked(t, h, "1")
		h.do("CLIENT", "UNBLOCK", id3)
		r3.read()
		h.do("EVAL", "redis.call('set','a','b') return redis.call('get','a')", "0")
		long := []string{"DEL"}
		for j := 0; j < 40; j++ {
			long = append(long, strings.Repeat("k", 120+j))
		}
		h.do(long...)
		entries := h.do("SLOWLOG", "GET", "100")
		var lines []string
		for _, e := range entries.Elems {
			var args []string
			for _, a := range e.Elems[3].Elems {
				if a.Str == id3 {
					a.Str = "$id" // the ids differ
				}
				args = append(args, a.Str)
			}
			if len(args) > 0 && strings.EqualFold(args[0], "info") {
				continue // waitBlocked's polling
			}
			lines = append(lines, strings.Join(args, " ")+" | "+addrRE.ReplaceAllString(e.Elems[4].Str, "127.0.0.1:*")+
				" | "+e.Elems[5].Str)
		}
		got[i] = lines
	}
	if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") {
		t.Errorf("redis:\n  %s\nrevolver:\n  %s", strings.Join(got[0], "\n  "), strings.Join(got[1], "\n  "))
	}
}
