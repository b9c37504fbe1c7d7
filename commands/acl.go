package commands

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
)

// aclServer is the server side of ACL (server/acl.go): the users, the
// ACL file and the ACL log.
type aclServer interface {
	DefaultUser() *ACLUser
	ACLUser(name string) *ACLUser
	ACLUserNames() []string
	ACLPubsubAll() bool
	// ACLPut stores staged rules for the user of its name; self is the
	// calling client, closed after its reply if it must be.
	ACLPut(staged *ACLUser, self int64)
	ACLDelUser(name string, self int64) bool
	ACLFile() string
	ACLLoad(self int64) string
	ACLSave() error
	ACLLog() []ACLLogEntry
	ACLLogReset()
	ACLLogAdd(e ACLLogEntry)
}

// ACLLogEntry is one ACL LOG record.
type ACLLogEntry struct {
	Count      int64
	Reason     string // "command", "key", "channel", "auth"
	Context    string // "toplevel", "multi", "lua"
	Object     string // the command, key or channel denied; AUTH's name as typed
	Username   string
	Time       time.Time
	ClientInfo string
}

// ACL is the ACL command over the single default user.
var ACL = []*Command{
	{Name: "acl", Arity: -2, Group: "server", Since: "6.0.0", Complexity: "Depends on subcommand.",
		Summary: "A container for Access List Control commands ", Subs: []*Command{
			{Name: "cat", Arity: -2, Flags: "noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(1) since the categories and commands are a fixed set.",
				Summary:    "List the ACL categories or the commands inside a category", Args: "[categoryname]",
				Run: aclCat},
			{Name: "deluser", Arity: -3, Flags: "admin noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(1) amortized time considering the typical user.",
				Summary:    "Remove the specified ACL users and the associated rules", Args: "username...", Run: aclDelUser},
			{Name: "dryrun", Arity: -4, Flags: "admin noscript loading stale", Group: "server", Since: "7.0.0",
				Complexity: "O(1).",
				Summary:    "Returns whether the user can execute the given command without executing the command.",
				Args:       "username command [arg]...", Run: aclDryRun},
			{Name: "genpass", Arity: -2, Flags: "noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(1)", Summary: "Generate a pseudorandom secure password to use for ACL users",
				Args: "[bits:integer]", Run: aclGenPass},
			{Name: "getuser", Arity: 3, Flags: "admin noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(N). Where N is the number of password, command and pattern rules that the user has.",
				Summary:    "Get the rules for a specific ACL user", Args: "username", Run: aclGetUser},
			{Name: "help", Arity: 2, Flags: "loading stale", Group: "server", Since: "6.0.0", Complexity: "O(1)",
				Summary: "Show helpful text about the different subcommands", Run: aclHelp},
			{Name: "list", Arity: 2, Flags: "admin noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(N). Where N is the number of configured users.",
				Summary:    "List the current ACL rules in ACL config file format", Run: aclList},
			{Name: "load", Arity: 2, Flags: "admin noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(N). Where N is the number of configured users.",
				Summary:    "Reload the ACLs from the configured ACL file", Run: aclLoadSave},
			{Name: "log", Arity: -2, Flags: "admin noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(N) with N being the number of entries shown.",
				Summary:    "List latest events denied because of ACLs in place", Args: "[operation=count:integer|RESET]",
				Run: aclLog},
			{Name: "save", Arity: 2, Flags: "admin noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(N). Where N is the number of configured users.",
				Summary:    "Save the current ACL rules in the configured ACL file", Run: aclLoadSave},
			{Name: "setuser", Arity: -3, Flags: "admin noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(N). Where N is the number of rules provided.",
				Summary:    "Modify or create the rules for a specific ACL user", Args: "username [rule]...",
				Run: aclSetUser},
			{Name: "users", Arity: 2, Flags: "admin noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(N). Where N is the number of configured users.",
				Summary:    "List the username of all the configured ACL rules", Run: aclUsers},
			{Name: "whoami", Arity: 2, Flags: "noscript loading stale", Group: "server", Since: "6.0.0",
				Complexity: "O(1)", Summary: "Return the name of the user associated to the current connection",
				Run: aclWhoAmI},
		}},
}

func aclSrv(c *Ctx) aclServer { return c.Srv.(aclServer) }

// aclLogAuthFailure records a failed authentication in the ACL log.
func aclLogAuthFailure(c *Ctx, user string) {
	context := "toplevel"
	if x, ok := c.Conn.(interface{ InExec() bool }); ok && x.InExec() {
		context = "multi"
	}
	aclSrv(c).ACLLogAdd(ACLLogEntry{Count: 1, Reason: "auth", Context: context, Object: string(c.Args[0]),
		Username: user, Time: c.Eng.NowTime(), ClientInfo: c.Conn.Describe()})
}

func aclWhoAmI(c *Ctx) { c.W.BulkString(c.Conn.UserName()) }

func aclUsers(c *Ctx) {
	names := aclSrv(c).ACLUserNames()
	c.W.Array(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

func aclList(c *Ctx) {
	names := aclSrv(c).ACLUserNames()
	c.W.Array(len(names))
	for _, n := range names {
		c.W.BulkString("user " + n + " " + aclSrv(c).ACLUser(n).Describe(c.Srv.Table()))
	}
}

func aclGetUser(c *Ctx) {
	u := aclSrv(c).ACLUser(string(c.Args[2]))
	if u == nil {
		c.W.Null()
		return
	}
	t := c.Srv.Table()
	c.W.Map(6)
	c.W.BulkString("flags")
	flags := u.Flags()
	c.W.Set(len(flags))
	for _, f := range flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("passwords")
	c.W.Array(len(u.Hashes))
	for _, h := range u.Hashes {
		c.W.BulkString(h)
	}
	writeSelector(c, u.Selectors[0], t)
	c.W.BulkString("selectors")
	c.W.Array(len(u.Selectors) - 1)
	for _, s := range u.Selectors[1:] {
		c.W.Map(3)
		writeSelector(c, s, t)
	}
}

func writeSelector(c *Ctx, s *ACLSelector, t *Table) {
	c.W.BulkString("commands")
	c.W.BulkString(s.CommandRules(t))
	c.W.BulkString("keys")
	c.W.BulkString(s.KeysRule())
	c.W.BulkString("channels")
	c.W.BulkString(s.ChannelsRule())
}

func aclSetUser(c *Ctx) {
	name := string(c.Args[2])
	if strings.ContainsAny(name, " \x00") {
		c.W.Error("ERR Usernames can't contain spaces or null characters")
		return
	}
	srv, t := aclSrv(c), c.Srv.Table()
	u := srv.ACLUser(name)
	if u == nil {
		u = NewACLUser(name, t, srv.ACLPubsubAll())
	}
	staged, msg := u.SetUser(c.Args[3:], t, srv.ACLPubsubAll())
	if msg != "" {
		c.W.Error("ERR " + clean([]byte(msg)))
		return
	}
	srv.ACLPut(staged, c.Conn.ID())
	c.W.OK()
}

func aclDelUser(c *Ctx) {
	for _, a := range c.Args[2:] {
		if string(a) == "default" {
			c.W.Error("ERR The 'default' user cannot be removed")
			return
		}
	}
	n := 0
	for _, a := range c.Args[2:] {
		if aclSrv(c).ACLDelUser(string(a), c.Conn.ID()) {
			n++
		}
	}
	c.W.Int(int64(n))
}

func aclLoadSave(c *Ctx) {
	srv := aclSrv(c)
	if srv.ACLFile() == "" {
		c.W.Error("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via " +
			"the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) " +
			"in order to store users in the Redis configuration.")
		return
	}
	if is(c.Args[1], "LOAD") {
		if msg := srv.ACLLoad(c.Conn.ID()); msg != "" {
			c.W.Error("ERR " + clean([]byte(msg)))
			return
		}
		c.W.OK()
		return
	}
	if srv.ACLSave() != nil {
		c.W.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	c.W.OK()
}

// aclCat lists the categories, or the commands (subcommands included, by
// full name) of one, from the command table.
func aclCat(c *Ctx) {
	if len(c.Args) > 3 {
		aclSubcommandSyntaxError(c)
		return
	}
	if len(c.Args) == 2 {
		c.W.Array(len(aclNames))
		for _, n := range aclNames {
			c.W.BulkString(n)
		}
		return
	}
	bit, ok := aclBit(strings.ToLower(string(c.Args[2])))
	if !ok {
		c.W.Error("ERR Unknown category '" + truncate(string(c.Args[2]), 128) + "'")
		return
	}
	var names []string
	var walk func(cmds []*Command)
	walk = func(cmds []*Command) {
		for _, cmd := range cmds {
			if cmd.acl&bit != 0 {
				names = append(names, cmd.FullName())
			}
			walk(cmd.Subs)
		}
	}
	walk(c.Srv.Table().All())
	c.W.Array(len(names))
	for _, n := range names {
		c.W.BulkString(n)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func aclGenPass(c *Ctx) {
	if len(c.Args) > 3 {
		aclSubcommandSyntaxError(c)
		return
	}
	bits := int64(256)
	if len(c.Args) == 3 {
		n, ok := c.Int64(2)
		if !ok {
			return
		}
		bits = n
	}
	if bits <= 0 || bits > 4096 {
		c.W.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
		return
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	rand.Read(buf)
	c.W.BulkString(hex.EncodeToString(buf)[:chars])
}

func aclLog(c *Ctx) {
	if len(c.Args) > 3 {
		aclSubcommandSyntaxError(c)
		return
	}
	count := int64(10)
	if len(c.Args) == 3 {
		if is(c.Args[2], "RESET") {
			aclSrv(c).ACLLogReset()
			c.W.OK()
			return
		}
		n, ok := c.Int64(2)
		if !ok {
			return
		}
		count = max(n, 0)
	}
	entries := aclSrv(c).ACLLog()
	if int64(len(entries)) < count {
		count = int64(len(entries))
	}
	now := c.Eng.NowTime()
	c.W.Array(int(count))
	for _, e := range entries[:count] {
		c.W.Map(7)
		c.W.BulkString("count")
		c.W.Int(e.Count)
		c.W.BulkString("reason")
		c.W.BulkString(e.Reason)
		c.W.BulkString("context")
		c.W.BulkString(e.Context)
		c.W.BulkString("object")
		c.W.BulkString(e.Object)
		c.W.BulkString("username")
		c.W.BulkString(e.Username)
		c.W.BulkString("age-seconds")
		c.W.Double(float64(now.Sub(e.Time).Milliseconds()) / 1000)
		c.W.BulkString("client-info")
		c.W.BulkString(e.ClientInfo)
	}
}

// aclDryRun checks a command against a user's permissions without
// running it; a denial is a bulk string, as in Redis.
func aclDryRun(c *Ctx) {
	u := aclSrv(c).ACLUser(string(c.Args[2]))
	if u == nil {
		c.W.Error("ERR User '" + clean(c.Args[2]) + "' not found")
		return
	}
	args := c.Args[3:]
	cmd := c.Srv.Table().Get(args[0])
	if cmd != nil && cmd.HasSubs() && len(args) > 1 {
		cmd = cmd.Sub(args[1]) // a container alone is checked for its arity
	}
	if cmd == nil {
		c.W.Error("ERR Command '" + clean(args[0]) + "' not found")
		return
	}
	if (cmd.Arity > 0 && len(args) != cmd.Arity) || len(args) < -cmd.Arity {
		c.W.Error("ERR wrong number of arguments for '" + cmd.FullName() + "' command")
		return
	}
	switch res, idx := u.Check(cmd, args); res {
	case ACLOK:
		c.W.OK()
	case ACLDeniedCmd:
		c.W.BulkString("This user has no permissions to run the '" + cmd.FullName() + "' command")
	case ACLDeniedKey:
		c.W.BulkString("This user has no permissions to access the '" + string(args[idx]) + "' key")
	default:
		c.W.BulkString("This user has no permissions to access the '" + string(args[idx]) + "' channel")
	}
}

func aclHelp(c *Ctx) {
	writeHelp(c, "ACL",
		"CAT [<category>]",
		"    List the command categories, or the commands of <category>.",
		"DELUSER <username> [<username> ...]",
		"    Delete users (the default user cannot be deleted).",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Tell whether the user may run the command, without running it.",
		"GETUSER <username>",
		"    Show the user's flags, passwords and permissions.",
		"GENPASS [<bits>]",
		"    Generate a random password of 256 bits, or of <bits> bits.",
		"LIST",
		"    Show the users' rules in the ACL file format.",
		"LOAD",
		"    Reload the users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the latest ACL log entries, or clear them.",
		"SAVE",
		"    Save the users to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Change the user's attributes.",
		"USERS",
		"    List the user names.",
		"WHOAMI",
		"    Show the connection's user name.")
}

// aclSubcommandSyntaxError is Redis's reply to a known subcommand called
// with arguments it does not take.
func aclSubcommandSyntaxError(c *Ctx) {
	c.W.Error("ERR unknown subcommand or wrong number of arguments for '" + truncate(string(c.Args[1]), 128) +
		"'. Try ACL HELP.")
}
