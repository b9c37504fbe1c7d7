package tests

import (
	"maps"
	"net"
	"sort"
	"strconv"
	"testing"
	"time"
)

// dumpEveryKey renders every key of database 0 by its DUMP payload and
// deadline: two servers holding the same state of a native family dump the
// same bytes (its timers, leases, tokens, receipts and presence included).
func dumpEveryKey(t *testing.T, addr string) map[string]string {
	t.Helper()
	c := dialRaw(t, addr)
	keys := c.do("KEYS", "*")
	out := map[string]string{}
	var names []string
	for _, k := range keys.Elems {
		names = append(names, k.Str)
	}
	sort.Strings(names)
	for _, k := range names {
		out[k] = c.do("DUMP", k).Str + " pexpiretime=" + c.do("PEXPIRETIME", k).String()
	}
	return out
}

// TestReplicaRunsNativeFamiliesOnTheMastersClock drives every native family
// on a Revolver master, timers, leases ending, a disconnect releasing jobs,
// random picks and presence ageing included, and checks its Revolver replica
// holds byte for byte the same state.
func TestReplicaRunsNativeFamiliesOnTheMastersClock(t *testing.T) {
	opts := []serverOpt{withConfig("room-presence-ttl", "1000")}
	master := startServer(t, opts...)
	replica := startServer(t, opts...)
	mc, rc := goRedis(t, master.Addr(), 2), goRedis(t, replica.Addr(), 2)
	host, port, _ := net.SplitHostPort(master.Addr())

	m := dialRaw(t, master.Addr())
	m.do("DELAY.ADD", "early", "t0", "IN", "10") // in the full sync
	if got := rc.Do(ctx, "REPLICAOF", host, port).Val(); got != "OK" {
		t.Fatalf("REPLICAOF: %v", got)
	}
	waitReplicaInSync(t, mc, rc)

	// Timers that fire and recur, a lease that ends and redelivers.
	for i := range 20 {
		m.do("DELAY.ADD", "bill", "viewer:"+strconv.Itoa(i), "IN", strconv.Itoa(10+i*5), "EVERY", "40", "PAYLOAD", "room:7")
	}
	m.do("DELAY.POP", "early", "COUNT", "10", "LEASE", "30")
	// Jobs: leases ending, a consumer that disconnects, acks, dead letters.
	for i := range 30 {
		m.do("QUEUE.PUSH", "jobs", "payload-"+strconv.Itoa(i), "ID", "job:"+strconv.Itoa(i), "PRIORITY", strconv.Itoa(i%3))
	}
	m.do("QUEUE.POPACK", "jobs", "alice", "COUNT", "5", "LEASE", "40")
	gone := dialRaw(t, master.Addr())
	gone.do("QUEUE.POPACK", "jobs", "bob", "COUNT", "3", "LEASE", "600000", "RELEASE-ON-DISCONNECT")
	acked := m.do("QUEUE.POPACK", "jobs", "carol", "COUNT", "2")
	for _, d := range acked.Elems {
		m.do("QUEUE.ACK", "jobs", d.Elems[3].Str)
	}
	// A pool picked at random, with leases that hang calls up.
	var nums []string
	for i := range 40 {
		nums = append(nums, "1380000"+strconv.Itoa(1000+i))
	}
	m.do(append([]string{"NUMPOOL.ADD", "pool"}, nums...)...)
	m.do(append([]string{"NUMPOOL.REG", "pool"}, nums...)...)
	for range 15 {
		m.do("NUMPOOL.EVENT", "pool", "call", "POLICY", "random", "LEASE", "30")
	}
	// A room: messages, presence that ages out, unique viewers.
	for i := range 10 {
		m.do("ROOM.PUB", "live:7", "message "+strconv.Itoa(i))
	}
	m.do("ROOM.PUB", "live:7", "pinned", "IMPORTANT")
	m.do("ROOM.HEARTBEAT", "live:7", "42", "43", "44")
	// A blocked consumer served later by a push.
	waiting := dialRaw(t, master.Addr())
	waiting.send("QUEUE.POPACK", "later", "dave", "BLOCK", "0", "LEASE", "600000")
	time.Sleep(20 * time.Millisecond)
	m.do("QUEUE.PUSH", "later", "x", "ID", "late:1")
	waiting.read()

	gone.conn.Close() // bob's three jobs go back
	// Let leases end, timers recur and presence age out, with writes in
	// between.
	for range 6 {
		time.Sleep(220 * time.Millisecond)
		m.do("DELAY.POP", "bill", "COUNT", "5")
		m.do("QUEUE.POPACK", "jobs", "erin", "LEASE", "20")
		m.do("NUMPOOL.EVENT", "pool", "call", "POLICY", "random")
	}
	// Then quiet: the recurring timers cancelled, every short lease ended,
	// so that nothing moves between reading the master and the replica.
	for i := range 20 {
		m.do("DELAY.CANCEL", "bill", "viewer:"+strconv.Itoa(i))
	}
	time.Sleep(300 * time.Millisecond)
	var want, got map[string]string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		waitReplicaInSync(t, mc, rc)
		want, got = dumpEveryKey(t, master.Addr()), dumpEveryKey(t, replica.Addr())
		if maps.Equal(want, got) || time.Now().After(deadline) {
			break
		}
	}
	if len(want) == 0 {
		t.Fatal("the master holds nothing")
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %q differs on the replica", k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %q only on the replica", k)
		}
	}
	// The replica fires nothing of its own: promoted, it goes on from the
	// master's state.
	if got := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Val(); got != "OK" {
		t.Fatalf("REPLICAOF NO ONE: %v", got)
	}
	if n := rc.Do(ctx, "QUEUE.LEN", "jobs").Val(); n == nil {
		t.Error("QUEUE.LEN on the promoted replica")
	}
}
