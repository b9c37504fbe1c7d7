package lua

// The syntax tree the parser builds and the compiler turns into closures.
// Names are left unresolved (the compiler decides what is local, upvalue
// or global). Each node that can fail at run time carries the line Lua
// 5.1 would report for it: the line its instruction would have had in
// Lua's bytecode (see the comments on each field).

// funcBody is a function's parameters and body; the main chunk is one
// too (vararg, no parameters).
type funcBody struct {
	params   []string // "self" first for a method ("function a:b()")
	isVararg bool
	body     []stmt
	// line is Lua's linedefined: the line of "function" in a function
	// statement, else the line of "(" (0 for the main chunk).
	line     int
	lastLine int // the line of its "end" (the last line for the main chunk)
	// name is how tracebacks would name the function; unused by errors.
	name string
}

type stmt interface{ stmtNode() }

type expr interface{ exprNode() }

// Statements.
type (
	// localStmt is "local a, b = e1, e2" (exprs may be empty).
	localStmt struct {
		names []string
		exprs []expr
		line  int
	}
	// localFunctionStmt is "local function f() ... end": f is in scope
	// inside its own body.
	localFunctionStmt struct {
		name string
		fn   *funcBody
	}
	// assignStmt is "t1, t2 = e1, e2"; each target is a *nameExpr or an
	// *indexExpr. "function a.b:c() end" is an assignStmt too (to the
	// index a.b.c of a function whose first parameter is self), and
	// "function f() end" an assignment to the name f.
	assignStmt struct {
		targets []expr
		exprs   []expr
		line    int // the line of the last token of the statement
	}
	// callStmt is a call as a statement (its results dropped).
	callStmt struct {
		call expr // *callExpr or *methodCallExpr
	}
	doStmt struct {
		body []stmt
	}
	// whileStmt's line is the line of "while": where the interrupt
	// check at each iteration (SCRIPT KILL) says the loop is.
	whileStmt struct {
		cond expr
		body []stmt
		line int
	}
	// repeatStmt is "repeat body until cond": cond sees body's locals.
	// line is the line of "repeat".
	repeatStmt struct {
		body []stmt
		cond expr
		line int
	}
	// ifStmt is "if c1 then b1 elseif c2 then b2 ... else e end"; els is
	// nil without an else.
	ifStmt struct {
		conds  []expr
		blocks [][]stmt
		els    []stmt
	}
	// numericForStmt is "for v = start, limit, step do body end"; step
	// is nil when absent. line is the line of "do", where Lua puts the
	// loop's preparation (its "'for' initial value must be a number"
	// errors carry it).
	numericForStmt struct {
		name               string
		start, limit, step expr
		body               []stmt
		line               int
	}
	// genericForStmt is "for n1, n2 in e1, e2 do body end". line is the
	// line of the token after "in" (the iterator call's line).
	genericForStmt struct {
		names []string
		exprs []expr
		body  []stmt
		line  int
	}
	// returnStmt is "return e1, e2"; a single call in it is a tail call.
	returnStmt struct {
		exprs []expr
		line  int
	}
	breakStmt struct {
		line int
	}
)

func (*localStmt) stmtNode()         {}
func (*localFunctionStmt) stmtNode() {}
func (*assignStmt) stmtNode()        {}
func (*callStmt) stmtNode()          {}
func (*doStmt) stmtNode()            {}
func (*whileStmt) stmtNode()         {}
func (*repeatStmt) stmtNode()        {}
func (*ifStmt) stmtNode()            {}
func (*numericForStmt) stmtNode()    {}
func (*genericForStmt) stmtNode()    {}
func (*returnStmt) stmtNode()        {}
func (*breakStmt) stmtNode()         {}

// Expressions.
type (
	nilExpr   struct{}
	trueExpr  struct{}
	falseExpr struct{}
	// varargExpr is "...": all the extra arguments where many values fit
	// (last in a list), else the first of them.
	varargExpr struct {
		line int
	}
	numberExpr struct {
		value float64
	}
	stringExpr struct {
		value string
	}
	// nameExpr is a variable: local, upvalue or global. line is the
	// line of the name (a global read fails there, through __index).
	nameExpr struct {
		name string
		line int
	}
	// indexExpr is obj[key] and obj.name (key a *stringExpr). line is the
	// line of the last token of the key ("]" or the name).
	indexExpr struct {
		obj, key expr
		line     int
	}
	// callExpr is fn(args); "f{...}" and "f'str'" too. line is the line
	// of the token that opens the arguments ("(", "{" or the string), as
	// Lua's funcargs fixes a call's line.
	callExpr struct {
		fn   expr
		args []expr
		line int
	}
	// methodCallExpr is obj:name(args). line as for callExpr.
	methodCallExpr struct {
		obj  expr
		name string
		args []expr
		line int
	}
	functionExpr struct {
		fn *funcBody
	}
	// binaryExpr is left op right; "and" and "or" too. line is the line
	// of the last token of right (where Lua emits the instruction).
	binaryExpr struct {
		op          binaryOp
		left, right expr
		line        int
	}
	// unaryExpr is op operand. line is the line of the last token of
	// operand.
	unaryExpr struct {
		op      unaryOp
		operand expr
		line    int
	}
	// parenExpr is (inner) where inner may give many values (a call or
	// "..."): the parentheses keep only the first. The parser drops
	// parentheses around anything else.
	parenExpr struct {
		inner expr
	}
	// tableExpr is a constructor. Its fields are in source order; a
	// positional field has a nil key. narray and nhash count the
	// positional and keyed fields as Lua sizes the new table (a last
	// positional field that gives many values is not counted; counts
	// past 15 rounded up as NEWTABLE's operands round them).
	tableExpr struct {
		fields        []tableField
		narray, nhash int
		line          int // the line of "}"
	}
)

type tableField struct {
	key   expr // nil: the next array position
	value expr
}

func (*nilExpr) exprNode()        {}
func (*trueExpr) exprNode()       {}
func (*falseExpr) exprNode()      {}
func (*varargExpr) exprNode()     {}
func (*numberExpr) exprNode()     {}
func (*stringExpr) exprNode()     {}
func (*nameExpr) exprNode()       {}
func (*indexExpr) exprNode()      {}
func (*callExpr) exprNode()       {}
func (*methodCallExpr) exprNode() {}
func (*functionExpr) exprNode()   {}
func (*binaryExpr) exprNode()     {}
func (*unaryExpr) exprNode()      {}
func (*parenExpr) exprNode()      {}
func (*tableExpr) exprNode()      {}

type binaryOp uint8

const (
	opAdd binaryOp = iota
	opSub
	opMul
	opDiv
	opMod
	opPow
	opConcat
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
	opAnd
	opOr
)

type unaryOp uint8

const (
	opNeg unaryOp = iota
	opNot
	opLen
)
