package commands

import (
	"strconv"

	"github.com/revolver-db/revolver/engine"
)

// What a command sends replicas when its own arguments would not give them
// the same data: Redis 7.0's rewrites, shared by the commands that make
// them (each calls Ctx.PropagateAs once it has changed data).

var (
	argSET       = []byte("SET")
	argPXAT      = []byte("PXAT")
	argKEEPTTL   = []byte("KEEPTTL")
	argDEL       = []byte("DEL")
	argUNLINK    = []byte("UNLINK")
	argPEXPIREAT = []byte("PEXPIREAT")
	argPERSIST   = []byte("PERSIST")
	argHSET      = []byte("HSET")
	argSREM      = []byte("SREM")
)

func msArg(ms int64) []byte { return strconv.AppendInt(nil, ms, 10) }

// propagateSetAt sends SET key val PXAT at: a relative TTL would end at a
// different time on the replica.
func (c *Ctx) propagateSetAt(key, val []byte, at int64) {
	c.PropagateAs(argSET, key, val, argPXAT, msArg(at))
}

// propagateDeletion sends DEL key, or UNLINK when the deletion was lazy.
func (c *Ctx) propagateDeletion(key []byte, lazy bool) {
	name := argDEL
	if lazy {
		name = argUNLINK
	}
	c.PropagateAs(name, key)
}

// withoutGet is SET's arguments without its GET options: the reply is the
// client's business.
func withoutGet(args [][]byte) [][]byte {
	out := make([][]byte, 0, len(args))
	for j, a := range args {
		if j >= 3 && is(a, "GET") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// propagateLater is PropagateAs bound to this command's server and
// database, for a blocked command served after it returned.
func (c *Ctx) propagateLater() func(args ...[]byte) {
	p, ok := c.Srv.(propagator)
	db := c.DB.ID()
	return func(args ...[]byte) {
		if ok {
			p.PropagateAs(db, args)
		}
	}
}

// popName is the non-blocking pop a served pop propagates as.
func popName(left bool) []byte {
	if left {
		return []byte("LPOP")
	}
	return []byte("RPOP")
}

func zpopName(max bool) []byte {
	if max {
		return []byte("ZPOPMAX")
	}
	return []byte("ZPOPMIN")
}

// propagateClaim sends replicas one pending entry's state as Redis does,
// as an XCLAIM that forces it on its consumer with its delivery time and
// count, and the group's last id.
func propagateClaim(prop func(...[]byte), key, group []byte, p *engine.PendingEntry, lastID engine.StreamID) {
	consumer := ""
	if p.Consumer != nil {
		consumer = p.Consumer.Name
	}
	prop([]byte("XCLAIM"), key, group, []byte(consumer), []byte("0"), p.ID.AppendTo(nil),
		[]byte("TIME"), msArg(p.DeliveryTime), []byte("RETRYCOUNT"), msArg(int64(p.DeliveryCount)),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), lastID.AppendTo(nil))
}

// propagateGroupID sends replicas a group's last id and entries read.
func propagateGroupID(prop func(...[]byte), key []byte, g *engine.StreamGroup) {
	prop([]byte("XGROUP"), []byte("SETID"), key, []byte(g.Name), g.LastID.AppendTo(nil),
		[]byte("ENTRIESREAD"), msArg(g.EntriesRead))
}
