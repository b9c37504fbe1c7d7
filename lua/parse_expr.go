package lua

// Expressions, as lparser.c reads them.

// expKind is what a primary expression can be used as: an assignment
// target, a call statement, or neither.
type expKind uint8

const (
	kindOther expKind = iota
	kindVar
	kindCall
)

// binaryPriority is Lua 5.1's left and right priority of each binary
// operator, in binaryOp's order: a right priority below the left one makes
// the operator right-associative.
var binaryPriority = [...]struct{ left, right int }{
	opAdd: {6, 6}, opSub: {6, 6},
	opMul: {7, 7}, opDiv: {7, 7}, opMod: {7, 7},
	opPow:    {10, 9},
	opConcat: {5, 4},
	opEq:     {3, 3}, opNe: {3, 3}, opLt: {3, 3}, opLe: {3, 3}, opGt: {3, 3}, opGe: {3, 3},
	opAnd: {2, 2},
	opOr:  {1, 1},
}

// unaryPriority binds unary operators tighter than all binary ones but ^.
const unaryPriority = 8

func binaryOpOf(t token) (binaryOp, bool) {
	switch t {
	case '+':
		return opAdd, true
	case '-':
		return opSub, true
	case '*':
		return opMul, true
	case '/':
		return opDiv, true
	case '%':
		return opMod, true
	case '^':
		return opPow, true
	case tkConcat:
		return opConcat, true
	case tkNe:
		return opNe, true
	case tkEq:
		return opEq, true
	case '<':
		return opLt, true
	case tkLe:
		return opLe, true
	case '>':
		return opGt, true
	case tkGe:
		return opGe, true
	case tkAnd:
		return opAnd, true
	case tkOr:
		return opOr, true
	}
	return 0, false
}

func unaryOpOf(t token) (unaryOp, bool) {
	switch t {
	case tkNot:
		return opNot, true
	case '-':
		return opNeg, true
	case '#':
		return opLen, true
	}
	return 0, false
}

func (p *parser) expr() expr {
	e, _, _ := p.subExpr(0)
	return e
}

// subExpr reads operands and the operators binding tighter than limit;
// it returns the first operator it left unread.
func (p *parser) subExpr(limit int) (expr, binaryOp, bool) {
	p.enterLevel()
	var e expr
	if uop, ok := unaryOpOf(p.lx.tok.t); ok {
		p.lx.next()
		operand, _, _ := p.subExpr(unaryPriority)
		e = &unaryExpr{op: uop, operand: operand, line: p.lx.lastLine}
	} else {
		e = p.simpleExp()
	}
	op, ok := binaryOpOf(p.lx.tok.t)
	for ok && binaryPriority[op].left > limit {
		p.lx.next()
		right, nextOp, nextOK := p.subExpr(binaryPriority[op].right)
		e = &binaryExpr{op: op, left: e, right: right, line: p.lx.lastLine}
		op, ok = nextOp, nextOK
	}
	p.leaveLevel()
	return e, op, ok
}

func (p *parser) simpleExp() expr {
	var e expr
	switch tok := p.lx.tok; tok.t {
	case tkNumber:
		e = &numberExpr{value: tok.num}
	case tkString:
		e = &stringExpr{value: tok.str}
	case tkNil:
		e = &nilExpr{}
	case tkTrue:
		e = &trueExpr{}
	case tkFalse:
		e = &falseExpr{}
	case tkDots:
		if !p.fs.vararg {
			p.lx.syntaxError("cannot use '...' outside a vararg function")
		}
		e = &varargExpr{line: tok.line}
	case '{':
		return p.constructor()
	case tkFunction:
		p.lx.next()
		return &functionExpr{fn: p.body(false, p.lx.line)}
	default:
		e, _ = p.primaryExp()
		return e
	}
	p.lx.next()
	return e
}

// primaryExp reads a name or a parenthesized expression and the fields,
// indexes and calls after it.
func (p *parser) primaryExp() (expr, expKind) {
	var e expr
	var kind expKind
	switch p.lx.tok.t {
	case '(':
		line := p.lx.line
		p.lx.next()
		inner := p.expr()
		p.checkMatch(')', '(', line)
		// Parentheses matter only to cut many values to one.
		switch inner.(type) {
		case *callExpr, *methodCallExpr, *varargExpr:
			e = &parenExpr{inner: inner}
		default:
			e = inner
		}
	case tkName:
		name, line := p.checkName()
		p.resolve(p.fs, name)
		e, kind = &nameExpr{name: name, line: line}, kindVar
	default:
		p.lx.syntaxError("unexpected symbol")
	}
	for {
		switch p.lx.tok.t {
		case '.':
			p.lx.next()
			key, line := p.checkName()
			e, kind = &indexExpr{obj: e, key: &stringExpr{value: key}, line: line}, kindVar
		case '[':
			key := p.index()
			e, kind = &indexExpr{obj: e, key: key, line: p.lx.lastLine}, kindVar
		case ':':
			p.lx.next()
			name, _ := p.checkName()
			args, line := p.funcArgs()
			e, kind = &methodCallExpr{obj: e, name: name, args: args, line: line}, kindCall
		case '(', tkString, '{':
			args, line := p.funcArgs()
			e, kind = &callExpr{fn: e, args: args, line: line}, kindCall
		default:
			return e, kind
		}
	}
}

// index reads "[key]".
func (p *parser) index() expr {
	p.lx.next()
	key := p.expr()
	p.checkNext(']')
	return key
}

// funcArgs reads a call's arguments and returns them with the call's
// line: the lexer's line at the token opening them.
func (p *parser) funcArgs() ([]expr, int) {
	line := p.lx.line
	switch p.lx.tok.t {
	case '(':
		if line != p.lx.lastLine {
			p.lx.syntaxError("ambiguous syntax (function call x new statement)")
		}
		p.lx.next()
		var args []expr
		if p.lx.tok.t != ')' {
			args = p.exprList()
		}
		p.checkMatch(')', '(', line)
		return args, line
	case '{':
		return []expr{p.constructor()}, line
	case tkString:
		s := p.lx.tok.str
		p.lx.next()
		return []expr{&stringExpr{value: s}}, line
	}
	p.lx.syntaxError("function arguments expected")
	return nil, 0
}

// constructor reads a table constructor.
func (p *parser) constructor() expr {
	line := p.lx.line
	t := &tableExpr{}
	narray, nhash := 0, 0
	p.checkNext('{')
	for p.lx.tok.t != '}' {
		switch p.lx.tok.t {
		case tkName:
			// "name = value" or an expression starting with a name.
			p.lx.lookahead()
			if p.lx.ahead.t == '=' {
				t.fields = append(t.fields, p.recordField())
				nhash++
			} else {
				t.fields = append(t.fields, tableField{value: p.expr()})
				narray++
			}
		case '[':
			t.fields = append(t.fields, p.recordField())
			nhash++
		default:
			t.fields = append(t.fields, tableField{value: p.expr()})
			narray++
		}
		if !p.testNext(',') && !p.testNext(';') {
			break
		}
	}
	closeLine := p.lx.tok.line
	p.checkMatch('}', '{', line)
	if n := len(t.fields); n > 0 && t.fields[n-1].key == nil && multiValued(t.fields[n-1].value) {
		narray-- // its values are stored as they come, past the sized part
	}
	t.narray, t.nhash = fbRound(narray), fbRound(nhash)
	t.line = closeLine
	return t
}

// recordField reads "name = value" or "[key] = value".
func (p *parser) recordField() tableField {
	var key expr
	if p.lx.tok.t == tkName {
		name, _ := p.checkName()
		key = &stringExpr{value: name}
	} else {
		key = p.index()
	}
	p.checkNext('=')
	return tableField{key: key, value: p.expr()}
}

// multiValued reports whether e gives all its values at the end of a list.
func multiValued(e expr) bool {
	switch e.(type) {
	case *callExpr, *methodCallExpr, *varargExpr:
		return true
	}
	return false
}

// fbRound is the size NEWTABLE gives for n: Lua stores it as a
// "floating point byte" (luaO_int2fb), rounding it up, and sizes the
// table with what it reads back (luaO_fb2int).
func fbRound(n int) int {
	e := 0
	for n >= 16 {
		n = (n + 1) >> 1
		e++
	}
	return n << e
}
