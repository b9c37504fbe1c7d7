package engine

import (
	"fmt"
	"testing"
)

// walkFixture stores n DELAY keys (key i holds i%7+1 timers) and n QUEUE
// keys in each of the first dbs databases, and some plain keys the walk
// must not report.
func walkFixture(t *testing.T, dbs, n int) (engineFixture, map[string]int64) {
	f := newEngineFixture(t)
	want := map[string]int64{}
	for d := range dbs {
		db := f.e.DB(d)
		for i := range n {
			k := fmt.Sprintf("d%03d", i)
			for j := range i%7 + 1 {
				if _, _, err := db.DelayAdd(b(k), b(fmt.Sprint(j)), DelayAddArgs{Due: f.e.Now() + 100000}); err != nil {
					t.Fatal(err)
				}
			}
			want[fmt.Sprintf("%d/delay/%s", d, k)] = int64(i%7 + 1)
			q := fmt.Sprintf("q%03d", i)
			if _, _, err := db.QueuePush(b(q), b("job"), QueuePushArgs{}); err != nil {
				t.Fatal(err)
			}
			want[fmt.Sprintf("%d/queue/%s", d, q)] = 1
			db.Set(b(fmt.Sprintf("plain%d", i)), NewString(b("v")), false)
		}
	}
	return f, want
}

// TestWalkNativeVisitsEachKeyOnce: with nothing changing, a walk in chunks
// of every size reports every native key exactly once, with its family
// and size, and no plain key.
func TestWalkNativeVisitsEachKeyOnce(t *testing.T) {
	f, want := walkFixture(t, 3, 40)
	for _, chunk := range []int{1, 2, 7, 40, 41, 1000} {
		seen := map[string]int64{}
		var cur NativeCursor
		calls := 0
		for !cur.Done {
			calls++
			if calls > 10*len(want) {
				t.Fatalf("chunk %d: the walk does not end", chunk)
			}
			visited := 0
			cur = f.e.WalkNative(cur, chunk, func(k NativeKey) {
				visited++
				id := fmt.Sprintf("%d/%s/%s", k.DB, k.Family, k.Key)
				if _, dup := seen[id]; dup {
					t.Fatalf("chunk %d: %s visited twice", chunk, id)
				}
				seen[id] = k.Items
			})
			if visited > chunk {
				t.Fatalf("chunk %d: one call visited %d keys", chunk, visited)
			}
		}
		if len(seen) != len(want) {
			t.Fatalf("chunk %d: visited %d keys, want %d", chunk, len(seen), len(want))
		}
		for id, n := range want {
			if seen[id] != n {
				t.Fatalf("chunk %d: %s has %d items, want %d", chunk, id, seen[id], n)
			}
		}
	}
}

// TestWalkNativeSurvivesChanges: keys deleted (the cursor's own key
// included), added before and after the cursor, and a whole database
// flushed between chunks never crash the walk or make it repeat a key; the
// keys untouched throughout are all seen.
func TestWalkNativeSurvivesChanges(t *testing.T) {
	f, want := walkFixture(t, 2, 30)
	seen := map[string]bool{}
	var cur NativeCursor
	step := 0
	for !cur.Done {
		cur = f.e.WalkNative(cur, 5, func(k NativeKey) {
			id := fmt.Sprintf("%d/%s/%s", k.DB, k.Family, k.Key)
			if seen[id] {
				t.Fatalf("%s visited twice", id)
			}
			seen[id] = true
		})
		step++
		db := f.e.DB(cur.DB % 2)
		switch step {
		case 1:
			db.Delete(b(cur.After)) // the pivot itself
			delete(want, fmt.Sprintf("%d/queue/%s", cur.DB, cur.After))
			delete(want, fmt.Sprintf("%d/delay/%s", cur.DB, cur.After))
		case 2:
			db.QueuePush(b("a-before"), b("x"), QueuePushArgs{})
			db.QueuePush(b("z-after"), b("x"), QueuePushArgs{})
			for _, k := range []string{"d020", "q020", "d021"} {
				db.Delete(b(k))
				delete(want, fmt.Sprintf("%d/queue/%s", cur.DB, k))
				delete(want, fmt.Sprintf("%d/delay/%s", cur.DB, k))
			}
		case 4:
			f.e.DB(1).Flush()
			for id := range want {
				if id[0] == '1' {
					delete(want, id)
				}
			}
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("%s, untouched, was not visited", id)
		}
	}
}
