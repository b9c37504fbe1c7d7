package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ServerConfig is the durability a suite asks of both servers.
type ServerConfig struct {
	Persistence bool   // Revolver --persistence on; Redis --appendonly yes
	Fsync       string // always | everysec (both sides)
	// AOFRewrite keeps Redis's automatic AOF rewrites at their defaults; off
	// sets auto-aof-rewrite-percentage 0 (the restart suite's command-AOF
	// variant).
	AOFRewrite bool
}

func (c ServerConfig) describe(kind string) string {
	if !c.Persistence {
		if kind == kindRedis {
			return "no AOF, no RDB (--appendonly no --save '')"
		}
		return "--persistence off (memory only)"
	}
	if kind == kindRedis {
		s := "--appendonly yes --appendfsync " + c.Fsync + " --save ''"
		if !c.AOFRewrite {
			s += " --auto-aof-rewrite-percentage 0"
		}
		return s
	}
	return "--appendfsync " + c.Fsync
}

const (
	kindRevolver = "revolver"
	kindRedis    = "redis"
)

// Server is one process the bench started (or, with --addr, one it found
// running). Owned servers are stopped by the bench, never others.
type Server struct {
	Kind    string // kindRevolver or kindRedis
	Name    string // column label: "Revolver" or "Redis"
	Addr    string
	Owned   bool
	Dir     string // the bench's directory for this server (removed at the end)
	DataDir string // the server's --dir, inside Dir
	Version string
	Config  string

	bin  string
	args []string
	cmd  *exec.Cmd
	done chan struct{}
	pid  int
}

// PID is the server's process id, 0 when unknown (a remote --addr).
func (s *Server) PID() int { return s.pid }

// startServer launches a fresh server of the given kind on a free loopback
// port with its own directory under root.
func startServer(ctx context.Context, kind, bin, root string, cfg ServerConfig) (*Server, error) {
	dir, err := os.MkdirTemp(root, kind+"-")
	if err != nil {
		return nil, err
	}
	// The data directory holds only the server's own files (Revolver refuses
	// a directory with foreign files); the log sits beside it.
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Kind: kind, Owned: true, Dir: dir, DataDir: data, bin: bin, Addr: "127.0.0.1:" + strconv.Itoa(port),
			Config: cfg.describe(kind)}
		s.Name = map[string]string{kindRevolver: "Revolver", kindRedis: "Redis"}[kind]
		if kind == kindRedis {
			s.args = []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", data, "--save", "",
				"--daemonize", "no", "--loglevel", "warning", "--logfile", filepath.Join(dir, "redis.log")}
			if cfg.Persistence {
				s.args = append(s.args, "--appendonly", "yes", "--appendfsync", cfg.Fsync)
				if !cfg.AOFRewrite {
					s.args = append(s.args, "--auto-aof-rewrite-percentage", "0")
				}
			} else {
				s.args = append(s.args, "--appendonly", "no")
			}
		} else {
			persistence := "off"
			if cfg.Persistence {
				persistence = "on"
			}
			s.args = []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", data,
				"--appendfsync", cfg.Fsync, "--persistence", persistence, "--loglevel", "warning",
				"--logfile", filepath.Join(dir, "revolver.log")}
		}
		if lastErr = s.start(ctx, time.Minute); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// start runs the process and waits until it answers PING with PONG and
// reports loading:0.
func (s *Server) start(ctx context.Context, timeout time.Duration) error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.Dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.pid, s.done = cmd, cmd.Process.Pid, make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, timeout); err != nil {
		s.kill()
		return fmt.Errorf("%s did not start (%v): %s%s", s.Name, err, stderr.String(), s.logTail())
	}
	return nil
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, s.Kind+".log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// waitReady polls until PING answers PONG and INFO persistence says
// loading:0 (Redis answers -LOADING while it reads its AOF).
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if s.done != nil {
			select {
			case <-s.done:
				return errors.New("process exited")
			default:
			}
		}
		if c, err := Dial(s.Addr, time.Second); err == nil {
			ok := false
			if v, err := c.DoTimeout(5*time.Second, "PING"); err == nil && v.Str == "PONG" {
				if v, err := c.DoTimeout(5*time.Second, "INFO", "persistence"); err == nil {
					ok = infoField(v.Str, "loading") == "0"
				}
			}
			c.Close()
			if ok {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Shutdown sends SHUTDOWN and waits for the process to exit.
func (s *Server) Shutdown(timeout time.Duration) error {
	if c, err := Dial(s.Addr, time.Second); err == nil {
		c.DoTimeout(timeout, "SHUTDOWN") // the connection closes; no reply expected
		c.Close()
	}
	select {
	case <-s.done:
		return nil
	case <-time.After(timeout):
		s.kill()
		return fmt.Errorf("%s did not exit after SHUTDOWN within %v", s.Name, timeout)
	}
}

// Restart starts the process again with the same port, directory and flags.
func (s *Server) Restart(ctx context.Context, timeout time.Duration) error {
	return s.start(ctx, timeout)
}

// Stop ends an owned server: SIGTERM (both servers shut down cleanly on
// it), SIGKILL after 10 s. It is a no-op for servers the bench did not start.
func (s *Server) Stop() {
	if !s.Owned || s.cmd == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.kill()
	}
}

func (s *Server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.done
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// externalServer describes a server the user started (--addr). Its process
// id comes from INFO server when it runs on this machine.
func externalServer(addr string) (*Server, error) {
	c, err := Dial(addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	v, err := c.DoTimeout(5*time.Second, "INFO", "server")
	if err != nil {
		return nil, err
	}
	s := &Server{Kind: kindRevolver, Name: "Revolver", Addr: addr, Config: "as configured (--addr)"}
	if ver := infoField(v.Str, "revolver_version"); ver != "" {
		s.Version = "Revolver " + ver
	} else {
		s.Kind, s.Name = kindRedis, "Redis"
		s.Version = "redis-server " + infoField(v.Str, "redis_version")
	}
	if host, _, _ := net.SplitHostPort(addr); isLoopback(host) {
		if pid, err := strconv.Atoi(infoField(v.Str, "process_id")); err == nil {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
				s.pid = pid
			}
		}
	}
	return s, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// infoField returns one "name:value" field of an INFO reply.
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), name+":"); ok {
			return v
		}
	}
	return ""
}

// ProcStats is a sample of a process's CPU time and resident memory.
type ProcStats struct {
	CPU time.Duration // utime + stime
	RSS int64         // bytes (VmRSS)
}

// clockTicks is USER_HZ, 100 on every Linux ABI Go supports.
const clockTicks = 100

// readProcStats reads /proc/PID/stat and /proc/PID/status.
func readProcStats(pid int) (ProcStats, error) {
	if pid <= 0 {
		return ProcStats{}, errors.New("no process id")
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcStats{}, err
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15 of the whole line, 12 and 13 after ") ".
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return ProcStats{}, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(stat[end+1:]))
	if len(f) < 13 {
		return ProcStats{}, errors.New("malformed /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	ps := ProcStats{CPU: time.Duration(ut+st) * time.Second / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ps, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			ps.RSS = kb * 1024
		}
	}
	return ps, nil
}

// selfCPU is the bench process's own CPU time: the client's share of the
// machine, reported next to the server's.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dirSize sums the sizes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// buildRevolver compiles ./cmd/revolver of the checkout at root into dst.
func buildRevolver(ctx context.Context, root, dst string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dst, "./cmd/revolver")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build ./cmd/revolver: %v\n%s", err, out)
	}
	return nil
}

// moduleRoot finds the Revolver checkout above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/revolver-db/revolver\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run revolver-bench inside the Revolver checkout (no go.mod of github.com/revolver-db/revolver above the working directory)")
		}
		dir = parent
	}
}

// warnings tallies the distinct warnings and errors in a server's log (both
// servers run at log level warning) into w: a server complaining during a
// run (a slow disk, say) explains its numbers.
func (s *Server) warnings(w *warningTally) {
	b, err := os.ReadFile(filepath.Join(s.Dir, s.Kind+".log"))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		var msg string
		if s.Kind == kindRedis {
			if _, m, ok := strings.Cut(line, " # "); ok {
				msg = m
			}
		} else if i := strings.Index(line, "level="); i >= 0 &&
			(strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")) {
			msg = line[i:]
		}
		if msg = strings.TrimSpace(msg); msg != "" && !lifecycleMessage(msg) {
			if len(msg) > 160 {
				msg = msg[:160] + "…"
			}
			w.add(msg)
		}
	}
}

// lifecycleMessage recognises what redis-server logs at warning level on
// every start and stop; it says nothing about a run.
func lifecycleMessage(msg string) bool {
	for _, p := range []string{"oO0OoO0OoO0Oo", "Redis version=", "Configuration loaded", "Server initialized",
		"User requested shutdown", "Redis is now ready to exit", "Received SIGTERM", "Calling fsync() on the AOF",
		"Removing the pid file"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// warningTally counts distinct log messages in first-seen order.
type warningTally struct {
	counts map[string]int
	order  []string
}

func (w *warningTally) add(msg string) {
	if w.counts == nil {
		w.counts = map[string]int{}
	}
	if w.counts[msg] == 0 {
		w.order = append(w.order, msg)
	}
	w.counts[msg]++
}

// summary lists up to n messages with their counts.
func (w *warningTally) summary(n int) string {
	var out []string
	for i, m := range w.order {
		if i == n {
			out = append(out, fmt.Sprintf("and %d more", len(w.order)-n))
			break
		}
		if c := w.counts[m]; c > 1 {
			m = fmt.Sprintf("%s (×%d)", m, c)
		}
		out = append(out, m)
	}
	return strings.Join(out, "; ")
}
