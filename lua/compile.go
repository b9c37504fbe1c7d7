package lua

// The compiler's second pass: each statement becomes a blockFunc-like Go
// closure and each expression one that returns its value, reading and
// writing the frame's registers. Locals get registers in declaration order
// and give them back at the end of their block; temporaries (call
// arguments, constructor items, values on their way to several targets)
// take registers above the locals.

type compiler struct {
	r      *resolver
	fs     *compileFunc
	source string
}

// compileFunc is one function being compiled.
type compileFunc struct {
	parent *compileFunc
	body   *funcBody
	info   *funcInfo
	proto  *funcProto
	top    int // the next free register
	// zero is the first zero constant the function uses: Lua keeps one
	// constant per value and 0 == -0, so whichever comes first serves
	// both (tostring(-0) is "0" after a 0, "-0" before one).
	zero     float64
	zeroSeen bool
}

// Load compiles a chunk. chunkname is the name messages give it (see
// chunkID); the function's globals are env. The error is a *SyntaxError.
func (L *State) Load(src, chunkname string, env *Table) (*Function, error) {
	// Nesting counts from the calls in progress, as Lua's parser counts
	// its syntax levels on the C stack (loadstring in a script).
	main, err := parseLevel(src, chunkname, L.nCcalls)
	if err != nil {
		return nil, err
	}
	return compileMain(main, chunkname, env), nil
}

func compileMain(main *funcBody, chunkname string, env *Table) *Function {
	c := &compiler{r: resolve(main), source: chunkname}
	return &Function{proto: c.function(main), env: env}
}

func (c *compiler) function(fb *funcBody) *funcProto {
	info := c.r.funcs[fb]
	p := &funcProto{source: c.source, lineDefined: fb.line, lastLine: fb.lastLine,
		nparams: len(fb.params), isVararg: fb.isVararg}
	for _, u := range info.upvals {
		p.upvalNames = append(p.upvalNames, u.name)
	}
	c.fs = &compileFunc{parent: c.fs, body: fb, info: info, proto: p}
	for i, d := range info.params {
		d.reg = c.fs.top
		c.fs.top++
		if d.captured {
			p.cellParams = append(p.cellParams, i)
		}
	}
	if fb.isVararg && fb.line != 0 {
		p.argReg = len(fb.params)
		p.needsArg = !info.usesVararg
	}
	p.body = c.block(fb.body)
	if p.nregs < c.fs.top {
		p.nregs = c.fs.top
	}
	c.fs = c.fs.parent
	return p
}

// reserve takes n registers for temporaries and returns the first.
func (c *compiler) reserve(n int) int {
	fs := c.fs
	r := fs.top
	fs.top += n
	if fs.top > fs.proto.nregs {
		fs.proto.nregs = fs.top
	}
	return r
}

// release gives back the registers from r up.
func (c *compiler) release(r int) { c.fs.top = r }

// activate gives node's locals their registers: the n registers from r,
// where their values were computed.
func (c *compiler) activate(node any, r int) []*decl {
	ds := c.r.decls[node]
	for i, d := range ds {
		d.reg = r + i
	}
	if end := r + len(ds); c.fs.top < end {
		c.fs.top = end
		if end > c.fs.proto.nregs {
			c.fs.proto.nregs = end
		}
	}
	return ds
}

// cellRegs lists the registers of the captured locals among ds.
func cellRegs(ds []*decl) []int {
	var regs []int
	for _, d := range ds {
		if d.captured {
			regs = append(regs, d.reg)
		}
	}
	return regs
}

// boxCells puts each captured local's value in a fresh cell: a new one on
// every execution of the declaration, so closures made in a loop each
// have their own.
func boxCells(f *frame, regs []int) {
	for _, r := range regs {
		f.regs[r] = cellValue(&cell{f.regs[r]})
	}
}

// block compiles a block in a scope of its own.
func (c *compiler) block(stmts []stmt) blockFunc {
	top := c.fs.top
	fns := make([]blockFunc, 0, len(stmts))
	for _, s := range stmts {
		fns = append(fns, c.stmt(s))
	}
	c.fs.top = top
	return seq(fns)
}

// seq runs statements in turn, stopping at one that breaks or returns.
func seq(fns []blockFunc) blockFunc {
	switch len(fns) {
	case 0:
		return func(*frame) ctrl { return ctrlNext }
	case 1:
		return fns[0]
	case 2:
		a, b := fns[0], fns[1]
		return func(f *frame) ctrl {
			if c := a(f); c != ctrlNext {
				return c
			}
			return b(f)
		}
	}
	return func(f *frame) ctrl {
		for _, s := range fns {
			if c := s(f); c != ctrlNext {
				return c
			}
		}
		return ctrlNext
	}
}

func (c *compiler) stmt(s stmt) blockFunc {
	switch s := s.(type) {
	case *localStmt:
		return c.localStmt(s)
	case *localFunctionStmt:
		return c.localFunction(s)
	case *assignStmt:
		return c.assign(s)
	case *callStmt:
		call := c.call(s.call)
		return func(f *frame) ctrl {
			call(f)
			return ctrlNext
		}
	case *doStmt:
		return c.block(s.body)
	case *whileStmt:
		return c.while(s)
	case *repeatStmt:
		return c.repeat(s)
	case *ifStmt:
		return c.ifStmt(s)
	case *numericForStmt:
		return c.numericFor(s)
	case *genericForStmt:
		return c.genericFor(s)
	case *returnStmt:
		return c.returnStmt(s)
	case *breakStmt:
		return func(*frame) ctrl { return ctrlBreak }
	}
	panic("lua: unknown statement")
}

func (c *compiler) localStmt(s *localStmt) blockFunc {
	r := c.reserve(0)
	fill := c.exprsInto(s.exprs, r, len(s.names))
	c.release(r)
	cells := cellRegs(c.activate(s, r))
	if len(cells) == 0 {
		return func(f *frame) ctrl {
			fill(f)
			return ctrlNext
		}
	}
	return func(f *frame) ctrl {
		fill(f)
		boxCells(f, cells)
		return ctrlNext
	}
}

func (c *compiler) localFunction(s *localFunctionStmt) blockFunc {
	d := c.activate(s, c.reserve(0))[0]
	reg := d.reg
	mk := c.closure(s.fn)
	if d.captured {
		// The function sees itself through the cell, made first.
		return func(f *frame) ctrl {
			cl := &cell{}
			f.regs[reg] = cellValue(cl)
			cl.v = mk(f)
			return ctrlNext
		}
	}
	return func(f *frame) ctrl {
		f.regs[reg] = mk(f)
		return ctrlNext
	}
}

// exprsInto compiles code that evaluates es into n registers from r, as
// Lua adjusts an expression list to n values: extra values are evaluated
// and dropped, missing ones are nil, and a last call or "..." fills the
// rest. r must be the first free register; the registers stay reserved
// (the caller activates or releases them).
func (c *compiler) exprsInto(es []expr, r, n int) func(f *frame) {
	c.reserve(max(n, len(es)))
	var steps []func(f *frame)
	for i, e := range es {
		reg := r + i
		last := i == len(es)-1
		switch {
		case last && isMulti(e) && i < n:
			want := n - i
			multi := c.multi(e)
			steps = append(steps, func(f *frame) {
				vals := multi(f)
				copy(f.regs[reg:reg+want], vals)
				for j := len(vals); j < want; j++ {
					f.regs[reg+j] = Nil
				}
			})
		default:
			top := c.fs.top
			ev := c.expr(e)
			c.release(top)
			steps = append(steps, func(f *frame) { f.regs[reg] = ev(f) })
		}
	}
	for i := len(es); i < n; i++ {
		if len(es) > 0 && isMulti(es[len(es)-1]) {
			break
		}
		reg := r + i
		steps = append(steps, func(f *frame) { f.regs[reg] = Nil })
	}
	switch len(steps) {
	case 0:
		return func(*frame) {}
	case 1:
		return steps[0]
	}
	return func(f *frame) {
		for _, s := range steps {
			s(f)
		}
	}
}

// isMulti reports whether e may give many values (a call or "...").
func isMulti(e expr) bool {
	switch e.(type) {
	case *callExpr, *methodCallExpr, *varargExpr:
		return true
	}
	return false
}

// constantString returns e's value if it is a string constant.
func constantString(e expr) (string, bool) {
	if s, ok := e.(*stringExpr); ok {
		return s.value, true
	}
	return "", false
}

// nameOf is how Lua's messages name the value of e, if they do.
func (c *compiler) nameOf(e expr) operand {
	switch e := e.(type) {
	case *nameExpr:
		res := c.r.names[e]
		switch res.kind {
		case nameLocal:
			return operand{nameLocal, e.name}
		case nameUpvalue:
			return operand{nameUpvalue, e.name}
		}
		return operand{nameGlobal, e.name}
	case *indexExpr:
		if k, ok := constantString(e.key); ok {
			return operand{nameField, k}
		}
		return operand{nameField, "?"}
	}
	return operand{}
}
