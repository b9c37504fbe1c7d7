package commands

import (
	"strings"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/glob"
	"github.com/revolver-db/revolver/resp"
)

// Introspection is the COMMAND command, generated from the table itself.
var Introspection = []*Command{
	{Name: "command", Arity: -1, Flags: "loading stale", ACL: "connection", Tips: "nondeterministic_output_order",
		Group: "server", Since: "2.8.13", Complexity: "O(N) where N is the total number of Redis commands",
		Summary: "Returns detailed information about all commands.", Run: commandAll, Subs: []*Command{
			{Name: "count", Arity: 2, Flags: "loading stale", ACL: "connection", Group: "server", Since: "2.8.13",
				Complexity: "O(1)", Summary: "Returns a count of commands.", Run: commandCount},
			{Name: "docs", Arity: -2, Flags: "loading stale", ACL: "connection", Tips: "nondeterministic_output_order",
				Group: "server", Since: "7.0.0", Complexity: "O(N) where N is the number of commands to look up",
				Summary: "Returns documentary information about one, multiple or all commands.",
				Args:    "[command-name...]", Run: commandDocs},
			{Name: "getkeys", Arity: -4, Flags: "loading stale", ACL: "connection", Group: "server", Since: "2.8.13",
				Complexity: "O(N) where N is the number of arguments to the command",
				Summary:    "Extracts the key names from an arbitrary command.", Args: "command arg...",
				Run: func(c *Ctx) { commandGetKeys(c, false) }},
			{Name: "getkeysandflags", Arity: -4, Flags: "loading stale", ACL: "connection", Group: "server",
				Since: "7.0.0", Complexity: "O(N) where N is the number of arguments to the command",
				Summary: "Extracts the key names and access flags for an arbitrary command.", Args: "command arg...",
				Run: func(c *Ctx) { commandGetKeys(c, true) }},
			{Name: "help", Arity: 2, Flags: "loading stale", ACL: "connection", Group: "server", Since: "5.0.0",
				Complexity: "O(1)", Summary: "Returns helpful text about the different subcommands.", Run: commandHelp},
			{Name: "info", Arity: -2, Flags: "loading stale", ACL: "connection", Tips: "nondeterministic_output_order",
				Group: "server", Since: "2.8.13", Complexity: "O(N) where N is the number of commands to look up",
				Summary: "Returns information about one, multiple or all commands.",
				Args:    "[command-name...]", Run: commandInfo},
			{Name: "list", Arity: -2, Flags: "loading stale", ACL: "connection", Tips: "nondeterministic_output_order",
				Group: "server", Since: "7.0.0", Complexity: "O(N) where N is the total number of Redis commands",
				Summary: "Returns a list of command names.",
				Args:    "[FILTERBY (filterby=MODULE module-name|ACLCAT category|PATTERN pattern:pattern)]", Run: commandList},
		}},
}

// commandAll is COMMAND without a subcommand: the container itself runs.
func commandAll(c *Ctx) {
	all := c.Srv.Table().All()
	c.W.Array(len(all))
	for _, cmd := range all {
		writeCommandInfo(c.W, cmd)
	}
}

func commandCount(c *Ctx) { c.W.Int(int64(c.Srv.Table().Len())) }

// LookupFullName finds "get" or "config|get" (any case), or nil.
func (t *Table) LookupFullName(name string) *Command {
	top, sub, hasSub := strings.Cut(strings.ToLower(name), "|")
	c := t.cmds[top]
	if c == nil || !hasSub {
		return c
	}
	return c.subs[sub]
}

func commandInfo(c *Ctx) {
	t := c.Srv.Table()
	if len(c.Args) == 2 {
		commandAll(c)
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, a := range c.Args[2:] {
		cmd := t.LookupFullName(string(a))
		if cmd == nil {
			c.W.Null()
			continue
		}
		writeCommandInfo(c.W, cmd)
	}
}

// writeCommandInfo writes one COMMAND INFO entry: name, arity, flags,
// first/last/step, ACL categories, tips, key specs, subcommands.
func writeCommandInfo(w *resp.Writer, cmd *Command) {
	w.Array(10)
	w.BulkString(cmd.fullName)
	w.Int(int64(cmd.Arity))
	var flags []string
	for _, fn := range flagNames {
		if cmd.flags&fn.f != 0 && fn.f != FlagMayReplicate && fn.f != FlagProtected {
			flags = append(flags, fn.name)
		}
	}
	w.Set(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	w.Int(int64(cmd.first))
	w.Int(int64(cmd.last))
	w.Int(int64(cmd.step))
	cats := cmd.Categories()
	w.Set(len(cats))
	for _, cat := range cats {
		w.Simple(cat)
	}
	tips := splitList(cmd.Tips)
	w.Set(len(tips))
	for _, t := range tips {
		w.BulkString(t)
	}
	w.Set(len(cmd.keySpecs))
	for _, ks := range cmd.keySpecs {
		writeKeySpec(w, ks)
	}
	subs := cmd.Subcommands()
	if len(subs) == 0 {
		w.Set(0)
		return
	}
	w.Array(len(subs))
	for _, s := range subs {
		writeCommandInfo(w, s)
	}
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ";")
}

func writeKeySpec(w *resp.Writer, ks KeySpec) {
	n := 3
	if ks.Notes != "" {
		n++
	}
	w.Map(n)
	if ks.Notes != "" {
		w.BulkString("notes")
		w.BulkString(ks.Notes)
	}
	w.BulkString("flags")
	w.Set(len(ks.Flags))
	for _, f := range ks.Flags {
		w.Simple(f)
	}
	w.BulkString("begin_search")
	w.Map(2)
	w.BulkString("type")
	w.BulkString(ks.BeginKind)
	w.BulkString("spec")
	switch ks.BeginKind {
	case "index":
		w.Map(1)
		w.BulkString("index")
		w.Int(int64(ks.Index))
	case "keyword":
		w.Map(2)
		w.BulkString("keyword")
		w.BulkString(ks.Keyword)
		w.BulkString("startfrom")
		w.Int(int64(ks.StartFrom))
	default:
		w.Map(0)
	}
	w.BulkString("find_keys")
	w.Map(2)
	w.BulkString("type")
	w.BulkString(ks.FindKind)
	w.BulkString("spec")
	switch ks.FindKind {
	case "range":
		w.Map(3)
		w.BulkString("lastkey")
		w.Int(int64(ks.LastKey))
		w.BulkString("keystep")
		w.Int(int64(ks.KeyStep))
		w.BulkString("limit")
		w.Int(int64(ks.Limit))
	case "keynum":
		w.Map(3)
		w.BulkString("keynumidx")
		w.Int(int64(ks.KeyNumIdx))
		w.BulkString("firstkey")
		w.Int(int64(ks.FirstKey))
		w.BulkString("keystep")
		w.Int(int64(ks.KeyStep))
	default:
		w.Map(0)
	}
}

func commandDocs(c *Ctx) {
	t := c.Srv.Table()
	var cmds []*Command
	if len(c.Args) == 2 {
		cmds = t.All()
	} else {
		for _, a := range c.Args[2:] {
			if cmd := t.LookupFullName(string(a)); cmd != nil {
				cmds = append(cmds, cmd)
			}
		}
	}
	c.W.Map(len(cmds))
	for _, cmd := range cmds {
		c.W.BulkString(cmd.fullName)
		writeCommandDocs(c.W, cmd)
	}
}

func writeCommandDocs(w *resp.Writer, cmd *Command) {
	n := 1 // group
	for _, s := range []string{cmd.Summary, cmd.Since, cmd.Complexity, cmd.DocFlags, cmd.Deprecated, cmd.ReplacedBy} {
		if s != "" {
			n++
		}
	}
	if len(cmd.args) > 0 {
		n++
	}
	if len(cmd.History) > 0 {
		n++
	}
	subs := cmd.Subcommands()
	if len(subs) > 0 {
		n++
	}
	w.Map(n)
	pair := func(k, v string) {
		if v != "" {
			w.BulkString(k)
			w.BulkString(v)
		}
	}
	pair("summary", cmd.Summary)
	pair("since", cmd.Since)
	pair("group", cmd.Group)
	pair("complexity", cmd.Complexity)
	if cmd.DocFlags != "" {
		w.BulkString("doc_flags")
		fl := strings.Fields(cmd.DocFlags)
		w.Set(len(fl))
		for _, f := range fl {
			w.Simple(f)
		}
	}
	pair("deprecated_since", cmd.Deprecated)
	pair("replaced_by", cmd.ReplacedBy)
	if len(cmd.History) > 0 {
		w.BulkString("history")
		w.Set(len(cmd.History)) // a set in RESP3, as Redis replies it
		for _, h := range cmd.History {
			w.Array(2)
			w.BulkString(h[0])
			w.BulkString(h[1])
		}
	}
	if len(cmd.args) > 0 {
		w.BulkString("arguments")
		writeArgs(w, cmd.args)
	}
	if len(subs) > 0 {
		w.BulkString("subcommands")
		w.Map(len(subs))
		for _, s := range subs {
			w.BulkString(s.fullName)
			writeCommandDocs(w, s)
		}
	}
}

func writeArgs(w *resp.Writer, args []*Arg) {
	w.Array(len(args))
	for _, a := range args {
		n := 2
		if a.KeyIndex >= 0 {
			n++
		}
		if a.Token != "" || a.Type == "pure-token" { // MIGRATE's empty token
			n++
		}
		if a.Since != "" {
			n++
		}
		if a.Optional || a.Multiple {
			n++
		}
		if a.Type == "oneof" || a.Type == "block" {
			n++
		}
		w.Map(n)
		w.BulkString("name")
		w.BulkString(a.Name)
		w.BulkString("type")
		w.BulkString(a.Type)
		if a.KeyIndex >= 0 {
			w.BulkString("key_spec_index")
			w.Int(int64(a.KeyIndex))
		}
		if a.Token != "" || a.Type == "pure-token" {
			w.BulkString("token")
			w.BulkString(a.Token)
		}
		if a.Since != "" {
			w.BulkString("since")
			w.BulkString(a.Since)
		}
		if a.Optional || a.Multiple {
			w.BulkString("flags")
			var fl []string
			if a.Optional {
				fl = append(fl, "optional")
			}
			if a.Multiple {
				fl = append(fl, "multiple")
			}
			if a.MultipleToken {
				fl = append(fl, "multiple_token")
			}
			w.Set(len(fl))
			for _, f := range fl {
				w.Simple(f)
			}
		}
		if a.Type == "oneof" || a.Type == "block" {
			w.BulkString("arguments")
			writeArgs(w, a.Args)
		}
	}
}

func commandList(c *Ctx) {
	var filter func(*Command) bool
	switch {
	case len(c.Args) == 2:
	case len(c.Args) == 5 && is(c.Args[2], "FILTERBY"):
		arg := string(c.Args[4])
		switch kind := c.Args[3]; {
		case is(kind, "MODULE"):
			filter = func(*Command) bool { return false }
		case is(kind, "ACLCAT"):
			bit, ok := aclBit(strings.ToLower(arg))
			filter = func(cmd *Command) bool { return ok && cmd.acl&bit != 0 }
		case is(kind, "PATTERN"):
			filter = func(cmd *Command) bool { return glob.MatchFold(arg, cmd.fullName) }
		default:
			c.SyntaxError()
			return
		}
	default:
		c.SyntaxError()
		return
	}
	var names []string
	var walk func(cmds []*Command)
	walk = func(cmds []*Command) {
		for _, cmd := range cmds {
			if filter == nil || filter(cmd) {
				names = append(names, cmd.fullName)
			}
			walk(cmd.Subcommands())
		}
	}
	walk(c.Srv.Table().All())
	c.W.Array(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

// variableKeyFlags holds, for the commands whose key spec is marked
// variable_flags, how Redis derives the key's real access flags from the
// arguments (its setGetKeys and bitfieldGetKeys): the key is always at 1.
var variableKeyFlags = map[string]func(args [][]byte) []string{
	"set": func(args [][]byte) []string {
		for _, a := range args[min(3, len(args)):] {
			if is(a, "GET") {
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"OW", "update"}
	},
	"bitfield": func(args [][]byte) []string {
		readonly := true
	scan:
		for i := 2; i < len(args); i++ {
			more := len(args) - i - 1
			switch a := args[i]; {
			case is(a, "GET") && more >= 2:
				i += 2
			case (is(a, "SET") || is(a, "INCRBY")) && more >= 3:
				readonly = false
				break scan
			case is(a, "OVERFLOW") && more >= 1:
				i++
			default:
				readonly = false
				break scan
			}
		}
		if readonly {
			return []string{"RO", "access"}
		}
		return []string{"RW", "access", "update"}
	},
}

// keyProcs are the commands whose incomplete key specs Redis completes
// with a function of the arguments, as its getkeys_proc does.
var keyProcs = map[string]func(args [][]byte) []int{
	"migrate": migrateKeyPositions,
}

// GetKeys returns the positions of the keys in args (args[0] is the
// command name) using the command's key specs, as Redis's
// getKeysUsingKeySpecs does; ok is false when the arguments do not fit.
// Keys whose spec has variable flags get the flags the arguments imply.
func (cmd *Command) GetKeys(args [][]byte) (pos []int, flags [][]string, ok bool) {
	if proc := unknownKeyProcs[cmd.fullName]; proc != nil { // specs that cannot say, as SORT's STORE
		pos, flags = proc(args)
		return pos, flags, true
	}
	if proc := variableKeyFlags[cmd.fullName]; proc != nil && len(args) > 1 {
		for _, ks := range cmd.keySpecs {
			if hasString(ks.Flags, "variable_flags") {
				return []int{1}, [][]string{proc(args)}, true
			}
		}
	}
	pos, flags, ok, incomplete := cmd.keysFromSpecs(args)
	if proc := keyProcs[cmd.fullName]; proc != nil && (!ok || incomplete) {
		// As Redis: a spec that found keys but is incomplete, or that does
		// not fit, hands over to the command's own function.
		pos, flags = proc(args), nil
		for range pos {
			flags = append(flags, cmd.keySpecs[0].Flags)
		}
		return pos, flags, true
	}
	return pos, flags, ok
}

// keysFromSpecs is getKeysUsingKeySpecs; incomplete reports that a spec
// flagged incomplete found its keys.
func (cmd *Command) keysFromSpecs(args [][]byte) (pos []int, flags [][]string, ok, incomplete bool) {
	argc := len(args)
	for _, ks := range cmd.keySpecs {
		if hasString(ks.Flags, "not_key") {
			continue
		}
		first := 0
		switch ks.BeginKind {
		case "index":
			first = ks.Index
		case "keyword":
			start, end := ks.StartFrom, argc-1
			if ks.StartFrom <= 0 {
				start, end = argc+ks.StartFrom, 1
			}
			for i := start; i != end; {
				if i >= argc || i < 1 {
					break
				}
				if is(args[i], strings.ToUpper(ks.Keyword)) {
					first = i + 1
					break
				}
				if start <= end {
					i++
				} else {
					i--
				}
			}
			if first == 0 {
				continue
			}
		default:
			return nil, nil, false, false
		}
		var last, step int
		switch ks.FindKind {
		case "range":
			step = ks.KeyStep
			switch {
			case ks.LastKey >= 0:
				last = first + ks.LastKey
			case ks.Limit == 0:
				last = argc + ks.LastKey
			default:
				last = first + ((argc-first)/ks.Limit + ks.LastKey)
			}
		case "keynum":
			step = ks.KeyStep
			if first+ks.KeyNumIdx >= argc {
				return nil, nil, false, false
			}
			n, ok := engine.ParseInt(args[first+ks.KeyNumIdx])
			if !ok || n < 0 {
				return nil, nil, false, false
			}
			first += ks.FirstKey
			last = first + int(n) - 1
		default:
			return nil, nil, false, false
		}
		if last >= argc || last < first || first >= argc {
			return nil, nil, false, false
		}
		for i := first; i <= last; i += max(step, 1) {
			pos = append(pos, i)
			flags = append(flags, ks.Flags)
		}
		incomplete = incomplete || hasString(ks.Flags, "incomplete")
	}
	return pos, flags, true, incomplete
}

func commandGetKeys(c *Ctx, withFlags bool) {
	sub := c.Args[2:]
	cmd := c.Srv.Table().Get(sub[0])
	if cmd != nil && cmd.HasSubs() && len(sub) > 1 {
		cmd = cmd.Sub(sub[1])
	}
	switch {
	case cmd == nil:
		c.W.Error("ERR Invalid command specified")
		return
	case !cmd.hasRealKeys():
		c.W.Error("ERR The command has no key arguments")
		return
	case (cmd.Arity > 0 && cmd.Arity != len(sub)) || len(sub) < -cmd.Arity:
		c.W.Error("ERR Invalid number of arguments specified for command")
		return
	}
	pos, flags, ok := cmd.GetKeys(sub)
	if !ok || len(pos) == 0 {
		if cmd.Has(FlagNoMandatoryKeys) {
			c.W.Array(0)
			return
		}
		c.W.Error("ERR Invalid arguments specified for command")
		return
	}
	c.W.Array(len(pos))
	for i, p := range pos {
		if !withFlags {
			c.W.Bulk(sub[p])
			continue
		}
		c.W.Array(2)
		c.W.Bulk(sub[p])
		c.W.Set(len(flags[i]))
		for _, f := range flags[i] {
			c.W.Simple(f)
		}
	}
}

func commandHelp(c *Ctx) {
	writeHelp(c, "COMMAND",
		"(no subcommand)",
		"    Return details about all Redis commands.",
		"COUNT",
		"    Return the total number of commands in this Redis server.",
		"LIST",
		"    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>",
		"    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>",
		"    Return the keys and the access flags from a full Redis command.")
}

// hasRealKeys reports whether some key spec names keys: shard channels are
// declared as specs with not_key, which do not count (doesCommandHaveKeys).
func (cmd *Command) hasRealKeys() bool {
	for _, ks := range cmd.keySpecs {
		if !hasString(ks.Flags, "not_key") {
			return true
		}
	}
	return false
}
