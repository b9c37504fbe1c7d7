package commands

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// ACLUser is the one user Revolver has, "default", as ACL SETUSER shapes
// it. Only what Revolver can honour is modelled: whether the user is
// enabled, its passwords (kept as SHA-256 hashes, as Redis keeps them),
// nopass, and the payload-sanitizing flag. Every client runs with all keys,
// channels and commands, so the permission part is always "~* &* +@all".
type ACLUser struct {
	Enabled  bool
	NoPass   bool
	Hashes   []string // hex SHA-256 of each password, in the order added
	Sanitize string   // "", "sanitize-payload" or "skip-sanitize-payload"
}

// NewDefaultUser is the default user for a requirepass value.
func NewDefaultUser(requirepass string) *ACLUser {
	u := &ACLUser{Enabled: true}
	u.SetRequirePass(requirepass)
	return u
}

// SetRequirePass applies a requirepass value as Redis does: the user's
// passwords become that one, or none with nopass when it is empty.
func (u *ACLUser) SetRequirePass(pass string) {
	u.Hashes = nil
	u.NoPass = pass == ""
	if pass != "" {
		u.Hashes = []string{hashPassword(pass)}
	}
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
	for _, x := range u.Hashes {
		if x == h {
			return true
		}
	}
	return false
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

// Describe is the user's rules as ACL LIST shows them.
func (u *ACLUser) Describe() string {
	parts := u.Flags()
	for _, h := range u.Hashes {
		parts = append(parts, "#"+h)
	}
	return strings.Join(append(parts, "~*", "&*", "+@all"), " ")
}

// Apply applies ACL SETUSER rules to a copy of u and returns it, or the
// error reply for the first rule that fails; like Redis, nothing changes
// when one does.
func (u *ACLUser) Apply(rules [][]byte, t *Table) (*ACLUser, string) {
	n := *u
	n.Hashes = append([]string(nil), u.Hashes...)
	for _, r := range rules {
		msg := n.applyRule(string(r))
		if msg == aclPermissionRule {
			msg = permissionRule(string(r), t)
		}
		if msg != "" {
			return nil, "ERR Error in ACL SETUSER modifier '" + string(r) + "': " + msg
		}
	}
	return &n, ""
}

const (
	aclRemoveMissing = "The password you are trying to remove from the user does not exist"
	aclBadHash       = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	aclNoPermissions = "Revolver has no ACL permissions: every client may run every command on every key and " +
		"channel, so only ~* &* +@all (allkeys, allchannels, allcommands) are accepted"
)

func (u *ACLUser) applyRule(r string) string {
	switch low := strings.ToLower(r); {
	case low == "on":
		u.Enabled = true
	case low == "off":
		u.Enabled = false
	case low == "nopass":
		u.NoPass, u.Hashes = true, nil
	case low == "resetpass":
		u.NoPass, u.Hashes = false, nil
	case low == "sanitize-payload", low == "skip-sanitize-payload":
		u.Sanitize = low
	case strings.HasPrefix(r, ">"):
		u.addHash(hashPassword(r[1:]))
	case strings.HasPrefix(r, "#"):
		if !validHash(r[1:]) {
			return aclBadHash
		}
		u.addHash(r[1:])
	case strings.HasPrefix(r, "<"), strings.HasPrefix(r, "!"):
		h := r[1:]
		if r[0] == '<' {
			h = hashPassword(h)
		} else if !validHash(h) {
			return aclBadHash
		}
		if !u.removeHash(h) {
			return aclRemoveMissing
		}
	case r == "~*", low == "allkeys", r == "&*", low == "allchannels", low == "allcommands", low == "clearselectors":
		// What the user has already (it has no selectors to clear).
	default:
		return aclPermissionRule
	}
	return ""
}

// aclPermissionRule marks a rule about keys, channels or commands, which
// permissionRule judges.
const aclPermissionRule = "\x00permission"

// permissionRule judges a key, channel, command or selector rule for a
// user that has all keys, channels and commands. Redis refuses a key or
// channel pattern added to '*', and accepts allowing a command or category
// the user has: those answers are Redis's. A rule that would take
// permissions away cannot be honoured, as Revolver has no permissions.
func permissionRule(r string, t *Table) string {
	low := strings.ToLower(r)
	switch {
	case low == "resetkeys", low == "resetchannels", low == "nocommands", low == "reset", low == "-@all",
		strings.HasPrefix(r, "("):
		return aclNoPermissions
	case strings.HasPrefix(r, "~"), strings.HasPrefix(r, "%"):
		return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have " +
			"any effect. Try 'resetkeys' to start with an empty list of patterns"
	case strings.HasPrefix(r, "&"):
		return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not " +
			"have any effect. Try 'resetchannels' to start with an empty list of channels"
	case strings.HasPrefix(r, "+@"), strings.HasPrefix(r, "-@"):
		if _, ok := aclBit(low[2:]); !ok && low[2:] != "all" {
			return aclUnknownName
		}
	case strings.HasPrefix(r, "+"), strings.HasPrefix(r, "-"):
		name := r[1:]
		top, sub, hasSub := strings.Cut(name, "|")
		cmd := t.LookupFullName(top)
		switch {
		case cmd == nil:
			return aclUnknownName
		case hasSub && r[0] == '+' && strings.Contains(sub, "|"):
			return "Allowing first-arg of a subcommand is not supported"
		case hasSub && sub == "" && r[0] == '+':
			return "Syntax error"
		case hasSub && (r[0] == '-' || cmd.HasSubs()) && t.LookupFullName(name) == nil:
			return aclUnknownName
		}
	default:
		return "Syntax error"
	}
	if r[0] == '-' {
		return aclNoPermissions
	}
	return "" // allowing what the user may already run
}

const aclUnknownName = "Unknown command or category name in ACL"

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
