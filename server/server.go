// Package server is Revolver's network edge: listeners and the request
// reader, connection state, dispatch through the command table under the
// engine lock, the durability barrier before replies, pub/sub delivery, and
// the INFO, CLIENT and CONFIG plumbing the command handlers call.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/persistence"
)

// RevolverVersion is this build's own version (INFO revolver_version).
const RevolverVersion = "0.1.0"

// Server is a running Revolver instance.
type Server struct {
	cfg      Config
	log      *slog.Logger
	logLevel *slog.LevelVar
	eng      *engine.Engine
	clock    engine.Clock       // the engine's, and the one commands are timed with
	store    *persistence.Store // nil with persistence off
	table    *commands.Table
	lua      *commands.LuaVM // scripts, under the engine lock
	hub      *hub
	trk      *tracking         // CLIENT TRACKING (tracking.go), under the engine lock
	clients  map[int64]*Client // under the engine lock
	slowlog  slowlog
	cmdStats []cmdStat        // by commands.Command.Index, under the engine lock
	lat      latencyState     // LATENCY and INFO latencystats (latency.go), under the engine lock
	errStats map[string]int64 // error replies by code, under the engine lock
	// errMark is total_error_replies when the running command started (or
	// its last nested command ended), and errCounted says that its own
	// error reply was counted already (callstats.go); under the engine lock.
	errMark    int64
	errCounted bool

	nextID     atomic.Int64
	connCount  atomic.Int64
	monitors   atomic.Int64
	maxBulkLen atomic.Int64
	maxQuery   atomic.Int64 // client-query-buffer-limit
	keepalive  atomic.Int64 // tcp-keepalive, for the accept goroutines
	maxClients atomic.Int64
	maxMemory  atomic.Int64
	usedMemory atomic.Int64 // sampled by the cron
	peakMemory atomic.Int64 // the largest usedMemory sampled (info_memory.go)
	evicts     atomic.Bool  // maxmemory is set and the policy evicts (evict.go)
	timeout    atomic.Int64
	// client-output-buffer-limit by class (outlimits.go); softOver the
	// clients over their soft limit, which the cron watches (under the
	// engine lock), softOverN their number.
	outLimits atomic.Pointer[outLimits]
	softOver  map[*Client]struct{}
	softOverN atomic.Int64
	// The clients' memory (clientmem.go).
	cmem clientMem

	startupMemory int64        // used_memory once started (INFO used_memory_startup)
	saves         atomic.Int64 // SAVEs done and BGSAVEs started (INFO rdb_saves)
	bg            saveState    // SAVE, BGSAVE and what INFO says of them (save.go)
	aof           aofRewrites  // BGREWRITEAOF (aof.go)
	acl           aclState     // the default user and the ACL log (acl.go)

	// An import of a Redis dump at start (rdb_import.go): the keys it
	// skipped as past their deadline, and the identity of the dump.
	loadedExpired int64
	importedDump  string
	unixListener  net.Listener // unixsocket (redisconf.go), outside rebind's listeners
	tls           tlsState     // the TLS port and configuration (tls.go)
	console       consoleState // the HTTP console and /metrics (console.go)

	stats        serverStats
	started      time.Time
	runID        string
	listenMu     sync.Mutex     // guards listeners and addrs (CONFIG SET port and bind change them)
	pickedPort   int            // the free port port 0 picked at start-up, until CONFIG SET port
	listeners    []net.Listener // also under the engine lock when they change
	addrs        []net.Addr
	pause        pauseState
	shutdownMu   sync.Mutex
	shutting     atomic.Bool
	closeStarted atomic.Bool // a loop started Close after SHUTDOWN
	// dropUnsynced: SHUTDOWN NOSAVE stopped a slow script; nothing more
	// is committed, so what the script wrote is not kept.
	dropUnsynced    atomic.Bool
	done            chan struct{}
	cronStop        chan struct{}
	serveWG         sync.WaitGroup // accept loops
	loops           []*loop        // the event loops serving connections (loop.go)
	nextLoop        atomic.Uint64  // the loop the next connection goes to
	loadedKeys      int
	replica         *replicaLink  // the replica role's link, nil on a master (replica.go); under the engine lock
	prop            propagation   // what the running command sends replicas (propagate.go); under the engine lock
	repl            replState     // under the engine lock
	replm           replMaster    // the master role (repl_master.go), under the engine lock
	shutdown        *shutdownWait // a SHUTDOWN waiting for replicas (shutdown_wait.go), under the engine lock
	shutdownWaiting atomic.Bool   // shutdown is set
}

type serverStats struct {
	connections   atomic.Int64
	commands      atomic.Int64
	rejectedConns atomic.Int64
	errorReplies  atomic.Int64
	opsWindow     atomic.Int64 // commands in the last cron period, for instantaneous_ops_per_sec
	opsPerSec     atomic.Int64
}

type cmdStat struct {
	calls, usec, rejected, failed int64
}

// Start opens the data directory, loads it, and starts listening. The
// returned server runs until Close. level, when the logger uses one, follows
// CONFIG SET loglevel; both may be nil.
func Start(cfg Config, logger *slog.Logger, level *slog.LevelVar) (*Server, error) {
	if level == nil {
		level = new(slog.LevelVar)
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	s := &Server{
		cfg:      cfg,
		log:      logger,
		logLevel: level,
		table:    commands.NewTable(commands.Families()...),
		hub:      newHub(),
		clients:  map[int64]*Client{},
		started:  time.Now(),
		clock:    cfg.Clock,
		done:     make(chan struct{}),
		cronStop: make(chan struct{}),
	}
	if s.clock == nil {
		s.clock = newClock()
	}
	s.lua = commands.NewLuaVM()
	s.lua.SetLog(func(level int, msg string) {
		s.log.Log(context.Background(), []slog.Level{slog.LevelDebug, slog.LevelDebug, slog.LevelInfo,
			slog.LevelWarn}[level], msg, "source", "script")
	})
	s.cmdStats = make([]cmdStat, s.table.Count())
	s.errStats = map[string]int64{}
	s.runID = newRunID()
	s.repl = replState{id: newRunID(), id2: strings.Repeat("0", 40), secondOff: -1}
	s.initReplMaster()
	s.applyLogLevel()
	s.eng = engine.New(engine.Options{Databases: cfg.Databases, Clock: s.clock})
	s.eng.SetNotifier(s.hub)
	s.eng.SetClientMemory(&s.cmem.total)
	s.eng.SetDeletionHook(s.keyDeleted)
	s.eng.SetNativeTimerHook(s.nativeTimerFired)
	s.trk = newTracking(s)
	s.applyNotify()
	s.applyLimits()
	s.applyLatency()
	s.applyLazyFree()
	if cfg.Persistence {
		if err := s.openStore(); err != nil {
			return nil, err
		}
	} else if err := s.importAtStart(); err != nil {
		return nil, err
	}
	s.bg.init(time.Now())
	err := s.applyStartDirectives()
	if err == nil {
		err = s.startLoops()
	}
	if err == nil {
		s.applyTLSAuth()
		err = s.listen()
	}
	if err == nil {
		err = s.listenTLS()
	}
	if err == nil {
		err = s.listenUnix()
	}
	if err == nil {
		err = s.listenHTTP()
	}
	if err != nil {
		s.listenMu.Lock()
		for _, ln := range s.listeners {
			ln.Close()
		}
		s.closeTLSListeners()
		s.closeHTTP()
		s.listenMu.Unlock()
		s.stopLoops()
		s.eng.Close()
		if s.store != nil {
			s.store.Close()
		}
		return nil, err
	}
	s.eng.Start()
	s.sampleMemory()
	s.startupMemory = s.usedMemory.Load()
	go s.cron()
	s.listenMu.Lock()
	s.serve(s.listeners)
	s.serveTLS(s.tls.listeners)
	if s.unixListener != nil {
		s.serve([]net.Listener{s.unixListener})
	}
	s.listenMu.Unlock()
	s.log.Info("ready to accept connections", "addrs", s.addrStrings(), "tls", s.tlsAddrStrings(), "persistence", cfg.Persistence,
		"appendfsync", cfg.AppendFsync, "keys", s.loadedKeys)
	s.replicaOfAtStart()
	return s, nil
}

func (s *Server) openStore() error {
	fsync, err := persistence.ParseFsync(s.cfg.AppendFsync)
	if err != nil {
		return err
	}
	lay, err := persistence.ResolveLayout(s.cfg.FS, s.cfg.Dir)
	if err != nil {
		return err
	}
	if lay.Legacy {
		s.log.Info("data directory laid out by an earlier Revolver: its files stay where they are", "dir", lay.Dir)
	}
	dir := lay.Own
	dump, again, err := s.planImport(lay)
	if err != nil {
		return err
	}
	st, err := persistence.Open(persistence.Options{Dir: dir, Fsync: fsync, Logger: s.log, FS: s.cfg.FS,
		MaxMemory: s.cfg.PersistenceMaxMemory})
	if err != nil {
		return err
	}
	s.store = st
	s.log.Info("loading data", "dir", dir)
	begin := time.Now()
	s.eng.Lock()
	n, err := st.Load(s.eng.Loader())
	s.eng.Unlock()
	if err != nil {
		st.Close()
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	s.loadedKeys = n
	for _, err := range s.lua.LoadLibraries(s.eng) {
		s.log.Error("a persisted function library does not load; it is left out", "err", err)
	}
	s.log.Info("data loaded", "keys", n, "seconds", time.Since(begin).Seconds())
	s.eng.SetSink(st)
	s.eng.SetUncountedMemory(s.persistenceMemory)
	if dump != "" {
		if err := s.finishImport(dir, dump, again); err != nil {
			st.Close()
			return err
		}
	}
	return nil
}

// startLoops starts the event loops, io-threads of them.
func (s *Server) startLoops() error {
	for range max(s.cfg.IOThreads, int64(1)) {
		l, err := newLoop(s)
		if err != nil {
			return fmt.Errorf("cannot start an event loop: %w", err)
		}
		s.loops = append(s.loops, l)
		go l.serve()
	}
	return nil
}

// stopLoops stops the event loops and waits until they have closed their
// connections.
func (s *Server) stopLoops() {
	for _, l := range s.loops {
		l.stop()
	}
	for _, l := range s.loops {
		<-l.done
	}
}

// wakeLoops has every loop look at its work again (CLIENT UNPAUSE).
func (s *Server) wakeLoops() {
	for _, l := range s.loops {
		l.poll.wake()
	}
}

// Done is closed when the server has shut down.
func (s *Server) Done() <-chan struct{} { return s.done }

func newRunID() string {
	b := make([]byte, 20)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Table implements commands.Server.
func (s *Server) Table() *commands.Table { return s.table }

// RunID implements commands.Server.
func (s *Server) RunID() string { return s.runID }

// Lua implements commands.Server.
func (s *Server) Lua() *commands.LuaVM { return s.lua }

// OverMaxMemory implements commands.Server.
func (s *Server) OverMaxMemory() bool { return s.overMaxMemory() }

// syncLog returns once everything the engine has done so far is in the
// change log under the fsync policy: what a reply may acknowledge.
// leadLog tells the store that the caller will syncLog the changes it
// makes next (persistence.Store.Lead).
func (s *Server) leadLog() {
	if s.store != nil {
		s.store.Lead()
	}
}

// syncLog makes the changes so far durable under the fsync policy, and
// ends the caller's leadLog if it led.
func (s *Server) syncLog(led bool) {
	if s.store != nil && !s.dropUnsynced.Load() {
		start := s.clock.Now()
		s.store.Sync()
		s.observeLogCommit(start)
		if led {
			s.store.EndLead()
		}
	}
}

func (s *Server) authRequired() bool { return !s.DefaultUser().AutoAuthenticated() }

// AuthRequired implements commands.Server.
func (s *Server) AuthRequired() bool { return s.authRequired() }

// CheckPassword implements commands.Server: the user exists, is enabled
// and accepts the password.
func (s *Server) CheckPassword(user, pass string) error {
	if u := s.ACLUser(user); u != nil && u.Accepts(pass) { // acl.go
		return nil
	}
	return errors.New("WRONGPASS invalid username-password pair or user is disabled.")
}

// Publish implements commands.Server.
func (s *Server) Publish(channel, message []byte) int { return s.hub.publish(channel, message) }

// PubSubChannels implements commands.Server.
func (s *Server) PubSubChannels(pattern []byte) [][]byte { return s.hub.channelNames(pattern) }

// PubSubNumSub implements commands.Server.
func (s *Server) PubSubNumSub(channel []byte) int { return len(s.hub.channels[string(channel)]) }

// PubSubNumPat implements commands.Server.
func (s *Server) PubSubNumPat() int { return len(s.hub.patterns) }

// ConfigResetStat implements commands.Server.
func (s *Server) ConfigResetStat() {
	s.eng.ResetStats()
	s.stats.commands.Store(0)
	s.stats.connections.Store(0)
	s.stats.rejectedConns.Store(0)
	s.stats.errorReplies.Store(0)
	s.cmdStats = make([]cmdStat, s.table.Count())
	s.errStats = map[string]int64{}
	s.resetLatencyHistograms()
	resetNetStats()
}

// Shutdown implements commands.Server: it stops the server once the
// calling batch ends (the engine lock is held now).
// Close shuts the server down: listeners stop, connections close (a batch
// that is running finishes its command first; none starts another), the
// timer loop stops, the persistence writer drains and fsyncs.
func (s *Server) Close() error { return s.close(false) }

// Crash stops the server as kill -9 would leave its data directory: the
// change log keeps what it was given, unapplied, and nothing is written on
// the way out. The next start replays the log. In-process tests use it
// where a real kill would need a child process.
func (s *Server) Crash() error { return s.close(true) }

// RunTimers fires everything the engine's clock says is due: expiry,
// blocked clients' timeouts, the families' due times. A server started with
// a manual clock (Config.Clock) fires nothing until the clock is advanced
// and RunTimers called.
func (s *Server) RunTimers() { s.eng.RunTimers() }

func (s *Server) close(crash bool) error {
	s.shutdownMu.Lock()
	defer s.shutdownMu.Unlock()
	select {
	case <-s.done:
		return nil
	default:
	}
	s.shutting.Store(true) // batches run no further command from here on
	crash = crash || s.dropUnsynced.Load()
	if crash {
		s.log.Info("stopping as a crash would: no final write")
	} else {
		s.log.Info("shutting down")
	}
	s.listenMu.Lock()
	for _, ln := range s.listeners {
		ln.Close()
	}
	s.listeners, s.addrs = nil, nil
	s.closeTLSListeners()
	s.closeHTTP()
	if s.unixListener != nil {
		s.unixListener.Close() // and its file goes
	}
	s.listenMu.Unlock()
	s.stopHandshakes()
	close(s.cronStop)
	s.eng.Lock()
	s.stopReplica()
	s.eng.Unlock()
	s.releaseMemoryLimit()
	s.serveWG.Wait()
	s.stopLoops()           // they close their connections
	s.bg.cancel.Store(true) // a dump being written is abandoned, as Redis kills its child
	s.bg.background.Wait()
	s.replm.writers.Wait()
	s.eng.Close()
	s.eng.Lock()
	var err error
	switch {
	case s.store == nil:
	case crash:
		err = s.store.Kill()
	default:
		err = s.store.Close()
	}
	s.eng.Unlock()
	close(s.done)
	if err != nil {
		s.log.Error("closing the data directory failed", "err", err)
	} else {
		s.log.Info("bye")
	}
	return err
}

func (s *Server) applyFsync() {
	s.lat.fsyncAlways.Store(s.cfg.AppendFsync == "always")
	if s.store == nil {
		return
	}
	if f, err := persistence.ParseFsync(s.cfg.AppendFsync); err == nil {
		s.store.SetFsync(f)
	}
}

func (s *Server) applyPersistenceMemory() {
	if s.store != nil {
		s.store.SetMaxMemory(s.cfg.PersistenceMaxMemory)
	}
}

func (s *Server) applyLimits() {
	s.maxBulkLen.Store(s.cfg.ProtoMaxBulkLen)
	s.maxQuery.Store(s.cfg.ClientQueryBufferLimit)
	s.keepalive.Store(s.cfg.TCPKeepalive)
	s.eng.SetMaxStringLen(s.cfg.ProtoMaxBulkLen)
	s.maxClients.Store(s.cfg.MaxClients)
	s.maxMemory.Store(s.cfg.maxMemoryLimit())
	s.applyEviction()
	s.lua.SetBusyThreshold(s.cfg.BusyReplyThreshold)
	s.timeout.Store(s.cfg.Timeout)
	s.applyOutputLimits()
	s.applyClientEviction()
	s.slowlog.configure(s.cfg.SlowlogLogSlowerThan, int(s.cfg.SlowlogMaxLen))
	s.eng.SetLimits(s.engineLimits())
}

// engineLimits are the engine's thresholds the configuration sets.
func (s *Server) engineLimits() engine.Limits {
	return engine.Limits{
		HashMaxListpackEntries: s.cfg.HashMaxListpackEntries,
		HashMaxListpackValue:   s.cfg.HashMaxListpackValue,
		SetMaxIntsetEntries:    s.cfg.SetMaxIntsetEntries,
		ZSetMaxListpackEntries: s.cfg.ZSetMaxListpackEntries,
		ZSetMaxListpackValue:   s.cfg.ZSetMaxListpackValue,
		HLLSparseMaxBytes:      s.cfg.HLLSparseMaxBytes,
		UVExactMax:             s.cfg.UVExactMax,
		RoomMaxMessages:        s.cfg.RoomMaxMessages,
		RoomImportantMax:       s.cfg.RoomImportantMax,
		RoomImportantTTL:       s.cfg.RoomImportantTTL,
		RoomPresenceTTL:        s.cfg.RoomPresenceTTL,
		RoomTiers:              s.cfg.RoomTiers,
		StreamNodeMaxEntries:   s.cfg.extraInt("stream-node-max-entries"),
		StreamNodeMaxBytes:     s.cfg.extraInt("stream-node-max-bytes"),
	}
}

// applyLazyFree follows the lazyfree-lazy-* parameters, which decide what
// counts in INFO's lazyfreed_objects (engine/lazyfree.go).
func (s *Server) applyLazyFree() {
	on := func(name string) bool { return s.cfg.extraString(name) == "yes" }
	s.eng.SetLazyFree(engine.LazyFree{UserDel: on("lazyfree-lazy-user-del"), ServerDel: on("lazyfree-lazy-server-del"),
		Expire: on("lazyfree-lazy-expire"), Eviction: on("lazyfree-lazy-eviction"),
		UserFlush: on("lazyfree-lazy-user-flush")})
}

func (s *Server) applyNotify() {
	f, _ := engine.ParseNotifyClasses(s.cfg.NotifyKeyspaceEvents)
	s.eng.SetNotifyClasses(f)
}

func (s *Server) applyLogLevel() {
	switch s.cfg.LogLevel {
	case "debug":
		s.logLevel.Set(slog.LevelDebug)
	case "verbose":
		s.logLevel.Set(slog.LevelDebug + 2)
	case "warning":
		s.logLevel.Set(slog.LevelWarn)
	case "nothing":
		s.logLevel.Set(slog.LevelError + 4)
	default:
		s.logLevel.Set(slog.LevelInfo)
	}
}
