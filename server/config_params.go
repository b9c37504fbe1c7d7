package server

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/revolver-db/revolver/engine"
)

// The rest of Redis 7.0's configuration parameters. Each has Redis's type,
// bounds, default, aliases and mutability (src/config.c's table), so CONFIG
// GET '*' lists what redis-server lists and CONFIG SET validates a value as
// Redis does. Most describe machinery Revolver does not have (RDB and AOF
// files, replication, cluster, jemalloc, active defragmentation): there
// CONFIG SET keeps any valid value for CONFIG GET and CONFIG REWRITE and
// nothing else changes. The ones Revolver follows name an apply function.

type paramKind int

const (
	kindBool paramKind = iota
	kindInt
	kindMemory
	kindMemPercent // a memory value, or a percentage kept as its negation
	kindMemoryU    // a memory value up to 2^64-1 (Redis's unsigned long long)
	kindOctal
	kindEnum
	kindString
)

// enumName is one name of an enumerated parameter; several names may share
// a value (CONFIG GET shows the first), and bit-flag enums OR them.
type enumName struct {
	name string
	val  int
}

var (
	supervisedEnum      = []enumName{{"upstart", 1}, {"systemd", 2}, {"auto", 3}, {"no", 0}}
	syslogFacilityEnum  = []enumName{{"user", 1}, {"local0", 16}, {"local1", 17}, {"local2", 18}, {"local3", 19}, {"local4", 20}, {"local5", 21}, {"local6", 22}, {"local7", 23}}
	disklessLoadEnum    = []enumName{{"disabled", 0}, {"on-empty-db", 1}, {"swapdb", 2}}
	oomScoreAdjEnum     = []enumName{{"no", 0}, {"yes", 1}, {"relative", 1}, {"absolute", 2}}
	aclPubsubEnum       = []enumName{{"allchannels", 1}, {"resetchannels", 0}}
	sanitizeDumpEnum    = []enumName{{"no", 0}, {"yes", 1}, {"clients", 2}}
	protectedActionEnum = []enumName{{"no", 0}, {"yes", 1}, {"local", 2}}
	endpointTypeEnum    = []enumName{{"ip", 0}, {"hostname", 1}, {"unknown-endpoint", 2}}
	propagationErrEnum  = []enumName{{"ignore", 0}, {"panic", 1}, {"panic-on-replicas", 2}}
	shutdownOnSigEnum   = []enumName{{"default", 0}, {"save", 1}, {"nosave", 2}, {"now", 4}, {"force", 8}}
	tlsAuthClientsEnum  = []enumName{{"no", 0}, {"yes", 1}, {"optional", 2}}
)

// paramSpec is one parameter of the table below.
type paramSpec struct {
	name, alias string
	kind        paramKind
	min, max    int64
	def         string
	enum        []enumName
	multiArg    bool // the value is several space-separated words
	immutable   bool // CONFIG SET refuses it (start-up only)
	hidden      bool // CONFIG GET shows it only when named exactly
	protected   bool // refused while enable-protected-configs is no
	check       func(v string) error
	clamp       func(n int64) int64 // what Redis makes of an accepted number
	apply       func(s *Server)
	tryApply    func(s *Server) error // an apply that may fail (param.tryApply)
	volatile    bool                  // tryApply also when the value is the same (param.volatile)
}

var redisParams = []paramSpec{
	// Redis 7.0's protected mode (conn.go protectedRefuses).
	{name: "protected-mode", kind: kindBool, def: "yes"},
	{name: "rdbchecksum", kind: kindBool, def: "yes", immutable: true},
	// daemonize, pidfile, supervised and syslog-* are the process's
	// (cmd/revolver); unixsocket and unixsocketperm the server's.
	{name: "daemonize", kind: kindBool, def: "no", immutable: true},
	{name: "io-threads-do-reads", kind: kindBool, def: "no", immutable: true},
	{name: "always-show-logo", kind: kindBool, def: "no", immutable: true},
	{name: "rdbcompression", kind: kindBool, def: "yes"},
	{name: "rdb-del-sync-files", kind: kindBool, def: "no"},
	{name: "activerehashing", kind: kindBool, def: "yes"},
	{name: "stop-writes-on-bgsave-error", kind: kindBool, def: "yes"},
	{name: "set-proc-title", kind: kindBool, def: "yes", immutable: true},
	{name: "dynamic-hz", kind: kindBool, def: "yes"},
	{name: "lazyfree-lazy-eviction", kind: kindBool, def: "no", apply: (*Server).applyLazyFree},
	{name: "lazyfree-lazy-expire", kind: kindBool, def: "no", apply: (*Server).applyLazyFree},
	{name: "lazyfree-lazy-server-del", kind: kindBool, def: "no", apply: (*Server).applyLazyFree},
	{name: "lazyfree-lazy-user-del", kind: kindBool, def: "no", apply: (*Server).applyLazyFree},
	{name: "lazyfree-lazy-user-flush", kind: kindBool, def: "no", apply: (*Server).applyLazyFree},
	{name: "repl-disable-tcp-nodelay", kind: kindBool, def: "no"},
	{name: "repl-diskless-sync", kind: kindBool, def: "yes"},
	{name: "aof-rewrite-incremental-fsync", kind: kindBool, def: "yes"},
	{name: "no-appendfsync-on-rewrite", kind: kindBool, def: "no"},
	{name: "cluster-require-full-coverage", kind: kindBool, def: "yes"},
	{name: "rdb-save-incremental-fsync", kind: kindBool, def: "yes"},
	{name: "aof-load-truncated", kind: kindBool, def: "yes"},
	{name: "aof-use-rdb-preamble", kind: kindBool, def: "yes"},
	{name: "aof-timestamp-enabled", kind: kindBool, def: "no"},
	{name: "cluster-replica-no-failover", alias: "cluster-slave-no-failover", kind: kindBool, def: "no"},
	{name: "replica-lazy-flush", alias: "slave-lazy-flush", kind: kindBool, def: "no"},
	{name: "replica-serve-stale-data", alias: "slave-serve-stale-data", kind: kindBool, def: "yes"},
	{name: "replica-read-only", alias: "slave-read-only", kind: kindBool, def: "yes"},
	{name: "replica-ignore-maxmemory", alias: "slave-ignore-maxmemory", kind: kindBool, def: "yes"},
	{name: "jemalloc-bg-thread", kind: kindBool, def: "yes"},
	{name: "activedefrag", kind: kindBool, def: "no", check: checkActiveDefrag},
	{name: "syslog-enabled", kind: kindBool, def: "no", immutable: true},
	{name: "cluster-enabled", kind: kindBool, def: "no", immutable: true,
		check: onlyNo("Revolver has no cluster mode")},
	{name: "cluster-allow-reads-when-down", kind: kindBool, def: "no"},
	{name: "cluster-allow-pubsubshard-when-down", kind: kindBool, def: "yes"},
	{name: "crash-log-enabled", kind: kindBool, def: "yes"},
	{name: "crash-memcheck-enabled", kind: kindBool, def: "yes"},
	{name: "use-exit-on-panic", kind: kindBool, def: "no", hidden: true},
	{name: "disable-thp", kind: kindBool, def: "yes", immutable: true},
	{name: "cluster-allow-replica-migration", kind: kindBool, def: "yes"},
	{name: "replica-announced", kind: kindBool, def: "yes"},
	{name: "aof-disable-auto-gc", kind: kindBool, def: "no"},
	{name: "replica-ignore-disk-write-errors", kind: kindBool, def: "no"},
	{name: "aclfile", kind: kindString, def: "", immutable: true},
	{name: "unixsocket", kind: kindString, def: "", immutable: true},
	{name: "pidfile", kind: kindString, def: "", immutable: true},
	{name: "replica-announce-ip", alias: "slave-announce-ip", kind: kindString, def: ""},
	{name: "masteruser", kind: kindString, def: ""},
	{name: "cluster-announce-ip", kind: kindString, def: ""},
	{name: "cluster-config-file", kind: kindString, def: "nodes.conf", immutable: true},
	{name: "cluster-announce-hostname", kind: kindString, def: "", check: checkHostname},
	{name: "syslog-ident", kind: kindString, def: "redis", immutable: true},
	{name: "dbfilename", kind: kindString, def: "dump.rdb", protected: true, check: checkBaseName("dbfilename")},
	{name: "appendfilename", kind: kindString, def: "appendonly.aof", immutable: true},
	{name: "appenddirname", kind: kindString, def: "appendonlydir", immutable: true},
	{name: "server_cpulist", kind: kindString, def: "", immutable: true},
	{name: "bio_cpulist", kind: kindString, def: "", immutable: true},
	{name: "aof_rewrite_cpulist", kind: kindString, def: "", immutable: true},
	{name: "bgsave_cpulist", kind: kindString, def: "", immutable: true},
	{name: "ignore-warnings", kind: kindString, def: ""},
	{name: "proc-title-template", kind: kindString, def: "{title} {listen-addr} {server-mode}", check: checkProcTitle},
	{name: "bind-source-addr", kind: kindString, def: ""},
	{name: "masterauth", kind: kindString, def: ""},
	{name: "supervised", kind: kindEnum, enum: supervisedEnum, def: "no", immutable: true},
	{name: "syslog-facility", kind: kindEnum, enum: syslogFacilityEnum, def: "local0", immutable: true},
	{name: "repl-diskless-load", kind: kindEnum, enum: disklessLoadEnum, def: "disabled"},
	{name: "oom-score-adj", kind: kindEnum, enum: oomScoreAdjEnum, def: "no"},
	{name: "acl-pubsub-default", kind: kindEnum, enum: aclPubsubEnum, def: "resetchannels"},
	// Reported as set; RESTORE validates every payload fully whatever it
	// says (engine/rdb_read.go).
	{name: "sanitize-dump-payload", kind: kindEnum, enum: sanitizeDumpEnum, def: "no"},
	{name: "enable-protected-configs", kind: kindEnum, enum: protectedActionEnum, def: "no", immutable: true},
	{name: "enable-module-command", kind: kindEnum, enum: protectedActionEnum, def: "no", immutable: true},
	{name: "cluster-preferred-endpoint-type", kind: kindEnum, enum: endpointTypeEnum, def: "ip"},
	{name: "propagation-error-behavior", kind: kindEnum, enum: propagationErrEnum, def: "ignore"},
	{name: "shutdown-on-sigint", kind: kindEnum, enum: shutdownOnSigEnum, def: "default", multiArg: true, check: checkShutdownFlags},
	{name: "shutdown-on-sigterm", kind: kindEnum, enum: shutdownOnSigEnum, def: "default", multiArg: true, check: checkShutdownFlags},
	{name: "auto-aof-rewrite-percentage", kind: kindInt, min: 0, max: math.MaxInt32, def: "100"},
	{name: "cluster-replica-validity-factor", alias: "cluster-slave-validity-factor", kind: kindInt, min: 0, max: math.MaxInt32, def: "10"},
	{name: "list-max-listpack-size", alias: "list-max-ziplist-size", kind: kindInt, min: math.MinInt32, max: math.MaxInt32, def: "-2"},
	{name: "cluster-migration-barrier", kind: kindInt, min: 0, max: math.MaxInt32, def: "1"},
	{name: "active-defrag-cycle-min", kind: kindInt, min: 1, max: 99, def: "1"},
	{name: "active-defrag-cycle-max", kind: kindInt, min: 1, max: 99, def: "25"},
	{name: "active-defrag-threshold-lower", kind: kindInt, min: 0, max: 1000, def: "10"},
	{name: "active-defrag-threshold-upper", kind: kindInt, min: 0, max: 1000, def: "100"},
	{name: "replica-priority", alias: "slave-priority", kind: kindInt, min: 0, max: math.MaxInt32, def: "100"},
	{name: "repl-diskless-sync-delay", kind: kindInt, min: 0, max: math.MaxInt32, def: "5"},
	{name: "replica-announce-port", alias: "slave-announce-port", kind: kindInt, min: 0, max: 65535, def: "0"},
	{name: "tcp-backlog", kind: kindInt, min: 0, max: math.MaxInt32, def: "511", immutable: true},
	{name: "cluster-port", kind: kindInt, min: 0, max: 65535, def: "0", immutable: true},
	{name: "cluster-announce-bus-port", kind: kindInt, min: 0, max: 65535, def: "0"},
	{name: "cluster-announce-port", kind: kindInt, min: 0, max: 65535, def: "0"},
	{name: "cluster-announce-tls-port", kind: kindInt, min: 0, max: 65535, def: "0"},
	{name: "repl-timeout", kind: kindInt, min: 1, max: math.MaxInt32, def: "60"},
	{name: "repl-ping-replica-period", alias: "repl-ping-slave-period", kind: kindInt, min: 1, max: math.MaxInt32, def: "10"},
	{name: "list-compress-depth", kind: kindInt, min: 0, max: math.MaxInt32, def: "0"},
	{name: "rdb-key-save-delay", kind: kindInt, min: math.MinInt32, max: math.MaxInt32, def: "0", hidden: true},
	{name: "key-load-delay", kind: kindInt, min: math.MinInt32, max: math.MaxInt32, def: "0", hidden: true},
	{name: "active-expire-effort", kind: kindInt, min: 1, max: 10, def: "1"},
	// hz is taken as a hint and capped to 1..500, as in Redis; Revolver's cron
	// has its own pace.
	{name: "hz", kind: kindInt, min: 0, max: math.MaxInt32, def: "10", clamp: func(n int64) int64 { return min(max(n, 1), 500) }},
	{name: "min-replicas-to-write", alias: "min-slaves-to-write", kind: kindInt, min: 0, max: math.MaxInt32, def: "0", apply: (*Server).applyReplication},
	{name: "min-replicas-max-lag", alias: "min-slaves-max-lag", kind: kindInt, min: 0, max: math.MaxInt32, def: "10", apply: (*Server).applyReplication},
	{name: "watchdog-period", kind: kindInt, min: 0, max: math.MaxInt32, def: "0", hidden: true},
	{name: "shutdown-timeout", kind: kindInt, min: 0, max: math.MaxInt32, def: "10"},
	{name: "repl-diskless-sync-max-replicas", kind: kindInt, min: 0, max: math.MaxInt32, def: "0"},
	{name: "unixsocketperm", kind: kindOctal, min: 0, max: 0o777, def: "0", immutable: true},
	{name: "socket-mark-id", kind: kindInt, min: 0, max: math.MaxUint32, def: "0", immutable: true},
	{name: "active-defrag-max-scan-fields", kind: kindInt, min: 1, max: math.MaxInt64, def: "1000"},
	{name: "acllog-max-len", kind: kindInt, min: 0, max: math.MaxInt64, def: "128"},
	{name: "cluster-node-timeout", kind: kindInt, min: 0, max: math.MaxInt64, def: "15000"},
	{name: "stream-node-max-entries", kind: kindInt, min: 0, max: math.MaxInt64, def: "100", apply: (*Server).applyLimits},
	{name: "repl-backlog-size", kind: kindMemory, min: 1, max: math.MaxInt64, def: "1048576",
		clamp: func(n int64) int64 { return max(n, 16<<10) }, apply: (*Server).applyReplication}, // Redis's smallest backlog,
	{name: "cluster-link-sendbuf-limit", kind: kindMemoryU, def: "0"},
	{name: "active-defrag-ignore-bytes", kind: kindMemory, min: 1, max: math.MaxInt64, def: "104857600"},
	{name: "stream-node-max-bytes", kind: kindMemory, min: 0, max: math.MaxInt64, def: "4096", apply: (*Server).applyLimits},
	{name: "maxmemory-clients", kind: kindMemPercent, min: -100, max: math.MaxInt64, def: "0", apply: (*Server).applyClientEviction},
	{name: "repl-backlog-ttl", kind: kindInt, min: 0, max: math.MaxInt64, def: "3600"},
	{name: "auto-aof-rewrite-min-size", kind: kindMemory, min: 0, max: math.MaxInt64, def: "67108864"},
	{name: "loading-process-events-interval-bytes", kind: kindInt, min: 1024, max: math.MaxInt32, def: "2097152", hidden: true},
	// TLS (tls.go, tls_config.go). As Redis, a change rebuilds the TLS
	// configuration when TLS is in use; for the files, also when the name
	// is the same (a certificate rewritten in place is read again).
	{name: "tls-port", kind: kindInt, min: 0, max: 65535, def: "0", tryApply: (*Server).applyTLSPort},
	{name: "tls-session-cache-size", kind: kindInt, min: 0, max: math.MaxInt32, def: "20480", tryApply: (*Server).applyTLS},
	{name: "tls-session-cache-timeout", kind: kindInt, min: 0, max: math.MaxInt32, def: "300", tryApply: (*Server).applyTLS},
	{name: "tls-cluster", kind: kindBool, def: "no", tryApply: (*Server).applyTLS},
	{name: "tls-replication", kind: kindBool, def: "no", tryApply: (*Server).applyTLS},
	{name: "tls-auth-clients", kind: kindEnum, enum: tlsAuthClientsEnum, def: "yes", apply: (*Server).applyTLSAuth},
	{name: "tls-prefer-server-ciphers", kind: kindBool, def: "no", tryApply: (*Server).applyTLS},
	{name: "tls-session-caching", kind: kindBool, def: "yes", tryApply: (*Server).applyTLS},
	{name: "tls-cert-file", kind: kindString, def: "", volatile: true, tryApply: (*Server).applyTLS},
	{name: "tls-key-file", kind: kindString, def: "", volatile: true, tryApply: (*Server).applyTLS},
	{name: "tls-key-file-pass", kind: kindString, def: "", tryApply: (*Server).applyTLS},
	{name: "tls-client-cert-file", kind: kindString, def: "", volatile: true, tryApply: (*Server).applyTLS},
	{name: "tls-client-key-file", kind: kindString, def: "", volatile: true, tryApply: (*Server).applyTLS},
	{name: "tls-client-key-file-pass", kind: kindString, def: "", tryApply: (*Server).applyTLS},
	{name: "tls-dh-params-file", kind: kindString, def: "", volatile: true, tryApply: (*Server).applyTLS},
	{name: "tls-ca-cert-file", kind: kindString, def: "", volatile: true, tryApply: (*Server).applyTLS},
	{name: "tls-ca-cert-dir", kind: kindString, def: "", volatile: true, tryApply: (*Server).applyTLS},
	{name: "tls-protocols", kind: kindString, def: "", tryApply: (*Server).applyTLS},
	{name: "tls-ciphers", kind: kindString, def: "", tryApply: (*Server).applyTLS},
	{name: "tls-ciphersuites", kind: kindString, def: "", tryApply: (*Server).applyTLS},
	// The latency monitor and the per-command latency histograms
	// (latency.go) follow these three.
	{name: "latency-monitor-threshold", kind: kindInt, min: 0, max: math.MaxInt64, def: "0", apply: (*Server).applyLatency},
	{name: "latency-tracking", kind: kindBool, def: "yes", apply: (*Server).applyLatency},
	{name: "latency-tracking-info-percentiles", kind: kindString, multiArg: true, def: "50 99 99.9",
		check: checkPercentiles, apply: (*Server).applyLatency},
	{name: "save", kind: kindString, multiArg: true, def: "", check: checkSavePoints},
	{name: "oom-score-adj-values", kind: kindString, multiArg: true, def: "0 200 800", check: checkOOMValues},
	{name: "replicaof", alias: "slaveof", kind: kindString, multiArg: true, def: "", immutable: true},
}

// param turns a table entry into the option the configuration uses. The
// value lives in Config.Extra, already in the form CONFIG GET shows.
func (sp paramSpec) param() *param {
	name, def := sp.name, sp.def
	return &param{name: sp.name, alias: sp.alias, mutable: !sp.immutable, hidden: sp.hidden, protected: sp.protected,
		get: func(c *Config) string {
			if v, ok := c.Extra[name]; ok {
				return v
			}
			return def
		},
		set: func(c *Config, v string) error {
			canon, err := sp.parse(v)
			if err != nil {
				return err
			}
			if c.Extra == nil {
				c.Extra = map[string]string{}
			}
			c.Extra[name] = canon
			return nil
		},
		apply: sp.apply, tryApply: sp.tryApply, volatile: sp.volatile}
}

// parse validates v as Redis does for the parameter's type and returns the
// value as CONFIG GET shows it.
func (sp paramSpec) parse(v string) (string, error) {
	if sp.check != nil {
		if err := sp.check(v); err != nil {
			return "", err
		}
	}
	switch sp.kind {
	case kindBool:
		switch strings.ToLower(v) {
		case "yes":
			return "yes", nil
		case "no":
			return "no", nil
		}
		return "", errBoolArg
	case kindEnum:
		return parseEnum(sp.enum, v, sp.multiArg)
	case kindMemoryU:
		n, ok := parseMemoryU(v)
		if !ok {
			return "", errors.New("argument must be a memory value")
		}
		return strconv.FormatUint(n, 10), nil
	case kindString:
		if sp.name == "save" {
			return normalizeSavePoints(v), nil
		}
		if sp.name == "latency-tracking-info-percentiles" {
			return normalizePercentiles(v), nil
		}
		if sp.name == "oom-score-adj-values" {
			return normalizeInts(v), nil
		}
		return v, nil
	}
	n, err := parseNumber(sp.kind, v)
	if err != nil {
		return "", err
	}
	if sp.kind == kindMemPercent && n < 0 {
		if n < sp.min {
			return "", fmt.Errorf("percentage argument must be less or equal to %d", -sp.min)
		}
		return strconv.FormatInt(-n, 10) + "%", nil
	}
	if n < sp.min || n > sp.max {
		if sp.kind == kindOctal {
			return "", fmt.Errorf("argument must be between %o and %o inclusive", sp.min, sp.max)
		}
		return "", fmt.Errorf("argument must be between %d and %d inclusive", sp.min, sp.max)
	}
	if sp.clamp != nil {
		n = sp.clamp(n)
	}
	if sp.kind == kindOctal {
		return strconv.FormatInt(n, 8), nil
	}
	return strconv.FormatInt(n, 10), nil
}

// parseNumber reads an integer, memory, percent or octal value with
// Redis's parsers and error texts.
func parseNumber(kind paramKind, v string) (int64, error) {
	switch kind {
	case kindMemory, kindMemPercent:
		if n, ok := parseMemory(v); ok {
			return n, nil
		}
		if kind == kindMemPercent && len(v) > 1 && v[len(v)-1] == '%' {
			if n, ok := engine.ParseInt([]byte(v[:len(v)-1])); ok && n >= 0 {
				return -n, nil
			}
		}
		if kind == kindMemPercent {
			return 0, errors.New("argument must be a memory or percent value")
		}
		return 0, errors.New("argument must be a memory value")
	case kindOctal:
		if n, err := strconv.ParseInt(v, 8, 64); err == nil {
			return n, nil
		}
		return 0, errors.New("argument couldn't be parsed as an octal number")
	}
	if n, ok := engine.ParseInt([]byte(v)); ok {
		return n, nil
	}
	return 0, errors.New("argument couldn't be parsed into an integer")
}

// parseEnum matches v (several space-separated flags for a bit-flag enum)
// and returns the canonical name(s).
func parseEnum(names []enumName, v string, bitflags bool) (string, error) {
	args := []string{v}
	if bitflags {
		args = strings.Split(v, " ")
	}
	val := 0
	for _, a := range args {
		matched := false
		for _, e := range names {
			if strings.EqualFold(a, e.name) {
				val |= e.val
				matched = true
			}
		}
		if !matched {
			all := make([]string, len(names))
			for i, e := range names {
				all[i] = e.name
			}
			return "", fmt.Errorf("argument(s) must be one of the following: %s", strings.Join(all, ", "))
		}
	}
	var out []string
	left := val
	for _, e := range names {
		if e.val == val {
			return e.name, nil
		}
		if bitflags && e.val != 0 && e.val&left == e.val {
			out = append(out, e.name)
			left &^= e.val
		}
	}
	return strings.Join(out, " "), nil
}

// onlyNo refuses "yes" for a boolean Revolver cannot honour.
func onlyNo(why string) func(string) error {
	return func(v string) error {
		if strings.EqualFold(v, "yes") {
			return errors.New("argument must be 'no': " + why)
		}
		return nil
	}
}

func checkShutdownFlags(v string) error {
	has := map[string]bool{}
	for _, a := range strings.Split(v, " ") {
		has[strings.ToLower(a)] = true
	}
	if has["save"] && has["nosave"] {
		return errors.New("shutdown options SAVE and NOSAVE can't be used simultaneously")
	}
	return nil
}

// checkActiveDefrag: Go's allocator cannot be defragmented, which Redis
// reports in its own words when built without its jemalloc.
func checkActiveDefrag(v string) error {
	if strings.EqualFold(v, "yes") {
		return errors.New("Active defragmentation cannot be enabled: it requires a Redis server compiled " +
			"with a modified Jemalloc like the one shipped by default with the Redis source distribution")
	}
	return nil
}

func checkBaseName(param string) func(string) error {
	return func(v string) error {
		if strings.ContainsRune(v, '/') {
			return fmt.Errorf("%s can't be a path, just a filename", param)
		}
		return nil
	}
}

func checkHostname(v string) error {
	if len(v) >= 256 {
		return errors.New("Hostnames must be less than 256 characters")
	}
	for i := 0; i < len(v); i++ {
		ch := v[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '.') {
			return errors.New("Hostnames may only contain alphanumeric characters, hyphens or dots")
		}
	}
	return nil
}

// checkProcTitle accepts a template whose {variables} are known and that
// does not expand to nothing.
func checkProcTitle(v string) error {
	bad := errors.New("template format is invalid or contains unknown variables")
	rest, text := v, ""
	for {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			text += rest
			break
		}
		if rest[i] == '}' {
			return bad
		}
		text += rest[:i]
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return bad
		}
		switch rest[i+1 : i+j] {
		case "title", "server-mode", "unixsocket":
		case "listen-addr", "config-file", "port", "tls-port":
			text += "x"
		default:
			return bad
		}
		rest = rest[i+j+1:]
	}
	if strings.TrimSpace(text) == "" {
		return bad
	}
	return nil
}

// checkSavePoints: pairs of seconds (at least 1) and changes (at least 0).
func checkSavePoints(v string) error {
	if v == "" {
		return nil
	}
	args := strings.Split(v, " ")
	if len(args)%2 != 0 {
		return errors.New("Invalid save parameters")
	}
	for i, a := range args {
		n, err := strconv.ParseInt(a, 10, 64)
		if a == "" {
			n, err = 0, nil
		}
		if err != nil || i%2 == 0 && n < 1 || i%2 == 1 && n < 0 {
			return errors.New("Invalid save parameters")
		}
	}
	return nil
}

func normalizeSavePoints(v string) string {
	if v == "" {
		return ""
	}
	return normalizeInts(v)
}

func normalizeInts(v string) string {
	args := strings.Split(v, " ")
	for i, a := range args {
		n, _ := strconv.ParseInt(a, 10, 64)
		args[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(args, " ")
}

func checkOOMValues(v string) error {
	args := strings.Split(v, " ")
	if len(args) != 3 {
		return errors.New("wrong number of arguments")
	}
	for _, a := range args {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n < -2000 || n > 2000 {
			return errors.New("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
		}
	}
	return nil
}

func checkPercentiles(v string) error {
	if v == "" {
		return nil
	}
	for _, a := range strings.Split(v, " ") {
		p, err := strconv.ParseFloat(a, 64)
		if err != nil || a == "" || strings.ContainsAny(a, " \t") || math.IsNaN(p) {
			return errors.New("Invalid latency-tracking-info-percentiles parameters")
		}
		if p > 100 || p < 0 {
			return errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
		}
	}
	return nil
}

// normalizePercentiles writes each percentile as Redis does: %f with the
// trailing zeros (and a bare point) trimmed.
func normalizePercentiles(v string) string {
	if v == "" {
		return ""
	}
	args := strings.Split(v, " ")
	for i, a := range args {
		p, _ := strconv.ParseFloat(a, 64)
		args[i] = trimFloat(fmt.Sprintf("%f", p))
	}
	return strings.Join(args, " ")
}

func trimFloat(s string) string {
	if strings.IndexByte(s, '.') < 0 {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// specDefaults maps each table parameter to its default. It is filled by
// init, not by an initializer: the table refers to apply functions that read
// parameters, which would make the table depend on itself.
var specDefaults = map[string]string{}

func init() {
	for _, sp := range slices.Concat(redisParams, consoleParams) {
		specDefaults[sp.name] = sp.def
	}
}

// Param is the value CONFIG GET shows for name ("" for an unknown name).
func (c *Config) Param(name string) string {
	if p := lookupParam(name); p != nil {
		return p.get(c)
	}
	return ""
}

// extraString reads a table parameter as CONFIG GET shows it.
func (c *Config) extraString(name string) string {
	if v, ok := c.Extra[name]; ok {
		return v
	}
	return specDefaults[name]
}

// extraInt reads a table parameter that holds a number.
func (c *Config) extraInt(name string) int64 {
	n, _ := strconv.ParseInt(c.extraString(name), 10, 64)
	return n
}
