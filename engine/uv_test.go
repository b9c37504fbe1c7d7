package engine

import (
	"math"
	"strconv"
	"testing"
)

func uvMembers(prefix string, from, to int) [][]byte {
	out := make([][]byte, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, []byte(prefix+strconv.Itoa(i)))
	}
	return out
}

func uvCount(t testing.TB, db *DB, keys ...string) int64 {
	t.Helper()
	args := make([][]byte, len(keys))
	for i, k := range keys {
		args[i] = []byte(k)
	}
	n, err := db.UVCount(args)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func uvObj(t testing.TB, db *DB, key string) *UV {
	t.Helper()
	u, ok := db.Peek([]byte(key)).(*UV)
	if !ok {
		t.Fatalf("%s is not a unique counter", key)
	}
	return u
}

func newUVEngine(t testing.TB, exactMax int64) (*Engine, *DB, *hsRecordSink) {
	e, db := newHLLEngine(t)
	lim := DefaultLimits()
	lim.UVExactMax = exactMax
	e.SetLimits(lim)
	sink := newHSRecordSink()
	e.SetSink(sink)
	return e, db, sink
}

func TestUVExactThenApproximate(t *testing.T) {
	_, db, sink := newUVEngine(t, 100)
	key := []byte("uv")
	if ch, err := db.UVAdd(key, uvMembers("m", 0, 50)); !ch || err != nil {
		t.Fatal("first add")
	}
	if got := sink.take(); got != "[item=50 value=1]" {
		t.Fatalf("new exact counter wrote %s", got)
	}
	if ch, _ := db.UVAdd(key, uvMembers("m", 0, 50)); ch {
		t.Fatal("re-adding members changed the count")
	}
	db.UVAdd(key, uvMembers("m", 40, 100))
	if got := sink.take(); got != "[item=50]" {
		t.Fatalf("adding 50 new members wrote %s", got)
	}
	if n := uvCount(t, db, "uv"); n != 100 || uvObj(t, db, "uv").Encoding() != "exact" {
		t.Fatalf("exact count %d", n)
	}
	db.UVAdd(key, uvMembers("m", 100, 101))
	u := uvObj(t, db, "uv")
	if u.Exact() || u.Encoding() != "hyperloglog" {
		t.Fatal("101 members with uv-exact-max 100 are still exact")
	}
	if got := sink.take(); got != "[delkey=1 item=1 value=1]" {
		t.Fatalf("conversion wrote %s", got)
	}
	if n := uvCount(t, db, "uv"); n < 101 {
		t.Fatalf("count after conversion %d is below the exact count it had", n)
	}
	// Approximate additions persist the blob only when a register moves.
	db.UVAdd(key, uvMembers("m", 0, 101))
	if got := sink.take(); got != "[]" {
		t.Fatalf("re-adding to an approximate counter wrote %s", got)
	}
	db.UVAdd(key, uvMembers("n", 0, 1000))
	if got := sink.take(); got != "[value=1]" {
		t.Fatalf("approximate add wrote %s", got)
	}
	if n := uvCount(t, db, "uv"); math.Abs(float64(n)-1101) > 1101*0.03 {
		t.Fatalf("estimate %d for 1101 members", n)
	}
}

func TestUVPersistRebuild(t *testing.T) {
	e, db, sink := newUVEngine(t, 100)
	db.UVAdd([]byte("exact"), uvMembers("a", 0, 80))
	db.UVAdd([]byte("approx"), uvMembers("b", 0, 500))
	db.UVAdd([]byte("ttl"), uvMembers("c", 0, 10))
	db.SetExpire([]byte("ttl"), e.Now()+100000)
	db.UVAdd([]byte("ttl"), uvMembers("c", 0, 200)) // converts: the deadline record must survive
	e2 := sink.rebuild(t, e.limits)
	e2.Lock()
	defer e2.Unlock()
	db2 := e2.DB(0)
	for _, k := range []string{"exact", "approx", "ttl"} {
		if a, b := uvCount(t, db, k), uvCount(t, db2, k); a != b {
			t.Errorf("%s: %d before, %d after rebuild", k, a, b)
		}
		if a, b := uvObj(t, db, k).Encoding(), uvObj(t, db2, k).Encoding(); a != b {
			t.Errorf("%s: encoding %s before, %s after rebuild", k, a, b)
		}
	}
	if db2.Expire([]byte("ttl")) != db.Expire([]byte("ttl")) {
		t.Error("deadline lost by the conversion")
	}
	// The rebuilt exact counter goes on counting and converting.
	db2.UVAdd([]byte("exact"), uvMembers("a", 70, 100))
	if uvCount(t, db2, "exact") != 100 {
		t.Error("rebuilt exact counter")
	}
	db2.UVAdd([]byte("exact"), uvMembers("z", 0, 1))
	if uvObj(t, db2, "exact").Exact() {
		t.Error("rebuilt counter did not convert")
	}
}

func TestUVCountAndMerge(t *testing.T) {
	_, db, sink := newUVEngine(t, 1000)
	db.UVAdd([]byte("a"), uvMembers("m", 0, 300))
	db.UVAdd([]byte("b"), uvMembers("m", 200, 600))
	if n := uvCount(t, db, "a", "b", "nosuch", "a"); n != 600 {
		t.Fatalf("exact union %d", n)
	}
	sink.take()
	if err := db.UVMerge([][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if got := sink.take(); got != "[item=300]" || uvCount(t, db, "a") != 600 || !uvObj(t, db, "a").Exact() {
		t.Fatalf("exact merge in place wrote %s, count %d", got, uvCount(t, db, "a"))
	}
	db.UVAdd([]byte("c"), uvMembers("m", 500, 1100))
	if err := db.UVMerge([][]byte{[]byte("d"), []byte("a"), []byte("c")}); err != nil {
		t.Fatal(err)
	}
	if uvObj(t, db, "d").Exact() {
		t.Fatal("union of 1100 members with uv-exact-max 1000 is exact")
	}
	if n := uvCount(t, db, "d"); n < 1100 || n > 1100*103/100 {
		t.Fatalf("merged estimate %d for 1100", n)
	}
	// Mixed forms: the union of an approximate and an exact counter.
	db.UVAdd([]byte("big"), uvMembers("x", 0, 5000))
	n := uvCount(t, db, "big", "b")
	if math.Abs(float64(n)-5400) > 5400*0.03 {
		t.Fatalf("mixed union estimate %d for 5400", n)
	}
	if err := db.UVMerge([][]byte{[]byte("b"), []byte("big")}); err != nil {
		t.Fatal(err)
	}
	if uvObj(t, db, "b").Exact() || uvCount(t, db, "b") != n {
		t.Fatal("merge into an exact destination")
	}
	db.SetString([]byte("s"), []byte("v"), SetOptions{})
	if _, err := db.UVAdd([]byte("s"), uvMembers("m", 0, 1)); err != ErrWrongType {
		t.Fatal("UVAdd on a string")
	}
	if _, err := db.UVCount([][]byte{[]byte("a"), []byte("s")}); err != ErrWrongType {
		t.Fatal("UVCount on a string")
	}
	if err := db.UVMerge([][]byte{[]byte("a"), []byte("s")}); err != ErrWrongType {
		t.Fatal("UVMerge from a string")
	}
	if _, err := db.PFCount([][]byte{[]byte("a")}); err != ErrWrongType {
		t.Fatal("PFCOUNT on a counter")
	}
	// Clone is deep.
	c := uvObj(t, db, "a").Clone().(*UV)
	c.members.Insert("only-in-clone")
	if uvObj(t, db, "a").members.Has("only-in-clone") {
		t.Fatal("clone shares members")
	}
}

// TestUVAccuracy reports the error of the estimate above the exact range
// (default uv-exact-max) at 10k, 100k and 1M distinct members.
func TestUVAccuracy(t *testing.T) {
	_, db, _ := newUVEngine(t, DefaultLimits().UVExactMax)
	key := []byte("room")
	next := 0
	for _, n := range []int{10000, 100000, 1000000} {
		if n == 1000000 && testing.Short() {
			break
		}
		for next < n {
			end := min(next+1000, n)
			db.UVAdd(key, uvMembers("viewer:", next, end))
			next = end
		}
		got := uvCount(t, db, "room")
		rel := (float64(got) - float64(n)) / float64(n)
		t.Logf("%d members: UV.COUNT %d, error %+.3f%%", n, got, 100*rel)
		if n == 10000 && got != 10000 {
			t.Errorf("10000 members are counted exactly: got %d", got)
		}
		if math.Abs(rel) > 0.02 {
			t.Errorf("error %.3f%% at %d", 100*rel, n)
		}
	}
}

func BenchmarkUVAddExact(b *testing.B) {
	_, db, _ := newUVEngine(b, 1<<30)
	key := []byte("uv")
	members := uvMembers("m", 0, 1<<16)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.UVAdd(key, members[i&(1<<16-1):i&(1<<16-1)+1])
	}
}

func BenchmarkUVAddApprox(b *testing.B) {
	_, db, _ := newUVEngine(b, 10)
	key := []byte("uv")
	members := uvMembers("m", 0, 1<<16)
	db.UVAdd(key, members[:100])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db.UVAdd(key, members[i&(1<<16-1):i&(1<<16-1)+1])
	}
}
