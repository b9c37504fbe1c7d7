// Command revolver runs the Revolver server.
//
//	revolver                                  port 6379, data in ./data
//	revolver --port 7000 --dir /var/lib/revolver --appendfsync always
//	revolver revolver.conf --loglevel debug   (or --config revolver.conf)
//	revolver /etc/redis/redis.conf --import-rdb   (Redis's config and data directory)
package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	_ "net/http/pprof" // served only when REVOLVER_PPROF is set
	"os"
	"os/signal"
	"syscall"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/server"
)

func main() {
	for _, a := range os.Args[1:] {
		switch a {
		case "--version", "-v":
			fmt.Printf("Revolver v=%s (Redis %s compatible)\n", server.RevolverVersion, commands.Version)
			return
		case "--help", "-h":
			fmt.Println("usage: revolver [config-file] [--config file] [--name value ...]")
			fmt.Println("options use redis.conf names: port, bind, dir, appendfsync, requirepass, maxclients,")
			fmt.Println("maxmemory, timeout, notify-keyspace-events, loglevel, logfile, persistence on|off, ...")
			fmt.Println("a redis.conf as Redis ships it is accepted; --import-rdb loads dir/dump.rdb on a first start")
			return
		}
	}
	cfg, err := server.ParseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "revolver: configuration error: %v\n", err)
		os.Exit(1)
	}
	report := daemonReport()
	mode := supervised(&cfg)
	if report == nil && cfg.Param("daemonize") == "yes" && mode == "" {
		os.Exit(daemonize())
	}
	// fail reports a failed start, to the process waiting in daemonize too.
	fail := func(msg string) {
		fmt.Fprintf(os.Stderr, "revolver: %s\n", msg)
		if report != nil {
			report.WriteString(msg)
		}
		os.Exit(1)
	}
	sysw, err := syslogWriter(&cfg)
	if err != nil {
		fail(fmt.Sprintf("cannot open syslog: %v", err))
	}
	logger, level, closeLog, err := newLogger(cfg.LogFile, sysw)
	if err != nil {
		fail(err.Error())
	}
	defer closeLog()
	if addr := os.Getenv("REVOLVER_PPROF"); addr != "" {
		// Profiling endpoint for performance work: go tool pprof http://addr/debug/pprof/profile
		go func() { logger.Warn("pprof server stopped", "err", http.ListenAndServe(addr, nil)) }()
	}
	if n := server.SetProcs(int(cfg.IOThreads)); n > 0 {
		logger.Debug("GOMAXPROCS set: a P per event loop beyond the CPUs", "gomaxprocs", n)
	}
	pidfile := cfg.Param("pidfile")
	if pidfile != "" {
		if err := writePidFile(pidfile); err != nil {
			logger.Warn("failed to write PID file", "file", pidfile, "err", err)
			pidfile = ""
		}
	}
	removePid := func() {
		if pidfile != "" {
			os.Remove(pidfile)
		}
	}
	srv, err := server.Start(cfg, logger, level)
	if err != nil {
		logger.Error("cannot start", "err", err)
		removePid()
		fail(err.Error())
	}
	if report != nil {
		report.WriteString("ready\n")
		report.Close()
	}
	if err := notifyReady(mode); err != nil {
		logger.Warn("cannot tell the service manager the server is ready", "supervised", mode, "err", err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-sigs:
		logger.Info("received signal, shutting down", "signal", sig.String())
		if err := srv.Close(); err != nil {
			removePid()
			os.Exit(1)
		}
	case <-srv.Done():
	}
	removePid()
}

// newLogger logs to logfile (stderr when ""), and to syslog too when
// syslog-enabled.
func newLogger(file string, sysw io.Writer) (*slog.Logger, *slog.LevelVar, func(), error) {
	level := new(slog.LevelVar)
	var out io.Writer = os.Stderr
	closeFn := func() {}
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("cannot open logfile: %w", err)
		}
		out, closeFn = f, func() { f.Close() }
	}
	if sysw != nil {
		out = io.MultiWriter(out, sysw)
	}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level})), level, closeFn, nil
}
