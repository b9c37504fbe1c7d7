package server

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// What a redis.conf asks of a starting server beyond parameters:
// rename-command, user lines, appendonly's meaning here, and the Unix
// socket. (daemonize, pidfile, supervised and syslog are the process's:
// cmd/revolver.)

// applyStartDirectives applies rename-command and user lines. Before the
// server serves.
func (s *Server) applyStartDirectives() error {
	for _, rc := range s.cfg.RenameCommands {
		if err := s.table.Rename(rc[0], rc[1]); err != nil {
			return fmt.Errorf("rename-command %s %q: %v", rc[0], rc[1], err)
		}
	}
	if err := s.loadStartUsers(); err != nil {
		return err
	}
	if s.cfg.AppendOnly == "no" && s.cfg.Persistence {
		s.log.Info("appendonly no (Redis's default) has no effect here: with persistence on every write goes to " +
			"Revolver's change log, as appendonly yes would; persistence off runs memory-only")
	}
	return nil
}

// listenUnix listens on unixsocket when one is set, as Redis does: a file
// left there is removed first, and the socket gets unixsocketperm.
func (s *Server) listenUnix() error {
	path := s.cfg.extraString("unixsocket")
	if path == "" {
		return nil
	}
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("cannot listen on unix socket %s: %w", path, err)
	}
	if perm, _ := strconv.ParseUint(s.cfg.extraString("unixsocketperm"), 8, 32); perm != 0 {
		if err := os.Chmod(path, os.FileMode(perm)); err != nil {
			ln.Close()
			return fmt.Errorf("unix socket %s: %w", path, err)
		}
	}
	s.unixListener = ln
	return nil
}

// isUnixSocket reports whether a client's address is a Unix socket's
// (addr is the socket's path and ":0", as Redis shows it).
func isUnixSocket(addr string) bool { return strings.HasPrefix(addr, "/") }
