package engine

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
	"weak"
)

// How eviction knows how far over maxmemory it is (decision 0008). The
// heap Go measures includes garbage until a collection frees it, and an
// evicted key is garbage, not freed memory: judged by the heap alone,
// eviction would go on evicting until the collector ran. So the meter
// estimates the live heap instead:
//
//	estimate = live heap at the last collection, less the keyspaces'
//	           flat memory (HeldBytes: pages, blocks, index; read when the
//	           engine first sees the collection, a few pages off at most)
//	           and what persistence held then for its store (as Redis
//	           leaves its AOF buffers out)
//	         + the keyspaces' flat memory now, exactly: the records' slots
//	           and the index (decision 0012), which every string write
//	           and delete moves by what it really takes
//	         + bytes written since to values that are objects (the change
//	           records' sizes plus a per-record allowance for the node,
//	           header and allocation slack around them)
//	         - bytes of objects evicted since (MEMORY USAGE's estimate)
//	         + how much the clients' buffers grew since (the server keeps
//	           their total, SetClientMemory), as Redis counts them
//
// and re-bases on the collector's measurement after every cycle, so the
// errors of the object terms last one cycle. Eviction keeps the estimate
// under the target, just below maxmemory as Redis keeps used_memory under
// it; the server gives the Go runtime a memory limit above maxmemory by an
// allowance for garbage (server/evict.go), so garbage is collected before
// the heap, garbage included, passes that.

// evictHeadroomDiv sets the target: maxmemory less 1/evictHeadroomDiv of it,
// for what the estimate learns only at the next collection (objects grown
// in place between two evictions). Strings, whose memory the estimate reads
// exactly, fill the rest.
const evictHeadroomDiv = 32

// Per-record allowances for what a record's bytes do not show: a keyspace
// entry (dict node, value header, allocation rounding) for a value record,
// a member's node for an item record.
const (
	valueRecordOverhead = 112
	itemRecordOverhead  = 48
)

// gcWatch follows the collector: after every cycle a finalizer records the
// live heap it measured. One for the process, as the heap is.
var gcWatch struct {
	once sync.Once
	gen  atomic.Uint64
	live atomic.Int64
}

// gcSentinel is garbage made on purpose: its finalizer runs once per
// collection cycle and arms the next one. The pointer keeps it out of the
// tiny allocator, whose blocks are freed together.
type gcSentinel struct{ _ *int }

func watchGC() { gcWatch.once.Do(armGCSentinel) }

func armGCSentinel() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		noteClientsAtGC()
		gcWatch.live.Store(readMetric("/gc/heap/live:bytes"))
		gcWatch.gen.Add(1)
		armGCSentinel()
	})
}

func readMetric(name string) int64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// memMeter is the engine's estimate of its live heap under maxmemory.
type memMeter struct {
	limit int64 // maxmemory; 0 for none
	// gcGen is the collection the base was taken at; base the live heap
	// then less the keyspaces' flat memory, held what persistence held
	// then, and writtenBase and freedBase the counters at that time.
	gcGen                  uint64
	base, held             int64
	writtenBase, freedBase int64
	freed                  int64 // estimated bytes of objects evicted, ever
	// liveSource reads the collector's latest measurement (a generation
	// and the live heap); tests replace it.
	liveSource func() (gen uint64, live int64)
	// uncounted reads memory that maxmemory does not count (nil: none).
	uncounted func() int64
	// clients follows the clients' buffers (nil: not followed), and
	// clientsBase is what they were at the collection the base is from.
	clients     *clientsGauge
	clientsBase int64
	// collect asks for a collection when the estimate may be stale.
	collect func()
	// heapNow reads the heap as it is now, garbage included (used_memory);
	// tests replace it.
	heapNow func() int64
}

// forcedGC rate-limits the collections eviction asks for.
var forcedGC struct {
	running atomic.Bool
	last    atomic.Int64 // unix nanos
}

// requestGC starts a collection in the background unless one it asked
// for runs or ran in the last 100 ms. Eviction asks when it finds nothing
// left to evict: the estimate may be an old cycle's (a backlog that has
// drained since, a burst of garbage-free growth), and with writes refused
// nothing else would allocate enough to start a cycle and correct it.
func requestGC() {
	now := time.Now().UnixNano()
	if now-forcedGC.last.Load() < int64(100*time.Millisecond) || !forcedGC.running.CompareAndSwap(false, true) {
		return
	}
	forcedGC.last.Store(now)
	go func() {
		runtime.GC()
		forcedGC.running.Store(false)
	}()
}

func (m *memMeter) init() {
	m.liveSource = func() (uint64, int64) { return gcWatch.gen.Load(), gcWatch.live.Load() }
	m.collect = requestGC
	m.heapNow = func() int64 { return readMetric("/memory/classes/heap/objects:bytes") }
}

// SetMaxMemory sets the limit eviction holds the estimate under (0: none).
func (e *Engine) SetMaxMemory(limit int64) {
	m := &e.eviction().meter
	m.limit = limit
}

// startMeter bases the meter on the heap as it is now, garbage included
// (an overestimate until the first collection), and starts following the
// collector. New calls it.
func (e *Engine) startMeter() {
	m := &e.eviction().meter
	watchGC()
	m.gcGen, _ = m.liveSource()
	m.base = readMetric("/memory/classes/heap/objects:bytes") - e.keyspaceHeld()
	m.writtenBase, m.freedBase = e.sink.written, m.freed
	m.clientsBase = m.clientsNow()
}

// SetClientMemory gives the meter the clients' buffer total, which the
// server keeps as they grow and shrink: the live heap the collector
// measured holds the buffers as they were then, and the estimate follows
// them from there, so used_memory and maxmemory see a client's buffers at
// once (Redis counts them in both).
func (e *Engine) SetClientMemory(total *atomic.Int64) {
	m := &e.eviction().meter
	m.clients = &clientsGauge{total: total}
	m.clientsBase = total.Load()
	gcClients.Lock()
	gcClients.gauges = append(gcClients.gauges, weak.Make(m.clients))
	gcClients.Unlock()
}

// clientsGauge is a server's clients' total as it is and as it was at
// the last collection. The collection's live heap holds the buffers of
// that moment: a base taken later must leave out those, not the buffers
// of the moment it is taken (a big buffer freed in between would stay in
// the estimate until the next collection, which an idle server may not
// have for long).
type clientsGauge struct {
	total *atomic.Int64
	atGC  atomic.Int64
}

// gcClients are the gauges the collection sentinel records, weakly held:
// a closed engine's goes with it.
var gcClients struct {
	sync.Mutex
	gauges []weak.Pointer[clientsGauge]
}

// noteClientsAtGC records every gauge's total for the collection that just
// ended. From the sentinel's finalizer, before it publishes the cycle.
func noteClientsAtGC() {
	gcClients.Lock()
	defer gcClients.Unlock()
	kept := gcClients.gauges[:0]
	for _, w := range gcClients.gauges {
		if g := w.Value(); g != nil {
			g.atGC.Store(g.total.Load())
			kept = append(kept, w)
		}
	}
	clear(gcClients.gauges[len(kept):])
	gcClients.gauges = kept
}

func (m *memMeter) clientsNow() int64 {
	if m.clients == nil {
		return 0
	}
	return m.clients.total.Load()
}

// MemoryEstimate is the meter's estimate of the live heap that maxmemory
// counts, in bytes.
func (e *Engine) MemoryEstimate() int64 {
	m := &e.eviction().meter
	m.rebase(e.sink.written, e.keyspaceHeld)
	return m.estimate(e.sink.written, e.keyspaceBytes()) - m.held
}

// UsedMemory is MemoryEstimate with persistence's memory counted too: INFO's
// used_memory, the live heap without garbage. Under the lock.
func (e *Engine) UsedMemory() int64 {
	m := &e.eviction().meter
	m.rebase(e.sink.written, e.keyspaceHeld)
	return m.estimate(e.sink.written, e.keyspaceBytes())
}

// keyspaceBytes is the databases' flat memory now: records' slots and
// indexes.
func (e *Engine) keyspaceBytes() int64 {
	n := e.sched.bytes // deadlines and timers, counted exactly too
	for _, db := range e.dbs {
		n += db.keys.recs.LiveBytes()
	}
	return n
}

// keyspaceHeld is the Go heap the databases' flat memory holds.
func (e *Engine) keyspaceHeld() int64 {
	n := e.sched.bytes
	for _, db := range e.dbs {
		n += db.keys.recs.HeldBytes()
	}
	return n
}

// rebase re-bases the meter on a collection that measured live bytes, of
// which flatHeld reads the keyspaces' share.
func (m *memMeter) rebase(written int64, flatHeld func() int64) {
	gen, live := m.liveSource()
	if gen == m.gcGen {
		return
	}
	m.gcGen, m.base, m.held = gen, live-flatHeld(), 0
	if m.uncounted != nil {
		m.held = m.uncounted()
	}
	m.writtenBase, m.freedBase = written, m.freed
	if m.clients != nil {
		m.clientsBase = m.clients.atGC.Load()
	}
}

// SetUncountedMemory tells the meter where to read memory that eviction
// leaves out, as Redis leaves out its AOF buffers: the records persistence
// holds until its store has applied them. Read once per collection.
func (e *Engine) SetUncountedMemory(f func() int64) { e.eviction().meter.uncounted = f }

// estimate is the live heap, persistence's included, given the change
// records' byte counter and the keyspaces' flat memory now.
func (m *memMeter) estimate(written, keyspace int64) int64 {
	return m.base + keyspace + (written - m.writtenBase) - (m.freed - m.freedBase) + (m.clientsNow() - m.clientsBase)
}

// target is the estimate eviction brings memory back under.
func (m *memMeter) target() int64 { return m.limit - m.limit/evictHeadroomDiv }

// EvictResult is what PerformEvictions achieved.
type EvictResult uint8

// Results, as Redis's EVICT_OK, EVICT_RUNNING and EVICT_FAIL.
const (
	EvictOK      EvictResult = iota // under the limit
	EvictRunning                    // over it, still evicting (the time ran out)
	EvictFail                       // over it, with nothing the policy may evict
)

// timerEvict continues an eviction that ran out of time, as Redis's
// eviction time proc does, so memory comes down without new commands.
var timerEvict TimerKind

func init() {
	timerEvict = registerTimerKind("evict", func(e *Engine, _ Timer) { e.PerformEvictions() })
}

// StartEvictions has the scheduler run an eviction as soon as the engine
// lock is free, as Redis's CONFIG SET maxmemory starts its eviction time
// proc instead of evicting inside the command.
func (e *Engine) StartEvictions() { e.schedule(Timer{When: e.now, Kind: timerEvict}) }

// PerformEvictions evicts keys by the policy in force until the estimate
// is under the target, or the time maxmemory-eviction-tenacity allows
// runs out. The server calls it before every command while maxmemory is
// set and the policy evicts; a command that may grow memory is refused
// when it returns EvictFail.
func (e *Engine) PerformEvictions() EvictResult {
	s := e.eviction()
	m := &s.meter
	if m.limit <= 0 || s.cfg.Policy == PolicyNoEviction {
		s.exceeded(e.now, false)
		return EvictOK
	}
	// A held record is growth the estimate must see now: a pipelined
	// SETRANGE that grew a string past the limit evicts before the next
	// command, as in Redis.
	e.sink.flush()
	written := e.sink.written
	m.rebase(written, e.keyspaceHeld)
	used, target := m.estimate(written, e.keyspaceBytes())-m.held, m.target()
	if used <= target {
		s.exceeded(e.now, false)
		return EvictOK
	}
	var start time.Time
	limit := evictionTimeLimit(s.cfg.Tenacity)
	for n := 1; used > target; n++ {
		if n == 1 {
			start = time.Now()
		}
		size, objSize, ok := e.evictOne()
		if !ok {
			return s.nothingToEvict(e.now, used)
		}
		m.freed += objSize // the record's memory leaves keyspaceBytes by itself
		used -= size
		if n%16 == 0 && time.Since(start) > limit {
			e.schedule(Timer{When: e.now, Kind: timerEvict})
			s.exceeded(e.now, true)
			return EvictRunning
		}
	}
	s.exceeded(e.now, false)
	return EvictOK
}

// nothingToEvict ends an eviction that found no victim with the estimate
// at used. As in Redis, writes are refused only over maxmemory itself, not
// over the target below it; and as the estimate may be an old cycle's (a
// persistence backlog that has drained since, garbage-free growth), the
// heap measured now, garbage included, overrules it when lower. A
// collection is asked for so the next estimate is fresh.
func (s *evictState) nothingToEvict(now, used int64) EvictResult {
	m := &s.meter
	m.collect()
	if used > m.limit {
		heap := m.heapNow()
		if m.uncounted != nil {
			heap -= m.uncounted()
		}
		used = min(used, heap)
	}
	over := used > m.limit
	s.exceeded(now, over)
	if over {
		return EvictFail
	}
	return EvictOK
}

// exceeded tracks the time spent over the limit (INFO's
// total_eviction_exceeded_time and current_eviction_exceeded_time).
func (s *evictState) exceeded(now int64, over bool) {
	switch {
	case over && s.overSince == 0:
		s.overSince = now
	case !over && s.overSince != 0:
		s.exceededMs += max(now-s.overSince, 0)
		s.overSince = 0
	}
}

// evictionTimeLimit is how long one call may evict: 50 µs per step of
// tenacity up to 10, then 15% more per step, unlimited at 100.
func evictionTimeLimit(tenacity int) time.Duration {
	switch {
	case tenacity <= 10:
		return time.Duration(50*tenacity) * time.Microsecond
	case tenacity < 100:
		us := 500.0
		for i := 10; i < tenacity; i++ {
			us *= 1.15
		}
		return time.Duration(us) * time.Microsecond
	}
	return time.Duration(1<<63 - 1)
}
