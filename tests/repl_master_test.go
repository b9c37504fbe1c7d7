package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// addNativeKeys writes one key of each of Revolver's own families in
// database 5, which dumpKeyspace does not look at.
func addNativeKeys(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: 5})
	defer c.Close()
	for _, cmd := range [][]any{
		{"DELAY.ADD", "timers", "t1", "IN", "3600000", "PAYLOAD", "bill"},
		{"QUEUE.PUSH", "jobs", "job-1", "ID", "j1"},
		{"NUMPOOL.EVENT", "pool", "add", "1001"},
		{"ROOM.PUB", "room", "hello"},
		{"SET", "plain", "v"},
	} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
}

// nativeDump shows the native keys addNativeKeys writes: their DUMP
// payloads, except the pool's, whose token clock a load raises by a block
// (so that no token is handed out twice): its numbers and states instead.
func nativeDump(t *testing.T, addr string) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: 5})
	defer c.Close()
	var out []string
	for _, k := range []string{"timers", "jobs", "room", "plain"} {
		v, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		out = append(out, k+"="+strconv.Quote(v))
	}
	for _, cmd := range [][]any{{"NUMPOOL.INFO", "pool"}, {"NUMPOOL.LIST", "pool"}} {
		v, err := c.Do(ctx, cmd...).Result()
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		out = append(out, fmt.Sprint(cmd, v))
	}
	return strings.Join(out, "\n")
}

// assertSameKeys compares the Redis types' keys of two servers.
func assertSameKeys(t *testing.T, what, masterAddr, replicaAddr string) {
	t.Helper()
	if want, got := replicaDump(t, masterAddr), replicaDump(t, replicaAddr); want != got {
		t.Fatalf("%s:\n%s", what, firstDiff(want, got))
	}
}

// replicaOf points the server at addr with REPLICAOF.
func replicaOf(t *testing.T, c *redis.Client, addr string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	if err := c.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestReplRedisReplicaOfRevolver attaches redis-server to a Revolver
// master, with both transfer forms and both ways a redis-server loads them:
// the full sync brings the Redis types (the native ones are left out and
// counted), the stream keeps the replica equal, and a killed link
// continues with a partial resync.
func TestReplRedisReplicaOfRevolver(t *testing.T) {
	for _, tc := range []struct {
		disklessSync, disklessLoad string
		store                      bool // the RDB is written from a view of the store
	}{
		{"yes", "disabled", false}, {"no", "disabled", true}, {"yes", "swapdb", true},
	} {
		if testing.Short() && (!tc.store || tc.disklessLoad == "swapdb") {
			continue // CI's race run takes one pairing; its plain run all of them
		}
		t.Run(fmt.Sprintf("diskless-sync-%s-load-%s-store-%v", tc.disklessSync, tc.disklessLoad, tc.store), func(t *testing.T) {
			opts := []serverOpt{withConfig("repl-diskless-sync", tc.disklessSync)}
			if tc.store {
				opts = append(opts, withPersistence(t.TempDir()))
			}
			rev := startServer(t, opts...)
			master := goRedis(t, rev.Addr(), 2)
			populateAllTypes(t, rev.Addr(), 1)
			addNativeKeys(t, rev.Addr())
			if err := master.FunctionLoad(ctx, "#!lua name=replib\nredis.register_function{function_name='one', "+
				"callback=function() return 1 end, flags={'no-writes'}}").Err(); err != nil {
				t.Fatal(err)
			}
			host, port, _ := net.SplitHostPort(rev.Addr())
			replicaAddr := startRealRedis(t, "--replicaof", host, port, "--repl-diskless-load", tc.disklessLoad)
			replica := goRedis(t, replicaAddr, 2)
			waitReplicaInSync(t, master, replica)
			assertSameKeys(t, "after the full sync", rev.Addr(), replicaAddr)
			if got, err := replica.FCallRO(ctx, "one", nil).Result(); got != int64(1) {
				t.Errorf("the master's function on the replica: %v %v", got, err)
			}
			// Native keys are skipped for a redis-server, never a broken link.
			if n := infoInt(t, master, "replication", "rdb_skipped_native_keys"); n != 4 {
				t.Errorf("rdb_skipped_native_keys %d, want 4", n)
			}
			replica5 := redis.NewClient(&redis.Options{Addr: replicaAddr, DB: 5})
			defer replica5.Close()
			if keys := replica5.Keys(ctx, "*").Val(); fmt.Sprint(keys) != "[plain]" {
				t.Errorf("database 5 on the replica: %v", keys)
			}

			// What the master shows of its replica.
			rport := strings.Split(replicaAddr, ":")[1]
			if got := infoValue(t, master, "replication", "slave0"); !strings.HasPrefix(got, "ip=127.0.0.1,port="+rport+",state=online,offset=") {
				t.Errorf("slave0: %q", got)
			}
			if got := infoValue(t, master, "replication", "connected_slaves"); got != "1" {
				t.Errorf("connected_slaves %s", got)
			}
			if got := master.Do(ctx, "CLIENT", "LIST", "TYPE", "replica").Val().(string); !strings.Contains(got, "flags=S") {
				t.Errorf("CLIENT LIST TYPE replica: %q", got)
			}
			waitFor(t, 5*time.Second, "ROLE to list the replica", func() bool {
				role := master.Do(ctx, "ROLE").Val().([]any)
				replicas, _ := role[2].([]any)
				return role[0] == "master" && len(replicas) == 1 && fmt.Sprint(replicas[0].([]any)[:2]) == "[127.0.0.1 "+rport+"]"
			})

			// The stream. Revolver's own commands reach the replica as
			// ECHOs of their length: nothing it runs fails, and its
			// offset stays the master's.
			populateAllTypes(t, rev.Addr(), 2)
			waitReplicaInSync(t, master, replica)
			errorsBefore := replica.Info(ctx, "errorstats").Val()
			master5 := redis.NewClient(&redis.Options{Addr: rev.Addr(), DB: 5})
			defer master5.Close()
			for _, cmd := range [][]any{
				{"DELAY.ADD", "timers", "t2", "IN", "3600000"}, {"QUEUE.PUSH", "jobs", "job-2"},
				{"NUMPOOL.EVENT", "pool", "add", "1002"}, {"ROOM.PUB", "room", "again"},
			} {
				if err := master5.Do(ctx, cmd...).Err(); err != nil {
					t.Fatalf("%v: %v", cmd, err)
				}
			}
			waitReplicaInSync(t, master, replica)
			if got := replica.Info(ctx, "errorstats").Val(); got != errorsBefore {
				t.Errorf("the redis-server replica failed commands of the stream: %s, was %s", got, errorsBefore)
			}
			if !strings.Contains(replica.Info(ctx, "commandstats").Val(), "cmdstat_echo:calls=") {
				t.Error("Revolver's own commands did not reach the redis-server replica as ECHOs")
			}
			assertSameKeys(t, "after the stream", rev.Addr(), replicaAddr)

			// A killed link continues where it was.
			fullBefore := infoInt(t, master, "stats", "sync_full")
			partialBefore := infoInt(t, master, "stats", "sync_partial_ok")
			if n := master.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Val(); n != int64(1) {
				t.Fatalf("CLIENT KILL TYPE replica: %v", n)
			}
			populateAllTypes(t, rev.Addr(), 3)
			waitReplicaInSync(t, master, replica)
			assertSameKeys(t, "after the partial resync", rev.Addr(), replicaAddr)
			if n := infoInt(t, master, "stats", "sync_full"); n != fullBefore {
				t.Errorf("the link's loss cost a full sync (%d, was %d)", n, fullBefore)
			}
			if n := infoInt(t, master, "stats", "sync_partial_ok"); n != partialBefore+1 {
				t.Errorf("sync_partial_ok %d, was %d", n, partialBefore)
			}
		})
	}
}

// TestReplStreamRaw reads the stream as a replica would: +FULLRESYNC and
// the RDB, then the commands, SELECT first and again when the database
// changes, offsets counting every byte; PSYNC continues in the database
// the stream was in; a PSYNC the backlog cannot serve gets a full sync.
func TestReplStreamRaw(t *testing.T) {
	rev := startServer(t, withConfig("repl-diskless-sync", "no"))
	master := goRedis(t, rev.Addr(), 2)
	master.Set(ctx, "before", "1", 0)

	conn, rd := dialReplica(t, rev.Addr(), "capa", "psync2")
	fmt.Fprintf(conn, "PSYNC ? -1\r\n")
	line := readLine(t, rd)
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "+FULLRESYNC" || len(f[1]) != 40 {
		t.Fatalf("PSYNC ? -1: %q", line)
	}
	replID := f[1]
	offset, _ := strconv.ParseInt(f[2], 10, 64)
	size, err := strconv.Atoi(strings.TrimPrefix(readLine(t, rd), "$"))
	if err != nil {
		t.Fatal(err)
	}
	rdb := make([]byte, size)
	if _, err := io.ReadFull(rd, rdb); err != nil || !strings.HasPrefix(string(rdb), "REDIS0010") {
		t.Fatalf("the RDB: %q %v", rdb[:min(len(rdb), 20)], err)
	}

	master.Set(ctx, "k", "v", 0)
	db2 := redis.NewClient(&redis.Options{Addr: rev.Addr(), DB: 2})
	defer db2.Close()
	db2.RPush(ctx, "l", "a")
	want := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n" +
		"*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*3\r\n$5\r\nrpush\r\n$1\r\nl\r\n$1\r\na\r\n"
	got := readN(t, rd, len(want))
	if got != want {
		t.Fatalf("stream %q, want %q", got, want)
	}
	offset += int64(len(want))
	if n := infoInt(t, master, "replication", "master_repl_offset"); n != offset {
		t.Errorf("master_repl_offset %d, read up to %d", n, offset)
	}
	conn.Close()
	waitFor(t, 5*time.Second, "the replica to be gone", func() bool {
		return infoValue(t, master, "replication", "connected_slaves") == "0"
	})

	// Written while the replica is away: the backlog keeps it.
	db2.RPush(ctx, "l", "b")
	conn, rd = dialReplica(t, rev.Addr(), "capa", "psync2")
	fmt.Fprintf(conn, "PSYNC %s %d\r\n", replID, offset+1)
	if line := readLine(t, rd); line != "+CONTINUE "+replID {
		t.Fatalf("PSYNC continuing: %q", line)
	}
	want = "*3\r\n$5\r\nrpush\r\n$1\r\nl\r\n$1\r\nb\r\n" // still in database 2: no SELECT
	if got := readN(t, rd, len(want)); got != want {
		t.Fatalf("backlog %q, want %q", got, want)
	}
	conn.Close()

	// An offset past what the backlog holds, or another ID: a full sync.
	for _, args := range [][2]string{{replID, strconv.FormatInt(offset+1000, 10)}, {strings.Repeat("a", 40), "1"}} {
		conn, rd = dialReplica(t, rev.Addr())
		fmt.Fprintf(conn, "PSYNC %s %s\r\n", args[0], args[1])
		if line := readLine(t, rd); !strings.HasPrefix(line, "+FULLRESYNC "+replID+" ") {
			t.Errorf("PSYNC %s: %q", args, line)
		}
		conn.Close()
	}
	if n := infoInt(t, master, "stats", "sync_partial_err"); n != 2 {
		t.Errorf("sync_partial_err %d, want 2", n)
	}
	if n := infoInt(t, master, "stats", "sync_partial_ok"); n != 1 {
		t.Errorf("sync_partial_ok %d, want 1", n)
	}

	// Bad requests are errors.
	c := dialRaw(t, rev.Addr())
	if v := c.do("PSYNC", "?", "x"); v.String() != "(error) ERR value is not an integer or out of range" {
		t.Errorf("PSYNC ? x: %s", v)
	}
	if v := c.do("PSYNC", "?", "-1", "FAILOVER"); v.String() != "(error) ERR PSYNC FAILOVER can't be sent to a master." {
		t.Errorf("PSYNC FAILOVER: %s", v)
	}
	c.do("REPLCONF", "rdb-filter-only", "")
	if v := c.do("SYNC"); v.String() != "(error) ERR Filtered replica requires EOF capability" {
		t.Errorf("filtered SYNC without capa eof: %s", v)
	}
}

// dialReplica connects and announces REPLCONF options (pairs).
func dialReplica(t *testing.T, addr string, capa ...string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	rd := bufio.NewReader(conn)
	if len(capa) > 0 {
		fmt.Fprintf(conn, "REPLCONF %s\r\n", strings.Join(capa, " "))
		if line := readLine(t, rd); line != "+OK" {
			t.Fatalf("REPLCONF: %q", line)
		}
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	return conn, rd
}

func readLine(t *testing.T, rd *bufio.Reader) string {
	t.Helper()
	for {
		l, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading a line: %v", err)
		}
		if l = strings.TrimRight(l, "\r\n"); l != "" {
			return l
		}
	}
}

func readN(t *testing.T, rd *bufio.Reader, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(rd, b); err != nil {
		t.Fatalf("reading %d bytes (got %q): %v", n, b, err)
	}
	return string(b)
}

// TestReplRedisCliRDB fetches an RDB with redis-cli --rdb (SYNC with
// rdb-only, an EOF-marked transfer) and has redis-server load it; and
// follows the stream with redis-cli --replica.
func TestReplRedisCliRDB(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("SKIPPING: redis-cli not found in PATH")
	}
	for _, diskless := range []string{"yes", "no"} {
		t.Run("diskless-"+diskless, func(t *testing.T) {
			rev := startServer(t, withConfig("repl-diskless-sync", diskless))
			populateAllTypes(t, rev.Addr(), 7)
			addNativeKeys(t, rev.Addr())
			host, port, _ := net.SplitHostPort(rev.Addr())
			dir := t.TempDir()
			out, err := exec.Command(cli, "-h", host, "-p", port, "--rdb", filepath.Join(dir, "dump.rdb")).CombinedOutput()
			if err != nil {
				t.Fatalf("redis-cli --rdb: %v\n%s", err, out)
			}
			loaded := startRealRedis(t, "--dir", dir, "--dbfilename", "dump.rdb")
			assertSameKeys(t, "the RDB loaded by redis-server", rev.Addr(), loaded)
			c := goRedis(t, rev.Addr(), 2)
			waitFor(t, 5*time.Second, "the rdb-only replica to go", func() bool {
				return infoValue(t, c, "replication", "connected_slaves") == "0"
			})
		})
	}

	// --functions-rdb: an RDB of the functions only (REPLCONF
	// rdb-filter-only functions).
	rev := startServer(t)
	c := goRedis(t, rev.Addr(), 2)
	populateAllTypes(t, rev.Addr(), 8)
	if err := c.FunctionLoad(ctx, "#!lua name=fonly\nredis.register_function('f', function() return 1 end)").Err(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(rev.Addr())
	dir := t.TempDir()
	if out, err := exec.Command(cli, "-h", host, "-p", port, "--functions-rdb", filepath.Join(dir, "f.rdb")).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --functions-rdb: %v\n%s", err, out)
	}
	loaded := goRedis(t, startRealRedis(t, "--dir", dir, "--dbfilename", "f.rdb"), 2)
	if n := loaded.DBSize(ctx).Val(); n != 0 {
		t.Errorf("the functions' RDB holds %d keys", n)
	}
	if libs := loaded.FunctionList(ctx, redis.FunctionListQuery{}).Val(); len(libs) != 1 || libs[0].Name != "fonly" {
		t.Errorf("the functions' RDB holds %v", libs)
	}

	cmd := exec.Command(cli, "-h", host, "-p", port, "--replica")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitFor(t, 10*time.Second, "redis-cli --replica to attach", func() bool {
		return strings.Contains(infoValue(t, c, "replication", "slave0"), "state=online")
	})
	deadline := time.After(10 * time.Second)
	for n := 0; ; n++ {
		// redis-cli takes the stream's first command as the reply to its
		// REPLCONF ACK: write until one shows.
		c.Set(ctx, "seen", strconv.Itoa(n), 0)
		select {
		case l := <-lines:
			if !strings.HasPrefix(l, `"set","seen",`) {
				t.Fatalf("redis-cli --replica printed %q", l)
			}
			return
		case <-deadline:
			t.Fatal("redis-cli --replica printed nothing")
		case <-time.After(200 * time.Millisecond):
		}
	}
}
