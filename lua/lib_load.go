package lua

// loadstring and load: chunks compiled at run time, in the globals of the
// thread that loads them (Lua 5.1's lua_load). Redis's Lua reads source
// text only, so a binary chunk fails to parse like any other text.

func baseLoadString(L *State) int {
	src := L.CheckString(1)
	return loadResult(L, src, L.OptString(2, src))
}

// baseLoad is load(reader [, chunkname]): the chunk is read piece by piece
// as the parser needs it. The reading runs protected under the handler of
// the protected call in progress (Lua's lua_load keeps L->errfunc), so an
// error in the reader comes back from load as that handler made it; a
// syntax error comes back as its message.
func baseLoad(L *State) int {
	name := L.OptString(2, "=(load)")
	reader := L.Get(1)
	L.CheckType(1, TypeFunction)
	var fn *Function
	var syntax error
	parse := NewFunction("load", func(L *State) int {
		main, err := parseReader(func() string {
			piece := L.Call1(reader)
			if piece.IsNil() {
				return ""
			}
			s, ok := piece.ToString()
			if !ok {
				// where(2): the code that called load, past this
				// function and load itself
				L.raise(String(L.where(2) + "reader function must return a string"))
			}
			return s
		}, name, L.nCcalls-1) // this protected call is not one of Lua's levels
		if err != nil {
			syntax = err
			return 0
		}
		fn = compileMain(main, name, L.globals)
		return 0
	})
	if _, err := L.PCall(FunctionValue(parse), nil, 0, L.errfunc); err != nil {
		L.Push(Nil)
		L.Push(err.Value)
		return 2
	}
	if syntax != nil {
		L.Push(Nil)
		L.Push(String(syntax.Error()))
		return 2
	}
	L.Push(FunctionValue(fn))
	return 1
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
