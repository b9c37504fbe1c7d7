package flat

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"unsafe"
)

// modelRec is what the model map holds per key.
type modelRec struct {
	typ    uint8
	val    string
	ref    uint64
	isRef  bool
	expire int64
	clock  uint32
}

// fuzzOps reads operations from the fuzzer's bytes, 0 once they run out.
type fuzzOps struct{ b []byte }

func (f *fuzzOps) next() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

// key names one of 256 keys of lengths 3 to 42.
func (f *fuzzOps) key() []byte {
	id, pad := f.next(), f.next()
	return fmt.Appendf(nil, "k%02x%s", id&63, bytes.Repeat([]byte{'x'}, int(pad>>6)*13))
}

// FuzzTable drives a Keyspace (16-slot segments, so splits, merges and
// directory changes happen every few operations) with random operations
// and compares it with a Go map after each: values and metadata, SCAN's
// guarantee for the keys present through a whole scan, random picks, and
// the arena's bookkeeping, including that no two live records share a byte.
func FuzzTable(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add(bytes.Repeat([]byte{0, 7, 1, 40}, 100))
	f.Add(bytes.Repeat([]byte{9, 200, 3, 4, 10, 90, 4, 4, 6, 1}, 30))
	seed := rand.New(rand.NewPCG(11, 12))
	for range 4 {
		b := make([]byte, 600)
		for i := range b {
			b[i] = byte(seed.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(runTableOps)
}

// TestTableOpsRandom runs FuzzTable's body on random inputs, so plain
// `go test` covers more than the seed corpus.
func TestTableOpsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	runs := 300
	if testing.Short() {
		runs = 30
	}
	for range runs {
		b := make([]byte, 200+rng.IntN(3000))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		runTableOps(t, b)
	}
}

func runTableOps(t *testing.T, data []byte) {
	ops := &fuzzOps{b: data}
	k := newKeyspace(4)
	model := map[string]modelRec{}
	rng := rand.New(rand.NewPCG(uint64(len(data)), 1))
	var cursor uint64
	scanning := false
	stable := map[string]bool{} // present since the scan began
	seen := map[string]bool{}
	bulk := 0
	for step := 0; len(ops.b) > 0 && step < 2000; step++ {
		op := ops.next() % 12
		switch op {
		case 0, 1: // set a value
			key := ops.key()
			n := int(ops.next())
			if n >= 250 {
				n = MaxSmall + n*7 // a block of its own
			}
			val := bytes.Repeat([]byte{ops.next()}, n)
			m := modelRec{typ: ops.next(), val: string(val), clock: uint32(ops.next()) << 16}
			if op == 1 {
				m.expire = int64(ops.next()) + 1
			}
			k.Set(key, m.typ, m.clock, m.expire, val)
			model[string(key)] = m
		case 2: // set a reference
			key := ops.key()
			m := modelRec{typ: 200, isRef: true, ref: uint64(ops.next()) << 50}
			k.SetRef(key, m.typ, 0, 0, m.ref)
			model[string(key)] = m
		case 3: // delete
			key := ops.key()
			_, in := model[string(key)]
			if k.Delete(key) != in {
				t.Fatalf("delete %q: model has it %v", key, in)
			}
			delete(model, string(key))
			delete(stable, string(key))
		case 4: // get
			key := ops.key()
			r := k.Get(key)
			m, in := model[string(key)]
			if (r != nil) != in {
				t.Fatalf("get %q: found %v, model %v", key, r != nil, in)
			}
			if in {
				checkRecord(t, r, key, m)
			}
		case 5: // a scan step
			if !scanning {
				scanning = true
				clear(stable)
				clear(seen)
				for key := range model {
					stable[key] = true
				}
			}
			cursor = k.Scan(cursor, 1+int(ops.next()%8), func(r Record) {
				if _, in := model[string(r.Key())]; !in {
					t.Fatalf("scan returned %q, not in the model", r.Key())
				}
				seen[string(r.Key())] = true
			})
			if cursor == 0 {
				for key := range stable {
					if !seen[key] {
						t.Fatalf("scan missed %q, present throughout", key)
					}
				}
				scanning = false
			}
		case 6: // random pick
			r := k.Random(rng)
			if (r == nil) != (len(model) == 0) {
				t.Fatalf("random: %v with %d keys", r == nil, len(model))
			}
			if r != nil {
				if _, in := model[string(r.Key())]; !in {
					t.Fatalf("random returned %q, not in the model", r.Key())
				}
			}
		case 7: // compaction step
			k.Compact(int(ops.next()) * 64)
		case 8: // deadline
			key := ops.key()
			at := int64(ops.next())
			r := k.SetExpire(key, at)
			m, in := model[string(key)]
			if (r != nil) != in {
				t.Fatalf("expire %q: found %v, model %v", key, r != nil, in)
			}
			if in {
				m.expire = at
				model[string(key)] = m
				checkRecord(t, r, key, m)
			}
		case 9: // many new keys: splits (a few thousand at most, so the checks stay quick)
			for range min(int(ops.next()), 2000-len(model)) {
				key := fmt.Appendf(nil, "bulk:%d", bulk)
				bulk++
				k.Set(key, 1, 0, 0, key)
				model[string(key)] = modelRec{typ: 1, val: string(key)}
			}
		case 10: // delete many: merges
			keep := int(ops.next())
			for key := range model {
				if rng.IntN(256) >= keep {
					k.Delete([]byte(key))
					delete(model, key)
					delete(stable, key)
				}
			}
		case 11: // sample
			for _, r := range k.Sample(rng, 1+int(ops.next()%8), nil) {
				if _, in := model[string(r.Key())]; !in {
					t.Fatalf("sample returned %q, not in the model", r.Key())
				}
			}
		}
		if k.Len() != len(model) {
			t.Fatalf("step %d op %d: len %d, model %d", step, op, k.Len(), len(model))
		}
		if step%256 == 0 {
			checkKeyspace(t, k, model)
		}
	}
	checkKeyspace(t, k, model)
}

func checkRecord(t *testing.T, r Record, key []byte, m modelRec) {
	t.Helper()
	if !bytes.Equal(r.Key(), key) || r.Type() != m.typ || r.Expire() != m.expire || r.IsRef() != m.isRef {
		t.Fatalf("%q: record type %d expire %d ref %v, model %+v", key, r.Type(), r.Expire(), r.IsRef(), m)
	}
	if m.isRef && r.Ref() != m.ref || !m.isRef && (string(r.Value()) != m.val || r.Clock() != m.clock) {
		t.Fatalf("%q: record's value differs from the model", key)
	}
}

// checkKeyspace compares every key with the model and checks the table's
// structure, the arena's bookkeeping, and that live records' bytes are
// disjoint.
func checkKeyspace(t *testing.T, k *Keyspace, model map[string]modelRec) {
	t.Helper()
	checkTable(t, &k.table)
	live := map[Handle]int{}
	type span struct{ lo, hi uintptr }
	var spans []span
	var requested int64
	for key, m := range model {
		h, _ := k.table.Find([]byte(key))
		if h == 0 {
			t.Fatalf("%q missing", key)
		}
		if _, dup := live[h]; dup {
			t.Fatalf("two keys share handle %#x", uint64(h))
		}
		r := k.Record(h)
		checkRecord(t, r, []byte(key), m)
		live[h] = r.Len()
		requested += int64(r.Len())
		b := k.arena.Bytes(h)
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		spans = append(spans, span{lo, lo + uintptr(len(b))})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			t.Fatal("two live records overlap in memory")
		}
	}
	checkArena(t, &k.arena, live)
	if st := k.arena.Stats(); st.Requested != requested {
		t.Fatalf("arena counts %d bytes requested, records hold %d", st.Requested, requested)
	}
}
