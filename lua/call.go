package lua

import (
	"fmt"
	"strconv"
)

// frame is a running Lua function: its registers (locals and
// temporaries) and extra arguments, and the line it is at, which the
// compiled code updates before anything that may fail or call.
type frame struct {
	L       *State
	fn      *Function
	regs    []Value
	varargs []Value
	line    int32
}

// ctrl is how a statement ended.
type ctrl uint8

const (
	ctrlNext     ctrl = iota // go on with the next statement
	ctrlBreak                // leave the innermost loop
	ctrlReturn               // results are in L.ret
	ctrlTailCall             // call L.tailFn with L.tailArgs in the caller's place
)

// blockFunc runs compiled statements.
type blockFunc func(f *frame) ctrl

// nameKind is how a call site or an operand names its value in messages
// (what Lua's getobjname finds).
type nameKind uint8

const (
	nameNone nameKind = iota
	nameGlobal
	nameLocal
	nameField
	nameMethod
	nameUpvalue
)

var nameKinds = [...]string{"", "global", "local", "field", "method", "upvalue"}

// callSite is a call in compiled code: its line and how it names the
// function it calls. A generic for calls a copy of its iterator, which
// Lua's "attempt to call" message cannot name (anonymous) while the
// iterator's own argument errors name it.
type callSite struct {
	line      int32
	kind      nameKind
	name      string
	anonymous bool
}

// Error is a Lua error: the value raised (a message, or any value).
type Error struct {
	Value Value
}

func (e *Error) Error() string {
	if s, ok := e.Value.ToString(); ok {
		return s
	}
	if e.Value.IsNil() {
		return "nil"
	}
	return fmt.Sprintf("(error object is a %s value)", e.Value.TypeName())
}

// tailCall holds a tail call's function and arguments between the frame
// that made it and the loop that runs it.
type tailCall struct {
	fn   Value
	args []Value
	site *callSite
}

// call calls fn with args: the results are in L.ret, and their count is
// returned. site is the calling code's call (nil from Go).
func (L *State) call(fn Value, args []Value, site *callSite) int {
	f := fn.AsFunction()
	if f == nil {
		fn, args = L.callMeta(fn, args, site)
		f = fn.AsFunction()
	}
	if len(L.ci) >= maxCalls && (!L.handling || len(L.ci) >= maxCalls+maxCalls/8) {
		L.stackOverflow()
	}
	if f.proto == nil {
		return L.callGo(f, args, site)
	}
	return L.callLua(f, args, site)
}

// callMeta resolves a call of a value that is not a function through its
// __call metamethod, or raises Lua's error.
func (L *State) callMeta(fn Value, args []Value, site *callSite) (Value, []Value) {
	tm := L.metaField(fn, "__call")
	if tm.AsFunction() == nil {
		if site != nil && site.kind != nameNone && !site.anonymous {
			L.runtimeError("attempt to call %s '%s' (a %s value)", nameKinds[site.kind], site.name, fn.TypeName())
		}
		L.runtimeError("attempt to call a %s value", fn.TypeName())
	}
	all := make([]Value, len(args)+1)
	all[0] = fn
	copy(all[1:], args)
	return tm, all
}

// stackOverflow raises Lua's error for too many calls. An error handler
// runs with some room past the limit, as Lua's grown CallInfo array gives
// it; a handler that overflows that too is an error in error handling.
func (L *State) stackOverflow() {
	if L.handling {
		panic(&Error{Value: String("error in error handling")})
	}
	L.runtimeError("stack overflow")
}

// callGo runs a Go function on a frame of its own on L.stack.
func (L *State) callGo(f *Function, args []Value, site *callSite) int {
	base := len(L.stack)
	L.stack = append(L.stack, args...)
	oldBase := L.base
	L.base = base
	L.ci = append(L.ci, callInfo{fn: f, base: base, site: site})
	n := f.gofn(L)
	top := len(L.stack)
	if n > top-base {
		n = top - base
	}
	L.ret = append(L.ret[:0], L.stack[top-n:top]...)
	clear(L.stack[base:top])
	L.stack = L.stack[:base]
	L.ci = L.ci[:len(L.ci)-1]
	L.base = oldBase
	return n
}

// callLua runs a Lua function, and the functions it tail-calls in its
// place.
func (L *State) callLua(fn *Function, args []Value, site *callSite) int {
	tail := false
	for {
		if L.g.interrupt.Load() != nil {
			L.checkInterrupt()
		}
		p := fn.proto
		f := L.newFrame(fn, args)
		L.ci = append(L.ci, callInfo{fn: fn, fr: f, site: site, tailCall: tail})
		c := p.body(f)
		L.ci = L.ci[:len(L.ci)-1]
		L.freeFrame(f)
		switch c {
		case ctrlReturn:
			return len(L.ret)
		case ctrlTailCall:
			tc := &L.tail
			next := tc.fn
			nf := next.AsFunction()
			if nf == nil {
				next, tc.args = L.callMeta(next, tc.args, tc.site)
				nf = next.AsFunction()
			}
			if nf.proto == nil {
				// A Go function runs in the caller's place, as in Lua,
				// where a C function is never tail-called.
				return L.callGo(nf, tc.args, tc.site)
			}
			fn, args, site, tail = nf, tc.args, nil, true
		default:
			L.ret = L.ret[:0]
			return 0
		}
	}
}

// newFrame sets up fn's frame for args: parameters, extra arguments,
// captured parameters boxed, and the "arg" table of Lua 5.1's vararg
// compatibility.
func (L *State) newFrame(fn *Function, args []Value) *frame {
	p := fn.proto
	var f *frame
	if n := len(L.frames); n > 0 {
		f = L.frames[n-1]
		L.frames = L.frames[:n-1]
	} else {
		f = &frame{L: L}
	}
	f.fn, f.line = fn, int32(p.lineDefined)
	f.regs = L.regs.alloc(p.nregs)
	n := min(len(args), p.nparams)
	copy(f.regs, args[:n])
	if p.isVararg && len(args) > p.nparams {
		extra := args[p.nparams:]
		if p.needsArg {
			t := NewTable(len(extra), 1)
			copy(t.array, extra)
			t.SetStr("n", Number(float64(len(extra))))
			f.regs[p.argReg] = TableValue(t)
		} else {
			f.varargs = L.regs.alloc(len(extra))
			copy(f.varargs, extra)
		}
	} else if p.needsArg {
		t := NewTable(0, 1)
		t.SetStr("n", Number(0))
		f.regs[p.argReg] = TableValue(t)
	}
	for _, r := range p.cellParams {
		f.regs[r] = cellValue(&cell{f.regs[r]})
	}
	return f
}

func (L *State) freeFrame(f *frame) {
	L.regs.free(f.varargs)
	L.regs.free(f.regs)
	f.regs, f.varargs, f.fn = nil, nil, nil
	L.frames = append(L.frames, f)
}

// Call calls fn with args and returns its results (all of them when
// nresults < 0, else exactly nresults, padded with nils). The slice is
// valid until the next call.
func (L *State) Call(fn Value, args []Value, nresults int) []Value {
	L.nCcalls++
	if L.nCcalls >= maxCCalls {
		L.cStackOverflow()
	}
	n := L.call(fn, args, nil)
	L.nCcalls--
	return L.adjustResults(n, nresults)
}

// Call1 calls fn with args and returns its first result.
func (L *State) Call1(fn Value, args ...Value) Value {
	r := L.Call(fn, args, 1)
	return r[0]
}

func (L *State) cStackOverflow() {
	if L.nCcalls >= maxCCalls+maxCCalls/8 {
		L.raise(String("error in error handling"))
	}
	L.runtimeError("C stack overflow")
}

func (L *State) adjustResults(n, want int) []Value {
	if want < 0 {
		return L.ret[:n]
	}
	for len(L.ret) < want {
		L.ret = append(L.ret, Nil)
	}
	if n < want {
		clear(L.ret[n:want])
	}
	return L.ret[:want]
}

// snapshot is what a protected call restores when an error unwinds it.
type snapshot struct {
	stack, base, ci, nCcalls int
	errfunc                  Value
	slab                     []Value
	slabTop, oldSlabs        int
}

func (L *State) save() snapshot {
	return snapshot{stack: len(L.stack), base: L.base, ci: len(L.ci), nCcalls: L.nCcalls, errfunc: L.errfunc,
		slab: L.regs.slab, slabTop: L.regs.top, oldSlabs: len(L.regs.old)}
}

func (L *State) restore(s snapshot) {
	clear(L.stack[s.stack:])
	L.stack = L.stack[:s.stack]
	L.base = s.base
	clear(L.ci[s.ci:])
	L.ci = L.ci[:s.ci]
	L.nCcalls = s.nCcalls
	L.errfunc = s.errfunc
	r := &L.regs
	if len(r.old) > s.oldSlabs {
		clear(r.slab[:r.top])
		for i := len(r.old) - 1; i > s.oldSlabs; i-- {
			clear(r.old[i].slab[:r.old[i].top])
		}
		r.slab, r.top = r.old[s.oldSlabs].slab, r.old[s.oldSlabs].top
		r.old = r.old[:s.oldSlabs]
	}
	if r.top > s.slabTop {
		clear(r.slab[s.slabTop:r.top])
	}
	r.top = s.slabTop
}

// PCall calls fn with args in protected mode: an error comes back as
// *Error instead of unwinding further. handler, when a function, runs on
// the error before the stack unwinds (with the failing code still on it,
// as xpcall's handler does) and its result is the error's value.
func (L *State) PCall(fn Value, args []Value, nresults int, handler Value) (results []Value, err *Error) {
	s := L.save()
	L.errfunc = handler
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				if _, overflow := r.(tableOverflow); !overflow {
					panic(r)
				}
				e = &Error{Value: String("table overflow")}
			}
			L.restore(s)
			results, err = nil, e
		}
	}()
	L.nCcalls++
	if L.nCcalls >= maxCCalls {
		L.cStackOverflow()
	}
	n := L.call(fn, args, nil)
	L.nCcalls--
	L.errfunc = s.errfunc
	return L.adjustResults(n, nresults), nil
}

// raise raises v as a Lua error, through the handler of the innermost
// protected call first.
func (L *State) raise(v Value) {
	if h := L.errfunc; !h.IsNil() {
		L.errfunc = Nil
		v = L.runHandler(h, v)
	}
	panic(&Error{Value: v})
}

// runHandler calls an error handler; a handler that fails gives Lua's
// "error in error handling".
func (L *State) runHandler(h, v Value) (out Value) {
	s := L.save()
	was := L.handling
	L.handling = true
	defer func() {
		L.handling = was
		if r := recover(); r != nil {
			if _, ok := r.(*Error); !ok {
				panic(r)
			}
			L.restore(s)
			out = String("error in error handling")
		}
	}()
	return L.Call1(h, v)
}

// Error raises v as an error, as lua_error does: no position is added.
func (L *State) Error(v Value) { L.raise(v) }

// runtimeError raises a message with the position of the running
// function when it is Lua code (luaG_runerror).
func (L *State) runtimeError(format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	L.raise(String(L.where(0) + msg))
}

// Errorf raises a message with the position of the caller of the running
// Go function when it is Lua code (luaL_error).
func (L *State) Errorf(format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	L.raise(String(L.where(1) + msg))
}

// Where is the position of the function level calls up (0: the running
// one) as messages give it, "chunk:line: ", or "" for Go code.
func (L *State) Where(level int) string { return L.where(level) }

func (L *State) where(level int) string {
	i := len(L.ci) - 1 - level
	if i < 0 || i >= len(L.ci) {
		return ""
	}
	ci := &L.ci[i]
	if ci.fr == nil {
		return ""
	}
	return chunkID(ci.fn.proto.source) + ":" + strconv.Itoa(int(ci.fr.line)) + ": "
}

// Debug describes an active function, as lua_getinfo's "Sln" do.
type Debug struct {
	Source      string // the chunk's name as loaded ("@user_script"), "=[C]" for Go
	ShortSource string // as messages give it
	CurrentLine int    // -1 for Go
	What        string // "Lua", "main" or "C"
	Name        string // how the caller named it, "" if unknown
	NameWhat    string // "global", "local", "method", "field", "upvalue" or ""
}

// Stack describes the function level calls up (0: the running one).
func (L *State) Stack(level int) (Debug, bool) {
	i := len(L.ci) - 1 - level
	if i < 0 || i >= len(L.ci) {
		return Debug{}, false
	}
	ci := &L.ci[i]
	d := Debug{Source: "=[C]", ShortSource: "[C]", CurrentLine: -1, What: "C"}
	if ci.fr != nil {
		p := ci.fn.proto
		d.Source, d.ShortSource, d.CurrentLine = p.source, chunkID(p.source), int(ci.fr.line)
		d.What = "Lua"
		if p.lineDefined == 0 {
			d.What = "main"
		}
	}
	if s := ci.site; s != nil && !ci.tailCall && s.kind != nameNone && i > 0 && L.ci[i-1].fr != nil {
		d.Name, d.NameWhat = s.name, nameKinds[s.kind]
	}
	return d, true
}
