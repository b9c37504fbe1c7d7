package commands

// ZPOPMIN/ZPOPMAX, ZMPOP and their blocking forms.

import (
	"math"
	"time"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// popFrom pops up to count members from key (a non-empty sorted set) and
// announces it: one zpopmin/zpopmax event, then "del" if it emptied.
func popFrom(db *engine.DB, key []byte, max bool, count int) []engine.ScoreMember {
	items, deleted, _ := db.ZPop(key, max, count)
	event := "zpopmin"
	if max {
		event = "zpopmax"
	}
	db.Notify(engine.NotifyZSet, event, key)
	if deleted {
		db.Notify(engine.NotifyGeneric, "del", key)
	}
	return items
}

func zpopCommand(c *Ctx, max bool) {
	if len(c.Args) > 3 {
		c.SyntaxError()
		return
	}
	count := int64(-1)
	if len(c.Args) == 3 {
		n, ok := c.rangeLong(c.Args[2], 0, math.MaxInt64, "ERR value is out of range, must be positive")
		if !ok {
			return
		}
		count = n
	}
	key := c.Args[1]
	z, err := c.DB.ZSetWrite(key)
	switch {
	case err != nil:
		c.Error(err)
		return
	case z == nil, count == 0:
		c.W.Array(0)
		return
	}
	nested := c.W.RESP3() && count != -1
	items := popFrom(c.DB, key, max, int(min(max64(count, 1), int64(z.Len()))))
	if nested {
		c.W.Array(len(items))
	} else {
		c.W.Array(2 * len(items))
	}
	for _, it := range items {
		if nested {
			c.W.Array(2)
		}
		c.W.BulkString(it.Member)
		c.W.Double(it.Score)
	}
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// firstZSet finds the first of keys holding a sorted set, as Redis's pops
// do: a missing key is skipped, a key of another type is WRONGTYPE.
func firstZSet(c *Ctx, keys [][]byte) (key []byte, found bool, ok bool) {
	for _, k := range keys {
		z, err := c.DB.ZSetWrite(k)
		if err != nil {
			c.Error(err)
			return nil, false, false
		}
		if z != nil {
			return k, true, true
		}
	}
	return nil, false, true
}

// writeKeyedPop replies a BZPOPMIN ([key, member, score]) or a ZMPOP
// ([key, [[member, score], ...]]) result.
func writeKeyedPop(w *resp.Writer, key []byte, items []engine.ScoreMember, nested bool) {
	if !nested {
		w.Array(1 + 2*len(items))
		w.Bulk(key)
		for _, it := range items {
			w.BulkString(it.Member)
			w.Double(it.Score)
		}
		return
	}
	w.Array(2)
	w.Bulk(key)
	w.Array(len(items))
	for _, it := range items {
		w.Array(2)
		w.BulkString(it.Member)
		w.Double(it.Score)
	}
}

func bzpop(c *Ctx, max bool) {
	timeout, ok := c.BlockTimeout(c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	blockingPop(c, c.Args[1:len(c.Args)-1], timeout, max, 1, false)
}

// blockingPop pops at once from the first non-empty sorted set of keys, or
// parks the client until a write makes one of them non-empty (or the
// timeout passes: a null array).
func blockingPop(c *Ctx, keys [][]byte, timeout time.Duration, max bool, count int, nested bool) {
	key, found, ok := firstZSet(c, keys)
	if !ok {
		return
	}
	prop := c.propagateLater()
	// BZPOPMIN propagates as ZPOPMIN key, BZMPOP as ZPOPMIN key <popped>.
	pop := func(db *engine.DB, w *resp.Writer, key []byte) {
		items := popFrom(db, key, max, count)
		if nested {
			prop(zpopName(max), key, msArg(int64(len(items))))
		} else {
			prop(zpopName(max), key)
		}
		writeKeyedPop(w, key, items, nested)
	}
	if found {
		pop(c.DB, c.W, key)
		return
	}
	db, w := c.DB, c.W
	c.Conn.Block(keys, timeout, func(key []byte) bool {
		z, err := db.ZSetWrite(key)
		if z == nil || err != nil {
			return false
		}
		pop(db, w, key)
		return true
	}, func() { w.NullArray() })
}

// zmpopGeneric is ZMPOP and BZMPOP: numkeys at numkeysIdx, the keys, MIN or
// MAX, an optional COUNT; BZMPOP's timeout (before numkeys) is parsed
// after those.
func zmpopGeneric(c *Ctx, numkeysIdx int, block bool) {
	numkeys, ok := c.rangeLong(c.Args[numkeysIdx], 1, math.MaxInt64, "ERR numkeys should be greater than 0")
	if !ok {
		return
	}
	if numkeys >= int64(len(c.Args)-numkeysIdx-1) {
		c.SyntaxError()
		return
	}
	whereIdx := numkeysIdx + 1 + int(numkeys)
	var max bool
	switch a := c.Args[whereIdx]; {
	case is(a, "MIN"):
	case is(a, "MAX"):
		max = true
	default:
		c.SyntaxError()
		return
	}
	count := int64(-1)
	for j := whereIdx + 1; j < len(c.Args); j++ {
		if count == -1 && is(c.Args[j], "COUNT") && j+1 < len(c.Args) {
			j++
			if count, ok = c.rangeLong(c.Args[j], 1, math.MaxInt64, "ERR count should be greater than 0"); !ok {
				return
			}
			continue
		}
		c.SyntaxError()
		return
	}
	if count == -1 {
		count = 1
	}
	keys := c.Args[numkeysIdx+1 : whereIdx]
	n := int(min(count, math.MaxInt32))
	if block {
		timeout, ok := c.BlockTimeout(c.Args[1])
		if !ok {
			return
		}
		blockingPop(c, keys, timeout, max, n, true)
		return
	}
	key, found, ok := firstZSet(c, keys)
	switch {
	case !ok:
	case !found:
		c.W.NullArray()
	default:
		items := popFrom(c.DB, key, max, n)
		c.PropagateAs(zpopName(max), key, msArg(int64(len(items))))
		writeKeyedPop(c.W, key, items, true)
	}
}
