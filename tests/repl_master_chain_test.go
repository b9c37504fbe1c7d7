package tests

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestReplRevolverReplicaOfRevolver: a Revolver replica of a Revolver
// master (with persistence on) gets everything in the full sync, Revolver's own types included,
// follows the stream, and continues after its link drops from either end.
func TestReplRevolverReplicaOfRevolver(t *testing.T) {
	// The backlog holds what the test writes while a link is down (about
	// 3 MB: populateAllTypes grows bitmaps bit by bit).
	backlog := withConfig("repl-backlog-size", "64mb")
	srv := startServer(t, withPersistence(t.TempDir()), backlog) // the RDB goes through the data directory
	master := goRedis(t, srv.Addr(), 2)
	populateAllTypes(t, srv.Addr(), 1)
	addNativeKeys(t, srv.Addr())

	rep := startServer(t)
	replica := goRedis(t, rep.Addr(), 2)
	replicaOf(t, replica, srv.Addr())
	waitReplicaInSync(t, master, replica)
	assertSameKeys(t, "after the full sync", srv.Addr(), rep.Addr())
	if want, got := nativeDump(t, srv.Addr()), nativeDump(t, rep.Addr()); want != got {
		t.Fatalf("native keys after the full sync:\n%s\nwant\n%s", got, want)
	}
	if n := infoInt(t, master, "replication", "rdb_skipped_native_keys"); n != 0 {
		t.Errorf("rdb_skipped_native_keys %d for a Revolver replica", n)
	}

	populateAllTypes(t, srv.Addr(), 2)
	waitReplicaInSync(t, master, replica)
	assertSameKeys(t, "after the stream", srv.Addr(), rep.Addr())

	full, partial := infoInt(t, master, "stats", "sync_full"), infoInt(t, master, "stats", "sync_partial_ok")
	for _, kill := range []struct {
		on   *redis.Client
		typ  string
		what string
	}{{master, "replica", "the master drops the link"}, {replica, "master", "the replica drops the link"}} {
		if n := kill.on.Do(ctx, "CLIENT", "KILL", "TYPE", kill.typ).Val(); n != int64(1) {
			t.Fatalf("%s: CLIENT KILL TYPE %s: %v", kill.what, kill.typ, n)
		}
		populateAllTypes(t, srv.Addr(), 3)
		waitReplicaInSync(t, master, replica)
		assertSameKeys(t, kill.what, srv.Addr(), rep.Addr())
		partial++
		if n := infoInt(t, master, "stats", "sync_partial_ok"); n != partial {
			t.Errorf("%s: sync_partial_ok %d, want %d", kill.what, n, partial)
		}
	}
	if n := infoInt(t, master, "stats", "sync_full"); n != full {
		t.Errorf("sync_full %d, was %d", n, full)
	}
}

// TestReplChained: A -> B -> C. B passes A's stream on at A's offsets, so C
// continues across B's own reconnection and its own; when B is promoted, C
// and a former sibling continue from B with the old ID as the second one.
func TestReplChained(t *testing.T) {
	// No PING from A during the test: a sibling must stop exactly where B
	// was promoted to continue from it.
	backlog := withConfig("repl-backlog-size", "64mb") // what the test writes while a link is down
	a := startServer(t, withConfig("repl-ping-replica-period", "3600"), backlog)
	b, c, d := startServer(t, backlog), startServer(t, backlog), startServer(t, backlog)
	ac, bc, cc, dc := goRedis(t, a.Addr(), 2), goRedis(t, b.Addr(), 2), goRedis(t, c.Addr(), 2), goRedis(t, d.Addr(), 2)
	populateAllTypes(t, a.Addr(), 1)
	addNativeKeys(t, a.Addr())
	replicaOf(t, bc, a.Addr())
	waitReplicaInSync(t, ac, bc)
	replicaOf(t, cc, b.Addr())
	replicaOf(t, dc, a.Addr())
	waitReplicaInSync(t, bc, cc)
	waitReplicaInSync(t, ac, dc)
	assertSameKeys(t, "C after its full sync from B", a.Addr(), c.Addr())
	if want, got := nativeDump(t, a.Addr()), nativeDump(t, c.Addr()); want != got {
		t.Fatalf("native keys on C:\n%s\nwant\n%s", got, want)
	}
	if ao, co := infoValue(t, ac, "replication", "master_replid"), infoValue(t, cc, "replication", "master_replid"); ao != co {
		t.Errorf("C's replication ID %s, A's %s", co, ao)
	}

	// A's stream reaches C, at A's offsets.
	populateAllTypes(t, a.Addr(), 2)
	waitReplicaInSync(t, ac, cc)
	assertSameKeys(t, "C after A's stream", a.Addr(), c.Addr())

	// B's link to A drops: B continues with A, C stays with B.
	bFull := infoInt(t, bc, "stats", "sync_full")
	if n := bc.Do(ctx, "CLIENT", "KILL", "TYPE", "master").Val(); n != int64(1) {
		t.Fatalf("CLIENT KILL TYPE master on B: %v", n)
	}
	populateAllTypes(t, a.Addr(), 3)
	waitReplicaInSync(t, ac, cc)
	assertSameKeys(t, "C after B reconnected", a.Addr(), c.Addr())

	// C's link to B drops: C continues from B's backlog.
	bPartial := infoInt(t, bc, "stats", "sync_partial_ok")
	if n := bc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Val(); n != int64(1) {
		t.Fatalf("CLIENT KILL TYPE replica on B: %v", n)
	}
	populateAllTypes(t, a.Addr(), 4)
	waitReplicaInSync(t, ac, cc)
	waitReplicaInSync(t, ac, dc)
	assertSameKeys(t, "C after it reconnected", a.Addr(), c.Addr())
	bPartial++
	if n := infoInt(t, bc, "stats", "sync_partial_ok"); n != bPartial {
		t.Errorf("B's sync_partial_ok %d, want %d", n, bPartial)
	}

	// B is promoted: C (its replica) and D (its former sibling) continue
	// with B through A's ID, now B's second.
	aID := infoValue(t, ac, "replication", "master_replid")
	if err := bc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if got := infoValue(t, bc, "replication", "master_replid2"); got != aID {
		t.Fatalf("B's master_replid2 %s, want A's %s", got, aID)
	}
	replicaOf(t, dc, b.Addr())
	waitFor(t, 10*time.Second, "C and D to follow B", func() bool {
		return infoValue(t, bc, "replication", "connected_slaves") == "2" &&
			infoInt(t, bc, "stats", "sync_partial_ok") == bPartial+2
	})
	bc.Set(ctx, "after-promotion", "1", 0)
	bDB3 := redis.NewClient(&redis.Options{Addr: b.Addr(), DB: 3})
	defer bDB3.Close()
	bDB3.HSet(ctx, "after-promotion-hash", "f", "v")
	waitReplicaInSync(t, bc, cc)
	waitReplicaInSync(t, bc, dc)
	assertSameKeys(t, "C after B's promotion", b.Addr(), c.Addr())
	assertSameKeys(t, "D after B's promotion", b.Addr(), d.Addr())
	if n := infoInt(t, bc, "stats", "sync_full"); n != bFull {
		t.Errorf("B's sync_full %d, want %d (C's first sync only)", n, bFull)
	}
	bID := infoValue(t, bc, "replication", "master_replid")
	for _, r := range []*redis.Client{cc, dc} {
		if got := infoValue(t, r, "replication", "master_replid"); got != bID {
			t.Errorf("a replica of B has ID %s, B %s", got, bID)
		}
	}
	if want, got := nativeDump(t, b.Addr()), nativeDump(t, d.Addr()); want != got {
		t.Fatalf("native keys on D:\n%s\nwant\n%s", got, want)
	}

	// B, which wrote on its own, follows A again: a full sync, after which
	// its replicas cannot continue the history they had and sync fully too.
	bFull = infoInt(t, bc, "stats", "sync_full")
	replicaOf(t, bc, a.Addr())
	waitReplicaInSync(t, ac, bc)
	waitFor(t, 10*time.Second, "C and D to sync again", func() bool {
		return infoInt(t, bc, "stats", "sync_full") == bFull+2 && infoValue(t, bc, "replication", "connected_slaves") == "2"
	})
	populateAllTypes(t, a.Addr(), 5)
	waitReplicaInSync(t, ac, cc)
	waitReplicaInSync(t, ac, dc)
	assertSameKeys(t, "C after B synced fully from A", a.Addr(), c.Addr())
	assertSameKeys(t, "D after B synced fully from A", a.Addr(), d.Addr())
}
