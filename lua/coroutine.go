package lua

// Coroutines. Compiled Lua code keeps its calls on the Go stack, so each
// coroutine runs on a goroutine of its own; resume and yield hand control
// back and forth, one side always waiting, so only one runs at a time.
// A coroutine may yield only from its own Lua code, not from inside a Go
// function that called back into Lua (pcall, a metamethod, a sort
// comparator), as Lua 5.1 allows.

type coStatus uint8

const (
	coSuspended coStatus = iota
	coRunning
	coNormal // it resumed another coroutine
	coDead
)

var coStatusNames = [...]string{"suspended", "running", "normal", "dead"}

type coroutine struct {
	th      *State
	fn      Value
	status  coStatus
	started bool
	in      chan coMsg // to the coroutine: resume's arguments, or the end
	out     chan coMsg // from it: what it yielded, returned or raised
}

type coMsg struct {
	vals []Value
	err  *Error
	done bool // returned (or failed); for in: end the coroutine
}

// coEnd unwinds a coroutine that CloseCoroutines ends.
type coEnd struct{}

// newThread makes a coroutine running fn.
func (L *State) newThread(fn Value) *State {
	th := &State{g: L.g, globals: L.globals}
	th.co = &coroutine{th: th, fn: fn, in: make(chan coMsg), out: make(chan coMsg)}
	return th
}

// resume runs the coroutine of th until it yields, returns or fails.
func (L *State) resume(th *State, args []Value) ([]Value, *Error) {
	co := th.co
	if co.status != coSuspended {
		return nil, &Error{Value: String("cannot resume " + coStatusNames[co.status] + " coroutine")}
	}
	co.status = coRunning
	if L.co != nil {
		L.co.status = coNormal
	}
	in := coMsg{vals: append([]Value(nil), args...)}
	if !co.started {
		co.started = true
		L.g.coroutines[th] = struct{}{}
		go th.runCoroutine(in.vals)
	} else {
		co.in <- in
	}
	msg := <-co.out
	if L.co != nil {
		L.co.status = coRunning
	}
	if msg.done {
		co.status = coDead
		delete(L.g.coroutines, th)
	} else {
		co.status = coSuspended
	}
	return msg.vals, msg.err
}

// runCoroutine is the goroutine of a coroutine.
func (th *State) runCoroutine(args []Value) {
	co := th.co
	defer func() {
		if r := recover(); r != nil {
			if _, ended := r.(coEnd); ended {
				co.out <- coMsg{done: true}
				return
			}
			panic(r)
		}
	}()
	results, err := th.PCall(co.fn, args, -1, Nil)
	co.out <- coMsg{vals: append([]Value(nil), results...), err: err, done: true}
}

// yield hands vals to the resumer and waits to be resumed again.
func (L *State) yield(vals []Value) []Value {
	co := L.co
	if co == nil || L.nCcalls > 1 {
		// Lua 5.1's one message for both, raised without a position.
		L.Error(String("attempt to yield across metamethod/C-call boundary"))
	}
	co.out <- coMsg{vals: append([]Value(nil), vals...)}
	msg := <-co.in
	if msg.done {
		panic(coEnd{})
	}
	return msg.vals
}

// CloseCoroutines ends every coroutine left suspended (a script that ended
// without finishing them), releasing their goroutines.
func (L *State) CloseCoroutines() {
	for th := range L.g.coroutines {
		co := th.co
		delete(L.g.coroutines, th)
		if co.status == coSuspended {
			co.in <- coMsg{done: true}
			<-co.out
		}
		co.status = coDead
	}
}

func coCreate(L *State) int {
	f := L.Get(1)
	if f.AsFunction() == nil || f.AsFunction().IsGo() {
		L.ArgError(1, "Lua function expected")
	}
	L.Push(threadValue(L.newThread(f)))
	return 1
}

func coResume(L *State) int {
	th := L.Get(1).asThread()
	if th == nil || th.co == nil {
		L.ArgError(1, "coroutine expected")
	}
	return L.pushOutcome(L.resume(th, L.Args(2)))
}

func coYield(L *State) int {
	vals := L.yield(L.Args(1))
	for _, v := range vals {
		L.Push(v)
	}
	return len(vals)
}

func coStatusFn(L *State) int {
	th := L.Get(1).asThread()
	if th == nil {
		L.ArgError(1, "coroutine expected")
	}
	if th == L {
		L.Push(String("running"))
		return 1
	}
	if th.co == nil {
		L.Push(String("normal")) // the main thread, resuming a coroutine
		return 1
	}
	L.Push(String(coStatusNames[th.co.status]))
	return 1
}

func coRunningFn(L *State) int {
	if L.co == nil {
		L.Push(Nil) // the main thread is not a coroutine
		return 1
	}
	L.Push(threadValue(L))
	return 1
}

func coWrap(L *State) int {
	f := L.Get(1)
	if f.AsFunction() == nil || f.AsFunction().IsGo() {
		L.ArgError(1, "Lua function expected")
	}
	th := L.newThread(f)
	L.Push(FunctionValue(NewFunction("wrap", func(L *State) int {
		vals, err := L.resume(th, L.Args(1))
		if err != nil {
			v := err.Value
			if v.IsString() || v.IsNumber() {
				s, _ := v.ToString()
				v = String(L.where(1) + s)
			}
			L.Error(v)
		}
		for _, v := range vals {
			L.Push(v)
		}
		return len(vals)
	})))
	return 1
}

// openCoroutine registers the coroutine library.
func openCoroutine(L *State) *Table {
	return L.register("coroutine", []LibFunc{
		{"create", coCreate}, {"resume", coResume}, {"running", coRunningFn},
		{"status", coStatusFn}, {"wrap", coWrap}, {"yield", coYield},
	})
}
