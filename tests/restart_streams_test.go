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
	if v, err := c.Do(ctx, "XINFO", "STREAM", k, "FULL", "COUNT", "0").Result(); err == nil {
		out += fmt.Sprint(v)
	} else {
		out += err.Error()
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
	// Groups, consumers and their pending entries.
	p.XGroupCreate(ctx, "stream", "workers", "0")
	p.XGroupCreate(ctx, "stream", "audit", "$")
	p.XGroupCreateMkStream(ctx, "fresh", "g", "$")
	p.XGroupCreateConsumer(ctx, "stream", "workers", "idle-one")
	for i, c := range []string{"alice", "bob", "carol"} {
		p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: c, Streams: []string{"stream", ">"}, Count: int64(5 + i)})
	}
	p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "noack", Streams: []string{"stream", ">"}, Count: 3, NoAck: true})
	p.XAck(ctx, "stream", "workers", "2-0", "3-1")
	p.XClaim(ctx, &redis.XClaimArgs{Stream: "stream", Group: "workers", Consumer: "bob", Messages: []string{"3-0"}})
	p.XGroupDelConsumer(ctx, "stream", "workers", "carol")
	p.XGroupCreate(ctx, "stream", "gone", "0")
	p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "gone", Consumer: "x", Streams: []string{"stream", ">"}, Count: 2})
	p.XGroupDestroy(ctx, "stream", "gone")
	p.XAdd(ctx, &redis.XAddArgs{Stream: "emptied", ID: "1-1", Values: []any{"a", "b"}})
	p.XDel(ctx, "emptied", "1-1")
}
