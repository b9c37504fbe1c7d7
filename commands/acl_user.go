package commands

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// ACLUser is one ACL user as ACL SETUSER shapes it (Redis 7.0's model):
// whether it is enabled, its passwords (kept as SHA-256 hashes, never in
// clear), nopass, the payload-sanitizing flag, and its selectors, the first
// of which is the root selector the rules outside parentheses change.
type ACLUser struct {
	Name      string
	Enabled   bool
	NoPass    bool
	Hashes    []string // hex SHA-256 of each password, in the order added
	Sanitize  string   // "", "sanitize-payload" or "skip-sanitize-payload"
	Selectors []*ACLSelector
	// Unrestricted: one selector may run every command on every key and
	// channel, so dispatch skips the check (the default user's case).
	Unrestricted bool
	desc         string // cached ACL LIST description
}

// ACLSelector is a set of permissions: commands (a bit per command index,
// and one more for "future" commands, set only by +@all), allowed first
// arguments of otherwise denied commands, key patterns with their access,
// and channel patterns.
type ACLSelector struct {
	root        bool
	allKeys     bool
	allChannels bool
	allCommands bool
	cmds        []uint64
	firstArgs   map[int][]string
	keys        []aclKeyPattern
	channels    []string
}

type aclKeyPattern struct {
	pattern string
	perm    uint8 // aclRead|aclWrite
	// prefix: the pattern is "prefix*" with nothing special in prefix,
	// the common "~app:*", matched without the glob matcher.
	prefix   string
	isPrefix bool
}

func newKeyPattern(p string, perm uint8) aclKeyPattern {
	k := aclKeyPattern{pattern: p, perm: perm}
	if n := len(p); n > 0 && p[n-1] == '*' && !strings.ContainsAny(p[:n-1], "*?[]\\") {
		k.prefix, k.isPrefix = p[:n-1], true
	}
	return k
}

const (
	aclRead  uint8 = 1
	aclWrite uint8 = 2
	aclRW          = aclRead | aclWrite
)

// NewACLUser is a new user as Redis creates one: off, no passwords, no
// commands, keys or channels (unless acl-pubsub-default is allchannels).
func NewACLUser(name string, t *Table, allChannels bool) *ACLUser {
	root := newSelector(t, allChannels)
	root.root = true
	u := &ACLUser{Name: name, Selectors: []*ACLSelector{root}}
	u.refresh()
	return u
}

// NewDefaultUser is the default user for a requirepass value: on, every
// permission, the password or nopass.
func NewDefaultUser(requirepass string, t *Table) *ACLUser {
	u := NewACLUser("default", t, false)
	for _, r := range []string{"+@all", "~*", "&*", "on"} {
		u.apply([]byte(r), t, false)
	}
	u.SetRequirePass(requirepass)
	return u
}

func newSelector(t *Table, allChannels bool) *ACLSelector {
	return &ACLSelector{cmds: make([]uint64, (t.Count()+1+63)/64), allChannels: allChannels}
}

// SetRequirePass applies a requirepass value as Redis does: the user's
// passwords become that one, or none with nopass when it is empty. The
// value may be the password's hash as RequirePassHash writes it.
func (u *ACLUser) SetRequirePass(pass string) {
	u.Hashes = nil
	u.NoPass = pass == ""
	if pass != "" {
		u.Hashes = []string{RequirePassHash(pass)[1:]}
	}
	u.refresh()
}

// RequirePassHash is how requirepass is kept, and shown by CONFIG GET and
// CONFIG REWRITE: "#" and the password's SHA-256 in hex, never the password
// (issue 34); a value already in that form is kept as it is, so a
// rewritten config file starts the server with the same password.
func RequirePassHash(v string) string {
	if v == "" {
		return ""
	}
	if len(v) == 65 && v[0] == '#' {
		if _, err := hex.DecodeString(v[1:]); err == nil {
			return strings.ToLower(v)
		}
	}
	return "#" + hashPassword(v)
}

// Accepts reports whether pass authenticates the user.
func (u *ACLUser) Accepts(pass string) bool {
	if !u.Enabled {
		return false
	}
	if u.NoPass {
		return true
	}
	h := hashPassword(pass)
	ok := false
	for _, x := range u.Hashes {
		if subtle.ConstantTimeCompare([]byte(x), []byte(h)) == 1 {
			ok = true
		}
	}
	return ok
}

// AutoAuthenticated reports whether a new connection starts authenticated.
func (u *ACLUser) AutoAuthenticated() bool { return u.Enabled && u.NoPass }

func hashPassword(p string) string {
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:])
}

// Flags lists the user's flags in Redis's order.
func (u *ACLUser) Flags() []string {
	flags := []string{"off"}
	if u.Enabled {
		flags[0] = "on"
	}
	if u.NoPass {
		flags = append(flags, "nopass")
	}
	if u.Sanitize != "" {
		flags = append(flags, u.Sanitize)
	}
	return flags
}

// Clone is a deep copy of the user, for staging rules.
func (u *ACLUser) Clone() *ACLUser {
	n := *u
	n.Hashes = append([]string(nil), u.Hashes...)
	n.Selectors = make([]*ACLSelector, len(u.Selectors))
	for i, s := range u.Selectors {
		n.Selectors[i] = s.clone()
	}
	return &n
}

func (s *ACLSelector) clone() *ACLSelector {
	n := *s
	n.cmds = append([]uint64(nil), s.cmds...)
	n.keys = append([]aclKeyPattern(nil), s.keys...)
	n.channels = append([]string(nil), s.channels...)
	n.firstArgs = nil
	for id, list := range s.firstArgs {
		if n.firstArgs == nil {
			n.firstArgs = map[int][]string{}
		}
		n.firstArgs[id] = append([]string(nil), list...)
	}
	return &n
}

// SetUser applies ACL SETUSER rules to a copy of u and returns it, or the
// error text (without "ERR ") of the first rule that fails; like Redis,
// nothing changes when one does. Selectors spread over several arguments
// are merged first.
func (u *ACLUser) SetUser(rules [][]byte, t *Table, allChannels bool) (*ACLUser, string) {
	merged, bad := mergeSelectorArgs(rules)
	if bad >= 0 {
		return nil, "Unmatched parenthesis in acl selector starting at '" + string(rules[bad]) + "'."
	}
	n := u.Clone()
	for _, r := range merged {
		if msg := n.apply(r, t, allChannels); msg != "" {
			return nil, "Error in ACL SETUSER modifier '" + string(r) + "': " + msg
		}
	}
	n.refresh()
	return n, ""
}

// ApplyRules applies rules to u itself one by one, as an ACL file line
// is read: each failing rule's error text, or nil.
func (u *ACLUser) ApplyRules(rules [][]byte, t *Table, allChannels bool) (errs []ACLRuleError) {
	for _, r := range rules {
		if msg := u.apply(r, t, allChannels); msg != "" {
			errs = append(errs, ACLRuleError{Rule: string(r), Msg: msg, UnknownName: msg == aclUnknownName})
		}
	}
	u.refresh()
	return errs
}

// ACLRuleError is a rule ApplyRules could not apply.
type ACLRuleError struct {
	Rule, Msg   string
	UnknownName bool // a command or category Redis may define later (its ENOENT)
}

// MergeSelectorArgs is mergeSelectorArgs for the ACL file's reader.
func MergeSelectorArgs(rules [][]byte) ([][]byte, int) { return mergeSelectorArgs(rules) }

// mergeSelectorArgs joins "(~a" "+get)" into "(~a +get)"; bad is the index
// of an opening argument never closed, or -1.
func mergeSelectorArgs(rules [][]byte) (out [][]byte, bad int) {
	open := -1
	var cur []byte
	for i, r := range rules {
		if open < 0 && len(r) > 0 && r[0] == '(' && r[len(r)-1] != ')' {
			open, cur = i, append([]byte(nil), r...)
			continue
		}
		if open >= 0 {
			cur = append(append(cur, ' '), r...)
			if len(r) > 0 && r[len(r)-1] == ')' {
				out, open = append(out, cur), -1
			}
			continue
		}
		out = append(out, r)
	}
	if open >= 0 {
		return nil, open
	}
	return out, -1
}

// Error texts of rules, Redis's.
const (
	aclErrSyntax      = "Syntax error"
	aclUnknownName    = "Unknown command or category name in ACL"
	aclErrKeysAfter   = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
	aclErrChansAfter  = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
	aclRemoveMissing  = "The password you are trying to remove from the user does not exist"
	aclBadHash        = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	aclErrSubFirstArg = "Allowing first-arg of a subcommand is not supported"
)

// apply is one rule (Redis's ACLSetUser); "" or the error text.
func (u *ACLUser) apply(rb []byte, t *Table, allChannels bool) string {
	r := string(rb)
	if r == "" {
		return ""
	}
	switch low := strings.ToLower(r); {
	case low == "on":
		u.Enabled = true
	case low == "off":
		u.Enabled = false
	case low == "skip-sanitize-payload", low == "sanitize-payload":
		u.Sanitize = low
	case low == "nopass":
		u.NoPass, u.Hashes = true, nil
	case low == "resetpass":
		u.NoPass, u.Hashes = false, nil
	case r[0] == '>' || r[0] == '#':
		h := r[1:]
		if r[0] == '>' {
			h = hashPassword(h)
		} else if !validHash(h) {
			return aclBadHash
		}
		u.addHash(h)
	case r[0] == '<' || r[0] == '!':
		h := r[1:]
		if r[0] == '<' {
			h = hashPassword(h)
		} else if !validHash(h) {
			return aclBadHash
		}
		if !u.removeHash(h) {
			return aclRemoveMissing
		}
	case r[0] == '(' && r[len(r)-1] == ')':
		s := newSelector(t, allChannels)
		for _, op := range splitSelectorOps(r[1 : len(r)-1]) {
			if msg := s.apply(op, t); msg != "" {
				return msg
			}
		}
		u.Selectors = append(u.Selectors, s)
	case low == "clearselectors":
		u.Selectors = u.Selectors[:1]
	case low == "reset":
		root := newSelector(t, allChannels)
		root.root = true
		u.NoPass, u.Hashes, u.Enabled, u.Sanitize = false, nil, false, "sanitize-payload"
		u.Selectors = []*ACLSelector{root}
	default:
		return u.Selectors[0].apply(r, t)
	}
	return ""
}

// splitSelectorOps splits a selector's body as Redis's sdssplitargs does
// (spaces, with "..." and '...' quoting); unbalanced quotes give no ops.
func splitSelectorOps(s string) []string {
	var out []string
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
		if i >= len(s) {
			return out
		}
		var b strings.Builder
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
			if q := s[i]; q == '"' || q == '\'' {
				end := strings.IndexByte(s[i+1:], q)
				if end < 0 {
					return nil
				}
				b.WriteString(s[i+1 : i+1+end])
				i += end + 2
				continue
			}
			b.WriteByte(s[i])
			i++
		}
		out = append(out, b.String())
	}
}

// apply is one selector rule (Redis's ACLSetSelector).
func (s *ACLSelector) apply(r string, t *Table) string {
	low := strings.ToLower(r)
	switch {
	case low == "allkeys" || r == "~*":
		s.allKeys, s.keys = true, nil
	case low == "resetkeys":
		s.allKeys, s.keys = false, nil
	case low == "allchannels" || r == "&*":
		s.allChannels, s.channels = true, nil
	case low == "resetchannels":
		s.allChannels, s.channels = false, nil
	case low == "allcommands" || low == "+@all":
		for i := range s.cmds {
			s.cmds[i] = ^uint64(0)
		}
		s.allCommands, s.firstArgs = true, nil
	case low == "nocommands" || low == "-@all":
		clear(s.cmds)
		s.allCommands, s.firstArgs = false, nil
	case r[0] == '~' || r[0] == '%':
		return s.addKeyPattern(r)
	case r[0] == '&':
		if s.allChannels {
			return aclErrChansAfter
		}
		p := r[1:]
		if strings.ContainsAny(p, " \x00") {
			return aclErrSyntax
		}
		for _, x := range s.channels {
			if x == p {
				return ""
			}
		}
		s.channels = append(s.channels, p)
	case len(r) >= 2 && (r[0] == '+' || r[0] == '-') && r[1] == '@':
		bit, ok := aclBit(low[2:])
		if !ok {
			return aclUnknownName
		}
		s.setCategory(t.All(), bit, r[0] == '+')
	case r[0] == '+':
		return s.allowCommand(r[1:], t)
	case r[0] == '-':
		cmd := aclLookupCommand(t, r[1:])
		if cmd == nil {
			return aclUnknownName
		}
		s.changePerm(cmd, false)
	default:
		return aclErrSyntax
	}
	return ""
}

func (s *ACLSelector) addKeyPattern(r string) string {
	if s.allKeys {
		return aclErrKeysAfter
	}
	perm, off := aclRW, 1
	if r[0] == '%' {
		perm = 0
		for ; off < len(r); off++ {
			switch ch := r[off]; {
			case (ch == 'R' || ch == 'r') && perm&aclRead == 0:
				perm |= aclRead
			case (ch == 'W' || ch == 'w') && perm&aclWrite == 0:
				perm |= aclWrite
			case ch == '~':
				off++
				goto done
			default:
				return aclErrSyntax
			}
		}
		// No '~': Redis keeps an empty pattern ("%R" is "%R~"); with no
		// access at all it would keep one it cannot describe.
		if perm == 0 {
			return aclErrSyntax
		}
	}
done:
	p := r[off:]
	if strings.ContainsAny(p, " \x00") {
		return aclErrSyntax
	}
	for i := range s.keys {
		if s.keys[i].pattern == p {
			s.keys[i].perm |= perm
			return ""
		}
	}
	s.keys = append(s.keys, newKeyPattern(p, perm))
	return ""
}

// allowCommand is "+name", "+container|sub" or "+name|firstarg".
func (s *ACLSelector) allowCommand(name string, t *Table) string {
	i := strings.LastIndexByte(name, '|')
	if i < 0 {
		cmd := aclLookupCommand(t, name)
		if cmd == nil {
			return aclUnknownName
		}
		s.changePerm(cmd, true)
		return ""
	}
	cmd := aclLookupCommand(t, name[:i])
	switch {
	case cmd == nil:
		return aclUnknownName
	case cmd.parent != nil:
		return aclErrSubFirstArg
	case i == len(name)-1:
		return aclErrSyntax
	case cmd.HasSubs():
		sub := aclLookupCommand(t, name)
		if sub == nil {
			return aclUnknownName
		}
		s.changePerm(sub, true)
	default:
		s.addFirstArg(cmd.index, name[i+1:])
	}
	return ""
}

// aclLookupCommand finds "get" or "config|get" (any case); more than one
// "|" names nothing, as in Redis.
func aclLookupCommand(t *Table, name string) *Command {
	if strings.Count(name, "|") > 1 {
		return nil
	}
	return t.LookupFullName(name)
}

func (s *ACLSelector) addFirstArg(id int, arg string) {
	if s.firstArgs == nil {
		s.firstArgs = map[int][]string{}
	}
	for _, x := range s.firstArgs[id] {
		if strings.EqualFold(x, arg) {
			return
		}
	}
	s.firstArgs[id] = append(s.firstArgs[id], arg)
}

func (s *ACLSelector) bit(id int) bool { return s.cmds[id/64]&(1<<(id%64)) != 0 }

func (s *ACLSelector) setBit(id int, on bool) {
	if on {
		s.cmds[id/64] |= 1 << (id % 64)
		return
	}
	s.cmds[id/64] &^= 1 << (id % 64)
	s.allCommands = false
}

// changePerm allows or denies a command, and a container's subcommands
// with it.
func (s *ACLSelector) changePerm(cmd *Command, allow bool) {
	s.setBit(cmd.index, allow)
	delete(s.firstArgs, cmd.index)
	for _, sub := range cmd.Subs {
		s.setBit(sub.index, allow)
	}
}

// setCategory changes every command of a category, subcommands included.
func (s *ACLSelector) setCategory(cmds []*Command, bit aclCategory, allow bool) {
	for _, cmd := range cmds {
		if cmd.acl&bit != 0 {
			s.changePerm(cmd, allow)
		}
		if len(cmd.Subs) > 0 {
			s.setCategory(cmd.Subs, bit, allow)
		}
	}
}

func (u *ACLUser) addHash(h string) {
	u.NoPass = false
	for _, x := range u.Hashes {
		if x == h {
			return
		}
	}
	u.Hashes = append(u.Hashes, h)
}

func (u *ACLUser) removeHash(h string) bool {
	for i, x := range u.Hashes {
		if x == h {
			u.Hashes = append(u.Hashes[:i], u.Hashes[i+1:]...)
			return true
		}
	}
	return false
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, ch := range h {
		if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f') {
			return false
		}
	}
	return true
}

// refresh recomputes what is derived from the rules.
func (u *ACLUser) refresh() {
	u.desc = ""
	u.Unrestricted = false
	for _, s := range u.Selectors {
		if s.allCommands && s.allChannels && (s.allKeys || s.keysStarRW()) {
			u.Unrestricted = true
		}
	}
}

// keysStarRW: a "*" pattern with read and write access matches every key.
func (s *ACLSelector) keysStarRW() bool {
	for _, k := range s.keys {
		if k.pattern == "*" && k.perm == aclRW {
			return true
		}
	}
	return false
}
