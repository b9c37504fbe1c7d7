package tests

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// stoppableReplica starts a redis-server replica of masterAddr and returns
// its address and a function that stops (SIGSTOP) or resumes it.
func stoppableReplica(t *testing.T, masterAddr string) (string, func(stop bool)) {
	t.Helper()
	host, port, _ := net.SplitHostPort(masterAddr)
	addr := startRealRedis(t, "--replicaof", host, port)
	c := goRedis(t, addr, 2)
	pid := int(infoInt(t, c, "server", "process_id"))
	signal := func(stop bool) {
		sig := syscall.SIGCONT
		if stop {
			sig = syscall.SIGSTOP
		}
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	return addr, signal
}

// TestWaitReplicas: WAIT counts the replicas that acknowledged the
// client's last write, asking them at once (REPLCONF GETACK); it times out
// with the count when too few do, 0 with the replica stopped.
func TestWaitReplicas(t *testing.T) {
	rev := startServer(t)
	master := goRedis(t, rev.Addr(), 2)
	c := dialRaw(t, rev.Addr())
	c.do("SET", "k", "0")
	if v := c.do("WAIT", "1", "50"); v.String() != "(integer) 0" {
		t.Errorf("WAIT 1 50 without replicas: %s", v)
	}

	replicaAddr, signal := stoppableReplica(t, rev.Addr())
	waitReplicaInSync(t, master, goRedis(t, replicaAddr, 2))
	for i := 1; i <= 5; i++ {
		c.do("SET", "k", strconv.Itoa(i))
		start := time.Now()
		if v := c.do("WAIT", "1", "0"); v.String() != "(integer) 1" {
			t.Fatalf("WAIT 1 0 after a write: %s", v)
		}
		// The replica answers GETACK at once; its own ACK comes each second.
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("WAIT 1 0 took %v", d)
		}
	}
	if v := c.do("WAIT", "0", "0"); v.String() != "(integer) 1" {
		t.Errorf("WAIT 0 0: %s", v)
	}
	start := time.Now()
	if v := c.do("WAIT", "2", "100"); v.String() != "(integer) 1" {
		t.Errorf("WAIT 2 100: %s", v)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("WAIT 2 100 answered after %v", d)
	}

	signal(true)
	c.do("SET", "k", "stopped")
	start = time.Now()
	if v := c.do("WAIT", "1", "200"); v.String() != "(integer) 0" {
		t.Errorf("WAIT 1 200 with the replica stopped: %s", v)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("WAIT 1 200 answered after %v", d)
	}
	// A WAIT that is waiting ends when the replica comes back.
	c.send("WAIT", "1", "0")
	waitFor(t, 5*time.Second, "WAIT to block", func() bool { return infoValue(t, master, "clients", "blocked_clients") == "1" })
	signal(false)
	if v := c.read(); v.String() != "(integer) 1" {
		t.Errorf("WAIT 1 0 once the replica resumed: %s", v)
	}
}

// TestReplOutputLimit: a stopped replica whose output passes
// client-output-buffer-limit replica is dropped, and syncs again when it
// comes back.
func TestReplOutputLimit(t *testing.T) {
	rev := startServer(t, withConfig("client-output-buffer-limit", "replica 1mb 256kb 1"))
	master := goRedis(t, rev.Addr(), 2)
	replicaAddr, signal := stoppableReplica(t, rev.Addr())
	replica := goRedis(t, replicaAddr, 2)
	waitReplicaInSync(t, master, replica)
	signal(true)
	value := strings.Repeat("x", 64<<10)
	waitFor(t, 20*time.Second, "the master to drop the stopped replica", func() bool {
		p := master.Pipeline()
		for i := 0; i < 16; i++ {
			p.Set(ctx, "big"+strconv.Itoa(i), value, 0)
		}
		p.Exec(ctx)
		return infoValue(t, master, "replication", "connected_slaves") == "0"
	})
	signal(false)
	waitReplicaInSync(t, master, replica)
	assertSameKeys(t, "after the replica came back", rev.Addr(), replicaAddr)
}

// TestMinReplicasToWrite: with min-replicas-to-write, writes (commands,
// scripts) are refused while too few replicas acknowledged within
// min-replicas-max-lag, and accepted again when the replica is back.
func TestMinReplicasToWrite(t *testing.T) {
	rev := startServer(t)
	master := goRedis(t, rev.Addr(), 2)
	const noReplicas = "NOREPLICAS Not enough good replicas to write."
	for _, kv := range [][2]string{{"min-replicas-to-write", "1"}, {"min-replicas-max-lag", "2"}} {
		if err := master.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := master.Set(ctx, "k", "v", 0).Err(); err == nil || err.Error() != noReplicas {
		t.Errorf("SET without replicas: %v", err)
	}
	if err := master.Get(ctx, "k").Err(); err != redis.Nil {
		t.Errorf("GET without replicas: %v", err)
	}
	replicaAddr, signal := stoppableReplica(t, rev.Addr())
	waitFor(t, 10*time.Second, "writes to be accepted", func() bool { return master.Set(ctx, "k", "v", 0).Err() == nil })
	if got := infoValue(t, master, "replication", "min_slaves_good_slaves"); got != "1" {
		t.Errorf("min_slaves_good_slaves %q", got)
	}

	signal(true) // its acknowledgements stop: past the lag, writes are refused
	waitFor(t, 10*time.Second, "writes to be refused", func() bool {
		err := master.Set(ctx, "k", "v2", 0).Err()
		return err != nil && err.Error() == noReplicas
	})
	if err := master.Eval(ctx, "return redis.call('SET', KEYS[1], 'x')", []string{"k"}).Err(); err == nil ||
		!strings.Contains(err.Error(), "NOREPLICAS") {
		t.Errorf("a script's write: %v", err)
	}
	if err := master.Eval(ctx, "#!lua\nreturn redis.call('SET', KEYS[1], 'x')", []string{"k"}).Err(); err == nil ||
		err.Error() != noReplicas {
		t.Errorf("a script with flags: %v", err)
	}
	if got, want := master.Eval(ctx, "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])", []string{"k"}).Val(),
		master.Get(ctx, "k").Val(); got != want {
		t.Errorf("a read-only script: %v, want %v", got, want)
	}
	signal(false)
	waitFor(t, 10*time.Second, "writes to be accepted again", func() bool { return master.Set(ctx, "k", "v3", 0).Err() == nil })
	waitReplicaInSync(t, master, goRedis(t, replicaAddr, 2))
	if got := goRedis(t, replicaAddr, 2).Get(ctx, "k").Val(); got != "v3" {
		t.Errorf("the replica has %q", got)
	}
}

// TestReplBacklog: the backlog exists once a replica attached, keeps the
// last repl-backlog-size bytes (resized by CONFIG SET), serves PSYNC from
// what it holds only, PINGs replicas every repl-ping-replica-period, drops
// replicas silent past repl-timeout, and is freed repl-backlog-ttl after
// the last replica left, with a new ID.
func TestReplBacklog(t *testing.T) {
	rev := startServer(t, withConfig("repl-diskless-sync", "no"))
	master := goRedis(t, rev.Addr(), 2)
	master.Set(ctx, "k", "v", 0)
	if got := infoValue(t, master, "replication", "repl_backlog_active"); got != "0" {
		t.Errorf("repl_backlog_active %s before any replica", got)
	}
	if n := infoInt(t, master, "replication", "master_repl_offset"); n != 0 {
		t.Errorf("the offset moved without a backlog: %d", n)
	}

	conn, rd := dialReplica(t, rev.Addr(), "capa", "psync2")
	fmt.Fprintf(conn, "PSYNC ? -1\r\n")
	f := strings.Fields(readLine(t, rd))
	size, _ := strconv.Atoi(strings.TrimPrefix(readLine(t, rd), "$"))
	readN(t, rd, size)
	replID := f[1]
	if err := master.ConfigSet(ctx, "repl-backlog-size", "16kb").Err(); err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("v", 1000)
	for i := 0; i < 40; i++ {
		master.Set(ctx, "key"+strconv.Itoa(i), value, 0)
	}
	offset := infoInt(t, master, "replication", "master_repl_offset")
	if n := infoInt(t, master, "replication", "repl_backlog_histlen"); n != 16384 {
		t.Errorf("repl_backlog_histlen %d, want 16384", n)
	}
	if n := infoInt(t, master, "replication", "repl_backlog_first_byte_offset"); n != offset-16384+1 {
		t.Errorf("repl_backlog_first_byte_offset %d, want %d", n, offset-16384+1)
	}
	stream := readN(t, rd, int(offset))
	// The replica acknowledges, so that repl-timeout spares it below.
	fmt.Fprintf(conn, "REPLCONF ACK %d\r\n", offset)

	// PSYNC from what the backlog holds: its bytes; from before: a full sync.
	for _, from := range []int64{offset - 16384 + 1, offset - 100, offset + 1} {
		c2, rd2 := dialReplica(t, rev.Addr(), "capa", "psync2", "listening-port", "1")
		fmt.Fprintf(c2, "PSYNC %s %d\r\n", replID, from)
		if line := readLine(t, rd2); line != "+CONTINUE "+replID {
			t.Fatalf("PSYNC from %d: %q", from, line)
		}
		if want, got := stream[from-1:], readN(t, rd2, int(offset-from+1)); got != want {
			t.Errorf("PSYNC from %d: %q..., want %q...", from, got[:min(len(got), 40)], want[:min(len(want), 40)])
		}
		c2.Close()
	}
	c2, rd2 := dialReplica(t, rev.Addr())
	fmt.Fprintf(c2, "PSYNC %s %d\r\n", replID, offset-16384)
	if line := readLine(t, rd2); !strings.HasPrefix(line, "+FULLRESYNC") {
		t.Errorf("PSYNC from before the backlog: %q", line)
	}
	c2.Close()

	// PING every repl-ping-replica-period, into the stream.
	master.ConfigSet(ctx, "repl-ping-replica-period", "1")
	for {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if l := readLine(t, rd); l == "PING" {
			break
		}
	}
	// A replica that stops acknowledging is dropped after repl-timeout.
	master.ConfigSet(ctx, "repl-timeout", "1")
	waitFor(t, 10*time.Second, "the silent replica to be dropped", func() bool {
		return infoValue(t, master, "replication", "connected_slaves") == "0"
	})

	// Without replicas for repl-backlog-ttl, the backlog goes, with the ID.
	master.ConfigSet(ctx, "repl-backlog-ttl", "1")
	waitFor(t, 10*time.Second, "the backlog to be freed", func() bool {
		return infoValue(t, master, "replication", "repl_backlog_active") == "0"
	})
	if got := infoValue(t, master, "replication", "master_replid"); got == replID {
		t.Errorf("the ID stayed %s once the backlog went", got)
	}
	before := infoInt(t, master, "replication", "master_repl_offset")
	master.Set(ctx, "k", "again", 0)
	if n := infoInt(t, master, "replication", "master_repl_offset"); n != before {
		t.Errorf("the offset moved from %d to %d without a backlog", before, n)
	}
}
