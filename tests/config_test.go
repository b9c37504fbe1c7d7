package tests

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/server"
)

// configGet returns CONFIG GET pattern as a map.
func configGet(t *testing.T, c *rawConn, pattern string) map[string]string {
	t.Helper()
	v := c.do("CONFIG", "GET", pattern)
	if len(v.Elems)%2 != 0 {
		t.Fatalf("CONFIG GET %s: %s", pattern, v)
	}
	out := map[string]string{}
	for i := 0; i < len(v.Elems); i += 2 {
		out[v.Elems[i].Str] = v.Elems[i+1].Str
	}
	return out
}

// mutableValues gives, for each parameter CONFIG SET changes, values to
// set and what CONFIG GET then shows.
var mutableValues = map[string][][2]string{
	"appendfsync":                {{"always", "always"}, {"NO", "no"}, {"everysec", "everysec"}},
	"requirepass":                {{"", ""}},
	"maxclients":                 {{"500", "500"}, {"4294967295", "4294967295"}},
	"maxmemory":                  {{"1kb", "1024"}, {"5m", "5000000"}, {"2GB", "2147483648"}, {"0", "0"}},
	"timeout":                    {{"30", "30"}, {"2147483647", "2147483647"}},
	"tcp-keepalive":              {{"0", "0"}, {"60", "60"}},
	"notify-keyspace-events":     {{"KEA", "AKE"}, {"Ex", "xE"}, {"K$lshzxegtmd", "AKm"}, {"Kn", "nK"}, {"AKEm", "AKEm"}},
	"loglevel":                   {{"debug", "debug"}, {"VERBOSE", "verbose"}, {"warning", "warning"}},
	"proto-max-bulk-len":         {{"1mb", "1048576"}, {"2000000", "2000000"}},
	"slowlog-log-slower-than":    {{"-1", "-1"}, {"0", "0"}, {"123", "123"}},
	"slowlog-max-len":            {{"0", "0"}, {"1000", "1000"}},
	"client-output-buffer-limit": {{"pubsub 1mb 512kb 30", "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 30"}},
	"save":                       {{"", ""}},
	"appendonly":                 {{"no", "no"}},
}

// TestConfigSetGetRoundTrip sets every mutable parameter to several values
// and reads them back, and sets every other parameter to the value it has.
func TestConfigSetGetRoundTrip(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	all := configGet(t, c, "*")
	if len(all) < 40 {
		t.Fatalf("CONFIG GET * returned %d parameters", len(all))
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		orig := all[name]
		for _, tv := range mutableValues[name] {
			if v := c.do("CONFIG", "SET", name, tv[0]); v.Str != "OK" {
				t.Errorf("CONFIG SET %s %q: %s", name, tv[0], v)
				continue
			}
			if got := configGet(t, c, name)[name]; got != tv[1] {
				t.Errorf("CONFIG SET %s %q reads back %q, want %q", name, tv[0], got, tv[1])
			}
		}
		// Setting the value it has is accepted (unless Redis says the
		// parameter is immutable, or protected) and changes nothing.
		v := c.do("CONFIG", "SET", name, orig)
		if v.Str != "OK" && !strings.HasSuffix(v.Str, "can't set immutable config") &&
			!strings.HasSuffix(v.Str, "can't set protected config") {
			t.Errorf("CONFIG SET %s to its own value %q: %s", name, orig, v)
		}
		if got := configGet(t, c, name)[name]; got != orig {
			t.Errorf("%s is %q after restoring %q", name, got, orig)
		}
	}
	for name := range mutableValues {
		if _, ok := all[name]; !ok {
			t.Errorf("CONFIG GET * lacks the mutable parameter %s", name)
		}
	}
}

// TestConfigGetPatterns: glob patterns, several arguments, case.
func TestConfigGetPatterns(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	keys := func(m map[string]string) string {
		var k []string
		for n := range m {
			k = append(k, n)
		}
		sort.Strings(k)
		return strings.Join(k, " ")
	}
	cases := map[string]string{
		"maxmemory*":      "maxmemory maxmemory-clients maxmemory-eviction-tenacity maxmemory-policy maxmemory-samples",
		"*max-len":        "acllog-max-len slowlog-max-len",
		"slowlog-?ax-le?": "slowlog-max-len",
		"[st]imeout":      "timeout",
		"TIMEOUT":         "TIMEOUT",
		"Time*":           "timeout",
		"zset-max-*":      "zset-max-listpack-entries zset-max-listpack-value zset-max-ziplist-entries zset-max-ziplist-value",
		"nosuch*":         "",
	}
	for pattern, want := range cases {
		if got := keys(configGet(t, c, pattern)); got != want {
			t.Errorf("CONFIG GET %s: %q, want %q", pattern, got, want)
		}
	}
	v := c.do("CONFIG", "GET", "timeout", "maxmemory", "TIMEOUT", "time*")
	if len(v.Elems) != 4 || v.Elems[0].Str != "timeout" || v.Elems[2].Str != "maxmemory" {
		t.Errorf("CONFIG GET with several arguments: %s", v)
	}
}

// TestConfigSetAtomic: one bad value (or name) anywhere and nothing
// changes.
func TestConfigSetAtomic(t *testing.T) {
	srv := startServer(t)
	c := dialRaw(t, srv.Addr())
	before := configGet(t, c, "*")
	bad := [][]string{
		{"timeout", "7", "maxmemory", "1mb", "slowlog-max-len", "abc"},
		{"maxmemory", "abc", "timeout", "7"},
		{"timeout", "7", "nosuchparam", "1"},
		{"timeout", "7", "databases", "4"},
		{"timeout", "7", "timeout", "8"},
		{"notify-keyspace-events", "KEA", "client-output-buffer-limit", "bogus 1 2 3"},
	}
	for _, args := range bad {
		if v := c.do(append([]string{"CONFIG", "SET"}, args...)...); !strings.HasPrefix(v.Str, "ERR ") {
			t.Errorf("CONFIG SET %v: %s", args, v)
		}
		after := configGet(t, c, "*")
		for k, v := range before {
			if after[k] != v {
				t.Errorf("after failed CONFIG SET %v, %s changed from %q to %q", args, k, v, after[k])
			}
		}
	}
	if v := c.do("CONFIG", "SET", "timeout", "7", "maxmemory", "1mb"); v.Str != "OK" {
		t.Fatalf("good CONFIG SET: %s", v)
	}
	if got := configGet(t, c, "timeout")["timeout"] + " " + configGet(t, c, "maxmemory")["maxmemory"]; got != "7 1048576" {
		t.Errorf("after CONFIG SET: %s", got)
	}
}

// TestConfigResetStatMatchesRedis runs the same commands on both servers,
// then CONFIG RESETSTAT, and compares the statistics INFO then shows.
func TestConfigResetStatMatchesRedis(t *testing.T) {
	redisAddr := realRedis(t)
	srv := startServer(t)
	fields := []string{"total_commands_processed", "total_connections_received", "rejected_connections",
		"expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses", "total_error_replies"}
	for _, addr := range []string{redisAddr, srv.Addr()} {
		c := dialRaw(t, addr)
		c.do("SET", "rs", "v")
		c.do("GET", "rs")
		c.do("GET", "nosuch")
		c.do("NOSUCHCOMMAND")
		c.do("SET", "gone", "v", "PX", "1")
		waitFor(t, 5*time.Second, "the key to expire", func() bool {
			_, f := info(t, c, "stats")
			return c.do("EXISTS", "gone").Int == 0 && f["expired_keys"] != "0"
		})
		dialRaw(t, addr).do("PING")
		if v := c.do("CONFIG", "RESETSTAT"); v.Str != "OK" {
			t.Fatalf("%s: CONFIG RESETSTAT: %s", addr, v)
		}
		_, f := info(t, c, "stats")
		for _, k := range fields {
			want := "0"
			if k == "total_commands_processed" {
				want = "1" // RESETSTAT itself
			}
			if f[k] != want {
				t.Errorf("%s: %s is %s after CONFIG RESETSTAT, want %s", addr, k, f[k], want)
			}
		}
		_, cs := info(t, c, "commandstats")
		delete(cs, "cmdstat_info") // the INFO just before
		if len(cs) != 1 || !strings.HasPrefix(cs["cmdstat_config|resetstat"], "calls=1,") {
			t.Errorf("%s: commandstats after RESETSTAT: %v", addr, cs)
		}
	}
}

// startFromArgs starts an in-process server from redis-server style
// arguments, as cmd/revolver does.
func startFromArgs(t *testing.T, args ...string) *server.Server {
	t.Helper()
	cfg, err := server.ParseArgs(args)
	if err != nil {
		t.Fatalf("ParseArgs %v: %v", args, err)
	}
	s, err := server.Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConfigRewrite: CONFIG REWRITE updates the file in place, keeps its
// comments, and a server started from it has the same configuration.
func TestConfigRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "revolver.conf")
	original := "# my settings\nmaxmemory 1mb\n\ntimeout 5\ntimeout 6\nhash-max-ziplist-entries 512\n"
	if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", path, "--port", "0", "--persistence", "off", "--dir", dir}
	srv := startFromArgs(t, args...)
	c := dialRaw(t, srv.Addr())
	if got := configGet(t, c, "maxmemory")["maxmemory"]; got != "1048576" {
		t.Fatalf("maxmemory from the file: %s", got)
	}
	for _, kv := range [][2]string{{"maxmemory", "2mb"}, {"timeout", "0"}, {"notify-keyspace-events", "KEA"},
		{"slowlog-max-len", "64"}, {"requirepass", "p w\"\\\n\x01é"}, {"client-output-buffer-limit", "pubsub 1mb 512kb 30"},
		{"save", "3600 1 300 100"}, {"slave-priority", "5"}, {"maxmemory-clients", "10%"}, {"shutdown-on-sigterm", "nosave now"}} {
		if v := c.do("CONFIG", "SET", kv[0], kv[1]); v.Str != "OK" {
			t.Fatalf("CONFIG SET %s: %s", kv[0], v)
		}
	}
	if v := c.do("CONFIG", "REWRITE"); v.Str != "OK" {
		t.Fatalf("CONFIG REWRITE: %s", v)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"# my settings\nmaxmemory 2097152\n\ntimeout 0\nhash-max-listpack-entries 512\n",
		"# Generated by CONFIG REWRITE\n", "\nnotify-keyspace-events AKE\n", "\nslowlog-max-len 64\n",
		"\nclient-output-buffer-limit \"normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 30\"\n",
		"\nsave \"3600 1 300 100\"\n", "\nreplica-priority 5\n", "\nmaxmemory-clients 10%\n", "\nshutdown-on-sigterm \"nosave now\"\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "timeout") != 1 {
		t.Errorf("a repeated option must be written once:\n%s", text)
	}
	before := configGet(t, c, "*")
	srv.Close()

	again := startFromArgs(t, args...)
	c2 := dialRaw(t, again.Addr())
	if v := c2.do("AUTH", "p w\"\\\n\x01é"); v.Str != "OK" {
		t.Fatalf("AUTH with the rewritten password: %s", v)
	}
	after := configGet(t, c2, "*")
	for k, v := range before {
		if k != "port" && after[k] != v {
			t.Errorf("after restart %s is %q, was %q", k, after[k], v)
		}
	}
	// A second rewrite of an unchanged configuration changes nothing but
	// the default user's line: a user line loads as a reset user plus its
	// rules, which adds sanitize-payload, as in Redis.
	if v := c2.do("CONFIG", "REWRITE"); v.Str != "OK" {
		t.Fatalf("second CONFIG REWRITE: %s", v)
	}
	if !strings.Contains(text, "\nuser default on #") {
		t.Errorf("rewritten file lacks the default user:\n%s", text)
	}
	if data2, _ := os.ReadFile(path); strings.Replace(string(data2), "on sanitize-payload #", "on #", 1) != text {
		t.Errorf("second rewrite changed the file:\n%s\nthen\n%s", text, data2)
	}

	noFile := dialRaw(t, startServer(t).Addr())
	if v := noFile.do("CONFIG", "REWRITE"); v.Str != "ERR The server is running without a config file" {
		t.Errorf("CONFIG REWRITE without a file: %s", v)
	}
}
