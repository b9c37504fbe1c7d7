package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/redis/go-redis/v9"
)

// SCAN, HSCAN and SSCAN promise that an element present for the whole
// iteration is returned at least once, however the table grows or shrinks
// between calls. These tests scan with small, varying COUNTs while other
// elements are added by the thousand (growing the table several times over)
// and removed again (shrinking it), and check that every stable element was
// seen. They run on Revolver and on redis-server alike.

// scanMutator is one kind of scanned collection.
type scanMutator struct {
	name string
	// setup creates the stable elements (names from stable(i)).
	setup func(c *redis.Client, stable []string)
	// scan performs one call from cursor.
	scan func(c *redis.Client, cursor uint64, count int64) ([]string, uint64, error)
	// add and remove change the other elements.
	add    func(p redis.Pipeliner, names []string)
	remove func(p redis.Pipeliner, names []string)
}

var scanMutators = []scanMutator{
	{
		name: "SCAN",
		setup: func(c *redis.Client, stable []string) {
			p := c.Pipeline()
			for _, s := range stable {
				p.Set(ctx, s, "v", 0)
			}
			p.Exec(ctx)
		},
		scan: func(c *redis.Client, cursor uint64, count int64) ([]string, uint64, error) {
			return c.Scan(ctx, cursor, "", count).Result()
		},
		add: func(p redis.Pipeliner, names []string) {
			for _, n := range names {
				p.Set(ctx, n, "x", 0)
			}
		},
		remove: func(p redis.Pipeliner, names []string) {
			for i := 0; i < len(names); i += 100 {
				p.Del(ctx, names[i:min(i+100, len(names))]...)
			}
		},
	},
	{
		name: "HSCAN",
		setup: func(c *redis.Client, stable []string) {
			args := make([]any, 0, 2*len(stable))
			for _, s := range stable {
				args = append(args, s, "v")
			}
			c.HSet(ctx, "h", args...)
		},
		scan: func(c *redis.Client, cursor uint64, count int64) ([]string, uint64, error) {
			kv, next, err := c.HScan(ctx, "h", cursor, "", count).Result()
			var fields []string
			for i := 0; i+1 < len(kv); i += 2 {
				fields = append(fields, kv[i])
			}
			return fields, next, err
		},
		add: func(p redis.Pipeliner, names []string) {
			args := make([]any, 0, 2*len(names))
			for _, n := range names {
				args = append(args, n, "x")
			}
			p.HSet(ctx, "h", args...)
		},
		remove: func(p redis.Pipeliner, names []string) { p.HDel(ctx, "h", names...) },
	},
	{
		name: "SSCAN",
		setup: func(c *redis.Client, stable []string) {
			args := make([]any, 0, len(stable))
			for _, s := range stable {
				args = append(args, s)
			}
			c.SAdd(ctx, "s", args...)
		},
		scan: func(c *redis.Client, cursor uint64, count int64) ([]string, uint64, error) {
			return c.SScan(ctx, "s", cursor, "", count).Result()
		},
		add: func(p redis.Pipeliner, names []string) {
			args := make([]any, 0, len(names))
			for _, n := range names {
				args = append(args, n)
			}
			p.SAdd(ctx, "s", args...)
		},
		remove: func(p redis.Pipeliner, names []string) {
			args := make([]any, 0, len(names))
			for _, n := range names {
				args = append(args, n)
			}
			p.SRem(ctx, "s", args...)
		},
	},
}

func runScanMutation(t *testing.T, c *redis.Client, m scanMutator, seed uint64) {
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	stable := make([]string, 1000)
	for i := range stable {
		stable[i] = fmt.Sprintf("stable:%d", i)
	}
	m.setup(c, stable)
	r := rand.New(rand.NewPCG(seed, 99))
	var temp []string
	for round := 0; round < 8; round++ {
		seen := map[string]bool{}
		var cursor uint64
		calls, grew, shrank := 0, 0, 0
		for {
			got, next, err := m.scan(c, cursor, int64(1+r.IntN(50)))
			if err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			for _, e := range got {
				seen[e] = true
			}
			cursor = next
			calls++
			if cursor == 0 {
				break
			}
			// Alternate: grow by thousands, then remove most of what was
			// added (the table shrinks back), with small changes between.
			p := c.Pipeline()
			switch calls % 6 {
			case 1:
				var names []string
				for i := 0; i < 4000; i++ {
					names = append(names, fmt.Sprintf("tmp:%d:%d:%d", round, calls, i))
				}
				m.add(p, names)
				temp = append(temp, names...)
				grew++
			case 4:
				if len(temp) > 0 {
					m.remove(p, temp)
					temp = temp[:0]
					shrank++
				}
			default:
				names := []string{fmt.Sprintf("small:%d:%d", round, calls)}
				m.add(p, names)
				temp = append(temp, names...)
			}
			if _, err := p.Exec(ctx); err != nil {
				t.Fatalf("%s: mutation: %v", m.name, err)
			}
		}
		if grew == 0 || shrank == 0 {
			t.Fatalf("%s round %d: %d calls did not both grow (%d) and shrink (%d) the table", m.name, round, calls, grew, shrank)
		}
		for _, s := range stable {
			if !seen[s] {
				t.Fatalf("%s round %d: %s was present for the whole scan but never returned (%d calls)", m.name, round, s, calls)
			}
		}
	}
}

func TestScanUnderMutation(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		c := goRedis(t, addr, 3)
		for i, m := range scanMutators {
			t.Run(m.name, func(t *testing.T) { runScanMutation(t, c, m, uint64(i+1)) })
		}
		c.FlushAll(context.Background())
	})
}
