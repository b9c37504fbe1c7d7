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

func TestParseArgsRedisShapes(t *testing.T) {
	// A named group of one argument is a block of its own (CONFIG GET's
	// "parameter", CLIENT LIST's "id"); names may hold ':' before a type;
	// derived names join with '_'.
	args, err := parseArgs("(parameter=parameter)... [ID (id=client-id:integer...)] ip:port:string (a b)... [NOSAVE|SAVE]")
	if err != nil {
		t.Fatal(err)
	}
	if p := args[0]; p.Type != "block" || p.Name != "parameter" || !p.Multiple || len(p.Args) != 1 || p.Args[0].Multiple {
		t.Errorf("parameter: %+v", p)
	}
	if id := args[1]; id.Type != "block" || id.Name != "id" || id.Token != "ID" || !id.Optional || !id.Args[0].Multiple {
		t.Errorf("id: %+v", id)
	}
	if a := args[2]; a.Name != "ip:port" || a.Type != "string" {
		t.Errorf("ip:port: %+v", a)
	}
	if args[3].Name != "a_b" || args[4].Name != "nosave_save" {
		t.Errorf("derived names %q %q", args[3].Name, args[4].Name)
	}
	// Key arguments take the key specs in order; #n sets one.
	keys, err := parseArgs("k1:key k2:key pattern:pattern#1 dest:key#2")
	if err != nil {
		t.Fatal(err)
	}
	if keys[0].KeyIndex != 0 || keys[1].KeyIndex != 1 || keys[2].KeyIndex != 1 || keys[3].KeyIndex != 2 {
		t.Errorf("key indexes %d %d %d %d", keys[0].KeyIndex, keys[1].KeyIndex, keys[2].KeyIndex, keys[3].KeyIndex)
	}
	for _, bad := range []string{"a=b", "[TYPE t=A|B]", "x:string#1", "k:key#x", "ip:port"} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("%q: expected an error", bad)
		}
	}
}

func TestKeySpecIndexesShareTheLastSpec(t *testing.T) {
	tab := NewTable(Families()...)
	// LCS has one range spec for both keys, as in Redis.
	lcs := tab.Get([]byte("lcs"))
	for _, a := range lcs.args {
		if a.Type == "key" && a.KeyIndex != 0 {
			t.Errorf("lcs %s: key_spec_index %d", a.Name, a.KeyIndex)
		}
	}
	// Building a second table leaves the shared declarations as they were.
	again := NewTable(Families()...)
	if n := len(again.Get([]byte("get")).keySpecs); n != 1 {
		t.Errorf("GET has %d key specs after a second table", n)
	}
	if again.Count() != tab.Count() || again.Get([]byte("set")).Index() != tab.Get([]byte("set")).Index() {
		t.Error("a second table numbers commands differently")
	}
}

func TestGetKeysVariableFlags(t *testing.T) {
	tab := NewTable(Families()...)
	set := tab.Get([]byte("set"))
	cases := map[string]string{"set k v": "OW update", "set k v get": "RW access update",
		"set k v EX 1 GET": "RW access update", "set k GET": "OW update"}
	for in, want := range cases {
		pos, flags, ok := set.GetKeys(bytesArgs(in))
		if !ok || len(pos) != 1 || pos[0] != 1 || strings.Join(flags[0], " ") != want {
			t.Errorf("%s: %v %v %v, want %s", in, pos, flags, ok, want)
		}
	}
}

func bytesArgs(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}
