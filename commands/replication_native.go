package commands

import "strings"

// What a Revolver master tells a Revolver replica about its own types beyond
// their commands (engine/replica_native.go): the time and caller a native
// command ran with, a native timer firing, a client's disconnect. Only the
// master's link may send it; to anyone else it is an error, so no client
// can fire a replica's timers or release what others hold.
var nativeReplication = []*Command{
	{Name: "revolver.repl", Arity: -3, Flags: "admin noscript loading stale", Group: "server", Since: "0.1.0",
		Complexity: "O(1), and what the event it carries does",
		Summary:    "Sent by a Revolver master to its replicas: a native command's time and caller, a native timer firing, a client's disconnect.",
		Args: "(event=(at=AT milliseconds:integer client-id:integer)|(tick=TICK milliseconds:integer)|" +
			"(closed=CLOSED client-id:integer milliseconds:integer))",
		Run: revolverRepl},
}

// nativeReplicaServer applies a master's native events (server/replica.go).
type nativeReplicaServer interface {
	// MasterEvent applies event (AT, TICK or CLOSED) sent on conn; an
	// error when conn is not this replica's master link.
	MasterEvent(conn Conn, event string, ms, client int64) error
}

func revolverRepl(c *Ctx) {
	event := strings.ToUpper(string(c.Args[1]))
	var ms, client int64
	ok := true
	switch {
	case event == "AT" && len(c.Args) == 4:
		if ms, ok = c.Int64(2); ok {
			client, ok = c.Int64(3)
		}
	case event == "TICK" && len(c.Args) == 3:
		ms, ok = c.Int64(2)
	case event == "CLOSED" && len(c.Args) == 4:
		if client, ok = c.Int64(2); ok {
			ms, ok = c.Int64(3)
		}
	default:
		c.SyntaxError()
		return
	}
	if !ok {
		return
	}
	rs, isReplica := c.Srv.(nativeReplicaServer)
	if !isReplica {
		c.W.Error("ERR REVOLVER.REPL is sent only by a master to its replicas")
		return
	}
	if err := rs.MasterEvent(c.Conn, event, ms, client); err != nil {
		c.Error(err)
		return
	}
	c.W.OK()
}
