package engine

import (
	"math"
	"math/rand/v2"

	"github.com/revolver-db/revolver/flat"
)

// Eviction under maxmemory: the eight maxmemory-policy values of Redis 7.0,
// with its approximations. The LRU and LFU policies (and volatile-ttl) keep
// a small pool of the best candidates seen so far, refilled by sampling
// maxmemory-samples keys of every database each time a key is evicted; the
// random ones pick a random key of the next database in turn. How much must
// go is the memory meter's business (evict_mem.go).

// EvictionPolicy is a maxmemory-policy.
type EvictionPolicy uint8

// The policies, in the order CONFIG's error message lists Redis's.
const (
	PolicyNoEviction EvictionPolicy = iota
	PolicyVolatileLRU
	PolicyVolatileLFU
	PolicyVolatileRandom
	PolicyVolatileTTL
	PolicyAllKeysLRU
	PolicyAllKeysLFU
	PolicyAllKeysRandom
)

// EvictionPolicyNames are the maxmemory-policy values, in Redis's order.
var EvictionPolicyNames = []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
	"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}

var policyByName = map[string]EvictionPolicy{
	"noeviction": PolicyNoEviction, "volatile-lru": PolicyVolatileLRU, "volatile-lfu": PolicyVolatileLFU,
	"volatile-random": PolicyVolatileRandom, "volatile-ttl": PolicyVolatileTTL, "allkeys-lru": PolicyAllKeysLRU,
	"allkeys-lfu": PolicyAllKeysLFU, "allkeys-random": PolicyAllKeysRandom,
}

// ParseEvictionPolicy resolves a maxmemory-policy name case-insensitively.
func ParseEvictionPolicy(name string) (EvictionPolicy, bool) {
	for n, p := range policyByName {
		if equalFold(n, name) {
			return p, true
		}
	}
	return 0, false
}

func (p EvictionPolicy) String() string {
	for n, q := range policyByName {
		if q == p {
			return n
		}
	}
	return "noeviction"
}

// LFU reports whether the policy tracks access frequency instead of time.
func (p EvictionPolicy) LFU() bool { return p == PolicyVolatileLFU || p == PolicyAllKeysLFU }

func (p EvictionPolicy) allKeys() bool {
	return p == PolicyAllKeysLRU || p == PolicyAllKeysLFU || p == PolicyAllKeysRandom
}

func (p EvictionPolicy) random() bool { return p == PolicyAllKeysRandom || p == PolicyVolatileRandom }

// EvictionConfig holds the parameters eviction follows, with Redis's
// option names.
type EvictionConfig struct {
	Policy    EvictionPolicy // maxmemory-policy
	Samples   int            // maxmemory-samples: keys sampled per database per eviction
	Tenacity  int            // maxmemory-eviction-tenacity: 0..100, the time one call may spend
	LogFactor int            // lfu-log-factor
	DecayTime int            // lfu-decay-time: minutes per decrement of an idle key's counter
}

// DefaultEvictionConfig is Redis's defaults.
func DefaultEvictionConfig() EvictionConfig {
	return EvictionConfig{Policy: PolicyNoEviction, Samples: 5, Tenacity: 10, LogFactor: 10, DecayTime: 1}
}

// evictPoolSize is the number of candidates kept between evictions (Redis's
// EVPOOL_SIZE).
const evictPoolSize = 16

// poolEntry is one candidate: higher score is evicted first.
type poolEntry struct {
	score uint64
	db    int
	key   string
}

// evictState is eviction's per-engine state.
type evictState struct {
	inited bool
	cfg    EvictionConfig
	// pool holds up to evictPoolSize candidates in rising score order,
	// packed at the start; n is how many.
	pool   [evictPoolSize]poolEntry
	n      int
	nextDB int // the random policies take databases in turn
	meter  memMeter
	// evicted counts evicted keys (INFO evicted_keys); overSince is when
	// memory last went over the limit (ms, 0 when under) and exceededMs
	// the time spent over before that (total_eviction_exceeded_time).
	evicted    int64
	overSince  int64
	exceededMs int64
}

var evictStateOf = newFamilyState[evictState]()

// eviction returns e's eviction state, with Redis's defaults the first time.
func (e *Engine) eviction() *evictState {
	s := evictStateOf.of(e)
	if !s.inited {
		s.inited = true
		s.cfg = DefaultEvictionConfig()
		s.meter.init()
	}
	return s
}

func (s *evictState) resetStats() {
	s.evicted = 0
	s.exceededMs = 0
}

// SetEvictionConfig applies CONFIG's eviction parameters. A change of
// policy empties the candidate pool: its scores meant something else.
func (e *Engine) SetEvictionConfig(c EvictionConfig) {
	s := e.eviction()
	if c.Policy != s.cfg.Policy {
		s.clearPool()
	}
	s.cfg = c
}

// EvictionConfig returns the parameters in force.
func (e *Engine) EvictionConfig() EvictionConfig { return e.eviction().cfg }

// EvictionStats are the INFO stats fields of eviction.
type EvictionStats struct {
	EvictedKeys       int64
	TotalExceededMs   int64 // total_eviction_exceeded_time
	CurrentExceededMs int64 // current_eviction_exceeded_time
}

// EvictionStats returns the counters for INFO.
func (e *Engine) EvictionStats() EvictionStats {
	s := e.eviction()
	st := EvictionStats{EvictedKeys: s.evicted, TotalExceededMs: s.exceededMs}
	if s.overSince != 0 {
		cur := max(e.now-s.overSince, 0)
		st.CurrentExceededMs = cur
		st.TotalExceededMs += cur
	}
	return st
}

// The access clock kept in every object's header (objHeader.atime), as
// Redis keeps its 24 bits: under an LRU policy (and noeviction) the LRU
// clock, seconds modulo 2^24; under an LFU policy the time of the last
// decrement in minutes modulo 2^16 in the high 16 bits and the logarithmic
// access counter in the low 8.
const (
	lruClockMax = 1<<24 - 1
	lfuInitVal  = 5
)

// lruClock is the current LRU clock.
func (e *Engine) lruClock() uint32 { return uint32(e.now/1000) & lruClockMax }

// lfuMinutes is the current LFU decrement clock.
func (e *Engine) lfuMinutes() uint32 { return uint32(e.now/60000) & 0xffff }

// freshClock is the access field of a value entering the keyspace: one
// that already has one (RENAME, MOVE, a load's second pass, RESTORE's
// IDLETIME or FREQ) is only accessed.
func (e *Engine) freshClock(c uint32) uint32 {
	if c != 0 {
		return e.touchClock(c)
	}
	if e.eviction().cfg.Policy.LFU() {
		return e.lfuMinutes()<<8 | lfuInitVal
	}
	return e.lruClock()
}

// touchClock is the access field c after an access: the LRU clock, or
// under an LFU policy the counter decayed for the time since its last
// decrement and then perhaps incremented.
func (e *Engine) touchClock(c uint32) uint32 {
	s := e.eviction()
	if !s.cfg.Policy.LFU() {
		return e.lruClock()
	}
	counter := lfuLogIncr(lfuDecayed(c, e.lfuMinutes(), s.cfg.DecayTime), s.cfg.LogFactor, rand.Float64())
	return e.lfuMinutes()<<8 | uint32(counter)
}

// created initializes the access field of a value entering the keyspace
// (see freshClock).
func (e *Engine) created(obj Object) {
	h := obj.header()
	h.atime = e.freshClock(h.atime)
}

// setAccess is RESTORE's IDLETIME or FREQ (Redis's objectSetLRUOrLFU):
// under an LFU policy a frequency >= 0 becomes the counter; otherwise an
// idle time >= 0 sets the LRU clock that many seconds back, wrapping as
// Redis's 24-bit clock does.
func (e *Engine) setAccess(obj Object, freq, idleSeconds int64) {
	h := obj.header()
	if e.eviction().cfg.Policy.LFU() {
		if freq >= 0 {
			h.atime = e.lfuMinutes()<<8 | uint32(min(freq, 255))
		}
		return
	}
	if idleSeconds < 0 {
		return
	}
	clock := int64(e.lruClock())
	at := clock - idleSeconds
	if at < 0 {
		at += lruClockMax
	}
	h.atime = uint32(at) & lruClockMax // modulo 2^24, as Redis's bit field
}

// lfuLogIncr is the counter after one access, given r uniform in [0,1): it
// grows with probability 1/((counter-LFU_INIT_VAL)*factor+1), so the
// counter is roughly logarithmic in the accesses, saturating at 255.
func lfuLogIncr(counter uint8, factor int, r float64) uint8 {
	if counter == 255 {
		return 255
	}
	base := max(float64(counter)-lfuInitVal, 0)
	if r < 1.0/(base*float64(factor)+1) {
		counter++
	}
	return counter
}

// lfuDecayed is the counter in the access field atime, decremented once
// for every decayTime minutes since its decrement time (the clock wraps at
// 2^16 minutes), as of the minute clock now.
func lfuDecayed(atime, now uint32, decayTime int) uint8 {
	last := atime >> 8 & 0xffff
	counter := uint8(atime)
	if decayTime == 0 {
		return counter
	}
	var elapsed uint32
	if now >= last {
		elapsed = now - last
	} else {
		elapsed = 65535 - last + now
	}
	periods := elapsed / uint32(decayTime)
	if periods >= uint32(counter) {
		return 0
	}
	return counter - uint8(periods)
}

// idleMillis is the time since obj's last access by the LRU clock, with its
// wrap (about 194 days).
func (e *Engine) idleMillis(obj Object) uint64 { return e.idleMillisOf(obj.header().atime) }

func (e *Engine) idleMillisOf(atime uint32) uint64 {
	now, at := e.lruClock(), atime&lruClockMax
	if now >= at {
		return uint64(now-at) * 1000
	}
	return uint64(now+(lruClockMax-at)) * 1000
}

// LFUPolicy reports whether an LFU policy is in force (OBJECT FREQ works
// and OBJECT IDLETIME does not).
func (db *DB) LFUPolicy() bool { return db.e.eviction().cfg.Policy.LFU() }

// AccessFrequency is OBJECT FREQ: obj's counter with its decay applied,
// which the lookup does not store.
func (db *DB) AccessFrequency(obj Object) int64 {
	s := db.e.eviction()
	return int64(lfuDecayed(obj.header().atime, db.e.lfuMinutes(), s.cfg.DecayTime))
}

// score ranks a candidate for the pooled policies: the key evicted first
// has the highest.
func (e *Engine) score(p EvictionPolicy, r flat.Record) uint64 {
	switch p {
	case PolicyVolatileTTL:
		return math.MaxUint64 - uint64(r.Expire())
	case PolicyAllKeysLFU, PolicyVolatileLFU:
		s := e.eviction()
		return 255 - uint64(lfuDecayed(r.Clock(), e.lfuMinutes(), s.cfg.DecayTime))
	}
	return e.idleMillisOf(r.Clock())
}

// offer puts a sampled key into the pool when it beats the worst candidate
// or the pool has room; the pool keeps a copy of the key.
func (s *evictState) offer(score uint64, db int, key []byte) {
	k := 0
	for k < s.n && s.pool[k].score < score {
		k++
	}
	for i := 0; i < s.n; i++ {
		if s.pool[i].db == db && s.pool[i].key == string(key) {
			return // already a candidate
		}
	}
	if s.n < evictPoolSize {
		copy(s.pool[k+1:s.n+1], s.pool[k:s.n])
		s.n++
	} else {
		if k == 0 {
			return // worse than every candidate of a full pool
		}
		// Drop the worst candidate to make room below k.
		k--
		copy(s.pool[:k], s.pool[1:k+1])
	}
	s.pool[k] = poolEntry{score: score, db: db, key: string(key)}
}

func (s *evictState) clearPool() {
	for i := range s.pool[:s.n] {
		s.pool[i] = poolEntry{}
	}
	s.n = 0
}

// popBest takes the best candidate out of the pool.
func (s *evictState) popBest() (poolEntry, bool) {
	if s.n == 0 {
		return poolEntry{}, false
	}
	s.n--
	c := s.pool[s.n]
	s.pool[s.n] = poolEntry{}
	return c, true
}

// sample calls fn with up to n random keys of db that the policy may evict
// (with a deadline, for the volatile ones): independent fair draws for the
// random policies, neighbours from a random place for the pooled ones, as
// Redis samples. Keys may repeat. The records are views fn must not keep.
func (db *DB) sample(p EvictionPolicy, n int, fn func(r flat.Record)) {
	recs := db.keys.recs
	if recs.Len() == 0 {
		return
	}
	if p.allKeys() {
		if p.random() {
			for i := 0; i < n; i++ {
				fn(recs.Random(nil))
			}
			return
		}
		db.someRecords(n, fn)
		return
	}
	if db.volatile == 0 {
		return
	}
	got := 0
	if db.volatile*4 >= recs.Len() {
		// Most keys have a deadline: reject the others.
		for tries := 0; got < n && tries < 8; tries++ {
			db.someRecords(n-got, func(r flat.Record) {
				if r.HasExpire() {
					fn(r)
					got++
				}
			})
		}
	}
	if got == 0 {
		// Few keys have a deadline: draw their scheduler entries by rank.
		db.sampleDeadlines(n, fn)
	}
}

// someRecords calls fn with up to n records of neighbouring keys from a
// random place, as Redis's dictGetSomeKeys does for eviction: a sample
// costs a few cache misses instead of one or more per key (fair draws took
// 30% of the server's CPU under a random-SET load at maxmemory).
func (db *DB) someRecords(n int, fn func(r flat.Record)) {
	db.sampled = db.keys.recs.Sample(nil, n, db.sampled[:0])
	for _, r := range db.sampled {
		fn(r)
	}
	clear(db.sampled)
}

// sampleDeadlines calls fn with up to n random keys of db that have a
// deadline, drawn from the scheduler's entries (which other kinds share).
func (db *DB) sampleDeadlines(n int, fn func(r flat.Record)) {
	items := db.e.sched.items
	visit := func(t Timer) bool {
		if t.Kind != TimerExpire || int(t.DB) != db.id {
			return false
		}
		r := db.keys.recs.Get(bytesOf(t.Key))
		if r == nil || r.Expire() != t.When {
			return false
		}
		fn(r)
		return true
	}
	got := 0
	for tries := 0; got < n && tries < 16*n; tries++ {
		if t, ok := items.GetAt(rand.IntN(items.Len())); ok && visit(t) {
			got++
		}
	}
	if got == 0 {
		// The deadlines are rare among the entries: take the first.
		items.Scan(func(t Timer) bool { return !visit(t) })
	}
}

// pickVictim chooses the next key to evict under the policy in force: its
// database, a copy of its key and its record, or false when no key may be
// evicted.
func (e *Engine) pickVictim() (*DB, []byte, flat.Record, bool) {
	s := e.eviction()
	p := s.cfg.Policy
	if p.random() {
		for range e.dbs {
			s.nextDB = (s.nextDB + 1) % len(e.dbs)
			db := e.dbs[s.nextDB]
			var key []byte
			var rec flat.Record
			db.sample(p, 1, func(r flat.Record) {
				key, rec = append([]byte(nil), r.Key()...), r
			})
			if rec != nil {
				return db, key, rec, true
			}
		}
		return nil, nil, nil, false
	}
	for {
		total := 0
		for _, db := range e.dbs {
			n := db.keys.Len()
			if !p.allKeys() {
				n = db.volatile
			}
			if n == 0 {
				continue
			}
			total += n
			db.sample(p, s.cfg.Samples, func(r flat.Record) {
				s.offer(e.score(p, r), db.id, r.Key())
			})
		}
		if total == 0 {
			return nil, nil, nil, false
		}
		for {
			c, ok := s.popBest()
			if !ok {
				break // every candidate was a ghost: sample again
			}
			db := e.dbs[c.db]
			key := bytesOf(c.key)
			r := db.keys.recs.Get(key)
			if r == nil || !p.allKeys() && !r.HasExpire() {
				continue // deleted or made persistent since it was sampled
			}
			return db, key, r, true
		}
	}
}

// evictOne removes the next victim as DEL would (its records, WATCH, its
// deadline), announces it and returns the bytes it is estimated to have
// held, and of those the bytes of its value if that was an object; false
// when nothing may be evicted.
func (e *Engine) evictOne() (size, objSize int64, ok bool) {
	db, key, r, ok := e.pickVictim()
	if !ok {
		return 0, 0, false
	}
	size = int64(db.keys.usage(r))
	if obj := db.keys.ref(r); obj != nil {
		objSize = int64(16 + obj.MemoryUsage())
	}
	e.freed(db.keys.ref(r), e.lazy.Eviction)
	db.remove(key, r)
	s := e.eviction()
	s.evicted++
	e.notify(NotifyEvicted, "evicted", db.id, key)
	e.deleted(db.id, key, e.lazy.Eviction)
	return size, objSize, true
}

// storedClock is the access field of obj, stored where old was (nil when
// the key was new; prev its value when that was an object): a new value
// starts afresh, a value replacing another is an access, and under LFU it
// inherits the old value's counter, as Redis's overwrite keeps it.
func (e *Engine) storedClock(obj Object, old flat.Record, prev Object) uint32 {
	switch {
	case old == nil:
		return e.freshClock(obj.header().atime)
	case prev == obj || e.eviction().cfg.Policy.LFU():
		return e.touchClock(old.Clock())
	}
	return e.touchClock(0)
}
