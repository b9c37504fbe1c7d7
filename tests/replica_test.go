package tests

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// infoValue reads one field of an INFO section.
func infoValue(t *testing.T, c *redis.Client, section, field string) string {
	t.Helper()
	info, err := c.Info(ctx, section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// waitReplicaInSync waits until the replica's link is up and it has
// applied the master's stream up to the master's offset.
func waitReplicaInSync(t *testing.T, master, replica *redis.Client) {
	t.Helper()
	waitFor(t, 30*time.Second, "the replica to catch up", func() bool {
		if infoValue(t, replica, "replication", "master_link_status") != "up" {
			return false
		}
		return infoValue(t, master, "replication", "master_repl_offset") ==
			infoValue(t, replica, "replication", "slave_repl_offset")
	})
}

// TestReplicaOfRedisMaster attaches Revolver to a redis-server master
// (disk-based and diskless transfers): the full sync brings every type,
// the stream keeps it equal, a dropped link continues without a full sync,
// the replica refuses writes, and REPLICAOF NO ONE promotes it.
func TestReplicaOfRedisMaster(t *testing.T) {
	for _, diskless := range []string{"no", "yes"} {
		if testing.Short() && diskless == "no" {
			continue // CI's race run takes one transfer; its plain run both
		}
		t.Run("diskless-"+diskless, func(t *testing.T) {
			masterAddr := startRealRedis(t, "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0",
				"--repl-backlog-size", "64mb")
			master := goRedis(t, masterAddr, 2)
			populateAllTypes(t, masterAddr, 1)
			if err := master.FunctionLoad(ctx, "#!lua name=replib\nredis.register_function('one', function() return 1 end)").Err(); err != nil {
				t.Fatal(err)
			}

			rev := startServer(t)
			replica := goRedis(t, rev.Addr(), 2)
			host, port, _ := net.SplitHostPort(masterAddr)
			if got := replica.Do(ctx, "REPLICAOF", host, port).Val(); got != "OK" {
				t.Fatalf("REPLICAOF: %v", got)
			}
			if got := replica.Do(ctx, "REPLICAOF", host, port).Val(); got != "OK Already connected to specified master" {
				t.Fatalf("REPLICAOF again: %v", got)
			}
			waitReplicaInSync(t, master, replica)
			if want, got := replicaDump(t, masterAddr), replicaDump(t, rev.Addr()); want != got {
				t.Fatalf("after the full sync:\n%s", firstDiff(want, got))
			}
			if got := replica.FCall(ctx, "one", nil).Val(); got != int64(1) {
				t.Errorf("the master's function on the replica: %v", got)
			}

			// The stream: writes of every kind, transactions, scripts,
			// other databases.
			populateAllTypes(t, masterAddr, 2)
			master.Eval(ctx, "redis.call('SET', KEYS[1], 'from-script'); redis.call('INCR', KEYS[2])", []string{"sk", "sn"})
			waitReplicaInSync(t, master, replica)
			if want, got := replicaDump(t, masterAddr), replicaDump(t, rev.Addr()); want != got {
				t.Fatalf("after the stream:\n%s", firstDiff(want, got))
			}

			// A dropped link continues where it was: no second full sync.
			fullBefore := infoInt(t, master, "stats", "sync_full")
			partialBefore := infoInt(t, master, "stats", "sync_partial_ok")
			if err := master.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
				t.Fatal(err)
			}
			populateAllTypes(t, masterAddr, 3)
			waitReplicaInSync(t, master, replica)
			if want, got := replicaDump(t, masterAddr), replicaDump(t, rev.Addr()); want != got {
				t.Fatalf("after the partial resync:\n%s", firstDiff(want, got))
			}
			if n := infoInt(t, master, "stats", "sync_full"); n != fullBefore {
				t.Errorf("the link's loss cost a full sync (%d, was %d)", n, fullBefore)
			}
			if n := infoInt(t, master, "stats", "sync_partial_ok"); n != partialBefore+1 {
				t.Errorf("sync_partial_ok %d, was %d", n, partialBefore)
			}

			// A read-only replica.
			if err := replica.Set(ctx, "k", "v", 0).Err(); err == nil ||
				err.Error() != "READONLY You can't write against a read only replica." {
				t.Errorf("SET on the replica: %v", err)
			}
			role := replica.Do(ctx, "ROLE").Val().([]any)
			if len(role) != 5 || role[0] != "slave" || role[1] != host || role[3] != "connected" {
				t.Errorf("ROLE: %v", role)
			}
			if got := replica.Do(ctx, "CLIENT", "LIST", "TYPE", "master").Val().(string); !strings.Contains(got, "flags=M") {
				t.Errorf("CLIENT LIST TYPE master: %q", got)
			}

			// Promotion.
			if got := replica.Do(ctx, "REPLICAOF", "NO", "ONE").Val(); got != "OK" {
				t.Fatalf("REPLICAOF NO ONE: %v", got)
			}
			if err := replica.Set(ctx, "k", "v", 0).Err(); err != nil {
				t.Errorf("SET after promotion: %v", err)
			}
			if role := replica.Do(ctx, "ROLE").Val().([]any); role[0] != "master" {
				t.Errorf("ROLE after promotion: %v", role)
			}
			if got := infoValue(t, replica, "replication", "master_link_status"); got != "" {
				t.Errorf("a master shows master_link_status %q", got)
			}
		})
	}
}

// seenTime is a stream consumer's last-seen time, which a replica sets
// from its own clock when it applies the master's XCLAIM (Redis's too).
var seenTime = regexp.MustCompile(`seen-time:\d+`)

// replicaDump is dumpKeyspace with what a replica legitimately holds
// differently left out.
func replicaDump(t *testing.T, addr string) string {
	t.Helper()
	// Deadlines are absolute on both (PEXPIREAT, SET PXAT, the RDB's), so
	// they compare exactly, however far apart the two are read.
	dump := dumpKeyspaceWith(t, addr, func(c *redis.Client, k string) string {
		return strconv.FormatInt(c.Do(ctx, "PEXPIRETIME", k).Val().(int64), 10)
	})
	return seenTime.ReplaceAllString(dump, "seen-time:*")
}

// firstDiff shows where two dumps part.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			at := 0
			for at < min(len(a), len(b)) && a[at] == b[at] {
				at++
			}
			return "master:  " + around(a, at) + "\nreplica: " + around(b, at) + "\n(" + strconv.Itoa(len(w)) +
				" vs " + strconv.Itoa(len(g)) + " keys)"
		}
	}
	return ""
}

// around shows s from its start and around byte at, where it differs.
func around(s string, at int) string {
	if len(s) <= 300 {
		return s
	}
	from := max(at-100, 120)
	if from <= 120 {
		return s[:min(len(s), 300)] + "..."
	}
	return s[:120] + " ... " + s[from:min(len(s), at+100)] + "..."
}
