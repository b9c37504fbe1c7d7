package lua

import "strings"

// loadstring and load: chunks compiled at run time, in the globals of the
// thread that loads them (Lua 5.1's lua_load). Redis's Lua reads source
// text only, so a binary chunk fails to parse like any other text.

func baseLoadString(L *State) int {
	src := L.CheckString(1)
	return loadResult(L, src, L.OptString(2, src))
}

func baseLoad(L *State) int {
	name := L.OptString(2, "=(load)")
	reader := L.Get(1)
	L.CheckType(1, TypeFunction)
	var b strings.Builder
	for {
		piece := L.Call1(reader)
		if piece.IsNil() {
			break
		}
		s, ok := piece.ToString()
		if !ok {
			L.Errorf("reader function must return a string")
		}
		if s == "" {
			break
		}
		b.WriteString(s)
	}
	return loadResult(L, b.String(), name)
}

// loadResult pushes the compiled chunk, or nil and the message.
func loadResult(L *State, src, name string) int {
	fn, err := L.Load(src, name, L.globals)
	if err != nil {
		L.Push(Nil)
		L.Push(String(err.Error()))
		return 2
	}
	L.Push(FunctionValue(fn))
	return 1
}

// OpenLibs loads the libraries Redis gives scripts from Lua itself: base
// (with coroutine, registered inside it as in Lua 5.1), table, string
// and math, in that order.
func (L *State) OpenLibs() {
	openBase(L)
	openCoroutine(L)
	openTable(L)
	openString(L)
	openMath(L)
}
