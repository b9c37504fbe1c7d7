package tests

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// INFO errorstats and commandstats after the same commands on both
// servers: every error counts once where it is made (a blocked client's
// error included), a command fails when an error was counted while it ran,
// and a refusal is a rejected call.

// statsSnapshot is INFO errorstats, commandstats (times left out) and
// total_error_replies, sorted, without the commands a test uses to wait
// (whose counts depend on timing).
func statsSnapshot(c *rawConn) []string {
	usec := regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+,`)
	var out []string
	for _, section := range []string{"errorstats", "commandstats"} {
		for _, line := range strings.Split(c.do("INFO", section).Str, "\r\n") {
			if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "cmdstat_info:") ||
				strings.HasPrefix(line, "cmdstat_client|list:") {
				continue
			}
			out = append(out, usec.ReplaceAllString(line, ""))
		}
	}
	out = append(out, "total_error_replies:"+infoField(c, "stats", "total_error_replies"))
	sort.Strings(out)
	return out
}

// compareStats runs scenario on both servers from CONFIG RESETSTAT and
// compares the snapshots, and the replies the scenario returns.
func compareStats(t *testing.T, scenario func(t *testing.T, addr string) []string) {
	t.Helper()
	var got [2][]string
	for i, addr := range []string{realRedis(t), startServer(t).Addr()} {
		c := dialRaw(t, addr)
		c.do("FLUSHALL")
		c.do("CONFIG", "RESETSTAT")
		replies := scenario(t, addr)
		got[i] = append(replies, statsSnapshot(c)...)
	}
	if testing.Verbose() {
		t.Logf("revolver:\n  %s", strings.Join(got[1], "\n  "))
	}
	if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") {
		t.Errorf("redis:\n  %s\nrevolver:\n  %s", strings.Join(got[0], "\n  "), strings.Join(got[1], "\n  "))
	}
}

// waitBlocked waits until n clients are blocked.
func waitBlocked(t *testing.T, c *rawConn, n string) {
	t.Helper()
	waitFor(t, 5*time.Second, n+" blocked clients", func() bool { return infoField(c, "clients", "blocked_clients") == n })
}

func clientIDOf(c *rawConn) string { return strconv.FormatInt(c.do("CLIENT", "ID").Int, 10) }

// TestStatsBlockedClients: errors sent to blocked clients (a group
// destroyed, a stream deleted, CLIENT UNBLOCK ... ERROR) count in errorstats
// and fail the blocked command; CLIENT UNBLOCK fails the command even as a
// timeout, and fails itself for the error it sends; a served command
// succeeds; a timeout counts nothing more.
func TestStatsBlockedClients(t *testing.T) {
	compareStats(t, func(t *testing.T, addr string) []string {
		h := dialRaw(t, addr)
		var out []string
		h.do("XADD", "s", "1-1", "f", "v")
		h.do("XGROUP", "CREATE", "s", "g", "$")
		r1, r2, r3, r4, r5, r6 := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr),
			dialRaw(t, addr), dialRaw(t, addr)
		r1.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
		waitBlocked(t, h, "1")
		out = append(out, h.do("XGROUP", "DESTROY", "s", "g").String(), r1.read().String())
		h.do("XGROUP", "CREATE", "s", "g", "$")
		r2.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
		waitBlocked(t, h, "1")
		out = append(out, h.do("DEL", "s").String(), r2.read().String())
		id3, id4, id5 := clientIDOf(r3), clientIDOf(r4), clientIDOf(r5)
		r3.send("BLPOP", "l", "0")
		r4.send("BLMOVE", "l", "m", "LEFT", "LEFT", "0")
		r5.send("XREAD", "BLOCK", "0", "STREAMS", "s2", "$")
		waitBlocked(t, h, "3")
		out = append(out, h.do("CLIENT", "UNBLOCK", id3, "ERROR").String(), r3.read().String(),
			h.do("CLIENT", "UNBLOCK", id4, "TIMEOUT").String(), r4.read().String(),
			h.do("CLIENT", "UNBLOCK", id5).String(), r5.read().String(),
			h.do("CLIENT", "UNBLOCK", id5, "ERROR").String())
		r6.send("BLPOP", "l", "0")
		waitBlocked(t, h, "1")
		out = append(out, h.do("RPUSH", "l", "x").String(), r6.read().String(),
			r6.do("BLPOP", "l", "0.01").String())
		return out
	})
}

// TestStatsScripts: a command a script calls counts as a call (and as
// failed or rejected) of its own; its error counts once, so the script's
// error reply does not count it again, unless the script built the error
// table itself; errors nested in a script's reply count; an error's code
// is its first word within 32 bytes, else ERR.
func TestStatsScripts(t *testing.T) {
	compareStats(t, func(t *testing.T, addr string) []string {
		c := dialRaw(t, addr)
		c.do("SET", "s", "x")
		var out []string
		for _, script := range []string{
			"return redis.call('incr','s')",
			"return redis.pcall('incr','s')",
			"redis.pcall('incr','s'); return 1",
			"return redis.call('get','s')",
			"return redis.call('nosuch')",
			"return redis.call('get')",
			"return redis.pcall('get')",
			"return redis.call('config')",
			"return redis.call('multi')",
			"return redis.pcall('multi')",
			"return redis.error_reply('MY thing')",
			"return {err='X y'}",
			"error('boom')",
			"return {1, {err='NESTED a'}}",
			"return {1, redis.pcall('incr','s')}",
			"return {err='TOP b', ignore_error_stats_update=true}",
			"return {err='TOP2 b', ignore_error_stats_update=1}",
			"local t = redis.pcall('incr','s'); t['ignore_error_stats_update'] = nil; return t",
			"local t = redis.pcall('incr','s'); t['ignore_error_stats_update'] = false; return t",
			"error({err='RAISED x', ignore_error_stats_update=true})",
			"return pcall(redis.call, 'incr', 's')",
			"return {err='NOSPACE'}",
			"return {err='ABCDEFGHIJKLMNOPQRSTUVWXYZABCD x'}",
			"return {err='ABCDEFGHIJKLMNOPQRSTUVWXYZABCDE x'}",
			"return {err=' lead'}",
		} {
			out = append(out, c.do("EVAL", script, "0").String())
		}
		out = append(out, c.do("EVAL_RO", "return redis.call('set','a','b')", "0").String())
		c.send("MULTI")
		c.send("EVAL", "return {1, {err='INEXEC c'}}", "0")
		c.send("EXEC")
		out = append(out, c.read().String(), c.read().String(), c.read().String())
		return out
	})
}

// TestStatsRejected: a command refused for its number of arguments, at the
// top level or inside MULTI, is a rejected call; so is EXEC's own refusal.
func TestStatsRejected(t *testing.T) {
	compareStats(t, func(t *testing.T, addr string) []string {
		c := dialRaw(t, addr)
		var out []string
		for _, cmd := range [][]string{{"GET"}, {"GET", "a", "b"}, {"CONFIG"}, {"OBJECT"}, {"CONFIG", "GET"},
			{"NOSUCH"}, {"CONFIG", "NOSUCH"}, {"MULTI"}, {"GET"}, {"SET", "a"}, {"INCR", "a"}, {"NOSUCH"}, {"EXEC"},
			{"MULTI"}, {"SET", "k", "x"}, {"INCR", "k"}, {"EXEC"}, {"MULTI"}, {"EXEC", "x"}, {"EXEC"}} {
			out = append(out, c.do(cmd...).String())
		}
		return out
	})
}
