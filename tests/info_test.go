package tests

import (
	"github.com/revolver-db/revolver/commands"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// infoSections parses INFO text into its headers (in order) and fields,
// checking the layout Redis uses: "# Header" lines, "name:value" lines,
// sections separated by one empty line, CRLF line ends.
func infoSections(t *testing.T, text string) (headers []string, fields map[string]string) {
	t.Helper()
	fields = map[string]string{}
	if text == "" {
		return nil, fields
	}
	if !strings.HasSuffix(text, "\r\n") {
		t.Fatalf("INFO does not end with CRLF: %q", text[max(0, len(text)-20):])
	}
	lines := strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "# "):
			if i > 0 && lines[i-1] != "" {
				t.Errorf("header %q not preceded by an empty line", l)
			}
			headers = append(headers, l[2:])
		case l == "":
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "# ") {
				t.Errorf("empty line %d not followed by a header", i)
			}
		default:
			k, v, ok := strings.Cut(l, ":")
			if !ok || k == "" || strings.ContainsAny(k, " \t") {
				t.Errorf("bad INFO line %q", l)
			}
			if _, dup := fields[k]; dup {
				t.Errorf("field %s appears twice", k)
			}
			fields[k] = v
		}
	}
	return headers, fields
}

func info(t *testing.T, c *rawConn, sections ...string) (headers []string, fields map[string]string) {
	t.Helper()
	v := c.do(append([]string{"INFO"}, sections...)...)
	text := v.Str
	switch v.Kind {
	case resp.KindBulk:
	case resp.KindVerbatim:
		if !strings.HasPrefix(text, "txt:") {
			t.Fatalf("INFO verbatim format: %q", text[:min(10, len(text))])
		}
		text = text[4:]
	default:
		t.Fatalf("INFO reply: %s", v)
	}
	return infoSections(t, text)
}

// TestInfoFields checks the fields that redis-cli --stat, redis_exporter
// and client libraries read.
func TestInfoFields(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	c.do("SET", "a", "1")
	c.do("SET", "b", "2", "EX", "100")
	c.do("SELECT", "2")
	c.do("SET", "c", "3")
	c.do("SELECT", "0")
	other := dialRaw(t, srv.Addr())
	other.do("PING")

	headers, f := info(t, c)
	want := append([]string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules",
		"Errorstats", "Cluster", "Keyspace"}, familySections()...)
	if strings.Join(headers, ",") != strings.Join(want, ",") {
		t.Errorf("INFO sections %v, want %v", headers, want)
	}
	if !regexp.MustCompile(`^7\.0\.\d+$`).MatchString(f["redis_version"]) {
		t.Errorf("redis_version %q", f["redis_version"])
	}
	checks := map[string]string{
		"revolver_version": `^\d+\.\d+\.\d+`, "redis_mode": `^standalone$`, "tcp_port": `^\d+$`,
		"uptime_in_seconds": `^\d+$`, "run_id": `^[0-9a-f]{40}$`, "process_id": `^\d+$`,
		"connected_clients": `^2$`, "blocked_clients": `^0$`, "maxclients": `^10000$`,
		"used_memory": `^[1-9]\d*$`, "used_memory_human": `^[\d.]+[BKMGT]$`, "used_memory_rss": `^\d+$`,
		"used_memory_peak": `^\d+$`, "maxmemory": `^0$`, "maxmemory_policy": `^noeviction$`,
		"mem_fragmentation_ratio": `^\d+\.\d\d$`, "loading": `^0$`, "rdb_changes_since_last_save": `^\d+$`,
		"rdb_bgsave_in_progress": `^0$`, "rdb_last_save_time": `^\d+$`, "aof_enabled": `^0$`,
		"aof_rewrite_in_progress": `^0$`, "total_connections_received": `^2$`,
		"total_commands_processed": `^\d+$`, "instantaneous_ops_per_sec": `^\d+$`, "rejected_connections": `^0$`,
		"expired_keys": `^0$`, "evicted_keys": `^0$`, "keyspace_hits": `^\d+$`, "keyspace_misses": `^\d+$`,
		"pubsub_channels": `^0$`, "pubsub_patterns": `^0$`, "total_error_replies": `^0$`, "role": `^master$`,
		"connected_slaves": `^0$`, "master_repl_offset": `^0$`, "used_cpu_sys": `^\d+\.\d{6}$`,
		"used_cpu_user": `^\d+\.\d{6}$`, "cluster_enabled": `^0$`,
		"db0": `^keys=2,expires=1,avg_ttl=\d+$`, "db2": `^keys=1,expires=0,avg_ttl=\d+$`,
	}
	for k, re := range checks {
		v, ok := f[k]
		if !ok {
			t.Errorf("INFO has no %s", k)
			continue
		}
		if !regexp.MustCompile(re).MatchString(v) {
			t.Errorf("%s:%s does not match %s", k, v, re)
		}
	}
	if _, ok := f["db1"]; ok {
		t.Error("an empty database must not have a keyspace line")
	}

	// Counters move.
	before, _ := strconv.Atoi(f["total_commands_processed"])
	for i := 0; i < 5; i++ {
		c.do("PING")
	}
	_, f = info(t, c, "stats")
	if after, _ := strconv.Atoi(f["total_commands_processed"]); after < before+5 {
		t.Errorf("total_commands_processed went from %d to %d after 5 commands", before, after)
	}
	c.do("NOSUCHCOMMAND")
	_, f = info(t, c, "STATS")
	if f["total_error_replies"] != "1" {
		t.Errorf("total_error_replies after one error: %s", f["total_error_replies"])
	}
	other.conn.Close()
	waitFor(t, 5*time.Second, "connected_clients to drop", func() bool {
		_, f := info(t, c, "clients")
		return f["connected_clients"] == "1"
	})
	sub := dialRaw(t, srv.Addr())
	sub.do("SUBSCRIBE", "x")
	sub.do("PSUBSCRIBE", "y*")
	_, f = info(t, c, "stats")
	if f["pubsub_channels"] != "1" || f["pubsub_patterns"] != "1" {
		t.Errorf("pubsub_channels %s pubsub_patterns %s", f["pubsub_channels"], f["pubsub_patterns"])
	}
}

// TestInfoSections: several sections at once, in Redis's order whatever
// the order asked; all and everything; unknown sections show nothing.
func TestInfoSections(t *testing.T) {
	families := "," + strings.Join(familySections(), ",")
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	c.do("SET", "k", "v")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"keyspace", "server"}, "Server,Keyspace"},
		{[]string{"Clients", "MEMORY", "nosuch"}, "Clients,Memory"},
		{[]string{"cpu", "cpu"}, "CPU"},
		{[]string{"nosuch"}, ""},
		// The native families' sections come last, in INFO's default too.
		{[]string{"default"}, "Server,Clients,Memory,Persistence,Stats,Replication,CPU,Modules,Errorstats,Cluster,Keyspace" + families},
		{[]string{"default", "commandstats"}, "Server,Clients,Memory,Persistence,Stats,Replication,CPU,Modules,Commandstats,Errorstats,Cluster,Keyspace" + families},
		{[]string{"all"}, "Server,Clients,Memory,Persistence,Stats,Replication,CPU,Modules,Commandstats,Errorstats,Latencystats,Cluster,Keyspace" + families},
		{[]string{"everything"}, "Server,Clients,Memory,Persistence,Stats,Replication,CPU,Modules,Commandstats,Errorstats,Latencystats,Cluster,Keyspace" + families},
		{[]string{"module_list"}, "Modules"},
		{[]string{"DELAY", "server"}, "Server,Delay"},
	}
	for _, tc := range cases {
		headers, _ := info(t, c, tc.args...)
		if got := strings.Join(headers, ","); got != tc.want {
			t.Errorf("INFO %v: sections %q, want %q", tc.args, got, tc.want)
		}
	}
	_, f := info(t, c, "commandstats")
	if !regexp.MustCompile(`^calls=\d+,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=0$`).
		MatchString(f["cmdstat_set"]) {
		t.Errorf("cmdstat_set:%s", f["cmdstat_set"])
	}
	if _, ok := f["cmdstat_info"]; !ok {
		t.Errorf("commandstats without INFO itself: %v", f)
	}
	c3 := dialRaw(t, srv.Addr())
	c3.do("HELLO", "3")
	if v := c3.do("INFO", "server"); v.Kind != resp.KindVerbatim || !strings.HasPrefix(v.Str, "txt:# Server\r\n") {
		t.Errorf("RESP3 INFO must be a txt verbatim string: %s", v)
	}
}

// TestInfoMatchesRedisLayout compares the section headers of INFO
// everything and the field names of the sections tools read most with
// redis-server's: every field Revolver shows there is one Redis shows,
// in the same relative order.
func TestInfoMatchesRedisLayout(t *testing.T) {
	redisAddr := realRedis(t)
	srv := startServer(t)
	red, rev := dialRaw(t, redisAddr), dialRaw(t, srv.Addr())
	red.do("SET", "infokey", "v")
	rev.do("SET", "infokey", "v")
	wh, _ := info(t, red, "everything")
	gh, _ := info(t, rev, "everything")
	gh = slices.DeleteFunc(gh, func(h string) bool { return slices.Contains(familySections(), h) }) // Revolver's own
	if strings.Join(wh, ",") != strings.Join(gh, ",") {
		t.Errorf("INFO everything sections\n redis:    %v\n revolver: %v", wh, gh)
	}
	revolverOnly := map[string]bool{"revolver_version": true, "go_version": true, "pending_timers": true,
		"persistence": true, "appendfsync": true, "store_commits": true, "store_fsyncs": true,
		"store_records": true, "store_pending_records": true,
		"keyspace_flat_used": true, "keyspace_flat_held": true, "keyspace_flat_frag_ratio": true, "keyspace_objects": true,
		"rdb_skipped_native_keys": true, "console_engine_reads": true, "console_engine_read_max_usec": true,
		"console_engine_read_avg_usec": true}
	for _, sec := range []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "cluster"} {
		order := func(c *rawConn) []string {
			v := c.do("INFO", sec)
			text := strings.TrimPrefix(v.Str, "txt:")
			var keys []string
			for _, l := range strings.Split(text, "\r\n") {
				if k, _, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "#") {
					keys = append(keys, k)
				}
			}
			return keys
		}
		want, got := order(red), order(rev)
		pos := map[string]int{}
		for i, k := range want {
			pos[k] = i
		}
		last := -1
		for _, k := range got {
			if revolverOnly[k] || k == "rdb_last_save_skipped_native_keys" { // dump.rdb's natives left out
				continue
			}
			p, ok := pos[k]
			if !ok {
				t.Errorf("INFO %s: field %s is not one of Redis's", sec, k)
				continue
			}
			if p < last {
				t.Errorf("INFO %s: field %s is out of Redis's order", sec, k)
			}
			last = p
		}
	}
}

// familySections are the headers of the native families' INFO sections,
// which follow Redis's own in INFO, INFO default, all and everything.
func familySections() []string {
	var out []string
	for _, f := range commands.Families() {
		if f.Info != nil {
			out = append(out, f.Info.Title)
		}
	}
	return out
}
