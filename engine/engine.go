// Package engine is the in-memory keyspace: databases of typed values, exact
// expiry through one scheduler, keyspace notifications, and the change
// records persistence consumes. It imports no other package of this module.
//
// Concurrency is one lock, like Redis's single thread: callers take it with
// Lock for a whole batch of commands and every method below assumes it is
// held unless it says otherwise.
package engine

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Engine holds the databases and everything time-driven.
type Engine struct {
	mu          sync.Mutex
	now         int64     // unix ms; refreshed by Lock and Refresh
	nowTime     time.Time // the same instant, for callers that time commands
	clock       Clock
	dbs         []*DB
	byPhys      []*DB // the databases by DB.phys (swapdb.go)
	sink        *coalescingSink
	notifier    Notifier
	notifyFlags atomic.Uint32
	sched       scheduler
	onExpiry    func(time.Duration) // observes each firing that expired keys (observe.go)
	lazy        LazyFree            // lazyfree-lazy-* (lazyfree.go)
	rx          replicaExpiry       // a replica's keys die by the master's word (replica_expiry.go)
	onDeleted   DeletionHook        // expired and evicted keys, for replicas (propagate.go)
	stats       Stats
	// maxStringLen is the largest string a write may produce
	// (proto-max-bulk-len).
	maxStringLen int64
	started      bool
	// WATCH registrations (watch.go) and blocked clients (blocking.go).
	watched  map[dbKey][]*Watch
	watching int
	waiters  map[dbKey][]*Waiter
	ready    []dbKey
	blocked  int
	limits   Limits
	// Blocked clients with a timeout, by their scheduler entry's id
	// (blocking.go).
	timedWaiters map[uint64]*Waiter
	nextWaiterID uint64
	// prefetch is DB.Prefetch's scratch space; hllRaised is PFAdd's.
	prefetch  prefetchState
	hllRaised []int
	// recordBuf is scratch space for encoding item records.
	recordBuf []byte
	// families holds each native family's per-engine state (family.go).
	families []any
	// loadedBound are the key-bound values a load brought in, to attach
	// once it finishes (finishLoad).
	loadedBound []dbKey
	// frozen: a slow script yields the lock and only it may change data
	// (freeze.go); thawed is closed when it ends, closedFrozen holds the
	// clients that closed meanwhile.
	frozen       bool
	thawed       chan struct{}
	closedFrozen []int64
	// server holds the server records (server_records.go).
	server map[string][]byte
	// tracker follows key changes for CLIENT TRACKING (tracking.go).
	tracker KeyTracker
	stop    chan struct{}
	stopped chan struct{}
}

// Stats are the engine's counters for INFO. Read them under the lock.
type Stats struct {
	ExpiredKeys    int64
	KeyspaceHits   int64
	KeyspaceMisses int64
	// Dirty counts changes since the last save (rdb_changes_since_last_save).
	Dirty int64
	// LazyfreedObjects counts what Redis would have freed in the
	// background (lazyfree.go).
	LazyfreedObjects int64
}

// Options configure a new Engine.
type Options struct {
	Databases int   // default 16
	Clock     Clock // default SystemClock
}

// New returns an engine with empty databases. Call Start to run timers.
func New(opts Options) *Engine {
	if opts.Databases <= 0 {
		opts.Databases = 16
	}
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	e := &Engine{
		clock:        opts.Clock,
		limits:       DefaultLimits(),
		maxStringLen: 512 << 20,
		sched:        newScheduler(),
		families:     newFamilies(),
		stop:         make(chan struct{}),
		stopped:      make(chan struct{}),
	}
	e.dbs = make([]*DB, opts.Databases)
	for i := range e.dbs {
		e.dbs[i] = &DB{e: e, id: i, phys: i, keys: newKeyspace()}
	}
	e.byPhys = append([]*DB(nil), e.dbs...)
	e.SetSink(nil)
	e.Refresh()
	e.startMeter()
	return e
}

// SetSink routes change records to persistence. Set it before Start.
func (e *Engine) SetSink(s ChangeSink) {
	if s == nil {
		s = nopSink{}
	}
	e.sink = &coalescingSink{ChangeSink: physSink{s, e}}
}

// FlushChanges hands any record held back for coalescing to persistence.
// Unlock does it; call it too before anything that needs every change
// recorded while the lock is still held (SAVE's checkpoint).
func (e *Engine) FlushChanges() { e.sink.flush() }

// SetNotifier routes keyspace events to pub/sub.
func (e *Engine) SetNotifier(n Notifier) { e.notifier = n }

// Start runs the timer loop. Safe to call without the lock.
func (e *Engine) Start() {
	if e.started {
		return
	}
	e.started = true
	e.Lock()
	e.finishLoad()
	e.Unlock()
	go e.timerLoop()
}

// Close stops the timer loop. Safe to call without the lock.
func (e *Engine) Close() {
	if !e.started {
		return
	}
	select {
	case <-e.stop:
	default:
		close(e.stop)
	}
	<-e.stopped
}

// Lock takes the engine lock and refreshes the cached time.
func (e *Engine) Lock() {
	e.mu.Lock()
	e.Refresh()
}

// Unlock releases the engine lock.
// Records held back for coalescing are written first.
func (e *Engine) Unlock() {
	if e.tracker != nil {
		e.tracker.BeforeUnlock()
	}
	e.sink.flush()
	e.mu.Unlock()
}

// Refresh re-reads the clock and returns the instant read; the server calls
// it before each command so a long pipelined batch does not judge expiry by a
// stale time, and reuses the instant to time the command.
func (e *Engine) Refresh() time.Time {
	t := e.clock.Now()
	if !e.frozen { // a frozen engine keeps the slow script's instant
		e.now, e.nowTime = t.UnixMilli(), t
	}
	return t
}

// NowTime is the instant of the last Lock or Refresh.
func (e *Engine) NowTime() time.Time { return e.nowTime }

// Now is the cached time in unix milliseconds.
func (e *Engine) Now() int64 { return e.now }

// Clock returns the engine's clock.
func (e *Engine) Clock() Clock { return e.clock }

// Limits are the encoding thresholds Redis's configuration names (the
// *-max-listpack-* family): Revolver does not pack small values the same
// way, but it reports OBJECT ENCODING as Redis would for the same contents,
// and these decide which name.
type Limits struct {
	HashMaxListpackEntries int64
	HashMaxListpackValue   int64
	SetMaxIntsetEntries    int64
	ZSetMaxListpackEntries int64
	ZSetMaxListpackValue   int64
	// HLLSparseMaxBytes is hll-sparse-max-bytes: the size (header
	// included) past which a sparse HyperLogLog turns dense.
	HLLSparseMaxBytes int64
	// UVExactMax is uv-exact-max: how many members a unique counter counts
	// exactly before it turns into a HyperLogLog.
	UVExactMax int64
	// RoomMaxMessages, RoomImportantMax, RoomImportantTTL (ms) and
	// RoomPresenceTTL (ms) are room-max-messages, room-important-max,
	// room-important-ttl and room-presence-ttl: the limits of a ROOM key
	// that sets none of its own.
	RoomMaxMessages, RoomImportantMax, RoomImportantTTL, RoomPresenceTTL int64
	// RoomTiers is room-tiers: the flow-control tiers of a room that sets
	// none of its own.
	RoomTiers []RoomTier
	// StreamNodeMaxEntries and StreamNodeMaxBytes are stream-node-max-entries
	// and stream-node-max-bytes: when XADD opens a stream's next node.
	StreamNodeMaxEntries, StreamNodeMaxBytes int64
}

// DefaultLimits are Redis 7.0's defaults.
func DefaultLimits() Limits {
	return Limits{HashMaxListpackEntries: 512, HashMaxListpackValue: 64, SetMaxIntsetEntries: 512,
		ZSetMaxListpackEntries: 128, ZSetMaxListpackValue: 64, HLLSparseMaxBytes: 3000, UVExactMax: 10000,
		RoomMaxMessages: 2000, RoomImportantMax: 200, RoomImportantTTL: 600_000, RoomPresenceTTL: 30_000,
		StreamNodeMaxEntries: 100, StreamNodeMaxBytes: 4096}
}

// SetLimits follows CONFIG SET of the encoding thresholds.
func (e *Engine) SetLimits(l Limits) { e.limits = l }

// SetMaxStringLen follows CONFIG SET proto-max-bulk-len.
func (e *Engine) SetMaxStringLen(n int64) { e.maxStringLen = n }

// MaxStringLen is the largest string a write may produce.
func (e *Engine) MaxStringLen() int64 { return e.maxStringLen }

// Databases is the number of databases.
func (e *Engine) Databases() int { return len(e.dbs) }

// DB returns database i (0 <= i < Databases()).
func (e *Engine) DB(i int) *DB { return e.dbs[i] }

// Stats returns the counters.
func (e *Engine) Stats() Stats { return e.stats }

// ResetStats zeroes the resettable counters (CONFIG RESETSTAT).
func (e *Engine) ResetStats() {
	dirty := e.stats.Dirty
	e.stats = Stats{Dirty: dirty}
	for _, f := range e.families {
		if r, ok := f.(interface{ resetStats() }); ok {
			r.resetStats()
		}
	}
}

// MarkSaved resets the dirty counter after a successful save.
func (e *Engine) MarkSaved() { e.stats.Dirty = 0 }

// FlushAll empties every database. Each key removed counts as a change,
// as in Redis, and nothing else does.
func (e *Engine) FlushAll() { e.flushAll(false) }

// FlushAllAsync is FLUSHALL ASYNC: the keys count as freed lazily.
func (e *Engine) FlushAllAsync() { e.flushAll(true) }

func (e *Engine) flushAll(async bool) {
	for _, db := range e.dbs {
		if async {
			e.stats.LazyfreedObjects += int64(db.Len())
		}
		if db.Len() > 0 {
			reclaim()
		}
		e.stats.Dirty += int64(db.keys.Len())
		db.clear()
	}
	if e.tracker != nil {
		e.tracker.Flushed(async)
	}
	e.sink.FlushAll()
}

// unixSeconds is the wall clock in seconds. Objects' access fields are set
// by accessed and created (evict.go), which keep Redis's LRU or LFU bits.
func (e *Engine) unixSeconds() uint32 { return uint32(e.now / 1000) }

// idleTime returns seconds since obj was last accessed, by the LRU clock.
func (e *Engine) idleTime(obj Object) int64 { return int64(e.idleMillis(obj) / 1000) }

// str views b as a string without copying, for lookups only: the result
// must not be retained.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
