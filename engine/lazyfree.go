package engine

import (
	"math"
	"runtime"
	"sync/atomic"
	"time"
)

// Lazy freeing, as INFO reports it. Redis frees a large value in a
// background thread when the deletion is lazy (UNLINK, FLUSHDB ASYNC, and
// the deletions the lazyfree-lazy-* parameters make lazy) and counts it in
// lazyfreed_objects. Revolver frees every value the same way, through the
// collector, so the parameters change nothing but that count: the engine
// counts what Redis's lazy free thread would have released.

// LazyFree is the lazyfree-lazy-* configuration.
type LazyFree struct {
	UserDel   bool // DEL as UNLINK
	ServerDel bool // deletions and overwrites a command makes (RENAME's target, SET over a value)
	Expire    bool // expired keys
	Eviction  bool // evicted keys
	UserFlush bool // FLUSHDB, FLUSHALL, SCRIPT FLUSH and FUNCTION FLUSH as ASYNC
}

// SetLazyFree sets the lazyfree-lazy-* configuration.
func (e *Engine) SetLazyFree(l LazyFree) { e.lazy = l }

// LazyFreeConfig returns the lazyfree-lazy-* configuration.
func (e *Engine) LazyFreeConfig() LazyFree { return e.lazy }

// LazyFreeThreshold is Redis's LAZYFREE_THRESHOLD: a value is freed in the
// background only when freeing it takes more work than this.
const LazyFreeThreshold = 64

// CountLazyFreed counts n objects freed lazily outside the keyspace (the
// script cache, function libraries, the tracking table).
func (e *Engine) CountLazyFreed(n int) { e.stats.LazyfreedObjects += int64(n) }

// freed counts obj as freed in the background when its deletion is lazy
// and freeing it is enough work, as Redis's freeObjAsync decides.
func (e *Engine) freed(obj Object, lazy bool) {
	if lazy && obj != nil && freeEffort(obj) > LazyFreeThreshold {
		e.stats.LazyfreedObjects++
		reclaim()
	}
}

// reclaim has the memory of a large value or a database just dropped come
// back soon, as Redis's lazy free thread (or a synchronous flush) gives it
// back: the collector runs in the background, at most every 100 ms, and
// used_memory falls. Without it an idle server would report the memory for
// up to two minutes. Requests within the interval are served by one
// collection at its end.
func reclaim() {
	reclaimer.pending.Store(true)
	if reclaimer.running.CompareAndSwap(false, true) {
		go reclaimLoop()
	}
}

var reclaimer struct{ pending, running atomic.Bool }

func reclaimLoop() {
	for {
		for reclaimer.pending.Swap(false) {
			runtime.GC()
			time.Sleep(100 * time.Millisecond)
		}
		reclaimer.running.Store(false)
		// A request between the last Swap and the Store is served too.
		if !reclaimer.pending.Load() || !reclaimer.running.CompareAndSwap(false, true) {
			return
		}
	}
}

// freeEffort is Redis's lazyfreeGetFreeEffort: the allocations freeing obj
// takes, as Redis's encodings of it would hold them. A type of Revolver's
// own is a module type without a free_effort callback to Redis, which
// always frees it in the background.
func freeEffort(obj Object) int {
	switch v := obj.(type) {
	case *String:
		return 1
	case *List:
		return v.quicklistNodes(LazyFreeThreshold + 1)
	case *Set:
		if v.Encoding() == "hashtable" {
			return v.Len()
		}
		return 1
	case *ZSet:
		if v.Encoding() == "skiplist" {
			return v.Len()
		}
		return 1
	case *Hash:
		if v.Encoding() == "hashtable" {
			return v.Len()
		}
		return 1
	case *Stream:
		// Every listpack node is an allocation, and every group with the
		// entries of its PEL, the first group's standing for all.
		effort := v.RaxNodes()
		if n := v.GroupCount(); n > 0 {
			first, _ := v.groups.Min()
			effort += n * (1 + first.PendingCount())
		}
		return effort
	}
	return math.MaxInt
}

// quicklistNodes counts the nodes of the quicklist Redis would hold the
// list in (as DUMP cuts it), up to limit.
func (l *List) quicklistNodes(limit int) int {
	const step = 1024
	nodes := 0
	lb := newLPBuilder(nil)
	for from := 0; from < l.Len() && nodes < limit; from += step {
		l.Each(from, min(step, l.Len()-from), false, func(v []byte) {
			if lb.n > 0 && lb.size()+len(v)+qlEntryOverhead > qlNodeMaxBytes {
				nodes++
				lb = newLPBuilder(lb.b)
			}
			lb.appendString(v)
		})
	}
	if lb.n > 0 {
		nodes++
	}
	return nodes
}

// RaxNodeCount counts the nodes of Redis's radix tree holding the sorted,
// distinct keys: a node where a key ends or keys branch, a compressed node
// for a run of bytes the keys under it share.
func RaxNodeCount(keys [][]byte) int {
	if len(keys) == 0 {
		return 1 // the empty root
	}
	return raxNodes(keys, 0)
}

func raxNodes(keys [][]byte, depth int) int {
	for len(keys) > 0 && len(keys[0]) == depth {
		keys = keys[1:] // it ends at this node
	}
	if len(keys) == 0 {
		return 1
	}
	first, last := keys[0], keys[len(keys)-1]
	common := 0
	for depth+common < len(first) && depth+common < len(last) && first[depth+common] == last[depth+common] {
		common++
	}
	if common > 0 {
		return 1 + raxNodes(keys, depth+common)
	}
	n := 1
	for i := 0; i < len(keys); {
		j := i
		for j < len(keys) && keys[j][depth] == keys[i][depth] {
			j++
		}
		n += raxNodes(keys[i:j], depth+1)
		i = j
	}
	return n
}
