package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// monitorFeedUntil is monitorFeed reading until the line of the last
// command, PING "done", so the test need not count the lines.
func monitorFeedUntil(t *testing.T, addr string, commands [][]string) []string {
	t.Helper()
	mon := dialRaw(t, addr)
	if v := mon.do("MONITOR"); v.Str != "OK" {
		t.Fatalf("MONITOR: %s", v)
	}
	c := dialRaw(t, addr)
	for _, cmd := range commands {
		c.do(cmd...)
	}
	c.do("PING", "done")
	var out []string
	for {
		mon.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := mon.rd.Read()
		if err != nil {
			t.Fatalf("reading the monitor feed after\n  %s\n: %v", strings.Join(out, "\n  "), err)
		}
		m := monitorPrefix.FindStringSubmatch("+" + line.Str)
		if line.Kind != resp.KindSimple || m == nil {
			t.Fatalf("monitor line %q", line.Str)
		}
		out = append(out, monitorEntry(m))
		if m[3] == `"PING" "done"` {
			return out
		}
	}
}

// TestMonitorScriptCommands: MONITOR shows EVAL, EVALSHA, FCALL and their
// _RO forms before the commands their script runs, each of those as
// "[db lua]" on the script's database once it ran; commands a script is
// refused are not shown, failed ones are. A rejected EXEC, in MULTI or
// not, still shows.
func TestMonitorScriptCommands(t *testing.T) {
	redisAddr := realRedis(t)
	srv := startServer(t)
	const lib = "#!lua name=montest\n" +
		"redis.register_function('montest_w', function(k, a) redis.call('select', 3); return redis.call('set', k[1], a[1]) end)\n" +
		"redis.register_function{function_name='montest_r', callback=function(k) return redis.call('get', k[1]) end, flags={'no-writes'}}"
	commands := [][]string{
		{"SET", "s", "str"},
		{"EVAL", "redis.call('set','k','v'); redis.call('get','k'); redis.pcall('nosuch'); redis.pcall('incr','s'); " +
			"redis.pcall('get'); return redis.call('incr','n')", "1", "k"},
		{"SCRIPT", "LOAD", "return redis.call('ping')"},
		{"EVALSHA", "b3a02c833904802db9c34a3cf1292eee3246df3c", "0"},
		{"EVALSHA_RO", "b3a02c833904802db9c34a3cf1292eee3246df3c", "0"},
		{"EVAL", "return 1", "x"},                                    // bad numkeys: still shown
		{"EVALSHA", "0000000000000000000000000000000000000000", "0"}, // NOSCRIPT: still shown
		{"EVAL_RO", "return redis.pcall('set','a','1')", "0"},        // the SET is refused: not shown
		{"EVAL", "return redis.pcall('config','get','port')", "0"},
		{"FUNCTION", "LOAD", "REPLACE", lib},
		{"FCALL", "montest_w", "1", "kk", "vv"},
		{"FCALL_RO", "montest_r", "1", "kk"},
		{"FCALL", "nosuch", "0"},
		{"MULTI"},
		{"SET", "a", "1"},
		{"EVAL", "return redis.call('get','a')", "0"},
		{"EXEC"},
		{"MULTI"},
		{"SET", "a", "2"},
		{"EXEC", "x"}, // EXECABORT
		{"EXEC", "x"}, // outside MULTI too
		{"FUNCTION", "DELETE", "montest"},
	}
	want := monitorFeedUntil(t, redisAddr, commands)
	got := monitorFeedUntil(t, srv.Addr(), commands)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("MONITOR feed\n redis:\n  %s\n revolver:\n  %s", strings.Join(want, "\n  "), strings.Join(got, "\n  "))
	}
}
