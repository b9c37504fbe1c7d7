package commands

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"time"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/lua"
	"github.com/revolver-db/revolver/resp"
	"github.com/revolver-db/revolver/scripting"
)

// LuaVM runs one server's scripts (Redis's eval.c and functions.c): the
// interpreter EVAL scripts run in with its cache of compiled scripts, the
// one FUNCTION libraries run in with the libraries loaded, the run in
// progress and the watch over slow scripts. The interpreters themselves
// are package scripting's.
type LuaVM struct {
	eval    *scripting.Runtime
	fns     *scripting.Runtime
	rand    scripting.Rand // Redis's math.random, shared by both
	scripts map[string]*luaScript
	libs    map[string]*scripting.Library
	funcs   map[string]*scripting.Function // by lower-cased name: FCALL ignores case
	watch   scriptWatch
	run     *scriptRun // the script running now; nil between scripts
	log     func(level int, msg string)
	// callW takes the reply of each command a script calls: one script
	// runs at a time, so one writer serves every call.
	callW    resp.Writer
	runState scriptRun
}

// luaScript is a compiled EVAL script.
type luaScript struct {
	fn    *lua.Function
	sha   string
	body  string
	flags scripting.Flags
}

// NewLuaVM makes the interpreters.
func NewLuaVM() *LuaVM {
	vm := &LuaVM{libs: map[string]*scripting.Library{}, funcs: map[string]*scripting.Function{}}
	vm.watch.timer = time.AfterFunc(time.Hour, vm.onThreshold)
	vm.watch.timer.Stop()
	vm.SetBusyThreshold(5000)
	vm.resetEval()
	vm.fns = scripting.NewFunctions(&vm.rand)
	return vm
}

// SetLog directs redis.log's lines.
func (vm *LuaVM) SetLog(f func(level int, msg string)) {
	vm.log = f
	vm.eval.Log, vm.fns.Log = f, f
}

// resetEval makes a fresh interpreter for EVAL (SCRIPT FLUSH).
func (vm *LuaVM) resetEval() {
	vm.eval = scripting.NewEval(&vm.rand)
	vm.eval.Log = vm.log
	vm.scripts = map[string]*luaScript{}
}

// sha1hex is Redis's SHA1 of a script body, in lower-case hex.
func sha1hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// compile returns the script of body, compiling and caching it the first
// time: its SHA1, or an error reply.
func (vm *LuaVM) compile(body []byte) (string, *luaScript, error) {
	sha := sha1hex(body)
	if s := vm.scripts[sha]; s != nil {
		return sha, s, nil
	}
	flags, skip, err := scripting.ParseScriptShebang(string(body))
	if err != nil {
		return "", nil, err
	}
	fn, err := vm.eval.Compile(string(body[skip:]))
	if err != nil {
		return "", nil, err
	}
	s := &luaScript{fn: fn, sha: sha, body: string(body), flags: flags}
	vm.scripts[sha] = s
	return sha, s, nil
}

// Exists reports whether a script of that SHA1 is cached.
func (vm *LuaVM) Exists(sha string) bool { return vm.scripts[strings.ToLower(sha)] != nil }

// Flush drops every cached script and starts a fresh interpreter.
func (vm *LuaVM) Flush() { vm.resetEval() }

// Running reports whether a script runs now.
func (vm *LuaVM) Running() bool { return vm.run != nil }

// runScript calls script s (EVAL and EVALSHA) with KEYS and ARGV under c
// and writes its reply (or its error) to c.W.
func (vm *LuaVM) runScript(c *Ctx, sha string, s *luaScript, keys, args [][]byte, ro bool) {
	run := vm.prepareRun(c, sha, s.flags, ro)
	if run == nil {
		return
	}
	run.eval = true
	vm.guard(run, vm.eval, func() { vm.eval.RunEval(s.fn, sha, keys, args, run, c.W) })
}

// callFunction runs f (FCALL and FCALL_RO).
func (vm *LuaVM) callFunction(c *Ctx, f *scripting.Function, keys, args [][]byte, ro bool) {
	run := vm.prepareRun(c, f.Name, f.Flags, ro)
	if run == nil {
		return
	}
	vm.guard(run, vm.fns, func() { vm.fns.Call(f, keys, args, run, c.W) })
}

// guard runs a script under the slow-script watch. An interpreter that
// panics (a bug, here or in it) cannot be trusted: the next script gets a
// new one, and the server's handler reports the panic.
func (vm *LuaVM) guard(run *scriptRun, rt *scripting.Runtime, do func()) {
	vm.run = run
	vm.beginWatch(run)
	defer func() {
		vm.endWatch(run)
		vm.run = nil
		if r := recover(); r != nil {
			vm.rebuild(rt)
			panic(r)
		}
	}()
	do()
}

// rebuild replaces an interpreter that can no longer be trusted: EVAL's
// (its script cache starts empty) or the functions' (every library is
// loaded again into the new one).
func (vm *LuaVM) rebuild(rt *scripting.Runtime) {
	if rt == vm.eval {
		vm.resetEval()
		return
	}
	libs := vm.sortedLibraries()
	vm.fns = scripting.NewFunctions(&vm.rand)
	vm.fns.Log = vm.log
	vm.libs, vm.funcs = map[string]*scripting.Library{}, map[string]*scripting.Function{}
	for _, lib := range libs {
		vm.loadLibrary(lib.Code, false, 0) // loaded before, so it loads again
	}
}

// prepareRun checks a script's flags against the call as Redis's
// scriptPrepareForRun does and returns the run, or nil after replying
// with the refusal.
func (vm *LuaVM) prepareRun(c *Ctx, name string, flags scripting.Flags, ro bool) *scriptRun {
	declared := flags&scripting.FlagEvalCompat == 0
	if declared && flags&scripting.FlagNoWrites == 0 && ro {
		c.W.Error("ERR Can not execute a script with write flag using *_ro command.")
		return nil
	}
	rs, _ := c.Srv.(replicationServer)
	noReplicas := rs != nil && rs.NoGoodReplicas()
	if declared && flags&scripting.FlagNoWrites == 0 && noReplicas {
		c.W.Error("NOREPLICAS Not enough good replicas to write.")
		return nil
	}
	// Scripts that declare flags and may write are deny-oom commands.
	if declared && flags&(scripting.FlagNoWrites|scripting.FlagAllowOOM) == 0 && c.Srv.OverMaxMemory() {
		c.W.Error("OOM command not allowed when used memory > 'maxmemory'.")
		return nil
	}
	// One run at a time: the VM's one scriptRun serves them all.
	run := &vm.runState
	run.reset()
	run.vm, run.ctx, run.db, run.funcname = vm, c, c.DB, name
	run.readOnly = ro || declared && flags&scripting.FlagNoWrites != 0
	run.allowOOM = declared && flags&scripting.FlagAllowOOM != 0
	if !run.allowOOM {
		run.oomAtStart = c.Srv.OverMaxMemory()
	}
	if rs != nil {
		run.replicaRO = rs.RefusesWrites(c.Conn)
	}
	run.noReplicas = noReplicas
	run.conn = scriptConn{Conn: c.Conn, run: run}
	return run
}

// LoadLibraries makes the libraries persisted as server records, at
// start-up: a library that no longer loads is reported and left out.
func (vm *LuaVM) LoadLibraries(e *engine.Engine) []error {
	var errs []error
	for _, name := range e.ServerRecordNames(libraryRecordPrefix) {
		code, _ := e.ServerRecord(name)
		if _, err := vm.loadLibrary(string(code), false, 0); err != nil {
			errs = append(errs, libraryLoadError(strings.TrimPrefix(name, libraryRecordPrefix), err))
		}
	}
	return errs
}
