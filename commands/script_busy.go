package commands

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Slow scripts, as Redis 7.0 handles them. A script holds the engine lock
// while it runs. Once it has run for busy-reply-threshold, a timer starts
// its yielding: the engine is frozen (only the script may change data),
// the lock is released on the script's behalf, and from then on the script
// takes the lock around each command it calls. The server answers other
// clients meanwhile (ScriptYieldBegin): BUSY for all but a few commands,
// among them SCRIPT KILL and FUNCTION KILL, which stop a script that has
// not written, and SHUTDOWN NOSAVE. When the script ends it takes the lock
// back for good and the engine thaws.

// errScriptKilled is what a killed script raises, as Redis words it.
var errScriptKilled = errors.New("Script killed by user with SCRIPT KILL...")

// Redis's BUSY replies, by what runs.
const (
	busyEvalError     = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	busyFunctionError = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	notBusyError      = "NOTBUSY No scripts in execution right now."
	unkillableError   = "UNKILLABLE Sorry the script already executed write commands against the dataset. " +
		"You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
)

// scriptWatch follows the script that runs, for the threshold and for
// the commands other clients send meanwhile.
type scriptWatch struct {
	// mu is held by the script's goroutine around each command it calls
	// and at its start and end, and by the timer when yielding starts: so
	// the lock is never let go in the middle of a command.
	mu        sync.Mutex
	timer     *time.Timer
	threshold atomic.Int64 // nanoseconds
	run       atomic.Pointer[scriptRun]
	yielding  atomic.Bool
}

// SetBusyThreshold follows busy-reply-threshold (lua-time-limit), in ms.
func (vm *LuaVM) SetBusyThreshold(ms int64) {
	vm.watch.threshold.Store(max(ms, 1) * int64(time.Millisecond))
}

// Yielding reports whether a slow script has let go of the engine lock,
// and whether it is an EVAL (rather than a function). Any goroutine may
// ask.
func (vm *LuaVM) Yielding() (yielding, eval bool) {
	if !vm.watch.yielding.Load() {
		return false, false
	}
	run := vm.watch.run.Load()
	return run != nil, run != nil && run.eval
}

// BusyError is the BUSY reply for commands refused while a script yields.
func (vm *LuaVM) BusyError() string {
	if _, eval := vm.Yielding(); eval {
		return busyEvalError
	}
	return busyFunctionError
}

// beginWatch starts following run, under the engine lock.
func (vm *LuaVM) beginWatch(run *scriptRun) {
	w := &vm.watch
	w.mu.Lock()
	run.start = time.Now()
	w.run.Store(run)
	w.mu.Unlock()
	w.timer.Reset(time.Duration(w.threshold.Load()))
}

// endWatch stops following run; if it yielded, the engine lock is taken
// back and the engine thaws.
func (vm *LuaVM) endWatch(run *scriptRun) {
	w := &vm.watch
	w.timer.Stop()
	w.mu.Lock()
	if w.yielding.Load() {
		c := run.ctx
		c.Srv.ScriptYieldEnd(c)
		c.Eng.Lock()
		c.Eng.Thaw()
		w.yielding.Store(false)
	}
	w.run.Store(nil)
	w.mu.Unlock()
}

// onThreshold runs on the timer's goroutine when a script has run for
// busy-reply-threshold: it starts the yielding.
func (vm *LuaVM) onThreshold() {
	w := &vm.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	run := w.run.Load()
	if run == nil || w.yielding.Load() || time.Since(run.start) < time.Duration(w.threshold.Load()) {
		return // it ended, or this is a late firing meant for an earlier script
	}
	c := run.ctx
	c.Eng.Freeze()
	w.yielding.Store(true)
	c.Srv.ScriptYieldBegin(c)
	c.Eng.Unlock() // on the script's behalf: it is in Lua code, not in a command
}

// lockForCall is taken around each command a script calls; unlockAfterCall
// undoes it.
func (vm *LuaVM) lockForCall(run *scriptRun) (engineLocked bool) {
	w := &vm.watch
	w.mu.Lock()
	if !w.yielding.Load() {
		return false
	}
	run.ctx.Eng.Lock()
	return true
}

// unlockAfterCall undoes lockForCall.
func (vm *LuaVM) unlockAfterCall(run *scriptRun, engineLocked bool) {
	if engineLocked {
		run.ctx.Eng.Unlock()
	}
	vm.watch.mu.Unlock()
}

// Kill is SCRIPT KILL (eval) and FUNCTION KILL: it runs while a script
// yields, under the engine lock, and returns the reply's error or "".
func (vm *LuaVM) Kill(eval bool) string {
	run := vm.watch.run.Load()
	switch {
	case run == nil || !vm.watch.yielding.Load():
		return notBusyError
	case run.dirty:
		return unkillableError
	case eval && !run.eval:
		return busyFunctionError
	case !eval && run.eval:
		return busyEvalError
	}
	vm.stop(run)
	return ""
}

// ForceKill stops a yielding script whatever it did (SHUTDOWN NOSAVE).
func (vm *LuaVM) ForceKill() {
	if run := vm.watch.run.Load(); run != nil && vm.watch.yielding.Load() {
		vm.stop(run)
	}
}

// stop makes the script raise Redis's error at its next call or loop
// iteration.
func (vm *LuaVM) stop(run *scriptRun) {
	if run.killed.CompareAndSwap(false, true) {
		rt := vm.fns
		if run.eval {
			rt = vm.eval
		}
		rt.Interrupt(errScriptKilled.Error())
	}
}
