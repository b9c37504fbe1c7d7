package scripting

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/revolver-db/revolver/lua"
	"github.com/revolver-db/revolver/resp"
)

// FUNCTION's Lua engine (Redis's function_lua.c): libraries of named
// functions. Library code runs in an empty read-only table whose __index
// leads to the locked globals while functions run, and to a small load
// API (redis.register_function, redis.log, the version) while a library's
// top-level code runs, so a library can only register functions when it
// loads.

// Library is a loaded library.
type Library struct {
	Name  string
	Code  string // the whole FUNCTION LOAD payload, shebang included
	Funcs map[string]*Function
}

// Function is a library's function.
type Function struct {
	Name    string
	Desc    string
	HasDesc bool
	Flags   Flags
	Lib     *Library
	fn      *lua.Function
}

type libraryEngine struct {
	globals *lua.Table // the locked globals functions read through
	loadAPI *lua.Table // what library code reads while it loads
	envMeta *lua.Table // the environment's metatable: __index switches
	loading *Library   // the library whose code runs now
}

// InvalidNameError is Redis's error for a bad library or function name.
const InvalidNameError = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// NewFunctions makes the interpreter FUNCTION libraries run in; math.random
// draws from r.
func NewFunctions(r *Rand) *Runtime {
	rt := &Runtime{Verbosity: LogNotice, lib: &libraryEngine{}, rand: r}
	L := rt.newState()
	le := rt.lib

	redis := lua.NewTable(0, 0)
	redis.SetStr("register_function", lua.FunctionValue(lua.NewFunction("register_function", rt.registerFunction)))
	rt.registerLog(redis)
	registerVersion(redis)
	setErrorMetatable(redis)
	le.loadAPI = lua.NewTable(0, 0)
	le.loadAPI.SetStr("redis", lua.TableValue(redis))
	setErrorMetatable(le.loadAPI)
	protect(le.loadAPI)

	rt.installErrorHandler(false)
	lockGlobals(L)
	le.globals = L.Globals()

	env := lua.NewTable(0, 0)
	le.envMeta = lua.NewTable(0, 0)
	le.envMeta.SetStr("__index", lua.TableValue(le.globals))
	le.envMeta.SetReadOnly(true)
	env.SetMetatable(le.envMeta)
	env.SetReadOnly(true)
	L.SetGlobals(env)
	return rt
}

// ValidName is Redis's rule for library and function names.
func ValidName(s string) bool {
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

// CreateLibrary compiles a library and runs its top-level code, which
// registers its functions. taken says whether a library of that name is
// in the way. timeout 0 lets the code run as long as it takes (a
// restart's load). Errors are Redis's texts, without "ERR".
func (rt *Runtime) CreateLibrary(code string, timeout time.Duration, taken func(name string) bool) (*Library, error) {
	md, err := ParseLibraryMeta(code)
	if err != nil {
		return nil, err
	}
	if !ValidName(md.Name) {
		return nil, errors.New(InvalidNameError)
	}
	if !strings.EqualFold(md.Engine, "lua") {
		return nil, fmt.Errorf("Engine '%s' not found", md.Engine)
	}
	if taken(md.Name) {
		return nil, fmt.Errorf("Library '%s' already exists", md.Name)
	}
	L := rt.L
	fn, err := L.Load(md.Body, "@user_function", L.Globals())
	if err != nil {
		return nil, fmt.Errorf("Error compiling function: %s", err.Error())
	}
	lib := &Library{Name: md.Name, Code: code, Funcs: map[string]*Function{}}
	if err := rt.runLoad(fn, lib, timeout); err != nil {
		return nil, err
	}
	if len(lib.Funcs) == 0 {
		return nil, errors.New("No functions registered")
	}
	return lib, nil
}

// runLoad runs a library's top-level code against the load API.
func (rt *Runtime) runLoad(fn *lua.Function, lib *Library, timeout time.Duration) error {
	le, L := rt.lib, rt.L
	le.loading = lib
	le.envMeta.SetStr("__index", lua.TableValue(le.loadAPI))
	defer func() {
		le.envMeta.SetStr("__index", lua.TableValue(le.globals))
		le.loading = nil
	}()
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() { rt.Interrupt("FUNCTION LOAD timeout") })
		defer func() {
			t.Stop()
			L.ClearInterrupt()
		}()
	}
	_, err := L.PCall(lua.FunctionValue(fn), nil, 0, lua.Nil)
	L.CloseCoroutines()
	if err != nil {
		return fmt.Errorf("Error registering functions: %s", loadError(err.Value))
	}
	return nil
}

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=, callback=, flags=, description=}.
func (rt *Runtime) registerFunction(L *lua.State) int {
	lib := rt.lib.loading
	if lib == nil {
		return raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f, errMsg := readRegisterArgs(L)
	if errMsg != "" {
		return raise(L, errMsg)
	}
	if !ValidName(f.Name) {
		return raise(L, InvalidNameError)
	}
	if lib.Funcs[f.Name] != nil {
		return raise(L, "Function already exists in the library")
	}
	f.Lib = lib
	lib.Funcs[f.Name] = f
	return 0
}

func readRegisterArgs(L *lua.State) (*Function, string) {
	switch L.Top() {
	case 1:
	case 2:
		name, ok := L.Get(1).ToString()
		if !ok {
			return nil, "first argument to redis.register_function must be a string"
		}
		fn := L.Get(2).AsFunction()
		if fn == nil {
			return nil, "second argument to redis.register_function must be a function"
		}
		return &Function{Name: name, fn: fn}, ""
	default:
		return nil, "wrong number of arguments to redis.register_function"
	}
	t := L.Get(1).AsTable()
	if t == nil {
		return nil, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	}
	f := &Function{}
	named := false
	var errMsg string
	t.ForEach(func(k, v lua.Value) {
		if errMsg != "" {
			return
		}
		key, ok := k.ToString()
		if !ok {
			errMsg = "named argument key given to redis.register_function is not a string"
			return
		}
		switch strings.ToLower(key) {
		case "function_name":
			if f.Name, ok = v.ToString(); !ok {
				errMsg = "function_name argument given to redis.register_function must be a string"
			}
			named = true
		case "description":
			if f.Desc, ok = v.ToString(); !ok {
				errMsg = "description argument given to redis.register_function must be a string"
			}
			f.HasDesc = true
		case "callback":
			if f.fn = v.AsFunction(); f.fn == nil {
				errMsg = "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			ft := v.AsTable()
			if ft == nil {
				errMsg = "flags argument to redis.register_function must be a table representing function flags"
				return
			}
			if f.Flags, ok = readFunctionFlags(L, ft); !ok {
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

// readFunctionFlags reads a flags array up to its first nil (through
// metamethods, as lua_gettable does).
func readFunctionFlags(L *lua.State, t *lua.Table) (Flags, bool) {
	var flags Flags
	for i := 1; ; i++ {
		v := L.Index(lua.TableValue(t), lua.Number(float64(i)))
		if v.IsNil() {
			return flags, true
		}
		s, ok := v.ToString()
		if !ok {
			return 0, false
		}
		bit, found := flagNamed(s, true)
		if !found {
			return 0, false
		}
		flags |= bit
	}
}

// Call runs f (FCALL) and writes its reply, or its error, to w.
func (rt *Runtime) Call(f *Function, keys, args [][]byte, host Host, w *resp.Writer) {
	rt.RunFunction(f.fn, f.Name, keys, args, host, w)
}
