package lua

import (
	"fmt"
	"strings"
	"testing"
)

// The expected messages were recorded from redis-server 7.0.15: EVAL's
// "ERR Error compiling script (new function): <message>" (chunkname
// "@user_script"), or loadstring's message where it has a newline (Redis
// turns newlines into spaces in its error replies).

// parseErrorTests are sources whose compilation fails, with Lua's message.
var parseErrorTests = []struct{ src, want string }{
	{"x", "user_script:1: '=' expected near '<eof>'"},
	{"x y", "user_script:1: '=' expected near 'y'"},
	{"= 1", "user_script:1: unexpected symbol near '='"},
	{"local 1", "user_script:1: '<name>' expected near '1'"},
	{"local function 1", "user_script:1: '<name>' expected near '1'"},
	{"function 1() end", "user_script:1: '<name>' expected near '1'"},
	{"for 1", "user_script:1: '<name>' expected near '1'"},
	{"for i do", "user_script:1: '=' or 'in' expected near 'do'"},
	{"f(", "user_script:1: unexpected symbol near '<eof>'"},
	{"f(1", "user_script:1: ')' expected near '<eof>'"},
	{"f(1\n\n", "user_script:3: ')' expected (to close '(' at line 1) near '<eof>'"},
	{"do", "user_script:1: 'end' expected near '<eof>'"},
	{"do\n", "user_script:2: 'end' expected (to close 'do' at line 1) near '<eof>'"},
	{"if x then", "user_script:1: 'end' expected near '<eof>'"},
	{"if x", "user_script:1: 'then' expected near '<eof>'"},
	{"while x", "user_script:1: 'do' expected near '<eof>'"},
	{"while x do\n", "user_script:2: 'end' expected (to close 'while' at line 1) near '<eof>'"},
	{"repeat\n", "user_script:2: 'until' expected (to close 'repeat' at line 1) near '<eof>'"},
	{"function f()\n", "user_script:2: 'end' expected (to close 'function' at line 1) near '<eof>'"},
	{"local t = {\n", "user_script:2: unexpected symbol near '<eof>'"},
	{"local t = {1 2}", "user_script:1: '}' expected near '2'"},
	{"x = a[1", "user_script:1: ']' expected near '<eof>'"},
	{"x = a.1", "user_script:1: unexpected symbol near '.1'"},
	{"a:b", "user_script:1: function arguments expected near '<eof>'"},
	{"a:b.c()", "user_script:1: function arguments expected near '.'"},
	{"function f(1) end", "user_script:1: <name> or '...' expected near '1'"},
	{"function f() return ... end", "user_script:1: cannot use '...' outside a vararg function near '...'"},
	{"break", "user_script:1: no loop to break near '<eof>'"},
	{"while true do end break", "user_script:1: no loop to break near '<eof>'"},
	{"return 1 x = 2", "user_script:1: '<eof>' expected near 'x'"},
	{"do return x = 1 end", "user_script:1: 'end' expected near '='"},
	{"while true do break x = 1 end", "user_script:1: 'end' expected near 'x'"},
	{"f() = 1", "user_script:1: unexpected symbol near '='"},
	{"(a) = 1", "user_script:1: syntax error near '='"},
	{"a, f() = 1", "user_script:1: syntax error near '='"},
	{"a, (b) = 1", "user_script:1: syntax error near '='"},
	{"(f())", "user_script:1: syntax error near '<eof>'"},
	{"x = 3..2", "user_script:1: malformed number near '3..2'"},
	{"x = 1e", "user_script:1: malformed number near '1e'"},
	{"x = 0x", "user_script:1: malformed number near '0x'"},
	{"x = 1.2.3", "user_script:1: malformed number near '1.2.3'"},
	{"x = 12abc", "user_script:1: malformed number near '12abc'"},
	{"x = \"abc", "user_script:1: unfinished string near '<eof>'"},
	{"x = \"abc\nx\"", "user_script:1: unfinished string near '\"abc'"},
	{"x = [[abc", "user_script:1: unfinished long string near '<eof>'"},
	{"--[[ abc", "user_script:1: unfinished long comment near '<eof>'"},
	{"x = [=abc", "user_script:1: invalid long string delimiter near '[='"},
	{"x = \"\\300\"", "user_script:1: escape sequence too large near '\"'"},
	{"x = \"a\\256b\"", "user_script:1: escape sequence too large near '\"a'"},
	{"x = \x1b", "user_script:1: unexpected symbol near 'char(27)'"},
	// A precompiled chunk's signature is just text to the reference server.
	{"\x1bLua", "user_script:1: unexpected symbol near 'char(27)'"},
	{"x = @", "user_script:1: unexpected symbol near '@'"},
	{"x = ~ 1", "user_script:1: unexpected symbol near '~'"},
	{"x = 1 ~= ", "user_script:1: unexpected symbol near '<eof>'"},
	{"x = \"a\" \"b\"", "user_script:1: unexpected symbol near '\"b\"'"},
	{"f\n(1)", "user_script:2: ambiguous syntax (function call x new statement) near '('"},
	{"local x = 1\nlocal y = x\n(f)()", "user_script:3: ambiguous syntax (function call x new statement) near '('"},
	{"x = {\n1,\n2\n", "user_script:4: '}' expected (to close '{' at line 1) near '<eof>'"},
	{"if x then else elseif", "user_script:1: 'end' expected near 'elseif'"},
	{"x = function", "user_script:1: '(' expected near '<eof>'"},
	{"x = function(a,) end", "user_script:1: <name> or '...' expected near ')'"},
	{"x = function(..., a) end", "user_script:1: ')' expected near ','"},
	{"local x <const> = 1", "user_script:1: unexpected symbol near '<'"},
	{"goto x", "user_script:1: '=' expected near 'x'"},
	{"x = 1 // 2", "user_script:1: unexpected symbol near '/'"},
	{"x = a.b.", "user_script:1: '<name>' expected near '<eof>'"},
	{"x = {[1] 2}", "user_script:1: '=' expected near '2'"},
	{"x = {a = }", "user_script:1: unexpected symbol near '}'"},
	{"for i = 1 do end", "user_script:1: ',' expected near 'do'"},
	{"for a, b = 1, 2 do end", "user_script:1: 'in' expected near '='"},
	{"for a, 1 in x do end", "user_script:1: '<name>' expected near '1'"},
	{"local a, = 1", "user_script:1: '<name>' expected near '='"},
	{"return return", "user_script:1: unexpected symbol near 'return'"},
	{"x = not", "user_script:1: unexpected symbol near '<eof>'"},
	{"a.b:c = 1", "user_script:1: function arguments expected near '='"},
	{"x = '\\", "user_script:1: unfinished string near '<eof>'"},
	{"do\r\n\n\r\r\n", "user_script:4: 'end' expected (to close 'do' at line 1) near '<eof>'"},
	{"x = \"abc\r\"", "user_script:1: unfinished string near '\"abc'"},
	{"x = [[\na\nb]] y", "user_script:3: '=' expected near '<eof>'"},
	{"x = 1 [[a\nb]]", "user_script:2: unexpected symbol near '[[a\nb]]'"},
	{"x = 1 [==[\nab]==]", "user_script:2: unexpected symbol near '[==[ab]==]'"},
	{"x = 1 \"a\\0b\"", "user_script:1: unexpected symbol near '\"a'"},
	{"x = \x00", "user_script:1: unexpected symbol"},
	{"function f(...) local function g() return ... end end", "user_script:1: cannot use '...' outside a vararg function near '...'"},
	{"a.b.c", "user_script:1: '=' expected near '<eof>'"},
	{"a[b]", "user_script:1: '=' expected near '<eof>'"},
	{"x = (1", "user_script:1: ')' expected near '<eof>'"},
	{"x = (1\n", "user_script:2: ')' expected (to close '(' at line 1) near '<eof>'"},
	{"f{", "user_script:1: unexpected symbol near '<eof>'"},
	{"x = #", "user_script:1: unexpected symbol near '<eof>'"},
	{"x = a..", "user_script:1: unexpected symbol near '<eof>'"},
	{"local x y", "user_script:1: '=' expected near '<eof>'"},
	{"if x then elseif then end", "user_script:1: unexpected symbol near 'then'"},
	{"x = function() end()", "user_script:1: unexpected symbol near ')'"},
	{"\"x\":len()", "user_script:1: unexpected symbol near '\"x\"'"},
	{"x = 1e+", "user_script:1: malformed number near '1e+'"},
	{"x = .5.", "user_script:1: malformed number near '.5.'"},
	{"x = 5..6", "user_script:1: malformed number near '5..6'"},
	{"x = \xc3\xa9", "user_script:1: unexpected symbol near '\xc3'"},
	{"local a = 1; ; x", "user_script:1: unexpected symbol near ';'"},
	{"return; x = 1", "user_script:1: '<eof>' expected near 'x'"},
	{"for i = 1, 2, 3, 4 do end", "user_script:1: 'do' expected near ','"},
	{"local function f.g() end", "user_script:1: '(' expected near '.'"},
	{"function f:g:h() end", "user_script:1: '(' expected near ':'"},
	{"local f = function()\n\nx", "user_script:3: '=' expected near '<eof>'"},
	{"f \"a\" x", "user_script:1: '=' expected near '<eof>'"},
	{"x = 1 + + 2", "user_script:1: unexpected symbol near '+'"},
	{"if x then end end", "user_script:1: '<eof>' expected near 'end'"},
	{"until x", "user_script:1: '<eof>' expected near 'until'"},
	{"else", "user_script:1: '<eof>' expected near 'else'"},
	{"local x = [==[ ]=]", "user_script:1: unfinished long string near '<eof>'"},
	{"x = {f()} y", "user_script:1: '=' expected near '<eof>'"},
	{"local t = {a 1}", "user_script:1: '}' expected near '1'"},
	{"local t = {a = 1 b = 2}", "user_script:1: '}' expected near 'b'"},
	{"local t = {[\"a\"] = 1, [2]}", "user_script:1: '=' expected near '}'"},
	{"for k, v in pairs(t)\ndo\nbreak\nx = 1\nend", "user_script:4: 'end' expected (to close 'for' at line 1) near 'x'"},
	{"function f(a, b\n, c", "user_script:2: ')' expected near '<eof>'"},
	{"x = [==[\n]]\n]=]\n", "user_script:4: unfinished long string near '<eof>'"},
	{"x = \"a\\\nb", "user_script:2: unfinished string near '<eof>'"},
	{"x = \"a\\\n\nb\"", "user_script:2: unfinished string near '\"a\n'"},
	{"x = \"\\1234\"\ny y", "user_script:2: '=' expected near 'y'"},
	{"local function f()\nreturn\nend\nbreak", "user_script:4: no loop to break near '<eof>'"},
	{"x = 0x1p", "user_script:1: malformed number near '0x1p'"},
	{"x = 1..2", "user_script:1: malformed number near '1..2'"},
	{"if a then\nb()\nelse\nc()\n", "user_script:5: 'end' expected (to close 'if' at line 1) near '<eof>'"},
	{"repeat x = 1 until", "user_script:1: unexpected symbol near '<eof>'"},
	{"local function f(self, ...)\n return ... + arg\nend x", "user_script:3: '=' expected near '<eof>'"},
	{"x = {\n[1\n", "user_script:3: ']' expected near '<eof>'"},
	{"f(\n1,\n2\n", "user_script:4: ')' expected (to close '(' at line 1) near '<eof>'"},
	{"x = a:b:c()", "user_script:1: function arguments expected near ':'"},
	{"x = a:b \"c\" :d", "user_script:1: function arguments expected near '<eof>'"},
	{"a.b, c[1], d = 1, 2, 3, 4 e", "user_script:1: '=' expected near '<eof>'"},
	{"local a <close>", "user_script:1: unexpected symbol near '<'"},
	{"x = y\n--[==[ comment\n]==] z", "user_script:3: '=' expected near '<eof>'"},
	{"x = y -- comment\n z", "user_script:2: '=' expected near '<eof>'"},
	{"--[=[\n\n]=] x", "user_script:3: '=' expected near '<eof>'"},
	{"return ...,", "user_script:1: unexpected symbol near '<eof>'"},
	{"return (...)\nx", "user_script:2: '<eof>' expected near 'x'"},
	{"x = ...\n...", "user_script:2: unexpected symbol near '...'"},
	{"local function f(a, ...) local x = ... end return f, x y", "user_script:1: '<eof>' expected near 'y'"},
	{"x = [[ ]] ]]", "user_script:1: unexpected symbol near ']'"},
	{"x = 0xg", "user_script:1: malformed number near '0xg'"},
	{"x = 0x.8", "user_script:1: malformed number near '0x'"},
	{"x = 0x1.8p1", "user_script:1: malformed number near '.8p1'"},
	{"x = 1_000", "user_script:1: malformed number near '1_000'"},
	{"x = 5e", "user_script:1: malformed number near '5e'"},
	{"x = 5E-1x", "user_script:1: malformed number near '5E-1x'"},
	{"x = '\\999'", "user_script:1: escape sequence too large near '''"},
	{"x = a.and", "user_script:1: '<name>' expected near 'and'"},
	{"x = a.b.nil", "user_script:1: '<name>' expected near 'nil'"},
	{"x = {end = 1}", "user_script:1: unexpected symbol near 'end'"},
	{"local end", "user_script:1: '<name>' expected near 'end'"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrorTests {
		checkParseError(t, tc.src, "@user_script", 0, tc.want)
	}
}

func checkParseError(t *testing.T, src, chunkname string, level int, want string) {
	t.Helper()
	fn, err := parseLevel(src, chunkname, level)
	if err == nil {
		t.Errorf("%.80q: parsed (%.200s), want error %q", src, dumpTree(fn), want)
		return
	}
	if _, ok := err.(*SyntaxError); !ok {
		t.Errorf("%.80q: error is %T, want *SyntaxError", src, err)
	}
	if err.Error() != want {
		t.Errorf("%.80q:\n got  %q\n want %q", src, err.Error(), want)
	}
}

// loadstringTests name the chunk as loadstring does (the source itself,
// or its second argument), recorded from loadstring(src, chunkname)
// called by a script: Lua is one Go call deep there (level 1).
var loadstringTests = []struct{ chunkname, src, want string }{
	{"x = ", "x = ", "[string \"x = \"]:1: unexpected symbol near '<eof>'"},
	{"x = \nfoo", "x = \nfoo", ""},
	{"x = 1 + aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "x = 1 +", "[string \"x = 1 + aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\"]:1: unexpected symbol near '<eof>'"},
	{"return 1 +                              ", "return 1 +", "[string \"return 1 +                              \"]:1: unexpected symbol near '<eof>'"},
	{"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "x", "[string \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"]:1: '=' expected near '<eof>'"},
	{"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "x", "[string \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"]:1: '=' expected near '<eof>'"},
	{"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "x", "[string \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"]:1: '=' expected near '<eof>'"},
	{"=stdin", "x", "stdin:1: '=' expected near '<eof>'"},
	{"=yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", "x", "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy:1: '=' expected near '<eof>'"},
	{"@ffffffffffffffffffffffffffffffffffffffffffffffffffff", "x", "ffffffffffffffffffffffffffffffffffffffffffffffffffff:1: '=' expected near '<eof>'"},
	{"@fffffffffffffffffffffffffffffffffffffffffffffffffffff", "x", "fffffffffffffffffffffffffffffffffffffffffffffffffffff:1: '=' expected near '<eof>'"},
	{"@ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", "x", "...ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff:1: '=' expected near '<eof>'"},
	{"\rabc", "x", "[string \"...\"]:1: '=' expected near '<eof>'"},
	{"", "x", "[string \"\"]:1: '=' expected near '<eof>'"},
	{"local t = {\n", "local t = {\n", "[string \"local t = {...\"]:2: unexpected symbol near '<eof>'"},
}

func TestParseChunkNames(t *testing.T) {
	for _, tc := range loadstringTests {
		if tc.want == "" {
			if _, err := parseLevel(tc.src, tc.chunkname, 1); err != nil {
				t.Errorf("%q: %v", tc.src, err)
			}
			continue
		}
		checkParseError(t, tc.src, tc.chunkname, 1, tc.want)
	}
}

// Helpers building the long sources of the limit tests.
func names(prefix string, n int) string {
	list := make([]string, n)
	for i := range list {
		list[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return strings.Join(list, ",")
}

func localStatements(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "local a%d ", i)
	}
	return b.String()
}

func nest(open string, n int, middle, close string) string {
	return strings.Repeat(open, n) + middle + strings.Repeat(close, n)
}

// limitTests hit Lua's limits: nesting (LUAI_MAXCCALLS), locals
// (LUAI_MAXVARS, with the hidden locals of loops, self and arg), upvalues
// (LUAI_MAXUPVALUES), assignment targets and locals declared in all. An
// empty want means the source compiles; level is Lua's nCcalls.
var limitTests = []struct {
	name      string
	src       string
	chunkname string
	level     int
	want      string
}{
	{"parens 198", "return " + nest("(", 198, "1", ")"), "", 0, ""},
	{"parens 199", "return " + nest("(", 199, "1", ")"), "", 0, "user_script:1: chunk has too many syntax levels"},
	{"blocks 199", nest("do ", 199, "", "end "), "", 0, ""},
	{"blocks 200", nest("do ", 200, "", "end "), "", 0, "user_script:1: chunk has too many syntax levels"},
	{"loadstring blocks 198", nest("do ", 198, "", "end "), "deep", 1, ""},
	{"loadstring blocks 199", nest("do ", 199, "", "end "), "deep", 1, `[string "deep"]:1: chunk has too many syntax levels`},
	{"loadstring parens 197", "return " + nest("(", 197, "1", ")"), "deep", 1, ""},
	{"functions 99", nest("x = function() ", 99, "", " end"), "", 0, ""},
	{"functions 100", nest("x = function() ", 100, "", " end"), "", 0, "user_script:1: chunk has too many syntax levels"},
	{"local functions 100", nest("local function f() ", 100, "", " end"), "", 0, ""},
	{"concat 198", "return " + strings.Repeat("a..", 198) + "a", "", 0, ""},
	{"concat 199", "return " + strings.Repeat("a..", 199) + "a", "", 0, "user_script:1: chunk has too many syntax levels"},
	{"pow 199", "x = 2" + strings.Repeat("^2", 199), "", 0, "user_script:1: chunk has too many syntax levels"},
	{"pow 198", "x = 2" + strings.Repeat("^2", 198), "", 0, ""},
	{"additions", "x = 1" + strings.Repeat("+1", 1000), "", 0, ""},
	{"not 198", "return " + strings.Repeat("not ", 198) + "1", "", 0, ""},
	{"not 199", "return " + strings.Repeat("not ", 199) + "1", "", 0, "user_script:1: chunk has too many syntax levels"},
	{"minus 199", "return " + strings.Repeat("- ", 199) + "1", "", 0, "user_script:1: chunk has too many syntax levels"},
	{"tables 198", "x = {" + nest("{", 198, "", "}") + "}", "", 0, ""},
	{"tables 199", "x = {" + nest("{", 199, "", "}") + "}", "", 0, "user_script:1: chunk has too many syntax levels"},
	{"index 198", "x = a" + nest("[a", 198, "", "]"), "", 0, ""},
	{"index 199", "x = a" + nest("[a", 199, "", "]"), "", 0, "user_script:1: chunk has too many syntax levels"},
	{"calls 199", nest("f(", 199, "", ")"), "", 0, ""},
	{"ifs 199", nest("if x then ", 199, "", "end "), "", 0, ""},
	{"ifs 200", nest("if x then ", 200, "", "end "), "", 0, "user_script:1: chunk has too many syntax levels"},
	{"whiles 200", nest("while x do ", 200, "", "end "), "", 0, "user_script:1: chunk has too many syntax levels"},
	{"repeats 200", nest("repeat ", 200, "", "until x "), "", 0, "user_script:1: chunk has too many syntax levels"},
	{"fors 200", nest("for i=1,2 do ", 200, "", "end "), "", 0, "user_script:1: main function has more than 200 local variables"},
	{"locals 200", "local " + names("a", 200), "", 0, ""},
	{"locals 201", "local " + names("a", 201), "", 0, "user_script:1: main function has more than 200 local variables"},
	{"function locals 201", "local function f()\n local " + names("a", 201) + "\nend", "", 0,
		"user_script:3: function at line 1 has more than 200 local variables"},
	{"vararg locals 199", "function f(...) " + localStatements(199) + " end", "", 0, ""},
	{"vararg locals 200", "function f(...) " + localStatements(200) + " end", "", 0,
		"user_script:1: function at line 1 has more than 200 local variables"},
	{"for locals 196", "for i = 1, 2 do " + localStatements(196) + " end", "", 0, ""},
	{"for locals 197", "for i = 1, 2 do " + localStatements(197) + " end", "", 0,
		"user_script:1: main function has more than 200 local variables"},
	{"for in locals 195", "for k, v in x do " + localStatements(195) + " end", "", 0, ""},
	{"for in locals 196", "for k, v in x do " + localStatements(196) + " end", "", 0,
		"user_script:1: main function has more than 200 local variables"},
	{"method locals 200", "local t = {}\nfunction t:m()\n " + localStatements(200) + " end", "", 0,
		"user_script:3: function at line 2 has more than 200 local variables"},
	{"upvalues 60", "local " + names("a", 60) + "\nlocal function f()\n return " + names("a", 60) + "\nend", "", 0, ""},
	{"upvalues 61", "local " + names("a", 61) + "\nlocal function f()\n return " + names("a", 61) + "\nend", "", 0,
		"user_script:4: function at line 2 has more than 60 upvalues"},
	{"upvalues 61 through", "local " + names("a", 61) + "\nlocal function f()\n local function g()\n return " + names("a", 61) + "\nend end", "", 0,
		"user_script:5: function at line 2 has more than 60 upvalues"},
	{"targets 200", strings.Repeat("a,", 199) + "a=1", "", 0, ""},
	{"targets 201", strings.Repeat("a,", 200) + "a=1", "", 0, "user_script:1: main function has more than 199 variables in assignment"},
	{"nested targets 200", "do " + strings.Repeat("a,", 199) + "a=1 end", "", 0, "user_script:1: main function has more than 198 variables in assignment"},
	{"locals declared 32767", strings.Repeat("do local a end ", 32767), "", 0, ""},
	{"locals declared 32768", strings.Repeat("do local a end ", 32768), "", 0, "too many local variables"},
	{"function locals declared 32768", "local function f() " + strings.Repeat("do local a end ", 32768) + " end", "", 0, "too many local variables"},
}

func TestParseLimits(t *testing.T) {
	for _, tc := range limitTests {
		t.Run(tc.name, func(t *testing.T) {
			chunkname := tc.chunkname
			if chunkname == "" {
				chunkname = "@user_script"
			}
			if tc.want == "" {
				if _, err := parseLevel(tc.src, chunkname, tc.level); err != nil {
					t.Errorf("%v", err)
				}
				return
			}
			checkParseError(t, tc.src, chunkname, tc.level, tc.want)
		})
	}
}

// parseOKTests compile in Redis.
var parseOKTests = []string{
	"x = [[ [[ ]]",
	"--[[ [[ ]]",
	"x = [==[ [==[ ]==]",
	"x = 0x10 + 1e5 + .5 + 3. + 0X1F + 1E-2 + 0x1p4",
	"x = 1e400",
	"x = inf",
	"x = 5e+1",
	"x = \"\\a\\b\\f\\n\\r\\t\\v\\\\\\\"\\'\\z\\065\\0\"",
	"x = '\\25'..'5'",
	"x = [[\r\nabc]]",
	"x = [[\n\rabc]]",
	"x = [[\n\nabc]]",
	"--comment",
	"-- comment\nreturn",
	"--[==[ x ]=] ]==] return",
	"--[ not long\nx = 1",
	"--[=x\nx = 1",
	"return -x^2, not a == b, #t .. \"x\", a < b < c, 1 .. 2 .. 3",
	"a.b.c.d = 1",
	"a[b][c] = 1",
	"a, b.c, d[e] = 1, 2",
	"local a, b, c",
	"local function f(a, b, ...) return ... end",
	"function a.b.c:d(...) return self, ... end",
	"f{1, 2}{3}\"x\"[[y]]:m()",
	"for i = 1, 10, 2 do end for k in next, t do end",
	"repeat local x = 1 until x",
	"if a then elseif b then elseif c then else end",
	"while true do if x then break end end",
	"return",
	"return;",
	"do return end",
	"x = function(...) return arg end",
	"return {[1]=1, [2]=2; 3, 4, x=5, y=6, ...}",
	"local x = (...)",
	"return (f())",
	"return ((f()))",
	"return (a)",
	"return (a).b",
	"(a).b = 1",
	"(f()).x = 1",
	"(a)()",
	"(a):m()",
	"f()()",
	"f():m()",
	"a:m()()",
	"x = 1 == 2 ~= 3",
}

func TestParseOK(t *testing.T) {
	for _, src := range parseOKTests {
		if _, err := parse(src, "@user_script"); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// parseTreeTests are sources and their trees as dumpTree writes them:
// each node with a line has it after "@"; functions show their first and
// last lines; tables their narray and nhash.
var parseTreeTests = []struct{ src, want string }{
	{"return 1 + 2 * 3 ^ 4 ^ 5 .. \"a\" .. \"b\" == -x ^ 2 and not y or z",
		`(function@0-1 (...) (return@1 (or@1 (and@1 (==@1 (..@1 (+@1 1 (*@1 2 (^@1 3 (^@1 4 5)))) (..@1 "a" "b")) (neg@1 (^@1 x@1 2))) (not@1 y@1)) z@1)))`},
	{"return a or b and c, a .. b .. c, a - b - c, a / b * c % d, 2 ^ -3, -2 ^ 2, not a == b, #t + 1, a < b, a <= b, a > b, a >= b, a ~= b",
		`(function@0-1 (...) (return@1 (or@1 a@1 (and@1 b@1 c@1)) (..@1 a@1 (..@1 b@1 c@1)) (-@1 (-@1 a@1 b@1) c@1) (%@1 (*@1 (/@1 a@1 b@1) c@1) d@1) (^@1 2 (neg@1 3)) (neg@1 (^@1 2 2)) (==@1 (not@1 a@1) b@1) (+@1 (#@1 t@1) 1) (<@1 a@1 b@1) (<=@1 a@1 b@1) (>@1 a@1 b@1) (>=@1 a@1 b@1) (~=@1 a@1 b@1)))`},
	{"function a.b:c(x, ...) return self end\nfunction f() end\nfunction a.b.c()\nend",
		`(function@0-4 (...) (set@1 ((index@1 (index@1 a@1 "b") "c")) (function@1-1 (self x ...) (return@1 self@1))) (set@2 (f@2) (function@2-2 ())) (set@3 ((index@3 (index@3 a@3 "b") "c")) (function@3-4 ())))`},
	{"local function g(a, b)\n  return g\nend",
		`(function@0-3 (...) (localfunction g (function@1-3 (a b) (return@2 g@2))))`},
	{"local t = {1, 2, x = 3, [4] = 5, f()}\nlocal u = {f(), g(), ...; (f())}\nlocal v = {f(), x = 1}\nlocal w = {...,}\nlocal e = {}",
		`(function@0-5 (...) (local@1 (t) (table@1 2 2 1 2 ["x"]=3 [4]=5 (call@1 f@1))) (local@2 (u) (table@2 4 0 (call@2 f@2) (call@2 g@2) ...@2 (paren (call@2 f@2)))) (local@3 (v) (table@3 1 1 (call@3 f@3) ["x"]=1)) (local@4 (w) (table@4 0 0 ...@4)) (local@5 (e) (table@5 0 0)))`},
	{"f(\n1,\n2\n)\nf\n{\n}\nf[[\nx]]\nt\n:m\n\"a\"\nlocal x = 1 +\n{}\nx = a.b\n.c[\nd\n]",
		`(function@0-18 (...) (call@1 f@1 1 2) (call@6 f@5 (table@7 0 0)) (call@9 f@8 "x") (method@12 t@10 m "a") (local@14 (x) (+@14 1 (table@14 0 0))) (set@18 (x@15) (index@18 (index@16 (index@15 a@15 "b") "c") d@17)))`},
	{"return (f()), (...), (a), ((a.b)), (f())(), (a:m()), ((...))",
		`(function@0-1 (...) (return@1 (paren (call@1 f@1)) (paren ...@1) a@1 (index@1 a@1 "b") (call@1 (paren (call@1 f@1))) (paren (method@1 a@1 m)) (paren ...@1)))`},
	{"if a then b() elseif c then d() else e() end\nif a then end\nif a then else end\nwhile x do break end\nrepeat local y = 1 until y\ndo local z end",
		`(function@0-6 (...) (if (a@1 (call@1 b@1)) (c@1 (call@1 d@1)) (else (call@1 e@1))) (if (a@2)) (if (a@3) (else)) (while x@4 (break@4)) (repeat (local@5 (y) 1) until y@5) (do (local@6 (z))))`},
	{"for i = 1, 10 do end\nfor i = a,\nb, c\ndo break end\nfor k, v in\npairs(t) do end",
		`(function@0-6 (...) (fornum@1 i 1 10 do) (fornum@4 i a@2 b@3 c@3 do (break@4)) (forin@6 (k v) (call@6 pairs@6 t@6) do))`},
	{"local a, b\nlocal c = 1, 2\na, b.c, d[e] = 1, f()\nreturn;",
		`(function@0-4 (...) (local@1 (a b)) (local@2 (c) 1 2) (set@3 (a@3 (index@3 b@3 "c") (index@3 d@3 e@3)) 1 (call@3 f@3)) (return@4))`},
	{"return \"\\a\\b\\f\\n\\r\\t\\v\\\\\\\"\\'\\z\\065\\0\", [==[\nab]==], [[\r\nx]], 0x10, 1e5, .5, 3., 1e400, '\\\nx'",
		`(function@0-4 (...) (return@4 "\a\b\f\n\r\t\v\\\"'zA\x00" "ab" "x" 16 100000 0.5 3 inf "\nx"))`},
	{"local f = function(...) return ... end\nreturn ...",
		`(function@0-2 (...) (local@1 (f) (function@1-1 (...) (return@1 ...@1))) (return@2 ...@2))`},
	{"return {f\n(1)}",
		`(function@0-2 (...) (return@2 (table@2 0 0 (call@2 f@1 1))))`},
	{"x = 1\r\ny = 2\n\rz = 3\r\rw = 4\n\n",
		`(function@0-7 (...) (set@1 (x@1) 1) (set@2 (y@2) 2) (set@3 (z@3) 3) (set@5 (w@5) 4))`},
	{"f \"a\" \"b\" {c}",
		`(function@0-1 (...) (call@1 (call@1 (call@1 f@1 "a") "b") (table@1 1 0 c@1)))`},
	{"local function f(...) local x = arg return x end",
		`(function@0-1 (...) (localfunction f (function@1-1 (...) (local@1 (x) arg@1) (return@1 x@1))))`},
	{"return -1, - -1, not not a, #\"abc\"",
		`(function@0-1 (...) (return@1 (neg@1 1) (neg@1 (neg@1 1)) (not@1 (not@1 a@1)) (#@1 "abc")))`},
	{"do return end",
		`(function@0-1 (...) (do (return@1)))`},
	{"while true do\nif x then break end\nend",
		`(function@0-3 (...) (while true (if (x@2 (break@2)))))`},
}

func TestParseTrees(t *testing.T) {
	for _, tc := range parseTreeTests {
		fn, err := parse(tc.src, "@user_script")
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if got := dumpTree(fn); got != tc.want {
			t.Errorf("%q:\n got  %s\n want %s", tc.src, got, tc.want)
		}
	}
}

// NEWTABLE keeps sizes as "floating point bytes" (luaO_int2fb): up to 15
// exactly, then rounded up to 1xxx followed by zero bits.
func TestParseTableSizes(t *testing.T) {
	table := func(n int, field string, more ...string) string {
		fields := append(strings.Split(strings.Repeat(field, n), " ")[:n], more...)
		return "return {" + strings.Join(fields, ",") + "}"
	}
	// size is the size for n fields, next for n+1.
	for _, tc := range []struct{ n, size, next int }{
		{0, 0, 1}, {7, 7, 8}, {8, 8, 9}, {15, 15, 16}, {16, 16, 18}, {17, 18, 18}, {20, 20, 22},
		{31, 32, 32}, {33, 36, 36}, {100, 104, 104}, {1000, 1024, 1024},
	} {
		for _, c := range []struct {
			src           string
			narray, nhash int
		}{
			{table(tc.n, "1 "), tc.size, 0},
			{table(tc.n, "k=1 "), 0, tc.size},
			// A last call gives all its values, past the sized part.
			{table(tc.n, "1 ", "f()"), tc.size, 0},
			{table(tc.n, "k=1 ", "f()", "k=1"), 1, tc.next},
		} {
			fn, err := parse(c.src, "@user_script")
			if err != nil {
				t.Fatalf("%.40q: %v", c.src, err)
			}
			tab := fn.body[0].(*returnStmt).exprs[0].(*tableExpr)
			if tab.narray != c.narray || tab.nhash != c.nhash {
				t.Errorf("%.60q: sizes %d, %d, want %d, %d", c.src, tab.narray, tab.nhash, c.narray, c.nhash)
			}
		}
	}
}
