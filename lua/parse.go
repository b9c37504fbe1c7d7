package lua

import "fmt"

// The parser follows Lua 5.1's lparser.c rule by rule, so that it fails
// where Lua fails, with Lua's message, and tracks what Lua's limits count
// (syntax nesting, locals and upvalues per function) although it leaves
// names unresolved in the tree.

// parse reads a chunk. chunkname is the name Load was given
// ("@user_script", "=stdin", or the source text itself for loadstring);
// messages name the chunk as chunkID does, in the 80 bytes Lua's lexer
// gives it (chunkIDSize). The error is a *SyntaxError.
func parse(src, chunkname string) (*funcBody, error) {
	return parseLevel(src, chunkname, 0)
}

// parseLevel is parse for a chunk loaded while level calls from Go are
// under way (Lua's nCcalls when lua_load runs: 0 for EVAL's script, 1 for
// loadstring called by it). They count against the nesting limit.
func parseLevel(src, chunkname string, level int) (main *funcBody, err error) {
	return parseFrom(newLexer(src, chunkname), level)
}

// parseReader is parseLevel for a chunk whose text more gives piece by
// piece (load's reader function).
func parseReader(more func() string, chunkname string, level int) (*funcBody, error) {
	lx := &lexer{more: more, line: 1, lastLine: 1, chunk: chunkIDSize(chunkname, maxSourceID)}
	lx.ahead.t = tkEOS
	lx.nextChar()
	return parseFrom(lx, level)
}

func parseFrom(lx *lexer, level int) (main *funcBody, err error) {
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(*SyntaxError)
			if !ok {
				panic(r)
			}
			main, err = nil, se
		}
	}()
	p := &parser{lx: lx, level: level}
	p.openFunc(0)
	p.fs.vararg = true
	p.lx.next()
	body := p.chunk()
	p.check(tkEOS)
	p.closeFunc()
	return &funcBody{isVararg: true, body: body, lastLine: p.lx.line, name: "main chunk"}, nil
}

// Lua 5.1's limits (luaconf.h, llimits.h).
const (
	maxLocals   = 200   // LUAI_MAXVARS: active locals of a function
	maxUpvalues = 60    // LUAI_MAXUPVALUES
	maxLocVars  = 32767 // SHRT_MAX: locals a function declares in all
)

type parser struct {
	lx    *lexer
	fs    *funcState
	level int // Lua's nCcalls: the nesting of chunks and subexpressions
}

// localVar is a declared local; upvalues are told apart by identity.
type localVar struct{ name string }

type blockScope struct {
	prev      *blockScope
	nactvar   int // the active locals outside the block
	breakable bool
}

// funcState is what the parser knows of a function being read.
type funcState struct {
	prev        *funcState
	linedefined int
	vararg      bool
	actvar      []*localVar // the active locals, then those being declared
	nactvar     int
	nlocvars    int
	upvals      []*localVar
	block       *blockScope
}

func (p *parser) openFunc(line int) {
	p.fs = &funcState{prev: p.fs, linedefined: line}
}

func (p *parser) closeFunc() {
	p.removeVars(0)
	p.fs = p.fs.prev
}

// errorLimit reports that fs exceeds one of Lua's limits.
func (p *parser) errorLimit(fs *funcState, limit int, what string) {
	msg := fmt.Sprintf("function at line %d has more than %d %s", fs.linedefined, limit, what)
	if fs.linedefined == 0 {
		msg = fmt.Sprintf("main function has more than %d %s", limit, what)
	}
	p.lx.lexError(msg, 0)
}

// newLocalVar declares the n-th of the locals a statement is declaring;
// adjustLocalVars brings them into scope.
func (p *parser) newLocalVar(name string, n int) {
	fs := p.fs
	if fs.nactvar+n+1 > maxLocals {
		p.errorLimit(fs, maxLocals, "local variables")
	}
	if fs.nlocvars >= maxLocVars {
		// Lua raises this one as a run-time error, without position.
		panic(&SyntaxError{Msg: "too many local variables"})
	}
	fs.nlocvars++
	fs.actvar = append(fs.actvar[:fs.nactvar+n], &localVar{name: name})
}

func (p *parser) adjustLocalVars(n int) { p.fs.nactvar += n }

func (p *parser) removeVars(level int) {
	p.fs.nactvar = level
	p.fs.actvar = p.fs.actvar[:level]
}

func (p *parser) enterBlock(breakable bool) {
	p.fs.block = &blockScope{prev: p.fs.block, nactvar: p.fs.nactvar, breakable: breakable}
}

func (p *parser) leaveBlock() {
	bl := p.fs.block
	p.fs.block = bl.prev
	p.removeVars(bl.nactvar)
}

// resolve finds the local a name refers to from fs, making it an upvalue
// of every function between; nil means a global.
func (p *parser) resolve(fs *funcState, name string) *localVar {
	if fs == nil {
		return nil
	}
	for i := fs.nactvar - 1; i >= 0; i-- {
		if fs.actvar[i].name == name {
			return fs.actvar[i]
		}
	}
	v := p.resolve(fs.prev, name)
	if v == nil {
		return nil
	}
	for _, u := range fs.upvals {
		if u == v {
			return v
		}
	}
	if len(fs.upvals)+1 > maxUpvalues {
		p.errorLimit(fs, maxUpvalues, "upvalues")
	}
	fs.upvals = append(fs.upvals, v)
	return v
}

func (p *parser) enterLevel() {
	p.level++
	if p.level > maxSyntaxLevels {
		p.lx.lexError("chunk has too many syntax levels", 0)
	}
}

func (p *parser) leaveLevel() { p.level-- }

func (p *parser) testNext(t token) bool {
	if p.lx.tok.t != t {
		return false
	}
	p.lx.next()
	return true
}

func (p *parser) errorExpected(t token) {
	p.lx.syntaxError(fmt.Sprintf("'%s' expected", tokenText(t)))
}

func (p *parser) check(t token) {
	if p.lx.tok.t != t {
		p.errorExpected(t)
	}
}

func (p *parser) checkNext(t token) {
	p.check(t)
	p.lx.next()
}

// checkMatch reads the token closing who, opened at line where.
func (p *parser) checkMatch(what, who token, where int) {
	if p.testNext(what) {
		return
	}
	if where == p.lx.line {
		p.errorExpected(what)
	}
	p.lx.syntaxError(fmt.Sprintf("'%s' expected (to close '%s' at line %d)",
		tokenText(what), tokenText(who), where))
}

// checkName reads a name and returns it with its line.
func (p *parser) checkName() (string, int) {
	p.check(tkName)
	name, line := p.lx.tok.str, p.lx.tok.line
	p.lx.next()
	return name, line
}

func blockFollow(t token) bool {
	switch t {
	case tkElse, tkElseif, tkEnd, tkUntil, tkEOS:
		return true
	}
	return false
}

// chunk reads statements up to the end of a block; return and break end
// it.
func (p *parser) chunk() []stmt {
	var body []stmt
	p.enterLevel()
	for last := false; !last && !blockFollow(p.lx.tok.t); {
		var s stmt
		s, last = p.statement()
		body = append(body, s)
		p.testNext(';')
	}
	p.leaveLevel()
	return body
}

func (p *parser) block() []stmt {
	p.enterBlock(false)
	body := p.chunk()
	p.leaveBlock()
	return body
}

// statement reads one statement and reports whether it must be the last
// of its block.
func (p *parser) statement() (stmt, bool) {
	line := p.lx.line
	switch p.lx.tok.t {
	case tkIf:
		return p.ifStat(line), false
	case tkWhile:
		return p.whileStat(line), false
	case tkDo:
		p.lx.next()
		body := p.block()
		p.checkMatch(tkEnd, tkDo, line)
		return &doStmt{body: body}, false
	case tkFor:
		return p.forStat(line), false
	case tkRepeat:
		return p.repeatStat(line), false
	case tkFunction:
		return p.funcStat(line), false
	case tkLocal:
		p.lx.next()
		if p.testNext(tkFunction) {
			return p.localFunc(), false
		}
		return p.localStat(), false
	case tkReturn:
		return p.retStat(), true
	case tkBreak:
		p.lx.next()
		return p.breakStat(), true
	}
	return p.exprStat(), false
}

func (p *parser) ifStat(line int) stmt {
	s := &ifStmt{}
	for {
		p.lx.next() // "if" or "elseif"
		s.conds = append(s.conds, p.expr())
		p.checkNext(tkThen)
		s.blocks = append(s.blocks, p.block())
		if p.lx.tok.t != tkElseif {
			break
		}
	}
	if p.lx.tok.t == tkElse {
		p.lx.next()
		s.els = p.block()
		if s.els == nil {
			s.els = []stmt{}
		}
	}
	p.checkMatch(tkEnd, tkIf, line)
	return s
}

func (p *parser) whileStat(line int) stmt {
	p.lx.next()
	cond := p.expr()
	p.enterBlock(true)
	p.checkNext(tkDo)
	body := p.block()
	p.checkMatch(tkEnd, tkWhile, line)
	p.leaveBlock()
	return &whileStmt{cond: cond, body: body, line: line}
}

func (p *parser) repeatStat(line int) stmt {
	p.enterBlock(true)  // the loop
	p.enterBlock(false) // the scope, which the condition sees
	p.lx.next()
	body := p.chunk()
	p.checkMatch(tkUntil, tkRepeat, line)
	cond := p.expr()
	p.leaveBlock()
	p.leaveBlock()
	return &repeatStmt{body: body, cond: cond, line: line}
}

func (p *parser) forStat(line int) stmt {
	p.enterBlock(true)
	p.lx.next()
	name, _ := p.checkName()
	var s stmt
	switch p.lx.tok.t {
	case '=':
		s = p.forNum(name)
	case ',', tkIn:
		s = p.forList(name)
	default:
		p.lx.syntaxError("'=' or 'in' expected")
	}
	p.checkMatch(tkEnd, tkFor, line)
	p.leaveBlock()
	return s
}

// forNum reads "= start, limit [, step] do body"; the statement's line is
// the line of "do", where Lua puts the loop's preparation (and its
// "'for' initial value must be a number" errors).
func (p *parser) forNum(name string) stmt {
	p.newLocalVar("(for index)", 0)
	p.newLocalVar("(for limit)", 1)
	p.newLocalVar("(for step)", 2)
	p.newLocalVar(name, 3)
	s := &numericForStmt{name: name}
	p.checkNext('=')
	s.start = p.expr()
	p.checkNext(',')
	s.limit = p.expr()
	if p.testNext(',') {
		s.step = p.expr()
	}
	s.body, s.line = p.forBody(1)
	return s
}

// forList reads "n2, n3 in explist do body"; the statement's line is the
// line of the token after "in", where Lua puts the iterator's call.
func (p *parser) forList(name string) stmt {
	p.newLocalVar("(for generator)", 0)
	p.newLocalVar("(for state)", 1)
	p.newLocalVar("(for control)", 2)
	p.newLocalVar(name, 3)
	s := &genericForStmt{names: []string{name}}
	for p.testNext(',') {
		n, _ := p.checkName()
		p.newLocalVar(n, len(s.names)+3)
		s.names = append(s.names, n)
	}
	p.checkNext(tkIn)
	s.line = p.lx.line
	s.exprs = p.exprList()
	s.body, _ = p.forBody(len(s.names))
	return s
}

// forBody reads "do body" of a loop declaring nvars variables; it returns
// the body and the line of "do".
func (p *parser) forBody(nvars int) ([]stmt, int) {
	p.adjustLocalVars(3) // the hidden control variables
	p.checkNext(tkDo)
	doLine := p.lx.lastLine
	p.enterBlock(false)
	p.adjustLocalVars(nvars)
	body := p.block()
	p.leaveBlock()
	return body, doLine
}

// funcStat reads "function a.b:c() ... end": an assignment on the line
// of "function".
func (p *parser) funcStat(line int) stmt {
	p.lx.next()
	name, nameLine := p.checkName()
	p.resolve(p.fs, name)
	var target expr = &nameExpr{name: name, line: nameLine}
	fullName := name
	needSelf := false
	for p.lx.tok.t == '.' || p.lx.tok.t == ':' {
		sep := p.lx.tok.t
		p.lx.next()
		key, keyLine := p.checkName()
		target = &indexExpr{obj: target, key: &stringExpr{value: key}, line: keyLine}
		fullName += string(rune(sep)) + key
		if sep == ':' {
			needSelf = true
			break
		}
	}
	fn := p.body(needSelf, line)
	fn.name = fullName
	return &assignStmt{targets: []expr{target}, exprs: []expr{&functionExpr{fn: fn}}, line: line}
}

func (p *parser) localFunc() stmt {
	name, _ := p.checkName()
	p.newLocalVar(name, 0)
	p.adjustLocalVars(1)
	fn := p.body(false, p.lx.line)
	fn.name = name
	return &localFunctionStmt{name: name, fn: fn}
}

func (p *parser) localStat() stmt {
	s := &localStmt{}
	for {
		name, _ := p.checkName()
		p.newLocalVar(name, len(s.names))
		s.names = append(s.names, name)
		if !p.testNext(',') {
			break
		}
	}
	if p.testNext('=') {
		s.exprs = p.exprList()
	}
	p.adjustLocalVars(len(s.names))
	s.line = p.lx.lastLine
	return s
}

// exprStat reads a call statement or an assignment.
func (p *parser) exprStat() stmt {
	e, kind := p.primaryExp()
	if kind == kindCall {
		return &callStmt{call: e}
	}
	s := &assignStmt{targets: []expr{e}}
	for {
		if kind != kindVar {
			p.lx.syntaxError("syntax error")
		}
		if !p.testNext(',') {
			break
		}
		e, kind = p.primaryExp()
		// Lua reads the targets recursively, bounded by the C stack left.
		if room := maxSyntaxLevels - p.level; len(s.targets) > room {
			p.errorLimit(p.fs, room, "variables in assignment")
		}
		s.targets = append(s.targets, e)
	}
	p.checkNext('=')
	s.exprs = p.exprList()
	s.line = p.lx.lastLine
	return s
}

func (p *parser) retStat() stmt {
	p.lx.next()
	s := &returnStmt{}
	if !blockFollow(p.lx.tok.t) && p.lx.tok.t != ';' {
		s.exprs = p.exprList()
	}
	s.line = p.lx.lastLine
	return s
}

// breakStat checks that a loop of the function encloses the break just
// read.
func (p *parser) breakStat() stmt {
	bl := p.fs.block
	for bl != nil && !bl.breakable {
		bl = bl.prev
	}
	if bl == nil {
		p.lx.syntaxError("no loop to break")
	}
	return &breakStmt{line: p.lx.lastLine}
}

// body reads a function's "(params) chunk end"; line is its linedefined.
func (p *parser) body(needSelf bool, line int) *funcBody {
	p.openFunc(line)
	fn := &funcBody{line: line}
	p.checkNext('(')
	if needSelf {
		p.newLocalVar("self", 0)
		p.adjustLocalVars(1)
		fn.params = append(fn.params, "self")
	}
	p.parList(fn)
	p.checkNext(')')
	fn.body = p.chunk()
	fn.lastLine = p.lx.line
	p.checkMatch(tkEnd, tkFunction, line)
	p.closeFunc()
	return fn
}

// parList reads the parameters. A vararg function has a hidden local
// "arg" too (Lua 5.1's LUA_COMPAT_VARARG), which counts as a local.
func (p *parser) parList(fn *funcBody) {
	n := 0
	if p.lx.tok.t != ')' {
		for {
			switch p.lx.tok.t {
			case tkName:
				name, _ := p.checkName()
				p.newLocalVar(name, n)
				n++
				fn.params = append(fn.params, name)
			case tkDots:
				p.lx.next()
				p.newLocalVar("arg", n)
				n++
				p.fs.vararg = true
				fn.isVararg = true
			default:
				p.lx.syntaxError("<name> or '...' expected")
			}
			if fn.isVararg || !p.testNext(',') {
				break
			}
		}
	}
	p.adjustLocalVars(n)
}

func (p *parser) exprList() []expr {
	list := []expr{p.expr()}
	for p.testNext(',') {
		list = append(list, p.expr())
	}
	return list
}
