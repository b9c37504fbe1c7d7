package server

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/revolver-db/revolver/commands"
)

// The ACL state: the users (commands/acl_user.go), of which "default" always
// exists and is the user of every new connection, and the ACL log. Read and
// written under the engine lock. A user's *ACLUser stays the same object
// for its life: SETUSER copies the new rules into it, so the clients that
// point at it see them at once, as in Redis.
type aclState struct {
	users map[string]*commands.ACLUser
	log   []commands.ACLLogEntry // newest first
}

func (s *Server) aclUsers() map[string]*commands.ACLUser {
	if s.acl.users == nil {
		s.acl.users = map[string]*commands.ACLUser{
			"default": commands.NewDefaultUser(s.cfg.RequirePass, s.table),
		}
	}
	return s.acl.users
}

// DefaultUser implements the ACL server side.
func (s *Server) DefaultUser() *commands.ACLUser { return s.aclUsers()["default"] }

// ACLUser implements the ACL server side: the user named name, or nil.
func (s *Server) ACLUser(name string) *commands.ACLUser { return s.aclUsers()[name] }

// ACLUserNames implements the ACL server side, sorted as Redis's radix
// tree lists them (bytewise).
func (s *Server) ACLUserNames() []string {
	names := make([]string, 0, len(s.aclUsers()))
	for n := range s.aclUsers() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ACLPubsubAll implements the ACL server side: acl-pubsub-default.
func (s *Server) ACLPubsubAll() bool {
	return s.cfg.extraString("acl-pubsub-default") == "allchannels"
}

// ACLPut implements the ACL server side: staged becomes the rules of the
// user of its name, created if new. Subscribers of an existing user that
// lost channel permissions are closed, as Redis's
// ACLKillPubsubClientsIfNeeded does.
func (s *Server) ACLPut(staged *commands.ACLUser, self int64) {
	users := s.aclUsers()
	u := users[staged.Name]
	if u == nil {
		users[staged.Name] = staged
		return
	}
	if !staged.ChannelsWidened(u) {
		for _, c := range s.clients {
			if c.user == u && c.Subscriptions() > 0 && !keepsSubscriptions(c, staged) {
				s.closeClientOf(c, self)
			}
		}
	}
	*u = *staged
}

func keepsSubscriptions(c *Client, u *commands.ACLUser) bool {
	for p := range c.patterns {
		if !u.KeepsSubscription([]byte(p), true) {
			return false
		}
	}
	for _, m := range []map[string]struct{}{c.channels, c.shard} {
		for ch := range m {
			if !u.KeepsSubscription([]byte(ch), false) {
				return false
			}
		}
	}
	return true
}

// closeClientOf closes a client whose user went away or lost what it
// needs: the caller's own connection after its reply, others at once.
// It can run nothing meanwhile: it is back to the default user, not
// authenticated.
func (s *Server) closeClientOf(c *Client, self int64) {
	c.user = s.DefaultUser()
	c.authed.Store(false)
	if c.id == self {
		c.closing = true
		return
	}
	c.kill()
	s.forget(c)
}

// ACLDelUser implements the ACL server side: the user goes and so do its
// connections.
func (s *Server) ACLDelUser(name string, self int64) bool {
	u := s.aclUsers()[name]
	if u == nil || name == "default" {
		return false
	}
	delete(s.acl.users, name)
	s.killUserClients(u, self)
	return true
}

func (s *Server) killUserClients(u *commands.ACLUser, self int64) {
	for _, c := range s.clients {
		if c.user == u {
			s.closeClientOf(c, self)
		}
	}
}

// ACLFile implements the ACL server side: the aclfile setting.
func (s *Server) ACLFile() string { return s.cfg.extraString("aclfile") }

// ACLLoad implements the ACL server side (Redis's ACLLoadFromFile): the
// file replaces every user, or nothing changes when a line is wrong. The
// default user keeps its object (its clients stay); the other users'
// clients are closed, as Redis frees the old users.
func (s *Server) ACLLoad(self int64) string {
	users, errs := s.parseACLFile(s.ACLFile())
	if errs != "" {
		return errs
	}
	old := s.aclUsers()
	def := old["default"]
	if nd := users["default"]; nd != nil {
		*def = *nd
	} else {
		*def = *commands.NewDefaultUser("", s.table)
	}
	users["default"] = def
	s.acl.users = users
	for name, u := range old {
		if name != "default" {
			s.killUserClients(u, self)
		}
	}
	return ""
}

// parseACLFile reads an ACL file into users, or returns Redis's error text.
func (s *Server) parseACLFile(path string) (map[string]*commands.ACLUser, string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Sprintf("Error loading ACLs, opening file '%s': %s", path, errnoText(err))
	}
	users := map[string]*commands.ACLUser{}
	var errs strings.Builder
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ")
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", path, n)
			continue
		}
		name := argv[1]
		if strings.ContainsAny(name, " \x00") {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", path, n, name)
			continue
		}
		if users[name] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", name, n)
			continue
		}
		rules := make([][]byte, 0, len(argv)-2)
		for _, r := range argv[2:] {
			rules = append(rules, []byte(strings.Trim(r, "\t\r\n")))
		}
		u := commands.NewACLUser(name, s.table, s.ACLPubsubAll())
		users[name] = u
		merged, bad := commands.MergeSelectorArgs(rules)
		if bad >= 0 {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", path, n)
			continue
		}
		syntax := false
		for _, e := range u.ApplyRules(merged, s.table, s.ACLPubsubAll()) {
			if e.UnknownName {
				fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", path, n, e.Rule, e.Msg)
			} else if !syntax {
				fmt.Fprintf(&errs, "%s:%d: %s. ", path, n, e.Msg)
				syntax = true
			}
		}
	}
	if errs.Len() > 0 {
		return nil, errs.String() + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	}
	return users, ""
}

func errnoText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	s := err.Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

// ACLSave implements the ACL server side: every user as an ACL file line,
// written to a temporary file renamed over the ACL file.
func (s *Server) ACLSave() error {
	var b strings.Builder
	for _, name := range s.ACLUserNames() {
		b.WriteString("user " + name + " " + s.aclUsers()[name].Describe(s.table) + "\n")
	}
	path := s.ACLFile()
	tmp := fmt.Sprintf("%s.tmp-%d-%d", path, os.Getpid(), s.clock.Now().UnixMilli())
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		os.Remove(tmp)
		s.log.Warn("Writing ACL file for ACL SAVE", "err", err)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		s.log.Warn("Renaming ACL file for ACL SAVE", "err", err)
		return err
	}
	return nil
}

// ACLLog implements the ACL server side.
func (s *Server) ACLLog() []commands.ACLLogEntry { return s.acl.log }

// ACLLogReset implements the ACL server side.
func (s *Server) ACLLogReset() { s.acl.log = nil }

// aclLogGroupingMs is how close in time a denial must follow a like one to
// count in its entry rather than start a new one, as in Redis.
const aclLogGroupingMs = 60000

// ACLLogAdd implements the ACL server side: a denial like a recent one
// (same reason, context, object and user; among the latest ten) adds to
// its count and moves to the front.
func (s *Server) ACLLogAdd(e commands.ACLLogEntry) {
	for i := 0; i < len(s.acl.log) && i < 10; i++ {
		old := s.acl.log[i]
		d := e.Time.Sub(old.Time).Milliseconds()
		if old.Reason == e.Reason && old.Context == e.Context && old.Object == e.Object &&
			old.Username == e.Username && d <= aclLogGroupingMs && d >= -aclLogGroupingMs {
			old.Count++
			old.Time, old.ClientInfo = e.Time, e.ClientInfo
			copy(s.acl.log[1:i+1], s.acl.log[:i])
			s.acl.log[0] = old
			return
		}
	}
	s.acl.log = append([]commands.ACLLogEntry{e}, s.acl.log...)
	if limit := s.cfg.extraInt("acllog-max-len"); int64(len(s.acl.log)) > limit {
		s.acl.log = s.acl.log[:limit]
	}
}

// aclDenied logs a denial of c's command, with Redis's context names.
func (s *Server) aclDenied(c *Client, result, idx int, cmd *commands.Command, args [][]byte, context string) {
	object := cmd.FullName()
	if result != commands.ACLDeniedCmd && idx < len(args) {
		object = string(args[idx])
	}
	s.ACLLogAdd(commands.ACLLogEntry{Count: 1, Reason: commands.ReasonName(result), Context: context,
		Object: object, Username: c.user.Name, Time: s.eng.NowTime(), ClientInfo: c.Describe()})
}

// InExec reports whether the client runs the commands of a transaction
// (the ACL log's "multi" context).
func (c *Client) InExec() bool { return c.inExec }

// UserName implements commands.Conn.
func (c *Client) UserName() string { return c.userName() }

// AuthenticateAs implements commands.Conn: AUTH or HELLO AUTH succeeded.
func (c *Client) AuthenticateAs(name string) {
	c.user = c.s.ACLUser(name)
	c.authed.Store(true)
}

// ACLCheck implements commands.Conn: the connection's user's permission
// for a command (redis.call in a script, redis.acl_check_cmd).
func (c *Client) ACLCheck(cmd *commands.Command, args [][]byte) (int, int) {
	if c.user == nil || c.master {
		return commands.ACLOK, 0 // the master's stream runs whatever it holds
	}
	return c.user.Check(cmd, args)
}

// ACLDeniedInScript implements commands.Conn: a script's denied call is
// logged in the "lua" context.
func (c *Client) ACLDeniedInScript(result, idx int, cmd *commands.Command, args [][]byte) {
	c.s.aclDenied(c, result, idx, cmd, args, "lua")
}

// aclRefuses checks a command of a restricted user before it runs or
// queues: the NOPERM reply, logged, or "".
func (s *Server) aclRefuses(c *Client, u *commands.ACLUser, cmd *commands.Command, args [][]byte) string {
	res, idx := u.Check(cmd, args)
	if res == commands.ACLOK {
		return ""
	}
	context := "toplevel"
	if c.multi {
		context = "multi"
	}
	s.aclDenied(c, res, idx, cmd, args, context)
	return commands.DeniedText(res, cmd)
}

// execDeniedReason is EXEC's reason for a queued command that the rules
// no longer allow.
func execDeniedReason(res int) string {
	switch res {
	case commands.ACLDeniedCmd:
		return "no permission to execute the command or subcommand"
	case commands.ACLDeniedKey:
		return "no permission to touch the specified keys"
	case commands.ACLDeniedChannel:
		return "no permission to access one of the channels used as arguments"
	}
	return "no permission"
}

func (c *Client) userName() string {
	if c.user == nil {
		return "default"
	}
	return c.user.Name
}

// loadStartUsers applies the config file's user lines, then the ACL file,
// as Redis's ACLLoadUsersAtStartup: not both; a user line starts from a
// new user (the default user from a reset one).
func (s *Server) loadStartUsers() error {
	if s.ACLFile() != "" && len(s.cfg.Users) > 0 {
		return fmt.Errorf("Configuring Redis with users defined in redis.conf and at the same setting an ACL " +
			"file path is invalid. This setup is very likely to lead to configuration errors and security holes, " +
			"please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	for _, line := range s.cfg.Users {
		name := line[0]
		if strings.ContainsAny(name, " \x00") {
			return fmt.Errorf("Spaces not allowed in ACL usernames")
		}
		u := commands.NewACLUser(name, s.table, s.ACLPubsubAll())
		var rules [][]byte
		if name == "default" {
			rules = append(rules, []byte("reset"))
		}
		for _, r := range line[1:] {
			rules = append(rules, []byte(r))
		}
		staged, msg := u.SetUser(rules, s.table, s.ACLPubsubAll())
		if msg != "" {
			return fmt.Errorf("Error in user declaration '%s': %s", name, msg)
		}
		s.ACLPut(staged, 0)
	}
	if s.ACLFile() != "" {
		if msg := s.ACLLoad(0); msg != "" {
			return fmt.Errorf("Aborting Redis startup because of ACL errors: %s", msg)
		}
	}
	return nil
}
