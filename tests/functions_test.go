package tests

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

const (
	counterLib = "#!lua name=counters\n" +
		"redis.register_function('bump', function(keys, args) return redis.call('incrby', keys[1], args[1]) end)\n" +
		"redis.register_function{function_name='peek', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads a counter'}\n"
	// A library long enough for Redis to compress it with LZF in its dump.
	longLib = "#!lua name=long\n" +
		"-- padding padding padding padding padding padding padding padding padding padding\n" +
		"-- padding padding padding padding padding padding padding padding padding padding\n" +
		"redis.register_function('long_one', function() return 'one' end)\n"
)

// TestFunctionsSurviveRestart: libraries are persisted like data: after a
// clean restart and after a crash they are listed and callable, FLUSHALL
// leaves them, and a deleted or flushed library stays gone.
func TestFunctionsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	c := dialRaw(t, srv.Addr())
	mustOK := func(c *rawConn, args ...string) resp.Value {
		t.Helper()
		v := c.do(args...)
		if v.Kind == resp.KindError {
			t.Fatalf("%q: %v", args, v)
		}
		return v
	}
	mustOK(c, "FUNCTION", "LOAD", counterLib)
	mustOK(c, "FUNCTION", "LOAD", longLib)
	mustOK(c, "FUNCTION", "LOAD", "#!lua name=gone\nredis.register_function('gone', function() return 0 end)")
	mustOK(c, "FUNCTION", "DELETE", "gone")
	mustOK(c, "FCALL", "bump", "1", "n", "5")
	mustOK(c, "FLUSHALL")
	mustOK(c, "FCALL", "bump", "1", "n", "2")
	listing := c.do("FUNCTION", "LIST", "WITHCODE").String()
	srv.Close()

	srv = startServer(t, withPersistence(dir))
	c = dialRaw(t, srv.Addr())
	if got := c.do("FUNCTION", "LIST", "WITHCODE").String(); got != listing {
		t.Fatalf("after restart:\n%s\nbefore:\n%s", got, listing)
	}
	if v := c.do("FCALL_RO", "peek", "1", "n"); v.Str != "2" {
		t.Fatalf("peek after restart: %v", v)
	}
	mustOK(c, "FUNCTION", "LOAD", "REPLACE", strings.Replace(longLib, "'one'", "'two'", 1))
	if err := srv.Crash(); err != nil {
		t.Fatal(err)
	}

	srv = startServer(t, withPersistence(dir))
	c = dialRaw(t, srv.Addr())
	if v := c.do("FCALL", "long_one", "0"); v.Str != "two" {
		t.Fatalf("replaced library after a crash: %v", v)
	}
	if v := c.do("FCALL", "gone", "0"); v.Str != "ERR Function not found" {
		t.Fatalf("deleted library came back: %v", v)
	}
	mustOK(c, "FUNCTION", "FLUSH")
	srv.Close()
	srv = startServer(t, withPersistence(dir))
	if v := dialRaw(t, srv.Addr()).do("FUNCTION", "LIST"); len(v.Elems) != 0 {
		t.Fatalf("flushed libraries came back: %v", v)
	}
}

// TestFunctionDumpCrossRestore: a payload from FUNCTION DUMP restores on
// the other server, both ways, with the same libraries listed after; one
// library dumps to the same bytes on both (LZF-compressed when long).
func TestFunctionDumpCrossRestore(t *testing.T) {
	redisAddr := realRedis(t)
	rev := dialRaw(t, startServer(t).Addr())
	red := dialRaw(t, redisAddr)
	for _, lib := range []string{counterLib, longLib} {
		var dumps []string
		for _, c := range []*rawConn{rev, red} {
			c.do("FUNCTION", "FLUSH")
			c.do("FUNCTION", "LOAD", lib)
			dumps = append(dumps, c.do("FUNCTION", "DUMP").Str)
		}
		if dumps[0] != dumps[1] {
			t.Fatalf("FUNCTION DUMP differs:\nrevolver %q\nredis    %q", dumps[0], dumps[1])
		}
	}
	for from, to := range map[*rawConn]*rawConn{rev: red, red: rev} {
		from.do("FUNCTION", "FLUSH")
		to.do("FUNCTION", "FLUSH")
		for _, lib := range []string{counterLib, longLib} {
			if v := from.do("FUNCTION", "LOAD", lib); v.Kind == resp.KindError {
				t.Fatal(v)
			}
		}
		payload := from.do("FUNCTION", "DUMP")
		if v := to.do("FUNCTION", "RESTORE", payload.Str); v.Str != "OK" {
			t.Fatalf("restore: %v", v)
		}
		for _, lib := range []string{"counters", "long"} {
			want := from.do("FUNCTION", "LIST", "LIBRARYNAME", lib, "WITHCODE")
			got := to.do("FUNCTION", "LIST", "LIBRARYNAME", lib, "WITHCODE")
			if len(got.Elems) != 1 || !sameLibrary(want.Elems[0], got.Elems[0]) {
				t.Fatalf("library %s after restore:\n%s\nwant\n%s", lib, got, want)
			}
		}
		if v := to.do("FCALL", "long_one", "0"); v.Str != "one" {
			t.Fatalf("restored function: %v", v)
		}
	}
}

// sameLibrary compares two FUNCTION LIST entries, ignoring the order in
// which functions are listed (Redis's is its hash order).
func sameLibrary(a, b resp.Value) bool {
	norm := func(v resp.Value) string {
		var parts []string
		for i := 0; i+1 < len(v.Elems); i += 2 {
			if v.Elems[i].Str == "functions" {
				var fs []string
				for _, f := range v.Elems[i+1].Elems {
					fs = append(fs, f.String())
				}
				slices.Sort(fs)
				parts = append(parts, strings.Join(fs, "|"))
				continue
			}
			parts = append(parts, v.Elems[i].String()+"="+v.Elems[i+1].String())
		}
		return strings.Join(parts, ";")
	}
	return norm(a) == norm(b)
}

// TestFunctionLoadErrorsRevolver checks what the differential script
// cannot: the interpreter words syntax errors its own way, so only the
// position is Redis's; and a library that loops is stopped at the load
// timeout without taking the server with it.
func TestFunctionLoadErrorsRevolver(t *testing.T) {
	c := dialRaw(t, startServer(t).Addr())
	v := c.do("FUNCTION", "LOAD", "#!lua name=c\n\nreturn +")
	if !strings.HasPrefix(v.Str, "ERR Error compiling function: user_function:3: ") {
		t.Fatalf("compile error: %v", v)
	}
	start := time.Now()
	v = c.do("FUNCTION", "LOAD", "#!lua name=c\nlocal i = 0\nwhile true do i = i + 1 end")
	if v.Str != "ERR Error registering functions: ERR FUNCTION LOAD timeout" {
		t.Fatalf("looping library: %v", v)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the load timeout took %v", d)
	}
	if v := c.do("PING"); v.Str != "PONG" {
		t.Fatalf("after the timeout: %v", v)
	}
}
