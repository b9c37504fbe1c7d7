package lua

// LibFunc is a library function and its name. A nil Fn stands for a
// function Redis's Lua registers but refuses to keep (its allow list drops
// dofile, print...): the name takes a node in the table, left dead, as
// there, so the table's layout is Redis's.
type LibFunc struct {
	Name string
	Fn   GoFunction
}

// register makes the global table name (or fills it, if there) with
// funcs, inserted in their order as luaL_register does: a table's layout,
// and so the order pairs walks it in, depends on it.
func (L *State) register(name string, funcs []LibFunc) *Table {
	t := L.globals.GetStr(name).AsTable()
	if t == nil {
		t = NewTable(0, len(funcs))
		L.globals.SetStr(name, TableValue(t))
	}
	SetFuncs(t, funcs)
	return t
}

// SetFuncs sets funcs into t in their order.
func SetFuncs(t *Table, funcs []LibFunc) {
	for _, f := range funcs {
		if f.Fn == nil {
			t.SetStr(f.Name, Nil)
			continue
		}
		t.SetStr(f.Name, FunctionValue(NewFunction(f.Name, f.Fn)))
	}
}

// Register makes a library table: the global name holding funcs.
func (L *State) Register(name string, funcs []LibFunc) *Table { return L.register(name, funcs) }
