package server

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
)

// INFO memory with every field redis-server 7.0 prints, mapped onto Go's
// runtime. How each maps:
//
//   used_memory            live and not yet swept heap objects (runtime/metrics
//                          /memory/classes/heap/objects), what maxmemory judges
//   used_memory_rss        the process's resident set (/proc/self/statm; on the
//                          BSDs and macOS getrusage's maximum, the closest they offer)
//   used_memory_peak       the largest used_memory sampled: every cron tick
//                          (100 ms), every INFO and MEMORY STATS
//   used_memory_startup    used_memory once the server had started
//   used_memory_overhead   startup + client buffers + change records held in
//                          memory: what is not the dataset
//   used_memory_dataset    used_memory - overhead
//   allocator_allocated    heap objects (Go's allocator has no other figure)
//   allocator_active       heap spans in use: objects + free slots in them
//   allocator_resident     memory the runtime has mapped and not returned to
//                          the OS (total - released)
//   used_memory_lua, _vm_* the Lua states allocate from Go's heap, where they
//                          are counted in used_memory and cannot be told
//                          apart: 0
//   used_memory_scripts_*  cached EVAL scripts and FUNCTION libraries: their
//                          code plus their cache entries
//   mem_clients_normal     clients' memory but replicas': their state, request
//                          buffers, output owed, MULTI queues (clientmem.go),
//                          also counted in used_memory as in Redis
//   mem_aof_buffer         what persistence holds in the Go heap for its
//                          store (persistence.Stats.MemoryBytes): log
//                          batches, the applier's buffers, held values;
//                          with Pebble's memtables it is capped by
//                          persistence-max-memory (INFO persistence's
//                          store_memory)
//   mem_not_counted_for_evict  with an evicting policy, that same memory,
//                          which eviction leaves out (decision 0008) as
//                          Redis leaves out its AOF buffer; else 0
//   mem_replication_backlog  the backlog's buffer; mem_clients_slaves the
//                          replicas' pending output; their sum is
//                          mem_total_replication_buffers
//   cluster                0: there is none

// memSample is one reading of the runtime's memory classes.
type memSample struct {
	objects, unusedInSpans, total, released int64
}

var memMetrics = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
}

func readMemSample() memSample {
	samples := make([]metrics.Sample, len(memMetrics))
	for i, n := range memMetrics {
		samples[i].Name = n
	}
	metrics.Read(samples)
	v := func(i int) int64 { return int64(samples[i].Value.Uint64()) }
	return memSample{objects: v(0), unusedInSpans: v(1), total: v(2), released: v(3)}
}

// notePeak raises used_memory_peak to used when it is higher. The cron
// calls it at every sample, so a transient allocation between two INFOs is
// seen.
func (s *Server) notePeak(used int64) {
	for {
		p := s.peakMemory.Load()
		if used <= p || s.peakMemory.CompareAndSwap(p, used) {
			return
		}
	}
}

// persistenceMemory is what the store holds in memory for itself (0
// without persistence): INFO's mem_aof_buffer, and what eviction and the Go
// memory limit leave out of maxmemory.
func (s *Server) persistenceMemory() int64 {
	if s.store == nil {
		return 0
	}
	return int64(s.store.Stats().MemoryBytes)
}

func perc(part, whole int64) string {
	if whole <= 0 {
		return "0.00%"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(part)/float64(whole))
}

func ratio(a, b int64) string {
	if b <= 0 {
		return "0.00"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

func (s *Server) infoMemory(ib *infoBuilder) {
	ms := readMemSample()
	used := s.eng.UsedMemory()
	s.notePeak(used)
	peak := s.peakMemory.Load()
	rss := processRSS()
	startup := min(s.startupMemory, used)
	backlog, replicaOut := s.replMemory() // repl_master.go
	clients := s.cmem.total.Load()        // clientmem.go
	aofBuf := s.persistenceMemory()
	overhead := min(startup+clients+replicaOut+aofBuf, used)
	dataset := used - overhead
	active := ms.objects + ms.unusedInSpans
	resident := ms.total - ms.released
	scripts := s.lua.MemoryStats()
	total := totalSystemMemory()

	ib.add("used_memory", used)
	ib.add("used_memory_human", humanBytes(used))
	ib.add("used_memory_rss", rss)
	ib.add("used_memory_rss_human", humanBytes(rss))
	ib.add("used_memory_peak", peak)
	ib.add("used_memory_peak_human", humanBytes(peak))
	ib.add("used_memory_peak_perc", perc(used, peak))
	ib.add("used_memory_overhead", overhead)
	ib.add("used_memory_startup", startup)
	ib.add("used_memory_dataset", dataset)
	ib.add("used_memory_dataset_perc", perc(dataset, used-startup))
	ib.add("allocator_allocated", ms.objects)
	ib.add("allocator_active", active)
	ib.add("allocator_resident", resident)
	ib.add("total_system_memory", total)
	ib.add("total_system_memory_human", humanBytes(total))
	ib.add("used_memory_lua", 0)
	ib.add("used_memory_vm_eval", 0)
	ib.add("used_memory_lua_human", humanBytes(0))
	ib.add("used_memory_scripts_eval", scripts.EvalBytes)
	ib.add("number_of_cached_scripts", scripts.EvalScripts)
	ib.add("number_of_functions", scripts.Functions)
	ib.add("number_of_libraries", scripts.Libraries)
	ib.add("used_memory_vm_functions", 0)
	ib.add("used_memory_vm_total", 0)
	ib.add("used_memory_vm_total_human", humanBytes(0))
	ib.add("used_memory_functions", scripts.FunctionsBytes)
	ib.add("used_memory_scripts", scripts.EvalBytes+scripts.FunctionsBytes)
	ib.add("used_memory_scripts_human", humanBytes(scripts.EvalBytes+scripts.FunctionsBytes))
	ib.add("maxmemory", int64(s.cfg.MaxMemory)) // as Redis's %lld: 2^64-1 reads -1
	ib.add("maxmemory_human", humanBytesU(s.cfg.MaxMemory))
	ib.add("maxmemory_policy", s.cfg.MaxMemoryPolicy)
	ib.add("allocator_frag_ratio", ratio(active, ms.objects))
	ib.add("allocator_frag_bytes", active-ms.objects)
	ib.add("allocator_rss_ratio", ratio(resident, active))
	ib.add("allocator_rss_bytes", resident-active)
	ib.add("rss_overhead_ratio", ratio(rss, resident))
	ib.add("rss_overhead_bytes", rss-resident)
	ib.add("mem_fragmentation_ratio", ratio(rss, used))
	ib.add("mem_fragmentation_bytes", rss-used)
	notCounted := int64(0)
	if s.evicts.Load() {
		notCounted = aofBuf
	}
	ib.add("mem_not_counted_for_evict", notCounted)
	ib.add("mem_replication_backlog", backlog)
	ib.add("mem_total_replication_buffers", backlog+replicaOut)
	ib.add("mem_clients_slaves", replicaOut)
	ib.add("mem_clients_normal", clients)
	ib.add("mem_cluster_links", 0)
	ib.add("mem_aof_buffer", aofBuf)
	ib.add("mem_allocator", "go-"+runtime.Version())
	ks := s.eng.KeyspaceMemory()
	ib.add("keyspace_flat_used", ks.Allocated+ks.Index)
	ib.add("keyspace_flat_held", ks.Held+ks.Index)
	ib.add("keyspace_flat_frag_ratio", ratio(ks.Held, ks.Requested))
	ib.add("keyspace_objects", ks.Objects)
	// Nothing waits to be freed: the collector frees what Redis's lazy free
	// thread would, and the engine counts it (engine/lazyfree.go).
	zeros(ib, "active_defrag_running", "lazyfree_pending_objects")
	ib.add("lazyfreed_objects", s.eng.Stats().LazyfreedObjects)
}

// processRSS is the resident set size: /proc/self/statm where there is
// one, else the platform's fallback.
func processRSS() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return rssFallback()
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return rssFallback()
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
