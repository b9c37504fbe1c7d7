package server

import (
	"errors"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/console"
	"github.com/revolver-db/revolver/engine"
	"golang.org/x/sys/unix"
)

// The operations console (issue 35): an HTTP listener, off unless
// http-port is set, serving the console package's /metrics and web pages.
// The console is a client of the server: its commands reach a loop over a
// socket pair and are served as any client's (consoleBackend.Dial).

// consoleParams are the console's options, in the configuration like
// Redis's (CONFIG GET, CONFIG SET, the file, flags).
var consoleParams = []paramSpec{
	{name: "http-port", kind: kindInt, min: 0, max: 65535, def: "0", tryApply: (*Server).applyHTTP},
	{name: "http-bind", kind: kindString, multiArg: true, def: "127.0.0.1", check: checkHTTPBind, tryApply: (*Server).applyHTTP},
	{name: "metrics-top-keys", kind: kindInt, min: 0, max: 1000, def: "10", apply: (*Server).applyConsoleOptions},
}

func checkHTTPBind(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("needs at least one address")
	}
	return nil
}

// consoleState is the HTTP listener and what the console's engine reads
// cost; listenMu guards the listener fields.
type consoleState struct {
	srv       *http.Server
	listeners []net.Listener
	addrs     []net.Addr
	handler   *console.Console
	served    sync.WaitGroup
	// The longest and the total time the console's own engine reads
	// (View) held the lock, and how many there were.
	viewMaxNs, viewTotalNs, views atomic.Int64
}

// consoleBackend is the server as the console sees it.
type consoleBackend struct{ s *Server }

// Dial implements console.Backend: a socket pair, one end adopted by a
// loop as an accepted connection whose address is the HTTP client's.
func (b consoleBackend) Dial(peer, local string) (net.Conn, error) {
	s := b.s
	if s.shutting.Load() {
		return nil, errors.New("the server is shutting down")
	}
	if s.connCount.Add(1) > s.maxClients.Load() {
		s.connCount.Add(-1)
		s.stats.rejectedConns.Add(1)
		return nil, errors.New("max number of clients reached")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		s.connCount.Add(-1)
		return nil, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		s.connCount.Add(-1)
		return nil, err
	}
	f := os.NewFile(uintptr(fds[1]), "console")
	nc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(fds[0])
		s.connCount.Add(-1)
		return nil, err
	}
	c := newClientAt(s, peer, local, s.nextID.Add(1))
	s.adoptConn(c, fds[0], sockReader(fds[0]))
	return nc, nil
}

// AuthRequired implements console.Backend.
func (b consoleBackend) AuthRequired() bool {
	b.s.eng.Lock()
	defer b.s.eng.Unlock()
	return b.s.authRequired()
}

// View implements console.Backend, timing how long fn holds the lock.
func (b consoleBackend) View(fn func(e *engine.Engine)) {
	s := b.s
	s.eng.Lock()
	t0 := time.Now()
	fn(s.eng)
	d := time.Since(t0).Nanoseconds()
	s.eng.Unlock()
	st := &s.console
	st.views.Add(1)
	st.viewTotalNs.Add(d)
	for {
		m := st.viewMaxNs.Load()
		if d <= m || st.viewMaxNs.CompareAndSwap(m, d) {
			break
		}
	}
}

func (s *Server) consoleOptions() console.Options {
	return console.Options{TopKeys: int(s.cfg.extraInt("metrics-top-keys"))}
}

func (s *Server) applyConsoleOptions() {
	if h := s.console.handler; h != nil {
		h.SetOptions(s.consoleOptions())
	}
}

// listenHTTP starts the console's listener when http-port is set; listenMu
// held or at start-up.
func (s *Server) listenHTTP() error {
	port := int(s.cfg.extraInt("http-port"))
	if port == 0 {
		return nil
	}
	binds := strings.Fields(s.cfg.extraString("http-bind"))
	lns, err := listenAll(binds, port)
	if err != nil {
		return err
	}
	if s.console.handler == nil {
		s.console.handler = console.New(consoleBackend{s}, s.consoleOptions())
	}
	hs := &http.Server{Handler: s.console.handler, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	st := &s.console
	st.srv, st.listeners, st.addrs = hs, lns, nil
	for _, ln := range lns {
		st.addrs = append(st.addrs, ln.Addr())
		st.served.Add(1)
		go func() {
			defer st.served.Done()
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Warn("console listener stopped", "err", err)
			}
		}()
	}
	s.log.Info("console listening", "addrs", addrStrings(st.addrs))
	return nil
}

// closeHTTP stops the console's listener and closes its connections
// (event streams included); listenMu held.
func (s *Server) closeHTTP() {
	st := &s.console
	if st.srv == nil {
		return
	}
	// Close, not Shutdown: this may run under the engine lock (CONFIG
	// SET), which a request in flight may be waiting for.
	st.srv.Close()
	st.served.Wait()
	st.srv, st.listeners, st.addrs = nil, nil, nil
}

// applyHTTP follows CONFIG SET http-port and http-bind: the listener moves.
func (s *Server) applyHTTP() error {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	s.closeHTTP()
	if err := s.listenHTTP(); err != nil {
		s.log.Warn("cannot listen on the HTTP port", "err", err)
		return errors.New("Unable to listen on this port. Check server logs.")
	}
	return nil
}

// HTTPAddr is the first address the console listens on, "" for none.
func (s *Server) HTTPAddr() string {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if len(s.console.addrs) == 0 {
		return ""
	}
	return s.console.addrs[0].String()
}

// consoleInfo adds the console's fields to INFO stats: how long its reads
// of the engine held the lock.
func (s *Server) consoleInfo(add func(string, any)) {
	st := &s.console
	n, total := st.views.Load(), st.viewTotalNs.Load()
	avg := 0.0
	if n > 0 {
		avg = math.Round(float64(total)/float64(n)/10) / 100
	}
	add("console_engine_reads", n)
	add("console_engine_read_max_usec", strconv.FormatInt(st.viewMaxNs.Load()/1000, 10))
	add("console_engine_read_avg_usec", strconv.FormatFloat(avg, 'f', 2, 64))
}

// Persistence implements the console's metrics backend: the store's
// figures INFO leaves out (the change log's bytes, its fsync latencies).
func (b consoleBackend) Persistence() (console.PersistenceMetrics, bool) {
	st := b.s.store
	if st == nil {
		return console.PersistenceMetrics{}, false
	}
	h := st.FsyncLatency()
	return console.PersistenceMetrics{LogBytes: st.Stats().Bytes,
		Fsync: engine.Histogram{Bounds: h.Bounds, Cumulative: h.Cumulative, Count: h.Count, Sum: h.Sum}}, true
}
