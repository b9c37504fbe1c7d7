package flat

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// checkTable verifies the table's structure: the directory names each
// segment over exactly its prefix's range, every key sits in the segment of
// its hash with its stored hash bits right as far as fp says, no empty slot
// lies between a key's home and its slot, and the counts add up.
func checkTable(t testing.TB, tab *Table) {
	t.Helper()
	if tab.segs == nil {
		if tab.count != 0 {
			t.Fatalf("no segments, count %d", tab.count)
		}
		return
	}
	if len(tab.dir) != 1<<tab.global {
		t.Fatalf("directory of %d entries at global depth %d", len(tab.dir), tab.global)
	}
	var depths [65]int32
	total := 0
	covered := 0
	for si := range tab.segs {
		s := &tab.segs[si]
		depths[s.depth]++
		if s.depth > tab.global {
			t.Fatalf("segment %d: depth %d > global %d", si, s.depth, tab.global)
		}
		start, n := tab.dirRange(s.depth, s.prefix)
		for j := start; j < start+n; j++ {
			if tab.dir[j] != uint32(si) {
				t.Fatalf("directory entry %d names %d, not segment %d (depth %d prefix %b)", j, tab.dir[j], si, s.depth, s.prefix)
			}
		}
		covered += n
		if int(s.fp) < int(tab.segBits)+fpSpare || s.fp > relBits {
			t.Fatalf("segment %d: %d hash bits right", si, s.fp)
		}
		m := len(s.slots) - 1
		count := 0
		for i, v := range s.slots {
			if v == 0 {
				continue
			}
			count++
			h := hashKey(tab.keyOf(Handle(v & handleMask)))
			if s.depth > 0 && h>>(64-s.depth) != s.prefix {
				t.Fatalf("segment %d holds a key of another prefix", si)
			}
			rel := (h << s.depth) >> relShift
			mask := fpMask(s.fp)
			if (v>>HandleBits)&mask != rel&mask {
				t.Fatalf("segment %d slot %d: stored hash bits %x, key's %x (fp %d)", si, i, v>>HandleBits, rel, s.fp)
			}
			home := int(rel >> (relBits - tab.segBits))
			for j := home; j != i; j = (j + 1) & m {
				if s.slots[j] == 0 {
					t.Fatalf("segment %d: empty slot %d between home %d and slot %d", si, j, home, i)
				}
			}
		}
		if count != int(s.count) {
			t.Fatalf("segment %d: count %d, %d slots full", si, s.count, count)
		}
		if s.count > tab.maxLoad() {
			t.Fatalf("segment %d: %d keys over the load limit", si, s.count)
		}
		total += count
	}
	if covered != len(tab.dir) {
		t.Fatalf("segments cover %d of %d directory entries", covered, len(tab.dir))
	}
	if total != tab.count {
		t.Fatalf("count %d, %d keys in segments", tab.count, total)
	}
	if depths != tab.depths {
		t.Fatalf("depth counts %v, want %v", tab.depths, depths)
	}
	if tab.global > 0 && depths[tab.global] == 0 {
		t.Fatalf("directory at depth %d with no segment that deep", tab.global)
	}
}

func keyName(i int) []byte { return fmt.Appendf(nil, "key:%d", i) }

func TestTableBasic(t *testing.T) {
	for _, bits := range []int{4, 6, DefaultSegmentBits} {
		t.Run(fmt.Sprint(bits), func(t *testing.T) {
			k := newKeyspace(bits)
			const n = 20000
			for i := 0; i < n; i++ {
				k.Set(keyName(i), 1, 0, 0, []byte(fmt.Sprint("v", i)))
			}
			checkTable(t, &k.table)
			if k.Len() != n {
				t.Fatalf("len %d", k.Len())
			}
			for i := 0; i < n; i++ {
				r := k.Get(keyName(i))
				if r == nil || string(r.Value()) != fmt.Sprint("v", i) {
					t.Fatalf("get %d: %q", i, r)
				}
			}
			if k.Get([]byte("absent")) != nil {
				t.Fatal("found an absent key")
			}
			// Overwrite: same count, new values, old records freed.
			for i := 0; i < n; i += 2 {
				k.Set(keyName(i), 2, 0, 0, []byte("new"))
			}
			if k.Len() != n {
				t.Fatalf("len %d after overwrites", k.Len())
			}
			grown := k.Stats()
			for i := 0; i < n; i++ {
				if !k.Delete(keyName(i)) {
					t.Fatalf("delete %d", i)
				}
				if i%997 == 0 {
					checkTable(t, &k.table)
				}
			}
			if k.Delete(keyName(0)) {
				t.Fatal("deleted twice")
			}
			checkTable(t, &k.table)
			st := k.Stats()
			t.Logf("segments %d, depth %d at %d keys; %d after emptying", grown.Table.Segments, grown.Table.GlobalDepth, n, st.Table.Segments)
			if st.Table.Segments != 1 || st.Table.GlobalDepth != 0 || st.Arena.Pages != 0 || st.Arena.Requested != 0 {
				t.Fatalf("emptied keyspace keeps %+v", st)
			}
		})
	}
}

func TestTableFindReplaceDeleteAt(t *testing.T) {
	k := newKeyspace(4)
	for i := 0; i < 500; i++ {
		k.Set(keyName(i), 0, 0, 0, nil)
	}
	h, p := k.table.Find(keyName(7))
	if h == 0 || k.table.Handle(p) != h {
		t.Fatal("find")
	}
	nh, buf := k.arena.Alloc(RecordSize(5, 1, false))
	PutRecord(buf, 0, 0, 0, keyName(7), []byte("x"))
	if old := k.table.Replace(p, nh); old != h {
		t.Fatal("replace returned the wrong handle")
	}
	k.free(h)
	if string(k.Get(keyName(7)).Value()) != "x" {
		t.Fatal("replace")
	}
	_, p = k.Find(keyName(9))
	k.DeleteAt(p)
	if k.Get(keyName(9)) != nil || k.Len() != 499 {
		t.Fatal("DeleteAt")
	}
	checkTable(t, &k.table)
}

func TestTableRehashOnDeepSplits(t *testing.T) {
	// 16-slot segments: 200k keys need depth ~15, past the 24-6-4 = 14
	// splits the stored hash bits allow, so splits re-read keys.
	k := newKeyspace(4)
	rehashed := false
	for i := 0; i < 200000; i++ {
		k.Set(keyName(i), 0, 0, 0, nil)
		if i%20000 == 0 {
			checkTable(t, &k.table)
		}
	}
	for si := range k.table.segs {
		if k.table.segs[si].fp > relBits-4 && k.table.segs[si].depth > 14 {
			rehashed = true
		}
	}
	checkTable(t, &k.table)
	if !rehashed {
		t.Fatal("no segment was rehashed")
	}
	for i := 0; i < 200000; i++ {
		if k.Get(keyName(i)) == nil {
			t.Fatalf("lost key %d", i)
		}
	}
}

func TestKeyspaceSetExpire(t *testing.T) {
	k := newKeyspace(4)
	k.Set([]byte("a"), 1, 9, 0, []byte("va"))
	k.SetRef([]byte("b"), 2, 8, 0, 42)
	r := k.SetExpire([]byte("a"), 5000)
	if r.Expire() != 5000 || string(r.Value()) != "va" || r.Clock() != 9 || r.Type() != 1 {
		t.Fatal("adding a deadline")
	}
	if k.Get([]byte("a")).Expire() != 5000 {
		t.Fatal("deadline not stored")
	}
	k.SetExpire([]byte("a"), 6000) // in place
	r = k.SetExpire([]byte("b"), 7000)
	if r.Ref() != 42 || r.Expire() != 7000 {
		t.Fatal("deadline on a reference record")
	}
	k.SetExpire([]byte("a"), 0)
	k.SetExpire([]byte("b"), 0)
	if k.Get([]byte("a")).HasExpire() || k.Get([]byte("b")).HasExpire() || k.Get([]byte("a")).Expire() != 0 {
		t.Fatal("removing deadlines")
	}
	if k.SetExpire([]byte("c"), 1) != nil {
		t.Fatal("deadline on an absent key")
	}
	st := k.Stats().Arena
	if want := int64(RecordSize(1, 2, false) + RefRecordSize(1, false)); st.Requested != want {
		t.Fatalf("requested %d, want %d", st.Requested, want)
	}
}

func TestKeyspaceCompact(t *testing.T) {
	k := NewKeyspace()
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 100000
	for i := 0; i < n; i++ {
		k.Set(keyName(i), 0, 0, 0, make([]byte, rng.IntN(40)))
	}
	for i := 0; i < n; i++ {
		if rng.IntN(10) < 8 {
			k.Delete(keyName(i))
		}
	}
	before := k.Stats().Arena
	for k.Compact(32<<10) > 0 {
	}
	after := k.Stats().Arena
	t.Logf("held %d KiB -> %d KiB for %d KiB requested", before.Held>>10, after.Held>>10, after.Requested>>10)
	if after.Pages > before.Pages/3 {
		t.Fatalf("pages %d -> %d", before.Pages, after.Pages)
	}
	checkTable(t, &k.table)
	live := 0
	k.ForEach(func(r Record) bool {
		live++
		if g := k.Get(r.Key()); &g[0] != &r[0] {
			t.Fatalf("key %q: index points elsewhere", r.Key())
		}
		return true
	})
	if live != k.Len() {
		t.Fatalf("%d records, len %d", live, k.Len())
	}
}

func TestTableClear(t *testing.T) {
	k := newKeyspace(4)
	for i := 0; i < 1000; i++ {
		k.Set(keyName(i), 0, 0, 0, nil)
	}
	k.Clear()
	if k.Len() != 0 || k.Get(keyName(1)) != nil || k.Stats().Bytes() != 0 {
		t.Fatalf("after Clear: len %d, %d bytes", k.Len(), k.Stats().Bytes())
	}
	k.Set(keyName(1), 0, 0, 0, nil)
	if k.Get(keyName(1)) == nil {
		t.Fatal("insert after Clear")
	}
	checkTable(t, &k.table)
}

func TestPrefetch(t *testing.T) {
	k := newKeyspace(5)
	if k.Prefetch([][]byte{[]byte("a")}) != 0 {
		t.Fatal("prefetch on an empty keyspace")
	}
	var keys [][]byte
	for i := 0; i < 1000; i++ {
		k.Set(keyName(i), 0, 0, 0, []byte("v"))
		keys = append(keys, keyName(i*2)) // half present
	}
	before := k.Stats()
	k.Prefetch(keys)
	if st := k.Stats(); st.Table != before.Table || st.Arena.Requested != before.Arena.Requested || k.Len() != 1000 {
		t.Fatal("prefetch changed the keyspace")
	}
	checkTable(t, &k.table)
}

func TestKeyspaceSetFromOwnViews(t *testing.T) {
	k := newKeyspace(4)
	k.Set([]byte("key"), 1, 0, 0, []byte("some value bytes"))
	r := k.Get([]byte("key"))
	k.Set(r.Key(), 2, 0, 0, r.Value()) // both views of the record being replaced
	r = k.Get([]byte("key"))
	if r.Type() != 2 || string(r.Value()) != "some value bytes" || k.Len() != 1 {
		t.Fatalf("after rewriting from views: type %d value %q", r.Type(), r.Value())
	}
	checkTable(t, &k.table)
}
