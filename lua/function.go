package lua

// GoFunction is a function written in Go. It reads its arguments with
// L.Get (1 is the first) and the Check and Opt helpers, pushes its
// results with L.Push and returns how many it pushed.
type GoFunction func(L *State) int

// Function is a Lua function: a closure over compiled code with its
// upvalues, or a Go function.
type Function struct {
	proto  *funcProto // nil for a Go function
	upvals []*cell
	env    *Table // the globals its code reads and writes
	gofn   GoFunction
	name   string // a Go function's name, for messages that have no other
}

// NewFunction makes a Go function. name is what messages call it when
// the call site names nothing ("?" in Lua's argument errors otherwise).
func NewFunction(name string, f GoFunction) *Function {
	return &Function{gofn: f, name: name}
}

// IsGo reports whether f is written in Go.
func (f *Function) IsGo() bool { return f.proto == nil }

// Env is the table f's code reads globals from.
func (f *Function) Env() *Table { return f.env }

// SetEnv sets the table f's code reads globals from.
func (f *Function) SetEnv(t *Table) { f.env = t }

// Source is the name of the chunk f was compiled from ("" for Go).
func (f *Function) Source() string {
	if f.proto == nil {
		return ""
	}
	return f.proto.source
}

// funcProto is a compiled function: what every closure of it shares.
type funcProto struct {
	source      string // the chunk's name as given to Load
	lineDefined int    // 0 for a main chunk
	lastLine    int
	nparams     int
	isVararg    bool
	nregs       int       // registers a call needs: locals and temporaries
	cellParams  []int     // parameters some closure captures (boxed on entry)
	body        blockFunc // the compiled body
	upvalNames  []string
	protos      []*funcProto // the functions defined inside
	// needsArg: a vararg function that never says "..." gets Lua 5.1's
	// "arg" table (LUA_COMPAT_VARARG) in its register argReg.
	needsArg bool
	argReg   int
}
