package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// listenTCP listens with Go's accept-time keepalive (15 s) off: each new
// connection gets tcp-keepalive from setKeepalive, and setting Go's first
// would cost five more system calls per accept.
func listenTCP(addr string) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	return lc.Listen(context.Background(), "tcp", addr)
}

// listen opens the listeners at start-up: no bind address means every
// interface, and port 0 a free port, unless a TLS port is set: then, as in
// Redis, port 0 is no plain TCP at all.
func (s *Server) listen() error {
	if s.cfg.Port == 0 && s.cfg.extraInt("tls-port") != 0 {
		return nil
	}
	lns, err := listenAll(s.bindAddrs(), s.cfg.Port)
	if err != nil {
		return err
	}
	if len(lns) == 0 {
		return errors.New("no address to listen on")
	}
	s.setListeners(lns)
	if a, ok := s.addrs[0].(*net.TCPAddr); ok && s.cfg.Port == 0 {
		s.pickedPort = a.Port // a rebind keeps it until CONFIG SET port
	}
	return nil
}

// listenAll listens on port at each address, as Redis's listenToPort: "*"
// is every interface, "::*" every IPv6 one, and an address after "-" is
// skipped when it cannot be had.
func listenAll(binds []string, port int) ([]net.Listener, error) {
	var lns []net.Listener
	for _, b := range binds {
		optional := strings.HasPrefix(b, "-")
		host := strings.TrimPrefix(b, "-")
		switch host {
		case "*":
			host = ""
		case "::*":
			host = "::"
		}
		ln, err := listenTCP(net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			if optional {
				continue
			}
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("cannot listen on %s:%d: %w", host, port, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// setListeners records the listeners; listenMu is held, or the server not
// started yet.
func (s *Server) setListeners(lns []net.Listener) {
	s.listeners, s.addrs = lns, nil
	for _, ln := range lns {
		s.addrs = append(s.addrs, ln.Addr())
	}
}

// serve starts an accept loop per listener; listenMu is held.
func (s *Server) serve(lns []net.Listener) {
	for _, ln := range lns {
		s.serveWG.Add(1)
		go s.acceptLoop(ln, false)
	}
}

// rebind applies CONFIG SET port and bind as Redis's changeListenPort and
// changeBindAddr do: the listeners close, then the server listens on the
// configured port and addresses; connections already made stay. Port 0
// (set at runtime: one picked at start-up stays) or no address leaves it
// without a listener, as in Redis. When listening
// fails nothing listens: the caller restores the old settings and rebinds.
// A change of bind moves the TLS port's listeners too. Under the engine
// lock.
func (s *Server) rebind(bindChanged bool) error {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if s.shutting.Load() {
		return errors.New("the server is shutting down")
	}
	for _, ln := range s.listeners {
		ln.Close() // its accept loop ends
	}
	s.setListeners(nil)
	port := s.cfg.Port
	if port == 0 {
		port = s.pickedPort
	}
	if port != 0 {
		lns, err := listenAll(s.cfg.Bind, port)
		if err != nil {
			return err
		}
		s.setListeners(lns)
		s.serve(lns)
	}
	if bindChanged {
		if err := s.rebindTLS(); err != nil {
			return err
		}
	}
	s.log.Info("listening", "addrs", s.addrStrings(), "tls", s.tlsAddrStrings())
	return nil
}

func (s *Server) addrStrings() []string { return addrStrings(s.addrs) }

func (s *Server) tlsAddrStrings() []string { return addrStrings(s.tls.addrs) }

func addrStrings(addrs []net.Addr) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}

// Addr is the first listening address (useful with port 0), "" when the
// server listens on none (CONFIG SET bind "").
func (s *Server) Addr() string {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if len(s.addrs) == 0 {
		return ""
	}
	return s.addrs[0].String()
}

// listeningPort is the port the server listens on, else the configured
// one; with no plain port, the TLS port (INFO's tcp_port, as Redis's
// "port ? port : tls_port"). Under the engine lock.
func (s *Server) listeningPort() int {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if len(s.addrs) > 0 {
		if a, ok := s.addrs[0].(*net.TCPAddr); ok {
			return a.Port
		}
	}
	if s.cfg.Port == 0 {
		return int(s.cfg.extraInt("tls-port"))
	}
	return s.cfg.Port
}
