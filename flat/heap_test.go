package flat

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestHeldBytesFollowsTheKeyspace: HeldBytes, kept up to date at every
// page, block and index array taken or given back, agrees with what Stats
// counts afresh, through growth, deletes that merge segments and release
// pages, compaction and Clear; LiveBytes likewise with the slots in use.
func TestHeldBytesFollowsTheKeyspace(t *testing.T) {
	ks := NewKeyspace()
	check := func(when string) {
		t.Helper()
		st := ks.Stats()
		if got, want := ks.HeldBytes(), st.Bytes(); got != want {
			t.Fatalf("%s: HeldBytes %d, Stats %d", when, got, want)
		}
		if got, want := ks.LiveBytes(), st.Arena.Allocated+st.Table.Bytes; got != want {
			t.Fatalf("%s: LiveBytes %d, Stats %d", when, got, want)
		}
	}
	check("new")
	r := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 6000)
	for i := range 50000 {
		n := 1 + r.IntN(200)
		if i%1000 == 0 {
			n = len(val) // a large block now and then
		}
		ks.Set(fmt.Appendf(nil, "key:%d", i), 1, 0, 0, val[:n])
	}
	check("filled")
	for i := range 50000 {
		if i%10 != 0 {
			ks.Delete(fmt.Appendf(nil, "key:%d", i))
		}
	}
	check("after deletes")
	for ks.Compact(1<<20) > 0 {
	}
	check("compacted")
	ks.Clear()
	check("cleared")
	if ks.HeldBytes() != 0 {
		t.Fatalf("cleared: %d bytes held", ks.HeldBytes())
	}
}
