package tests

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The cache test: fill a server past maxmemory under each policy and check
// that memory holds, that evicted keys are counted, announced and gone
// (after a restart too).

const cacheValue = 1000

// cacheSlack is how far over maxmemory used_memory may go: the Go memory
// limit is soft, and in-process the heap is also the test's (decision 0008).
func cacheSlack(maxMemory int) int64 { return int64(maxMemory / 10) }

func infoInt(t *testing.T, c *redis.Client, section, field string) int64 {
	t.Helper()
	info, err := c.Info(ctx, section).Result()
	if err != nil {
		t.Fatal(err)
	}
	return parseInfoInt(t, info, field)
}

func parseInfoInt(t *testing.T, info, field string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s", field)
	return 0
}

// evictedListener counts evicted events and remembers their keys.
type evictedListener struct {
	mu   sync.Mutex
	keys []string
	done chan struct{}
}

func listenEvicted(t *testing.T, addr string) *evictedListener {
	l := &evictedListener{done: make(chan struct{})}
	sub := goRedis(t, addr, 3).Subscribe(ctx, "__keyevent@0__:evicted")
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(l.done)
		for m := range sub.Channel(redis.WithChannelSize(1 << 16)) {
			l.mu.Lock()
			l.keys = append(l.keys, m.Payload)
			l.mu.Unlock()
		}
	}()
	t.Cleanup(func() { sub.Close(); <-l.done })
	return l
}

func (l *evictedListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// fillCache writes cacheKeys keys of cacheValue bytes in pipelines (with a
// TTL when volatile), sampling used_memory between pipelines, and returns
// the highest sample.
func fillCache(t *testing.T, c *redis.Client, keys int, volatile bool) int64 {
	t.Helper()
	val := strings.Repeat("v", cacheValue)
	peak := int64(0)
	for i := 0; i < keys; i += 500 {
		p := c.Pipeline()
		for j := i; j < i+500; j++ {
			ttl := time.Duration(0)
			if volatile {
				ttl = time.Hour + time.Duration(j)*time.Second
			}
			p.Set(ctx, fmt.Sprintf("key:%d", j), val, ttl)
		}
		if _, err := p.Exec(ctx); err != nil {
			// What the server measured, for a refusal that should not be.
			t.Fatalf("write %d: %v\nDBSIZE %d\n%s", i, err, c.DBSize(ctx).Val(),
				c.Info(ctx, "memory", "persistence", "stats").Val())
		}
		// What persistence holds for its store is left out, as Redis
		// leaves out its AOF buffers.
		info, err := c.Info(ctx, "memory", "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		used := parseInfoInt(t, info, "used_memory") - parseInfoInt(t, info, "mem_not_counted_for_evict")
		peak = max(peak, used)
	}
	return peak
}

func TestEvictionHoldsMaxMemory(t *testing.T) {
	long(t)
	// With persistence the log's and the applier's buffers are part of
	// used_memory too (80-120 MB of heap under this write load), so that
	// case gets a larger maxmemory.
	for _, tc := range []struct {
		policy          string
		maxMemory, keys int
		persist         bool
	}{
		{"allkeys-lru", 40 << 20, 80_000, false},
		{"allkeys-lru", 256 << 20, 300_000, true},
		{"allkeys-lfu", 40 << 20, 80_000, false},
		{"allkeys-random", 40 << 20, 80_000, false},
		{"volatile-lru", 40 << 20, 80_000, false},
		{"volatile-lfu", 40 << 20, 80_000, false},
		{"volatile-random", 40 << 20, 80_000, false},
		{"volatile-ttl", 40 << 20, 80_000, false},
	} {
		name := tc.policy
		if tc.persist {
			name += "/persistence"
		}
		t.Run(name, func(t *testing.T) {
			runtime.GC() // in-process, the heap is also the earlier tests'
			dir := t.TempDir()
			opts := []serverOpt{withConfig("maxmemory-policy", tc.policy),
				withConfig("maxmemory", strconv.Itoa(tc.maxMemory)),
				withConfig("notify-keyspace-events", "Ee")}
			if tc.persist {
				opts = append(opts, withPersistence(dir))
			}
			srv := startServer(t, opts...)
			c := goRedis(t, srv.Addr(), 2)
			events := listenEvicted(t, srv.Addr())

			peak := fillCache(t, c, tc.keys, strings.HasPrefix(tc.policy, "volatile"))
			t.Logf("used_memory peaked at %.1f MB (maxmemory %d MB)", float64(peak)/(1<<20), tc.maxMemory>>20)
			if slack := cacheSlack(tc.maxMemory); peak > int64(tc.maxMemory)+slack {
				t.Errorf("used_memory reached %d, over maxmemory %d + %d", peak, tc.maxMemory, slack)
			}
			// One transaction, so no eviction runs between the two reads.
			var sizeCmd *redis.IntCmd
			var statsCmd *redis.StringCmd
			if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				sizeCmd, statsCmd = p.DBSize(ctx), p.Info(ctx, "stats")
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			size, evicted := sizeCmd.Val(), parseInfoInt(t, statsCmd.Val(), "evicted_keys")
			if evicted == 0 || size+evicted != int64(tc.keys) {
				t.Fatalf("evicted_keys %d and %d keys left, of %d written", evicted, size, tc.keys)
			}
			// Eviction may go on after the transaction (a command over the
			// limit, or the cron finishing what tenacity cut short), so the
			// events are matched with evicted_keys once both settle.
			var last int64
			waitFor(t, 10*time.Second, "an evicted event for every eviction", func() bool {
				last = parseInfoInt(t, c.Info(ctx, "stats").Val(), "evicted_keys")
				return int64(events.count()) == last
			})
			if n := events.count(); int64(n) != last || last < evicted {
				t.Fatalf("%d evicted events for %d evictions", n, last)
			}
			if tc.policy == "volatile-ttl" {
				// The nearest deadlines went first: the first keys written.
				if c.Exists(ctx, "key:0").Val() != 0 || c.Exists(ctx, fmt.Sprintf("key:%d", tc.keys-1)).Val() != 1 {
					t.Error("volatile-ttl kept the nearest deadline or evicted the farthest")
				}
			}
			if !tc.persist {
				return
			}
			events.mu.Lock()
			gone := append([]string(nil), events.keys[:100]...)
			events.mu.Unlock()
			srv.Close()
			srv = startServer(t, withPersistence(dir))
			c = goRedis(t, srv.Addr(), 2)
			if got := c.DBSize(ctx).Val(); got != size {
				t.Fatalf("after a restart %d keys, before %d", got, size)
			}
			for _, k := range gone {
				if c.Exists(ctx, k).Val() != 0 {
					t.Fatalf("evicted key %s is back after a restart", k)
				}
			}
		})
	}
}

func TestNoEvictionRefusesWrites(t *testing.T) {
	runtime.GC()
	srv := startServer(t)
	c := goRedis(t, srv.Addr(), 2)
	// Room for about 20 MB more than the heap holds now.
	limit := infoInt(t, c, "memory", "used_memory") + 20<<20
	if err := c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	val := strings.Repeat("v", cacheValue)
	written := 0
	for ; ; written++ {
		err := c.Set(ctx, fmt.Sprintf("key:%d", written), val, 0).Err()
		if err != nil {
			if err.Error() != "OOM command not allowed when used memory > 'maxmemory'." {
				t.Fatal(err)
			}
			break
		}
		if written > 1_000_000 {
			t.Fatal("noeviction never refused a write")
		}
		if written%1000 == 0 {
			time.Sleep(20 * time.Millisecond) // let the cron sample the heap
		}
	}
	if written < 1000 {
		t.Fatalf("refused after %d writes", written)
	}
	if got := infoInt(t, c, "stats", "evicted_keys"); got != 0 {
		t.Fatalf("noeviction evicted %d keys", got)
	}
	if n := c.DBSize(ctx).Val(); n != int64(written) {
		t.Fatalf("%d keys of %d written", n, written)
	}
	if err := c.Get(ctx, "key:0").Err(); err != nil {
		t.Fatalf("reads run over maxmemory: %v", err)
	}
}
