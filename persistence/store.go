// Package persistence keeps the keyspace in a Pebble store: the engine's
// change records are group-committed to Pebble's WAL by one writer goroutine
// and replayed into the engine at start-up.
//
// A data directory holds:
//
//	db/             the Pebble store
//	checkpoint/     the last SAVE/BGSAVE, itself a valid db/ directory
//	revolver.lock   flock'ed while a server uses the directory
//
// To restore a checkpoint, copy it to db/ of a new data directory and start
// the server on that directory.
package persistence

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
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
)

// Options configure Open.
type Options struct {
	// Dir is the data directory; it is created if missing.
	Dir string
	// Fsync is the initial appendfsync policy.
	Fsync Fsync
	// Logger receives progress and errors; nil means slog.Default().
	Logger *slog.Logger
}

// Store is an open data directory. It implements engine.ChangeSink.
type Store struct {
	dir  string
	db   *pebble.DB
	fs   *walFS
	log  *slog.Logger
	lock *os.File

	w writer

	commits atomic.Uint64
	records atomic.Uint64
	bytes   atomic.Uint64

	stop       chan struct{}
	writerDone chan struct{}
	tickerDone chan struct{}

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
	if err := checkForeign(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s, err := open(dir, lock, opts.Fsync, log)
	if err != nil {
		_ = unlockDir(lock)
		return nil, err
	}
	return s, nil
}

func open(dir string, lock *os.File, policy Fsync, log *slog.Logger) (*Store, error) {
	dbDir := filepath.Join(dir, dbName)
	if _, err := os.Stat(dbDir); errors.Is(err, fs.ErrNotExist) {
		if err := create(dir, log); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := checkStore(dir, dbDir, log); err != nil {
		return nil, err
	}
	wfs := newWALFS(vfs.Default, dbDir, policy, log)
	db, err := pebble.Open(dbDir, pebbleOptions(wfs, log))
	if err != nil {
		return nil, fmt.Errorf("data directory %s: cannot open store: %w", dir, err)
	}
	s := &Store{
		dir:        dir,
		db:         db,
		fs:         wfs,
		log:        log,
		lock:       lock,
		stop:       make(chan struct{}),
		writerDone: make(chan struct{}),
		tickerDone: make(chan struct{}),
		lastSave:   time.Now(),
	}
	s.w.init(db, log)
	go s.runWriter()
	go s.runTicker()
	return s, nil
}

// checkForeign refuses a non-empty directory without db/: it is someone
// else's, and starting there would look like an empty database.
func checkForeign(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	var found []string
	for _, e := range entries {
		switch e.Name() {
		case dbName:
			return nil
		case lockName, newDBName:
			// Left by a first start that died before db/ existed.
			continue
		}
		found = append(found, e.Name())
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
func create(dir string, log *slog.Logger) error {
	tmp := filepath.Join(dir, newDBName)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	opts := pebbleOptions(vfs.Default, log)
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
		err = os.Rename(tmp, filepath.Join(dir, dbName))
	}
	if err == nil {
		err = syncDir(dir)
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
func checkStore(dir, dbDir string, log *slog.Logger) error {
	opts := pebbleOptions(vfs.Default, log)
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
	}
	return nil
}

// pebbleOptions suit a write-mostly store read once at start-up: a small
// block cache, large memtables, and Pebble's logs kept out of the way.
func pebbleOptions(fs vfs.FS, log *slog.Logger) *pebble.Options {
	l := pebbleLogger{log}
	return &pebble.Options{
		FS:                 fs,
		CacheSize:          8 << 20,
		MemTableSize:       64 << 20,
		WALBytesPerSync:    0,
		ErrorIfNotExists:   true,
		FormatMajorVersion: pebble.FormatNewest,
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

// SetFsync changes the appendfsync policy; safe at any time.
func (s *Store) SetFsync(f Fsync) { s.fs.setPolicy(f) }

// Fsync returns the current appendfsync policy.
func (s *Store) Fsync() Fsync { return s.fs.getPolicy() }

// Dir returns the absolute data directory.
func (s *Store) Dir() string { return s.dir }

// Stats are the writer's counters, for INFO.
type Stats struct {
	Commits uint64 // batches applied to Pebble
	Fsyncs  uint64 // real fsyncs of the WAL
	Records uint64 // Pebble operations committed
	Bytes   uint64 // batch bytes committed
	Pending uint64 // operations accepted but not yet committed
	// LastCommitErr is the most recent failed commit or rejected change.
	LastCommitErr error
}

// Stats returns current counters.
func (s *Store) Stats() Stats {
	pending, lastErr := s.w.pending()
	return Stats{
		Commits:       s.commits.Load(),
		Fsyncs:        s.fs.fsyncs.Load(),
		Records:       s.records.Load(),
		Bytes:         s.bytes.Load(),
		Pending:       pending,
		LastCommitErr: lastErr,
	}
}

// runTicker is the everysec fsync.
func (s *Store) runTicker() {
	defer close(s.tickerDone)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if s.fs.getPolicy() != FsyncEverySec {
				continue
			}
			if err := s.fs.syncOpen(); err != nil {
				s.log.Error("WAL fsync failed", "err", err)
			}
		case <-s.stop:
			return
		}
	}
}

// Close commits what is pending, fsyncs the WAL for real whatever the
// policy, closes Pebble and releases the directory lock. Changes sent after
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
	<-s.writerDone
	<-s.tickerDone
	err := s.w.drainErr
	if serr := s.fs.syncOpen(); serr != nil {
		err = errors.Join(err, fmt.Errorf("WAL fsync: %w", serr))
	}
	s.w.release()
	if cerr := s.db.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if uerr := unlockDir(s.lock); uerr != nil {
		err = errors.Join(err, uerr)
	}
	return err
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
