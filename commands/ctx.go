package commands

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// Ctx is what a handler sees: the arguments, the engine (locked by the
// caller), the connection's database and reply writer, and the connection
// and server services the connection/server families need.
type Ctx struct {
	Args [][]byte
	Cmd  *Command
	Eng  *engine.Engine
	DB   *engine.DB
	W    *resp.Writer
	Conn Conn
	Srv  Server
}

// Conn is the calling connection's state, implemented by the server.
type Conn interface {
	ID() int64
	SelectDB(i int)
	Proto() int
	SetProto(p int)
	Name() string
	SetName(name string)
	SetLibInfo(name, version string)
	Authenticated() bool
	SetAuthenticated(ok bool)
	// UserName is the connection's ACL user; AuthenticateAs makes it the
	// user name after AUTH or HELLO AUTH accepted its password.
	UserName() string
	AuthenticateAs(name string)
	// ACLCheck checks a command against the connection's user (a
	// script's redis.call); ACLDeniedInScript logs a denial in a script.
	ACLCheck(cmd *Command, args [][]byte) (result, idx int)
	ACLDeniedInScript(result, idx int, cmd *Command, args [][]byte)
	// Describe is this connection's CLIENT INFO line.
	Describe() string
	// CloseAfterReply closes the connection once pending replies are sent.
	CloseAfterReply()
	// Reset restores the connection defaults (RESET).
	Reset()
	// Subscribe and Unsubscribe manage channel (or pattern) subscriptions
	// and write Redis's confirmation replies themselves; no names in
	// Unsubscribe means all.
	Subscribe(names [][]byte, pattern bool)
	Unsubscribe(names [][]byte, pattern bool)
	// Monitor turns the connection into a MONITOR feed.
	Monitor()
	SetNoEvict(bool)

	// Block parks the client on keys after the current command: serve is
	// retried under the engine lock whenever one of the keys is signaled
	// ready, with that key, and returns true once it has written the reply;
	// timeoutReply writes the reply for a timeout (0 waits forever). Inside
	// EXEC (or anywhere blocking is not allowed) timeoutReply runs at once,
	// as Redis does.
	Block(keys [][]byte, timeout time.Duration, serve func(key []byte) bool, timeoutReply func())

	// Transactions (MULTI/EXEC/DISCARD/WATCH/UNWATCH); each writes its own
	// reply, with Redis's texts.
	Multi()
	Exec()
	Discard()
	Watch(keys [][]byte)
	Unwatch()

	// Client-side caching and CLIENT REPLY (client_tracking.go).
	TrackingConn
}

// Server is the process-wide services the connection, server and pub/sub
// families use, implemented by the server.
type Server interface {
	Table() *Table
	// CheckPassword validates AUTH/HELLO credentials; the error is the reply.
	CheckPassword(user, pass string) error
	AuthRequired() bool

	Publish(channel, message []byte) int
	PubSubChannels(pattern []byte) [][]byte
	PubSubNumSub(channel []byte) int
	PubSubNumPat() int

	ConfigGet(pattern string) [][2]string
	ConfigSet(pairs [][2]string) error
	ConfigResetStat()
	ConfigRewrite() error

	Info(sections []string) string
	ClientList(ids []int64, typ string) (string, error)
	ClientKill(filter ClientFilter) (int, error)
	ClientPause(d int64, writesOnly bool)
	ClientUnblock(id int64, withError bool) bool
	ClientUnpause()

	Save() error
	// BGSave starts (or schedules) a background save and returns the
	// status reply; inExec: called inside EXEC.
	BGSave(schedule, inExec bool) (string, error)
	LastSave() int64
	// Shutdown stops the server, or, with replicas behind (and not NOW),
	// starts waiting for them until they catch up or shutdown-timeout
	// passes: the caller then blocks conn and calls WaitForShutdown.
	// Abort cancels such a wait.
	Shutdown(o ShutdownOptions) (wait bool, err error)
	WaitForShutdown(conn Conn)

	SlowlogGet(n int) []SlowlogEntry
	SlowlogLen() int
	SlowlogReset()

	MemoryStats() [][2]any
	RunID() string
	// OverMaxMemory reports whether used memory is above maxmemory.
	OverMaxMemory() bool
	// Lua is the server's script runtime (EVAL, SCRIPT).
	Lua() *LuaVM
	// FeedMonitors shows a command to MONITOR clients now, from conn on
	// database db: EVAL and FCALL show themselves before their script
	// runs. FeedMonitorsFromScript shows a command a script ran (unless
	// MONITOR hides cmd), on the database the script is in after it.
	FeedMonitors(conn Conn, db int, args [][]byte)
	FeedMonitorsFromScript(cmd *Command, db int, args [][]byte)
	// ScriptYieldBegin and ScriptYieldEnd bracket the time a slow script
	// lets other clients in (lua_busy.go).
	ScriptYieldBegin(c *Ctx)
	ScriptYieldEnd(c *Ctx)
}

// ClientFilter selects clients for CLIENT KILL.
type ClientFilter struct {
	Addr, LAddr, User string
	ID                int64
	Type              string
	SkipMe            bool
	MaxAge            int64
	Legacy            bool // CLIENT KILL addr:port (old form)
	Self              int64
}

// SlowlogEntry is one SLOWLOG GET record.
type SlowlogEntry struct {
	ID       int64
	Time     int64 // unix seconds
	Duration int64 // microseconds
	Args     [][]byte
	Addr     string
	Name     string
}

// Error writes err as an error reply.
func (c *Ctx) Error(err error) { c.W.Error(err.Error()) }

// SyntaxError writes Redis's syntax error.
func (c *Ctx) SyntaxError() { c.W.Error("ERR syntax error") }

// Int64 parses argument i as an integer, writing Redis's error when it is
// not one.
func (c *Ctx) Int64(i int) (int64, bool) {
	n, ok := engine.ParseInt(c.Args[i])
	if !ok {
		c.W.Error("ERR value is not an integer or out of range")
	}
	return n, ok
}

// Float64 parses argument i as a double (Redis's string2d rules), writing
// Redis's error when it is not one.
func (c *Ctx) Float64(i int) (float64, bool) {
	f, ok := parseFloat(c.Args[i])
	if !ok {
		c.W.Error("ERR value is not a valid float")
	}
	return f, ok
}

// parseFloat follows Redis's string2d: strtod syntax, no leading space,
// nothing trailing, not NaN.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r' || b[0] == '\v' || b[0] == '\f' {
		return 0, false
	}
	s := string(b)
	if strings.ContainsAny(s, "_") || strings.HasPrefix(strings.TrimLeft(s, "+-"), "0b") ||
		strings.HasPrefix(strings.TrimLeft(s, "+-"), "0o") || strings.HasPrefix(strings.TrimLeft(s, "+-"), "0B") ||
		strings.HasPrefix(strings.TrimLeft(s, "+-"), "0O") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && !math.IsInf(f, 0) && f != 0 {
			return f, true
		}
		return 0, false
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// is reports whether argument a equals the option name opt, ignoring case.
func is(a []byte, opt string) bool {
	if len(a) != len(opt) {
		return false
	}
	for i := 0; i < len(a); i++ {
		ch := a[i]
		if ch >= 'a' && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		if ch != opt[i] {
			return false
		}
	}
	return true
}

// LatencyEvent is one LATENCY LATEST entry.
type LatencyEvent struct {
	Name               string
	Time, Latency, Max int64 // unix seconds, ms, ms
}

// propagator is the server's side of what a master sends its replicas
// (server/propagate.go).
type propagator interface {
	PropagateAs(db int, args [][]byte)
	ForcePropagation()
	Replicating() bool
}

// replicating reports whether replicas (or a backlog) take what commands
// propagate: when not, the rewrites are not even built.
func (c *Ctx) replicating() bool {
	p, ok := c.Srv.(propagator)
	return ok && p.Replicating()
}

// PropagateAs makes replicas receive args, in this command's database,
// instead of the command's own arguments; each call adds one command
// (SPOP's SREMs), so that what replicas run does not depend on time or
// chance.
func (c *Ctx) PropagateAs(args ...[]byte) {
	if p, ok := c.Srv.(propagator); ok {
		p.PropagateAs(c.DB.ID(), args)
	}
}

// PreventPropagation sends replicas nothing for this command.
func (c *Ctx) PreventPropagation() {
	if p, ok := c.Srv.(propagator); ok {
		p.PropagateAs(c.DB.ID(), nil)
	}
}

// ForcePropagation sends replicas this command though it changed no data
// (PUBLISH).
func (c *Ctx) ForcePropagation() {
	if p, ok := c.Srv.(propagator); ok {
		p.ForcePropagation()
	}
}
