package lua

import (
	"fmt"
	"strconv"
	"strings"
)

// dumpTree writes a syntax tree as an S-expression, with the line of each
// node that carries one after an "@", for tests to compare as strings.
func dumpTree(fn *funcBody) string {
	var b strings.Builder
	dumpFunc(&b, fn)
	return b.String()
}

func dumpFunc(b *strings.Builder, fn *funcBody) {
	fmt.Fprintf(b, "(function@%d-%d (", fn.line, fn.lastLine)
	b.WriteString(strings.Join(fn.params, " "))
	if fn.isVararg {
		if len(fn.params) > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("...")
	}
	b.WriteByte(')')
	dumpBlock(b, fn.body)
	b.WriteByte(')')
}

// dumpBlock writes statements, each after a space.
func dumpBlock(b *strings.Builder, body []stmt) {
	for _, s := range body {
		b.WriteByte(' ')
		dumpStmt(b, s)
	}
}

func dumpExprs(b *strings.Builder, list []expr) {
	for _, e := range list {
		b.WriteByte(' ')
		dumpExpr(b, e)
	}
}

func dumpStmt(b *strings.Builder, s stmt) {
	switch s := s.(type) {
	case *localStmt:
		fmt.Fprintf(b, "(local@%d (%s)", s.line, strings.Join(s.names, " "))
		dumpExprs(b, s.exprs)
		b.WriteByte(')')
	case *localFunctionStmt:
		fmt.Fprintf(b, "(localfunction %s ", s.name)
		dumpFunc(b, s.fn)
		b.WriteByte(')')
	case *assignStmt:
		fmt.Fprintf(b, "(set@%d (", s.line)
		for i, t := range s.targets {
			if i > 0 {
				b.WriteByte(' ')
			}
			dumpExpr(b, t)
		}
		b.WriteByte(')')
		dumpExprs(b, s.exprs)
		b.WriteByte(')')
	case *callStmt:
		dumpExpr(b, s.call)
	case *doStmt:
		b.WriteString("(do")
		dumpBlock(b, s.body)
		b.WriteByte(')')
	case *whileStmt:
		b.WriteString("(while ")
		dumpExpr(b, s.cond)
		dumpBlock(b, s.body)
		b.WriteByte(')')
	case *repeatStmt:
		b.WriteString("(repeat")
		dumpBlock(b, s.body)
		b.WriteString(" until ")
		dumpExpr(b, s.cond)
		b.WriteByte(')')
	case *ifStmt:
		b.WriteString("(if")
		for i, c := range s.conds {
			b.WriteString(" (")
			dumpExpr(b, c)
			dumpBlock(b, s.blocks[i])
			b.WriteByte(')')
		}
		if s.els != nil {
			b.WriteString(" (else")
			dumpBlock(b, s.els)
			b.WriteByte(')')
		}
		b.WriteByte(')')
	case *numericForStmt:
		fmt.Fprintf(b, "(fornum@%d %s ", s.line, s.name)
		dumpExpr(b, s.start)
		b.WriteByte(' ')
		dumpExpr(b, s.limit)
		if s.step != nil {
			b.WriteByte(' ')
			dumpExpr(b, s.step)
		}
		b.WriteString(" do")
		dumpBlock(b, s.body)
		b.WriteByte(')')
	case *genericForStmt:
		fmt.Fprintf(b, "(forin@%d (%s)", s.line, strings.Join(s.names, " "))
		dumpExprs(b, s.exprs)
		b.WriteString(" do")
		dumpBlock(b, s.body)
		b.WriteByte(')')
	case *returnStmt:
		fmt.Fprintf(b, "(return@%d", s.line)
		dumpExprs(b, s.exprs)
		b.WriteByte(')')
	case *breakStmt:
		fmt.Fprintf(b, "(break@%d)", s.line)
	default:
		fmt.Fprintf(b, "(? %T)", s)
	}
}

var binaryOpNames = [...]string{
	opAdd: "+", opSub: "-", opMul: "*", opDiv: "/", opMod: "%", opPow: "^", opConcat: "..",
	opEq: "==", opNe: "~=", opLt: "<", opLe: "<=", opGt: ">", opGe: ">=", opAnd: "and", opOr: "or",
}

var unaryOpNames = [...]string{opNeg: "neg", opNot: "not", opLen: "#"}

func dumpExpr(b *strings.Builder, e expr) {
	switch e := e.(type) {
	case *nilExpr:
		b.WriteString("nil")
	case *trueExpr:
		b.WriteString("true")
	case *falseExpr:
		b.WriteString("false")
	case *varargExpr:
		fmt.Fprintf(b, "...@%d", e.line)
	case *numberExpr:
		b.WriteString(NumberToString(e.value))
	case *stringExpr:
		b.WriteString(strconv.Quote(e.value))
	case *nameExpr:
		fmt.Fprintf(b, "%s@%d", e.name, e.line)
	case *indexExpr:
		fmt.Fprintf(b, "(index@%d ", e.line)
		dumpExpr(b, e.obj)
		b.WriteByte(' ')
		dumpExpr(b, e.key)
		b.WriteByte(')')
	case *callExpr:
		fmt.Fprintf(b, "(call@%d ", e.line)
		dumpExpr(b, e.fn)
		dumpExprs(b, e.args)
		b.WriteByte(')')
	case *methodCallExpr:
		fmt.Fprintf(b, "(method@%d ", e.line)
		dumpExpr(b, e.obj)
		b.WriteString(" " + e.name)
		dumpExprs(b, e.args)
		b.WriteByte(')')
	case *functionExpr:
		dumpFunc(b, e.fn)
	case *binaryExpr:
		fmt.Fprintf(b, "(%s@%d ", binaryOpNames[e.op], e.line)
		dumpExpr(b, e.left)
		b.WriteByte(' ')
		dumpExpr(b, e.right)
		b.WriteByte(')')
	case *unaryExpr:
		fmt.Fprintf(b, "(%s@%d ", unaryOpNames[e.op], e.line)
		dumpExpr(b, e.operand)
		b.WriteByte(')')
	case *parenExpr:
		b.WriteString("(paren ")
		dumpExpr(b, e.inner)
		b.WriteByte(')')
	case *tableExpr:
		fmt.Fprintf(b, "(table@%d %d %d", e.line, e.narray, e.nhash)
		for _, f := range e.fields {
			b.WriteByte(' ')
			if f.key == nil {
				dumpExpr(b, f.value)
				continue
			}
			b.WriteByte('[')
			dumpExpr(b, f.key)
			b.WriteString("]=")
			dumpExpr(b, f.value)
		}
		b.WriteByte(')')
	default:
		fmt.Fprintf(b, "(? %T)", e)
	}
}
