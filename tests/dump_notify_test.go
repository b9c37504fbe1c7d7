package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// dumpOfV is redis-server's DUMP of the string "v".
const dumpOfV = `"\x00\x01v\x0a\x00\x91\x08\xce\xb2\x198\x8a\xce"`

var dumpNotifyKEA = []notifyCase{
	{name: "restore", cmds: []string{"RESTORE k 0 " + dumpOfV, "RESTORE k 0 " + dumpOfV},
		want: []string{"restore k"}},
	{name: "restore-replace", setup: []string{"SET k old"}, cmds: []string{"RESTORE k 0 " + dumpOfV + " REPLACE"},
		want: []string{"restore k"}},
	{name: "restore-ttl", cmds: []string{"RESTORE k 100000 " + dumpOfV},
		want: []string{"restore k"}},
	{name: "restore-past-absttl", setup: []string{"SET k old"},
		cmds: []string{"RESTORE k 1 " + dumpOfV + " ABSTTL REPLACE", "RESTORE j 1 " + dumpOfV + " ABSTTL"},
		want: []string{"del k"}},
	{name: "restore-errors", setup: []string{"SET k old"},
		cmds: []string{"RESTORE k 0 " + dumpOfV, "RESTORE j 0 bad", "RESTORE j -1 " + dumpOfV},
		want: nil},
}

var dumpNotifyNew = []notifyCase{
	{name: "restore-new", setup: []string{"SET old v"},
		cmds: []string{"RESTORE k 0 " + dumpOfV, "RESTORE old 0 " + dumpOfV + " REPLACE"},
		want: []string{"new k", "restore k", "new old", "restore old"}},
}

// TestDumpNotifications checks RESTORE's keyspace events on both servers.
func TestDumpNotifications(t *testing.T) {
	testNotifyCases(t, dumpNotifyKEA, dumpNotifyNew)
}

// dumpOfListAB is redis-server's DUMP of the list [a b].
const dumpOfListAB = "\x12\x01\x02\x0d\x0d\x00\x00\x00\x02\x00\x81a\x02\x81b\x02\xff\x0a\x00h\xeb\x0a\x89\x13A\xbb\xb1"

// TestRestoreWakesAndTouches: a restored list serves a client blocked on
// its key, and RESTORE invalidates a transaction watching it, on both
// servers.
func TestRestoreWakesAndTouches(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		c := goRedis(t, addr, 2)
		c.Del(ctx, "l", "w")
		got := make(chan []string, 1)
		blocked := goRedis(t, addr, 2)
		go func() { got <- blocked.BLPop(ctx, 0, "l").Val() }()
		waitFor(t, 5*time.Second, "the client to block", func() bool {
			return strings.Contains(c.ClientList(ctx).Val(), "cmd=blpop")
		})
		if err := c.Restore(ctx, "l", 0, dumpOfListAB).Err(); err != nil {
			t.Fatal(err)
		}
		if v := <-got; strings.Join(v, ",") != "l,a" {
			t.Errorf("BLPOP got %q", v)
		}

		w := goRedis(t, addr, 2)
		err := w.Watch(ctx, func(tx *redis.Tx) error {
			if err := c.Restore(ctx, "w", 0, dumpOfListAB).Err(); err != nil {
				return err
			}
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, "x"); return nil })
			return err
		}, "w")
		if err != redis.TxFailedErr {
			t.Errorf("a transaction watching the restored key: %v", err)
		}
		c.Del(ctx, "l", "w")
	})
}

// TestRestoreIdleTime: RESTORE ... IDLETIME sets what OBJECT IDLETIME
// reports, on both servers.
func TestRestoreIdleTime(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		c := goRedis(t, addr, 2)
		c.Del(ctx, "idle")
		if err := c.Do(ctx, "RESTORE", "idle", 0, dumpOfListAB, "IDLETIME", 1000).Err(); err != nil {
			t.Fatal(err)
		}
		if idle := c.ObjectIdleTime(ctx, "idle").Val(); idle < 1000*time.Second || idle > 1002*time.Second {
			t.Errorf("OBJECT IDLETIME %v", idle)
		}
		c.Del(ctx, "idle")
	})
}

// TestRestoreFreq: under an LFU policy RESTORE's FREQ becomes the key's
// access counter, which OBJECT FREQ reports.
func TestRestoreFreq(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		c := goRedis(t, addr, 2)
		policy := c.ConfigGet(ctx, "maxmemory-policy").Val()["maxmemory-policy"]
		c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lfu")
		defer c.ConfigSet(ctx, "maxmemory-policy", policy)
		c.Del(ctx, "freq")
		if err := c.Do(ctx, "RESTORE", "freq", 0, dumpOfListAB, "FREQ", 100).Err(); err != nil {
			t.Fatal(err)
		}
		if f := c.ObjectFreq(ctx, "freq").Val(); f != 100 {
			t.Errorf("OBJECT FREQ %d, want 100", f)
		}
		c.Del(ctx, "freq")
	})
}
