package lua

import (
	"strings"
	"unsafe"
)

// Expressions: each compiles to a function of the frame that returns the
// value; calls and "..." also to one that returns all their values, and
// conditions to one that returns a Go bool.

type exprFunc func(f *frame) Value

func (c *compiler) expr(e expr) exprFunc {
	switch e := e.(type) {
	case *nilExpr:
		return func(*frame) Value { return Nil }
	case *trueExpr:
		return func(*frame) Value { return True }
	case *falseExpr:
		return func(*frame) Value { return False }
	case *numberExpr:
		return c.constant(e.value)
	case *stringExpr:
		v := String(e.value)
		return func(*frame) Value { return v }
	case *varargExpr:
		return func(f *frame) Value {
			if len(f.varargs) > 0 {
				return f.varargs[0]
			}
			return Nil
		}
	case *nameExpr:
		return c.name(e)
	case *indexExpr:
		return c.index(e)
	case *callExpr, *methodCallExpr:
		call := c.call(e)
		return func(f *frame) Value {
			if call(f) == 0 {
				return Nil
			}
			return f.L.ret[0]
		}
	case *parenExpr:
		return c.expr(e.inner)
	case *functionExpr:
		return c.closure(e.fn)
	case *binaryExpr:
		if v, ok := fold(e); ok {
			return c.constant(v)
		}
		return c.binary(e)
	case *unaryExpr:
		if v, ok := fold(e); ok {
			return c.constant(v)
		}
		return c.unary(e)
	case *tableExpr:
		return c.table(e)
	}
	panic("lua: unknown expression")
}

// constant is a numeric constant of the function being compiled.
func (c *compiler) constant(f float64) exprFunc {
	v := Number(c.constValue(f))
	return func(*frame) Value { return v }
}

// constValue is f as the function's constant table holds it.
func (c *compiler) constValue(f float64) float64 {
	if f == 0 {
		if fs := c.fs; fs.zeroSeen {
			return fs.zero
		} else {
			fs.zero, fs.zeroSeen = f, true
		}
	}
	return f
}

// fold is e's value when Lua 5.1 folds it at compile time (lcode.c's
// constfolding): arithmetic on numeric constants, except a division or
// modulo by zero and anything giving NaN.
func fold(e expr) (float64, bool) {
	switch e := e.(type) {
	case *numberExpr:
		return e.value, true
	case *unaryExpr:
		if e.op != opNeg {
			return 0, false
		}
		if v, ok := fold(e.operand); ok {
			return -v, true
		}
	case *binaryExpr:
		op, ok := arithOps[e.op]
		if !ok {
			return 0, false
		}
		a, okA := fold(e.left)
		b, okB := fold(e.right)
		if !okA || !okB || b == 0 && (e.op == opDiv || e.op == opMod) {
			return 0, false
		}
		if r := op.fn(a, b); r == r {
			return r, true
		}
	}
	return 0, false
}

func (c *compiler) name(e *nameExpr) exprFunc {
	res := c.r.names[e]
	switch res.kind {
	case nameLocal:
		reg := res.local.reg
		if res.local.captured {
			return func(f *frame) Value { return f.regs[reg].asCell().v }
		}
		return func(f *frame) Value { return f.regs[reg] }
	case nameUpvalue:
		up := res.up
		return func(f *frame) Value { return f.fn.upvals[up].v }
	}
	key, h, kv, ln := e.name, stringHash(e.name), String(e.name), int32(e.line)
	return func(f *frame) Value {
		env := f.fn.env
		if v := env.getStrHash(key, h); !v.IsNil() || env.meta == nil {
			return v
		}
		f.line = ln
		return f.L.index(TableValue(env), kv, operand{})
	}
}

func (c *compiler) index(e *indexExpr) exprFunc {
	obj := c.expr(e.obj)
	o := c.nameOf(e.obj)
	ln := int32(e.line)
	if k, ok := constantString(e.key); ok {
		h, kv := stringHash(k), String(k)
		return func(f *frame) Value {
			v := obj(f)
			if t := v.AsTable(); t != nil {
				if r := t.getStrHash(k, h); !r.IsNil() || t.meta == nil {
					return r
				}
			}
			f.line = ln
			return f.L.index(v, kv, o)
		}
	}
	key := c.expr(e.key)
	return func(f *frame) Value {
		v := obj(f)
		k := key(f)
		if t := v.AsTable(); t != nil {
			if r := t.Get(k); !r.IsNil() || t.meta == nil {
				return r
			}
		}
		f.line = ln
		return f.L.index(v, k, o)
	}
}

// functionBytes is a closure's size, for collectgarbage("count").
const functionBytes = int(unsafe.Sizeof(Function{}))

// multi compiles a call or "..." for where all its values are wanted; the
// slice is valid until the next call.
func (c *compiler) multi(e expr) func(f *frame) []Value {
	if _, ok := e.(*varargExpr); ok {
		return func(f *frame) []Value { return f.varargs }
	}
	call := c.call(e)
	return func(f *frame) []Value {
		n := call(f)
		return f.L.ret[:n]
	}
}

// closure compiles a function expression: the function is made with its
// upvalues, the cells of the enclosing function's locals or its own
// upvalues.
func (c *compiler) closure(fb *funcBody) exprFunc {
	p := c.function(fb)
	ups := c.r.funcs[fb].upvals
	if len(ups) == 0 {
		return func(f *frame) Value {
			f.L.noteAlloc(functionBytes)
			return FunctionValue(&Function{proto: p, env: f.fn.env})
		}
	}
	type source struct {
		reg, up int // reg >= 0: a local's cell; else upvalue up
	}
	srcs := make([]source, len(ups))
	for i, u := range ups {
		if u.fromLocal != nil {
			srcs[i] = source{reg: u.fromLocal.reg}
		} else {
			srcs[i] = source{reg: -1, up: u.fromUp}
		}
	}
	return func(f *frame) Value {
		f.L.noteAlloc(functionBytes + 8*len(srcs))
		cl := &Function{proto: p, env: f.fn.env, upvals: make([]*cell, len(srcs))}
		for i, s := range srcs {
			if s.reg >= 0 {
				cl.upvals[i] = f.regs[s.reg].asCell()
			} else {
				cl.upvals[i] = f.fn.upvals[s.up]
			}
		}
		return FunctionValue(cl)
	}
}

func (c *compiler) binary(e *binaryExpr) exprFunc {
	switch e.op {
	case opAnd:
		l, r := c.expr(e.left), c.expr(e.right)
		return func(f *frame) Value {
			if a := l(f); !a.Truthy() {
				return a
			}
			return r(f)
		}
	case opOr:
		l, r := c.expr(e.left), c.expr(e.right)
		return func(f *frame) Value {
			if a := l(f); a.Truthy() {
				return a
			}
			return r(f)
		}
	case opEq, opNe, opLt, opLe, opGt, opGe:
		cond := c.cond(e)
		return func(f *frame) Value { return Bool(cond(f)) }
	case opConcat:
		return c.concat(e)
	}
	return c.arith(e)
}

var arithOps = map[binaryOp]*arithOp{opAdd: arithAdd, opSub: arithSub, opMul: arithMul, opDiv: arithDiv,
	opMod: arithMod, opPow: arithPow}

func (c *compiler) arith(e *binaryExpr) exprFunc {
	op := arithOps[e.op]
	oa, ob := c.nameOf(e.left), c.nameOf(e.right)
	ln := int32(e.line)
	slow := func(f *frame, a, b Value) Value {
		f.line = ln
		return f.L.arith(op, a, b, oa, ob)
	}
	l := c.expr(e.left)
	if n, ok := e.right.(*numberExpr); ok {
		// the common "x + 1"
		y := c.constValue(n.value)
		bv := Number(y)
		switch e.op {
		case opAdd:
			return func(f *frame) Value {
				if a := l(f); a.p == numberTagP {
					return Number(a.num() + y)
				} else {
					return slow(f, a, bv)
				}
			}
		case opSub:
			return func(f *frame) Value {
				if a := l(f); a.p == numberTagP {
					return Number(a.num() - y)
				} else {
					return slow(f, a, bv)
				}
			}
		}
		fn := op.fn
		return func(f *frame) Value {
			if a := l(f); a.p == numberTagP {
				return Number(fn(a.num(), y))
			} else {
				return slow(f, a, bv)
			}
		}
	}
	r := c.expr(e.right)
	switch e.op {
	case opAdd:
		return func(f *frame) Value {
			a, b := l(f), r(f)
			if a.p == numberTagP && b.p == numberTagP {
				return Number(a.num() + b.num())
			}
			return slow(f, a, b)
		}
	case opSub:
		return func(f *frame) Value {
			a, b := l(f), r(f)
			if a.p == numberTagP && b.p == numberTagP {
				return Number(a.num() - b.num())
			}
			return slow(f, a, b)
		}
	case opMul:
		return func(f *frame) Value {
			a, b := l(f), r(f)
			if a.p == numberTagP && b.p == numberTagP {
				return Number(a.num() * b.num())
			}
			return slow(f, a, b)
		}
	}
	fn := op.fn
	return func(f *frame) Value {
		a, b := l(f), r(f)
		if a.p == numberTagP && b.p == numberTagP {
			return Number(fn(a.num(), b.num()))
		}
		return slow(f, a, b)
	}
}

// concat compiles a chain a .. b .. c (right-associative) as Lua's one
// CONCAT over all the operands.
func (c *compiler) concat(e *binaryExpr) exprFunc {
	var operands []expr
	for {
		operands = append(operands, e.left)
		next, ok := e.right.(*binaryExpr)
		if !ok || next.op != opConcat {
			operands = append(operands, e.right)
			break
		}
		e = next
	}
	evs := make([]exprFunc, len(operands))
	names := make([]operand, len(operands))
	for i, o := range operands {
		evs[i] = c.expr(o)
		names[i] = c.nameOf(o)
	}
	ln := int32(e.line)
	if len(evs) == 2 {
		l, r := evs[0], evs[1]
		return func(f *frame) Value {
			a, b := l(f), r(f)
			if a.IsString() && b.IsString() {
				f.L.noteAlloc(int(a.n&lenMask + b.n&lenMask))
				return String(a.str() + b.str())
			}
			f.line = ln
			return f.L.concatValues([]Value{a, b}, names)
		}
	}
	return func(f *frame) Value {
		vals := make([]Value, len(evs))
		size, simple := 0, true
		for i, ev := range evs {
			v := ev(f)
			vals[i] = v
			if v.IsString() {
				size += int(v.n & lenMask)
			} else {
				simple = false
			}
		}
		if simple {
			f.L.noteAlloc(size)
			var b strings.Builder
			b.Grow(size)
			for _, v := range vals {
				b.WriteString(v.str())
			}
			return String(b.String())
		}
		f.line = ln
		return f.L.concatValues(vals, names)
	}
}

// concatValues concatenates as Lua's luaV_concat: from the right, runs of
// strings and numbers at once, anything else through __concat, in pairs.
func (L *State) concatValues(vals []Value, names []operand) Value {
	top := len(vals)
	for top > 1 {
		a, b := vals[top-2], vals[top-1]
		sb, okB := b.ToString()
		if !(a.IsString() || a.IsNumber()) || !okB {
			vals[top-2] = L.concat(a, b, names[top-2], names[top-1])
			top--
			continue
		}
		vals[top-1] = String(sb)
		n := 1
		for n < top {
			s, ok := vals[top-n-1].ToString()
			if !ok {
				break
			}
			vals[top-n-1] = String(s)
			n++
		}
		var buf strings.Builder
		for i := top - n; i < top; i++ {
			buf.WriteString(vals[i].str())
		}
		vals[top-n] = String(buf.String())
		top -= n - 1
	}
	return vals[0]
}

func (c *compiler) unary(e *unaryExpr) exprFunc {
	o := c.nameOf(e.operand)
	ln := int32(e.line)
	switch e.op {
	case opNot:
		cond := c.cond(e.operand)
		return func(f *frame) Value { return Bool(!cond(f)) }
	case opNeg:
		if n, ok := e.operand.(*numberExpr); ok {
			v := Number(-n.value)
			return func(*frame) Value { return v }
		}
		ev := c.expr(e.operand)
		return func(f *frame) Value {
			v := ev(f)
			if v.p == numberTagP {
				return Number(-v.num())
			}
			f.line = ln
			return f.L.arith(arithUnm, v, v, o, o)
		}
	}
	ev := c.expr(e.operand)
	return func(f *frame) Value {
		v := ev(f)
		if t := v.AsTable(); t != nil {
			return Number(float64(t.Len()))
		}
		f.line = ln
		return f.L.length(v, o)
	}
}

// cond compiles e for its truth.
func (c *compiler) cond(e expr) func(f *frame) bool {
	switch e := e.(type) {
	case *trueExpr:
		return func(*frame) bool { return true }
	case *falseExpr, *nilExpr:
		return func(*frame) bool { return false }
	case *unaryExpr:
		if e.op == opNot {
			inner := c.cond(e.operand)
			return func(f *frame) bool { return !inner(f) }
		}
	case *binaryExpr:
		switch e.op {
		case opAnd:
			l, r := c.cond(e.left), c.cond(e.right)
			return func(f *frame) bool { return l(f) && r(f) }
		case opOr:
			l, r := c.cond(e.left), c.cond(e.right)
			return func(f *frame) bool { return l(f) || r(f) }
		case opEq, opNe:
			return c.equality(e)
		case opLt, opLe, opGt, opGe:
			return c.order(e)
		}
	}
	ev := c.expr(e)
	return func(f *frame) bool { return ev(f).Truthy() }
}

func (c *compiler) equality(e *binaryExpr) func(f *frame) bool {
	l := c.expr(e.left)
	ln := int32(e.line)
	ne := e.op == opNe
	if s, ok := constantString(e.right); ok {
		// the common "x == 'literal'"
		return func(f *frame) bool {
			a := l(f)
			return (a.IsString() && a.str() == s) != ne
		}
	}
	r := c.expr(e.right)
	return func(f *frame) bool {
		a, b := l(f), r(f)
		if a.p == numberTagP && b.p == numberTagP {
			return (a.num() == b.num()) != ne
		}
		if RawEqual(a, b) {
			return !ne
		}
		if t := a.Type(); t != TypeTable && t != TypeUserdata {
			return ne
		}
		f.line = ln
		return f.L.Equal(a, b) != ne
	}
}

func (c *compiler) order(e *binaryExpr) func(f *frame) bool {
	l, r := c.expr(e.left), c.expr(e.right)
	ln := int32(e.line)
	// a > b is b < a, and a >= b is b <= a, as Lua compiles them.
	swap := e.op == opGt || e.op == opGe
	less := e.op == opLt || e.op == opGt
	return func(f *frame) bool {
		a, b := l(f), r(f)
		if swap {
			a, b = b, a
		}
		if a.p == numberTagP && b.p == numberTagP {
			if less {
				return a.num() < b.num()
			}
			return a.num() <= b.num()
		}
		f.line = ln
		if less {
			return f.L.lessSlow(a, b)
		}
		return f.L.LessEqual(a, b)
	}
}
