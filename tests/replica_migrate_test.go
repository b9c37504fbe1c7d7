package tests

import (
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// migrateKeys is how many keys the redis-server master holds when the
// migration starts (issue 33: "1M keys of mixed types").
const migrateKeys = 1_000_000

// TestMigrateFromRedisUnderWrites is the zero-downtime migration the README
// shows: a Revolver replica (persistence on) attaches to a redis-server
// master holding a million keys of every common type, some with deadlines,
// while an application keeps writing to the master; it catches up, the
// application stops writing, the replica is promoted, and every key reads
// the same on Revolver as on the old master; then the application writes
// to Revolver.
func TestMigrateFromRedisUnderWrites(t *testing.T) {
	long(t)
	// A short repl-timeout: the replica's load takes longer, and only its
	// newlines keep the link. A replica output limit that the writes
	// queued during the load cannot reach on a slow machine.
	masterAddr := startRealRedis(t, "--repl-diskless-sync-delay", "0", "--repl-backlog-size", "64mb",
		"--repl-timeout", "2", "--client-output-buffer-limit", "replica 1gb 1gb 0")
	// Long read timeouts, and no retries: a script still running when a
	// client gives up would answer its retry BUSY.
	master := redis.NewClient(&redis.Options{Addr: masterAddr, ReadTimeout: time.Minute, MaxRetries: -1})
	defer master.Close()
	start := time.Now()
	const fill = `
for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  local m, k = i % 5
  if m == 0 then k = 'str:'..i; redis.call('SET', k, 'value-'..i)
  elseif m == 1 then k = 'hash:'..i; redis.call('HSET', k, 'a', i, 'b', 'x', 'c', i * 2)
  elseif m == 2 then k = 'list:'..i; redis.call('RPUSH', k, 'a', i, 'c')
  elseif m == 3 then k = 'set:'..i; redis.call('SADD', k, 'a', i, 'c')
  else k = 'zset:'..i; redis.call('ZADD', k, 1, 'a', i, 'b', 2.5, 'c') end
  if i % 10 == 0 then redis.call('PEXPIRE', k, 3600000 + i) end
end
return 1`
	for from := 0; from < migrateKeys; from += 50_000 {
		if err := master.Eval(ctx, fill, nil, from, from+49_999).Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("redis-server master loaded with %d keys in %v", migrateKeys, time.Since(start).Round(time.Millisecond))

	// The application, writing throughout the sync.
	var stop atomic.Bool
	var writes atomic.Int64
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A generous read timeout: the machine is shared with the
			// replica's load, and a pipeline waiting is not a failure.
			c := redis.NewClient(&redis.Options{Addr: masterAddr, ReadTimeout: time.Minute})
			defer c.Close()
			r := rand.New(rand.NewPCG(uint64(w), 33))
			for n := 0; !stop.Load(); n++ {
				p := c.Pipeline()
				for range 20 {
					i := r.IntN(migrateKeys / 5)
					p.Incr(ctx, fmt.Sprintf("counter:%d", r.IntN(1000)))
					p.HIncrBy(ctx, fmt.Sprintf("hash:%d", i*5+1), "a", 1)
					p.RPush(ctx, fmt.Sprintf("list:%d", i*5+2), n)
					p.SAdd(ctx, fmt.Sprintf("set:%d", i*5+3), n)
					p.ZIncrBy(ctx, fmt.Sprintf("zset:%d", i*5+4), 1, "a")
					p.Set(ctx, fmt.Sprintf("str:%d", i*5), n, 0)
					p.Set(ctx, fmt.Sprintf("new:%d:%d", w, n), n, time.Hour)
					p.Del(ctx, fmt.Sprintf("str:%d", r.IntN(migrateKeys/5)*5))
				}
				began := time.Now()
				if _, err := p.Exec(ctx); err != nil {
					t.Errorf("a pipeline of writes to the master, after %v: %v", time.Since(began), err)
					return
				}
				writes.Add(160)
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()

	rev := startServer(t, withPersistence(t.TempDir()))
	// The replica loads the RDB under its engine lock, a pause of seconds
	// for a million keys in which it answers nobody (Redis answers
	// -LOADING meanwhile): a read timeout longer than that.
	replica := redis.NewClient(&redis.Options{Addr: rev.Addr(), ReadTimeout: time.Minute})
	defer replica.Close()
	host, port, _ := net.SplitHostPort(masterAddr)
	attach := time.Now()
	if err := replica.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the replica to load the master's RDB", func() bool {
		return infoValue(t, replica, "replication", "master_link_status") == "up"
	})
	loaded := time.Since(attach)
	before := writes.Load()
	waitFor(t, 10*time.Second, "writes to go on after the sync", func() bool { return writes.Load() > before+1000 })
	stop.Store(true)
	wg.Wait()
	cut := time.Now()
	// What was written during the load is applied now: slower than
	// waitReplicaInSync allows on a shared machine.
	waitFor(t, 3*time.Minute, "the replica to catch up", func() bool {
		return infoValue(t, master, "replication", "master_repl_offset") ==
			infoValue(t, replica, "replication", "slave_repl_offset")
	})
	t.Logf("full sync of %d keys under writes: link up %v after REPLICAOF; in sync %v after the writes stopped; %d writes",
		migrateKeys, loaded.Round(time.Millisecond), time.Since(cut).Round(time.Millisecond), writes.Load())
	// A link lost during the load shows as a second sync, full or partial.
	if full, partial := infoInt(t, master, "stats", "sync_full"), infoInt(t, master, "stats", "sync_partial_ok"); full != 1 || partial != 0 {
		t.Errorf("sync_full %d, sync_partial_ok %d: the link was lost during the load", full, partial)
	}

	if got := replica.Do(ctx, "REPLICAOF", "NO", "ONE").Val(); got != "OK" {
		t.Fatalf("REPLICAOF NO ONE: %v", got)
	}
	compareKeyspaces(t, master, replica)

	// The application, pointed at Revolver now.
	if got, want := replica.Incr(ctx, "counter:1").Val(), master.Incr(ctx, "counter:1").Val(); got != want || got < 2 {
		t.Errorf("INCR on the promoted replica: %d, on the old master %d", got, want)
	}
	if err := replica.HSet(ctx, "hash:1", "d", "new").Err(); err != nil {
		t.Errorf("HSET on the promoted replica: %v", err)
	}
}

// compareKeyspaces reads every key of database 0 on both servers, a batch
// at a time in pipelines, and fails at the first that differs: its value by
// its type (sets and hashes as sorted members), and its deadline.
func compareKeyspaces(t *testing.T, want, got *redis.Client) {
	t.Helper()
	if w, g := want.DBSize(ctx).Val(), got.DBSize(ctx).Val(); w != g {
		t.Fatalf("DBSIZE: old master %d, Revolver %d", w, g)
	}
	var cursor uint64
	n := 0
	for {
		keys, next, err := want.Scan(ctx, cursor, "*", 5000).Result()
		if err != nil {
			t.Fatal(err)
		}
		w, g := readKeys(t, want, keys), readKeys(t, got, keys)
		for i, k := range keys {
			if w[i] != g[i] {
				t.Fatalf("key %s: old master %s, Revolver %s", k, w[i], g[i])
			}
		}
		n += len(keys)
		if cursor = next; cursor == 0 {
			break
		}
	}
	if n < migrateKeys/2 {
		t.Fatalf("compared only %d keys", n)
	}
}

// readKeys renders keys' values and deadlines, pipelined.
func readKeys(t *testing.T, c *redis.Client, keys []string) []string {
	t.Helper()
	p := c.Pipeline()
	vals := make([]redis.Cmder, len(keys))
	dls := make([]*redis.DurationCmd, len(keys))
	for i, k := range keys {
		switch strings.SplitN(k, ":", 2)[0] {
		case "hash":
			vals[i] = p.HGetAll(ctx, k)
		case "list":
			vals[i] = p.LRange(ctx, k, 0, -1)
		case "set":
			vals[i] = p.SMembers(ctx, k)
		case "zset":
			vals[i] = p.ZRangeWithScores(ctx, k, 0, -1)
		default:
			vals[i] = p.Get(ctx, k)
		}
		dls[i] = p.PExpireTime(ctx, k)
	}
	if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	out := make([]string, len(keys))
	for i, v := range vals {
		var s string
		switch v := v.(type) {
		case *redis.MapStringStringCmd:
			var fields []string
			for f, x := range v.Val() {
				fields = append(fields, f+"="+x)
			}
			sort.Strings(fields)
			s = fmt.Sprint(fields)
		case *redis.StringSliceCmd:
			members := v.Val()
			if strings.HasPrefix(keys[i], "set:") {
				members = slices.Sorted(slices.Values(members))
			}
			s = fmt.Sprint(members)
		case *redis.ZSliceCmd:
			s = fmt.Sprint(v.Val())
		case *redis.StringCmd:
			s = v.Val()
		}
		out[i] = s + " pexpiretime=" + fmt.Sprint(dls[i].Val())
	}
	return out
}
