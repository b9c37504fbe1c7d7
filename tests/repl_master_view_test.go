package tests

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestReplFullSyncUnderWrites: a master with a store writes a full sync's
// RDB from a view of the store as of the sync's offset, off the engine
// lock, while clients go on writing. Commands that are not idempotent
// (INCR, LPUSH, APPEND, HINCRBY) run throughout: a view holding one change
// too many or too few would leave the replica off by it once the stream
// queued behind the RDB is applied.
func TestReplFullSyncUnderWrites(t *testing.T) {
	srv := startServer(t, withPersistence(t.TempDir()), withConfig("repl-diskless-sync", "no"))
	master := goRedis(t, srv.Addr(), 2)
	pipe := master.Pipeline()
	for i := range 20000 {
		pipe.Set(ctx, fmt.Sprintf("key:%05d", i), fmt.Sprintf("value-%d", i), 0)
		if i%1000 == 999 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			defer c.Close()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for !stop.Load() {
				p := c.Pipeline()
				for range 16 {
					n := r.IntN(200)
					p.Incr(ctx, fmt.Sprintf("counter:%d", n))
					p.LPush(ctx, fmt.Sprintf("list:%d", n%20), n)
					p.Append(ctx, fmt.Sprintf("key:%05d", r.IntN(20000)), "+")
					p.HIncrBy(ctx, "hash", fmt.Sprint(n), 1)
				}
				if _, err := p.Exec(ctx); err != nil {
					t.Error(err)
					return
				}
				writes.Add(64)
			}
		}()
	}

	rep := startServer(t)
	replica := goRedis(t, rep.Addr(), 2)
	before := writes.Load()
	replicaOf(t, replica, srv.Addr())
	waitFor(t, 30e9, "the replica to load the master's RDB", func() bool {
		return infoValue(t, replica, "replication", "master_link_status") == "up"
	})
	stop.Store(true)
	wg.Wait()
	if writes.Load() == before {
		t.Fatal("no write ran while the replica synced")
	}
	waitReplicaInSync(t, master, replica)
	assertSameKeys(t, "after a full sync taken under writes", srv.Addr(), rep.Addr())
	if n := infoInt(t, master, "stats", "sync_full"); n != 1 {
		t.Errorf("sync_full %d", n)
	}
}
