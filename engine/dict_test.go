package engine

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// checkDict compares d against the reference map: size, every key found
// with its value, and ForEach visiting exactly the reference's keys.
func checkDict(t *testing.T, d *Dict[int], ref map[string]int) {
	t.Helper()
	if d.Len() != len(ref) {
		t.Fatalf("Len = %d, want %d", d.Len(), len(ref))
	}
	for k, v := range ref {
		got := d.Get(k)
		if got == nil || *got != v {
			t.Fatalf("Get(%q) = %v, want %d", k, got, v)
		}
	}
	seen := map[string]bool{}
	d.ForEach(func(k string, v *int) bool {
		if seen[k] {
			t.Fatalf("ForEach visited %q twice", k)
		}
		seen[k] = true
		if ref[k] != *v {
			t.Fatalf("ForEach: %q = %d, want %d", k, *v, ref[k])
		}
		return true
	})
	if len(seen) != len(ref) {
		t.Fatalf("ForEach visited %d keys, want %d", len(seen), len(ref))
	}
}

func TestDictInsertFindDelete(t *testing.T) {
	d := NewDict[int]()
	ref := map[string]int{}
	if _, ok := d.Delete("nosuch"); ok {
		t.Fatal("Delete on an empty dict reported a key")
	}
	if d.Has("nosuch") || d.Get("nosuch") != nil {
		t.Fatal("empty dict has a key")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sawRehash := false
	for i := 0; i < 20000; i++ {
		k := "k" + strconv.Itoa(rng.IntN(3000))
		switch rng.IntN(3) {
		case 0, 1:
			stored, v, created := d.Insert(k)
			_, existed := ref[k]
			if created == existed {
				t.Fatalf("Insert(%q) created=%v, key existed=%v", k, created, existed)
			}
			if stored != k {
				t.Fatalf("Insert(%q) stored %q", k, stored)
			}
			*v = i
			ref[k] = i
		case 2:
			old, ok := d.Delete(k)
			want, existed := ref[k]
			if ok != existed || (ok && old != want) {
				t.Fatalf("Delete(%q) = %d, %v; want %d, %v", k, old, ok, want, existed)
			}
			delete(ref, k)
		}
		if d.rehashing() {
			sawRehash = true
		}
		if i%997 == 0 {
			checkDict(t, d, ref)
		}
	}
	checkDict(t, d, ref)
	if !sawRehash {
		t.Fatal("the workload never rehashed")
	}
	d.Clear()
	checkDict(t, d, map[string]int{})
	if _, _, created := d.Insert("again"); !created {
		t.Fatal("Insert after Clear did not create")
	}
}

func TestDictInsertClonesKey(t *testing.T) {
	d := NewDict[int]()
	buf := []byte("network-buffer")
	stored, _, _ := d.Insert(str(buf))
	copy(buf, "XXXXXXXXXXXXXX")
	if stored != "network-buffer" || !d.Has("network-buffer") {
		t.Fatalf("stored key changed with the caller's buffer: %q", stored)
	}
	k, v := d.Find("network-buffer")
	if k != "network-buffer" || v == nil {
		t.Fatalf("Find = %q, %v", k, v)
	}
}

func TestDictGrowShrink(t *testing.T) {
	d := NewDict[int]()
	const n = 10000
	for i := 0; i < n; i++ {
		_, v, _ := d.Insert(strconv.Itoa(i))
		*v = i
	}
	// Lookups drive the incremental rehash to its end.
	for d.rehashing() {
		d.Has("x")
	}
	big, _ := d.Buckets()
	if big < n {
		t.Fatalf("table has %d buckets for %d keys", big, n)
	}
	for i := 0; i < n-10; i++ {
		if _, ok := d.Delete(strconv.Itoa(i)); !ok {
			t.Fatalf("Delete(%d) missed", i)
		}
	}
	for i := 0; i < 1000 && d.rehashing(); i++ {
		d.Has("x")
	}
	small, _ := d.Buckets()
	if small >= big/64 {
		t.Fatalf("table did not shrink: %d buckets for %d keys (was %d)", small, d.Len(), big)
	}
	ref := map[string]int{}
	for i := n - 10; i < n; i++ {
		ref[strconv.Itoa(i)] = i
	}
	checkDict(t, d, ref)
	// Deleting everything frees the tables.
	for k := range ref {
		d.Delete(k)
	}
	if a, b := d.Buckets(); a != 0 || b != 0 || d.rehashing() {
		t.Fatalf("empty dict keeps %d+%d buckets (rehashing %v)", a, b, d.rehashing())
	}
	d.Insert("back")
	if size, _ := d.Buckets(); size != dictInitialSize || !d.Has("back") {
		t.Fatalf("refilled dict has %d buckets", size)
	}
}

// TestDictScanGuarantee: every key present for the whole scan is returned
// at least once, while the table grows and shrinks (and is caught in the
// middle of rehashing) between calls.
func TestDictScanGuarantee(t *testing.T) {
	rehashedSeeds := 0
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		d := NewDict[int]()
		present := map[string]bool{}
		next := 0
		add := func() {
			k := "key:" + strconv.Itoa(next)
			next++
			d.Insert(k)
			present[k] = true
		}
		for i := rng.IntN(2000); i > 0; i-- {
			add()
		}
		// stable: keys that exist now and will never be deleted.
		stable := map[string]bool{}
		var deletable []string
		for k := range present {
			if rng.IntN(2) == 0 {
				stable[k] = true
			} else {
				deletable = append(deletable, k)
			}
		}
		seen := map[string]bool{}
		cursor := uint64(0)
		calls, sawRehash := 0, false
		for {
			cursor = d.Scan(cursor, func(k string, _ *int) { seen[k] = true })
			calls++
			if cursor == 0 {
				break
			}
			if calls > 1_000_000 {
				t.Fatalf("seed %d: scan did not terminate", seed)
			}
			// Between calls: a burst that grows or shrinks the table.
			switch rng.IntN(4) {
			case 0:
				for i := rng.IntN(500); i > 0 && len(present) < 4000; i-- {
					add()
				}
			case 1:
				for i := rng.IntN(500); i > 0 && len(deletable) > 0; i-- {
					j := rng.IntN(len(deletable))
					d.Delete(deletable[j])
					delete(present, deletable[j])
					deletable[j] = deletable[len(deletable)-1]
					deletable = deletable[:len(deletable)-1]
				}
			case 2:
				d.Has("step") // advance an ongoing rehash by one step
			}
			if d.rehashing() {
				sawRehash = true
			}
		}
		for k := range stable {
			if !seen[k] {
				t.Fatalf("seed %d: key %q present for the whole scan was never returned", seed, k)
			}
		}
		for k := range seen {
			if !isDeletedOrAdded(k, next) {
				t.Fatalf("seed %d: scan returned unknown key %q", seed, k)
			}
		}
		if sawRehash {
			rehashedSeeds++
		}
	}
	if rehashedSeeds < 10 {
		t.Fatalf("only %d of 40 scans saw the table rehashing between calls", rehashedSeeds)
	}
}

// isDeletedOrAdded reports whether k is one of the keys the test created.
func isDeletedOrAdded(k string, next int) bool {
	n, err := strconv.Atoi(k[len("key:"):])
	return err == nil && n < next
}

// TestDictScanWhileRehashing pins the case where a scan call lands while
// the table is between two sizes, growing and shrinking.
func TestDictScanWhileRehashing(t *testing.T) {
	for _, grow := range []bool{true, false} {
		d := NewDict[int]()
		n := 64
		if !grow {
			n = 4096
		}
		for i := 0; i < n; i++ {
			d.Insert(strconv.Itoa(i))
		}
		for d.rehashing() {
			d.Has("x")
		}
		want := map[string]bool{}
		if grow {
			for i := 0; i < n; i++ {
				want[strconv.Itoa(i)] = true
			}
			for i := n; d.Len() <= n; i++ { // crossing the load factor starts a grow
				d.Insert(strconv.Itoa(i))
			}
		} else {
			for i := 0; i < n; i++ {
				if i%100 == 0 {
					want[strconv.Itoa(i)] = true
					continue
				}
				d.Delete(strconv.Itoa(i))
				if d.rehashing() {
					break
				}
			}
			d.ForEach(func(k string, _ *int) bool {
				if i, _ := strconv.Atoi(k); i%100 == 0 {
					want[k] = true
				}
				return true
			})
		}
		if !d.rehashing() {
			t.Fatalf("grow=%v: the table is not rehashing", grow)
		}
		seen := map[string]bool{}
		cursor := uint64(0)
		for {
			cursor = d.Scan(cursor, func(k string, _ *int) { seen[k] = true })
			if cursor == 0 {
				break
			}
		}
		for k := range want {
			if !seen[k] {
				t.Fatalf("grow=%v: key %q missed by a scan over a rehashing table", grow, k)
			}
		}
	}
}

func TestDictScanEmpty(t *testing.T) {
	d := NewDict[int]()
	if c := d.Scan(12345, func(string, *int) { t.Fatal("visited a key of an empty dict") }); c != 0 {
		t.Fatalf("Scan of an empty dict returned cursor %d", c)
	}
}

func TestNextCursor(t *testing.T) {
	// With 8 buckets (mask 7) the cursor walks the buckets in reverse
	// binary order: 0 4 2 6 1 5 3 7 and back to 0.
	want := []uint64{4, 2, 6, 1, 5, 3, 7, 0}
	c := uint64(0)
	for i, w := range want {
		c = nextCursor(c, 7)
		if c != w {
			t.Fatalf("step %d: cursor %d, want %d", i, c, w)
		}
	}
	if c := nextCursor(^uint64(0), 3); c != 0 {
		t.Fatalf("cursor past the last bucket: %d, want 0", c)
	}
}

func TestDictRandomKey(t *testing.T) {
	d := NewDict[int]()
	if _, ok := d.RandomKey(); ok {
		t.Fatal("RandomKey of an empty dict")
	}
	d.Insert("only")
	for i := 0; i < 10; i++ {
		if k, ok := d.RandomKey(); !ok || k != "only" {
			t.Fatalf("RandomKey = %q, %v", k, ok)
		}
	}
	const n = 50
	for i := 0; i < n; i++ {
		d.Insert(strconv.Itoa(i))
	}
	counts := map[string]int{}
	for i := 0; i < 20000; i++ {
		k, ok := d.RandomKey()
		if !ok || !d.Has(k) {
			t.Fatalf("RandomKey returned %q, %v", k, ok)
		}
		counts[k]++
	}
	if len(counts) != n+1 {
		t.Fatalf("RandomKey reached %d of %d keys", len(counts), n+1)
	}
	// While rehashing both tables are sampled.
	d2 := NewDict[int]()
	for i := 0; i < 1000; i++ {
		d2.Insert(strconv.Itoa(i))
	}
	for d2.rehashing() {
		d2.Has("x")
	}
	for i := 1000; !d2.rehashing(); i++ {
		d2.Insert(strconv.Itoa(i))
	}
	for i := 0; i < 1000; i++ {
		k, ok := d2.RandomKey()
		if !ok || !d2.Has(k) {
			t.Fatalf("RandomKey while rehashing returned %q, %v", k, ok)
		}
	}
}
