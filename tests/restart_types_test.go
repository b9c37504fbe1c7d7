package tests

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// dumpKeyspace renders every key of databases 0..3 with its type, value
// and remaining TTL (rounded to minutes, so the dump is stable across a
// restart) in a canonical text form.
func dumpKeyspace(t *testing.T, addr string) string {
	t.Helper()
	return dumpKeyspaceWith(t, addr, func(c *redis.Client, k string) string {
		ttl := c.PTTL(ctx, k).Val()
		if ttl <= 0 {
			return "-"
		}
		return strconv.Itoa(int((ttl + 30*time.Second) / time.Minute))
	})
}

// dumpKeyspaceWith is dumpKeyspace with each key's deadline rendered by
// ttlOf.
func dumpKeyspaceWith(t *testing.T, addr string, ttlOf func(c *redis.Client, k string) string) string {
	t.Helper()
	var out []string
	for db := 0; db < 4; db++ {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
		keys, err := c.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(keys)
		for _, k := range keys {
			typ := c.Type(ctx, k).Val()
			var val string
			switch typ {
			case "string":
				val = strconv.Quote(c.Get(ctx, k).Val())
			case "list":
				val = fmt.Sprintf("%q", c.LRange(ctx, k, 0, -1).Val())
			case "hash":
				m := c.HGetAll(ctx, k).Val()
				fields := make([]string, 0, len(m))
				for f, v := range m {
					fields = append(fields, strconv.Quote(f)+"="+strconv.Quote(v))
				}
				sort.Strings(fields)
				val = strings.Join(fields, ",")
			case "set":
				m := c.SMembers(ctx, k).Val()
				sort.Strings(m)
				val = fmt.Sprintf("%q", m)
			case "zset":
				for _, z := range c.ZRangeWithScores(ctx, k, 0, -1).Val() {
					val += fmt.Sprintf("%q:%v ", z.Member, z.Score)
				}
			case "stream":
				val = dumpStream(c, k)
			default:
				t.Fatalf("key %q has type %q", k, typ)
			}
			ttlText := ttlOf(c, k)
			// A string's raw/embstr is re-derived on load (by Redis too),
			// so only aggregates' encodings must survive.
			enc := ""
			if typ != "string" {
				enc = c.ObjectEncoding(ctx, k).Val()
			}
			out = append(out, fmt.Sprintf("db%d %q %s %s ttl=%s %s", db, k, typ, enc, ttlText, val))
		}
		c.Close()
	}
	return strings.Join(out, "\n")
}

// populateAllTypes writes a mix of every type, with deletions, overwrites,
// in-place edits and expiries, so a restart has something to get wrong.
func populateAllTypes(t *testing.T, addr string, seed int64) {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	for db := 0; db < 4; db++ {
		c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
		p := c.Pipeline()
		for i := 0; i < 300; i++ {
			k := fmt.Sprintf("k%d", r.Intn(120))
			switch r.Intn(12) {
			case 0:
				p.Set(ctx, k, strconv.Itoa(r.Int()), 0)
			case 1:
				p.Append(ctx, "s"+k, "x")
			case 2:
				p.RPush(ctx, "l"+k, r.Intn(1000), r.Intn(1000))
			case 3:
				p.LPop(ctx, "l"+k)
			case 4:
				p.HSet(ctx, "h"+k, fmt.Sprintf("f%d", r.Intn(20)), r.Intn(100))
			case 5:
				p.HDel(ctx, "h"+k, fmt.Sprintf("f%d", r.Intn(20)))
			case 6:
				p.SAdd(ctx, "set"+k, r.Intn(50), fmt.Sprintf("m%d", r.Intn(50)))
			case 7:
				p.SRem(ctx, "set"+k, r.Intn(50))
			case 8:
				p.ZAdd(ctx, "z"+k, redis.Z{Score: float64(r.Intn(100)) / 4, Member: fmt.Sprintf("m%d", r.Intn(30))})
			case 9:
				p.ZPopMin(ctx, "z"+k)
			case 10:
				p.Expire(ctx, "l"+k, time.Duration(1+r.Intn(100))*time.Hour)
			case 11:
				p.Del(ctx, "h"+k)
			}
		}
		p.LInsert(ctx, "mid", "BEFORE", "nothing", "x")
		p.RPush(ctx, "mid", "a", "b", "c", "d", "e")
		p.LInsert(ctx, "mid", "AFTER", "b", "x")
		p.LRem(ctx, "mid", 1, "d")
		p.LSet(ctx, "mid", 0, "A")
		p.LTrim(ctx, "mid", 0, 4)
		populateLarge(p, r, db)
		if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
			// WRONGTYPE and the like are part of the mix; only transport
			// errors matter.
			if !strings.Contains(err.Error(), "WRONGTYPE") {
				t.Fatal(err)
			}
		}
		c.Close()
	}
}

// populateLarge adds one key of each aggregate type past its compact
// encoding's limits (a list spanning many chunks, a hashtable hash, a
// hashtable set converted from an intset, a skiplist zset), edited in the
// middle after it grew.
func populateLarge(p redis.Pipeliner, r *rand.Rand, db int) {
	for i := 0; i < 3000; i++ {
		p.RPush(ctx, "biglist", fmt.Sprintf("element-%d-%d", db, i))
		p.HSet(ctx, "bighash", fmt.Sprintf("field-%d", i), r.Intn(1e6))
		p.SAdd(ctx, "bigset", i*7)
		p.ZAdd(ctx, "bigzset", redis.Z{Score: float64(r.Intn(1000)), Member: fmt.Sprintf("member-%d", i)})
	}
	p.LInsert(ctx, "biglist", "AFTER", "element-0-1500", "inserted")
	p.LRem(ctx, "biglist", 0, fmt.Sprintf("element-%d-700", db))
	p.LTrim(ctx, "biglist", 10, -10)
	p.SAdd(ctx, "bigset", "not-an-integer")
	p.SRem(ctx, "bigset", 70, 77)
	p.HIncrBy(ctx, "bighash", "field-10", 5)
	p.HDel(ctx, "bighash", "field-11")
	p.ZIncrBy(ctx, "bigzset", 2.5, "member-20")
	p.ZRemRangeByRank(ctx, "bigzset", 100, 199)
	// Long strings changed in place, which persist as patches of the bytes
	// written: bits set inside a bitmap and past its end, lines appended
	// to a log, ranges written inside it and past its end.
	for i := 0; i < 300; i++ {
		p.SetBit(ctx, "bigbitmap", int64(r.Intn(80000)), 1)
		p.Append(ctx, "biglog", fmt.Sprintf("line %d of db %d\n", i, db))
	}
	populateStreams(p, r)
	p.SetBit(ctx, "bigbitmap", 100003, 1)
	p.SetBit(ctx, "bigbitmap", 17, 0)
	p.SetRange(ctx, "biglog", 40, "written over")
	p.SetRange(ctx, "biglog", 9000, "past the end")
	// Past 64 KB the store holds a patched value between its writes to
	// Pebble, so after kill -9 the log alone has the latest state.
	p.SetBit(ctx, "hugebitmap", 1_000_003, 1)
	for i := 0; i < 200; i++ {
		p.SetBit(ctx, "hugebitmap", int64(r.Intn(1_000_000)), 1)
		p.SetRange(ctx, "hugelog", int64(70_000+40*i), fmt.Sprintf("entry %d of db %d", i, db))
	}
}

// TestRestartRestoresEveryType: the whole keyspace, dumped before a restart
// (clean shutdown, or kill -9 under appendfsync always), is identical after.
func TestRestartRestoresEveryType(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	for _, mode := range []string{"clean", "kill9"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			p := startProcess(t, dir, "--appendfsync", "always")
			populateAllTypes(t, p.addr, 42)
			before := dumpKeyspace(t, p.addr)
			if mode == "clean" {
				p.terminate(t)
			} else {
				p.kill9(t)
			}
			p2 := startProcess(t, dir, "--appendfsync", "always")
			after := dumpKeyspace(t, p2.addr)
			if before != after {
				t.Fatalf("keyspace differs after restart (%s)\nbefore:\n%s\n\nafter:\n%s", mode, before, after)
			}
			if len(before) < 1000 {
				t.Fatalf("dump suspiciously small:\n%s", before)
			}
		})
	}
}
