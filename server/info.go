package server

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/revolver-db/revolver/commands"
)

// infoOrder is every section in Redis's order, with its header.
var infoOrder = []struct{ name, header string }{
	{"server", "Server"}, {"clients", "Clients"}, {"memory", "Memory"}, {"persistence", "Persistence"},
	{"stats", "Stats"}, {"replication", "Replication"}, {"cpu", "CPU"}, {"modules", "Modules"},
	{"commandstats", "Commandstats"}, {"errorstats", "Errorstats"}, {"latencystats", "Latencystats"},
	{"cluster", "Cluster"}, {"keyspace", "Keyspace"},
}

// infoDefault is what INFO and INFO default show.
var infoDefault = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu",
	"modules", "errorstats", "cluster", "keyspace"}

// Info implements commands.Server: INFO with Redis's section and field
// names, headers and order; "all" and "everything" show every section, an
// unknown section shows nothing. It runs under the engine lock.
func (s *Server) Info(sections []string) string {
	want := map[string]bool{}
	if len(sections) == 0 {
		sections = []string{"default"}
	}
	all := false
	for _, sec := range sections {
		switch sec {
		case "default":
			want["default"] = true
			for _, d := range infoDefault {
				want[d] = true
			}
		case "all", "everything":
			all = true
		case "module_list":
			want["modules"] = true
		default:
			want[sec] = true
		}
	}
	var out []string
	for _, sec := range infoOrder {
		if all || want[sec.name] {
			out = append(out, "# "+sec.header+"\r\n"+s.infoSection(sec.name))
		}
	}
	// The native families' sections follow, as module sections do in
	// Redis; INFO and INFO default show them too.
	for _, sec := range s.table.InfoSections() {
		if all || want[sec.Name] || want["default"] {
			var ib infoBuilder
			sec.Fields(s.eng, ib.add)
			out = append(out, "# "+sec.Title+"\r\n"+ib.b.String())
		}
	}
	return strings.Join(out, "\r\n")
}

type infoBuilder struct{ b strings.Builder }

// zeros adds fields whose value is 0 in Revolver by construction.
func zeros(ib *infoBuilder, names ...string) {
	for _, n := range names {
		ib.add(n, 0)
	}
}

func (ib *infoBuilder) add(k string, v any) { fmt.Fprintf(&ib.b, "%s:%v\r\n", k, v) }

func (s *Server) infoSection(sec string) string {
	var ib infoBuilder
	switch sec {
	case "server":
		s.infoServer(&ib)
	case "clients":
		blocked, maxInput, maxOutput := 0, int64(0), 0
		for _, c := range s.clients {
			if c.blocked.Load() {
				blocked++
			}
			maxInput = max(maxInput, c.rd.rbs.Load())
			maxOutput = max(maxOutput, c.pendingLen())
		}
		ib.add("connected_clients", len(s.clients)-len(s.replm.replicas)) // Redis counts replicas apart
		ib.add("cluster_connections", 0)
		ib.add("maxclients", s.maxClients.Load())
		ib.add("client_recent_max_input_buffer", maxInput)   // the largest current request buffer
		ib.add("client_recent_max_output_buffer", maxOutput) // the largest output owed now
		ib.add("blocked_clients", blocked)
		ib.add("tracking_clients", s.trk.clients)
		ib.add("clients_in_timeout_table", 0)
	case "memory":
		s.infoMemory(&ib)
	case "persistence":
		s.infoPersistence(&ib)
	case "stats":
		st := s.eng.Stats()
		ib.add("total_connections_received", s.stats.connections.Load())
		ib.add("total_commands_processed", s.stats.commands.Load())
		ib.add("instantaneous_ops_per_sec", s.stats.opsPerSec.Load())
		ib.add("total_net_input_bytes", netStats.in.Load())
		ib.add("total_net_output_bytes", netStats.out.Load())
		zeros(&ib, "total_net_repl_input_bytes", "total_net_repl_output_bytes")
		ib.add("instantaneous_input_kbps", kbps(&netStats.inKbps))
		ib.add("instantaneous_output_kbps", kbps(&netStats.outKbps))
		ib.add("instantaneous_input_repl_kbps", "0.00")
		ib.add("instantaneous_output_repl_kbps", "0.00")
		ib.add("rejected_connections", s.stats.rejectedConns.Load())
		ib.add("sync_full", s.replm.syncFull)
		ib.add("sync_partial_ok", s.replm.syncPartialOK)
		ib.add("sync_partial_err", s.replm.syncPartialErr)
		ib.add("expired_keys", st.ExpiredKeys)
		ib.add("expired_stale_perc", "0.00")
		zeros(&ib, "expired_time_cap_reached_count", "expire_cycle_cpu_milliseconds")
		ev := s.eng.EvictionStats()
		ib.add("evicted_keys", ev.EvictedKeys)
		ib.add("evicted_clients", s.cmem.evicted.Load())
		ib.add("total_eviction_exceeded_time", ev.TotalExceededMs)
		ib.add("current_eviction_exceeded_time", ev.CurrentExceededMs)
		ib.add("keyspace_hits", st.KeyspaceHits)
		ib.add("keyspace_misses", st.KeyspaceMisses)
		ib.add("pubsub_channels", len(s.hub.channels))
		ib.add("pubsub_patterns", len(s.hub.patterns))
		ib.add("pubsubshard_channels", len(s.hub.shard))
		zeros(&ib, "latest_fork_usec", "total_forks", "migrate_cached_sockets",
			"slave_expires_tracked_keys", "active_defrag_hits", "active_defrag_misses", "active_defrag_key_hits",
			"active_defrag_key_misses", "total_active_defrag_time", "current_active_defrag_time")
		ib.add("tracking_total_keys", len(s.trk.keys))
		ib.add("tracking_total_items", s.trk.items)
		ib.add("tracking_total_prefixes", len(s.trk.prefixes))
		zeros(&ib, "unexpected_error_replies")
		ib.add("total_error_replies", s.stats.errorReplies.Load())
		ib.add("dump_payload_sanitizations", 0)
		ib.add("total_reads_processed", netStats.reads.Load())
		ib.add("total_writes_processed", netStats.writes.Load())
		// Reply buffers are not resized in steps here.
		zeros(&ib, "io_threaded_reads_processed", "io_threaded_writes_processed", "reply_buffer_shrinks",
			"reply_buffer_expands")
		ib.add("pending_timers", s.eng.PendingTimers())
		s.consoleInfo(ib.add) // console.go
	case "replication":
		s.replicationInfo(&ib) // repl_master.go
	case "cpu":
		var ru unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru)
		ib.add("used_cpu_sys", fmt.Sprintf("%.6f", tvSeconds(ru.Stime)))
		ib.add("used_cpu_user", fmt.Sprintf("%.6f", tvSeconds(ru.Utime)))
		ib.add("used_cpu_sys_children", "0.000000")
		ib.add("used_cpu_user_children", "0.000000")
		// Go runs the event loops on whichever threads it has: there is no
		// main thread, so these are the process's figures.
		ib.add("used_cpu_sys_main_thread", fmt.Sprintf("%.6f", tvSeconds(ru.Stime)))
		ib.add("used_cpu_user_main_thread", fmt.Sprintf("%.6f", tvSeconds(ru.Utime)))
	case "errorstats":
		codes := make([]string, 0, len(s.errStats))
		for code := range s.errStats {
			codes = append(codes, code)
		}
		sort.Strings(codes)
		for _, code := range codes {
			ib.add("errorstat_"+code, fmt.Sprintf("count=%d", s.errStats[code]))
		}
	case "latencystats":
		s.infoLatencyStats(&ib)
	case "cluster":
		ib.add("cluster_enabled", 0)
	case "keyspace":
		for i := 0; i < s.eng.Databases(); i++ {
			db := s.eng.DB(i)
			if db.Len() > 0 {
				ib.add("db"+strconv.Itoa(i), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", db.Len(), db.Volatile()))
			}
		}
	case "commandstats":
		type row struct {
			name string
			st   *cmdStat
		}
		var rows []row
		var walk func(cmds []*commands.Command)
		walk = func(cmds []*commands.Command) {
			for _, c := range cmds {
				if st := &s.cmdStats[c.Index()]; st.calls > 0 || st.rejected > 0 || st.failed > 0 {
					rows = append(rows, row{c.FullName(), st})
				}
				walk(c.Subcommands())
			}
		}
		walk(s.table.All())
		sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
		for _, r := range rows {
			per := 0.0
			if r.st.calls > 0 {
				per = float64(r.st.usec) / float64(r.st.calls)
			}
			ib.add("cmdstat_"+r.name, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
				r.st.calls, r.st.usec, per, r.st.rejected, r.st.failed))
		}
	}
	return ib.b.String()
}

func tvSeconds(tv unix.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

func (s *Server) infoServer(ib *infoBuilder) {
	exe, _ := os.Executable()
	up := time.Since(s.started)
	var uts unix.Utsname
	unix.Uname(&uts)
	port := s.listeningPort()
	ib.add("redis_version", commands.Version)
	ib.add("revolver_version", RevolverVersion)
	ib.add("redis_git_sha1", "00000000")
	ib.add("redis_git_dirty", 0)
	ib.add("redis_build_id", "revolver")
	ib.add("redis_mode", "standalone")
	ib.add("os", unix.ByteSliceToString(uts.Sysname[:])+" "+unix.ByteSliceToString(uts.Release[:])+" "+unix.ByteSliceToString(uts.Machine[:]))
	ib.add("arch_bits", strconv.Itoa(32<<(^uint(0)>>63)))
	ib.add("monotonic_clock", "Go runtime monotonic clock")
	ib.add("multiplexing_api", multiplexingAPI)
	ib.add("atomicvar_api", "sync/atomic") // Go's, where Redis names its C atomics
	ib.add("gcc_version", "0.0.0")         // no C compiler builds Revolver; go_version says what does
	ib.add("go_version", runtime.Version())
	ib.add("process_id", os.Getpid())
	ib.add("process_supervised", "no")
	ib.add("run_id", s.runID)
	ib.add("tcp_port", port)
	ib.add("server_time_usec", time.Now().UnixMicro())
	ib.add("uptime_in_seconds", int64(up/time.Second))
	ib.add("uptime_in_days", int64(up/(24*time.Hour)))
	ib.add("hz", 10)
	ib.add("configured_hz", s.cfg.extraInt("hz")) // what CONFIG SET hz asked; the cron keeps its 10 Hz
	ib.add("lru_clock", time.Now().Unix()&(1<<24-1))
	ib.add("executable", exe)
	cf := s.cfg.ConfigFile
	if cf != "" {
		if abs, err := absPath(cf); err == nil {
			cf = abs
		}
	}
	ib.add("config_file", cf)
	ib.add("io_threads_active", boolInt(len(s.loops) > 1))
}

// heapObjects reads the live-plus-unswept heap: what the data occupies.
func heapObjects() int64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return int64(sample[0].Value.Uint64())
}

func (s *Server) infoPersistence(ib *infoBuilder) {
	ib.add("loading", 0)
	ib.add("async_loading", 0)
	zeros(ib, "current_cow_peak", "current_cow_size", "current_cow_size_age")
	ib.add("current_fork_perc", "0.00")
	zeros(ib, "current_save_keys_processed", "current_save_keys_total")
	ib.add("rdb_changes_since_last_save", s.dirty())
	bg := &s.bg
	bg.mu.Lock()
	inProgress, status, current := 0, "ok", int64(-1)
	if bg.running && !bg.byRewrite {
		inProgress, current = 1, time.Now().Unix()-bg.started.Unix()
	}
	if bg.failed {
		status = "err"
	}
	lastSave, lastSecs := bg.lastSave.Unix(), bg.lastSecs
	rewriteStatus, rewriteSecs, rewriteCurrent := "ok", bg.rewriteSecs, int64(-1)
	if bg.rewriteErr {
		rewriteStatus = "err"
	}
	if bg.running && bg.byRewrite {
		rewriteCurrent = time.Now().Unix() - bg.started.Unix()
	}
	bg.mu.Unlock()
	ib.add("rdb_bgsave_in_progress", inProgress)
	ib.add("rdb_last_save_time", lastSave)
	ib.add("rdb_last_bgsave_status", status)
	// Checkpoints need no fork (no copy-on-write).
	ib.add("rdb_last_bgsave_time_sec", lastSecs)
	ib.add("rdb_current_bgsave_time_sec", current)
	ib.add("rdb_saves", s.saves.Load())
	ib.add("rdb_last_cow_size", 0)
	ib.add("rdb_last_load_keys_expired", s.loadedExpired)
	ib.add("rdb_last_load_keys_loaded", s.loadedKeys)
	ib.add("aof_enabled", boolInt(s.store != nil))
	// BGREWRITEAOF's checkpoint (aof.go) is the rewrite; it needs no fork.
	ib.add("aof_rewrite_in_progress", boolInt(s.aofRewriteInProgress()))
	ib.add("aof_rewrite_scheduled", 0)
	ib.add("aof_last_rewrite_time_sec", rewriteSecs)
	ib.add("aof_current_rewrite_time_sec", rewriteCurrent)
	ib.add("aof_last_bgrewrite_status", rewriteStatus)
	ib.add("aof_rewrites", s.aof.count.Load())
	ib.add("aof_rewrites_consecutive_failures", 0)
	writeStatus := "ok"
	if s.store != nil {
		ps := s.store.Stats()
		if ps.LastCommitErr != nil {
			writeStatus = "err"
		}
		ib.add("aof_last_write_status", writeStatus)
		zeros(ib, "aof_last_cow_size", "module_fork_in_progress", "module_fork_last_cow_size")
		ib.add("persistence", "pebble")
		ib.add("appendfsync", s.cfg.AppendFsync)
		ib.add("store_commits", ps.Commits)
		ib.add("store_fsyncs", ps.Fsyncs)
		ib.add("store_records", ps.Records)
		ib.add("store_pending_records", ps.Pending)
		ib.add("store_applied_records", ps.Applied)
		ib.add("store_apply_lag_records", ps.ApplyLag)
		ib.add("store_apply_lag_bytes", ps.ApplyLagBytes)
		// What the store holds in memory for recent writes, against its cap
		// (persistence-max-memory); the memtables are part of it.
		ib.add("store_memory", ps.HeldBytes)
		ib.add("store_memory_human", humanBytes(int64(ps.HeldBytes)))
		ib.add("store_memtables", ps.MemTableBytes)
		ib.add("store_max_memory", ps.MaxMemory)
		ib.add("store_max_memory_human", humanBytes(int64(ps.MaxMemory)))
	} else {
		ib.add("aof_last_write_status", writeStatus)
		zeros(ib, "aof_last_cow_size", "module_fork_in_progress", "module_fork_last_cow_size")
		ib.add("persistence", "off")
	}
	// Keys of Revolver's own types the last dump.rdb left out (rdb_save.go).
	ib.add("rdb_last_save_skipped_native_keys", s.bg.nativeSkipped.Load())
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func humanBytes(n int64) string { return humanBytesU(uint64(n)) }

// humanBytesU is Redis's bytesToHuman, which takes an unsigned count.
func humanBytesU(n uint64) string {
	f := float64(n)
	const k = 1024.0
	switch {
	case n < 1024:
		return strconv.FormatUint(n, 10) + "B"
	case f < k*k:
		return fmt.Sprintf("%.2fK", f/k)
	case f < k*k*k:
		return fmt.Sprintf("%.2fM", f/(k*k))
	case f < k*k*k*k:
		return fmt.Sprintf("%.2fG", f/(k*k*k))
	case f < k*k*k*k*k:
		return fmt.Sprintf("%.2fT", f/(k*k*k*k))
	case f < k*k*k*k*k*k:
		return fmt.Sprintf("%.2fP", f/(k*k*k*k*k))
	}
	return strconv.FormatUint(n, 10) + "B"
}

// MemoryStats implements commands.Server (MEMORY STATS).
func (s *Server) MemoryStats() [][2]any {
	used := heapObjects()
	keys := int64(0)
	for i := 0; i < s.eng.Databases(); i++ {
		keys += int64(s.eng.DB(i).Len())
	}
	perKey := int64(0)
	if keys > 0 {
		perKey = used / keys
	}
	return [][2]any{
		{"peak.allocated", max(s.peakMemory.Load(), used)},
		{"total.allocated", used},
		{"keys.count", keys},
		{"keys.bytes-per-key", perKey},
		{"dataset.bytes", used},
		{"rss-bytes", processRSS()},
	}
}

func absPath(p string) (string, error) {
	if strings.HasPrefix(p, "/") {
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return wd + "/" + p, nil
}
