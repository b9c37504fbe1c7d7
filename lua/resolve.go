package lua

import "fmt"

// The compiler's first pass: which name is which variable. Every local
// declaration becomes a decl; every name use resolves to a local of its
// function, an upvalue (a local of an enclosing function, which is then
// captured and lives in a cell) or a global. The second pass (compile*.go)
// needs to know that a local is captured before it compiles the
// declaration, hence two passes.

// decl is one local variable.
type decl struct {
	name     string
	captured bool // a closure uses it: it lives in a cell
	reg      int  // its register (set by the second pass)
}

// resolution is what a name use refers to.
type resolution struct {
	kind  nameKind // nameLocal, nameUpvalue or nameGlobal
	local *decl    // nameLocal
	up    int      // nameUpvalue: the index in the function's upvalues
}

// upvalDesc is where a closure finds one of its upvalues when it is made:
// a local of the enclosing function (its cell), or one of that function's
// own upvalues.
type upvalDesc struct {
	name      string
	fromLocal *decl
	fromUp    int
}

// funcInfo is what the first pass learns about a function.
type funcInfo struct {
	upvals     []upvalDesc
	usesVararg bool
	params     []*decl // the parameters, then "arg" for a vararg function (Lua 5.1)
}

type resolver struct {
	names map[*nameExpr]resolution
	decls map[any][]*decl // a declaring node's locals, in order
	funcs map[*funcBody]*funcInfo
	fs    *resolveFunc
}

// resolveFunc is one function being resolved: its blocks of active
// locals, innermost last.
type resolveFunc struct {
	parent *resolveFunc
	body   *funcBody
	info   *funcInfo
	scopes [][]*decl
}

func resolve(main *funcBody) *resolver {
	r := &resolver{names: map[*nameExpr]resolution{}, decls: map[any][]*decl{}, funcs: map[*funcBody]*funcInfo{}}
	r.function(main)
	return r
}

func (r *resolver) function(fb *funcBody) {
	info := &funcInfo{}
	r.funcs[fb] = info
	r.fs = &resolveFunc{parent: r.fs, body: fb, info: info}
	r.open()
	for _, p := range fb.params {
		info.params = append(info.params, r.declare(p))
	}
	if fb.isVararg && fb.line != 0 {
		info.params = append(info.params, r.declare("arg"))
	}
	r.block(fb.body)
	r.close()
	r.fs = r.fs.parent
}

func (r *resolver) open()  { r.fs.scopes = append(r.fs.scopes, nil) }
func (r *resolver) close() { r.fs.scopes = r.fs.scopes[:len(r.fs.scopes)-1] }

func (r *resolver) declare(name string) *decl {
	d := &decl{name: name}
	s := &r.fs.scopes[len(r.fs.scopes)-1]
	*s = append(*s, d)
	return d
}

// declareAll declares names as the locals of node.
func (r *resolver) declareAll(node any, names []string) {
	for _, n := range names {
		r.decls[node] = append(r.decls[node], r.declare(n))
	}
}

func (r *resolver) block(stmts []stmt) {
	for _, s := range stmts {
		r.stmt(s)
	}
}

func (r *resolver) scoped(stmts []stmt) {
	r.open()
	r.block(stmts)
	r.close()
}

func (r *resolver) stmt(s stmt) {
	switch s := s.(type) {
	case *localStmt:
		r.exprs(s.exprs)
		r.declareAll(s, s.names)
	case *localFunctionStmt:
		r.declareAll(s, []string{s.name})
		r.function(s.fn)
	case *assignStmt:
		r.exprs(s.targets)
		r.exprs(s.exprs)
	case *callStmt:
		r.expr(s.call)
	case *doStmt:
		r.scoped(s.body)
	case *whileStmt:
		r.expr(s.cond)
		r.scoped(s.body)
	case *repeatStmt:
		r.open()
		r.block(s.body)
		r.expr(s.cond)
		r.close()
	case *ifStmt:
		for i, c := range s.conds {
			r.expr(c)
			r.scoped(s.blocks[i])
		}
		if s.els != nil {
			r.scoped(s.els)
		}
	case *numericForStmt:
		r.expr(s.start)
		r.expr(s.limit)
		if s.step != nil {
			r.expr(s.step)
		}
		r.open()
		r.declareAll(s, []string{s.name})
		r.block(s.body)
		r.close()
	case *genericForStmt:
		r.exprs(s.exprs)
		r.open()
		r.declareAll(s, s.names)
		r.block(s.body)
		r.close()
	case *returnStmt:
		r.exprs(s.exprs)
	case *breakStmt:
	default:
		panic(fmt.Sprintf("lua: unknown statement %T", s))
	}
}

func (r *resolver) exprs(es []expr) {
	for _, e := range es {
		r.expr(e)
	}
}

func (r *resolver) expr(e expr) {
	switch e := e.(type) {
	case *nameExpr:
		r.names[e] = r.lookup(r.fs, e.name)
	case *varargExpr:
		r.fs.info.usesVararg = true
	case *indexExpr:
		r.expr(e.obj)
		r.expr(e.key)
	case *callExpr:
		r.expr(e.fn)
		r.exprs(e.args)
	case *methodCallExpr:
		r.expr(e.obj)
		r.exprs(e.args)
	case *functionExpr:
		r.function(e.fn)
	case *binaryExpr:
		r.expr(e.left)
		r.expr(e.right)
	case *unaryExpr:
		r.expr(e.operand)
	case *parenExpr:
		r.expr(e.inner)
	case *tableExpr:
		for _, f := range e.fields {
			if f.key != nil {
				r.expr(f.key)
			}
			r.expr(f.value)
		}
	}
}

// lookup resolves name in fs: its innermost local, else an upvalue taken
// from the enclosing functions, else a global.
func (r *resolver) lookup(fs *resolveFunc, name string) resolution {
	if fs == nil {
		return resolution{kind: nameGlobal}
	}
	for i := len(fs.scopes) - 1; i >= 0; i-- {
		s := fs.scopes[i]
		for j := len(s) - 1; j >= 0; j-- {
			if s[j].name == name {
				return resolution{kind: nameLocal, local: s[j]}
			}
		}
	}
	outer := r.lookup(fs.parent, name)
	if outer.kind == nameGlobal {
		return outer
	}
	info := fs.info
	for i, u := range info.upvals {
		if u.name == name && (outer.kind == nameLocal && u.fromLocal == outer.local ||
			outer.kind == nameUpvalue && u.fromLocal == nil && u.fromUp == outer.up) {
			return resolution{kind: nameUpvalue, up: i}
		}
	}
	// (The parser has enforced Lua's limit of 60 upvalues.)
	u := upvalDesc{name: name}
	if outer.kind == nameLocal {
		outer.local.captured = true
		u.fromLocal = outer.local
	} else {
		u.fromUp = outer.up
	}
	info.upvals = append(info.upvals, u)
	return resolution{kind: nameUpvalue, up: len(info.upvals) - 1}
}
