package tests

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/server"
)

// debianRedisConf is the redis.conf Debian's redis-server package installs.
const debianRedisConf = "/etc/redis/redis.conf"

// TestRedisConfStarts: Debian's redis.conf, with only port, dir, logfile and
// pidfile changed, starts Revolver: daemonize yes puts it in the background
// (the command returns once it serves), the pid file names it, appendonly
// no is accepted and explained in one log line, every directive of the
// file is answered by CONFIG GET, and dir holds nothing but the config file
// and Revolver's directory. SHUTDOWN stops it and removes the pid file.
func TestRedisConfStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	conf, err := os.ReadFile(debianRedisConf)
	if err != nil {
		if os.Getenv("REVOLVER_REQUIRE_REDIS") == "1" {
			t.Fatalf("this test needs redis-server's %s: %v", debianRedisConf, err)
		}
		t.Skipf("SKIPPING: %v (install redis-server, or set REVOLVER_REQUIRE_REDIS=1 to fail instead)", err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir, side := t.TempDir(), t.TempDir()
	logfile, pidfile := filepath.Join(side, "revolver.log"), filepath.Join(side, "revolver.pid")
	changed := map[string]string{"port": strconv.Itoa(port), "dir": dir, "logfile": logfile, "pidfile": pidfile}
	var lines, directives []string
	for _, line := range strings.Split(string(conf), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			name := strings.ToLower(f[0])
			directives = append(directives, name)
			if v, ok := changed[name]; ok {
				line = name + " " + v
			}
		}
		lines = append(lines, line)
	}
	if !slicesContains(directives, "daemonize") || !slicesContains(directives, "appendonly") {
		t.Fatalf("%s does not look like Debian's redis.conf: %q", debianRedisConf, directives)
	}
	confPath := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(confPath, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(revolverBinary(t), confPath)
	done := make(chan error, 1)
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("revolver %s: %v\n%s", confPath, err, out)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("daemonize yes: the command did not return")
	}
	pidText, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("no pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil || pid == cmd.Process.Pid {
		t.Fatalf("pid file %q (the command was %d)", pidText, cmd.Process.Pid)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	c := dialRaw(t, "127.0.0.1:"+strconv.Itoa(port))
	for _, name := range directives {
		if v := c.do("CONFIG", "GET", name); len(v.Elems) != 2 {
			t.Errorf("CONFIG GET %s: %s", name, v)
		}
	}
	for name, want := range map[string]string{"appendonly": "yes", "daemonize": "yes", "dbfilename": "dump.rdb",
		"stop-writes-on-bgsave-error": "yes", "dir": dir, "pidfile": pidfile, "protected-mode": "yes"} {
		if v := c.do("CONFIG", "GET", name); len(v.Elems) != 2 || v.Elems[1].Str != want {
			t.Errorf("CONFIG GET %s: %s, want %s", name, v, want)
		}
	}
	c.do("SET", "k", "v")
	c.send("SHUTDOWN", "NOSAVE")
	waitFor(t, 20*time.Second, "the daemon to exit", func() bool { return syscall.Kill(pid, 0) != nil })
	if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
		t.Errorf("the pid file is still there: %v", err)
	}
	log, _ := os.ReadFile(logfile)
	if !strings.Contains(string(log), "appendonly no (Redis's default) has no effect here") {
		t.Errorf("the log does not say what appendonly no means:\n%s", log)
	}
	if names := dirNames(t, dir); len(names) != 2 || names[0] != "redis.conf" || names[1] != "revolver" {
		t.Errorf("dir holds %q", names)
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestRedisConfDirectives: what redis.conf may hold beside parameters:
// include (a glob of fragments), rename-command (renamed and removed
// commands, scripts included), a user line for the default user, the
// deprecated directives Redis ignores, and unixsocket (a client there is
// local, flag U); loadmodule, module configurations, sentinel lines, a
// missing include and an include loop are refused with their reason.
func TestRedisConfDirectives(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "revolver.sock")
	write := func(name, text string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("conf.d/a.conf", "maxmemory-policy allkeys-lru\n")
	write("conf.d/b.conf", "hz 20\n")
	main := write("main.conf", strings.Join([]string{
		"port 0",
		"dir " + dir,
		"include " + filepath.Join(dir, "conf.d", "*.conf"),
		"include " + filepath.Join(dir, "none.d", "*.conf"), // matches nothing: fine
		"unixsocket " + sock,
		"unixsocketperm 700",
		`rename-command FLUSHALL ""`,
		"rename-command DEBUG my-debug",
		"user default on >pw ~* &* +@all",
		"list-max-ziplist-entries 512",
		"lua-replicate-commands yes",
		"appendonly no",
		"persistence off",
	}, "\n"))
	cfg, err := server.ParseArgs([]string{main})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("unix socket: %v %v", fi, err)
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, Password: "pw", Protocol: 2, DisableIdentity: true})
	defer c.Close()
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"PING"}, "PONG"},
		{[]any{"CONFIG", "GET", "maxmemory-policy"}, "[maxmemory-policy allkeys-lru]"},
		{[]any{"CONFIG", "GET", "hz"}, "[hz 20]"},
		{[]any{"FLUSHALL"}, "ERR unknown command 'FLUSHALL', with args beginning with: "},
		{[]any{"DEBUG", "SLEEP", "0"}, "ERR unknown command 'DEBUG', with args beginning with: 'SLEEP' '0' "},
		{[]any{"my-debug", "SLEEP", "0"}, "OK"}, // DEBUG is for local clients: the socket's are
		{[]any{"EVAL", "return redis.pcall('flushall')['err']", "0"}, "ERR Unknown Redis command called from script"},
	} {
		v, err := c.Do(ctx, tc.args...).Result()
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = toString(v)
		}
		if got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
	if list := c.ClientList(ctx).Val(); !strings.Contains(list, "addr="+sock+":0") || !strings.Contains(list, "flags=U") {
		t.Errorf("CLIENT LIST over the socket: %s", list)
	}
	nopass := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, Protocol: 2, DisableIdentity: true})
	defer nopass.Close()
	if err := nopass.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
		t.Errorf("the user line's password is not asked: %v", err)
	}
	srv.Close()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket file is left: %v", err)
	}

	write("loop.conf", "include "+filepath.Join(dir, "loop.conf")+"\n")
	for text, want := range map[string]string{
		"loadmodule /usr/lib/redis/modules/x.so":       "Revolver loads no Redis modules",
		"mymodule.setting 5":                           "Module Configuration detected without loadmodule",
		"sentinel monitor m 127.0.0.1 6379 2":          "sentinel directive while not in sentinel mode",
		"include " + filepath.Join(dir, "nofile.conf"): "can't open config file",
		"include " + filepath.Join(dir, "loop.conf"):   "levels deep",
		"user alice on\nuser alice off":                "Duplicate user found",
	} {
		if _, err := server.ParseArgs([]string{write("bad.conf", text+"\n")}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, toString(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(v)
}
