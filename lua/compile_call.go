package lua

import "unsafe"

// Calls and table constructors.

// callParts compiles what a call evaluates: the function (and, for a
// method call, the object as the first argument) and the arguments, into
// registers. eval evaluates them all and returns the function and the
// argument list (in registers, or in a window when a last call or "..."
// adds values; release frees that window).
type callParts struct {
	eval func(f *frame) (fn Value, args []Value, window bool)
	site *callSite
}

func (c *compiler) callParts(e expr) callParts {
	top := c.fs.top
	var fnE exprFunc
	var objE exprFunc
	var method string
	var args []expr
	site := &callSite{}
	switch e := e.(type) {
	case *callExpr:
		fnE, args = c.expr(e.fn), e.args
		o := c.nameOf(e.fn)
		site.kind, site.name, site.line = o.kind, o.name, int32(e.line)
	case *methodCallExpr:
		objE, method, args = c.expr(e.obj), e.name, e.args
		site.kind, site.name, site.line = nameMethod, e.name, int32(e.line)
	}
	self := 0
	if objE != nil {
		self = 1
	}
	nfixed := len(args)
	var multi func(f *frame) []Value
	if nfixed > 0 && isMulti(args[nfixed-1]) {
		nfixed--
	}
	base := c.reserve(self + nfixed)
	evs := make([]exprFunc, nfixed)
	for i := 0; i < nfixed; i++ {
		evs[i] = c.expr(args[i])
	}
	if nfixed < len(args) {
		multi = c.multi(args[nfixed])
	}
	c.release(top)
	n := self + nfixed
	var fnOf func(f *frame) Value
	if objE != nil {
		kv, h, ln := String(method), stringHash(method), site.line
		o := c.nameOf(e.(*methodCallExpr).obj) // "attempt to index local 'x'"
		fnOf = func(f *frame) Value {
			obj := objE(f)
			f.regs[base] = obj
			if t := obj.AsTable(); t != nil {
				if r := t.getStrHash(method, h); !r.IsNil() || t.meta == nil {
					return r
				}
			}
			f.line = ln
			return f.L.index(obj, kv, o)
		}
	} else {
		fnOf = fnE
	}
	p := callParts{site: site}
	switch {
	case multi == nil:
		p.eval = func(f *frame) (Value, []Value, bool) {
			fn := fnOf(f)
			for i, ev := range evs {
				f.regs[base+self+i] = ev(f)
			}
			return fn, f.regs[base : base+n], false
		}
	case n == 0:
		p.eval = func(f *frame) (Value, []Value, bool) {
			fn := fnOf(f)
			return fn, multi(f), false
		}
	default:
		p.eval = func(f *frame) (Value, []Value, bool) {
			fn := fnOf(f)
			for i, ev := range evs {
				f.regs[base+self+i] = ev(f)
			}
			more := multi(f)
			w := f.L.regs.alloc(n + len(more))
			copy(w, f.regs[base:base+n])
			copy(w[n:], more)
			return fn, w, true
		}
	}
	return p
}

// call compiles a call; the compiled code returns how many results are in
// L.ret.
func (c *compiler) call(e expr) func(f *frame) int {
	p := c.callParts(e)
	eval, site := p.eval, p.site
	return func(f *frame) int {
		fn, args, window := eval(f)
		f.line = site.line
		n := f.L.call(fn, args, site)
		if window {
			f.L.regs.free(args)
		}
		return n
	}
}

// tailCall compiles "return call": a Lua function runs in the caller's
// place (callLua's loop), anything else is called and its results
// returned.
func (c *compiler) tailCall(e expr) blockFunc {
	p := c.callParts(e)
	eval, site := p.eval, p.site
	return func(f *frame) ctrl {
		fn, args, window := eval(f)
		f.line = site.line
		L := f.L
		g := fn.AsFunction()
		callee := fn
		if g == nil {
			// A table called through __call is tail-called too.
			if tm := L.metaField(fn, "__call"); tm.AsFunction() != nil && tm.AsFunction().proto != nil {
				g, callee = tm.AsFunction(), tm
			}
		}
		if g != nil && g.proto != nil {
			L.tail.fn, L.tail.site = callee, site
			L.tail.args = L.tail.args[:0]
			if callee != fn {
				L.tail.args = append(L.tail.args, fn)
			}
			L.tail.args = append(L.tail.args, args...)
			if window {
				L.regs.free(args)
			}
			return ctrlTailCall
		}
		L.call(fn, args, site)
		if window {
			L.regs.free(args)
		}
		return ctrlReturn
	}
}

// tableTemplate compiles a constructor whose layout does not depend on
// what its fields evaluate to, built once at compile time: one whose keys
// are constants and whose values can never be nil (a nil value leaves its
// node free for a later key, which moves the layout). If its values are
// constants too, every evaluation shares the template's parts until it is
// first written to (copy on write); else each copies the layout and stores
// its values in their slots. It returns nil for any other constructor.
func (c *compiler) tableTemplate(e *tableExpr) exprFunc {
	type field struct {
		value exprFunc
		slot  int // < 0: node -slot-1; else array index
	}
	allConst := true
	tmpl := NewTable(e.narray, e.nhash)
	npos := 0
	for i, fl := range e.fields {
		if i == len(e.fields)-1 && isMulti(fl.value) {
			return nil
		}
		v, isConst, nonNil := c.staticValue(fl.value)
		if !nonNil {
			return nil
		}
		allConst = allConst && isConst
		if fl.key == nil {
			npos++
			if npos > len(tmpl.array) || !tmpl.array[npos-1].IsNil() {
				return nil // stored at a flush after a keyed field wrote its slot
			}
			tmpl.array[npos-1] = v
			continue
		}
		k, isConst, _ := c.staticValue(fl.key)
		if !isConst || k.IsNil() {
			return nil
		}
		if f, ok := k.AsNumber(); ok && (f != f || arrayIndex(f) > 0 && arrayIndex(f) <= npos) {
			return nil
		}
		*tmpl.slot(k) = v
	}
	if allConst {
		tmpl.shared = true
		size := int(unsafe.Sizeof(Table{}))
		return func(f *frame) Value {
			f.L.noteAlloc(size)
			t := *tmpl
			return TableValue(&t)
		}
	}
	// Each field's slot in the template's layout.
	fields := make([]field, len(e.fields))
	npos = 0
	for i, fl := range e.fields {
		fields[i].value = c.expr(fl.value)
		if fl.key == nil {
			fields[i].slot = npos
			npos++
			continue
		}
		k, _, _ := c.staticValue(fl.key)
		if f, ok := k.AsNumber(); ok {
			if j := arrayIndex(f); j > 0 && j <= len(tmpl.array) {
				fields[i].slot = j - 1
				continue
			}
		}
		fields[i].slot = -tmpl.find(k) - 1
	}
	return func(f *frame) Value {
		t := &Table{lastFree: tmpl.lastFree}
		if tmpl.array != nil {
			t.array = make([]Value, len(tmpl.array))
		}
		if tmpl.node != nil {
			t.node = append([]node(nil), tmpl.node...)
		}
		f.L.noteAlloc(t.bytes())
		for _, fl := range fields {
			v := fl.value(f)
			if fl.slot >= 0 {
				t.array[fl.slot] = v
			} else {
				t.node[-fl.slot-1].val = v
			}
		}
		return TableValue(t)
	}
}

// staticValue is what the compiler knows of e's value: the value itself
// for a constant (isConst), and whether it can never be nil.
func (c *compiler) staticValue(e expr) (v Value, isConst, nonNil bool) {
	switch e := e.(type) {
	case *stringExpr:
		return String(e.value), true, true
	case *numberExpr:
		return Number(c.constValue(e.value)), true, true
	case *trueExpr:
		return True, true, true
	case *falseExpr:
		return False, true, true
	case *tableExpr, *functionExpr:
		return True, false, true
	case *binaryExpr, *unaryExpr:
		if f, ok := fold(e); ok {
			return Number(c.constValue(f)), true, true
		}
	}
	return Nil, false, false
}

// fieldsPerFlush is Lua's LFIELDS_PER_FLUSH: a constructor stores its
// positional items in batches this large.
const fieldsPerFlush = 50

// table compiles a constructor as Lua 5.1 runs it: the table made with
// the sizes the constructor counted (rounded as Lua encodes them), keyed
// fields stored as they come, positional items in batches of 50 and at
// the end, a last call or "..." adding all its values.
func (c *compiler) table(e *tableExpr) exprFunc {
	if t := c.tableTemplate(e); t != nil {
		return t
	}
	na, nh := e.narray, e.nhash // already rounded as Lua rounds them
	ln := int32(e.line)
	top := c.fs.top
	npos := 0
	for _, fl := range e.fields {
		if fl.key == nil {
			npos++
		}
	}
	base := c.reserve(min(npos, fieldsPerFlush))
	type step func(f *frame, t *Table)
	var steps []step
	pending, stored := 0, 0
	flush := func() {
		if pending == 0 {
			return
		}
		n, first := pending, stored+1
		steps = append(steps, func(f *frame, t *Table) {
			for i := n - 1; i >= 0; i-- {
				t.SetInt(first+i, f.regs[base+i])
			}
		})
		stored += pending
		pending = 0
	}
	for i, fl := range e.fields {
		if pending == fieldsPerFlush {
			flush()
		}
		if ks, ok := constantString(fl.key); ok {
			h, v := stringHash(ks), c.expr(fl.value)
			steps = append(steps, func(f *frame, t *Table) { t.setStrHash(ks, h, v(f)) })
			continue
		}
		if fl.key != nil {
			k, v := c.expr(fl.key), c.expr(fl.value)
			steps = append(steps, func(f *frame, t *Table) {
				kv := k(f)
				vv := v(f)
				f.line = ln
				*f.L.slot(t, kv) = vv
			})
			continue
		}
		if i == len(e.fields)-1 && isMulti(fl.value) {
			flush()
			multi := c.multi(fl.value)
			first := stored + 1
			steps = append(steps, func(f *frame, t *Table) {
				vals := multi(f)
				if last := first + len(vals) - 1; last > len(t.array) {
					t.resizeArray(last)
				}
				for j, v := range vals {
					t.SetInt(first+j, v)
				}
			})
			continue
		}
		reg := base + pending
		v := c.expr(fl.value)
		steps = append(steps, func(f *frame, t *Table) { f.regs[reg] = v(f) })
		pending++
	}
	flush()
	c.release(top)
	return func(f *frame) Value {
		t := NewTable(na, nh)
		f.L.noteAlloc(t.bytes())
		for _, s := range steps {
			s(f, t)
		}
		return TableValue(t)
	}
}
