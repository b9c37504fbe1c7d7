package commands

// ZRANDMEMBER, ZSCAN and the set algebra (ZUNION, ZINTER, ZDIFF and
// their STORE and CARD forms).

import (
	"math"
	"strconv"

	"github.com/revolver-db/revolver/engine"
	"github.com/revolver-db/revolver/glob"
	"github.com/revolver-db/revolver/resp"
)

func zrandmember(c *Ctx) {
	if len(c.Args) == 2 {
		z, ok := c.zsetRead(1)
		switch {
		case !ok:
		case z == nil:
			c.W.Null()
		default:
			c.W.BulkString(z.RandomMember().Member)
		}
		return
	}
	l, ok := c.rangeLong(c.Args[2], -math.MaxInt64, math.MaxInt64, "")
	if !ok {
		return
	}
	withScores := false
	switch {
	case len(c.Args) > 4 || (len(c.Args) == 4 && !is(c.Args[3], "WITHSCORES")):
		c.SyntaxError()
		return
	case len(c.Args) == 4:
		withScores = true
		if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
			c.W.Error("ERR value is out of range")
			return
		}
	}
	z, ok := c.zsetRead(1)
	if !ok {
		return
	}
	if z == nil || l == 0 {
		c.W.Array(0)
		return
	}
	count, unique := uint64(l), true
	if l < 0 {
		count, unique = uint64(-l), false
	}
	n := z.RandomLen(count, unique)
	if withScores && !c.W.RESP3() {
		c.W.Array(int(2 * n))
	} else {
		c.W.Array(int(n))
	}
	z.RandomMembers(count, unique, func(it engine.ScoreMember) { writeScoreMember(c.W, it, withScores) })
}

func zscan(c *Ctx) {
	var z *engine.ZSet
	cursor, o, ok := c.beginElementScan(func() (bool, bool) {
		var ok bool
		z, ok = c.zsetRead(1)
		return z != nil, ok
	})
	if !ok {
		return
	}
	// A listpack-sized set is returned whole with its scores as the
	// listpack stores them; a larger one with %.17g scores.
	listpack := z.Encoding() == "listpack"
	var out []engine.ScoreMember
	next := z.Scan(cursor, o.count, func(m string, score float64) {
		if !o.hasMatch || glob.Match(o.match, m) {
			out = append(out, engine.ScoreMember{Member: m, Score: score})
		}
	})
	c.W.Array(2)
	var buf [24]byte
	c.W.Bulk(strconv.AppendUint(buf[:0], next, 10))
	c.W.Array(2 * len(out))
	var sbuf [32]byte
	for _, it := range out {
		c.W.BulkString(it.Member)
		if listpack {
			c.W.Bulk(appendListpackScore(sbuf[:0], it.Score))
		} else {
			c.W.Bulk(resp.AppendFloat17g(sbuf[:0], it.Score))
		}
	}
}

// appendListpackScore formats a score as a Redis listpack holds it: an
// integer when the value is integral within ±2^62, else %.17g.
func appendListpackScore(dst []byte, f float64) []byte {
	if f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return resp.AppendFloat17g(dst, f)
}

// zsetAlgebra is ZUNION, ZINTER, ZDIFF, ZINTERCARD and the STORE forms
// (dst set): numkeys and the input keys (looked up before the options are
// parsed, as Redis does), then WEIGHTS, AGGREGATE, WITHSCORES or LIMIT as
// the command allows.
func zsetAlgebra(c *Ctx, dst []byte, numkeysIdx int, op engine.ZSetOp, cardOnly bool) {
	setnum, ok := c.Int64(numkeysIdx)
	if !ok {
		return
	}
	if setnum < 1 {
		c.W.Error("ERR at least 1 input key is needed for '" + c.Cmd.FullName() + "' command")
		return
	}
	if setnum > int64(len(c.Args)-numkeysIdx-1) {
		c.SyntaxError()
		return
	}
	j := numkeysIdx + 1 + int(setnum)
	srcs, err := c.DB.ZSources(c.Args[numkeysIdx+1 : j])
	if err != nil {
		c.Error(err)
		return
	}
	var weights []float64
	agg := engine.ZAggSum
	withScores := false
	var limit int64
	for j < len(c.Args) {
		remaining := len(c.Args) - j
		a := c.Args[j]
		switch {
		case op != engine.ZOpDiff && !cardOnly && remaining >= int(setnum)+1 && is(a, "WEIGHTS"):
			j++
			weights = make([]float64, setnum)
			for i := range weights {
				w, ok := engine.ParseScore(c.Args[j])
				if !ok {
					c.W.Error("ERR weight value is not a float")
					return
				}
				weights[i] = w
				j++
			}
		case op != engine.ZOpDiff && !cardOnly && remaining >= 2 && is(a, "AGGREGATE"):
			switch v := c.Args[j+1]; {
			case is(v, "SUM"):
				agg = engine.ZAggSum
			case is(v, "MIN"):
				agg = engine.ZAggMin
			case is(v, "MAX"):
				agg = engine.ZAggMax
			default:
				c.SyntaxError()
				return
			}
			j += 2
		case remaining >= 1 && dst == nil && !cardOnly && is(a, "WITHSCORES"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && is(a, "LIMIT"):
			if limit, ok = c.rangeLong(c.Args[j+1], 0, math.MaxInt64, "ERR LIMIT can't be negative"); !ok {
				return
			}
			j += 2
		default:
			c.SyntaxError()
			return
		}
	}
	if cardOnly {
		c.W.Int(engine.ZInterCard(srcs, limit))
		return
	}
	items := engine.ZCombine(op, srcs, weights, agg)
	if dst != nil {
		event := "zunionstore"
		switch op {
		case engine.ZOpInter:
			event = "zinterstore"
		case engine.ZOpDiff:
			event = "zdiffstore"
		}
		storeResult(c, dst, items, event)
		return
	}
	writeScoreMembers(c.W, items, withScores)
}
