package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Redis 7.0 functions (functions.c, function_lua.c): libraries of named
// functions, loaded with FUNCTION LOAD, persisted and called with FCALL.
// They run in their own Lua state, protected as EVAL's is
// (lua_sandbox.go). Its code's environment is an empty read-only table
// whose __index leads to the globals while functions run, and to a small
// load API (redis.register_function, redis.log, the version) while a
// library's top-level code runs, so a library can only register functions
// when it loads.

// functionLoadTimeout bounds a library's top-level code (Redis's
// LOAD_TIMEOUT_MS).
const functionLoadTimeout = 500 * time.Millisecond

// serverRecordPrefix names a library's server record: the prefix, then
// the library's name; the record holds its code.
const libraryRecordPrefix = "function:"

type functionEngine struct {
	L          *lua.LState
	errHandler *lua.LFunction
	env        *lua.LTable // what library code sees as its globals
	envMeta    *lua.LTable
	globals    *lua.LTable // the real globals, for running functions
	loadAPI    *lua.LTable // the globals while a library loads
	libs       map[string]*library
	funcs      map[string]*function // by lower-cased name: FCALL ignores case
	loading    *library             // the library whose code runs now
}

type library struct {
	name  string
	code  string // the whole FUNCTION LOAD payload, shebang included
	funcs map[string]*function
}

type function struct {
	name  string
	desc  lua.LValue // LString, or LNil when none was given
	fn    *lua.LFunction
	flags scriptFlags
	lib   *library
}

func (fe *functionEngine) init(vm *LuaVM) {
	L, errHandler, sb := vm.newState()
	fe.L, fe.errHandler = L, errHandler
	fe.globals = L.G.Global
	fe.libs, fe.funcs = map[string]*library{}, map[string]*function{}

	// The load API: only register_function, log and the version, both it
	// and its redis table raising for anything else.
	redis := L.NewTable()
	redis.RawSetString("register_function", L.NewFunction(fe.registerFunction))
	api := sb.target(fe.globals.RawGetString("redis").(*lua.LTable))
	for _, name := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
		"REDIS_VERSION", "REDIS_VERSION_NUM"} {
		redis.RawSetString(name, api.RawGetString(name))
	}
	setErrorMetatable(L, redis)
	fe.loadAPI = L.NewTable()
	fe.loadAPI.RawSetString("redis", redis)
	setErrorMetatable(L, fe.loadAPI)
	sb.protect(L, fe.loadAPI)

	// Library code runs in an empty read-only table whose __index leads
	// to the globals, or to the load API while a library loads.
	fe.env = L.NewTable()
	fe.envMeta = L.NewTable()
	fe.envMeta.RawSetString("__index", fe.globals)
	fe.envMeta.RawSetString("__newindex", L.NewFunction(readonlyAssign))
	L.SetMetatable(fe.env, fe.envMeta)
	sb.setEnv(L, fe.env)
}

// libraryMeta is a library's shebang: "#!<engine> name=<name>".
type libraryMeta struct {
	engine, name string
	body         string // the code after the shebang line, from its line feed
}

func parseLibraryMeta(code string) (libraryMeta, error) {
	var md libraryMeta
	if !strings.HasPrefix(code, "#!") {
		return md, errors.New("Missing library metadata")
	}
	end := strings.IndexByte(code, '\n')
	if end < 0 {
		return md, errors.New("Invalid library metadata")
	}
	parts := strings.Fields(code[:end])
	if len(parts) == 0 {
		return md, errors.New("Invalid library metadata")
	}
	md.engine = parts[0][2:]
	named := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if named {
				return md, errors.New("Invalid metadata value, name argument was given multiple times")
			}
			md.name, named = p[5:], true
			continue
		}
		return md, fmt.Errorf("Invalid metadata value given: %s", p)
	}
	if !named {
		return md, errors.New("Library name was not given")
	}
	md.body = code[end:]
	return md, nil
}

// validName is Redis's rule for library and function names.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

const invalidNameError = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// create compiles a library and runs its top-level code, which registers
// its functions; the library is not linked into the engine yet. taken
// says whether a library of that name is in the way. timeout 0 lets the
// code run as long as it takes (a restart's load).
func (fe *functionEngine) create(code string, timeout time.Duration, taken func(name string) bool) (*library, error) {
	md, err := parseLibraryMeta(code)
	if err != nil {
		return nil, err
	}
	if !validName(md.name) {
		return nil, errors.New(invalidNameError)
	}
	if !strings.EqualFold(md.engine, "lua") {
		return nil, fmt.Errorf("Engine '%s' not found", md.engine)
	}
	if taken(md.name) {
		return nil, fmt.Errorf("Library '%s' already exists", md.name)
	}
	L := fe.L
	fn, err := L.Load(strings.NewReader(md.body), "@user_function")
	if err == nil {
		prepareChunk(fn.Proto)
	}
	if err != nil {
		return nil, fmt.Errorf("Error compiling function: %s",
			compileError(err, 1+strings.Count(code, "\n")))
	}
	fn.Env = fe.env
	lib := &library{name: md.name, code: code, funcs: map[string]*function{}}
	if err := fe.runLoad(fn, lib, timeout); err != nil {
		return nil, err
	}
	if len(lib.funcs) == 0 {
		return nil, errors.New("No functions registered")
	}
	return lib, nil
}

// runLoad runs a library's top-level code against the load API.
func (fe *functionEngine) runLoad(fn *lua.LFunction, lib *library, timeout time.Duration) error {
	L := fe.L
	fe.loading = lib
	fe.envMeta.RawSetString("__index", fe.loadAPI)
	defer func() {
		fe.envMeta.RawSetString("__index", fe.globals)
		fe.loading = nil
	}()
	var ctx context.Context
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), timeout)
		defer cancel()
		prev := L.Context() // the kill switch
		L.SetContext(ctx)
		defer L.SetContext(prev)
	}
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err != nil {
		msg := loadErrorText(err)
		if ctx != nil && ctx.Err() != nil {
			msg = "ERR FUNCTION LOAD timeout"
		}
		return fmt.Errorf("Error registering functions: %s", msg)
	}
	return nil
}

// loadErrorText is the message of an error raised by library code.
func loadErrorText(err error) string {
	apiErr, ok := err.(*lua.ApiError)
	if !ok {
		return "ERR " + err.Error()
	}
	if t, ok := apiErr.Object.(*lua.LTable); ok {
		return errField(t)
	}
	return "ERR " + luaErrorText(apiErr.Object)
}

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=, callback=, flags=, description=}.
func (fe *functionEngine) registerFunction(L *lua.LState) int {
	lib := fe.loading
	if lib == nil {
		return raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f, errMsg := readRegisterArgs(L)
	if errMsg != "" {
		return raise(L, errMsg)
	}
	if !validName(f.name) {
		return raise(L, invalidNameError)
	}
	if lib.funcs[f.name] != nil {
		return raise(L, "Function already exists in the library")
	}
	f.lib = lib
	lib.funcs[f.name] = f
	return 0
}

func readRegisterArgs(L *lua.LState) (*function, string) {
	switch L.GetTop() {
	case 1:
	case 2:
		name, ok := luaToString(L.Get(1))
		if !ok {
			return nil, "first argument to redis.register_function must be a string"
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return nil, "second argument to redis.register_function must be a function"
		}
		return &function{name: name, desc: lua.LNil, fn: fn}, ""
	default:
		return nil, "wrong number of arguments to redis.register_function"
	}
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return nil, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	}
	f := &function{desc: lua.LNil}
	named := false
	var errMsg string
	t.ForEach(func(k, v lua.LValue) {
		if errMsg != "" {
			return
		}
		key, ok := luaToString(k)
		if !ok {
			errMsg = "named argument key given to redis.register_function is not a string"
			return
		}
		switch strings.ToLower(key) {
		case "function_name":
			if f.name, ok = luaToString(v); !ok {
				errMsg = "function_name argument given to redis.register_function must be a string"
			}
			named = true
		case "description":
			s, ok := luaToString(v)
			if !ok {
				errMsg = "description argument given to redis.register_function must be a string"
			}
			f.desc = lua.LString(s)
		case "callback":
			if f.fn, ok = v.(*lua.LFunction); !ok {
				errMsg = "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				errMsg = "flags argument to redis.register_function must be a table representing function flags"
				return
			}
			if f.flags, ok = readFunctionFlags(ft); !ok {
				errMsg = "unknown flag given"
			}
		default:
			errMsg = "unknown argument given to redis.register_function"
		}
	})
	switch {
	case errMsg != "":
		return nil, errMsg
	case !named:
		return nil, "redis.register_function must get a function name argument"
	case f.fn == nil:
		return nil, "redis.register_function must get a callback argument"
	}
	return f, ""
}

// readFunctionFlags reads a flags array, up to its first nil.
func readFunctionFlags(t *lua.LTable) (scriptFlags, bool) {
	var flags scriptFlags
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		s, ok := luaToString(v)
		if !ok {
			return 0, false
		}
		found := false
		for _, d := range scriptFlagNames {
			if strings.EqualFold(d.name, s) {
				flags |= d.flag
				found = true
			}
		}
		if !found {
			return 0, false
		}
	}
}

// link adds lib, replacing old (the library of the same name) if not nil,
// unless one of its functions is another library's.
func (fe *functionEngine) link(lib, old *library) error {
	for name := range lib.funcs {
		if f := fe.funcs[strings.ToLower(name)]; f != nil && f.lib != old {
			return fmt.Errorf("Function %s already exists", name)
		}
	}
	if old != nil {
		fe.unlink(old)
	}
	fe.libs[lib.name] = lib
	for name, f := range lib.funcs {
		fe.funcs[strings.ToLower(name)] = f
	}
	return nil
}

func (fe *functionEngine) unlink(lib *library) {
	for name := range lib.funcs {
		delete(fe.funcs, strings.ToLower(name))
	}
	delete(fe.libs, lib.name)
}

// load is FUNCTION LOAD's work: create the library and link it.
func (fe *functionEngine) load(code string, replace bool, timeout time.Duration) (*library, error) {
	lib, err := fe.create(code, timeout, func(name string) bool { return !replace && fe.libs[name] != nil })
	if err != nil {
		return nil, err
	}
	if err := fe.link(lib, fe.libs[lib.name]); err != nil {
		return nil, err
	}
	return lib, nil
}

// sortedLibraries lists the libraries by name.
func (fe *functionEngine) sortedLibraries() []*library {
	libs := make([]*library, 0, len(fe.libs))
	for _, l := range fe.libs {
		libs = append(libs, l)
	}
	slices.SortFunc(libs, func(a, b *library) int { return strings.Compare(a.name, b.name) })
	return libs
}

// flush drops every library.
func (fe *functionEngine) flush() {
	fe.libs, fe.funcs = map[string]*library{}, map[string]*function{}
}

// callFunction runs f (FCALL and FCALL_RO) with its keys and arguments as
// its two table parameters.
func (vm *LuaVM) callFunction(c *Ctx, f *function, keys, args [][]byte, ro bool) {
	run := vm.prepareRun(c, f.name, f.flags, ro)
	if run == nil {
		return
	}
	L := vm.fn.L
	L.Push(f.fn)
	L.Push(stringArray(L, keys))
	L.Push(stringArray(L, args))
	vm.callScript(c, L, vm.fn.errHandler, 2, run)
}

// rebuild replaces a Lua state that can no longer be trusted: EVAL's
// (its script cache starts empty) or the functions' (every library is
// loaded again into the new one).
func (vm *LuaVM) rebuild(L *lua.LState) {
	if L == vm.L {
		vm.reset()
		return
	}
	libs := vm.fn.sortedLibraries()
	vm.fn.L.Close()
	vm.fn = functionEngine{}
	vm.fn.init(vm)
	for _, lib := range libs {
		vm.fn.load(lib.code, false, 0) // loaded before, so it loads again
	}
}
