package commands

import "github.com/revolver-db/revolver/glob"

// Results of an ACL check, in Redis's order: when no selector allows a
// command, the highest-ranked denial is the one reported and logged.
const (
	ACLOK            = 0
	ACLDeniedCmd     = 1
	ACLDeniedKey     = 2
	ACLDeniedAuth    = 3
	ACLDeniedChannel = 4
)

// How a command names channels, for the channel check.
const (
	chanNone uint8 = iota
	chanPublish
	chanSubscribe
	chanPSubscribe
)

// deriveACLChecks precomputes what the per-command check needs: which
// arguments are channels, and for the common one-range key spec the
// access its keys need, so that the check walks the arguments without
// allocating.
func (c *Command) deriveACLChecks() {
	switch c.fullName {
	case "publish", "spublish":
		c.chanKind = chanPublish
	case "subscribe", "ssubscribe":
		c.chanKind = chanSubscribe
	case "psubscribe":
		c.chanKind = chanPSubscribe
	}
	c.aclHasKeys = c.hasRealKeys()
	if len(c.keySpecs) != 1 || unknownKeyProcs[c.fullName] != nil || keyProcs[c.fullName] != nil {
		return
	}
	ks := c.keySpecs[0]
	if ks.BeginKind != "index" || ks.FindKind != "range" || ks.Limit != 0 || ks.KeyStep <= 0 ||
		hasString(ks.Flags, "not_key") {
		return
	}
	c.aclSimpleKeys, c.aclKeyPerm = true, keyAccess(ks.Flags)
	c.aclVarKeys = variableKeyFlags[c.fullName] != nil
}

// variableKeyPerm is the access of a variable_flags key: SET's without
// allocating (it is on the hot path), the others' by their function.
func (c *Command) variableKeyPerm(args [][]byte) uint8 {
	if c.fullName == "set" {
		for _, a := range args[min(3, len(args)):] {
			if is(a, "GET") {
				return aclRW
			}
		}
		return aclWrite
	}
	return keyAccess(variableKeyFlags[c.fullName](args))
}

// keyAccess is the access a key spec's flags ask for: read for "access",
// write for "insert", "delete" and "update".
func keyAccess(flags []string) uint8 {
	var p uint8
	for _, f := range flags {
		switch f {
		case "access":
			p |= aclRead
		case "insert", "delete", "update":
			p |= aclWrite
		}
	}
	return p
}

// aclKeyCache keeps a command's keys between the selectors checked.
type aclKeyCache struct {
	done  bool
	pos   []int
	flags [][]string
}

// Check tells whether the user may run cmd with args (Redis's
// ACLCheckAllUserCommandPerm): ACLOK, or the denial and the index in args
// of the key or channel denied.
func (u *ACLUser) Check(cmd *Command, args [][]byte) (result, idx int) {
	if u.Unrestricted {
		return ACLOK, 0
	}
	result = ACLDeniedCmd
	var cache aclKeyCache
	for _, s := range u.Selectors {
		r, i := s.check(cmd, args, &cache)
		if r == ACLOK {
			return ACLOK, 0
		}
		if r > result || r == result && i > idx {
			result, idx = r, i
		}
	}
	return result, idx
}

func (s *ACLSelector) check(cmd *Command, args [][]byte, cache *aclKeyCache) (int, int) {
	if !s.allCommands && !cmd.Has(FlagNoAuth) && !s.bit(cmd.index) && !s.firstArgAllowed(cmd, args) {
		return ACLDeniedCmd, 0
	}
	if !s.allKeys && cmd.aclHasKeys {
		if i := s.deniedKey(cmd, args, cache); i > 0 {
			return ACLDeniedKey, i
		}
	}
	if !s.allChannels && cmd.chanKind != chanNone {
		last := len(args) - 1
		if cmd.chanKind == chanPublish {
			last = min(last, 1)
		}
		for i := 1; i <= last; i++ {
			if !s.channelAllowed(args[i], cmd.chanKind == chanPSubscribe) {
				return ACLDeniedChannel, i
			}
		}
	}
	return ACLOK, 0
}

func (s *ACLSelector) firstArgAllowed(cmd *Command, args [][]byte) bool {
	list := s.firstArgs[cmd.index]
	if len(args) < 2 || len(list) == 0 {
		return false
	}
	at := 1
	if cmd.parent != nil {
		at = 2
	}
	if at >= len(args) {
		return false
	}
	for _, a := range list {
		if is(args[at], a) {
			return true
		}
	}
	return false
}

// deniedKey is the position of the first key the selector may not access,
// or 0.
func (s *ACLSelector) deniedKey(cmd *Command, args [][]byte, cache *aclKeyCache) int {
	if cmd.aclSimpleKeys {
		ks := &cmd.keySpecs[0]
		first := ks.Index
		last := first + ks.LastKey
		if ks.LastKey < 0 {
			last = len(args) + ks.LastKey
		}
		if last >= len(args) || last < first {
			return 0 // arguments that do not fit name no key, as in Redis
		}
		perm := cmd.aclKeyPerm
		if cmd.aclVarKeys {
			perm = cmd.variableKeyPerm(args)
		}
		for i := first; i <= last; i += ks.KeyStep {
			if !s.keyAllowed(args[i], perm) {
				return i
			}
		}
		return 0
	}
	if !cache.done {
		pos, flags, ok := cmd.GetKeys(args)
		if ok {
			cache.pos, cache.flags = pos, flags
		}
		cache.done = true
	}
	for j, i := range cache.pos {
		if !s.keyAllowed(args[i], keyAccess(cache.flags[j])) {
			return i
		}
	}
	return 0
}

func (s *ACLSelector) keyAllowed(key []byte, need uint8) bool {
	for i := range s.keys {
		k := &s.keys[i]
		if k.perm&need != need {
			continue
		}
		if k.isPrefix {
			if len(key) >= len(k.prefix) && string(key[:len(k.prefix)]) == k.prefix {
				return true
			}
		} else if glob.MatchBytes(k.pattern, key) {
			return true
		}
	}
	return false
}

// channelAllowed: a channel matches the selector's patterns; a pattern
// (PSUBSCRIBE's) must equal one of them literally, as in Redis 7.0.
func (s *ACLSelector) channelAllowed(ch []byte, pattern bool) bool {
	if s.allChannels {
		return true
	}
	return channelInList(s.channels, ch, pattern)
}

func channelInList(list []string, ch []byte, pattern bool) bool {
	for _, p := range list {
		if pattern && p == string(ch) || !pattern && glob.MatchBytes(p, ch) {
			return true
		}
	}
	return false
}

// ChannelAllowed tells whether any selector of the user allows the
// channel (or the literal pattern).
func (u *ACLUser) ChannelAllowed(ch []byte, pattern bool) bool {
	for _, s := range u.Selectors {
		if s.channelAllowed(ch, pattern) {
			return true
		}
	}
	return false
}

// ChannelsWidened reports whether every channel permission of old is
// still in u (Redis's test before killing subscribers: all channels, or a
// superset of the old patterns).
func (u *ACLUser) ChannelsWidened(old *ACLUser) bool {
	var upcoming []string
	for _, s := range u.Selectors {
		if s.allChannels {
			return true
		}
		upcoming = append(upcoming, s.channels...)
	}
	for _, s := range old.Selectors {
		if s.allChannels {
			return false
		}
		for _, c := range s.channels {
			found := false
			for _, x := range upcoming {
				found = found || x == c
			}
			if !found {
				return false
			}
		}
	}
	return true
}

// KeepsSubscription tells whether a subscriber of u may keep a channel
// (or pattern) subscription under u's new channel permissions.
func (u *ACLUser) KeepsSubscription(ch []byte, pattern bool) bool {
	var upcoming []string
	for _, s := range u.Selectors {
		if s.allChannels {
			return true
		}
		upcoming = append(upcoming, s.channels...)
	}
	return channelInList(upcoming, ch, pattern)
}

// DeniedText is the NOPERM reply to a command the check denied.
func DeniedText(result int, cmd *Command) string {
	switch result {
	case ACLDeniedCmd:
		return "NOPERM this user has no permissions to run the '" + cmd.fullName + "' command"
	case ACLDeniedKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case ACLDeniedChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "ERR no permission"
}

// ScriptDeniedText is a script's error for a denied redis.call.
func ScriptDeniedText(result int) string {
	switch result {
	case ACLDeniedCmd:
		return "The user executing the script can't run this command or subcommand"
	case ACLDeniedKey:
		return "The user executing the script can't access at least one of the keys mentioned in the command arguments"
	case ACLDeniedChannel:
		return "The user executing the script can't publish to the channel mentioned in the command"
	}
	return "The user executing the script lacking the permissions for the command"
}

// ReasonName is ACL LOG's "reason".
func ReasonName(result int) string {
	switch result {
	case ACLDeniedCmd:
		return "command"
	case ACLDeniedKey:
		return "key"
	case ACLDeniedChannel:
		return "channel"
	case ACLDeniedAuth:
		return "auth"
	}
	return "unknown"
}
