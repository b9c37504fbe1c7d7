package commands

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestACLCommandRulesRebuildTheBitmap: whatever rules shaped a selector,
// the rules ACL LIST shows for it give a new user the same commands (the
// property Redis asserts after describing a selector).
func TestACLCommandRulesRebuildTheBitmap(t *testing.T) {
	tab := NewTable(Families()...)
	var names []string
	var walk func([]*Command)
	walk = func(cmds []*Command) {
		for _, c := range cmds {
			names = append(names, c.FullName())
			walk(c.Subcommands())
		}
	}
	walk(tab.All())
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		var rules [][]byte
		for j := rnd.Intn(8); j >= 0; j-- {
			sign := "+"
			if rnd.Intn(2) == 0 {
				sign = "-"
			}
			switch rnd.Intn(4) {
			case 0:
				rules = append(rules, []byte(sign+"@"+aclNames[rnd.Intn(len(aclNames))]))
			case 1:
				rules = append(rules, []byte(sign+"@all"))
			default:
				rules = append(rules, []byte(sign+names[rnd.Intn(len(names))]))
			}
		}
		rules = append(rules, []byte("+select|0"))
		u, msg := NewACLUser("u", tab, false).SetUser(rules, tab, false)
		if msg != "" {
			t.Fatalf("%q: %s", rules, msg)
		}
		desc := u.Selectors[0].CommandRules(tab)
		var again [][]byte
		for _, r := range strings.Fields(desc) {
			again = append(again, []byte(r))
		}
		v, msg := NewACLUser("v", tab, false).SetUser(again, tab, false)
		if msg != "" {
			t.Fatalf("rules %q described as %q: %s", rules, desc, msg)
		}
		sel := tab.Get([]byte("select")).Index()
		// First arguments of an allowed command are kept but not shown,
		// as in Redis.
		if !slices.Equal(u.Selectors[0].cmds, v.Selectors[0].cmds) ||
			!u.Selectors[0].bit(sel) && !slices.Equal(u.Selectors[0].firstArgs[sel], v.Selectors[0].firstArgs[sel]) {
			t.Fatalf("rules %q described as %q give other commands", rules, desc)
		}
	}
}

// TestACLCheckWithoutAllocating: a restricted user's check of a command
// with one key range allocates nothing (it runs on every command).
func TestACLCheckWithoutAllocating(t *testing.T) {
	tab := NewTable(Families()...)
	u, _ := NewACLUser("u", tab, false).SetUser([][]byte{[]byte("+@all"), []byte("~key:*")}, tab, false)
	set := tab.Get([]byte("set"))
	args := [][]byte{[]byte("SET"), []byte("key:1"), []byte("v")}
	if n := testing.AllocsPerRun(100, func() {
		if r, _ := u.Check(set, args); r != ACLOK {
			t.Fatal("denied")
		}
	}); n != 0 {
		t.Errorf("%v allocations per check", n)
	}
	if r, i := u.Check(set, [][]byte{[]byte("SET"), []byte("other"), []byte("v")}); r != ACLDeniedKey || i != 1 {
		t.Errorf("SET other: %d at %d", r, i)
	}
}

// BenchmarkACLCheck: the per-command cost of the check for the default
// user and for a user restricted to a key pattern (bench/results/2026-11-29-acl-cost.md).
func BenchmarkACLCheck(b *testing.B) {
	tab := NewTable(Families()...)
	restricted, _ := NewACLUser("u", tab, false).SetUser([][]byte{[]byte("+@all"), []byte("~key:*")}, tab, false)
	for _, tc := range []struct {
		name string
		u    *ACLUser
		cmd  string
	}{{"default/SET", NewDefaultUser("", tab), "set"}, {"restricted/SET", restricted, "set"},
		{"default/GET", NewDefaultUser("", tab), "get"}, {"restricted/GET", restricted, "get"}} {
		cmd := tab.Get([]byte(tc.cmd))
		args := [][]byte{[]byte(tc.cmd), []byte("key:__rand_int__"), []byte("xxx")}[:max(cmd.Arity, -cmd.Arity)]
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if r, _ := tc.u.Check(cmd, args); r != ACLOK {
					b.Fatal("denied")
				}
			}
		})
	}
}
