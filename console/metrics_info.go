package console

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// The server's INFO fields under redis_exporter's names and types
// (github.com/oliver006/redis_exporter), so that dashboards and alerts
// made for Redis read Revolver unchanged.

// infoField maps one INFO field to a metric.
type infoField struct {
	section, field, name string
	counter              bool
	scale                float64 // multiplies the value (0: 1)
	help                 string
}

var infoFields = []infoField{
	{"server", "uptime_in_seconds", "redis_uptime_in_seconds", false, 0, "Seconds since the server started."},
	{"server", "process_id", "redis_process_id", false, 0, "The server's process id."},
	{"clients", "connected_clients", "redis_connected_clients", false, 0, "Clients connected."},
	{"clients", "blocked_clients", "redis_blocked_clients", false, 0, "Clients blocked in a blocking command."},
	{"clients", "tracking_clients", "redis_tracking_clients", false, 0, "Clients tracking keys."},
	{"clients", "maxclients", "redis_max_clients", false, 0, "The maxclients setting."},
	{"clients", "client_recent_max_input_buffer", "redis_client_recent_max_input_buffer_bytes", false, 0, "The largest input buffer of a client lately."},
	{"clients", "client_recent_max_output_buffer", "redis_client_recent_max_output_buffer_bytes", false, 0, "The largest output buffer of a client lately."},
	{"memory", "used_memory", "redis_memory_used_bytes", false, 0, "Memory the server uses for its data and itself."},
	{"memory", "used_memory_rss", "redis_memory_used_rss_bytes", false, 0, "The process's resident memory."},
	{"memory", "used_memory_peak", "redis_memory_used_peak_bytes", false, 0, "The highest used_memory."},
	{"memory", "used_memory_lua", "redis_memory_used_lua_bytes", false, 0, "Memory of the Lua engine."},
	{"memory", "used_memory_overhead", "redis_memory_used_overhead_bytes", false, 0, "Memory the server uses beyond the data."},
	{"memory", "used_memory_startup", "redis_memory_used_startup_bytes", false, 0, "Memory used at start-up."},
	{"memory", "used_memory_dataset", "redis_memory_used_dataset_bytes", false, 0, "Memory of the data."},
	{"memory", "used_memory_scripts", "redis_memory_used_scripts_bytes", false, 0, "Memory of cached scripts."},
	{"memory", "maxmemory", "redis_memory_max_bytes", false, 0, "The maxmemory setting (0: none)."},
	{"memory", "mem_fragmentation_ratio", "redis_mem_fragmentation_ratio", false, 0, "RSS over used memory."},
	{"memory", "mem_fragmentation_bytes", "redis_mem_fragmentation_bytes", false, 0, "RSS minus used memory."},
	{"memory", "mem_clients_slaves", "redis_mem_clients_slaves", false, 0, "Memory of replicas' connections."},
	{"memory", "mem_clients_normal", "redis_mem_clients_normal", false, 0, "Memory of clients' connections."},
	{"memory", "mem_not_counted_for_evict", "redis_mem_not_counted_for_eviction_bytes", false, 0, "Memory maxmemory leaves out."},
	{"memory", "allocator_allocated", "redis_allocator_allocated_bytes", false, 0, "Bytes the allocator handed out."},
	{"memory", "allocator_active", "redis_allocator_active_bytes", false, 0, "Bytes in the allocator's active pages."},
	{"memory", "allocator_resident", "redis_allocator_resident_bytes", false, 0, "Bytes resident in the allocator."},
	{"memory", "lazyfree_pending_objects", "redis_lazyfree_pending_objects", false, 0, "Objects waiting to be freed."},
	{"memory", "active_defrag_running", "redis_active_defrag_running", false, 0, "Whether active defragmentation runs."},
	{"persistence", "loading", "redis_loading_dump_file", false, 0, "Whether the server is loading its data."},
	{"persistence", "rdb_changes_since_last_save", "redis_rdb_changes_since_last_save", false, 0, "Changes since the last save."},
	{"persistence", "rdb_bgsave_in_progress", "redis_rdb_bgsave_in_progress", false, 0, "Whether a background save runs."},
	{"persistence", "rdb_last_save_time", "redis_rdb_last_save_timestamp_seconds", false, 0, "When the last save succeeded (unix seconds)."},
	{"persistence", "rdb_last_bgsave_time_sec", "redis_rdb_last_bgsave_duration_sec", false, 0, "How long the last background save took."},
	{"persistence", "rdb_current_bgsave_time_sec", "redis_rdb_current_bgsave_duration_sec", false, 0, "How long the running background save has taken."},
	{"persistence", "rdb_last_cow_size", "redis_rdb_last_cow_size_bytes", false, 0, "Copy-on-write memory of the last save."},
	{"persistence", "aof_enabled", "redis_aof_enabled", false, 0, "Whether the change log is on."},
	{"persistence", "aof_rewrite_in_progress", "redis_aof_rewrite_in_progress", false, 0, "Whether a rewrite runs."},
	{"persistence", "aof_rewrite_scheduled", "redis_aof_rewrite_scheduled", false, 0, "Whether a rewrite waits to run."},
	{"persistence", "aof_last_rewrite_time_sec", "redis_aof_last_rewrite_duration_sec", false, 0, "How long the last rewrite took."},
	{"persistence", "aof_current_rewrite_time_sec", "redis_aof_current_rewrite_duration_sec", false, 0, "How long the running rewrite has taken."},
	{"persistence", "aof_last_cow_size", "redis_aof_last_cow_size_bytes", false, 0, "Copy-on-write memory of the last rewrite."},
	{"persistence", "module_fork_in_progress", "redis_module_fork_in_progress", false, 0, "Whether a module fork runs."},
	{"persistence", "module_fork_last_cow_size", "redis_module_fork_last_cow_size", false, 0, "Copy-on-write memory of the last module fork."},
	{"stats", "total_connections_received", "redis_connections_received_total", true, 0, "Connections accepted."},
	{"stats", "total_commands_processed", "redis_commands_processed_total", true, 0, "Commands processed."},
	{"stats", "instantaneous_ops_per_sec", "redis_instantaneous_ops_per_sec", false, 0, "Commands per second, lately."},
	{"stats", "rejected_connections", "redis_rejected_connections_total", true, 0, "Connections refused (maxclients)."},
	{"stats", "total_net_input_bytes", "redis_net_input_bytes_total", true, 0, "Bytes read from clients."},
	{"stats", "total_net_output_bytes", "redis_net_output_bytes_total", true, 0, "Bytes written to clients."},
	{"stats", "expired_keys", "redis_expired_keys_total", true, 0, "Keys expired."},
	{"stats", "expired_stale_perc", "redis_expired_stale_percentage", false, 0, "Share of keys probably expired."},
	{"stats", "expired_time_cap_reached_count", "redis_expired_time_cap_reached_total", false, 0, "Expiry cycles cut short."},
	{"stats", "evicted_keys", "redis_evicted_keys_total", true, 0, "Keys evicted by maxmemory."},
	{"stats", "keyspace_hits", "redis_keyspace_hits_total", true, 0, "Lookups that found their key."},
	{"stats", "keyspace_misses", "redis_keyspace_misses_total", true, 0, "Lookups that did not."},
	{"stats", "pubsub_channels", "redis_pubsub_channels", false, 0, "Channels with subscribers."},
	{"stats", "pubsub_patterns", "redis_pubsub_patterns", false, 0, "Pattern subscriptions."},
	{"stats", "latest_fork_usec", "redis_latest_fork_seconds", false, 1e-6, "How long the latest fork took."},
	{"stats", "migrate_cached_sockets", "redis_migrate_cached_sockets_total", false, 0, "Sockets MIGRATE keeps open."},
	{"stats", "sync_full", "redis_replica_resyncs_full", false, 0, "Full resynchronizations of replicas."},
	{"stats", "sync_partial_ok", "redis_replica_partial_resync_accepted", false, 0, "Partial resynchronizations accepted."},
	{"stats", "sync_partial_err", "redis_replica_partial_resync_denied", false, 0, "Partial resynchronizations denied."},
	{"stats", "active_defrag_hits", "redis_defrag_hits", false, 0, "Values moved by defragmentation."},
	{"stats", "active_defrag_misses", "redis_defrag_misses", false, 0, "Values defragmentation skipped."},
	{"stats", "active_defrag_key_hits", "redis_defrag_key_hits", false, 0, "Keys defragmented."},
	{"stats", "active_defrag_key_misses", "redis_defrag_key_misses", false, 0, "Keys defragmentation skipped."},
	{"stats", "slave_expires_tracked_keys", "redis_slave_expires_tracked_keys", false, 0, "Keys a writable replica expires."},
	{"replication", "connected_slaves", "redis_connected_slaves", false, 0, "Replicas connected."},
	{"replication", "master_repl_offset", "redis_master_repl_offset", false, 0, "The replication offset."},
	{"replication", "second_repl_offset", "redis_second_repl_offset", false, 0, "The offset the previous replication id is valid to."},
	{"replication", "repl_backlog_size", "redis_replication_backlog_bytes", false, 0, "The backlog's size."},
	{"replication", "repl_backlog_active", "redis_repl_backlog_is_active", false, 0, "Whether the backlog is kept."},
	{"replication", "repl_backlog_first_byte_offset", "redis_repl_backlog_first_byte_offset", false, 0, "The backlog's first offset."},
	{"replication", "repl_backlog_histlen", "redis_repl_backlog_history_bytes", false, 0, "Bytes in the backlog."},
	{"cpu", "used_cpu_sys", "redis_cpu_sys_seconds_total", true, 0, "System CPU time of the process."},
	{"cpu", "used_cpu_user", "redis_cpu_user_seconds_total", true, 0, "User CPU time of the process."},
	{"cpu", "used_cpu_sys_children", "redis_cpu_sys_children_seconds_total", true, 0, "System CPU time of children."},
	{"cpu", "used_cpu_user_children", "redis_cpu_user_children_seconds_total", true, 0, "User CPU time of children."},
	{"cpu", "used_cpu_sys_main_thread", "redis_cpu_sys_main_thread_seconds_total", true, 0, "System CPU time of the main thread."},
	{"cpu", "used_cpu_user_main_thread", "redis_cpu_user_main_thread_seconds_total", true, 0, "User CPU time of the main thread."},
}

// infoStatusFields are "ok"/"err" fields, 1 for ok, as redis_exporter
// reads them.
var infoStatusFields = []infoField{
	{"persistence", "rdb_last_bgsave_status", "redis_rdb_last_bgsave_status", false, 0, "Whether the last background save succeeded."},
	{"persistence", "aof_last_bgrewrite_status", "redis_aof_last_bgrewrite_status", false, 0, "Whether the last rewrite succeeded."},
	{"persistence", "aof_last_write_status", "redis_aof_last_write_status", false, 0, "Whether the last change-log write succeeded."},
}

// infoMetrics adds the server's INFO fields.
func infoMetrics(o *metricsOut, info map[string]map[string]string) {
	for _, f := range infoFields {
		v, ok := infoFloat(info[f.section], f.field)
		if !ok {
			continue
		}
		if f.scale != 0 {
			v *= f.scale
		}
		if f.counter {
			o.counter(f.name, f.help, v)
		} else {
			o.gauge(f.name, f.help, v)
		}
	}
	for _, f := range infoStatusFields {
		if v, ok := info[f.section][f.field]; ok {
			ok := 0.0
			if v == "ok" {
				ok = 1
			}
			o.gauge(f.name, f.help, ok)
		}
	}
	if up, ok := infoFloat(info["server"], "uptime_in_seconds"); ok {
		if now, ok := infoFloat(info["server"], "server_time_usec"); ok {
			o.gauge("redis_start_time_seconds", "When the server started (unix seconds).", now/1e6-up)
		}
	}
	srv, mem, repl := info["server"], info["memory"], info["replication"]
	o.add("redis_instance_info", "Information about the server.", prometheus.GaugeValue, 1,
		[]string{"role", "redis_version", "redis_build_id", "redis_mode", "os", "maxmemory_policy", "tcp_port",
			"run_id", "process_id", "revolver_version"},
		repl["role"], srv["redis_version"], srv["redis_build_id"], srv["redis_mode"], srv["os"],
		mem["maxmemory_policy"], srv["tcp_port"], srv["run_id"], srv["process_id"], srv["revolver_version"])
	keyspaceMetrics(o, info["keyspace"])
	commandMetrics(o, info["commandstats"], info["latencystats"])
	for _, k := range sortedKeys(info["errorstats"]) {
		code, ok := strings.CutPrefix(k, "errorstat_")
		if !ok {
			continue
		}
		if n, ok := kvFloat(info["errorstats"][k], "count"); ok {
			o.add("redis_errors_total", "Error replies, by their code.", prometheus.CounterValue, n,
				[]string{"err"}, code)
		}
	}
}

// keyspaceMetrics reads "db0:keys=1,expires=0,avg_ttl=0".
func keyspaceMetrics(o *metricsOut, sec map[string]string) {
	for _, db := range sortedKeys(sec) {
		if !strings.HasPrefix(db, "db") {
			continue
		}
		v := sec[db]
		if n, ok := kvFloat(v, "keys"); ok {
			o.add("redis_db_keys", "Keys, by database.", prometheus.GaugeValue, n, []string{"db"}, db)
		}
		if n, ok := kvFloat(v, "expires"); ok {
			o.add("redis_db_keys_expiring", "Keys with a deadline, by database.", prometheus.GaugeValue, n,
				[]string{"db"}, db)
		}
		if n, ok := kvFloat(v, "avg_ttl"); ok {
			o.add("redis_db_avg_ttl_seconds", "The keys' average time to live, by database.", prometheus.GaugeValue,
				n/1000, []string{"db"}, db)
		}
	}
}

// emptyDatabases gives the databases INFO keyspace leaves out (no keys)
// their zeros, as redis_exporter does, so a database's series does not
// vanish when it empties.
func emptyDatabases(o *metricsOut, sec map[string]string, dbs int) {
	for i := range dbs {
		db := "db" + strconv.Itoa(i)
		if _, ok := sec[db]; ok {
			continue
		}
		o.add("redis_db_keys", "Keys, by database.", prometheus.GaugeValue, 0, []string{"db"}, db)
		o.add("redis_db_keys_expiring", "Keys with a deadline, by database.", prometheus.GaugeValue, 0,
			[]string{"db"}, db)
	}
}

// commandMetrics reads INFO commandstats ("cmdstat_get:calls=2,usec=9,
// usec_per_call=4.50,rejected_calls=0,failed_calls=0") and latencystats
// ("latency_percentiles_usec_get:p50=1.003,p99=...,p99.9=...").
func commandMetrics(o *metricsOut, stats, lat map[string]string) {
	cmd := []string{"cmd"}
	for _, k := range sortedKeys(stats) {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		v := stats[k]
		calls, ok1 := kvFloat(v, "calls")
		usec, ok2 := kvFloat(v, "usec")
		if !ok1 || !ok2 {
			continue
		}
		o.add("redis_commands_total", "Calls, by command.", prometheus.CounterValue, calls, cmd, name)
		o.add("redis_commands_duration_seconds_total", "Time spent in calls, by command.", prometheus.CounterValue,
			usec/1e6, cmd, name)
		if n, ok := kvFloat(v, "rejected_calls"); ok {
			o.add("redis_commands_rejected_calls_total", "Calls refused before they ran (arity, ACL, OOM...), by command.",
				prometheus.CounterValue, n, cmd, name)
		}
		if n, ok := kvFloat(v, "failed_calls"); ok {
			o.add("redis_commands_failed_calls_total", "Calls that ran and answered an error, by command.",
				prometheus.CounterValue, n, cmd, name)
		}
		// redis_exporter's summary: quantiles as INFO names them (50, 99,
		// 99.9), the commandstats' calls and microseconds as count and sum.
		if p, ok := lat["latency_percentiles_usec_"+name]; ok {
			qs := map[float64]float64{}
			for part := range strings.SplitSeq(p, ",") {
				q, x, ok := strings.Cut(part, "=")
				if !ok || len(q) < 2 || q[0] != 'p' {
					continue
				}
				qf, err1 := strconv.ParseFloat(q[1:], 64)
				xf, err2 := strconv.ParseFloat(x, 64)
				if err1 == nil && err2 == nil {
					qs[qf] = xf
				}
			}
			m, err := prometheus.NewConstSummary(o.desc("redis_latency_percentiles_usec",
				"Latency percentiles of calls in microseconds, by command.", cmd), uint64(calls), usec, qs, name)
			if err == nil {
				o.ms = append(o.ms, m)
			}
		}
	}
}

// kvFloat reads name's number from "a=1,b=2".
func kvFloat(s, name string) (float64, bool) {
	for part := range strings.SplitSeq(s, ",") {
		if k, v, ok := strings.Cut(part, "="); ok && k == name {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}
