package main

import (
	"bufio"
	"fmt"
	"io"
	"log/syslog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/revolver-db/revolver/server"
)

// What redis.conf asks of the process: daemonize, pidfile, supervised and
// syslog-*, done as redis-server does them.

// daemonEnv marks the background copy daemonize starts; its value is the
// descriptor where it reports that it is ready, or why it failed.
const daemonEnv = "REVOLVER_DAEMON_READY_FD"

// supervised is how the process tells a service manager it is ready:
// "systemd", "upstart" or "" (supervised no, or auto without one).
// Supervised, redis-server does not daemonize.
func supervised(cfg *server.Config) string {
	switch mode := cfg.Param("supervised"); {
	case mode == "systemd", mode == "auto" && os.Getenv("NOTIFY_SOCKET") != "":
		return "systemd"
	case mode == "upstart", mode == "auto" && os.Getenv("UPSTART_JOB") != "":
		return "upstart"
	}
	return ""
}

// daemonize starts this program again in the background, in a session of
// its own, with the same arguments, and waits until that copy is ready to
// accept connections or has failed: unlike redis-server's fork, a start
// that fails says why, here. It returns the exit status.
func daemonize() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "revolver: daemonize: %v\n", err)
		return 1
	}
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "revolver: daemonize: %v\n", err)
		return 1
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "revolver: daemonize: %v\n", err)
		return 1
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Env = append(os.Environ(), daemonEnv+"=3")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	cmd.ExtraFiles = []*os.File{w} // descriptor 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "revolver: daemonize: %v\n", err)
		return 1
	}
	w.Close()
	msg, _ := io.ReadAll(bufio.NewReader(r))
	if strings.HasPrefix(string(msg), "ready") {
		cmd.Process.Release()
		return 0
	}
	text := strings.TrimSpace(string(msg))
	if text == "" {
		text = "the background server exited before it was ready (see its log)"
	}
	fmt.Fprintf(os.Stderr, "revolver: %s\n", text)
	return 1
}

// daemonReport is the background copy's channel to the process waiting
// in daemonize, nil in the foreground.
func daemonReport() *os.File {
	fd, err := strconv.Atoi(os.Getenv(daemonEnv))
	if err != nil {
		return nil
	}
	os.Unsetenv(daemonEnv)
	return os.NewFile(uintptr(fd), "daemon-ready")
}

// writePidFile writes the pid file, as redis-server when daemonized or
// given one; failing is only a warning there too.
func writePidFile(path string) error {
	return os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

// notifyReady tells the service manager the server is ready: systemd
// through NOTIFY_SOCKET, upstart by stopping, as redis-server does.
func notifyReady(mode string) error {
	switch mode {
	case "systemd":
		sock := os.Getenv("NOTIFY_SOCKET")
		if sock == "" {
			return fmt.Errorf("supervised systemd, but NOTIFY_SOCKET is not set")
		}
		conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock, Net: "unixgram"})
		if err != nil {
			return err
		}
		defer conn.Close()
		_, err = conn.Write([]byte("STATUS=Ready to accept connections\nREADY=1\n"))
		return err
	case "upstart":
		os.Unsetenv("UPSTART_JOB")
		return syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	}
	return nil
}

// syslogWriter is syslog-enabled's destination: syslog-ident and
// syslog-facility as Redis reads them.
func syslogWriter(cfg *server.Config) (io.Writer, error) {
	if cfg.Param("syslog-enabled") != "yes" {
		return nil, nil
	}
	facility := map[string]syslog.Priority{"user": syslog.LOG_USER, "local0": syslog.LOG_LOCAL0,
		"local1": syslog.LOG_LOCAL1, "local2": syslog.LOG_LOCAL2, "local3": syslog.LOG_LOCAL3,
		"local4": syslog.LOG_LOCAL4, "local5": syslog.LOG_LOCAL5, "local6": syslog.LOG_LOCAL6,
		"local7": syslog.LOG_LOCAL7}[cfg.Param("syslog-facility")]
	return syslog.New(facility|syslog.LOG_NOTICE, cfg.Param("syslog-ident"))
}
