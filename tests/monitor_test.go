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

// TestMonitorReplyOff: to Redis a MONITOR line is a reply, not a push, so
// a feed under CLIENT REPLY OFF gets none, and after SKIP none until its
// next command ends (that command's line included); the line of the
// feed's own command follows that command's reply.
func TestMonitorReplyOff(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		m, other := dialRaw(t, addr), dialRaw(t, addr)
		var got []string
		// expect reads m's frames until one reads last; each step waits
		// for it, so the two connections' commands run in a known order.
		expect := func(last string) {
			t.Helper()
			for {
				v := m.read()
				e := string(v.Kind) + v.Str
				if mm := monitorPrefix.FindStringSubmatch("+" + v.Str); v.Kind == resp.KindSimple && mm != nil {
					e = monitorEntry(mm)
				}
				got = append(got, e)
				if e == last {
					return
				}
			}
		}
		m.send("CLIENT", "REPLY", "OFF")
		m.send("MONITOR")
		other.do("SET", "a", "1")
		m.send("CLIENT", "REPLY", "ON")
		expect(`[0] "CLIENT" "REPLY" "ON"`)
		other.do("SET", "b", "1")
		expect(`[0] "SET" "b" "1"`)
		m.send("CLIENT", "REPLY", "SKIP")
		expect(`[0] "CLIENT" "REPLY" "SKIP"`)
		other.do("PING", "sync")
		m.send("PING")
		m.send("CLIENT", "REPLY", "ON")
		expect(`[0] "CLIENT" "REPLY" "ON"`)
		other.do("SET", "c", "1")
		expect(`[0] "SET" "c" "1"`)
		want := []string{"+OK", `[0] "CLIENT" "REPLY" "ON"`, `[0] "SET" "b" "1"`, `[0] "CLIENT" "REPLY" "SKIP"`,
			"+OK", `[0] "CLIENT" "REPLY" "ON"`, `[0] "SET" "c" "1"`}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("monitor under CLIENT REPLY:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	})
}
