package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startSentinel runs a redis-sentinel monitoring mymaster at masterAddr
// (quorum 2, down after 1 s), skipping loudly without redis-sentinel
// (failing when REVOLVER_REQUIRE_REDIS=1).
func startSentinel(t *testing.T, masterAddr string) string {
	t.Helper()
	bin := redisTool(t, "redis-sentinel")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	host, mport := hostPort(t, masterAddr)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor mymaster %s %s 2\n"+
		"sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 10000\n"+
		"sentinel parallel-syncs mymaster 1\n", port, dir, host, mport)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	waitFor(t, 10*time.Second, "redis-sentinel to listen", func() bool { return c.Ping(ctx).Err() == nil })
	return addr
}

// TestSentinelFailsOverRevolver: three Sentinels watch a Revolver master and
// two Revolver replicas; go-redis's failover client writes, each write
// followed by WAIT 1; the master is killed with SIGKILL. A replica is
// promoted, the other follows it, writes resume through the client, and
// every write a replica acknowledged is on the new master.
func TestSentinelFailsOverRevolver(t *testing.T) {
	long(t)
	master := startProcess(t, t.TempDir(), "--persistence", "off")
	replicas := []*process{startProcess(t, t.TempDir(), "--persistence", "off"),
		startProcess(t, t.TempDir(), "--persistence", "off")}
	host, port := hostPort(t, master.addr)
	for _, r := range replicas {
		c := redis.NewClient(&redis.Options{Addr: r.addr})
		if err := c.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
			t.Fatal(err)
		}
		mc := redis.NewClient(&redis.Options{Addr: master.addr})
		waitReplicaInSync(t, mc, c)
		mc.Close()
		c.Close()
	}
	var sentinels []string
	for range 3 {
		sentinels = append(sentinels, startSentinel(t, master.addr))
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
	defer sc.Close()
	waitFor(t, 20*time.Second, "the Sentinels to find each other and the replicas", func() bool {
		m, err := sc.Master(ctx, "mymaster").Result()
		if err != nil || m["num-other-sentinels"] != "2" {
			return false
		}
		rs, err := sc.Replicas(ctx, "mymaster").Result()
		return err == nil && len(rs) == 2
	})

	client := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: sentinels,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1})
	defer client.Close()
	var mu sync.Mutex
	var acked []int
	var killedAt, resumedAt time.Time
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := client.Set(wctx, "w:"+strconv.Itoa(i), i, 0).Err()
			var n int64
			if err == nil {
				n, err = client.Do(wctx, "WAIT", 1, 500).Int64()
			}
			cancel()
			mu.Lock()
			if err == nil && n >= 1 {
				acked = append(acked, i)
				if !killedAt.IsZero() && resumedAt.IsZero() {
					resumedAt = time.Now()
				}
			}
			mu.Unlock()
			if err != nil {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	time.Sleep(time.Second)
	mu.Lock()
	before := len(acked)
	killedAt = time.Now()
	mu.Unlock()
	if before == 0 {
		t.Fatal("no write was acknowledged before the kill")
	}
	master.kill9(t)
	waitFor(t, 30*time.Second, "writes to resume on a promoted replica", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !resumedAt.IsZero()
	})
	time.Sleep(500 * time.Millisecond)
	close(stop)
	<-done
	t.Logf("%d writes acknowledged before the kill; writes resumed %v after it; %d acknowledged in all",
		before, resumedAt.Sub(killedAt).Round(time.Millisecond), len(acked))

	addr, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
	if err != nil {
		t.Fatal(err)
	}
	newMaster := redis.NewClient(&redis.Options{Addr: addr[0] + ":" + addr[1]})
	defer newMaster.Close()
	if role := newMaster.Do(ctx, "ROLE").Val().([]any); role[0] != "master" {
		t.Fatalf("the Sentinels' master %v says ROLE %v", addr, role)
	}
	for _, i := range acked {
		if v, err := newMaster.Get(ctx, "w:"+strconv.Itoa(i)).Result(); err != nil || v != strconv.Itoa(i) {
			t.Fatalf("acknowledged write w:%d lost after the failover (%q, %v)", i, v, err)
		}
	}
	// The other replica follows the new master.
	for _, r := range replicas {
		if r.addr == addr[0]+":"+addr[1] {
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: r.addr})
		waitFor(t, 20*time.Second, "the other replica to follow the new master", func() bool {
			info := infoValue(t, c, "replication", "master_port")
			return info == addr[1] && infoValue(t, c, "replication", "master_link_status") == "up"
		})
		c.Close()
	}
}
