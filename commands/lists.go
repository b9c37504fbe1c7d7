package commands

import (
	"bytes"
	"math"
	"time"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/resp"
)

// Lists is the list family, blocking pops included.
var Lists = []*Command{
	{Name: "lpush", Arity: -3, Flags: "write denyoom fast", ACL: "list", Keys: "RW insert @1",
		Group: "list", Since: "1.0.0", Complexity: "O(1) per element pushed.",
		Summary: "Adds elements at the head of a list, creating it if absent.",
		Args:    "key element...", Run: lpush},
	{Name: "rpush", Arity: -3, Flags: "write denyoom fast", ACL: "list", Keys: "RW insert @1",
		Group: "list", Since: "1.0.0", Complexity: "O(1) per element pushed.",
		Summary: "Adds elements at the tail of a list, creating it if absent.",
		Args:    "key element...", Run: rpush},
	{Name: "lpushx", Arity: -3, Flags: "write denyoom fast", ACL: "list", Keys: "RW insert @1",
		Group: "list", Since: "2.2.0", Complexity: "O(1) per element pushed.",
		Summary: "Adds elements at the head of a list only when the list already exists.",
		Args:    "key element...", Run: lpushx},
	{Name: "rpushx", Arity: -3, Flags: "write denyoom fast", ACL: "list", Keys: "RW insert @1",
		Group: "list", Since: "2.2.0", Complexity: "O(1) per element pushed.",
		Summary: "Adds elements at the tail of a list only when the list already exists.",
		Args:    "key element...", Run: rpushx},
	{Name: "lpop", Arity: -2, Flags: "write fast", ACL: "list", Keys: "RW access delete @1",
		Group: "list", Since: "1.0.0", Complexity: "O(N) in the number of elements popped.",
		Summary: "Removes and returns the first element, or the first count elements, of a list.",
		Args:    "key [count:integer]", Run: lpop},
	{Name: "rpop", Arity: -2, Flags: "write fast", ACL: "list", Keys: "RW access delete @1",
		Group: "list", Since: "1.0.0", Complexity: "O(N) in the number of elements popped.",
		Summary: "Removes and returns the last element, or the last count elements, of a list.",
		Args:    "key [count:integer]", Run: rpop},
	{Name: "llen", Arity: 2, Flags: "readonly fast", ACL: "list", Keys: "RO @1",
		Group: "list", Since: "1.0.0", Complexity: "O(1)",
		Summary: "Returns the number of elements of a list.", Args: "key", Run: llen},
	{Name: "lrange", Arity: 4, Flags: "readonly", ACL: "list", Keys: "RO access @1",
		Group: "list", Since: "1.0.0",
		Complexity: "O(S+N): S to reach the start from the nearer end, chunk by chunk, N for the elements returned.",
		Summary:    "Returns a range of elements of a list, by index.",
		Args:       "key start:integer stop:integer", Run: lrange},
	{Name: "lindex", Arity: 3, Flags: "readonly", ACL: "list", Keys: "RO access @1",
		Group: "list", Since: "1.0.0",
		Complexity: "O(N) in the distance from the nearer end; O(1) for the first and last elements.",
		Summary:    "Returns the element of a list at an index.", Args: "key index:integer", Run: lindex},
	{Name: "lset", Arity: 4, Flags: "write denyoom", ACL: "list", Keys: "RW update @1",
		Group: "list", Since: "1.0.0",
		Complexity: "O(N) in the distance from the nearer end; O(1) for the first and last elements.",
		Summary:    "Replaces the element of a list at an index.",
		Args:       "key index:integer element", Run: lset},
	{Name: "lrem", Arity: 4, Flags: "write", ACL: "list", Keys: "RW delete @1",
		Group: "list", Since: "1.0.0", Complexity: "O(N+M): N elements scanned, M removed.",
		Summary: "Removes elements equal to a value from a list, from the head, the tail or everywhere.",
		Args:    "key count:integer element", Run: lrem},
	{Name: "ltrim", Arity: 4, Flags: "write", ACL: "list", Keys: "RW delete @1",
		Group: "list", Since: "1.0.0", Complexity: "O(N) in the number of elements removed.",
		Summary: "Keeps only a range of elements of a list, deleting the rest.",
		Args:    "key start:integer stop:integer", Run: ltrim},
	{Name: "linsert", Arity: 5, Flags: "write denyoom", ACL: "list", Keys: "RW insert @1",
		Group: "list", Since: "2.2.0", Complexity: "O(N) in the distance to the pivot.",
		Summary: "Inserts an element before or after the first occurrence of a pivot in a list.",
		Args:    "key (where=BEFORE|AFTER) pivot element", Run: linsert},
	{Name: "lpos", Arity: -3, Flags: "readonly", ACL: "list", Keys: "RO access @1",
		Group: "list", Since: "6.0.6",
		Complexity: "O(N) in the elements scanned; MAXLEN bounds it.",
		Summary:    "Returns the indexes of the elements of a list equal to a value.",
		Args:       "key element [RANK rank:integer] [COUNT num-matches:integer] [MAXLEN len:integer]", Run: lpos},
	{Name: "rpoplpush", Arity: 3, Flags: "write denyoom", ACL: "list", Keys: "RW access delete @1;RW insert @2",
		Group: "list", Since: "1.2.0", Complexity: "O(1)", DocFlags: "deprecated", Deprecated: "6.2.0",
		ReplacedBy: "`LMOVE` with the `RIGHT` and `LEFT` arguments",
		Summary:    "Moves the last element of a list to the head of another and returns it.",
		Args:       "source:key destination:key", Run: rpoplpush},
	{Name: "lmove", Arity: 5, Flags: "write denyoom", ACL: "list", Keys: "RW access delete @1;RW insert @2",
		Group: "list", Since: "6.2.0", Complexity: "O(1)",
		Summary: "Moves an element from one end of a list to one end of another and returns it.",
		Args:    "source:key destination:key (wherefrom=LEFT|RIGHT) (whereto=LEFT|RIGHT)", Run: lmove},
	{Name: "lmpop", Arity: -4, Flags: "write", ACL: "list", Keys: "RW access delete @1 #0,1,1",
		Group: "list", Since: "7.0.0", Complexity: "O(N+M): N keys looked at, M elements popped.",
		Summary: "Pops elements from the first non-empty list of several.",
		Args:    "numkeys:integer key... (where=LEFT|RIGHT) [COUNT count:integer]", Run: lmpop},
	{Name: "blpop", Arity: -3, Flags: "write noscript blocking", ACL: "list", Keys: "RW access delete @1..-2",
		Group: "list", Since: "2.0.0", Complexity: "O(N) in the number of keys.",
		Summary: "Pops the first element of the first non-empty list of several, waiting for one if all are empty.",
		Args:    "key... timeout:double", Run: blpop},
	{Name: "brpop", Arity: -3, Flags: "write noscript blocking", ACL: "list", Keys: "RW access delete @1..-2",
		Group: "list", Since: "2.0.0", Complexity: "O(N) in the number of keys.",
		Summary: "Pops the last element of the first non-empty list of several, waiting for one if all are empty.",
		Args:    "key... timeout:double", Run: brpop},
	{Name: "brpoplpush", Arity: 4, Flags: "write denyoom noscript blocking", ACL: "list",
		Keys:  "RW access delete @1;RW insert @2",
		Group: "list", Since: "2.2.0", Complexity: "O(1)", DocFlags: "deprecated", Deprecated: "6.2.0",
		ReplacedBy: "`BLMOVE` with the `RIGHT` and `LEFT` arguments",
		Summary:    "Moves the last element of a list to the head of another, waiting for one if the source is empty.",
		Args:       "source:key destination:key timeout:double", Run: brpoplpush},
	{Name: "blmove", Arity: 6, Flags: "write denyoom noscript blocking", ACL: "list",
		Keys:  "RW access delete @1;RW insert @2",
		Group: "list", Since: "6.2.0", Complexity: "O(1)",
		Summary: "Moves an element between the ends of two lists, waiting for one if the source is empty.",
		Args:    "source:key destination:key (wherefrom=LEFT|RIGHT) (whereto=LEFT|RIGHT) timeout:double",
		Run:     blmove},
	{Name: "blmpop", Arity: -5, Flags: "write blocking", ACL: "list", Keys: "RW access delete @2 #0,1,1",
		Group: "list", Since: "7.0.0", Complexity: "O(N+M): N keys looked at, M elements popped.",
		Summary: "Pops elements from the first non-empty list of several, waiting for one if all are empty.",
		Args:    "timeout:double numkeys:integer key... (where=LEFT|RIGHT) [COUNT count:integer]", Run: blmpop},
}

// listIntArg parses an integer argument that must lie in [lo, hi]; msg is
// Redis's error for anything else, not-a-number included.
func listIntArg(c *Ctx, a []byte, lo, hi int64, msg string) (int64, bool) {
	n, ok := engine.ParseInt(a)
	if !ok || n < lo || n > hi {
		c.W.Error(msg)
		return 0, false
	}
	return n, true
}

// listEnd parses LEFT or RIGHT (true for LEFT), writing a syntax error for
// anything else.
func listEnd(c *Ctx, a []byte) (left, ok bool) {
	switch {
	case is(a, "LEFT"):
		return true, true
	case is(a, "RIGHT"):
		return false, true
	}
	c.SyntaxError()
	return false, false
}

func listPopEvent(left bool) string {
	if left {
		return "lpop"
	}
	return "rpop"
}

func listPushEvent(left bool) string {
	if left {
		return "lpush"
	}
	return "rpush"
}

// listPopped announces a pop and, when the list emptied, its deletion.
func listPopped(db *engine.DB, key []byte, left, deleted bool) {
	db.Notify(engine.NotifyList, listPopEvent(left), key)
	if deleted {
		db.Notify(engine.NotifyGeneric, "del", key)
	}
}

func lpush(c *Ctx)  { listPush(c, true, false) }
func rpush(c *Ctx)  { listPush(c, false, false) }
func lpushx(c *Ctx) { listPush(c, true, true) }
func rpushx(c *Ctx) { listPush(c, false, true) }

func listPush(c *Ctx, left, onlyExisting bool) {
	n, err := c.DB.ListPush(c.Args[1], c.Args[2:], left, onlyExisting)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(n))
	if n > 0 {
		c.DB.Notify(engine.NotifyList, listPushEvent(left), c.Args[1])
	}
}

func lpop(c *Ctx) { listPop(c, true) }
func rpop(c *Ctx) { listPop(c, false) }

func listPop(c *Ctx, left bool) {
	if len(c.Args) > 3 {
		c.W.Error("ERR wrong number of arguments for '" + c.Cmd.FullName() + "' command")
		return
	}
	key, hasCount, count := c.Args[1], len(c.Args) == 3, int64(1)
	if hasCount {
		n, ok := listIntArg(c, c.Args[2], 0, math.MaxInt64, "ERR value is out of range, must be positive")
		if !ok {
			return
		}
		count = n
	}
	if count == 0 {
		// LPOP key 0 still looks the key up: nil for a missing one.
		switch l, err := c.DB.ListWrite(key); {
		case err != nil:
			c.Error(err)
		case l == nil:
			c.W.NullArray()
		default:
			c.W.Array(0)
		}
		return
	}
	vals, deleted, err := c.DB.ListPop(key, left, int(min(count, math.MaxInt32)))
	switch {
	case err != nil:
		c.Error(err)
		return
	case vals == nil && hasCount:
		c.W.NullArray()
		return
	case vals == nil:
		c.W.Null()
		return
	case hasCount:
		listWriteBulks(c.W, vals)
	default:
		c.W.Bulk(vals[0])
	}
	listPopped(c.DB, key, left, deleted)
}

func listWriteBulks(w *resp.Writer, vals [][]byte) {
	w.Array(len(vals))
	for _, v := range vals {
		w.Bulk(v)
	}
}

func llen(c *Ctx) {
	l, err := c.DB.ListRead(c.Args[1])
	switch {
	case err != nil:
		c.Error(err)
	case l == nil:
		c.W.Int(0)
	default:
		c.W.Int(int64(l.Len()))
	}
}

func lrange(c *Ctx) {
	start, ok := c.Int64(2)
	if !ok {
		return
	}
	stop, ok := c.Int64(3)
	if !ok {
		return
	}
	l, err := c.DB.ListRead(c.Args[1])
	switch {
	case err != nil:
		c.Error(err)
		return
	case l == nil:
		c.W.Array(0)
		return
	}
	from, n := l.RangeBounds(start, stop)
	c.W.Array(n)
	l.Each(from, n, false, c.W.Bulk)
}

func lindex(c *Ctx) {
	l, err := c.DB.ListRead(c.Args[1])
	switch {
	case err != nil:
		c.Error(err)
		return
	case l == nil:
		c.W.Null()
		return
	}
	i, ok := c.Int64(2)
	if !ok {
		return
	}
	if v, ok := l.Index(i); ok {
		c.W.Bulk(v)
		return
	}
	c.W.Null()
}

func lset(c *Ctx) {
	key := c.Args[1]
	switch l, err := c.DB.ListWrite(key); {
	case err != nil:
		c.Error(err)
		return
	case l == nil:
		c.Error(engine.ErrNoSuchKey)
		return
	}
	i, ok := c.Int64(2)
	if !ok {
		return
	}
	if err := c.DB.ListSet(key, i, c.Args[3]); err != nil {
		c.Error(err)
		return
	}
	c.W.OK()
	c.DB.Notify(engine.NotifyList, "lset", key)
}

func lrem(c *Ctx) {
	count, ok := c.Int64(2)
	if !ok {
		return
	}
	key := c.Args[1]
	n, deleted, err := c.DB.ListRem(key, count, c.Args[3])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(n))
	if n > 0 {
		c.DB.Notify(engine.NotifyList, "lrem", key)
	}
	if deleted {
		c.DB.Notify(engine.NotifyGeneric, "del", key)
	}
}

func ltrim(c *Ctx) {
	start, ok := c.Int64(2)
	if !ok {
		return
	}
	stop, ok := c.Int64(3)
	if !ok {
		return
	}
	key := c.Args[1]
	found, deleted, err := c.DB.ListTrim(key, start, stop)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.OK()
	if found {
		c.DB.Notify(engine.NotifyList, "ltrim", key)
	}
	if deleted {
		c.DB.Notify(engine.NotifyGeneric, "del", key)
	}
}

func linsert(c *Ctx) {
	var after bool
	switch a := c.Args[2]; {
	case is(a, "AFTER"):
		after = true
	case is(a, "BEFORE"):
	default:
		c.SyntaxError()
		return
	}
	n, err := c.DB.ListInsert(c.Args[1], after, c.Args[3], c.Args[4])
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Int(int64(n))
	if n > 0 {
		c.DB.Notify(engine.NotifyList, "linsert", c.Args[1])
	}
}

func lpos(c *Ctx) {
	rank, count, maxlen := int64(1), int64(-1), int64(0) // count -1: no COUNT option
	args := c.Args
	for j := 3; j < len(args); j++ {
		more := j+1 < len(args)
		var ok bool
		switch a := args[j]; {
		case is(a, "RANK") && more:
			j++
			if rank, ok = c.Int64(j); !ok {
				return
			}
			if rank == 0 {
				c.W.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... " +
					"or use negative to start from the end of the list")
				return
			}
		case is(a, "COUNT") && more:
			j++
			if count, ok = listIntArg(c, args[j], 0, math.MaxInt64, "ERR COUNT can't be negative"); !ok {
				return
			}
		case is(a, "MAXLEN") && more:
			j++
			if maxlen, ok = listIntArg(c, args[j], 0, math.MaxInt64, "ERR MAXLEN can't be negative"); !ok {
				return
			}
		default:
			c.SyntaxError()
			return
		}
	}
	l, err := c.DB.ListRead(args[1])
	if err != nil {
		c.Error(err)
		return
	}
	var at []int64
	if l != nil {
		at = l.Positions(args[2], rank, count, maxlen)
	}
	switch {
	case count != -1:
		c.W.Array(len(at))
		for _, i := range at {
			c.W.Int(i)
		}
	case len(at) > 0:
		c.W.Int(at[0])
	default:
		c.W.Null()
	}
}

func rpoplpush(c *Ctx) { listMove(c, false, true) }

func lmove(c *Ctx) {
	from, ok := listEnd(c, c.Args[3])
	if !ok {
		return
	}
	to, ok := listEnd(c, c.Args[4])
	if !ok {
		return
	}
	listMove(c, from, to)
}

func listMove(c *Ctx, fromLeft, toLeft bool) {
	if listMoveReply(c.DB, c.W, c.Args[1], c.Args[2], fromLeft, toLeft, nil) {
		return
	}
	c.W.Null()
}

// listMoveReply runs LMOVE and writes its reply and events; false (nothing
// written) when the source is absent.
func listMoveReply(db *engine.DB, w *resp.Writer, src, dst []byte, fromLeft, toLeft bool, propagate func()) bool {
	v, deleted, err := db.ListMove(src, dst, fromLeft, toLeft)
	switch {
	case err != nil:
		w.Error(err.Error())
		return true
	case v == nil:
		return false
	}
	if propagate != nil {
		propagate()
	}
	w.Bulk(v)
	db.Notify(engine.NotifyList, listPushEvent(toLeft), dst)
	listPopped(db, src, fromLeft, deleted)
	return true
}

// listMPopArgs is LMPOP's and BLMPOP's "numkeys key... LEFT|RIGHT [COUNT n]".
type listMPopArgs struct {
	keys  [][]byte
	left  bool
	count int
}

func parseListMPop(c *Ctx, numkeysAt int) (listMPopArgs, bool) {
	var p listMPopArgs
	args := c.Args
	numkeys, ok := listIntArg(c, args[numkeysAt], 1, math.MaxInt64, "ERR numkeys should be greater than 0")
	if !ok {
		return p, false
	}
	if numkeys >= int64(len(args)-numkeysAt-1) {
		c.SyntaxError() // no room left for LEFT|RIGHT
		return p, false
	}
	whereAt := numkeysAt + int(numkeys) + 1
	if p.left, ok = listEnd(c, args[whereAt]); !ok {
		return p, false
	}
	count := int64(-1)
	for j := whereAt + 1; j < len(args); j++ {
		if count == -1 && is(args[j], "COUNT") && j+1 < len(args) {
			j++
			if count, ok = listIntArg(c, args[j], 1, math.MaxInt64, "ERR count should be greater than 0"); !ok {
				return p, false
			}
			continue
		}
		c.SyntaxError()
		return p, false
	}
	p.keys = args[numkeysAt+1 : whereAt]
	p.count = int(min(max(count, 1), math.MaxInt32))
	return p, true
}

// listMPopReply pops from key for LMPOP/BLMPOP and writes [key, [elements]];
// false when the key is absent, err when it is not a list.
func listMPopReply(db *engine.DB, w *resp.Writer, key []byte, left bool, count int, prop func(...[]byte)) (bool, error) {
	vals, deleted, err := db.ListPop(key, left, count)
	if vals == nil || err != nil {
		return false, err
	}
	prop(popName(left), key, msArg(int64(len(vals))))
	w.Array(2)
	w.Bulk(key)
	listWriteBulks(w, vals)
	listPopped(db, key, left, deleted)
	return true, nil
}

func lmpop(c *Ctx) {
	p, ok := parseListMPop(c, 1)
	if !ok {
		return
	}
	for _, k := range p.keys {
		done, err := listMPopReply(c.DB, c.W, k, p.left, p.count, c.propagateLater())
		if err != nil {
			c.Error(err)
			return
		}
		if done {
			return
		}
	}
	c.W.NullArray()
}

// listCloneKeys copies keys a blocked client keeps after its command returns.
func listCloneKeys(keys [][]byte) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = bytes.Clone(k)
	}
	return out
}

func blpop(c *Ctx) { listBlockingPop(c, true) }
func brpop(c *Ctx) { listBlockingPop(c, false) }

func listBlockingPop(c *Ctx, left bool) {
	timeout, ok := c.BlockTimeout(c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	db, w, prop := c.DB, c.W, c.propagateLater()
	serve := func(key []byte) (bool, error) {
		vals, deleted, err := db.ListPop(key, left, 1)
		if vals == nil || err != nil {
			return false, err
		}
		prop(popName(left), key)
		w.Array(2)
		w.Bulk(key)
		w.Bulk(vals[0])
		listPopped(db, key, left, deleted)
		return true, nil
	}
	listBlock(c, keys, timeout, serve)
}

func blmpop(c *Ctx) {
	p, ok := parseListMPop(c, 2)
	if !ok {
		return
	}
	timeout, ok := c.BlockTimeout(c.Args[1])
	if !ok {
		return
	}
	db, w, prop := c.DB, c.W, c.propagateLater()
	listBlock(c, p.keys, timeout, func(key []byte) (bool, error) {
		return listMPopReply(db, w, key, p.left, p.count, prop)
	})
}

// listBlock serves BLPOP/BRPOP/BLMPOP from the first key that can serve
// now, or parks the client on all of them. A key holding another type
// answers WRONGTYPE at once; while parked, a key that turns into another
// type simply does not serve.
func listBlock(c *Ctx, keys [][]byte, timeout time.Duration, serve func(key []byte) (bool, error)) {
	for _, k := range keys {
		done, err := serve(k)
		if err != nil {
			c.Error(err)
			return
		}
		if done {
			return
		}
	}
	w := c.W
	c.Conn.Block(listCloneKeys(keys), timeout, func(key []byte) bool {
		done, err := serve(key)
		return done && err == nil
	}, w.NullArray)
}

func brpoplpush(c *Ctx) {
	timeout, ok := c.BlockTimeout(c.Args[3])
	if !ok {
		return
	}
	listBlockingMove(c, false, true, timeout)
}

func blmove(c *Ctx) {
	from, ok := listEnd(c, c.Args[3])
	if !ok {
		return
	}
	to, ok := listEnd(c, c.Args[4])
	if !ok {
		return
	}
	timeout, ok := c.BlockTimeout(c.Args[5])
	if !ok {
		return
	}
	listBlockingMove(c, from, to, timeout)
}

// listBlockingMove is BLMOVE/BRPOPLPUSH: LMOVE when the source has elements,
// else a wait on the source alone.
func listBlockingMove(c *Ctx, fromLeft, toLeft bool, timeout time.Duration) {
	src := c.Args[1]
	switch l, err := c.DB.ListWrite(src); {
	case err != nil:
		c.Error(err)
		return
	case l != nil:
		// Served at once: LMOVE (or RPOPLPUSH) with the client's words.
		var args [][]byte
		if c.Cmd.FullName() == "brpoplpush" {
			args = [][]byte{[]byte("RPOPLPUSH"), c.Args[1], c.Args[2]}
		} else {
			args = [][]byte{[]byte("LMOVE"), c.Args[1], c.Args[2], c.Args[3], c.Args[4]}
		}
		if !listMoveReply(c.DB, c.W, c.Args[1], c.Args[2], fromLeft, toLeft, func() { c.PropagateAs(args...) }) {
			c.W.Null()
		}
		return
	}
	db, w, dst := c.DB, c.W, bytes.Clone(c.Args[2])
	prop, rpoplpush := c.propagateLater(), c.Cmd.FullName() == "brpoplpush"
	var ends [][]byte // BLMOVE's LEFT|RIGHT words, as the client wrote them
	if !rpoplpush {
		ends = listCloneKeys(c.Args[3:5])
	}
	served := func(key []byte) func() {
		return func() {
			if rpoplpush {
				prop([]byte("RPOPLPUSH"), key, dst)
			} else {
				prop([]byte("LMOVE"), key, dst, ends[0], ends[1])
			}
		}
	}
	// Redis answers a null bulk when it may not block (inside MULTI), but
	// a null array when a wait times out or CLIENT UNBLOCK ends it.
	parking := true
	c.Conn.Block(listCloneKeys(c.Args[1:2]), timeout, func(key []byte) bool {
		if l, err := db.ListWrite(key); l == nil || err != nil {
			return false
		}
		// The source has elements; a destination of another type answers
		// WRONGTYPE and ends the wait, the element staying where it is.
		return listMoveReply(db, w, key, dst, fromLeft, toLeft, served(key))
	}, func() {
		if parking {
			w.Null()
		} else {
			w.NullArray()
		}
	})
	parking = false
}
