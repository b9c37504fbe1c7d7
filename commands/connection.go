package commands

import (
	"github.com/revolver-db/revolver/engine"
)

// Version is the Redis version Revolver reports (HELLO, INFO): the 7.0 line
// whose behaviour it reproduces.
const Version = "7.0.15"

// Connection is the connection family.
var Connection = []*Command{
	{Name: "ping", Arity: -1, Flags: "fast", ACL: "connection",
		Tips: "request_policy:all_shards;response_policy:all_succeeded", Group: "connection", Since: "1.0.0",
		Complexity: "O(1)", Summary: "Returns the server's liveliness response.", Args: "[message]", Run: ping},
	{Name: "echo", Arity: 2, Flags: "loading stale fast", ACL: "connection", Group: "connection", Since: "1.0.0",
		Complexity: "O(1)", Summary: "Returns the given string.", Args: "message", Run: echo},
	{Name: "quit", Arity: -1, Flags: "allow_busy noscript loading stale fast no_auth", ACL: "connection",
		Group: "connection", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Closes the connection.", Run: quit},
	{Name: "reset", Arity: 1, Flags: "noscript loading stale fast no_auth allow_busy", ACL: "connection",
		Group: "connection", Since: "6.2.0", Complexity: "O(1)",
		Summary: "Resets the connection to its initial state.", Run: reset},
	{Name: "select", Arity: 2, Flags: "loading stale fast", ACL: "connection", Group: "connection",
		Since: "1.0.0", Complexity: "O(1)", Summary: "Changes the selected database.", Args: "index:integer", Run: selectCmd},
	{Name: "auth", Arity: -2, Flags: "noscript loading stale fast no_auth allow_busy", ACL: "connection",
		Group: "connection", Since: "1.0.0", Complexity: "O(N) where N is the number of passwords defined for the user",
		Summary: "Authenticates the connection.", Args: "[username] password", Run: auth},
	{Name: "hello", Arity: -1, Flags: "noscript loading stale fast no_auth allow_busy", ACL: "connection",
		Group: "connection", Since: "6.0.0", Complexity: "O(1)",
		Summary: "Handshakes with the server: selects the protocol, optionally authenticates and names the connection.",
		Args:    "[arguments=protover:integer [AUTH (username password)] [SETNAME clientname]]", Run: hello},
	{Name: "client", Arity: -2, Group: "connection", Since: "2.4.0", Complexity: "Depends on subcommand.",
		Summary: "A container for client connection commands.", Subs: append(clientSubcommands, clientTrackingSubcommands...)},
}

func ping(c *Ctx) {
	if len(c.Args) > 2 {
		c.W.Error("ERR wrong number of arguments for 'ping' command")
		return
	}
	if c.Conn.Proto() == 2 && c.inSubscribedMode() {
		c.W.Array(2)
		c.W.BulkString("pong")
		if len(c.Args) == 2 {
			c.W.Bulk(c.Args[1])
		} else {
			c.W.BulkString("")
		}
		return
	}
	if len(c.Args) == 2 {
		c.W.Bulk(c.Args[1])
		return
	}
	c.W.Simple("PONG")
}

// inSubscribedMode reports whether the connection has subscriptions.
func (c *Ctx) inSubscribedMode() bool {
	s, ok := c.Conn.(interface{ Subscriptions() int })
	return ok && s.Subscriptions() > 0
}

func echo(c *Ctx) { c.W.Bulk(c.Args[1]) }

func quit(c *Ctx) {
	c.W.OK()
	c.Conn.CloseAfterReply()
}

func reset(c *Ctx) {
	c.Conn.Reset()
	c.W.Simple("RESET")
}

func selectCmd(c *Ctx) {
	n, ok := c.Int64(1)
	if !ok {
		return
	}
	if n < -1<<31 || n > 1<<31-1 {
		c.W.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
		return
	}
	if n < 0 || n >= int64(c.Eng.Databases()) {
		c.W.Error("ERR DB index is out of range")
		return
	}
	c.Conn.SelectDB(int(n))
	c.W.OK()
}

func auth(c *Ctx) {
	var user, pass string
	switch len(c.Args) {
	case 2:
		if !c.Srv.AuthRequired() {
			c.W.Error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
			return
		}
		user, pass = "default", string(c.Args[1])
	case 3:
		user, pass = string(c.Args[1]), string(c.Args[2])
	default:
		c.SyntaxError()
		return
	}
	if err := c.Srv.CheckPassword(user, pass); err != nil {
		aclLogAuthFailure(c, user)
		c.Error(err)
		return
	}
	c.Conn.AuthenticateAs(user)
	c.W.OK()
}

func hello(c *Ctx) {
	ver := int64(0)
	next := 1
	if len(c.Args) >= 2 {
		v, ok := engine.ParseInt(c.Args[1])
		if !ok {
			c.W.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			c.W.Error("NOPROTO unsupported protocol version")
			return
		}
		ver, next = v, 2
	}
	for j := next; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch a := c.Args[j]; {
		case is(a, "AUTH") && more >= 2:
			if err := c.Srv.CheckPassword(string(c.Args[j+1]), string(c.Args[j+2])); err != nil {
				aclLogAuthFailure(c, string(c.Args[j+1]))
				c.Error(err)
				return
			}
			c.Conn.AuthenticateAs(string(c.Args[j+1]))
			j += 2
		case is(a, "SETNAME") && more >= 1:
			if !validClientName(c.Args[j+1]) {
				c.W.Error(errClientName)
				return
			}
			c.Conn.SetName(string(c.Args[j+1]))
			j++
		default:
			c.W.Error("ERR Syntax error in HELLO option '" + string(a) + "'")
			return
		}
	}
	if !c.Conn.Authenticated() {
		c.W.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if ver != 0 {
		c.Conn.SetProto(int(ver))
	}
	c.W.Map(7)
	c.W.BulkString("server")
	c.W.BulkString("redis")
	c.W.BulkString("version")
	c.W.BulkString(Version)
	c.W.BulkString("proto")
	c.W.Int(int64(c.Conn.Proto()))
	c.W.BulkString("id")
	c.W.Int(c.Conn.ID())
	c.W.BulkString("mode")
	c.W.BulkString("standalone")
	c.W.BulkString("role")
	c.W.BulkString("master")
	c.W.BulkString("modules")
	c.W.Array(0)
}

const errClientName = "ERR Client names cannot contain spaces, newlines or special characters."

// validClientName allows printable ASCII without spaces (so CLIENT LIST
// stays splittable by spaces); empty removes the name.
func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}
