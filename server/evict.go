package server

import (
	"math"
	"os"
	"runtime/debug"
	"sync"

	"github.com/revolver-db/revolver/engine"
)

// Eviction lives in the engine (engine/evict.go, engine/evict_mem.go); the
// server hands it the configuration, runs it before every command while
// maxmemory is set (overMaxMemory), and gives the Go runtime a memory limit
// of maxmemory plus what persistence holds plus an allowance for garbage,
// so that garbage, which used_memory does not count, is collected before
// the heap passes that (decisions 0008, 0014).

// minMemoryLimit is the smallest maxmemory the Go memory limit follows.
// Below it the server's own heap is most of the limit and the collector
// would run without pause; eviction still holds its estimate there.
const minMemoryLimit = 32 << 20

// garbageAllowance is how far the heap may pass maxmemory with garbage
// before the Go memory limit collects it: an eighth of maxmemory, at least
// 32 MB. The live heap stays under maxmemory (eviction holds the estimate
// there); a collection costs little as the keyspace's pages are not
// scanned, so the allowance only spaces collections out under a write
// load that allocates request buffers at 100+ MB/s.
func garbageAllowance(limit int64) int64 { return max(32<<20, limit/8) }

// memoryLimit is the Go memory limit the process runs with: one per
// process, whichever server set it last (tests run several).
var memoryLimit struct {
	sync.Mutex
	owner *Server
}

func (s *Server) applyEviction() {
	policy, _ := engine.ParseEvictionPolicy(s.cfg.MaxMemoryPolicy)
	s.eng.SetEvictionConfig(engine.EvictionConfig{
		Policy:    policy,
		Samples:   int(s.cfg.MaxMemorySamples),
		Tenacity:  int(s.cfg.MaxMemoryEvictionTenacity),
		LogFactor: int(s.cfg.LFULogFactor),
		DecayTime: int(s.cfg.LFUDecayTime),
	})
	max := s.cfg.maxMemoryLimit()
	evicts := max > 0 && policy != engine.PolicyNoEviction
	if evicts {
		s.eng.SetMaxMemory(max)
	} else {
		s.eng.SetMaxMemory(0)
	}
	s.evicts.Store(evicts)
	if !evicts {
		s.eng.PerformEvictions() // no limit ends the time over it
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		return // the user's choice
	}
	memoryLimit.Lock()
	defer memoryLimit.Unlock()
	switch {
	case evicts && max >= minMemoryLimit:
		debug.SetMemoryLimit(max + garbageAllowance(max) + s.persistenceMemory())
		memoryLimit.owner = s
	case memoryLimit.owner == s:
		debug.SetMemoryLimit(math.MaxInt64)
		memoryLimit.owner = nil
	}
}

// applyMaxMemory follows CONFIG SET maxmemory: as in Redis, a lower limit
// is applied by an eviction run after the command (its eviction time
// proc), or before the next command, never inside the CONFIG SET.
func (s *Server) applyMaxMemory() {
	s.applyLimits()
	if s.evicts.Load() {
		s.eng.StartEvictions()
	}
}

// followMemoryLimit moves the Go memory limit with the memory persistence
// holds, which maxmemory leaves out: the limit is there to collect garbage
// before used_memory, less that memory, passes maxmemory. The cron calls it.
func (s *Server) followMemoryLimit() {
	memoryLimit.Lock()
	defer memoryLimit.Unlock()
	if memoryLimit.owner == s {
		max := s.maxMemory.Load()
		debug.SetMemoryLimit(max + garbageAllowance(max) + s.persistenceMemory())
	}
}

// releaseMemoryLimit lifts the Go memory limit this server set.
func (s *Server) releaseMemoryLimit() {
	memoryLimit.Lock()
	defer memoryLimit.Unlock()
	if memoryLimit.owner == s {
		debug.SetMemoryLimit(math.MaxInt64)
		memoryLimit.owner = nil
	}
}

// overMaxMemory reports whether the server is over maxmemory for Redis's
// OOM rule. With an evicting policy it first evicts what it can, as Redis's
// performEvictions does before each command, and is over only when that
// fails; with noeviction it compares the sampled heap.
func (s *Server) overMaxMemory() bool {
	max := s.maxMemory.Load()
	if max <= 0 {
		return false
	}
	if s.replica != nil && s.cfg.extraString("replica-ignore-maxmemory") == "yes" {
		return false // the master evicts, and its DELs arrive in the stream
	}
	// The estimate moves with every write (engine/evict_mem.go): note the
	// peak here too, or a value that came and went between two cron
	// ticks would leave none.
	s.notePeak(s.eng.UsedMemory())
	if s.evicts.Load() {
		return s.eng.PerformEvictions() == engine.EvictFail
	}
	return s.eng.MemoryEstimate() > max
}
