package lua

// Statements: assignment, control flow, loops and return.

// assign compiles "targets = exprs". Lua 5.1 evaluates the targets' tables
// and keys first, then the values, then assigns from the last target to
// the first.
func (c *compiler) assign(s *assignStmt) blockFunc {
	if len(s.targets) == 1 && len(s.exprs) == 1 {
		return c.assignOne(s.targets[0], s.exprs[0], s.line)
	}
	top := c.reserve(0)
	targets := make([]assignTarget, len(s.targets))
	for i, t := range s.targets {
		targets[i] = c.target(t, s.line)
	}
	r := c.reserve(0)
	fill := c.exprsInto(s.exprs, r, len(s.targets))
	c.release(top)
	return func(f *frame) ctrl {
		for _, t := range targets {
			if t.prepare != nil {
				t.prepare(f)
			}
		}
		fill(f)
		for i := len(targets) - 1; i >= 0; i-- {
			targets[i].store(f, f.regs[r+i])
		}
		return ctrlNext
	}
}

// assignTarget is one target of a multiple assignment: prepare evaluates
// an indexed target's table and key (into registers it reserved), store
// assigns.
type assignTarget struct {
	prepare func(f *frame)
	store   func(f *frame, v Value)
}

func (c *compiler) target(t expr, line int) assignTarget {
	ix, ok := t.(*indexExpr)
	if !ok {
		return assignTarget{store: c.nameStore(t.(*nameExpr), line)}
	}
	regs := c.reserve(2)
	obj, key := c.expr(ix.obj), c.expr(ix.key)
	o := c.nameOf(ix.obj)
	ln := int32(line)
	return assignTarget{
		prepare: func(f *frame) {
			f.regs[regs] = obj(f)
			f.regs[regs+1] = key(f)
		},
		store: func(f *frame, v Value) {
			f.line = ln
			f.L.setIndex(f.regs[regs], f.regs[regs+1], v, o)
		},
	}
}

// nameStore compiles an assignment to a variable.
func (c *compiler) nameStore(t *nameExpr, line int) func(f *frame, v Value) {
	res := c.r.names[t]
	switch res.kind {
	case nameLocal:
		reg := res.local.reg
		if res.local.captured {
			return func(f *frame, v Value) { f.regs[reg].asCell().v = v }
		}
		return func(f *frame, v Value) { f.regs[reg] = v }
	case nameUpvalue:
		up := res.up
		return func(f *frame, v Value) { f.fn.upvals[up].v = v }
	}
	key := String(t.name)
	ln := int32(line)
	return func(f *frame, v Value) {
		if env := f.fn.env; !env.readonly && env.meta == nil {
			*env.slot(key) = v
			return
		}
		f.line = ln
		f.L.setIndex(TableValue(f.fn.env), key, v, operand{})
	}
}

// assignOne compiles the common "target = expr".
func (c *compiler) assignOne(t expr, e expr, line int) blockFunc {
	if n, ok := t.(*nameExpr); ok {
		res := c.r.names[n]
		ev := c.expr(e)
		if res.kind == nameLocal && !res.local.captured {
			reg := res.local.reg
			return func(f *frame) ctrl {
				f.regs[reg] = ev(f)
				return ctrlNext
			}
		}
		store := c.nameStore(n, line)
		return func(f *frame) ctrl {
			store(f, ev(f))
			return ctrlNext
		}
	}
	ix := t.(*indexExpr)
	obj := c.expr(ix.obj)
	o := c.nameOf(ix.obj)
	ln := int32(line)
	if k, ok := constantString(ix.key); ok {
		key := String(k)
		ev := c.expr(e)
		return func(f *frame) ctrl {
			tv := obj(f)
			v := ev(f)
			if t := tv.AsTable(); t != nil && !t.readonly {
				if t.meta == nil {
					*t.slot(key) = v
					return ctrlNext
				}
				if slot := t.existingSlot(key); slot != nil && !slot.IsNil() {
					*slot = v
					t.noMeta = 0
					return ctrlNext
				}
			}
			f.line = ln
			f.L.setIndex(tv, key, v, o)
			return ctrlNext
		}
	}
	key := c.expr(ix.key)
	ev := c.expr(e)
	return func(f *frame) ctrl {
		tv, kv := obj(f), key(f)
		v := ev(f)
		f.line = ln
		f.L.setIndex(tv, kv, v, o)
		return ctrlNext
	}
}

// loopExit says whether a loop ends after its body ended with c, and
// what the loop statement then gives.
func loopExit(c ctrl) (ctrl, bool) {
	switch c {
	case ctrlBreak:
		return ctrlNext, true
	case ctrlReturn, ctrlTailCall:
		return c, true
	}
	return ctrlNext, false
}

// pollInterrupt raises a pending interrupt (SCRIPT KILL) at a loop's
// iteration, saying the loop's line.
func (f *frame) pollInterrupt(line int32) {
	if f.L.g.interrupt.Load() != nil {
		f.line = line
		f.L.checkInterrupt()
	}
}

func (c *compiler) while(s *whileStmt) blockFunc {
	cond := c.cond(s.cond)
	body := c.block(s.body)
	line := int32(s.line)
	return func(f *frame) ctrl {
		for cond(f) {
			f.pollInterrupt(line)
			if r, done := loopExit(body(f)); done {
				return r
			}
		}
		return ctrlNext
	}
}

// repeat compiles "repeat body until cond", cond in the body's scope.
func (c *compiler) repeat(s *repeatStmt) blockFunc {
	top := c.fs.top
	fns := make([]blockFunc, 0, len(s.body))
	for _, st := range s.body {
		fns = append(fns, c.stmt(st))
	}
	body := seq(fns)
	cond := c.cond(s.cond)
	c.fs.top = top
	line := int32(s.line)
	return func(f *frame) ctrl {
		for {
			f.pollInterrupt(line)
			if r, done := loopExit(body(f)); done {
				return r
			}
			if cond(f) {
				return ctrlNext
			}
		}
	}
}

func (c *compiler) ifStmt(s *ifStmt) blockFunc {
	conds := make([]func(*frame) bool, len(s.conds))
	blocks := make([]blockFunc, len(s.conds))
	for i := range s.conds {
		conds[i] = c.cond(s.conds[i])
		blocks[i] = c.block(s.blocks[i])
	}
	var els blockFunc
	if s.els != nil {
		els = c.block(s.els)
	}
	if len(conds) == 1 {
		cond, then := conds[0], blocks[0]
		if els == nil {
			return func(f *frame) ctrl {
				if cond(f) {
					return then(f)
				}
				return ctrlNext
			}
		}
		return func(f *frame) ctrl {
			if cond(f) {
				return then(f)
			}
			return els(f)
		}
	}
	return func(f *frame) ctrl {
		for i, cond := range conds {
			if cond(f) {
				return blocks[i](f)
			}
		}
		if els != nil {
			return els(f)
		}
		return ctrlNext
	}
}

// numericFor compiles "for v = a, b, c": Lua 5.1 converts the three
// (numeric strings too) once, then counts with floating-point additions.
func (c *compiler) numericFor(s *numericForStmt) blockFunc {
	start, limit := c.expr(s.start), c.expr(s.limit)
	var step func(*frame) Value
	if s.step != nil {
		step = c.expr(s.step)
	}
	top := c.fs.top
	ds := c.activate(s, c.reserve(0))
	reg, captured := ds[0].reg, ds[0].captured
	body := c.block(s.body)
	c.fs.top = top
	line := int32(s.line)
	return func(f *frame) ctrl {
		a, b := start(f), limit(f)
		st := Number(1)
		if step != nil {
			st = step(f)
		}
		f.line = line
		i, ok := a.ToNumber()
		if !ok {
			f.L.runtimeError("'for' initial value must be a number")
		}
		lim, ok := b.ToNumber()
		if !ok {
			f.L.runtimeError("'for' limit must be a number")
		}
		inc, ok := st.ToNumber()
		if !ok {
			f.L.runtimeError("'for' step must be a number")
		}
		// Lua starts one step back and adds before each test, so a
		// step of inf never runs (-inf + inf is NaN).
		for i -= inc; ; {
			i += inc
			if 0 < inc && !(i <= lim) || !(0 < inc) && !(lim <= i) {
				break
			}
			f.pollInterrupt(line)
			if captured {
				f.regs[reg] = cellValue(&cell{Number(i)})
			} else {
				f.regs[reg] = Number(i)
			}
			if r, done := loopExit(body(f)); done {
				return r
			}
		}
		return ctrlNext
	}
}

// genericForSite is how messages name a generic for's iterator.
var genericForSite = callSite{kind: nameLocal, name: "(for generator)", anonymous: true}

// genericFor compiles "for names in exprs": the iterator function, its
// state and the control variable, then a call per iteration.
func (c *compiler) genericFor(s *genericForStmt) blockFunc {
	top := c.fs.top
	r := c.reserve(0)
	fill := c.exprsInto(s.exprs, r, 3)
	ds := c.activate(s, c.reserve(0))
	first := ds[0].reg
	cells := cellRegs(ds)
	n := len(ds)
	body := c.block(s.body)
	c.fs.top = top
	site := genericForSite
	site.line = int32(s.line)
	return func(f *frame) ctrl {
		fill(f)
		L := f.L
		for {
			f.pollInterrupt(site.line)
			f.line = site.line
			got := L.call(f.regs[r], f.regs[r+1:r+3], &site)
			first0 := Nil
			if got > 0 {
				first0 = L.ret[0]
			}
			if first0.IsNil() {
				return ctrlNext
			}
			f.regs[r+2] = first0
			for i := 0; i < n; i++ {
				if i < got {
					f.regs[first+i] = L.ret[i]
				} else {
					f.regs[first+i] = Nil
				}
			}
			if cells != nil {
				boxCells(f, cells)
			}
			if r, done := loopExit(body(f)); done {
				return r
			}
		}
	}
}

// returnStmt compiles "return exprs": the values go to L.ret; a lone call
// is a tail call.
func (c *compiler) returnStmt(s *returnStmt) blockFunc {
	switch len(s.exprs) {
	case 0:
		return func(f *frame) ctrl {
			f.L.ret = f.L.ret[:0]
			return ctrlReturn
		}
	case 1:
		e := s.exprs[0]
		switch e := e.(type) {
		case *callExpr, *methodCallExpr:
			return c.tailCall(e)
		case *varargExpr:
			return func(f *frame) ctrl {
				f.L.ret = append(f.L.ret[:0], f.varargs...)
				return ctrlReturn
			}
		}
		ev := c.expr(e)
		return func(f *frame) ctrl {
			v := ev(f)
			f.L.ret = append(f.L.ret[:0], v)
			return ctrlReturn
		}
	}
	top := c.fs.top
	r := c.reserve(0)
	n := len(s.exprs)
	last := s.exprs[n-1]
	if isMulti(last) {
		fill := c.exprsInto(s.exprs[:n-1], r, n-1)
		multi := c.multi(last)
		c.release(top)
		return func(f *frame) ctrl {
			fill(f)
			vals := multi(f)
			L := f.L
			fixed := f.regs[r : r+n-1]
			if k := len(vals); k > 0 && len(L.ret) > 0 && &vals[0] == &L.ret[0] {
				// the call's results are in L.ret already: make room in
				// front of them
				L.ret = append(L.ret[:k], fixed...)
				copy(L.ret[n-1:], L.ret[:k])
				copy(L.ret, fixed)
				return ctrlReturn
			}
			L.ret = append(append(L.ret[:0], fixed...), vals...)
			return ctrlReturn
		}
	}
	fill := c.exprsInto(s.exprs, r, n)
	c.release(top)
	return func(f *frame) ctrl {
		fill(f)
		f.L.ret = append(f.L.ret[:0], f.regs[r:r+n]...)
		return ctrlReturn
	}
}
