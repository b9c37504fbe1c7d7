// Package commands is the command table: one file per family, each
// declaring its commands (name, arity, flags, key specs, docs, handler) and
// holding their handlers. A handler parses its arguments, calls the engine
// and writes the reply; data-structure logic lives in the engine.
package commands

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Handler runs one command.
type Handler func(c *Ctx)

// Command is one entry of the table. Families declare the string fields;
// register derives the rest (flags, key specs, ACL categories, docs).
type Command struct {
	Name  string // lower case; "config|get" for a subcommand
	Arity int    // Redis convention: n exact, -n at least n (name included)
	// Flags in Redis's spelling: "write denyoom", "readonly fast", ...
	Flags string
	// ACL lists the explicit ACL categories ("string", "keyspace", ...);
	// read/write/fast/slow/admin/... are derived from Flags as Redis does.
	ACL string
	// Keys is the key specs, ";"-separated, each "FLAGS @begin[..last[/step[/limit]]]",
	// "FLAGS @kw:KEYWORD:startfrom ..." or "... #keynumidx,firstkey,step".
	Keys       string
	Group      string
	Since      string
	Complexity string
	Summary    string
	Args       string // usage syntax, see parseArgs
	Tips       string // ";"-separated command tips
	DocFlags   string // "deprecated", "syscmd"
	Deprecated string // deprecated_since
	ReplacedBy string
	History    [][2]string // COMMAND DOCS history: {version, change}
	Run        Handler
	Subs       []*Command

	flags    Flag
	keySpecs []KeySpec
	acl      aclCategory
	first    int // legacy key range for COMMAND INFO and GETKEYS
	last     int
	step     int
	args     []*Arg
	parent   *Command
	subs     map[string]*Command
	sorted   []*Command // subs by name (Subcommands)
	fullName string
	index    int
	ready    bool // derived fields are set
	// What the ACL check needs (acl_check.go).
	chanKind      uint8
	aclHasKeys    bool
	aclSimpleKeys bool
	aclKeyPerm    uint8
	aclVarKeys    bool
}

// Flag is a command flag.
type Flag uint32

// Command flags, in the order COMMAND INFO lists them.
const (
	FlagWrite Flag = 1 << iota
	FlagReadonly
	FlagDenyOOM
	FlagAdmin
	FlagPubSub
	FlagNoScript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagFast
	FlagNoAuth
	FlagNoMandatoryKeys
	FlagNoAsyncLoading
	FlagNoMulti
	FlagMovableKeys
	FlagAllowBusy
	FlagMayReplicate // hidden from COMMAND INFO, as in Redis
	FlagProtected    // hidden
	FlagAsking       // RESTORE-ASKING: accepted on an importing slot after ASKING
)

var flagNames = []struct {
	f    Flag
	name string
}{
	{FlagWrite, "write"}, {FlagReadonly, "readonly"}, {FlagDenyOOM, "denyoom"}, {FlagAdmin, "admin"},
	{FlagPubSub, "pubsub"}, {FlagNoScript, "noscript"}, {FlagBlocking, "blocking"}, {FlagLoading, "loading"},
	{FlagStale, "stale"}, {FlagSkipMonitor, "skip_monitor"}, {FlagSkipSlowlog, "skip_slowlog"},
	{FlagAsking, "asking"},
	{FlagFast, "fast"}, {FlagNoAuth, "no_auth"}, {FlagNoMandatoryKeys, "no_mandatory_keys"},
	{FlagNoAsyncLoading, "no_async_loading"}, {FlagNoMulti, "no_multi"}, {FlagMovableKeys, "movablekeys"},
	{FlagAllowBusy, "allow_busy"}, {FlagMayReplicate, "may_replicate"}, {FlagProtected, "protected"},
}

// Has reports whether the command has flag f.
func (c *Command) Has(f Flag) bool { return c.flags&f != 0 }

// FullName is "get", or "config|get" for a subcommand.
func (c *Command) FullName() string { return c.fullName }

// Parent is the container command of a subcommand.
func (c *Command) Parent() *Command { return c.parent }

// KeyPositions returns the legacy (first, last, step) key range.
func (c *Command) KeyPositions() (int, int, int) { return c.first, c.last, c.step }

// aclCategory is a bit set of ACL categories.
type aclCategory uint32

var aclNames = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
	"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
	"transaction", "scripting",
	// The native families' own categories, after Redis's.
	"delay", "queue", "numpool", "room", "uv"}

// nativeCategories are the families whose Group is also their category.
var nativeCategories = map[string]bool{"delay": true, "queue": true, "numpool": true, "room": true, "uv": true}

// RedisCategoryCount is how many of the categories are Redis's own.
const RedisCategoryCount = 21

func aclBit(name string) (aclCategory, bool) {
	for i, n := range aclNames {
		if n == name {
			return 1 << i, true
		}
	}
	return 0, false
}

// Categories lists the ACL categories as COMMAND INFO shows them.
func (c *Command) Categories() []string {
	var out []string
	for i, n := range aclNames {
		if c.acl&(1<<i) != 0 {
			out = append(out, "@"+n)
		}
	}
	return out
}

// KeySpec describes where a command's keys are (COMMAND INFO key specs).
type KeySpec struct {
	Flags     []string
	Notes     string
	BeginKind string // "index", "keyword" or "unknown"
	Index     int
	Keyword   string
	StartFrom int
	FindKind  string // "range", "keynum" or "unknown"
	LastKey   int
	KeyStep   int
	Limit     int
	KeyNumIdx int
	FirstKey  int
}

var tableMu sync.Mutex

// Table maps names to commands.
type Table struct {
	cmds map[string]*Command
	// byName also holds each name in upper case: clients send either, and
	// one map probe is cheaper than lower-casing every command name.
	byName map[string]*Command
	count  int // commands and subcommands, for Index
	// sections are the native families' INFO sections, in family order.
	sections []*InfoSection
	sorted   []*Command // the commands by name (All)
}

// InfoSections are the native families' INFO sections, in family order.
func (t *Table) InfoSections() []*InfoSection { return t.sections }

// NewTable builds a table from families of commands, deriving each
// command's metadata and collecting the families' INFO sections. It panics on a malformed declaration: that is a bug in
// this package, caught by its tests.
func NewTable(families ...Family) *Table {
	tableMu.Lock() // the declarations are shared by every table
	defer tableMu.Unlock()
	t := &Table{cmds: map[string]*Command{}, byName: map[string]*Command{}}
	for _, fam := range families {
		if fam.Info != nil {
			t.sections = append(t.sections, fam.Info)
		}
		for _, c := range fam.Commands {
			if err := c.init(nil); err != nil {
				panic(err)
			}
			if _, dup := t.cmds[c.Name]; dup {
				panic("duplicate command " + c.Name)
			}
			t.cmds[c.Name] = c
			t.byName[c.Name] = c
			t.byName[strings.ToUpper(c.Name)] = c
			t.number(c)
			t.sorted = append(t.sorted, c)
		}
	}
	slices.SortFunc(t.sorted, byName)
	return t
}

func byName(a, b *Command) int { return strings.Compare(a.Name, b.Name) }

func (c *Command) init(parent *Command) error {
	// The declarations are package variables and every server builds a
	// table from them: derive once, so that a second table neither
	// duplicates key specs nor writes what running servers read.
	if c.ready {
		return nil
	}
	c.parent = parent
	c.fullName = c.Name
	if parent != nil {
		c.fullName = parent.Name + "|" + c.Name
	}
	for _, f := range strings.Fields(c.Flags) {
		found := false
		for _, fn := range flagNames {
			if fn.name == f {
				c.flags |= fn.f
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: unknown flag %q", c.fullName, f)
		}
	}
	for _, a := range strings.Fields(c.ACL) {
		b, ok := aclBit(a)
		if !ok {
			return fmt.Errorf("%s: unknown ACL category %q", c.fullName, a)
		}
		c.acl |= b
	}
	c.deriveACL()
	if c.Keys != "" {
		for _, s := range strings.Split(c.Keys, ";") {
			ks, err := parseKeySpec(s)
			if err != nil {
				return fmt.Errorf("%s: %w", c.fullName, err)
			}
			c.keySpecs = append(c.keySpecs, ks)
		}
	}
	c.deriveLegacyRange()
	c.deriveACLChecks()
	args, err := parseArgs(c.Args)
	if err != nil {
		return fmt.Errorf("%s: args: %w", c.fullName, err)
	}
	c.args = args
	capKeyIndexes(c.args, len(c.keySpecs)-1)
	if c.Run == nil && len(c.Subs) == 0 {
		return fmt.Errorf("%s: no handler", c.fullName)
	}
	if len(c.Subs) > 0 {
		c.subs = map[string]*Command{}
		for _, s := range c.Subs {
			if err := s.init(c); err != nil {
				return err
			}
			c.subs[s.Name] = s
			c.sorted = append(c.sorted, s)
		}
		slices.SortFunc(c.sorted, byName)
	}
	c.ready = true
	return nil
}

// deriveACL adds the categories Redis derives from flags.
func (c *Command) deriveACL() {
	add := func(n string) { b, _ := aclBit(n); c.acl |= b }
	group := c.Group
	if group == "" && c.parent != nil {
		group = c.parent.Group
	}
	if nativeCategories[group] {
		add(group)
	}
	scripting, _ := aclBit("scripting")
	if c.Has(FlagWrite) {
		add("write")
	}
	if c.Has(FlagReadonly) && c.acl&scripting == 0 {
		add("read")
	}
	if c.Has(FlagAdmin) {
		add("admin")
		add("dangerous")
	}
	if c.Has(FlagPubSub) {
		add("pubsub")
	}
	if c.Has(FlagFast) {
		add("fast")
	}
	if c.Has(FlagBlocking) {
		add("blocking")
	}
	if fast, _ := aclBit("fast"); c.acl&fast == 0 {
		add("slow")
	}
}

// deriveLegacyRange computes COMMAND INFO's first/last/step from the key
// specs the way Redis does, setting movablekeys when they do not fit.
func (c *Command) deriveLegacyRange() {
	if len(c.keySpecs) == 0 {
		return
	}
	if len(c.keySpecs) == 1 && c.keySpecs[0].BeginKind == "index" && c.keySpecs[0].FindKind == "range" {
		ks := c.keySpecs[0]
		c.first, c.step = ks.Index, ks.KeyStep
		c.last = ks.LastKey
		if c.last >= 0 {
			c.last += c.first
		}
		if hasString(ks.Flags, "incomplete") {
			c.flags |= FlagMovableKeys
		}
		return
	}
	first, last, prevLast := int(^uint(0)>>1), 0, 0
	for _, ks := range c.keySpecs {
		if ks.BeginKind != "index" || ks.FindKind != "range" {
			c.flags |= FlagMovableKeys
			continue
		}
		if ks.KeyStep != 1 || (prevLast != 0 && prevLast != ks.Index-1) {
			c.flags |= FlagMovableKeys
			continue
		}
		if hasString(ks.Flags, "incomplete") {
			c.flags |= FlagMovableKeys
		}
		first = min(first, ks.Index)
		abs := ks.LastKey
		if abs >= 0 {
			abs += ks.Index
		}
		if uint(abs) > uint(last) { // unsigned, so -1 ("to the end") wins
			last = abs
		}
		prevLast = last
	}
	if first == int(^uint(0)>>1) {
		c.flags |= FlagMovableKeys
		return
	}
	c.first, c.last, c.step = first, last, 1
}

// capKeyIndexes makes key arguments beyond the last key spec share it, as
// in Redis, where one range spec covers several key arguments (LCS key1
// key2 both have key_spec_index 0).
func capKeyIndexes(args []*Arg, last int) {
	for _, a := range args {
		if a.Type == "key" && !a.explicitKey && a.KeyIndex > last && last >= 0 {
			a.KeyIndex = last
		}
		capKeyIndexes(a.Args, last)
	}
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parseKeySpec parses "RW access update @1", "RO access @1..-1/2",
// "RW @kw:STREAMS:1 ..-1/2" or "RO @2 #0,1,1" (keynum).
func parseKeySpec(s string) (KeySpec, error) {
	ks := KeySpec{BeginKind: "unknown", FindKind: "unknown"}
	if i := strings.Index(s, "notes="); i >= 0 {
		ks.Notes = strings.TrimSpace(s[i+len("notes="):])
		s = s[:i]
	}
	atoi := func(v string) (int, error) { return strconv.Atoi(v) }
	for _, f := range strings.Fields(s) {
		var err error
		switch {
		case strings.HasPrefix(f, "@kw:"):
			parts := strings.Split(f[4:], ":")
			if len(parts) != 2 {
				return ks, fmt.Errorf("bad keyword spec %q", f)
			}
			ks.BeginKind, ks.Keyword = "keyword", parts[0]
			ks.StartFrom, err = atoi(parts[1])
		case strings.HasPrefix(f, "@"):
			ks.BeginKind = "index"
			idx, rng, _ := strings.Cut(f[1:], "..")
			if ks.Index, err = atoi(idx); err != nil {
				return ks, err
			}
			ks.FindKind, ks.KeyStep = "range", 1
			if rng != "" {
				err = parseRange(rng, &ks)
			}
		case strings.HasPrefix(f, ".."):
			ks.FindKind, ks.KeyStep = "range", 1
			err = parseRange(f[2:], &ks)
		case strings.HasPrefix(f, "#"):
			ks.FindKind = "keynum"
			parts := strings.Split(f[1:], ",")
			if len(parts) != 3 {
				return ks, fmt.Errorf("bad keynum spec %q", f)
			}
			if ks.KeyNumIdx, err = atoi(parts[0]); err == nil {
				if ks.FirstKey, err = atoi(parts[1]); err == nil {
					ks.KeyStep, err = atoi(parts[2])
				}
			}
		default:
			ks.Flags = append(ks.Flags, f)
		}
		if err != nil {
			return ks, fmt.Errorf("key spec %q: %w", s, err)
		}
	}
	if ks.BeginKind == "keyword" && ks.FindKind == "unknown" {
		ks.FindKind, ks.KeyStep = "range", 1
	}
	return ks, nil
}

// parseRange parses "last[/step[/limit]]".
func parseRange(s string, ks *KeySpec) error {
	parts := strings.Split(s, "/")
	var err error
	if ks.LastKey, err = strconv.Atoi(parts[0]); err != nil {
		return err
	}
	if len(parts) > 1 {
		if ks.KeyStep, err = strconv.Atoi(parts[1]); err != nil {
			return err
		}
	}
	if len(parts) > 2 {
		if ks.Limit, err = strconv.Atoi(parts[2]); err != nil {
			return err
		}
	}
	return nil
}

// number gives c and its subcommands their Index.
func (t *Table) number(c *Command) {
	if c.index != t.count { // a second table over the same families writes nothing
		c.index = t.count
	}
	t.count++
	for _, s := range c.Subs {
		t.number(s)
	}
}

// Index is the command's position in the table (subcommands included), for
// per-command arrays such as statistics.
func (c *Command) Index() int { return c.index }

// Count is the number of commands and subcommands.
func (t *Table) Count() int { return t.count }

// Get returns the top-level command named name (any case), or nil.
func (t *Table) Get(name []byte) *Command {
	if c, ok := t.byName[string(name)]; ok { // no allocation: map index by string(bytes)
		return c
	}
	var buf [32]byte
	if len(name) > len(buf) {
		return t.cmds[strings.ToLower(string(name))]
	}
	low := buf[:len(name)]
	for i, ch := range name {
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		low[i] = ch
	}
	return t.cmds[string(low)]
}

// Rename is redis.conf's rename-command: the command named from answers to
// to instead, or to no name when to is "" (scripts and COMMAND follow, as
// in Redis). Errors are Redis's texts.
func (t *Table) Rename(from, to string) error {
	from, to = strings.ToLower(from), strings.ToLower(to)
	c := t.cmds[from]
	if c == nil {
		return errors.New("No such command in rename-command")
	}
	if to != "" && to != from && t.cmds[to] != nil {
		return errors.New("Target command name already exists")
	}
	delete(t.cmds, from)
	for name, bc := range t.byName {
		if bc == c {
			delete(t.byName, name)
		}
	}
	if to != "" {
		t.cmds[to] = c
		t.byName[to], t.byName[strings.ToUpper(to)] = c, c
	}
	return nil
}

// Sub returns the subcommand of c named name (any case), or nil.
func (c *Command) Sub(name []byte) *Command {
	return c.subs[strings.ToLower(string(name))]
}

// HasSubs reports whether c is a container command.
func (c *Command) HasSubs() bool { return len(c.subs) > 0 }

// Resolve finds the command args names and checks its arity. The error is
// Redis's reply text for an unknown command, unknown subcommand or wrong
// number of arguments.
func (t *Table) Resolve(args [][]byte) (*Command, string) {
	return t.ResolveFound(t.Get(args[0]), args)
}

// ResolveFound is Resolve for a caller that looked args[0] up already: c is
// what Get returned for it.
func (t *Table) ResolveFound(c *Command, args [][]byte) (*Command, string) {
	c, errMsg := t.Lookup(c, args)
	if errMsg != "" {
		return nil, errMsg
	}
	return c, ""
}

// Lookup is ResolveFound, except that a command (or subcommand, or
// container named alone) given the wrong number of arguments is returned
// with the error: Redis counts that refusal in its rejected_calls.
func (t *Table) Lookup(c *Command, args [][]byte) (*Command, string) {
	if c == nil {
		return nil, unknownCommand(args)
	}
	if c.HasSubs() && len(args) > 1 {
		sub := c.Sub(args[1])
		if sub == nil {
			return nil, fmt.Sprintf("ERR unknown subcommand '%.128s'. Try %s HELP.", clean(args[1]), strings.ToUpper(c.Name))
		}
		c = sub
	}
	if (c.Arity > 0 && len(args) != c.Arity) || len(args) < -c.Arity {
		return c, "ERR wrong number of arguments for '" + c.fullName + "' command"
	}
	return c, ""
}

func unknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		room := 128 - b.Len()
		s := clean(a)
		if len(s) > room {
			s = s[:room]
		}
		b.WriteString("'" + s + "' ")
	}
	name := clean(args[0])
	if len(name) > 128 {
		name = name[:128]
	}
	return "ERR unknown command '" + name + "', with args beginning with: " + b.String()
}

// clean replaces line breaks so user text cannot break an error frame.
func clean(b []byte) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(string(b))
}

// All returns the top-level commands sorted by name.
func (t *Table) All() []*Command { return slices.Clone(t.sorted) }

// Len is the number of top-level commands.
func (t *Table) Len() int { return len(t.cmds) }

// Subcommands returns c's subcommands sorted by name.
func (c *Command) Subcommands() []*Command { return slices.Clone(c.sorted) }
