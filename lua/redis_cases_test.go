package lua

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// caseWrapper runs a snippet as Redis's recording of it ran: the body of f
// under pcall, every result tostring'd (objects as their type) and joined
// with |.
const caseWrapper = "local function f() %s end local function pack(...) return {n = select('#', ...), ...} end " +
	"local r = pack(pcall(f)) local out = {} for i = 1, r.n do local v = r[i] " +
	"if type(v) == 'table' or type(v) == 'function' or type(v) == 'thread' or type(v) == 'userdata' then v = type(v) end " +
	"out[i] = tostring(v) end return table.concat(out, '|')"

// TestRedisCases runs the snippets of testdata/redis_cases.txt and
// compares each result with what Redis's Lua gave.
func TestRedisCases(t *testing.T) {
	f, err := os.Open("testdata/redis_cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var src string
	n := 0
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#") || line == "":
		case strings.HasPrefix(line, "\t"):
			want := strings.NewReplacer(`\\`, `\`, `\n`, "\n").Replace(line[1:])
			if got := runCase(t, src); got != want {
				t.Errorf("%s\n  got:  %q\n  want: %q", src, got, want)
			}
			n++
		default:
			src = line
		}
	}
	if n < 100 {
		t.Fatalf("only %d cases ran", n)
	}
}

func runCase(t *testing.T, src string) string {
	L := NewState()
	L.OpenLibs()
	fn, err := L.Load(strings.Replace(caseWrapper, "%s", src, 1), "@user_script", L.Globals())
	if err != nil {
		return "compile: " + err.Error()
	}
	res, e := L.PCall(FunctionValue(fn), nil, 1, Nil)
	if e != nil {
		return "error: " + e.Error()
	}
	s, _ := res[0].AsString()
	return s
}
