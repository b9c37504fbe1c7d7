package server

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/revolver-db/revolver/commands"
	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/glob"
	"github.com/revolver-db/revolver/persistence"
)

// Config is the server's configuration, with Redis's option names. The
// zero value is not useful: start from DefaultConfig.
type Config struct {
	Port                    int
	Bind                    []string
	Dir                     string
	AppendFsync             string
	Persistence             bool
	ImportRDB               bool // import-rdb: load dir/dbfilename on a first start (rdb_import.go)
	RequirePass             string
	MaxClients              int64
	MaxMemory               uint64
	Timeout                 int64
	TCPKeepalive            int64
	NotifyKeyspaceEvents    string
	LogLevel                string
	LogFile                 string
	ProtoMaxBulkLen         int64
	ClientQueryBufferLimit  int64
	SlowlogLogSlowerThan    int64
	SlowlogMaxLen           int64
	ClientOutputBufferLimit string
	EnableDebugCommand      string
	Databases               int
	IOThreads               int64 // event loops serving connections
	BusyReplyThreshold      int64 // ms a script runs before others get BUSY (lua-time-limit)
	// Encoding thresholds (OBJECT ENCODING names), as in Redis 7.0.
	HashMaxListpackEntries int64
	HashMaxListpackValue   int64
	SetMaxIntsetEntries    int64
	ZSetMaxListpackEntries int64
	ZSetMaxListpackValue   int64
	HLLSparseMaxBytes      int64
	UVExactMax             int64  // members a unique counter (UV.*) counts exactly
	TrackingTableMaxKeys   int64  // tracking-table-max-keys (CLIENT TRACKING)
	ConfigFile             string // set when started with a file (CONFIG REWRITE target)
	// AppendOnly is what the configuration said of appendonly ("" for
	// nothing): with persistence on, "no" is Redis's default and changes
	// nothing here (Server.Start says so in its log).
	AppendOnly string
	// RenameCommands are rename-command's pairs (a command's new name, ""
	// to remove it), Users the user lines (name, then rules), in order.
	RenameCommands [][2]string
	Users          [][]string
	// Extra holds the values of the table parameters (config_params.go)
	// set away from their defaults, as CONFIG GET shows them.
	Extra map[string]string

	// The defaults of every ROOM key's limits (ROOM.CONFIG overrides them).
	RoomMaxMessages, RoomImportantMax, RoomImportantTTL, RoomPresenceTTL int64
	RoomTiers                                                            []engine.RoomTier

	// PersistenceMaxMemory caps what the store holds in memory for recent
	// writes (persistence.Options.MaxMemory).
	PersistenceMaxMemory int64

	// Eviction under maxmemory (engine/evict.go, server/evict.go).
	MaxMemoryPolicy                                                         string
	MaxMemorySamples, MaxMemoryEvictionTenacity, LFULogFactor, LFUDecayTime int64

	// Clock, when set, is the clock every deadline follows (expiry,
	// blocked clients' timeouts, the families' timers) instead of the
	// system's: tests pass an engine.ManualClock and advance it. Not a
	// configuration option.
	Clock engine.Clock
	// FS, when set, is the file system the store keeps its files on
	// instead of the OS's (persistence.Options.FS): tests pass one that
	// holds fsyncs or simulates a power cut. Not a configuration option.
	FS vfs.FS
}

// DefaultConfig is what `revolver` runs with when given nothing.
func DefaultConfig() Config {
	return Config{
		Port:                    6379,
		Bind:                    []string{"127.0.0.1"},
		Dir:                     "./data",
		AppendFsync:             "everysec",
		Persistence:             true,
		MaxClients:              10000,
		TCPKeepalive:            300,
		LogLevel:                "notice",
		ProtoMaxBulkLen:         512 << 20,
		ClientQueryBufferLimit:  1 << 30,
		SlowlogLogSlowerThan:    10000,
		SlowlogMaxLen:           128,
		ClientOutputBufferLimit: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		EnableDebugCommand:      "local",
		Databases:               16,
		IOThreads:               1,
		BusyReplyThreshold:      5000,
		TrackingTableMaxKeys:    1000000,
		PersistenceMaxMemory:    persistence.DefaultMaxMemory,
		HashMaxListpackEntries:  512,
		HashMaxListpackValue:    64,
		SetMaxIntsetEntries:     512,
		ZSetMaxListpackEntries:  128,
		ZSetMaxListpackValue:    64,
		HLLSparseMaxBytes:       3000,
		UVExactMax:              10000,
		RoomMaxMessages:         2000,
		RoomImportantMax:        200,
		RoomImportantTTL:        600_000,
		RoomPresenceTTL:         30_000,

		// Eviction: Redis's defaults.
		MaxMemoryPolicy:           "noeviction",
		MaxMemorySamples:          5,
		MaxMemoryEvictionTenacity: 10,
		LFULogFactor:              10,
		LFUDecayTime:              1,
	}
}

// param describes one configuration option.
type param struct {
	name    string
	alias   string
	mutable bool // CONFIG SET may change it at runtime
	hidden  bool // CONFIG GET shows it only when named exactly
	// protected: CONFIG SET refuses it unless enable-protected-configs allows
	protected bool
	derived   bool // follows another parameter: CONFIG REWRITE leaves it out
	// rebind: a runtime change makes the server listen again (port, bind)
	rebind bool
	get    func(c *Config) string
	set    func(c *Config, v string) error
	apply  func(s *Server) // runs after a runtime change
	// tryApply runs after a runtime change and may fail: then every value
	// the CONFIG SET changed is restored (Redis's apply functions). It runs
	// when the value changed, or always for a volatile parameter (a file
	// whose content may have changed under the same name).
	tryApply func(s *Server) error
	volatile bool
	// check vets a runtime change beyond the value's syntax, and may
	// rewrite the value (as Redis's chdir makes dir absolute).
	check func(s *Server, v string) (string, error)
}

// checkDir is Redis's chdir for CONFIG SET dir: the directory must exist,
// and is kept absolute. A persistent server's data directory stays.
func checkDir(s *Server, v string) (string, error) {
	abs, err := filepath.Abs(v)
	if err != nil {
		return "", err
	}
	if s.store != nil {
		if cur, _ := filepath.Abs(s.cfg.Dir); cur != abs {
			return "", errors.New("the data directory cannot change while persistence is on")
		}
		return v, nil
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", errors.New("No such file or directory")
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", errors.New("Not a directory")
	}
	return abs, nil
}

// maxBindAddrs is Redis's CONFIG_BINDADDR_MAX.
const maxBindAddrs = 16

var errBoolArg = errors.New("argument must be 'yes' or 'no'")

// intParam is an integer option with Redis's parsing (string2ll: no sign
// but '-', no spaces, no leading zeros) and bounds.
func intParam(ptr func(c *Config) *int64, min, max int64) (func(*Config) string, func(*Config, string) error) {
	get := func(c *Config) string { return strconv.FormatInt(*ptr(c), 10) }
	set := func(c *Config, v string) error {
		n, ok := engine.ParseInt([]byte(v))
		if !ok {
			return errors.New("argument couldn't be parsed into an integer")
		}
		if n < min || n > max {
			return fmt.Errorf("argument must be between %d and %d inclusive", min, max)
		}
		*ptr(c) = n
		return nil
	}
	return get, set
}

func memParam(ptr func(c *Config) *int64, min int64) (func(*Config) string, func(*Config, string) error) {
	get := func(c *Config) string { return strconv.FormatInt(*ptr(c), 10) }
	set := func(c *Config, v string) error {
		n, ok := parseMemory(v)
		if !ok {
			return errors.New("argument must be a memory value")
		}
		if n < min {
			return fmt.Errorf("argument must be between %d and %d inclusive", min, int64(1<<63-1))
		}
		*ptr(c) = n
		return nil
	}
	return get, set
}

func enumParam(ptr func(c *Config) *string, values ...string) (func(*Config) string, func(*Config, string) error) {
	get := func(c *Config) string { return *ptr(c) }
	set := func(c *Config, v string) error {
		for _, allowed := range values {
			if strings.EqualFold(v, allowed) {
				*ptr(c) = allowed
				return nil
			}
		}
		return fmt.Errorf("argument(s) must be one of the following: %s", strings.Join(values, ", "))
	}
	return get, set
}

// params is the table of the parameters Revolver acts on; the ones it
// only stores and reports are in config_params.go.
var params = func() []*param {
	var ps []*param
	add := func(p *param) { ps = append(ps, p) }

	// port and bind change at runtime as in Redis 7.0 (rebind): port 0 at
	// start-up picks a free port, at runtime it stops listening, as Redis's
	// port 0 does.
	add(&param{name: "port", mutable: true, rebind: true, get: func(c *Config) string { return strconv.Itoa(c.Port) },
		set: func(c *Config, v string) error {
			n, ok := engine.ParseInt([]byte(v))
			switch {
			case !ok:
				return errors.New("argument couldn't be parsed into an integer")
			case n < 0 || n > 65535:
				return errors.New("argument must be between 0 and 65535 inclusive")
			}
			c.Port = int(n)
			return nil
		}})
	add(&param{name: "bind", mutable: true, rebind: true, get: func(c *Config) string { return strings.Join(c.Bind, " ") },
		set: func(c *Config, v string) error {
			addrs := strings.Fields(v)
			if len(addrs) > maxBindAddrs {
				return errors.New("Too many bind addresses specified.")
			}
			c.Bind = addrs
			return nil
		}})
	// dir is protected and mutable, as in Redis: with persistence off it
	// is where SAVE writes; with a store it cannot move.
	add(&param{name: "dir", mutable: true, protected: true, get: func(c *Config) string { return c.Dir },
		set: func(c *Config, v string) error { c.Dir = v; return nil }, check: checkDir})
	add(&param{name: "persistence", get: func(c *Config) string { return yesNo(c.Persistence) },
		set: func(c *Config, v string) error {
			switch strings.ToLower(v) {
			case "on", "yes":
				c.Persistence = true
			case "off", "no":
				c.Persistence = false
			default:
				return errors.New("argument must be 'on' or 'off'")
			}
			return nil
		}})
	// import-rdb: a Redis dump found in dir is loaded on the first start of
	// an empty data directory. "--import-rdb" alone says yes.
	add(&param{name: "import-rdb", get: func(c *Config) string { return yesNo(c.ImportRDB) },
		set: func(c *Config, v string) error {
			switch strings.ToLower(v) {
			case "", "yes":
				c.ImportRDB = true
			case "no":
				c.ImportRDB = false
			default:
				return errBoolArg
			}
			return nil
		}})
	add(&param{name: "databases", get: func(c *Config) string { return strconv.Itoa(c.Databases) },
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 256 {
				return errors.New("argument must be between 1 and 256 inclusive")
			}
			c.Databases = n
			return nil
		}})
	// io-threads is Redis's name and range; here each is an event loop that
	// reads, runs (under the one engine lock) and writes for its share of
	// the connections.
	g, s := intParam(func(c *Config) *int64 { return &c.IOThreads }, 1, 128)
	add(&param{name: "io-threads", get: g, set: s})
	g, s = enumParam(func(c *Config) *string { return &c.AppendFsync }, "everysec", "always", "no")
	add(&param{name: "appendfsync", mutable: true, get: g, set: s, apply: (*Server).applyFsync})
	add(&param{name: "requirepass", mutable: true, get: func(c *Config) string { return c.RequirePass },
		set:   func(c *Config, v string) error { c.RequirePass = commands.RequirePassHash(v); return nil },
		apply: (*Server).applyRequirePass})
	g, s = intParam(func(c *Config) *int64 { return &c.MaxClients }, 1, 1<<32-1)
	add(&param{name: "maxclients", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	// Unsigned up to 2^64-1 as in Redis; past 2^63-1 it is no limit.
	add(&param{name: "maxmemory", mutable: true, apply: (*Server).applyMaxMemory,
		get: func(c *Config) string { return strconv.FormatUint(c.MaxMemory, 10) },
		set: func(c *Config, v string) error {
			n, ok := parseMemoryU(v)
			if !ok {
				return errors.New("argument must be a memory value")
			}
			c.MaxMemory = n
			return nil
		}})
	g, s = intParam(func(c *Config) *int64 { return &c.Timeout }, 0, 1<<31-1)
	add(&param{name: "timeout", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	g, s = intParam(func(c *Config) *int64 { return &c.TCPKeepalive }, 0, 1<<31-1)
	add(&param{name: "tcp-keepalive", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	add(&param{name: "notify-keyspace-events", mutable: true,
		get: func(c *Config) string {
			f, _ := engine.ParseNotifyClasses(c.NotifyKeyspaceEvents)
			return f.String()
		},
		set: func(c *Config, v string) error {
			if _, ok := engine.ParseNotifyClasses(v); !ok {
				return errors.New("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
			}
			c.NotifyKeyspaceEvents = v
			return nil
		}, apply: (*Server).applyNotify})
	g, s = enumParam(func(c *Config) *string { return &c.LogLevel }, "debug", "verbose", "notice", "warning")
	add(&param{name: "loglevel", mutable: true, get: g, set: s, apply: (*Server).applyLogLevel})
	add(&param{name: "logfile", get: func(c *Config) string { return c.LogFile },
		set: func(c *Config, v string) error { c.LogFile = v; return nil }})
	g, s = memParam(func(c *Config) *int64 { return &c.ProtoMaxBulkLen }, 1024*1024)
	add(&param{name: "proto-max-bulk-len", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	g, s = memParam(func(c *Config) *int64 { return &c.ClientQueryBufferLimit }, 1024*1024)
	add(&param{name: "client-query-buffer-limit", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	g, s = intParam(func(c *Config) *int64 { return &c.SlowlogLogSlowerThan }, -1, 1<<63-1)
	add(&param{name: "slowlog-log-slower-than", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	g, s = intParam(func(c *Config) *int64 { return &c.SlowlogMaxLen }, 0, 1<<63-1)
	add(&param{name: "slowlog-max-len", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	add(&param{name: "client-output-buffer-limit", mutable: true,
		get: func(c *Config) string { return c.ClientOutputBufferLimit },
		set: func(c *Config, v string) error {
			merged, err := mergeOutputLimits(c.ClientOutputBufferLimit, v)
			if err != nil {
				return err
			}
			c.ClientOutputBufferLimit = merged
			return nil
		}, apply: (*Server).applyLimits})
	g, s = intParam(func(c *Config) *int64 { return &c.BusyReplyThreshold }, 0, 1<<63-1)
	add(&param{name: "busy-reply-threshold", alias: "lua-time-limit", mutable: true, get: g, set: s,
		apply: (*Server).applyLimits})
	g, s = enumParam(func(c *Config) *string { return &c.EnableDebugCommand }, "no", "yes", "local")
	add(&param{name: "enable-debug-command", get: g, set: s})

	// Descriptions for clients and tools: Redis parameters that Revolver
	// answers but does not change. CONFIG SET (or a config file) may give
	// them the value they have, so a stock redis.conf or a tool that
	// re-asserts a setting keeps working; another value is refused. mutable
	// says whether Redis itself changes them at runtime, which decides
	// between "can't set immutable config" and a value error.
	// appendonly reports whether writes are logged (persistence). A config
	// file or flag may say no, Redis's default, which persistence on does
	// not follow (the change log is Revolver's only way to persist); at
	// runtime only the value it has is accepted.
	add(&param{name: "appendonly", mutable: true, derived: true, get: func(c *Config) string { return yesNo(c.Persistence) },
		set: func(c *Config, v string) error {
			switch strings.ToLower(v) {
			case "yes", "no":
				c.AppendOnly = strings.ToLower(v)
				return nil
			}
			return errBoolArg
		},
		check: func(s *Server, v string) (string, error) {
			if !strings.EqualFold(v, yesNo(s.cfg.Persistence)) {
				return "", fmt.Errorf("argument must be '%s': it follows persistence, which is chosen at start-up",
					yesNo(s.cfg.Persistence))
			}
			return v, nil
		}})
	g, s = enumParam(func(c *Config) *string { return &c.MaxMemoryPolicy }, engine.EvictionPolicyNames...)
	add(&param{name: "maxmemory-policy", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	g, s = intParam(func(c *Config) *int64 { return &c.MaxMemorySamples }, 1, 1<<31-1)
	add(&param{name: "maxmemory-samples", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	g, s = intParam(func(c *Config) *int64 { return &c.MaxMemoryEvictionTenacity }, 0, 100)
	add(&param{name: "maxmemory-eviction-tenacity", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	g, s = intParam(func(c *Config) *int64 { return &c.LFULogFactor }, 0, 1<<31-1)
	add(&param{name: "lfu-log-factor", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	g, s = intParam(func(c *Config) *int64 { return &c.LFUDecayTime }, 0, 1<<31-1)
	add(&param{name: "lfu-decay-time", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	// The thresholds OBJECT ENCODING follows (engine.Limits).
	for _, t := range []struct {
		name, alias string
		field       func(c *Config) *int64
		mem         bool
	}{
		{"hash-max-listpack-entries", "hash-max-ziplist-entries", func(c *Config) *int64 { return &c.HashMaxListpackEntries }, false},
		{"hash-max-listpack-value", "hash-max-ziplist-value", func(c *Config) *int64 { return &c.HashMaxListpackValue }, true},
		{"set-max-intset-entries", "", func(c *Config) *int64 { return &c.SetMaxIntsetEntries }, false},
		{"zset-max-listpack-entries", "zset-max-ziplist-entries", func(c *Config) *int64 { return &c.ZSetMaxListpackEntries }, false},
		{"zset-max-listpack-value", "zset-max-ziplist-value", func(c *Config) *int64 { return &c.ZSetMaxListpackValue }, true},
	} {
		g, s := intParam(t.field, 0, 1<<63-1)
		if t.mem {
			g, s = memParam(t.field, 0)
		}
		add(&param{name: t.name, alias: t.alias, mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	}
	g, s = memParam(func(c *Config) *int64 { return &c.HLLSparseMaxBytes }, 0)
	add(&param{name: "hll-sparse-max-bytes", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	g, s = intParam(func(c *Config) *int64 { return &c.UVExactMax }, 0, 1<<31-1)
	add(&param{name: "uv-exact-max", mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	g, s = intParam(func(c *Config) *int64 { return &c.TrackingTableMaxKeys }, 0, 1<<63-1)
	add(&param{name: "tracking-table-max-keys", mutable: true, get: g, set: s})
	// What the store may hold in memory for recent writes; Pebble's
	// memtables take their share at the next start.
	g, s = memParam(func(c *Config) *int64 { return &c.PersistenceMaxMemory }, persistence.MinMaxMemory)
	add(&param{name: "persistence-max-memory", mutable: true, get: g, set: s, apply: (*Server).applyPersistenceMemory})
	for _, r := range []struct {
		name  string
		field func(c *Config) *int64
		min   int64
	}{
		{"room-max-messages", func(c *Config) *int64 { return &c.RoomMaxMessages }, 1},
		{"room-important-max", func(c *Config) *int64 { return &c.RoomImportantMax }, 1},
		{"room-important-ttl", func(c *Config) *int64 { return &c.RoomImportantTTL }, 1},
		{"room-presence-ttl", func(c *Config) *int64 { return &c.RoomPresenceTTL }, 1000},
	} {
		g, s = intParam(r.field, r.min, 1<<40)
		add(&param{name: r.name, mutable: true, get: g, set: s, apply: (*Server).applyLimits})
	}
	add(&param{name: "room-tiers", mutable: true,
		get: func(c *Config) string { return engine.FormatRoomTiers(c.RoomTiers) },
		set: func(c *Config, v string) error {
			tiers, err := engine.ParseRoomTiers(strings.Fields(v))
			if err != nil {
				return errors.New(strings.TrimPrefix(err.Error(), "ERR "))
			}
			c.RoomTiers = tiers
			return nil
		}, apply: (*Server).applyLimits})
	// Redis's other parameters, from the table in config_params.go; a name
	// registered above (or by another family) keeps its own definition.
	have := map[string]bool{}
	for _, p := range ps {
		have[p.name] = true
	}
	for _, sp := range slices.Concat(redisParams, consoleParams) {
		if !have[sp.name] {
			add(sp.param())
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
	return ps
}()

// applyRequirePass follows a runtime change of requirepass. Clients that
// are connected keep their state, as in Redis, except that clearing the
// password lets waiting unauthenticated clients in: with no password the
// default user needs no authentication.
func (s *Server) applyRequirePass() {
	s.DefaultUser().SetRequirePass(s.cfg.RequirePass) // the default user's passwords (acl.go)
	if s.cfg.RequirePass != "" {
		return
	}
	for _, c := range s.clients {
		c.authed.Store(true)
	}
}

// maxMemoryLimit is maxmemory as a byte count (0: none); values past
// 2^63-1, which Redis accepts, are no limit in practice.
func (c *Config) maxMemoryLimit() int64 { return int64(min(c.MaxMemory, math.MaxInt64)) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func lookupParam(name string) *param {
	for _, p := range params {
		if strings.EqualFold(p.name, name) || p.alias != "" && strings.EqualFold(p.alias, name) {
			return p
		}
	}
	return nil
}

// parseMemory follows Redis's memtoull: digits then b, k, kb, m, mb, g, gb.
// Like strtoull, an overflow saturates rather than fails, and the product
// wraps; a signed parameter's bounds check then refuses the (usually
// negative) result with its range error, as Redis does.
func parseMemory(v string) (int64, bool) {
	n, ok := parseMemoryU(v)
	return int64(n), ok
}

func parseMemoryU(v string) (uint64, bool) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	mul := map[string]uint64{"": 1, "b": 1, "k": 1000, "kb": 1024, "m": 1000 * 1000, "mb": 1024 * 1024,
		"g": 1000 * 1000 * 1000, "gb": 1024 * 1024 * 1024}[strings.ToLower(v[i:])]
	if mul == 0 {
		return 0, false
	}
	if i == 0 { // no digits at all reads as 0, as in Redis
		return 0, true
	}
	if i >= 128 { // memtoull's digit buffer
		return 0, false
	}
	n, err := strconv.ParseUint(v[:i], 10, 64)
	if err != nil {
		n = 1<<64 - 1
	}
	return n * uint64(mul), true
}

// mergeOutputLimits applies "class hard soft seconds ..." on top of the
// current setting, as CONFIG SET client-output-buffer-limit does.
func mergeOutputLimits(cur, v string) (string, error) {
	// Split at every space, as Redis splits the value: two spaces make an
	// empty field, which throws the count off.
	var f []string
	if v != "" {
		f = strings.Split(v, " ")
	}
	if len(f)%4 != 0 {
		return "", errors.New("Wrong number of arguments in buffer limit configuration.")
	}
	classes := map[string][3]int64{}
	order := []string{"normal", "slave", "pubsub"}
	cf := strings.Fields(cur)
	for i := 0; i+3 < len(cf); i += 4 {
		h, _ := parseMemory(cf[i+1])
		s, _ := parseMemory(cf[i+2])
		secs, _ := strconv.ParseInt(cf[i+3], 10, 64)
		classes[cf[i]] = [3]int64{h, s, secs}
	}
	for i := 0; i < len(f); i += 4 {
		class := strings.ToLower(f[i])
		if class == "replica" {
			class = "slave"
		}
		if class != "normal" && class != "slave" && class != "pubsub" {
			return "", errors.New("Invalid client class specified in buffer limit configuration.")
		}
		h, ok1 := parseMemory(f[i+1])
		s, ok2 := parseMemory(f[i+2])
		secs, ok3 := parseLimitSeconds(f[i+3])
		if !ok1 || !ok2 || !ok3 || secs < 0 {
			return "", errors.New("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
		}
		classes[class] = [3]int64{h, s, secs}
	}
	var b []string
	for _, c := range order {
		l := classes[c]
		b = append(b, fmt.Sprintf("%s %d %d %d", c, l[0], l[1], l[2]))
	}
	return strings.Join(b, " "), nil
}

// parseLimitSeconds reads a buffer limit's seconds as Redis does, with
// strtoll into an int: leading white space and a sign allowed, nothing
// after the digits, an empty string reading 0, the value wrapping to 32
// bits (past int64 it saturates, then wraps to -1).
func parseLimitSeconds(v string) (int64, bool) {
	v = strings.TrimLeft(v, " \t\n\v\f\r")
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
		n = -1
	}
	return int64(int32(n)), true
}

// outputLimit returns a class's hard, soft and soft-seconds limits.
func (c *Config) outputLimit(class string) (hard, soft, secs int64) {
	f := strings.Fields(c.ClientOutputBufferLimit)
	for i := 0; i+3 < len(f); i += 4 {
		if f[i] == class {
			hard, _ = parseMemory(f[i+1])
			soft, _ = parseMemory(f[i+2])
			secs, _ = strconv.ParseInt(f[i+3], 10, 64)
		}
	}
	return hard, soft, secs
}

// Set applies one option by name (startup: flags and config files).
func (c *Config) Set(name, value string) error {
	p := lookupParam(name)
	if p == nil || p.set == nil {
		return fmt.Errorf("Bad directive or wrong number of arguments")
	}
	return p.set(c, value)
}

// ParseArgs reads redis-server style arguments: an optional config file path
// (or --config path), then "--name value..." pairs, which override the file.
func ParseArgs(args []string) (Config, error) {
	cfg := DefaultConfig()
	var file string
	if len(args) > 0 && !strings.HasPrefix(args[0], "--") {
		file, args = args[0], args[1:]
	}
	var lines []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			return cfg, fmt.Errorf("unexpected argument %q (options are --name value)", a)
		}
		name := strings.TrimPrefix(a, "--")
		var vals []string
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			vals = append(vals, args[i+1])
			i++
		}
		if name == "config" {
			if len(vals) != 1 {
				return cfg, errors.New("--config takes one file name")
			}
			file = vals[0]
			continue
		}
		lines = append(lines, name+" "+quoteArgs(vals))
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return cfg, fmt.Errorf("cannot read config file: %w", err)
		}
		if err := cfg.apply(string(data), file); err != nil {
			return cfg, err
		}
		cfg.ConfigFile = file
	}
	if err := cfg.apply(strings.Join(lines, "\n"), "command line"); err != nil {
		return cfg, err
	}
	if cfg.AppendOnly == "yes" && !cfg.Persistence {
		return cfg, errors.New("appendonly yes asks for the change log, which persistence off turns off")
	}
	return cfg, nil
}

func quoteArgs(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = configRepr(v)
	}
	return strings.Join(q, " ")
}

// ConfigGet implements commands.Server: name/value pairs matching pattern
// (case-insensitive glob).
func (s *Server) ConfigGet(pattern string) [][2]string {
	var out [][2]string
	for _, p := range params {
		if p.hidden && !strings.EqualFold(pattern, p.name) {
			continue // hidden parameters answer only to their exact name
		}
		for _, n := range []string{p.name, p.alias} {
			if n != "" && glob.MatchFold(pattern, n) {
				out = append(out, [2]string{n, p.get(&s.cfg)})
			}
		}
	}
	return out
}

// ConfigSet implements commands.Server: all pairs apply or none do. As in
// Redis, the first unknown, immutable or repeated parameter is reported
// before any value is parsed.
func (s *Server) ConfigSet(pairs [][2]string) error {
	ps := make([]*param, 0, len(pairs))
	names := make([]string, 0, len(pairs)) // the name or alias each pair used
	for _, kv := range pairs {
		p := lookupParam(kv[0])
		switch {
		case p == nil:
			return fmt.Errorf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", kv[0])
		case !p.mutable:
			return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - can't set immutable config", kv[0])
		case p.protected && s.cfg.extraString("enable-protected-configs") == "no":
			return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - can't set protected config", kv[0])
		}
		name := p.name
		if !strings.EqualFold(kv[0], p.name) {
			name = p.alias // Redis keeps an alias apart: no duplicate with its name
		}
		for j, prev := range ps {
			if prev == p && names[j] == name {
				return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - duplicate parameter", kv[0])
			}
		}
		ps, names = append(ps, p), append(names, name)
	}
	next := s.cfg
	next.Bind = append([]string(nil), s.cfg.Bind...)
	next.Extra = maps.Clone(s.cfg.Extra) // validating must not write the live values
	pairs = slices.Clone(pairs)
	for i, p := range ps {
		err := p.set(&next, pairs[i][1])
		if err == nil && p.check != nil {
			pairs[i][1], err = p.check(s, pairs[i][1])
		}
		if err != nil {
			return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %v", names[i], err)
		}
	}
	// Every value is valid: set them again on the live configuration, so
	// that only these parameters' fields are written.
	old := make([]string, len(ps))
	changedAt := make([]bool, len(ps))
	rebindAs := "" // the first of port (if it changes) and bind, as Redis orders their apply
	portChanged := false
	for i, p := range ps {
		old[i] = p.get(&s.cfg)
		p.set(&s.cfg, pairs[i][1])
		changed := p.get(&s.cfg) != old[i]
		changedAt[i] = changed
		portChanged = portChanged || p.name == "port" && changed
		if p.rebind && rebindAs == "" && (p.name == "bind" || changed) {
			rebindAs = p.name
		}
	}
	if rebindAs != "" {
		picked := s.pickedPort
		if portChanged {
			s.pickedPort = 0 // a port set at runtime replaces the one picked
		}
		if err := s.rebind(rebindAs == "bind"); err != nil {
			s.pickedPort = picked
			// As Redis: the previous settings come back, and listen again.
			s.log.Warn("failed applying new configuration, restoring previous settings", "param", rebindAs, "err", err)
			for i, p := range ps {
				p.set(&s.cfg, old[i])
			}
			if err := s.rebind(rebindAs == "bind"); err != nil {
				s.log.Error("cannot listen again with the previous settings", "err", err)
			}
			msg := "Failed to bind to specified addresses."
			if rebindAs == "port" {
				msg = "Unable to listen on this port. Check server logs."
			}
			return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", rebindAs, msg)
		}
	}
	for i, p := range ps {
		if p.tryApply == nil || !changedAt[i] && !p.volatile {
			continue
		}
		if err := p.tryApply(s); err != nil {
			s.log.Warn("Failed applying new configuration. Possibly related to new " + names[i] +
				" setting. Restoring previous settings.")
			for j, p := range ps {
				p.set(&s.cfg, old[j])
			}
			if rebindAs != "" {
				s.rebind(rebindAs == "bind")
			}
			for j, p := range ps[:i+1] {
				if p.tryApply != nil && (changedAt[j] || p.volatile) {
					p.tryApply(s) // the previous values, which applied before
				}
			}
			return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %v", names[i], err)
		}
	}
	for _, p := range ps {
		if p.apply != nil {
			p.apply(s)
		}
	}
	return nil
}
