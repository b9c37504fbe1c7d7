package tests

import (
	"fmt"
	"math/rand"

	"github.com/redis/go-redis/v9"
)

// dumpStream renders a stream for dumpKeyspace: its entries, then what
// XINFO STREAM says of its ids and counters.
func dumpStream(c *redis.Client, k string) string {
	out := fmt.Sprint(c.XRange(ctx, k, "-", "+").Val())
	if v, err := c.Do(ctx, "XINFO", "STREAM", k, "FULL").Result(); err == nil {
		out += fmt.Sprint(v)
	}
	return out
}

// populateStreams writes streams with deletions, trims (exact and whole
// nodes), explicit and generated ids.
func populateStreams(p redis.Pipeliner, r *rand.Rand) {
	for i := 1; i <= 400; i++ {
		p.XAdd(ctx, &redis.XAddArgs{Stream: "stream", ID: fmt.Sprintf("%d-%d", i/3+1, i%3), Values: []any{"f", r.Intn(1000), "g", "x"}})
		if i%7 == 0 {
			p.XDel(ctx, "stream", fmt.Sprintf("%d-%d", i/5+1, i%3))
		}
		if i%5 == 0 {
			p.XAdd(ctx, &redis.XAddArgs{Stream: "stream2", Values: []any{"other", i}})
		}
	}
	p.XTrimMaxLenApprox(ctx, "stream", 250, 0)
	p.XTrimMinID(ctx, "stream2", "0-0")
	p.Do(ctx, "XSETID", "stream", "9999-0", "ENTRIESADDED", 5000, "MAXDELETEDID", "9000-0")
	p.XAdd(ctx, &redis.XAddArgs{Stream: "emptied", ID: "1-1", Values: []any{"a", "b"}})
	p.XDel(ctx, "emptied", "1-1")
}
