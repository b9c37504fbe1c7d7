package scripting

import (
	"fmt"
	"unsafe"

	"github.com/revolver-db/revolver/lua"
	"github.com/revolver-db/revolver/resp"
)

// Running scripts and functions, and their errors as Redis reports them
// (luaCallFunction).

// run is the script running now.
type run struct {
	host  Host
	proto int    // the protocol redis.call's replies come in (redis.setresp)
	name  string // the script's SHA1 or the function's name, as errors name it
}

// Compile compiles an EVAL script's body (its shebang line already cut,
// its line feed kept). The error is Redis's reply.
func (rt *Runtime) Compile(body string) (*lua.Function, error) {
	fn, err := rt.L.Load(body, "@user_script", rt.L.Globals())
	if err != nil {
		return nil, fmt.Errorf("ERR Error compiling script (new function): %s", err.Error())
	}
	return fn, nil
}

// RunEval runs a compiled EVAL script with its KEYS and ARGV (globals of
// the interpreter, set past the lock as Redis does) and writes its reply,
// or its error, to w.
func (rt *Runtime) RunEval(fn *lua.Function, name string, keys, args [][]byte, host Host, w *resp.Writer) {
	g := rt.L.Globals()
	g.SetStr("KEYS", lua.TableValue(stringArray(keys)))
	g.SetStr("ARGV", lua.TableValue(stringArray(args)))
	rt.call(fn, nil, name, host, w)
}

// RunFunction runs a function with its keys and arguments as its two
// parameters and writes its reply, or its error, to w.
func (rt *Runtime) RunFunction(fn *lua.Function, name string, keys, args [][]byte, host Host, w *resp.Writer) {
	params := []lua.Value{lua.TableValue(stringArray(keys)), lua.TableValue(stringArray(args))}
	rt.call(fn, params, name, host, w)
}

func (rt *Runtime) call(fn *lua.Function, params []lua.Value, name string, host Host, w *resp.Writer) {
	rt.run = &run{host: host, proto: 2, name: name}
	defer func() {
		rt.run = nil
		rt.L.ClearInterrupt()
		rt.L.CloseCoroutines()
		rt.L.CollectGarbage() // Go's collector takes the run's garbage
	}()
	results, err := rt.L.PCall(lua.FunctionValue(fn), params, 1, rt.errHandler)
	if err != nil {
		writeError(w, host, err.Value, name)
		return
	}
	writeReply(w, host, rt.run.proto, results[0], 0)
}

// Interrupt stops the running script at its next call or loop iteration
// with Redis's error for msg (SCRIPT KILL's "Script killed by user...").
// Any goroutine may call it.
func (rt *Runtime) Interrupt(msg string) {
	rt.L.Interrupt(lua.TableValue(errorTable(msg)))
}

// stringArray is a table of copies of items, made in one allocation for
// all their bytes.
func stringArray(items [][]byte) *lua.Table {
	t := lua.NewTable(len(items), 0)
	size := 0
	for _, it := range items {
		size += len(it)
	}
	buf := make([]byte, 0, size)
	for _, it := range items {
		buf = append(buf, it...)
	}
	all := unsafe.String(unsafe.SliceData(buf), len(buf))
	off := 0
	for i, it := range items {
		t.SetInt(i+1, lua.String(all[off:off+len(it)]))
		off += len(it)
	}
	return t
}

// writeError answers a script that failed: "-<err> script: <name>, on
// <source>:<line>." for the error tables the handler makes.
func writeError(w *resp.Writer, host Host, e lua.Value, name string) {
	t := e.AsTable()
	if t == nil {
		msg := "execution failure"
		if s, ok := e.ToString(); ok {
			msg = s
		}
		w.Error(fmt.Sprintf("ERR Error running script %s, %.100s\n", name, msg))
		host.ReplyError(msg, false, false)
		return
	}
	msg := errorText(t)
	src, okS := t.GetStr("source").ToString()
	line, okL := t.GetStr("line").ToString()
	if okS && okL {
		msg += fmt.Sprintf(" script: %s, on %s:%s.", name, src, line)
	}
	w.Error(msg)
	host.ReplyError(msg, errorCounted(t), false)
}

// errorText is an error table's message: its err field.
func errorText(t *lua.Table) string {
	if e, ok := t.GetStr("err").ToString(); ok {
		return e
	}
	return "ERR unknown error"
}

// errorHandler is Redis's __redis__err__handler: the error as a table
// {err=..., source=..., line=...}, the position being where the script
// was: the function that raised, or its caller when that is Go code.
func (rt *Runtime) errorHandler(L *lua.State) int {
	e := L.Get(1)
	// Level 1 is what raised (the handler itself is level 0); Redis's
	// Lua handler counts one more for itself.
	d, ok := L.Stack(1)
	if ok && d.What == "C" {
		d, ok = L.Stack(2)
	}
	t := e.AsTable()
	if t == nil {
		s, _ := L.ToStringMeta(e).ToString()
		t = lua.NewTable(0, 0)
		t.SetStr("err", lua.String("ERR "+s))
	}
	if ok {
		t.SetStr("source", lua.String(d.Source))
		t.SetStr("line", lua.Number(float64(d.CurrentLine)))
	}
	L.Push(lua.TableValue(t))
	return 1
}

// loadError is the message of an error raised by a library's top-level
// code (Redis's luaExtractErrorInformation, without the position).
func loadError(e lua.Value) string {
	if t := e.AsTable(); t != nil {
		return errorText(t)
	}
	s, _ := e.ToString()
	return "ERR " + s
}
