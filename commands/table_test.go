package commands

import (
	"strings"
	"testing"
)

func TestTableBuilds(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("table declaration: %v", r)
		}
	}()
	tab := NewTable(Families()...)
	if tab.Len() == 0 {
		t.Fatal("empty table")
	}
}

func TestResolveErrors(t *testing.T) {
	tab := NewTable(Families()...)
	args := func(s string) [][]byte {
		var out [][]byte
		for _, f := range strings.Fields(s) {
			out = append(out, []byte(f))
		}
		return out
	}
	cases := []struct{ in, want string }{
		{"nosuch a b", "ERR unknown command 'nosuch', with args beginning with: 'a' 'b' "},
		{"GET", "ERR wrong number of arguments for 'get' command"},
		{"config", "ERR wrong number of arguments for 'config' command"},
		{"config nosuch", "ERR unknown subcommand 'nosuch'. Try CONFIG HELP."},
		{"config get", "ERR wrong number of arguments for 'config|get' command"},
	}
	for _, c := range cases {
		if _, got := tab.Resolve(args(c.in)); got != c.want {
			t.Errorf("%q: got %q want %q", c.in, got, c.want)
		}
	}
	if cmd, err := tab.Resolve(args("command")); err != "" || cmd.Name != "command" {
		t.Errorf("COMMAND alone must run the container: %v %q", cmd, err)
	}
}

func TestLegacyKeyRange(t *testing.T) {
	tab := NewTable(Families()...)
	cases := map[string][3]int{"get": {1, 1, 1}, "mset": {1, -1, 2}, "del": {1, -1, 1}, "rename": {1, 2, 1},
		"lcs": {1, 2, 1}, "ping": {0, 0, 0}}
	for name, want := range cases {
		c := tab.Get([]byte(name))
		f, l, s := c.KeyPositions()
		if [3]int{f, l, s} != want {
			t.Errorf("%s: got %v want %v", name, [3]int{f, l, s}, want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	args, err := parseArgs("key value [condition=NX|XX] [GET] [EX seconds:integer|KEEPTTL] (data=k:key v)...")
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 6 {
		t.Fatalf("got %d args", len(args))
	}
	if args[2].Type != "oneof" || args[2].Name != "condition" || !args[2].Optional || len(args[2].Args) != 2 {
		t.Errorf("condition: %+v", args[2])
	}
	if args[3].Type != "pure-token" || args[3].Token != "GET" {
		t.Errorf("GET: %+v", args[3])
	}
	ex := args[4].Args[0]
	if ex.Name != "seconds" || ex.Type != "integer" || ex.Token != "EX" {
		t.Errorf("EX: %+v", ex)
	}
	if args[5].Type != "block" || !args[5].Multiple || args[5].Name != "data" {
		t.Errorf("data: %+v", args[5])
	}
	if args[0].KeyIndex != 0 || args[5].Args[0].KeyIndex != 1 {
		t.Errorf("key indexes: %d %d", args[0].KeyIndex, args[5].Args[0].KeyIndex)
	}
	for _, bad := range []string{"[a", "a|b", "x:nosuchtype", "[]"} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("%q: expected an error", bad)
		}
	}
}
