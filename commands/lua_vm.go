package commands

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// LuaVM runs one server's scripts (EVAL and its family): one Lua state,
// since scripts run under the engine lock one at a time, the scripts it
// has compiled by SHA1, and the run in progress. Redis 7.0's eval.c and
// script_lua.c are the reference for what a script sees and what its
// errors look like.
type LuaVM struct {
	L          *lua.LState
	sandbox    *sandbox
	scripts    map[string]*luaScript // by SHA1 (hex)
	errHandler *lua.LFunction
	fn         functionEngine // FUNCTION's own state and libraries
	watch      scriptWatch    // the running script, for BUSY and KILL (lua_busy.go)
	// Each command a script calls writes its reply into callW, and
	// replyRd parses it back from replySrc: one buffer and one reader
	// serve every call.
	callW    resp.Writer
	replySrc bytes.Reader
	replyRd  *resp.Reader
	run      *scriptRun // the script running now; nil between scripts
	rand     rand48
	// Log writes redis.log's lines to the server log; nil drops them.
	Log func(level int, msg string)
	// Verbosity is the least redis.log level written (LL_* numbers).
	Verbosity int
}

// luaScript is a compiled script.
type luaScript struct {
	fn    *lua.LFunction
	sha   string
	body  string
	flags scriptFlags
}

// scriptFlags are a script's shebang flags (#!lua flags=...).
type scriptFlags uint8

const (
	flagEvalCompat scriptFlags = 1 << iota // no shebang: Redis's backwards-compatible mode
	flagNoWrites
	flagAllowOOM
	flagAllowStale
	flagNoCluster
	flagAllowCrossSlot
)

var scriptFlagNames = []struct {
	name string
	flag scriptFlags
}{
	{"no-writes", flagNoWrites}, {"allow-oom", flagAllowOOM}, {"allow-stale", flagAllowStale},
	{"no-cluster", flagNoCluster}, {"allow-cross-slot-keys", flagAllowCrossSlot},
}

// scriptRun is one script's execution: the caller's context, the database
// the script's commands use (SELECT in a script changes only this), the
// protocol redis.setresp chose, and the rules the run obeys.
type scriptRun struct {
	ctx      *Ctx
	db       *engine.DB
	resp     int
	readOnly bool
	allowOOM bool
	// oomAtStart: the server was over maxmemory when the script started,
	// so its first write that may grow memory is refused (a later one
	// cannot be: the script already changed data).
	oomAtStart bool
	dirty      bool // a write command ran
	eval       bool // EVAL and its family, not a function
	start      time.Time
	killed     atomic.Bool
	funcname   string // the script's SHA1 or the function's name, as errors name it
	// call and conn are the context of the command the script calls now,
	// reused from one call to the next.
	call Ctx
	conn scriptConn
}

// Redis's log levels (redis.LOG_*).
const (
	LogDebug = iota
	LogVerbose
	LogNotice
	LogWarning
)

// NewLuaVM makes the Lua state scripts run in: the libraries Redis loads,
// the redis table, Redis's math.random, and globals protection.
func NewLuaVM() *LuaVM {
	vm := &LuaVM{scripts: map[string]*luaScript{}, Verbosity: LogNotice}
	vm.replyRd = resp.NewReader(&vm.replySrc)
	vm.watch.kill = newKillSwitch()
	vm.watch.timer = time.AfterFunc(time.Hour, vm.onThreshold)
	vm.watch.timer.Stop()
	vm.SetBusyThreshold(5000)
	vm.reset()
	vm.fn.init(vm)
	return vm
}

// reset makes a fresh state for EVAL (SCRIPT FLUSH).
func (vm *LuaVM) reset() {
	if vm.L != nil {
		vm.L.Close()
	}
	vm.L, vm.errHandler, vm.sandbox = vm.newState()
	// Redis's handler is a global of the EVAL state, as scripts can see.
	setProtectedGlobal(vm.L, "__redis__err__handler", vm.errHandler)
	vm.scripts = map[string]*luaScript{}
}

// newState makes a Lua state as Redis sets one up for scripts: the
// libraries it loads, the redis table, its math.random, the sandbox, and
// the error handler its calls run under.
func (vm *LuaVM) newState() (*lua.LState, *lua.LFunction, *sandbox) {
	// The value stack may grow to what Redis's Lua allows a C function to
	// push (LUAI_MAXCSTACK, 8000 slots) and more: a fixed stack would
	// fail a script returning a few thousand values.
	L := lua.NewState(lua.Options{SkipOpenLibs: true, RegistrySize: 1 << 13, RegistryMaxSize: 1 << 20})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.CoroutineLibName, lua.OpenCoroutine}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	L.SetGlobal("tostring", L.NewFunction(luaToStringFn))
	vm.registerRedisAPI(L)
	openLuaLibraries(L)
	sb, _ := protectState(L)
	errHandler := L.NewFunction(sb.errorHandler)
	L.SetContext(vm.watch.kill)
	return L, errHandler, sb
}

// sha1hex is Redis's SHA1 of a script body, in lower-case hex.
func sha1hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// parseShebang reads a "#!lua flags=..." first line; it returns the flags
// and how many bytes the line takes (kept out of the code compiled, but
// not its line feed, so line numbers stay the user's).
func parseShebang(body string) (scriptFlags, int, error) {
	if !strings.HasPrefix(body, "#!") {
		return flagEvalCompat, 0, nil
	}
	end := strings.IndexByte(body, '\n')
	if end < 0 {
		return 0, 0, fmt.Errorf("ERR Invalid script shebang")
	}
	parts, ok := splitShebang(body[:end])
	if !ok || len(parts) == 0 {
		return 0, 0, fmt.Errorf("ERR Invalid engine in script shebang")
	}
	if parts[0] != "#!lua" {
		return 0, 0, fmt.Errorf("ERR Unexpected engine in script shebang: %s", parts[0])
	}
	var flags scriptFlags
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, 0, fmt.Errorf("ERR Unknown lua shebang option: %s", p)
		}
		for _, f := range strings.Split(list, ",") {
			found := false
			for _, d := range scriptFlagNames {
				if d.name == f {
					flags |= d.flag
					found = true
				}
			}
			if !found {
				return 0, 0, fmt.Errorf("ERR Unexpected flag in script shebang: %s", f)
			}
		}
	}
	return flags, end, nil
}

// splitShebang splits the shebang line as Redis's sdssplitargs does for
// the simple words it holds.
func splitShebang(line string) ([]string, bool) {
	return strings.Fields(line), true
}

// prepareChunk adjusts a freshly compiled chunk. Its table constructors
// are marked for the Lua-order model (markConstructors). And its main
// function no longer builds an "arg" table on every call: the compiler
// asks for one, as Lua 5.1 does for a vararg function that does not use
// "...", but no name reaches it in a main chunk, and Lua 5.1 itself never
// builds one there. It was most of what a small script allocated.
func prepareChunk(p *lua.FunctionProto) {
	markConstructors(p)
	p.IsVarArg &^= lua.VarArgNeedsArg
}

// compile returns the script of body, compiling and caching it the first
// time: its SHA1, or an error reply.
func (vm *LuaVM) compile(body []byte) (string, *luaScript, error) {
	sha := sha1hex(body)
	if s := vm.scripts[sha]; s != nil {
		return sha, s, nil
	}
	flags, skip, err := parseShebang(string(body))
	if err != nil {
		return "", nil, err
	}
	fn, err := vm.L.Load(strings.NewReader(string(body[skip:])), "@user_script")
	if err != nil {
		return "", nil, fmt.Errorf("ERR Error compiling script (new function): %s",
			compileError(err, 1+strings.Count(string(body), "\n")))
	}
	prepareChunk(fn.Proto)
	fn.Env = vm.sandbox.env
	s := &luaScript{fn: fn, sha: sha, body: string(body), flags: flags}
	vm.scripts[sha] = s
	return sha, s, nil
}

var parseErrorRE = regexp.MustCompile(`^@(\w+) line:(\d+)\(column:\d+\) near '(.*)':\s+(.*)$`)

// compileError renders a compile error as Lua's "user_script:LINE: ...
// near 'TOKEN'"; an error at the end is on the last of lines. (The
// interpreter words the message itself its own way: "syntax error".)
func compileError(err error, lines int) string {
	msg := strings.TrimSpace(err.Error())
	if m := parseErrorRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s:%s: %s near '%s'", m[1], m[2], m[4], m[3])
	}
	if chunk, rest, ok := strings.Cut(msg, " at EOF:"); ok && strings.HasPrefix(chunk, "@") {
		return fmt.Sprintf("%s:%d: %s near '<eof>'", chunk[1:], lines, strings.TrimSpace(rest))
	}
	return strings.TrimPrefix(msg, "@")
}

// Exists reports whether a script of that SHA1 is cached.
func (vm *LuaVM) Exists(sha string) bool { return vm.scripts[strings.ToLower(sha)] != nil }

// Flush drops every cached script and starts a fresh state.
func (vm *LuaVM) Flush() { vm.reset() }

// Running reports whether a script runs now.
func (vm *LuaVM) Running() bool { return vm.run != nil }

// luaToStringFn is Lua 5.1's tostring: numbers as C's "%.14g" writes them
// (the interpreter's own formatting differs for fractions and infinities).
func luaToStringFn(L *lua.LState) int {
	v := L.CheckAny(1)
	if n, ok := v.(lua.LNumber); ok {
		L.Push(lua.LString(luaNumberString(float64(n))))
		return 1
	}
	L.Push(L.ToStringMeta(v))
	return 1
}

// luaNumberString is "%.14g" of f, with C's spellings of the specials.
func luaNumberString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return formatG(f, 14)
}
