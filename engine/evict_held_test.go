package engine

import (
	"fmt"
	"strings"
	"testing"
)

// TestEvictionCountsHeldStringRecords: a string grown in place (APPEND,
// SETRANGE, INCR) has its record held back for coalescing; the growth
// still counts in the estimate, at once, so the next command's eviction
// sees it, as Redis's used memory does.
func TestEvictionCountsHeldStringRecords(t *testing.T) {
	const limit = 1 << 20
	e, _, db, _ := meterFixture(t, PolicyAllKeysRandom, limit)
	for i := 0; i < 10; i++ {
		db.SetString(b(fmt.Sprintf("key:%d", i)), b("v"), SetOptions{})
	}
	db.SetString(b("log"), b("start"), SetOptions{})
	if r := e.PerformEvictions(); r != EvictOK || e.EvictionStats().EvictedKeys != 0 {
		t.Fatalf("under the limit: %v, %d evicted", r, e.EvictionStats().EvictedKeys)
	}
	if _, err := db.Append(b("log"), b(strings.Repeat("x", 2*limit))); err != nil {
		t.Fatal(err)
	}
	e.PerformEvictions()
	if n := e.EvictionStats().EvictedKeys; n == 0 {
		t.Fatalf("a string grown by %d bytes over a limit of %d evicted nothing (estimate %d)",
			2*limit, limit, e.MemoryEstimate())
	}
}
