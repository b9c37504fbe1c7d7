package commands

import (
	"strings"

	"github.com/revolver-db/revolver/engine"
)

const clientFlags = "noscript loading stale"

var clientSubcommands = []*Command{
	{Name: "id", Arity: 2, Flags: clientFlags, ACL: "connection", Group: "connection", Since: "5.0.0",
		Complexity: "O(1)", Summary: "Returns the unique ID of the connection.", Run: clientID},
	{Name: "info", Arity: 2, Flags: clientFlags, ACL: "connection", Tips: "nondeterministic_output",
		Group: "connection", Since: "6.2.0", Complexity: "O(1)",
		Summary: "Returns information about the connection.", Run: clientInfo},
	{Name: "list", Arity: -2, Flags: "admin " + clientFlags, ACL: "connection", Tips: "nondeterministic_output",
		Group: "connection", Since: "2.4.0", Complexity: "O(N) where N is the number of client connections",
		Summary: "Lists open connections.",
		Args:    "[TYPE (NORMAL|MASTER|REPLICA|PUBSUB)] [ID (id=client-id:integer...)]", Run: clientList},
	{Name: "kill", Arity: -3, Flags: "admin " + clientFlags, ACL: "connection", Group: "connection",
		Since: "2.4.0", Complexity: "O(N) where N is the number of client connections",
		Summary: "Terminates open connections.",
		Args: "(filter=ip:port:string|(new-format=[ID client-id:integer]|" +
			"[TYPE (normal_master_slave_pubsub=NORMAL|MASTER|SLAVE|REPLICA|PUBSUB)]|[USER username]|" +
			"[ADDR ip:port:string]|[LADDR ip:port:string]|[SKIPME yes/no])...)",
		Run: clientKill},
	{Name: "setname", Arity: 3, Flags: clientFlags, ACL: "connection", Group: "connection", Since: "2.6.9",
		Complexity: "O(1)", Summary: "Sets the connection name.", Args: "connection-name", Run: clientSetName},
	{Name: "getname", Arity: 2, Flags: clientFlags, ACL: "connection", Group: "connection", Since: "2.6.9",
		Complexity: "O(1)", Summary: "Returns the name of the connection.", Run: clientGetName},
	{Name: "setinfo", Arity: 4, Flags: clientFlags, ACL: "connection", Group: "connection", Since: "7.2.0",
		Complexity: "O(1)", Summary: "Sets information specific to the client library.",
		Args: "(attr=LIB-NAME libname|LIB-VER libver)", Run: clientSetInfo},
	{Name: "pause", Arity: -3, Flags: "admin " + clientFlags, ACL: "connection", Group: "connection",
		Since: "2.9.50", Complexity: "O(1)", Summary: "Suspends commands processing.",
		Args: "timeout:integer [mode=WRITE|ALL]", Run: clientPause},
	{Name: "unpause", Arity: 2, Flags: "admin " + clientFlags, ACL: "connection", Group: "connection",
		Since: "6.2.0", Complexity: "O(N) where N is the number of paused clients",
		Summary: "Resumes processing commands from paused clients.", Run: clientUnpause},
	{Name: "no-evict", Arity: 3, Flags: "admin " + clientFlags, ACL: "connection", Group: "connection",
		Since: "7.0.0", Complexity: "O(1)", Summary: "Sets the client eviction mode of the connection.",
		Args: "(enabled=ON|OFF)", Run: clientNoEvict},
	{Name: "unblock", Arity: -3, Flags: "admin " + clientFlags, ACL: "connection", Group: "connection",
		Since: "5.0.0", Complexity: "O(log N) where N is the number of client connections",
		Summary: "Unblocks a client blocked by a blocking command from a different connection.",
		Args:    "client-id:integer [unblock-type=TIMEOUT|ERROR]", Run: clientUnblock},
	{Name: "help", Arity: 2, Flags: "loading stale", ACL: "connection", Group: "connection", Since: "5.0.0",
		Complexity: "O(1)", Summary: "Returns helpful text about the different subcommands.", Run: clientHelp},
}

func clientID(c *Ctx) { c.W.Int(c.Conn.ID()) }

func clientInfo(c *Ctx) { c.W.Verbatim("txt", c.Conn.Describe()+"\n") }

func clientList(c *Ctx) {
	var typ string
	var ids []int64
	switch {
	case len(c.Args) == 2:
	case len(c.Args) == 4 && is(c.Args[2], "TYPE"):
		typ = string(c.Args[3])
	case len(c.Args) > 3 && is(c.Args[2], "ID"):
		for _, a := range c.Args[3:] {
			id, ok := engine.ParseInt(a)
			if !ok {
				c.W.Error("ERR Invalid client ID")
				return
			}
			ids = append(ids, id)
		}
	default:
		c.SyntaxError()
		return
	}
	out, err := c.Srv.ClientList(ids, typ)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Verbatim("txt", out)
}

func clientKill(c *Ctx) {
	f := ClientFilter{SkipMe: true, Self: c.Conn.ID()}
	if len(c.Args) == 3 {
		f.Addr, f.Legacy, f.SkipMe = string(c.Args[2]), true, false
	} else {
		for i := 2; i < len(c.Args); i += 2 {
			if i+1 >= len(c.Args) {
				c.SyntaxError()
				return
			}
			a, v := c.Args[i], c.Args[i+1]
			switch {
			case is(a, "ID"):
				id, ok := engine.ParseInt(v)
				if !ok || id < 1 {
					c.W.Error("ERR client-id should be greater than 0")
					return
				}
				f.ID = id
			case is(a, "TYPE"):
				t, ok := clientType(v)
				if !ok {
					c.W.Error("ERR Unknown client type '" + string(v) + "'")
					return
				}
				f.Type = t
			case is(a, "ADDR"):
				f.Addr = string(v)
			case is(a, "LADDR"):
				f.LAddr = string(v)
			case is(a, "USER"):
				if aclSrv(c).ACLUser(string(v)) == nil {
					c.W.Error("ERR No such user '" + clean(v) + "'")
					return
				}
				f.User = string(v)
			case is(a, "SKIPME") && is(v, "YES"):
				f.SkipMe = true
			case is(a, "SKIPME") && is(v, "NO"):
				f.SkipMe = false
			default:
				c.SyntaxError()
				return
			}
		}
	}
	n, err := c.Srv.ClientKill(f)
	if err != nil {
		c.Error(err)
		return
	}
	if f.Legacy {
		if n == 0 {
			c.W.Error("ERR No such client")
			return
		}
		c.W.OK()
		return
	}
	c.W.Int(int64(n))
}

// clientType normalizes a client type name as Redis's getClientTypeByName.
func clientType(v []byte) (string, bool) {
	switch {
	case is(v, "NORMAL"):
		return "normal", true
	case is(v, "SLAVE"), is(v, "REPLICA"):
		return "replica", true
	case is(v, "PUBSUB"):
		return "pubsub", true
	case is(v, "MASTER"):
		return "master", true
	}
	return "", false
}

func clientSetName(c *Ctx) {
	if !validClientName(c.Args[2]) {
		c.W.Error(errClientName)
		return
	}
	c.Conn.SetName(string(c.Args[2]))
	c.W.OK()
}

func clientGetName(c *Ctx) {
	if n := c.Conn.Name(); n != "" {
		c.W.BulkString(n)
		return
	}
	c.W.Null()
}

func clientSetInfo(c *Ctx) {
	attr, val := c.Args[2], c.Args[3]
	var name string
	switch {
	case is(attr, "LIB-NAME"):
		name = "lib-name"
	case is(attr, "LIB-VER"):
		name = "lib-ver"
	default:
		c.W.Error("ERR Unrecognized option '" + string(attr) + "'")
		return
	}
	if !validClientName(val) {
		c.W.Error("ERR " + name + " cannot contain spaces, newlines or special characters.")
		return
	}
	if name == "lib-name" {
		c.Conn.SetLibInfo(string(val), "\x00")
	} else {
		c.Conn.SetLibInfo("\x00", string(val))
	}
	c.W.OK()
}

func clientPause(c *Ctx) {
	if len(c.Args) > 4 {
		subcommandSyntaxError(c)
		return
	}
	writes := false
	if len(c.Args) == 4 {
		switch {
		case is(c.Args[3], "WRITE"):
			writes = true
		case is(c.Args[3], "ALL"):
		default:
			c.W.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	ms, ok := engine.ParseInt(c.Args[2])
	switch {
	case !ok:
		c.W.Error("ERR timeout is not an integer or out of range")
		return
	case ms < 0:
		c.W.Error("ERR timeout is negative")
		return
	}
	c.Srv.ClientPause(ms, writes)
	c.W.OK()
}

// subcommandSyntaxError is Redis's reply when a container command's
// subcommand is known but its arguments do not fit any form.
func subcommandSyntaxError(c *Ctx) {
	name := clean(c.Args[1])
	if len(name) > 128 {
		name = name[:128]
	}
	c.W.Error("ERR unknown subcommand or wrong number of arguments for '" + name + "'. Try " +
		strings.ToUpper(string(c.Args[0])) + " HELP.")
}

func clientUnpause(c *Ctx) {
	c.Srv.ClientUnpause()
	c.W.OK()
}

func clientNoEvict(c *Ctx) {
	switch {
	case is(c.Args[2], "ON"):
		c.Conn.SetNoEvict(true)
	case is(c.Args[2], "OFF"):
		c.Conn.SetNoEvict(false)
	default:
		c.SyntaxError()
		return
	}
	c.W.OK()
}

func clientHelp(c *Ctx) {
	writeHelp(c, "CLIENT",
		"CACHING (YES|NO)",
		"    Track, or not, the keys of the next command (OPTIN and OPTOUT tracking modes).",
		"GETNAME",
		"    Return the name of the current connection.",
		"GETREDIR",
		"    Return the id of the client tracking invalidations are redirected to.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are: ID <client-id>, TYPE (NORMAL|MASTER|REPLICA|PUBSUB),",
		"    USER <username>, ADDR <ip:port>, LADDR <ip:port>, SKIPME (YES|NO).",
		"LIST [TYPE (NORMAL|MASTER|REPLICA|PUBSUB)] [ID <id> [<id> ...]]",
		"    Return information about client connections.",
		"NO-EVICT (ON|OFF)",
		"    Protect the current connection from client eviction.",
		"PAUSE <timeout> [WRITE|ALL]",
		"    Suspend processing commands for <timeout> milliseconds.",
		"REPLY (ON|OFF|SKIP)",
		"    Turn the replies to this connection on or off, or skip the next one.",
		"SETINFO <LIB-NAME|LIB-VER> <value>",
		"    Record the client library name or version.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Turn server-assisted client-side caching on or off.",
		"TRACKINGINFO",
		"    Return the client-side caching state of this connection.",
		"UNPAUSE",
		"    Resume processing commands of paused clients.")
}

func clientUnblock(c *Ctx) {
	if len(c.Args) > 4 {
		c.W.Error("ERR unknown subcommand or wrong number of arguments for 'unblock'. Try CLIENT HELP.")
		return
	}
	withError := false
	if len(c.Args) == 4 {
		switch {
		case is(c.Args[3], "TIMEOUT"):
		case is(c.Args[3], "ERROR"):
			withError = true
		default:
			c.W.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := c.Int64(2)
	if !ok {
		return
	}
	if c.Srv.ClientUnblock(id, withError) {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}
