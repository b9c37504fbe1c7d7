package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
	"github.com/revolver-db/revolver/server"
)

// withDir sets the data directory of a server without persistence: where
// SAVE writes its checkpoint.
func withDir(dir string) serverOpt { return func(c *server.Config) { c.Dir = dir } }

// saveFields are the INFO persistence fields SAVE and BGSAVE move.
var saveFields = []string{"rdb_changes_since_last_save", "rdb_bgsave_in_progress", "rdb_last_bgsave_status",
	"rdb_last_bgsave_time_sec", "rdb_current_bgsave_time_sec", "rdb_saves"}

// saveTranscript runs SAVE and BGSAVE steps on addr and renders their
// replies and INFO persistence's fields after each.
func saveTranscript(t *testing.T, addr string) []string {
	c := dialRaw(t, addr)
	var out []string
	state := func(step string) {
		t.Helper()
		_, f := info(t, c, "persistence")
		line := step + ":"
		for _, k := range saveFields {
			v := f[k]
			if k == "rdb_last_bgsave_time_sec" && (v == "0" || v == "1") {
				v = "0|1" // whole seconds: one may have begun while it ran
			}
			line += " " + k + "=" + v
		}
		if f["rdb_last_save_time"] != c.do("LASTSAVE").String()[len("(integer) "):] {
			t.Errorf("%s: rdb_last_save_time %s is not LASTSAVE", step, f["rdb_last_save_time"])
		}
		out = append(out, line)
	}
	// idle waits for the saves counted so far to end.
	idle := func(saves string) {
		t.Helper()
		waitFor(t, 20*time.Second, "the background save to end", func() bool {
			_, f := info(t, c, "persistence")
			return f["rdb_bgsave_in_progress"] == "0" && f["rdb_saves"] == saves
		})
	}
	pipeline := func(cmds ...[]string) {
		t.Helper()
		var buf []byte
		for _, args := range cmds {
			buf = append(buf, encodeCommand(args)...)
		}
		c.conn.Write(buf)
		for range cmds {
			out = append(out, c.read().String())
		}
	}
	started := c.do("LASTSAVE").Int
	state("start")
	c.do("SET", "a", "1")
	c.do("SET", "b", "1")
	state("two sets")
	out = append(out, c.do("SAVE").String())
	state("save")
	if last := c.do("LASTSAVE").Int; last < started || time.Since(time.Unix(last, 0)) > time.Minute {
		t.Errorf("LASTSAVE after SAVE: %d", last)
	}
	c.do("SET", "c", "1")
	// A second BGSAVE, a SAVE and a write while the first runs: the
	// write still counts once it ends.
	pipeline([]string{"BGSAVE"}, []string{"BGSAVE"}, []string{"SAVE"}, []string{"BGSAVE", "SCHEDULE"},
		[]string{"SET", "d", "1"})
	idle("2")
	state("bgsave")
	pipeline([]string{"MULTI"}, []string{"BGSAVE"}, []string{"SET", "e", "1"}, []string{"EXEC"})
	idle("3") // the cron starts it, as Redis's does
	state("bgsave in exec")
	c.do("SET", "f", "1")
	c.do("SET", "g", "1")
	c.do("FLUSHDB") // two keys removed: two changes, as in Redis
	c.do("FLUSHALL")
	state("flushes")
	out = append(out, c.do("SAVE", "x").String(), c.do("BGSAVE", "x").String())
	return out
}

// TestSaveInfoLikeRedis runs the same SAVE/BGSAVE steps on a private
// redis-server, on Revolver with persistence off (which saves too, the
// checkpoint a persistent server would write) and on a persistent
// Revolver: replies, LASTSAVE and INFO persistence's fields move alike.
func TestSaveInfoLikeRedis(t *testing.T) {
	want := saveTranscript(t, startRealRedis(t))
	for name, srv := range map[string]string{
		"memory":     startServer(t).Addr(),
		"persistent": startServer(t, withPersistence(t.TempDir())).Addr(),
	} {
		if got := saveTranscript(t, srv); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n  %s\nredis-server:\n  %s", name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}

// TestSaveWithoutPersistence: SAVE on a server with persistence off writes
// DIR/checkpoint, which restores as a persistent server's does (as db/ of a
// new data directory) to the same keyspace: every type, deadlines, native
// types, SWAPDB's moves and the function libraries. A BGSAVE holds the
// data as of the command; SHUTDOWN SAVE saves too.
func TestSaveWithoutPersistence(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, withDir(dir))
	addr := srv.Addr()
	populateAllTypes(t, addr, 7)
	c := dialRaw(t, addr)
	for _, cmd := range [][]string{
		{"SWAPDB", "1", "2"},
		{"SELECT", "5"}, // natives apart: dumpKeyspace reads databases 0 to 3
		{"DELAY.ADD", "timers", "t1", "IN", "600000", "PAYLOAD", "p"},
		{"QUEUE.PUSH", "jobs", "payload", "ID", "j1"},
		{"UV.ADD", "uv", "u1", "u2"},
		{"FUNCTION", "LOAD", "#!lua name=savelib\nredis.register_function('savefn', function() return 1 end)"},
	} {
		if v := c.do(cmd...); v.Kind == resp.KindError {
			t.Fatalf("%v: %s", cmd, v)
		}
	}
	natives := []string{"timers", "jobs", "uv"}
	dumps := func(c *rawConn) string {
		var b strings.Builder
		c.do("SELECT", "5")
		for _, k := range natives {
			b.WriteString(c.do("DUMP", k).String() + "\n")
		}
		return b.String() + c.do("FUNCTION", "LIST").String()
	}
	wantKeys, wantDumps := dumpKeyspace(t, addr), dumps(c)
	if v := c.do("SAVE"); v.Str != "OK" {
		t.Fatalf("SAVE with persistence off: %s", v)
	}
	restored := func(what string) (string, string) {
		t.Helper()
		target := t.TempDir()
		if err := os.CopyFS(filepath.Join(target, "revolver", "db"), os.DirFS(filepath.Join(dir, "revolver", "checkpoint"))); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		r := startServer(t, withPersistence(target))
		defer r.Close()
		return dumpKeyspace(t, r.Addr()), dumps(dialRaw(t, r.Addr()))
	}
	if keys, d := restored("SAVE"); keys != wantKeys || d != wantDumps {
		t.Errorf("restored from SAVE's checkpoint:\n%s\n%s\nwant\n%s\n%s", keys, d, wantKeys, wantDumps)
	}
	for _, leftover := range []string{"checkpoint.build", "checkpoint.tmp", "checkpoint.old"} {
		if _, err := os.Stat(filepath.Join(dir, "revolver", leftover)); !os.IsNotExist(err) {
			t.Errorf("%s left in the directory: %v", leftover, err)
		}
	}

	// BGSAVE: what a write after it does is not in the checkpoint.
	c.do("SET", "before", "1")
	wantKeys = dumpKeyspace(t, addr)
	c.conn.Write(append(encodeCommand([]string{"BGSAVE"}), encodeCommand([]string{"SET", "after", "1"})...))
	if v := c.read(); v.Str != "Background saving started" {
		t.Fatalf("BGSAVE: %s", v)
	}
	c.read()
	waitFor(t, 20*time.Second, "the background save to end", func() bool {
		_, f := info(t, c, "persistence")
		return f["rdb_bgsave_in_progress"] == "0"
	})
	if keys, _ := restored("BGSAVE"); keys != wantKeys {
		t.Errorf("restored from BGSAVE's checkpoint:\n%s\nwant\n%s", keys, wantKeys)
	}

	// A persistent server may start in a directory where only SAVE wrote.
	startServer(t, withPersistence(dir)).Close()

	// SHUTDOWN SAVE.
	dir2 := t.TempDir()
	srv2 := startServer(t, withDir(dir2))
	c2 := dialRaw(t, srv2.Addr())
	c2.do("SET", "k", "v")
	c2.send("SHUTDOWN", "SAVE")
	select {
	case <-srv2.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SHUTDOWN SAVE did not stop the server")
	}
	if _, err := os.Stat(filepath.Join(dir2, "revolver", "checkpoint")); err != nil {
		t.Errorf("SHUTDOWN SAVE with persistence off left no checkpoint: %v", err)
	}
}

// TestSaveFailsLikeRedis: a save that cannot be written answers Redis's
// bare ERR; a failed BGSAVE shows in rdb_last_bgsave_status, a failed SAVE
// does not (rdbSave leaves it), and LASTSAVE stays.
func TestSaveFailsLikeRedis(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, withDir(filepath.Join(file, "data")))
	c := dialRaw(t, srv.Addr())
	last := c.do("LASTSAVE").Int
	if v := c.do("SAVE"); v.String() != "(error) ERR" {
		t.Errorf("SAVE into a file: %s", v)
	}
	if _, f := info(t, c, "persistence"); f["rdb_last_bgsave_status"] != "ok" || f["rdb_saves"] != "1" {
		t.Errorf("after a failed SAVE: %v", f)
	}
	if v := c.do("BGSAVE"); v.String() != "(error) ERR" {
		t.Errorf("BGSAVE into a file: %s", v)
	}
	if _, f := info(t, c, "persistence"); f["rdb_last_bgsave_status"] != "err" || f["rdb_saves"] != "2" ||
		f["rdb_bgsave_in_progress"] != "0" {
		t.Errorf("after a failed BGSAVE: %v", f)
	}
	if v := c.do("LASTSAVE").Int; v != last {
		t.Errorf("LASTSAVE moved after failed saves: %d, was %d", v, last)
	}
}

// TestSavePoints: CONFIG save makes the server save in the background once
// enough changes are older than the last save, as Redis's cron does.
func TestSavePoints(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		c := dialRaw(t, addr)
		_, f := info(t, c, "persistence")
		saves, _ := strconv.Atoi(f["rdb_saves"])
		c.do("CONFIG", "SET", "save", "1 2")
		defer c.do("CONFIG", "SET", "save", "")
		c.do("SET", "savepoint:a", "1")
		c.do("SET", "savepoint:b", "1")
		waitFor(t, 10*time.Second, "a save", func() bool {
			_, f := info(t, c, "persistence")
			n, _ := strconv.Atoi(f["rdb_saves"])
			return n > saves && f["rdb_bgsave_in_progress"] == "0"
		})
		c.do("DEL", "savepoint:a", "savepoint:b")
	})
}

// TestConfigSetDir: dir is protected and mutable, as in Redis; allowed
// (enable-protected-configs yes), it must be an existing directory and is
// kept absolute, and with persistence off SAVE then writes there. A
// persistent server's data directory does not move.
func TestConfigSetDir(t *testing.T) {
	target := t.TempDir()
	file := filepath.Join(target, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, addr := range map[string]string{
		"redis":    startRealRedis(t, "--enable-protected-configs", "yes"),
		"revolver": startServer(t, withConfig("enable-protected-configs", "yes")).Addr(),
	} {
		c := dialRaw(t, addr)
		for _, tc := range [][2]string{
			{"/nonexistent/dir", "(error) ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory"},
			{file, "(error) ERR CONFIG SET failed (possibly related to argument 'dir') - Not a directory"},
			{target, "+OK"},
		} {
			if v := c.do("CONFIG", "SET", "dir", tc[0]).String(); v != tc[1] {
				t.Errorf("%s: CONFIG SET dir %s: %s, want %s", name, tc[0], v, tc[1])
			}
		}
		if v := c.do("CONFIG", "GET", "dir"); len(v.Elems) != 2 || v.Elems[1].Str != target {
			t.Errorf("%s: CONFIG GET dir: %s", name, v)
		}
	}
	if _, err := os.Stat(filepath.Join(target, "revolver", "checkpoint")); err == nil {
		t.Fatal("a checkpoint before SAVE")
	}
	srv := startServer(t, withConfig("enable-protected-configs", "yes"))
	c := dialRaw(t, srv.Addr())
	c.do("CONFIG", "SET", "dir", target)
	if v := c.do("SAVE"); v.Str != "OK" {
		t.Fatalf("SAVE: %s", v)
	}
	if _, err := os.Stat(filepath.Join(target, "revolver", "checkpoint")); err != nil {
		t.Errorf("SAVE after CONFIG SET dir: %v", err)
	}
	p := dialRaw(t, startServer(t, withPersistence(t.TempDir()), withConfig("enable-protected-configs", "yes")).Addr())
	if v := p.do("CONFIG", "SET", "dir", target).String(); v !=
		"(error) ERR CONFIG SET failed (possibly related to argument 'dir') - the data directory cannot change while persistence is on" {
		t.Errorf("CONFIG SET dir with persistence on: %s", v)
	}
}

// TestFlushallSaves: with save points set, FLUSHALL saves the emptied
// dataset at once, as Redis's does: no change left to save, LASTSAVE moved,
// rdb_saves not counting it.
func TestFlushallSaves(t *testing.T) {
	for name, addr := range map[string]string{"redis": startRealRedis(t), "revolver": startServer(t).Addr()} {
		c := dialRaw(t, addr)
		c.do("CONFIG", "SET", "save", "3600 1000")
		c.do("SET", "k", "v")
		before := c.do("LASTSAVE").Int
		// A later second (time(2) may lag the clock by a tick).
		time.Sleep(time.Until(time.Unix(before+1, 0).Add(50 * time.Millisecond)))
		c.do("FLUSHALL")
		_, f := info(t, c, "persistence")
		if f["rdb_changes_since_last_save"] != "0" || f["rdb_saves"] != "0" || c.do("LASTSAVE").Int <= before {
			t.Errorf("%s: after FLUSHALL with save points: %v, LASTSAVE %d (was %d)", name, f, c.do("LASTSAVE").Int, before)
		}
	}
}
