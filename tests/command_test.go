package tests

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/revolver-db/revolver/resp"
)

// TestCommandInfoMatchesRedis compares the whole COMMAND INFO entry (name,
// arity, flags, key range, ACL categories, tips, key specs, subcommands) of
// every command Revolver and Redis 7.0 both have, in RESP2 and RESP3.
// Redis lists a container's subcommands in hash order, so both sides are
// sorted by name first.
func TestCommandInfoMatchesRedis(t *testing.T) {
	redisAddr := realRedis(t)
	srv := startServer(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			p := newDiffPair(t, redisAddr, srv.Addr(), proto)
			names := p.rev.do("COMMAND", "LIST")
			if len(names.Elems) < 50 {
				t.Fatalf("COMMAND LIST: %s", names)
			}
			compared := 0
			for _, n := range names.Elems {
				if strings.Contains(n.Str, "|") {
					continue // compared inside their container
				}
				want := p.redis.do("COMMAND", "INFO", n.Str)
				got := p.rev.do("COMMAND", "INFO", n.Str)
				if want.Elems[0].Kind == resp.KindNull {
					continue // a Revolver-only command
				}
				compared++
				w, g := normalizeInfo(want.Elems[0], got.Elems[0])
				if w.String() != g.String() {
					t.Errorf("COMMAND INFO %s\n redis:    %s\n revolver: %s", n.Str, indent(w.String()), indent(g.String()))
				}
			}
			if compared < 50 {
				t.Errorf("only %d commands compared", compared)
			}
		})
	}
}

// normalizeInfo keeps, in each entry, only the subcommands both have
// (Revolver lacks CLIENT TRACKING and friends; Redis 7.0 lacks CLIENT
// SETINFO), sorted by name.
func normalizeInfo(a, b resp.Value) (resp.Value, resp.Value) {
	if len(a.Elems) != 10 || len(b.Elems) != 10 {
		return a, b
	}
	names := func(v resp.Value) map[string]bool {
		m := map[string]bool{}
		for _, s := range v.Elems[9].Elems {
			m[s.Elems[0].Str] = true
		}
		return m
	}
	inA, inB := names(a), names(b)
	keep := func(v resp.Value, other map[string]bool) resp.Value {
		subs := v.Elems[9]
		var kept []resp.Value
		for _, s := range subs.Elems {
			if other[s.Elems[0].Str] {
				kept = append(kept, s)
			}
		}
		sort.Slice(kept, func(i, j int) bool { return kept[i].Elems[0].Str < kept[j].Elems[0].Str })
		v.Elems = append([]resp.Value(nil), v.Elems...)
		v.Elems[9] = resp.Value{Kind: subs.Kind, Elems: kept}
		return v
	}
	return keep(a, inB), keep(b, inA)
}

// cliHelp is one help entry as redis-cli 7.0 builds it from COMMAND DOCS
// (cliInitCommandHelpEntry): the params line it shows as a hint, and the
// summary, since and group of "help <command>".
type cliHelp struct {
	name, params, summary, since, group string
	hasArgs                             bool
}

// parseCLIDocs reads a COMMAND DOCS reply the way redis-cli does, failing
// wherever redis-cli would hit one of its assertions (and abort).
func parseCLIDocs(t *testing.T, docs resp.Value) map[string]*cliHelp {
	t.Helper()
	isMapOrArray := func(v resp.Value) bool { return v.Kind == resp.KindMap || v.Kind == resp.KindArray }
	if !isMapOrArray(docs) || len(docs.Elems)%2 != 0 {
		t.Fatalf("COMMAND DOCS is not a map: %s", docs)
	}
	out := map[string]*cliHelp{}
	var entry func(name string, specs resp.Value)
	entry = func(name string, specs resp.Value) {
		if !isMapOrArray(specs) || len(specs.Elems)%2 != 0 {
			t.Fatalf("%s: specs are not a map", name)
		}
		h := &cliHelp{name: name}
		out[name] = h
		for i := 0; i < len(specs.Elems); i += 2 {
			key, val := specs.Elems[i], specs.Elems[i+1]
			if key.Kind != resp.KindBulk {
				t.Fatalf("%s: a docs key is not a string: %s", name, key)
			}
			switch key.Str {
			case "summary", "since", "group":
				if val.Kind != resp.KindBulk {
					t.Fatalf("%s: %s is not a string", name, key.Str)
				}
				*map[string]*string{"summary": &h.summary, "since": &h.since, "group": &h.group}[key.Str] = val.Str
			case "arguments":
				if val.Kind != resp.KindArray {
					t.Fatalf("%s: arguments is not an array", name)
				}
				h.hasArgs = len(val.Elems) > 0
				h.params = cliConcatArgs(t, name, val, " ")
			case "subcommands":
				if !isMapOrArray(val) || len(val.Elems)%2 != 0 {
					t.Fatalf("%s: subcommands is not a map", name)
				}
				for j := 0; j < len(val.Elems); j += 2 {
					if val.Elems[j].Kind != resp.KindBulk || !strings.HasPrefix(val.Elems[j].Str, name+"|") {
						t.Fatalf("%s: bad subcommand name %s", name, val.Elems[j])
					}
					entry(val.Elems[j].Str, val.Elems[j+1])
				}
			}
		}
	}
	for i := 0; i < len(docs.Elems); i += 2 {
		if docs.Elems[i].Kind != resp.KindBulk {
			t.Fatalf("command name is not a string: %s", docs.Elems[i])
		}
		entry(docs.Elems[i].Str, docs.Elems[i+1])
	}
	return out
}

// cliConcatArgs renders arguments as redis-cli's cliConcatArguments does.
func cliConcatArgs(t *testing.T, cmd string, args resp.Value, sep string) string {
	parts := make([]string, 0, len(args.Elems))
	for _, a := range args.Elems {
		parts = append(parts, cliAddArg(t, cmd, a))
	}
	return strings.Join(parts, sep)
}

// cliAddArg renders one argument as redis-cli's cliAddArgument does.
func cliAddArg(t *testing.T, cmd string, a resp.Value) string {
	if a.Kind != resp.KindMap && a.Kind != resp.KindArray {
		return ""
	}
	var name, typ, token string
	var optional, multiple, multipleToken, hasName, hasType bool
	var sub resp.Value
	for i := 0; i+1 < len(a.Elems); i += 2 {
		k, v := a.Elems[i], a.Elems[i+1]
		if k.Kind != resp.KindBulk {
			t.Fatalf("%s: argument key is not a string: %s", cmd, k)
		}
		switch k.Str {
		case "name", "token", "type":
			if v.Kind != resp.KindBulk {
				t.Fatalf("%s: argument %s is not a string: %s", cmd, k.Str, v)
			}
			switch k.Str {
			case "name":
				name, hasName = v.Str, true
			case "token":
				token = v.Str
			case "type":
				typ, hasType = v.Str, true
			}
		case "arguments":
			sub = v
		case "flags":
			if v.Kind != resp.KindSet && v.Kind != resp.KindArray {
				t.Fatalf("%s: argument flags are not a set: %s", cmd, v)
			}
			for _, f := range v.Elems {
				if f.Kind != resp.KindSimple {
					t.Fatalf("%s: argument flag is not a status: %s", cmd, f)
				}
				switch f.Str {
				case "optional":
					optional = true
				case "multiple":
					multiple = true
				case "multiple_token":
					multipleToken = true
				}
			}
		}
	}
	if !hasName || !hasType {
		t.Fatalf("%s: argument without name or type: %s", cmd, a)
	}
	repeat := ""
	switch typ {
	case "key", "string", "integer", "double", "pattern", "unix-time", "token":
		repeat = name
	case "oneof", "block":
		if sub.Kind != resp.KindArray || len(sub.Elems) == 0 {
			t.Fatalf("%s: %s argument %q has no arguments", cmd, typ, name)
		}
		sep := " "
		if typ == "oneof" {
			sep = "|"
		}
		repeat = cliConcatArgs(t, cmd, sub, sep)
	case "pure-token":
	default:
		t.Fatalf("%s: unknown argument type %q", cmd, typ)
	}
	if token != "" && typ != "pure-token" {
		token += " "
	}
	var b strings.Builder
	if optional {
		b.WriteString("[")
	}
	b.WriteString(token + repeat)
	if multiple {
		b.WriteString(" [")
		if multipleToken {
			b.WriteString(token)
		}
		b.WriteString(repeat + " ...]")
	}
	if optional {
		b.WriteString("]")
	}
	return b.String()
}

// Commands that accept arguments but document none, as in Redis (QUIT
// ignores anything after it).
var undocumentedArgs = map[string]bool{"quit": true, "replconf": true}

// TestCommandDocsForRedisCli checks that redis-cli 7.0 can build its help
// and hints from COMMAND DOCS: every command has a summary, since and
// group, and an argument tree when it takes arguments; SET's hint is
// rendered exactly as redis-cli shows it for Redis.
func TestCommandDocsForRedisCli(t *testing.T) {
	srv := startServer(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c := dialRaw(t, srv.Addr())
			if proto == 3 {
				c.do("HELLO", "3")
			}
			docs := parseCLIDocs(t, c.do("COMMAND", "DOCS"))
			info := c.do("COMMAND", "INFO")
			arity := map[string]int64{}
			var walk func(entries []resp.Value)
			walk = func(entries []resp.Value) {
				for _, e := range entries {
					arity[e.Elems[0].Str] = e.Elems[1].Int
					walk(e.Elems[9].Elems)
				}
			}
			walk(info.Elems)
			if len(docs) != len(arity) {
				t.Errorf("COMMAND DOCS has %d entries, COMMAND INFO %d", len(docs), len(arity))
			}
			for name, h := range docs {
				if h.summary == "" || h.since == "" || h.group == "" {
					t.Errorf("%s: summary %q since %q group %q", name, h.summary, h.since, h.group)
				}
				a, ok := arity[name]
				if !ok {
					t.Errorf("%s: in COMMAND DOCS but not in COMMAND INFO", name)
					continue
				}
				// The name (and subcommand name) alone is the whole call
				// when the arity says so; a container takes a subcommand.
				bare := int64(1)
				if strings.Contains(name, "|") {
					bare = 2
				}
				container := c.do("COMMAND", "LIST", "FILTERBY", "PATTERN", name+"|*")
				takesArgs := a != bare && len(container.Elems) == 0 && !undocumentedArgs[name]
				if takesArgs != h.hasArgs {
					t.Errorf("%s (arity %d): takes arguments %v, documents arguments %v", name, a, takesArgs, h.hasArgs)
				}
			}
			want := "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]"
			if got := docs["set"].params; got != want {
				t.Errorf("SET hint:\n got  %q\n want %q", got, want)
			}
		})
	}
}

// Commands whose arguments Revolver documents where Redis 7.0 documents
// none, so their hints differ on purpose.
var richerDocs = map[string]bool{"command|getkeys": true, "command|getkeysandflags": true, "debug": true}

// TestCommandHintsMatchRedis renders redis-cli's hint for every command
// both servers have and compares them.
func TestCommandHintsMatchRedis(t *testing.T) {
	redisAddr := realRedis(t)
	srv := startServer(t)
	red, rev := dialRaw(t, redisAddr), dialRaw(t, srv.Addr())
	want := parseCLIDocs(t, red.do("COMMAND", "DOCS"))
	got := parseCLIDocs(t, rev.do("COMMAND", "DOCS"))
	compared := 0
	for name, g := range got {
		w, ok := want[name]
		if !ok || richerDocs[name] {
			continue
		}
		compared++
		if g.params != w.params || g.group != w.group || g.since != w.since {
			t.Errorf("%s:\n redis:    %q (group %s, since %s)\n revolver: %q (group %s, since %s)",
				name, w.params, w.group, w.since, g.params, g.group, g.since)
		}
	}
	if compared < 50 {
		t.Errorf("only %d commands compared", compared)
	}
}

// checkFamilyDocs checks that COMMAND DOCS describes every command of a
// native family for redis-cli (summary, since, the family's group, the
// argument hint), in RESP2 and RESP3, and that COMMAND GETKEYS finds the
// key "thekey" in getkeys (a command line naming it).
func checkFamilyDocs(t *testing.T, group string, hints map[string]string, getkeys ...string) {
	srv := startServer(t)
	for _, proto := range []int{2, 3} {
		c := dialRaw(t, srv.Addr())
		if proto == 3 {
			c.do("HELLO", "3")
		}
		names := []string{"COMMAND", "DOCS"}
		for name := range hints {
			names = append(names, name)
		}
		docs := parseCLIDocs(t, c.do(names...))
		for name, hint := range hints {
			h := docs[name]
			if h == nil {
				t.Errorf("RESP%d: COMMAND DOCS has no %s", proto, name)
				continue
			}
			if h.summary == "" || h.since == "" || h.group != group || h.params != hint {
				t.Errorf("RESP%d %s: summary %q since %q group %q hint\n got %q\nwant %q", proto, name,
					h.summary, h.since, h.group, h.params, hint)
			}
		}
		v := c.do(append([]string{"COMMAND", "GETKEYS"}, getkeys...)...)
		if v.String() != `1) "thekey"` {
			t.Errorf("COMMAND GETKEYS %v: %s", getkeys, v)
		}
	}
}
