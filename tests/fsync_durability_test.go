package tests

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/revolver-db/revolver/persistence/powercut"
	"github.com/revolver-db/revolver/resp"
	"github.com/revolver-db/revolver/server"
)

// appendfsync always over the network (issue 31 item 7): the store runs on
// an in-memory file system whose log syncs the test can hold, and a power
// cut (powercut.Cut) keeps only what was synced. kill -9, which keeps the
// page cache, cannot tell always from everysec.

const memDir = "/data" // the data directory, on the in-memory file system

func withFS(fsys vfs.FS) serverOpt { return func(c *server.Config) { c.FS = fsys } }

// heldSet sends SET key val on c while fsys holds the log's syncs, and
// checks that no reply comes before the log's fsync has started and while
// it is held. The returned func releases the fsync and waits for the reply.
func heldSet(t *testing.T, fsys *powercut.FS, c *rawConn, key, val string) (release func()) {
	t.Helper()
	fsys.Hold()
	replied := make(chan string, 1)
	go func() {
		c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		v, err := c.rd.Read()
		if err != nil {
			replied <- "read error: " + err.Error()
			return
		}
		replied <- v.String()
	}()
	c.send("SET", key, val)
	select {
	case <-fsys.Waiting():
	case r := <-replied:
		fsys.Release()
		t.Fatalf("SET replied %s without waiting for an fsync of the log", r)
	case <-time.After(10 * time.Second):
		fsys.Release()
		t.Fatal("SET under appendfsync always did not fsync the log")
	}
	// The fsync is held: a reply now would have been sent before it. Only
	// a wrong build replies, so the wait is short.
	select {
	case r := <-replied:
		fsys.Release()
		t.Fatalf("SET replied %s while its fsync was held", r)
	case <-time.After(200 * time.Millisecond):
	}
	return func() {
		t.Helper()
		fsys.Release()
		select {
		case r := <-replied:
			if r != "+OK" {
				t.Fatalf("SET replied %s once its fsync returned", r)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no reply to SET once its fsync returned")
		}
	}
}

func startOnFS(t *testing.T, fsys vfs.FS, fsync string) *server.Server {
	t.Helper()
	return startServer(t, withPersistence(memDir), withConfig("appendfsync", fsync), withFS(fsys))
}

// TestAlwaysReplyWaitsForFsync: a write's reply under appendfsync always
// comes only once its fsync has returned.
func TestAlwaysReplyWaitsForFsync(t *testing.T) {
	fsys := powercut.Wrap(vfs.NewMem(), memDir+"/revolver/log")
	srv := startOnFS(t, fsys, "always")
	t.Cleanup(fsys.Release) // before the server closes
	c := dialRaw(t, srv.Addr())
	heldSet(t, fsys, c, "k", "v1")()
	heldSet(t, fsys, c, "k", "v2")()
	if v := c.do("GET", "k"); v.Kind != resp.KindBulk || v.Str != "v2" {
		t.Fatalf("GET k = %s", v)
	}
}

// TestPowerCutKeepsAcknowledgedWrites: under appendfsync always, every SET
// acknowledged before a power cut is there after it; a SET whose fsync was
// held at the cut, never acknowledged, is not, which shows the cut drops
// what was not synced.
func TestPowerCutKeepsAcknowledgedWrites(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fsys := powercut.Wrap(mem, memDir+"/revolver/log")
	srv := startOnFS(t, fsys, "always")
	t.Cleanup(fsys.Release)
	const clients, rounds, perPipeline = 4, 5, 50
	key := func(c, i int) string { return fmt.Sprintf("c%d:%d", c, i) }
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for cl := range clients {
		rc := goRedis(t, srv.Addr(), 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				p := rc.Pipeline()
				for j := range perPipeline {
					i := r*perPipeline + j
					p.Set(context.Background(), key(cl, i), i, 0)
				}
				if _, err := p.Exec(context.Background()); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c := dialRaw(t, srv.Addr())
	release := heldSet(t, fsys, c, "unacknowledged", "x")
	cut := powercut.Cut(mem)
	release()
	srv.Crash()

	srv2 := startOnFS(t, cut, "always")
	c2 := dialRaw(t, srv2.Addr())
	for cl := range clients {
		for i := range rounds * perPipeline {
			if v := c2.do("GET", key(cl, i)); v.Kind != resp.KindBulk || v.Str != fmt.Sprint(i) {
				t.Fatalf("acknowledged SET %s lost in the power cut: GET = %s", key(cl, i), v)
			}
		}
	}
	if v := c2.do("EXISTS", "unacknowledged"); v.Int != 0 {
		t.Fatal("a SET whose fsync was held at the power cut survived it: the cut keeps unsynced data")
	}
}
