// Package persistence keeps the keyspace durable. The engine's changes are
// group-committed to a change log of our own, which is the acknowledgment
// path: one write(2) per commit, fsynced under the appendfsync policy. An
// applier goroutine then writes them to Pebble, which holds one record per
// key and sub-item (codec.go) and is what start-up loads. Log segments are
// deleted once Pebble holds them durably.
//
// A data directory (the configured dir's revolver/, or dir itself when an
// earlier Revolver laid it out: layout.go) holds:
//
//	db/             the Pebble store
//	log/            change log segments 000000000001.log, ... not yet known
//	                to be durable in db/; start-up replays them into db/
//	log.dropped/    what start-up cut off the end of the log after a crash
//	                or power cut (replay.go), kept for inspection
//	checkpoint/     the last SAVE/BGSAVE, itself a valid db/ directory
//	                (also written by a server with persistence off, alone)
//	revolver.lock   flock'ed while a server uses the directory
//	import-rdb.pending, dump.written   the server's (layout.go)
//
// To restore a checkpoint, copy it to db/ of a new data directory and start
// the server on that directory.
package persistence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/revolver-db/revolver/engine"
)

// Names inside the data directory.
const (
	dbName         = "db"
	newDBName      = "db.new" // a store being created, renamed to db when ready
	checkpointName = "checkpoint"
	lockName       = "revolver.lock"
	logName        = "log"
)

// maxBacklog bounds the records accepted but not yet applied to Pebble:
// past it change calls wait, so memory stays bounded when Pebble is slower
// than the clients.
const maxBacklog = 256 << 20

// tuning is what tests change.
type tuning struct {
	maxBacklog   int64
	segmentBytes int64
	applyHook    func()           // called by the applier before each batch
	keepLog      bool             // never delete applied segments
	holdMin      int              // window.holdMin; 0 is holdMinBytes, negative holds nothing
	tick         <-chan time.Time // the everysec fsync's ticks; nil is every second
	maxMemory    int64            // Options.MaxMemory
}

func holdMinFor(n int) int {
	switch {
	case n == 0:
		return holdMinBytes
	case n < 0:
		return 0
	}
	return n
}

// Options configure Open.
type Options struct {
	// Dir is the data directory; it is created if missing.
	Dir string
	// Fsync is the initial appendfsync policy.
	Fsync Fsync
	// Logger receives progress and errors; nil means slog.Default().
	Logger *slog.Logger
	// FS is the file system every file of the store lives on, the log's
	// and Pebble's; nil is the OS's (vfs.Default). For tests: one that
	// records or holds syncs, or vfs.NewCrashableMem, whose CrashClone
	// keeps only what was synced, as a power cut would.
	FS vfs.FS
	// MaxMemory caps what the store holds in memory for recent writes
	// (log batches, the apply window, held values, Pebble's memtables);
	// 0 is DefaultMaxMemory, and less than MinMaxMemory is raised to it.
	// Pebble's memtable size is set from it when the store is opened.
	MaxMemory int64
}

// Store is an open data directory. It implements engine.ChangeSink.
type Store struct {
	dir    string
	logDir string
	fsys   vfs.FS
	db     *pebble.DB
	log    *slog.Logger
	lock   io.Closer
	policy atomic.Int32

	w  writer
	ap applier

	// commitMu serializes group commits and segment changes: the
	// appender goroutine takes it, and so does a client goroutine leading a
	// commit in Sync. It guards seg, nextSeg and committed; active is seg for the
	// readers that only need it atomically (ticker, applier).
	commitMu  sync.Mutex
	seg       *segment
	nextSeg   uint64
	committed uint64 // num of the last batch commit took
	// run is the frames of the open run (commit), held back from the
	// applier until the run ends.
	run       applyItem
	active    atomic.Pointer[segment]
	rotateReq chan struct{}
	closeErr  error // the last drain's error, set before appenderDone

	commits    atomic.Uint64
	capCommits atomic.Uint64 // of them, commits of batches full before their command ended
	// urgentApplies counts windows applied at normal priority, the applier
	// being more than half its backlog bound behind.
	urgentApplies atomic.Uint64
	records       atomic.Uint64
	bytes         atomic.Uint64
	fsyncs        atomic.Uint64
	fsyncHist     fsyncHistogram

	stop         chan struct{}
	appenderDone chan struct{}
	tickerDone   chan struct{}
	applierStop  chan struct{}
	applierDone  chan struct{}

	segmentBytes  int64
	holdMin       int // for the applier's window
	testApplyHook func()
	testKeepLog   bool
	testTick      <-chan time.Time
	// testKilled makes Close stop the goroutines without a final write, as
	// a kill -9 would (Kill).
	testKilled atomic.Bool

	saveMu      sync.Mutex
	saving      bool
	closing     bool
	saveWG      sync.WaitGroup
	lastSave    time.Time
	lastSaveErr error
}

var _ engine.ChangeSink = (*Store)(nil)

// Open opens or creates the data directory. It refuses, without changing
// anything, a directory that is locked, foreign, corrupt or from a newer
// Revolver.
func Open(opts Options) (*Store, error) {
	return openTuned(opts, tuning{maxBacklog: maxBacklog, segmentBytes: segmentBytes})
}

func openTuned(opts Options, tn tuning) (*Store, error) {
	if tn.maxMemory == 0 {
		tn.maxMemory = opts.MaxMemory
	}
	if opts.Dir == "" {
		return nil, errors.New("persistence: no data directory given")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", opts.Dir, err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	fsys := opts.FS
	if fsys == nil {
		fsys = vfs.Default
	}
	if err := checkForeign(fsys, dir); err != nil {
		return nil, err
	}
	if err := mkdirSynced(fsys, dir); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	lock, err := lockDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	s, err := open(fsys, dir, lock, opts.Fsync, log, tn)
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	return s, nil
}

func open(fsys vfs.FS, dir string, lock io.Closer, policy Fsync, log *slog.Logger, tn tuning) (*Store, error) {
	dbDir := filepath.Join(dir, dbName)
	if _, err := fsys.Stat(dbDir); errors.Is(err, os.ErrNotExist) {
		if err := create(fsys, dir, log); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := checkStore(fsys, dir, dbDir, log); err != nil {
		return nil, err
	}
	if tn.maxMemory == 0 {
		tn.maxMemory = DefaultMaxMemory
	}
	bud := newBudget(tn.maxMemory, 0)
	logDir := filepath.Join(dir, logName)
	plan, err := planReplay(fsys, logDir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	ph := &pebbleHeap{}
	opts := pebbleOptions(fsys, log, bud.memTable)
	opts.EventListener.FlushEnd = ph.flushed
	db, err := pebble.Open(dbDir, opts)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: cannot open store: %w", dir, err)
	}
	s := &Store{
		dir:           dir,
		logDir:        logDir,
		fsys:          fsys,
		db:            db,
		log:           log,
		lock:          lock,
		nextSeg:       plan.next,
		rotateReq:     make(chan struct{}, 1),
		stop:          make(chan struct{}),
		appenderDone:  make(chan struct{}),
		tickerDone:    make(chan struct{}),
		applierStop:   make(chan struct{}),
		applierDone:   make(chan struct{}),
		segmentBytes:  tn.segmentBytes,
		testApplyHook: tn.applyHook,
		testKeepLog:   tn.keepLog,
		testTick:      tn.tick,
		holdMin:       holdMinFor(tn.holdMin),
		lastSave:      time.Now(),
	}
	s.policy.Store(int32(policy))
	s.w.init(log, tn.maxBacklog, bud.logBatch)
	s.ap.init(db, ph, bud)
	err = mkdirSynced(fsys, logDir)
	if err == nil {
		err = s.replay(plan)
	}
	if err != nil {
		_ = s.ap.batch.Close()
		_ = db.Close()
		return nil, fmt.Errorf("data directory %s: change log: %w", dir, err)
	}
	go s.runAppender()
	go s.runTicker()
	go s.runApplier()
	return s, nil
}

// checkForeign refuses a non-empty directory without db/: it is someone
// else's, and starting there would look like an empty database.
func checkForeign(fsys vfs.FS, dir string) error {
	names, err := fsys.List(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	slices.Sort(names)
	var found []string
	for _, name := range names {
		switch name {
		case dbName:
			return nil
		case lockName, newDBName:
			// Left by a first start that died before db/ existed.
			continue
		case ImportMarker, DumpRecord:
			// The server's (layout.go).
			continue
		case checkpointName, checkpointName + ".tmp", checkpointName + ".old", snapshotName:
			// What SAVE leaves on a server without a store (snapshot.go):
			// never read at start-up, only replaced by the next save.
			continue
		case logName:
			// Without db/ an empty log/ is harmless; segments are not.
			if seqs, err := listSegments(fsys, filepath.Join(dir, logName)); err == nil && len(seqs) == 0 {
				continue
			}
		}
		found = append(found, name)
	}
	if len(found) == 0 {
		return nil
	}
	if len(found) > 5 {
		found = append(found[:5], "...")
	}
	return fmt.Errorf("directory %s is not a Revolver data directory (found %s)", dir, strings.Join(found, ", "))
}

// create makes a new store beside db/ and renames it into place once its
// format record is durable, so a crash never leaves a db/ without one.
func create(fsys vfs.FS, dir string, log *slog.Logger) error {
	tmp := filepath.Join(dir, newDBName)
	if err := fsys.RemoveAll(tmp); err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	opts := pebbleOptions(fsys, log, 0)
	opts.ErrorIfNotExists = false
	opts.ErrorIfExists = true
	db, err := pebble.Open(tmp, opts)
	if err != nil {
		return fmt.Errorf("data directory %s: cannot create store: %w", dir, err)
	}
	err = db.Set([]byte(formatKey), formatValue(formatVersion), pebble.Sync)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, filepath.Join(dir, dbName))
	}
	if err == nil {
		err = syncDir(fsys, dir)
	}
	if err != nil {
		return fmt.Errorf("data directory %s: cannot create store: %w", dir, err)
	}
	log.Info("created data directory", "dir", dir)
	return nil
}

// checkStore vets db/ read-only first: a writable open replays and flushes
// the WAL and upgrades Pebble's on-disk format, which must not happen to a
// store that is not ours.
func checkStore(fsys vfs.FS, dir, dbDir string, log *slog.Logger) error {
	opts := pebbleOptions(fsys, log, 0)
	opts.ReadOnly = true
	db, err := pebble.Open(dbDir, opts)
	if err != nil {
		return fmt.Errorf("data directory %s: cannot open store: %w", dir, err)
	}
	err = checkFormat(db, dir)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("data directory %s: cannot open store: %w", dir, cerr)
	}
	return err
}

func checkFormat(db *pebble.DB, dir string) error {
	v, closer, err := db.Get([]byte(formatKey))
	if errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("data directory %s holds a Pebble store that was not written by Revolver", dir)
	}
	if err != nil {
		return fmt.Errorf("data directory %s: cannot read format record: %w", dir, err)
	}
	n, ok := parseFormat(v)
	raw := string(v)
	_ = closer.Close()
	switch {
	case !ok || n < 1:
		return fmt.Errorf("data directory %s holds a Pebble store that was not written by Revolver (format record %q)", dir, raw)
	case n > formatVersion:
		return fmt.Errorf("data directory %s was written by a newer Revolver (format %d)", dir, n)
	case n < formatVersion:
		return fmt.Errorf("data directory %s was written by an older Revolver (format %d; this build reads format %d)", dir, n, formatVersion)
	}
	return nil
}

// pebbleOptions suit a write-mostly store read once at start-up: a small
// block cache, memtables of memTable bytes (0: the default cap's), at most
// memTableStopWrites of them, and Pebble's logs kept out of the way.
// Pebble's WAL stays on: the applier writes without syncing and syncs once
// per retired log segment.
func pebbleOptions(fsys vfs.FS, log *slog.Logger, memTable int64) *pebble.Options {
	l := pebbleLogger{log}
	if memTable <= 0 {
		memTable = memTableSizeFor(DefaultMaxMemory)
	}
	l0Threshold := int(min(max((256<<20)/memTable, 16), 256))
	return &pebble.Options{
		FS:                          fsys,
		CacheSize:                   8 << 20,
		MemTableSize:                uint64(memTable),
		MemTableStopWritesThreshold: memTableStopWrites,
		// Pebble is read only at start-up, so compaction only bounds disk
		// use and start-up time: let L0 and the base level grow larger
		// before merging, which saves most of the rewriting random
		// overwrites cause. L0 takes as many flushes as make 256 MB (16
		// of the 16 MB ones before the memory cap), however small the
		// memtables: each L0 compaction of random keys rewrites the base
		// level, so its cost goes with their number.
		L0CompactionThreshold: l0Threshold,
		L0StopWritesThreshold: 4 * l0Threshold,
		LBaseMaxBytes:         256 << 20,
		WALBytesPerSync:       0,
		ErrorIfNotExists:      true,
		// Row-oriented tables (the last format before columnar blocks):
		// columnar blocks make scans and seeks cheaper, which a store
		// read once at start-up does not need, and cost more to write.
		// redis-benchmark -P 16 -c 50: LPUSH +4%, SET of random keys +5%,
		// server CPU -3-5%; loading 2.6M keys took the same time. A
		// directory created with a newer format keeps it.
		FormatMajorVersion: pebble.FormatFlushableIngestExcises,
		Logger:             l,
		EventListener: &pebble.EventListener{
			BackgroundError: func(err error) { log.Error("pebble background error", "err", err) },
			DataCorruption: func(info pebble.DataCorruptionInfo) {
				log.Error("pebble data corruption", "info", info.String())
			},
			WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
				log.Warn("pebble write stall", "reason", info.Reason)
			},
			WriteStallEnd: func() { log.Info("pebble write stall ended") },
			LowDiskSpace: func(info pebble.LowDiskSpaceInfo) {
				log.Warn("low disk space", "info", info.String())
			},
		},
	}
}

// pebbleLogger routes Pebble's chatter to debug and its errors to error.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		l.log.Debug("pebble: " + fmt.Sprintf(format, args...))
	}
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error("pebble: " + fmt.Sprintf(format, args...))
}

// Fatalf must not return: Pebble calls it when continuing would corrupt the
// store, as its own default logger does.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	l.log.Error("pebble fatal: " + fmt.Sprintf(format, args...))
	os.Exit(1)
}

// SetMaxMemory changes the cap on what the store holds for recent writes
// (Options.MaxMemory); safe at any time. The log's batches and the applier
// follow at once, Pebble's memtable size only when the store is next
// opened: its share stays what it was.
func (s *Store) SetMaxMemory(n int64) {
	if n <= 0 {
		n = DefaultMaxMemory
	}
	b := newBudget(n, s.ap.budget.Load().memTable)
	s.w.mu.Lock()
	s.w.batchLimit = b.logBatch
	s.w.mu.Unlock()
	s.ap.budget.Store(&b)
}

// SetFsync changes the appendfsync policy of the change log; safe at any
// time, and the next group commit follows it.
func (s *Store) SetFsync(f Fsync) { s.policy.Store(int32(f)) }

// Fsync returns the current appendfsync policy.
func (s *Store) Fsync() Fsync { return Fsync(s.policy.Load()) }

// Dir returns the absolute data directory.
func (s *Store) Dir() string { return s.dir }

// Stats are the store's counters, for INFO.
type Stats struct {
	Commits uint64 // group commits appended to the change log
	Fsyncs  uint64 // real fsyncs of the change log
	Records uint64 // records appended to the change log
	Bytes   uint64 // bytes appended to the change log
	Pending uint64 // records accepted but not yet in the change log
	// Applied counts records applied to Pebble; ApplyLag and ApplyLagBytes
	// are the records accepted but not yet applied (Pending included).
	Applied       uint64
	ApplyLag      uint64
	ApplyLagBytes uint64
	// MemoryBytes is what the store holds in the Go heap for itself: the
	// log's batch buffers, the applier's read buffer, window and Pebble
	// batch, large patched values held between apply passes, applied
	// batches Pebble keeps until its next flush, and Pebble's memtables
	// when they are in the Go heap (a build without cgo). What maxmemory
	// leaves out, as Redis leaves out its AOF buffers.
	MemoryBytes uint64
	// HeldBytes is all the store holds in memory for recent writes, in the
	// Go heap or not: MemoryBytes and, with cgo, Pebble's memtables. The
	// cap, MaxMemory, bounds it.
	HeldBytes uint64
	// MemTableBytes is the size of Pebble's memtables, read at most every
	// 100 ms (part of HeldBytes).
	MemTableBytes uint64
	// MaxMemory is the cap (Options.MaxMemory, SetMaxMemory).
	MaxMemory uint64
	// LastCommitErr is the most recent failed log write, Pebble write or
	// rejected change.
	LastCommitErr error
}

// Stats returns current counters.
func (s *Store) Stats() Stats {
	w := &s.w
	w.mu.Lock()
	st := Stats{
		Pending:       w.open.ops,
		Applied:       w.applied,
		ApplyLag:      w.unapplied,
		ApplyLagBytes: uint64(max(w.backlog, 0)),
		LastCommitErr: w.lastErr,
	}
	if w.inflight != nil {
		st.Pending += w.inflight.ops
	}
	logBufs := int64(cap(w.open.buf) + w.otherCap)
	w.mu.Unlock()
	goHeap := logBufs + s.ap.memoryBytes() + s.ap.pebble.bytes.Load()
	memTables := s.ap.memTables.Load()
	held := goHeap + memTables
	if memTablesInGoHeap {
		goHeap = held
	}
	st.MemoryBytes = uint64(goHeap)
	st.HeldBytes = uint64(held)
	st.MemTableBytes = uint64(memTables)
	st.MaxMemory = uint64(s.ap.budget.Load().total)
	st.Commits = s.commits.Load()
	st.Fsyncs = s.fsyncs.Load()
	st.Records = s.records.Load()
	st.Bytes = s.bytes.Load()
	return st
}

// Close appends what is pending and fsyncs the log whatever the policy,
// lets the applier finish, makes Pebble durable and deletes the applied
// log, closes Pebble and releases the directory lock. Changes sent after
// Close are dropped.
func (s *Store) Close() error {
	s.saveMu.Lock()
	if s.closing {
		s.saveMu.Unlock()
		return nil
	}
	s.closing = true
	s.saveMu.Unlock()
	s.saveWG.Wait()

	s.w.close()
	close(s.stop)
	<-s.appenderDone
	<-s.tickerDone
	close(s.applierStop)
	<-s.applierDone
	err := s.closeErr
	if s.ap.failed {
		err = errors.Join(err, errors.New("some changes could not be applied to the store; the change log is kept and replayed at the next start"))
	}
	_ = s.ap.batch.Close()
	if cerr := s.db.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if uerr := s.lock.Close(); uerr != nil {
		err = errors.Join(err, uerr)
	}
	return err
}

// Kill closes the store as a kill -9 would leave it: changes not yet
// written to the log are lost, nothing more is applied to Pebble, and the
// log is replayed at the next open. Only what a crash would keep stays.
func (s *Store) Kill() error {
	s.testKilled.Store(true)
	return s.Close()
}

func syncDir(fsys vfs.FS, dir string) error {
	f, err := fsys.OpenDir(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirSynced makes dir and its missing parents, syncing the parent of each
// one it makes: a directory entry nobody synced can vanish in a power cut,
// and every log segment in it with it. A parent we may not open to sync
// (no read permission) is skipped, as PostgreSQL does.
func mkdirSynced(fsys vfs.FS, dir string) error {
	if _, err := fsys.Stat(dir); err == nil {
		return fsys.MkdirAll(dir, 0o755) // refuses a file in the way
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	parent := fsys.PathDir(dir)
	if parent != dir {
		if err := mkdirSynced(fsys, parent); err != nil {
			return err
		}
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := syncDir(fsys, parent); err != nil && !errors.Is(err, os.ErrPermission) {
		return err
	}
	return nil
}

// lockDir locks the data directory against a second server: with flock on
// the OS's file system (lock_unix.go), with the file system's own lock on
// any other.
func lockDir(fsys vfs.FS, dir string) (io.Closer, error) {
	if fsys == vfs.Default {
		return flockDir(dir)
	}
	l, err := fsys.Lock(filepath.Join(dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("data directory %s: cannot lock: %w", dir, err)
	}
	return l, nil
}
