package main

import (
	"strings"
	"testing"
)

// TestRecountGenAlternates: each client changes its own key, then counts
// it, in turn, so every PFCOUNT finds the cache stale.
func TestRecountGenAlternates(t *testing.T) {
	for _, client := range []int{0, 3, hllRecountKeys + 3} {
		gen := pfRecountGen(0, client)
		key := recountKey(client)
		for i := range 4 {
			got := string(gen(nil, newRand(1)))
			want := string(appendCommand(nil, "PFCOUNT", key))
			if i%2 == 0 {
				want = string(appendCommand(nil, "SETRANGE", key, "15", "\x80"))
			}
			if got != want {
				t.Fatalf("client %d, command %d: %q, want %q", client, i, got, want)
			}
		}
	}
	if recountKey(3) != recountKey(hllRecountKeys+3) || !strings.HasPrefix(recountKey(3), "hll:chg:") {
		t.Fatalf("keys %q %q", recountKey(3), recountKey(hllRecountKeys+3))
	}
}
