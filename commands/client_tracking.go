package commands

// CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO and REPLY: the parsing
// and replies; the state lives with the connection (server/tracking.go).

// TrackingOptions are CLIENT TRACKING ON's options.
type TrackingOptions struct {
	Redirect                     int64
	BCast, OptIn, OptOut, NoLoop bool
	Prefixes                     [][]byte
}

// TrackingConn is the connection side of client-side caching and of
// CLIENT REPLY.
type TrackingConn interface {
	// TrackingOn validates and applies CLIENT TRACKING ON; errMsg is the
	// error to answer, okToo that OK follows it anyway (a Redis quirk).
	TrackingOn(o TrackingOptions) (errMsg string, okToo bool)
	TrackingOff()
	// TrackingCaching applies CLIENT CACHING YES|NO, returning an error.
	TrackingCaching(yes bool) string
	// TrackingRedirect is CLIENT GETREDIR: -1 when tracking is off.
	TrackingRedirect() int64
	TrackingInfo() (flags, prefixes []string)
	// ClientExists reports whether a client with the id is connected.
	ClientExists(id int64) bool
	// TrackRead remembers the keys of cmd (the script command running)
	// after a read-only command inside it.
	TrackRead(cmd *Command, args [][]byte)
	// SetReplyMode applies CLIENT REPLY on, off or skip.
	SetReplyMode(mode string)
}

var clientTrackingSubcommands = []*Command{
	{Name: "tracking", Arity: -3, Flags: clientFlags, ACL: "connection", Group: "connection", Since: "6.0.0",
		Complexity: "O(1). Some options may introduce additional complexity.",
		Summary:    "Controls server-assisted client-side caching for the connection.",
		Args:       "(status=ON|OFF) [REDIRECT client-id:integer] [PREFIX prefix]... [BCAST] [OPTIN] [OPTOUT] [NOLOOP]",
		Run:        clientTracking},
	{Name: "caching", Arity: 3, Flags: clientFlags, ACL: "connection", Group: "connection", Since: "6.0.0",
		Complexity: "O(1)", Summary: "Tells the server whether to track the keys of the next request.",
		Args: "(mode=YES|NO)", Run: clientCaching},
	{Name: "getredir", Arity: 2, Flags: clientFlags, ACL: "connection", Group: "connection", Since: "6.0.0",
		Complexity: "O(1)", Summary: "Returns the id of the client that tracking notifications are redirected to.",
		Run: clientGetRedir},
	{Name: "trackinginfo", Arity: 2, Flags: clientFlags, ACL: "connection", Group: "connection", Since: "6.2.0",
		Complexity: "O(1)", Summary: "Returns the client-side caching state of the connection.",
		Run: clientTrackingInfo},
	{Name: "reply", Arity: 3, Flags: clientFlags, ACL: "connection", Group: "connection", Since: "3.2.0",
		Complexity: "O(1)", Summary: "Tells the server whether to answer the connection's commands.",
		Args: "(on_off_skip=ON|OFF|SKIP)", Run: clientReply},
}

func clientTracking(c *Ctx) {
	var o TrackingOptions
	for j := 3; j < len(c.Args); j++ {
		more := j < len(c.Args)-1
		a := c.Args[j]
		switch {
		case is(a, "REDIRECT") && more:
			j++
			if o.Redirect != 0 {
				c.W.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := c.Int64(j)
			if !ok {
				return
			}
			if !c.Conn.ClientExists(id) {
				c.W.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			o.Redirect = id
		case is(a, "BCAST"):
			o.BCast = true
		case is(a, "OPTIN"):
			o.OptIn = true
		case is(a, "OPTOUT"):
			o.OptOut = true
		case is(a, "NOLOOP"):
			o.NoLoop = true
		case is(a, "PREFIX") && more:
			j++
			o.Prefixes = append(o.Prefixes, c.Args[j])
		default:
			c.SyntaxError()
			return
		}
	}
	switch {
	case is(c.Args[2], "ON"):
		errMsg, okToo := c.Conn.TrackingOn(o)
		if errMsg != "" {
			c.W.Error(errMsg)
			if !okToo {
				return
			}
		}
	case is(c.Args[2], "OFF"):
		c.Conn.TrackingOff()
	default:
		c.SyntaxError()
		return
	}
	c.W.OK()
}

func clientCaching(c *Ctx) {
	var yes bool
	switch {
	case c.Conn.TrackingRedirect() == -1:
		// Not tracking: this error comes before the argument's check.
		c.W.Error(c.Conn.TrackingCaching(true))
		return
	case is(c.Args[2], "YES"):
		yes = true
	case is(c.Args[2], "NO"):
	default:
		c.SyntaxError()
		return
	}
	if msg := c.Conn.TrackingCaching(yes); msg != "" {
		c.W.Error(msg)
		return
	}
	c.W.OK()
}

func clientGetRedir(c *Ctx) { c.W.Int(c.Conn.TrackingRedirect()) }

func clientTrackingInfo(c *Ctx) {
	flags, prefixes := c.Conn.TrackingInfo()
	c.W.Map(3)
	c.W.BulkString("flags")
	c.W.Set(len(flags))
	for _, f := range flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("redirect")
	c.W.Int(c.Conn.TrackingRedirect())
	c.W.BulkString("prefixes")
	c.W.Array(len(prefixes))
	for _, p := range prefixes {
		c.W.BulkString(p)
	}
}

func clientReply(c *Ctx) {
	switch {
	case is(c.Args[2], "ON"):
		c.Conn.SetReplyMode("on")
		c.W.OK()
	case is(c.Args[2], "OFF"):
		c.Conn.SetReplyMode("off")
	case is(c.Args[2], "SKIP"):
		c.Conn.SetReplyMode("skip")
	default:
		c.SyntaxError()
	}
}
