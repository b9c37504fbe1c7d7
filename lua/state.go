package lua

import (
	"sync/atomic"
)

// Lua 5.1's limits on nesting.
const (
	maxCalls  = 20000 // LUAI_MAXCALLS: active calls, else "stack overflow"
	maxCCalls = 200   // LUAI_MAXCCALLS: calls made from Go, else "C stack overflow"
)

// global is what every thread of one interpreter shares.
type global struct {
	stringMeta *Table
	// interrupt, when set, is raised as an error by the running code at
	// its next call or loop iteration (SCRIPT KILL, a load timeout).
	interrupt atomic.Pointer[Value]
	main      *State
	// coroutines are the threads that have not finished, so a run's
	// leftovers can be ended (each runs on a goroutine of its own).
	coroutines map[*State]struct{}
	// lib is the libraries' shared state (lib_base.go).
	lib libGlobals
}

// State is one thread of a Lua interpreter (the main one, or a
// coroutine's): its stacks and the call in progress. A State is used by
// one goroutine at a time.
type State struct {
	g       *global
	globals *Table // the thread's globals (LUA_GLOBALSINDEX)

	// stack holds the values of Go functions' frames; base is where the
	// running Go function's arguments start.
	stack []Value
	base  int

	// ci is the stack of activations, the running one last.
	ci []callInfo

	// ret holds the results of the call that returned last.
	ret []Value
	// tail is a tail call on its way from a return to callLua's loop.
	tail tailCall

	regs    regStack // Lua frames' register windows
	frames  []*frame // free frames, for reuse
	nCcalls int      // nesting of calls made from Go
	// errfunc is the handler the innermost protected call runs on an
	// error, before the stack unwinds (xpcall's, a script's).
	errfunc Value
	// handling: an error handler runs (it may go past maxCalls).
	handling bool

	co *coroutine // nil for the main thread
}

// callInfo is one activation: a Lua function with its frame, or a Go
// function with the base of its values on the stack.
type callInfo struct {
	fn   *Function
	fr   *frame // Lua functions only
	base int    // Go functions only
	// site names what the caller called (for messages), nil when the
	// caller was Go code or the call a tail call.
	site     *callSite
	tailCall bool
}

// NewState makes an interpreter with empty globals and no libraries
// (OpenLibs loads Lua's).
func NewState() *State {
	g := &global{coroutines: map[*State]struct{}{}}
	L := &State{g: g, globals: NewTable(0, 2)} // lua_newstate's size
	g.main = L
	return L
}

// Globals is the table of the thread's globals.
func (L *State) Globals() *Table { return L.globals }

// SetGlobals replaces the table of the thread's globals (functions loaded
// afterwards use it).
func (L *State) SetGlobals(t *Table) { L.globals = t }

// StringMetatable is the metatable every string shares.
func (L *State) StringMetatable() *Table { return L.g.stringMeta }

// SetStringMetatable sets the metatable every string shares.
func (L *State) SetStringMetatable(t *Table) { L.g.stringMeta = t }

// Interrupt makes the running code raise v at its next call or loop
// iteration. Any goroutine may call it.
func (L *State) Interrupt(v Value) { L.g.interrupt.Store(&v) }

// ClearInterrupt withdraws an interrupt not yet raised.
func (L *State) ClearInterrupt() { L.g.interrupt.Store(nil) }

// checkInterrupt raises a pending interrupt.
func (L *State) checkInterrupt() {
	if v := L.g.interrupt.Swap(nil); v != nil {
		L.raise(*v)
	}
}

// metatable is v's metatable, or nil.
func (L *State) metatable(v Value) *Table {
	switch v.Type() {
	case TypeTable:
		return v.AsTable().meta
	case TypeUserdata:
		return v.AsUserdata().meta
	case TypeString:
		return L.g.stringMeta
	}
	return nil
}

// Metatable is v's metatable (raw: __metatable is not consulted), or nil.
func (L *State) Metatable(v Value) *Table { return L.metatable(v) }

// regStack hands out register windows in stack order from slabs that
// never move, so a frame's registers stay where they are while deeper
// calls come and go.
type regStack struct {
	slab []Value
	top  int
	old  []savedSlab
}

type savedSlab struct {
	slab []Value
	top  int
}

const regSlab = 4096

// alloc returns a window of n nil registers.
func (r *regStack) alloc(n int) []Value {
	if r.top+n > len(r.slab) {
		if r.slab != nil {
			r.old = append(r.old, savedSlab{r.slab, r.top})
		}
		r.slab, r.top = make([]Value, max(regSlab, n)), 0
	}
	w := r.slab[r.top : r.top+n : r.top+n]
	r.top += n
	return w
}

// free returns the last window allocated (of n registers), cleared.
func (r *regStack) free(w []Value) {
	if len(w) == 0 {
		return
	}
	clear(w)
	r.top -= len(w)
	if r.top == 0 && len(r.old) > 0 {
		last := r.old[len(r.old)-1]
		r.old = r.old[:len(r.old)-1]
		r.slab, r.top = last.slab, last.top
	}
}
