package engine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestStringsInRecordsAndObjects: strings up to inlineStringMax bytes are
// their record's value, longer ones objects; a string grown past the
// limit in place becomes one, and a same-length rewrite (INCR) stays in
// the record it had.
func TestStringsInRecordsAndObjects(t *testing.T) {
	e, _, _ := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	isRef := func(key string) bool {
		t.Helper()
		r := db.keys.recs.Get(b(key))
		if r == nil {
			t.Fatalf("%s is not stored", key)
		}
		return r.IsRef()
	}
	db.SetString(b("small"), b("v"), SetOptions{})
	db.SetString(b("edge"), bytes.Repeat([]byte("x"), inlineStringMax), SetOptions{})
	db.SetString(b("big"), bytes.Repeat([]byte("x"), inlineStringMax+1), SetOptions{})
	if isRef("small") || isRef("edge") || !isRef("big") {
		t.Fatalf("small in an object %v, %d bytes in an object %v, %d bytes in the record %v",
			isRef("small"), inlineStringMax, isRef("edge"), inlineStringMax+1, !isRef("big"))
	}
	if n, _ := db.Append(b("edge"), b("y")); n != inlineStringMax+1 || !isRef("edge") {
		t.Fatalf("APPEND past the limit: length %d, object %v", n, isRef("edge"))
	}
	if v, _, _ := db.Get(b("edge")); len(v) != inlineStringMax+1 || v[len(v)-1] != 'y' {
		t.Fatalf("APPEND past the limit lost bytes: %d", len(v))
	}
	db.SetString(b("n"), b("10"), SetOptions{})
	first := &db.keys.recs.Get(b("n"))[0]
	if v, err := db.IncrBy(b("n"), 5); v != 15 || err != nil {
		t.Fatalf("INCRBY: %d, %v", v, err)
	}
	if &db.keys.recs.Get(b("n"))[0] != first {
		t.Fatal("INCR to a value of the same length wrote a new record")
	}
	if enc := db.Peek(b("n")).Encoding(); enc != "int" {
		t.Fatalf("INCR result encoded %q", enc)
	}
	// SETBIT of a bit that already has the value changes nothing but the
	// encoding, as Redis's unsharing does.
	db.SetString(b("bits"), b("a"), SetOptions{})
	if old, changed, _ := db.SetBit(b("bits"), 1, 1); old != 1 || changed {
		t.Fatalf("SETBIT of a set bit: old %d, changed %v", old, changed)
	}
	if enc := db.Peek(b("bits")).Encoding(); enc != "raw" {
		t.Fatalf("after SETBIT the string is %q, want raw", enc)
	}
	if e.KeyspaceMemory().Objects != 2 {
		t.Fatalf("%d objects, want the two long strings", e.KeyspaceMemory().Objects)
	}
}

// TestStringWritesModel drives the string commands that change a value in
// place (APPEND, SETRANGE, SETBIT, INCRBY, INCRBYFLOAT, GETDEL, SET with
// GET, KEEPTTL and EX, EXPIRE, PERSIST, RENAME, COPY, DEL) with lengths
// around inlineStringMax, against a map as the model: after every command
// each key reads back as the model says, and the change records, once
// flushed, rebuild every value, so no store-back and no record is lost
// whether a string is in its record, an object, or moving between the two.
func TestStringWritesModel(t *testing.T) {
	e, _, _ := newTestEngine(t)
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	sink := newHSRecordSink()
	e.SetSink(sink)
	model := map[string][]byte{}
	keys := []string{"a", "b", "c", "d"}
	r := rand.New(rand.NewPCG(7, 8))
	length := func() int {
		switch r.IntN(4) {
		case 0:
			return r.IntN(40)
		case 1:
			return inlineStringMax - 20 + r.IntN(40)
		case 2:
			return r.IntN(300)
		}
		return r.IntN(2 * inlineStringMax)
	}
	value := func(n int) []byte {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte('a' + r.IntN(26))
		}
		return v
	}
	for step := range 20000 {
		k := keys[r.IntN(len(keys))]
		key := b(k)
		var op string
		switch r.IntN(12) {
		case 0, 1:
			op = "SET"
			v := value(length())
			db.SetString(key, v, SetOptions{KeepTTL: r.IntN(2) == 0})
			model[k] = v
		case 2:
			op = "APPEND"
			v := value(r.IntN(60))
			if _, err := db.Append(key, v); err == nil {
				model[k] = append(bytes.Clone(model[k]), v...)
			}
		case 3:
			op = "SETRANGE"
			off, v := r.IntN(inlineStringMax+100), value(1+r.IntN(30))
			if _, _, err := db.SetRange(key, int64(off), v); err == nil {
				m := bytes.Clone(model[k])
				if len(m) < off+len(v) {
					m = append(m, make([]byte, off+len(v)-len(m))...)
				}
				copy(m[off:], v)
				model[k] = m
			}
		case 4:
			op = "SETBIT"
			off := uint64(r.IntN(8 * (inlineStringMax + 100)))
			bit := r.IntN(2)
			if _, _, err := db.SetBit(key, off, bit); err == nil {
				m := bytes.Clone(model[k])
				if i := int(off / 8); len(m) <= i {
					m = append(m, make([]byte, i+1-len(m))...)
				}
				m[off/8] = m[off/8]&^(1<<(7-off%8)) | byte(bit)<<(7-off%8)
				model[k] = m
			}
		case 5:
			op = "INCRBY"
			if n, err := db.IncrBy(key, int64(r.IntN(2000)-1000)); err == nil {
				model[k] = strconv.AppendInt(nil, n, 10)
			}
		case 6:
			op = "INCRBYFLOAT"
			if v, err := db.IncrByFloat(key, b("1.5")); err == nil {
				model[k] = bytes.Clone(v)
			}
		case 7:
			op = "GETDEL"
			db.GetDel(key)
			delete(model, k)
		case 8:
			op = "SET GET EX"
			v := value(length())
			db.SetString(key, v, SetOptions{Get: true, ExpireAt: e.Now() + 1_000_000})
			model[k] = v
		case 9:
			op = "EXPIRE/PERSIST"
			if r.IntN(2) == 0 {
				db.SetExpire(key, e.Now()+1_000_000)
			} else {
				db.Persist(key)
			}
		case 10:
			op = "RENAME/COPY"
			dst := keys[r.IntN(len(keys))]
			if _, ok := model[k]; ok && dst != k {
				if r.IntN(2) == 0 {
					db.Rename(key, b(dst))
					model[dst] = model[k]
					delete(model, k)
				} else {
					db.CopyTo(key, db, b(dst), true)
					model[dst] = bytes.Clone(model[k])
				}
			}
		case 11:
			op = "DEL"
			db.UserDelete(key, false)
			delete(model, k)
		}
		for _, k := range keys {
			got, ok, err := db.Get(b(k))
			want, wantOK := model[k]
			if err != nil || ok != wantOK || !bytes.Equal(got, want) {
				t.Fatalf("step %d, after %s on %s: %s holds %d bytes (present %v, %v), want %d (present %v)",
					step, op, key, k, len(got), ok, err, len(want), wantOK)
			}
		}
		if step%97 == 0 {
			e.FlushChanges()
			for _, k := range keys {
				rec := sink.keys[hsSinkKey{0, k}]
				want, ok := model[k]
				if ok && (rec == nil || !bytes.Equal(rec.payload, want)) {
					t.Fatalf("step %d, after %s: the records give %s %s, want %d bytes", step, op, k,
						describePayload(rec), len(want))
				}
			}
		}
	}
}

func describePayload(v *hsSinkValue) string {
	if v == nil {
		return "nothing"
	}
	return fmt.Sprintf("%d bytes", len(v.payload))
}

// TestMemoryUsageAddsUpToTheKeyspace: MEMORY USAGE of every string key adds
// up to the keyspace's memory (slots in use and the index) within 10%, at
// sizes from a few keys to a table of many segments.
func TestMemoryUsageAddsUpToTheKeyspace(t *testing.T) {
	for _, n := range []int{1000, 20000, 200000} {
		e, _, _ := newTestEngine(t)
		e.Lock()
		db := e.DB(0)
		r := rand.New(rand.NewPCG(uint64(n), 9))
		for i := range n {
			db.SetString(fmt.Appendf(nil, "key:%d", i), bytes.Repeat([]byte("v"), 1+r.IntN(300)), SetOptions{})
		}
		sum := 0
		for i := range n {
			sum += db.KeyMemoryUsage(fmt.Appendf(nil, "key:%d", i))
		}
		live := e.keyspaceBytes()
		d := float64(sum)/float64(live) - 1
		t.Logf("%d keys: MEMORY USAGE sums to %d, the keyspace takes %d (%+.1f%%)", n, sum, live, 100*d)
		if d > 0.1 || d < -0.1 {
			t.Errorf("%d keys: MEMORY USAGE adds up to %d bytes, the keyspace takes %d (%+.1f%%)", n, sum, live, 100*d)
		}
		e.Unlock()
	}
}
