package flat

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestScanGuarantee is SCAN's promise as a property: whatever happens
// between calls (bursts of inserts that split segments and double the
// directory, bursts of deletes that merge them and halve it, overwrites,
// compaction), every key present from the first call to the last is
// returned at least once, and the scan ends.
func TestScanGuarantee(t *testing.T) {
	dups, returned := 0, 0
	for _, bits := range []int{4, 5, 7, DefaultSegmentBits} {
		for seed := uint64(0); seed < 12; seed++ {
			rng := rand.New(rand.NewPCG(seed, uint64(bits)))
			k := newKeyspace(bits)
			nextID := 0
			present := map[int]bool{}
			add := func() {
				present[nextID] = true
				k.Set(keyName(nextID), 0, 0, 0, make([]byte, rng.IntN(24)))
				nextID++
			}
			del := func(id int) {
				if !k.Delete(keyName(id)) {
					t.Fatalf("delete %d", id)
				}
				delete(present, id)
			}
			for range rng.IntN(3000) {
				add()
			}
			stable := map[int]bool{}
			for id := range present {
				stable[id] = true
			}
			seen := map[string]int{}
			cursor, calls := uint64(0), 0
			for {
				cursor = k.Scan(cursor, 1+rng.IntN(30), func(r Record) { seen[string(r.Key())]++ })
				calls++
				if cursor == 0 {
					break
				}
				if calls > 1e6 {
					t.Fatal("scan does not end")
				}
				switch rng.IntN(8) {
				case 0: // grow
					for range rng.IntN(2000) {
						add()
					}
				case 1: // shrink: delete most keys
					frac := 50 + rng.IntN(50)
					for id := range present {
						if rng.IntN(100) < frac {
							del(id)
							delete(stable, id)
						}
					}
				case 2: // churn
					for range rng.IntN(50) {
						add()
					}
					for id := range present {
						if rng.IntN(4) == 0 {
							del(id)
							delete(stable, id)
							break
						}
					}
				case 3: // overwrite: the key stays present
					for id := range present {
						k.Set(keyName(id), 1, 0, 0, []byte("over"))
						break
					}
				case 4:
					k.Compact(4096)
				}
			}
			checkTable(t, &k.table)
			for id := range stable {
				if seen[string(keyName(id))] == 0 {
					t.Fatalf("bits %d seed %d: key %d present throughout was not returned (%d calls)", bits, seed, id, calls)
				}
			}
			for _, n := range seen {
				returned += n
				dups += n - 1
			}
		}
	}
	t.Logf("%d keys returned, %d of them again", returned, dups)
}

// TestScanStableTable checks a scan of a table nobody changes returns each
// key exactly once (a cursor at an empty slot repeats nothing), for any
// COUNT.
func TestScanStableTable(t *testing.T) {
	for _, bits := range []int{4, DefaultSegmentBits} {
		for _, n := range []int{0, 1, 13, 700, 50000} {
			for _, count := range []int{1, 10, 1000} {
				k := newKeyspace(bits)
				for i := 0; i < n; i++ {
					k.Set(keyName(i), 0, 0, 0, nil)
				}
				seen := map[string]int{}
				cursor, calls := uint64(0), 0
				for {
					got := 0
					cursor = k.Scan(cursor, count, func(r Record) { seen[string(r.Key())]++; got++ })
					calls++
					if cursor == 0 {
						break
					}
					if got == 0 && count >= 10 && n > 100 {
						t.Fatalf("bits %d n %d count %d: a call returned nothing", bits, n, count)
					}
				}
				if len(seen) != n {
					t.Fatalf("bits %d n %d count %d: %d keys returned", bits, n, count, len(seen))
				}
				for key, c := range seen {
					if c != 1 {
						t.Fatalf("bits %d n %d count %d: %s returned %d times", bits, n, count, key, c)
					}
				}
				if count == 10 && n == 50000 {
					t.Logf("bits %d: %d calls for %d keys at COUNT 10", bits, calls, n)
				}
			}
		}
	}
}

// TestScanCursorAcrossShapes resumes one cursor on tables of very different
// shapes holding the same keys: the cursor is a hash position, so the keys
// below it are the same in both.
func TestScanCursorAcrossShapes(t *testing.T) {
	small := newKeyspace(4)
	big := newKeyspace(DefaultSegmentBits)
	for i := 0; i < 5000; i++ {
		small.Set(keyName(i), 0, 0, 0, nil)
		big.Set(keyName(i), 0, 0, 0, nil)
	}
	seen := map[string]bool{}
	cursor := uint64(0)
	for i := 0; ; i++ {
		tab := small
		if i%2 == 1 {
			tab = big
		}
		cursor = tab.Scan(cursor, 7, func(r Record) { seen[string(r.Key())] = true })
		if cursor == 0 {
			break
		}
	}
	if len(seen) != 5000 {
		t.Fatalf("%d of 5000 keys", len(seen))
	}
}

func ExampleKeyspace_Scan() {
	k := NewKeyspace()
	for i := 0; i < 100; i++ {
		k.Set(fmt.Appendf(nil, "key:%d", i), 0, 0, 0, []byte("v"))
	}
	n, cursor := 0, uint64(0)
	for {
		cursor = k.Scan(cursor, 10, func(Record) { n++ })
		if cursor == 0 {
			break
		}
	}
	fmt.Println(n)
	// Output: 100
}
