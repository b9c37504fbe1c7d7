package tests

import (
	"encoding/binary"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/server"
)

// Redis's files, so that a swap-in is a swap: SAVE and BGSAVE write a
// dump.rdb redis-server loads, a Redis data directory is usable as dir
// (Revolver's files go in dir/revolver, everything else is left alone), and
// --import-rdb loads Redis's dump on a first start.

// redisTypes are the types a redis-server holds; Revolver's own are left
// out of its dumps.
var redisTypes = []string{"string", "list", "set", "zset", "hash", "stream"}

// fillNatives stores keys of Revolver's own types in database 9 and
// returns how many.
func fillNatives(t *testing.T, addr string) int64 {
	c := dialRaw(t, addr)
	for _, cmd := range [][]string{
		{"SELECT", "9"},
		{"DELAY.ADD", "timers", "t1", "IN", "600000", "PAYLOAD", "p"},
		{"QUEUE.PUSH", "jobs", "payload", "ID", "j1"},
		{"UV.ADD", "uv", "u1", "u2"},
		{"SET", "plain-in-9", "v"},
	} {
		if v := c.do(cmd...); v.String() == "" || strings.HasPrefix(v.String(), "(error)") {
			t.Fatalf("%v: %s", cmd, v)
		}
	}
	return 3
}

// sameDataset compares every database of two servers key by key (type,
// value, deadline to the millisecond) and their function libraries. Keys
// of Revolver's own types on want's side are not expected on got's.
func sameDataset(t *testing.T, wantAddr, gotAddr string) {
	t.Helper()
	compared := 0
	for n := range 16 {
		w, g := redisDB(t, wantAddr, n), redisDB(t, gotAddr, n)
		var want []string
		for _, k := range w.Keys(ctx, "*").Val() {
			if slices.Contains(redisTypes, w.Type(ctx, k).Val()) {
				want = append(want, k)
			}
		}
		got := g.Keys(ctx, "*").Val()
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			t.Errorf("db %d: keys %q, want %q", n, got, want)
			continue
		}
		for _, k := range want {
			if gv, wv := keyValue(t, g, k), keyValue(t, w, k); gv != wv {
				t.Errorf("db %d key %q: %.300s\n want %.300s", n, k, gv, wv)
			}
			if ga, wa := g.Do(ctx, "PEXPIRETIME", k).Val(), w.Do(ctx, "PEXPIRETIME", k).Val(); ga != wa {
				t.Errorf("db %d key %q: deadline %v, want %v", n, k, ga, wa)
			}
			compared++
		}
	}
	if compared < 30 {
		t.Errorf("only %d keys compared", compared)
	}
	fl := func(addr string) string {
		return redisDB(t, addr, 0).Do(ctx, "FUNCTION", "LIST", "WITHCODE").String()
	}
	if g, w := fl(gotAddr), fl(wantAddr); g != w {
		t.Errorf("function libraries: %s\n want %s", g, w)
	}
}

// redisOnDump copies file to a directory of its own as dump.rdb and starts
// a redis-server on it.
func redisOnDump(t *testing.T, file string) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return startRedisOnRDB(t, dir)
}

// waitBGSave waits for the BGSAVE running on c to end, and checks it
// succeeded.
func waitBGSave(t *testing.T, c *rawConn) {
	t.Helper()
	waitFor(t, 30*time.Second, "the background save to end", func() bool {
		_, f := info(t, c, "persistence")
		return f["rdb_bgsave_in_progress"] == "0"
	})
	if _, f := info(t, c, "persistence"); f["rdb_last_bgsave_status"] != "ok" {
		t.Fatalf("BGSAVE failed: %v", f)
	}
}

// TestSaveWritesRedisDump: SAVE and BGSAVE, with persistence on and off,
// write dir/dbfilename, which redis-server loads to the same dataset
// (every Redis type and encoding, deadlines, several databases, function
// libraries); Revolver's own types are left out and counted in INFO.
// rdbcompression and rdbchecksum are followed.
func TestSaveWritesRedisDump(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []serverOpt
		file string
	}{
		{"persistent", []serverOpt{withConfig("rdbcompression", "no")}, "dump.rdb"},
		{"memory", []serverOpt{withConfig("rdbchecksum", "no"), withConfig("dbfilename", "other.rdb")}, "other.rdb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := append([]serverOpt{withConfig("dir", dir)}, tc.opts...)
			if tc.name == "persistent" {
				opts = append(opts, withPersistence(dir))
			}
			addr := startServer(t, opts...).Addr()
			fillRedisForRDB(t, addr)
			natives := fillNatives(t, addr)
			c := dialRaw(t, addr)
			if v := c.do("SAVE"); v.Str != "OK" {
				t.Fatalf("SAVE: %s", v)
			}
			file := filepath.Join(dir, tc.file)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sum := binary.LittleEndian.Uint64(data[len(data)-8:])
			if (sum == 0) != (tc.name == "memory") {
				t.Errorf("checksum %x with rdbchecksum %s", sum, map[bool]string{true: "no", false: "yes"}[tc.name == "memory"])
			}
			if _, f := info(t, c, "persistence"); f["rdb_last_save_skipped_native_keys"] != strconv.FormatInt(natives, 10) {
				t.Errorf("rdb_last_save_skipped_native_keys %q, want %d", f["rdb_last_save_skipped_native_keys"], natives)
			}
			sameDataset(t, addr, redisOnDump(t, file))

			// BGSAVE: a later state, written from the checkpoint.
			r := redisDB(t, addr, 0)
			r.Set(ctx, "after-save", "v", time.Hour)
			r.Del(ctx, "777")
			redisDB(t, addr, 5).HSet(ctx, "db-hash", "new", "field")
			c.do("SWAPDB", "5", "9") // the checkpoint holds databases by their physical number
			if v := c.do("BGSAVE"); v.Str != "Background saving started" {
				t.Fatalf("BGSAVE: %s", v)
			}
			waitBGSave(t, c)
			sameDataset(t, addr, redisOnDump(t, file))
			if tc.name == "persistent" {
				if _, err := os.Stat(filepath.Join(dir, "revolver", "checkpoint")); err != nil {
					t.Errorf("no checkpoint beside the dump: %v", err)
				}
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{tc.file, "revolver"}) {
				t.Errorf("dir holds %q", names)
			}
		})
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// redisDataDir makes what a Redis data directory holds: redis-server's
// dump.rdb of every type (deadlines, a key that is past its deadline by the
// time the test goes on, databases 5 and 11, a function library), beside a
// config file and a log. It returns the directory and the still-running
// redis-server, which holds the dataset the dump should give.
func redisDataDir(t *testing.T) (string, string) {
	dir := t.TempDir()
	addr := startRealRedis(t, "--dir", dir)
	fillRedisForRDB(t, addr)
	r := redisDB(t, addr, 0)
	r.Set(ctx, "short-lived", "v", 300*time.Millisecond)
	if err := r.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // short-lived is past its deadline in the dump
	for name, text := range map[string]string{"redis.conf": "port 6379\ndir " + dir + "\n",
		"redis-server.log": "1:M 01 Jan 2026 00:00:00.000 * Ready to accept connections\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, addr
}

// snapshotFiles reads every file of dir but Revolver's own directory.
func snapshotFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range dirNames(t, dir) {
		if name == "revolver" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(data)
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: files %d, want %d", what, len(got), len(want))
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s changed (%d bytes, was %d)", what, name, len(got[name]), len(w))
		}
	}
}

// TestImportRDB: started with import-rdb on a directory where redis-server
// saved, Revolver loads the dump (every type, deadlines, databases, the
// function library; the key past its deadline skipped and counted), leaves
// Redis's files as they were, and never imports again: a key deleted after
// the import stays deleted across a restart. The dump it imported is then
// replaced by SAVE without a copy kept.
func TestImportRDB(t *testing.T) {
	dir, redisAddr := redisDataDir(t)
	before := snapshotFiles(t, dir)
	srv := startServer(t, withPersistence(dir), withConfig("import-rdb", "yes"))
	addr := srv.Addr()
	sameDataset(t, redisAddr, addr)
	c := dialRaw(t, addr)
	loaded := 0
	for _, keys := range redisKeys(t, addr) {
		loaded += len(keys)
	}
	if _, f := info(t, c, "persistence"); f["rdb_last_load_keys_expired"] != "1" ||
		f["rdb_last_load_keys_loaded"] != strconv.Itoa(loaded) {
		t.Errorf("INFO after the import: expired %s loaded %s, want 1 and %d", f["rdb_last_load_keys_expired"],
			f["rdb_last_load_keys_loaded"], loaded)
	}
	if v := c.do("FCALL", "rdbfn", "0", "hello"); v.Str != "hello" {
		t.Errorf("FCALL of the imported library: %s", v)
	}
	sameFiles(t, "after the import", snapshotFiles(t, dir), before)
	if _, err := os.Stat(filepath.Join(dir, "revolver", "import-rdb.pending")); !os.IsNotExist(err) {
		t.Errorf("the import marker is still there: %v", err)
	}

	// A restart does not import again.
	c.do("DEL", "777")
	srv.Close()
	srv = startServer(t, withPersistence(dir), withConfig("import-rdb", "yes"))
	c = dialRaw(t, srv.Addr())
	if v := c.do("EXISTS", "777"); v.Int != 0 {
		t.Error("a key deleted after the import came back: imported again")
	}
	if v := c.do("EXISTS", "ttl-string"); v.Int != 1 {
		t.Error("an imported key is gone after a restart")
	}
	sameFiles(t, "after a restart", snapshotFiles(t, dir), before)

	// The imported dump is this server's to replace.
	if v := c.do("SAVE"); v.Str != "OK" {
		t.Fatalf("SAVE: %s", v)
	}
	after := dirNames(t, dir)
	if !slices.Equal(after, []string{"dump.rdb", "redis-server.log", "redis.conf", "revolver"}) {
		t.Errorf("after SAVE dir holds %q", after)
	}
}

// TestImportRDBInterrupted: an import that did not finish (its marker is
// still there) is done again from empty at the next start: what the first
// attempt left is gone. Without import-rdb such a directory is refused.
func TestImportRDBInterrupted(t *testing.T) {
	dir, redisAddr := redisDataDir(t)
	srv := startServer(t, withPersistence(dir), withConfig("import-rdb", "yes"))
	redisDB(t, srv.Addr(), 0).Set(ctx, "not-in-the-dump", "v", 0)
	srv.Close()
	marker := filepath.Join(dir, "revolver", "import-rdb.pending")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.Port, cfg.Dir = 0, dir
	if s, err := server.Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil); err == nil {
		s.Close()
		t.Fatal("a directory with an unfinished import started without import-rdb")
	} else if !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("refusal: %v", err)
	}
	srv = startServer(t, withPersistence(dir), withConfig("import-rdb", "yes"))
	sameDataset(t, redisAddr, srv.Addr())
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the import marker is still there: %v", err)
	}
}

// TestRedisDataDirectory: without import-rdb, Revolver started on a
// directory holding a dump.rdb, a redis.conf and a log starts empty and
// leaves them untouched, its own files in dir/revolver; its first SAVE keeps
// the dump it did not write as dump.rdb.orig-<time> rather than destroy it.
// A directory an earlier Revolver laid out (db/ and log/ directly in it)
// still opens where it is.
func TestRedisDataDirectory(t *testing.T) {
	dir, _ := redisDataDir(t)
	before := snapshotFiles(t, dir)
	srv := startServer(t, withPersistence(dir))
	c := dialRaw(t, srv.Addr())
	if v := c.do("DBSIZE"); v.Int != 0 {
		t.Errorf("DBSIZE %d without import-rdb", v.Int)
	}
	c.do("SET", "mine", "1")
	sameFiles(t, "after the start", snapshotFiles(t, dir), before)
	if v := c.do("SAVE"); v.Str != "OK" {
		t.Fatalf("SAVE: %s", v)
	}
	var kept string
	for _, name := range dirNames(t, dir) {
		if strings.HasPrefix(name, "dump.rdb.orig-") {
			kept = name
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, kept)); kept == "" || string(data) != before["dump.rdb"] {
		t.Errorf("Redis's dump was not kept (dir holds %q)", dirNames(t, dir))
	}
	// The next save replaces the dump this server wrote, keeping nothing.
	if v := c.do("SAVE"); v.Str != "OK" {
		t.Fatalf("SAVE: %s", v)
	}
	if n := len(dirNames(t, dir)); n != 5 {
		t.Errorf("after a second SAVE dir holds %q", dirNames(t, dir))
	}
	srv.Close()

	// The legacy layout: an earlier Revolver's files directly in dir.
	legacy := t.TempDir()
	srv = startServer(t, withPersistence(legacy))
	redisDB(t, srv.Addr(), 0).Set(ctx, "old", "layout", 0)
	srv.Close()
	for _, name := range dirNames(t, filepath.Join(legacy, "revolver")) {
		if err := os.Rename(filepath.Join(legacy, "revolver", name), filepath.Join(legacy, name)); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(legacy, "revolver"))
	srv = startServer(t, withPersistence(legacy))
	if v := redisDB(t, srv.Addr(), 0).Get(ctx, "old").Val(); v != "layout" {
		t.Errorf("the legacy directory's key: %q", v)
	}
	if v := dialRaw(t, srv.Addr()).do("SAVE"); v.Str != "OK" {
		t.Fatalf("SAVE: %s", v)
	}
	for _, want := range []string{"db", "log", "checkpoint", "dump.rdb"} {
		if _, err := os.Stat(filepath.Join(legacy, want)); err != nil {
			t.Errorf("legacy layout: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(legacy, "revolver")); !os.IsNotExist(err) {
		t.Errorf("a legacy directory got a revolver/ subdirectory: %v", err)
	}
}
