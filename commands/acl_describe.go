package commands

import "strings"

// Describe is the user's rules as ACL LIST and the ACL file show them,
// e.g. "on nopass sanitize-payload ~* &* +@all".
func (u *ACLUser) Describe(t *Table) string {
	if u.desc != "" {
		return u.desc
	}
	parts := u.Flags()
	for _, h := range u.Hashes {
		parts = append(parts, "#"+h)
	}
	var b strings.Builder
	b.WriteString(strings.Join(parts, " "))
	b.WriteByte(' ')
	for _, s := range u.Selectors {
		if s.root {
			b.WriteString(s.describe(t))
		} else {
			b.WriteString(" (" + s.describe(t) + ")")
		}
	}
	u.desc = b.String()
	return u.desc
}

func (s *ACLSelector) describe(t *Table) string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.String() + " ")
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.CommandRules(t))
	return b.String()
}

func (k aclKeyPattern) String() string {
	switch k.perm {
	case aclRead:
		return "%R~" + k.pattern
	case aclWrite:
		return "%W~" + k.pattern
	}
	return "~" + k.pattern
}

// KeysRule is GETUSER's "keys" field.
func (s *ACLSelector) KeysRule() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, " ")
}

// ChannelsRule is GETUSER's "channels" field.
func (s *ACLSelector) ChannelsRule() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// CommandRules rebuilds the rules that give the selector its commands, as
// Redis does: +@all or -@all, then the categories that best fit what is
// left, one at a time, then single commands and first arguments. (Redis
// lists the single commands in its hash table's order, which varies from
// run to run; here they come in the table's order.)
func (s *ACLSelector) CommandRules(t *Table) string {
	future := t.Count()
	additive := !s.bit(future)
	fake := &ACLSelector{cmds: make([]uint64, len(s.cmds))}
	var rules []string
	if additive {
		rules = append(rules, "-@all")
	} else {
		rules = append(rules, "+@all")
		for i := range fake.cmds {
			fake.cmds[i] = ^uint64(0)
		}
	}
	all := t.All()
	temp := &ACLSelector{cmds: append([]uint64(nil), s.cmds...)}
	applied := make([]bool, len(aclNames))
	for {
		best, minDiff, maxSame := -1, int(^uint(0)>>1), 0
		for j := range aclNames {
			if applied[j] {
				continue
			}
			on, off := temp.countCategory(all, 1<<j)
			diff, same := off, on
			if !additive {
				diff, same = on, off
			}
			if same > diff && (diff < minDiff || diff == minDiff && same > maxSame) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		fake.setCategory(all, 1<<best, additive)
		temp.setCategory(all, 1<<best, !additive)
		sign := "-@"
		if additive {
			sign = "+@"
		}
		rules = append(rules, sign+aclNames[best])
		applied[best] = true
	}
	rules = s.singleCommandRules(all, fake, rules)
	return strings.Join(rules, " ")
}

func (s *ACLSelector) countCategory(cmds []*Command, bit aclCategory) (on, off int) {
	for _, cmd := range cmds {
		if cmd.acl&bit != 0 {
			if s.bit(cmd.index) {
				on++
			} else {
				off++
			}
		}
		if len(cmd.Subs) > 0 {
			a, b := s.countCategory(cmd.Subs, bit)
			on, off = on+a, off+b
		}
	}
	return on, off
}

func (s *ACLSelector) singleCommandRules(cmds []*Command, fake *ACLSelector, rules []string) []string {
	for _, cmd := range cmds {
		mine := s.bit(cmd.index)
		if mine != fake.bit(cmd.index) {
			sign := "-"
			if mine {
				sign = "+"
			}
			rules = append(rules, sign+cmd.fullName)
			fake.changePerm(cmd, mine)
		}
		if len(cmd.Subs) > 0 {
			rules = s.singleCommandRules(cmd.Subcommands(), fake, rules)
		}
		if !mine {
			for _, a := range s.firstArgs[cmd.index] {
				rules = append(rules, "+"+cmd.fullName+"|"+a)
			}
		}
	}
	return rules
}
