package tests

import (
	"bufio"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// fakeReplica is a replica that syncs, then acknowledges only when told.
type fakeReplica struct {
	t    *testing.T
	conn net.Conn
}

// attachFakeReplica does PSYNC on addr and reads the RDB; the stream that
// follows is left unread (it is a few commands).
func attachFakeReplica(t *testing.T, addr string) *fakeReplica {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	conn.Write(encodeCommand([]string{"PSYNC", "?", "-1"}))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		line = strings.TrimRight(line, "\r\n")
		if n, ok := strings.CutPrefix(line, "$"); ok {
			size, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("RDB header %q", line)
			}
			if _, err := io.CopyN(io.Discard, br, int64(size)); err != nil {
				t.Fatal(err)
			}
			break
		}
		// +FULLRESYNC, and the newlines a master sends while it prepares.
	}
	conn.SetDeadline(time.Time{})
	return &fakeReplica{t: t, conn: conn}
}

func (f *fakeReplica) ack(offset string) {
	f.conn.Write(encodeCommand([]string{"REPLCONF", "ACK", offset}))
}

// TestShutdownWaitsForReplicas runs Redis 7.0's SHUTDOWN on both servers:
// with a replica that has not acknowledged the whole stream, SHUTDOWN
// blocks, writes are held and reads are not; ABORT lets the writes go on
// and fails the waiting SHUTDOWN; a replica's acknowledgement ends the
// wait and the server stops; NOW does not wait.
func TestShutdownWaitsForReplicas(t *testing.T) {
	rev := startServer(t, withConfig("shutdown-timeout", "30"))
	redisAddr := startRealRedis(t, "--shutdown-timeout", "30", "--repl-diskless-sync", "no")
	for _, srv := range []struct{ name, addr string }{{"Revolver", rev.Addr()}, {"Redis", redisAddr}} {
		t.Run(srv.name, func(t *testing.T) {
			c := goRedis(t, srv.addr, 2)
			c.Set(ctx, "k", "1", 0)
			replica := attachFakeReplica(t, srv.addr)
			c.Set(ctx, "k", "2", 0) // the replica has not acknowledged this

			if got := dialRaw(t, srv.addr).do("SHUTDOWN", "ABORT").Str; got != "ERR No shutdown in progress." {
				t.Errorf("SHUTDOWN ABORT with none in progress: %s", got)
			}
			stopper := dialRaw(t, srv.addr)
			stopper.send("SHUTDOWN")
			writer := dialRaw(t, srv.addr)
			waitFor(t, 5*time.Second, "SHUTDOWN to hold writes", func() bool {
				return strings.Contains(c.ClientList(ctx).Val(), "cmd=shutdown")
			})
			writer.send("SET", "k", "3")
			time.Sleep(100 * time.Millisecond)
			if got := c.Get(ctx, "k").Val(); got != "2" {
				t.Errorf("GET while SHUTDOWN waits: %q", got)
			}
			if got := dialRaw(t, srv.addr).do("SHUTDOWN", "ABORT").Str; got != "OK" {
				t.Fatalf("SHUTDOWN ABORT: %s", got)
			}
			if got := stopper.read().Str; got != "ERR Errors trying to SHUTDOWN. Check logs." {
				t.Errorf("the aborted SHUTDOWN answered %s", got)
			}
			if got := writer.read().Str; got != "OK" {
				t.Errorf("the held SET answered %s", got)
			}

			// The replica catches up: the server stops. (A new connection:
			// redis-server 7.0.15 fails an assertion when the client of an
			// aborted SHUTDOWN sends another command.)
			stopper = dialRaw(t, srv.addr)
			stopper.do("CLIENT", "SETNAME", "second")
			stopper.send("SHUTDOWN", "NOSAVE")
			waitFor(t, 5*time.Second, "SHUTDOWN to wait", func() bool {
				return regexp.MustCompile(`name=second .*cmd=shutdown`).MatchString(c.ClientList(ctx).Val())
			})
			replica.ack(infoValue(t, c, "replication", "master_repl_offset"))
			stopper.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := stopper.rd.Read(); err == nil || strings.Contains(err.Error(), "timeout") {
				t.Fatalf("SHUTDOWN after the replica caught up: %v, want the connection closed", err)
			}
		})
	}
	select {
	case <-rev.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Revolver did not stop")
	}

	// NOW does not wait.
	rev2 := startServer(t, withConfig("shutdown-timeout", "30"))
	c := redis.NewClient(&redis.Options{Addr: rev2.Addr()})
	defer c.Close()
	attachFakeReplica(t, rev2.Addr())
	c.Set(ctx, "k", "v", 0)
	c.Do(ctx, "SHUTDOWN", "NOW", "NOSAVE")
	select {
	case <-rev2.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SHUTDOWN NOW waited")
	}
}
