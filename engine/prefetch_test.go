package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPrefetchRuns feeds Prefetch random batches in which keys repeat, as
// pipelined commands on one key do, and checks that every command's member
// hint is looked up inside its own key's collection: runs of one key share
// a keyspace lookup, and the hints must stay aligned with them.
func TestPrefetchRuns(t *testing.T) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	var members [][]byte
	for i := range 1000 {
		members = append(members, fmt.Appendf(nil, "m%d", i))
	}
	keys := [][]byte{[]byte("set"), []byte("hash"), []byte("zset"), []byte("str"), []byte("missing")}
	if _, err := db.SAdd(keys[0], members); err != nil {
		t.Fatal(err)
	}
	var pairs [][]byte
	for _, m := range members {
		pairs = append(pairs, m, m)
	}
	if _, err := db.HSet(keys[1], pairs); err != nil {
		t.Fatal(err)
	}
	scores := make([]float64, len(members))
	if _, err := db.ZAdd(keys[2], ZAddFlags{}, scores, members); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetString(keys[3], []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	// want counts the hints Prefetch should queue: a member of a hashtable
	// collection whose own bucket is not empty.
	want := func(refs []PrefetchKey) int {
		n := 0
		for _, r := range refs {
			rec := db.keys.recs.Get(r.Key)
			if rec == nil || len(r.Args) < 3 {
				continue
			}
			switch v := db.keys.ref(rec).(type) {
			case *Set:
				if v.dict != nil && v.dict.bucketHead(str(r.Args[2])) != nil {
					n++
				}
			case *Hash:
				if v.dict != nil && v.dict.bucketHead(str(r.Args[2])) != nil {
					n++
				}
			case *ZSet:
				if v.dict != nil && v.dict.bucketHead(str(r.Args[len(r.Args)-1])) != nil {
					n++
				}
			}
		}
		return n
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		var refs []PrefetchKey
		for range 1 + r.IntN(20) {
			k := keys[r.IntN(len(keys))]
			if len(refs) > 0 && r.IntN(2) == 0 {
				k = refs[len(refs)-1].Key // a run of one key
			}
			args := [][]byte{[]byte("CMD"), k}
			if r.IntN(4) > 0 {
				args = append(args, members[r.IntN(len(members))])
			}
			refs = append(refs, PrefetchKey{Key: k, Args: args})
		}
		db.Prefetch(refs)
		if got, w := e.prefetch.warmed, want(refs); got != w {
			t.Fatalf("%d member hints queued for %q, want %d", got, refs, w)
		}
	}
}

// TestPrefetchKeepsNothing: Prefetch's scratch must not point into the
// keyspace afterwards, or a key deleted later keeps its value alive.
func TestPrefetchKeepsNothing(t *testing.T) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	for i := range 100 {
		if _, err := db.SAdd(fmt.Appendf(nil, "set%d", i), [][]byte{[]byte("m")}); err != nil {
			t.Fatal(err)
		}
	}
	var refs []PrefetchKey
	for i := range 100 {
		k := fmt.Appendf(nil, "set%d", i)
		refs = append(refs, PrefetchKey{Key: k, Args: [][]byte{[]byte("SADD"), k, []byte("m")}})
	}
	db.Prefetch(refs)
	p := &e.prefetch
	for i, k := range p.keys[:cap(p.keys)] {
		if k != nil {
			t.Fatalf("keys[%d] still holds %q", i, k)
		}
	}
}
