package engine

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Lists against a model under random operations, and restored from the
// records they wrote: replayed, with middle edits, and with gaps refused.

// listModelOp runs one random operation on the engine and on a model of
// two keys, checking replies.
func listModelOp(t *testing.T, r *rand.Rand, db *DB, model map[string][]string, step int) string {
	t.Helper()
	keys := []string{"k1", "k2"}
	key := keys[r.IntN(2)]
	m := model[key]
	val := func() string {
		switch x := r.IntN(20); {
		case x == 0:
			return strings.Repeat("L", listChunkMax+r.IntN(300))
		case x < 4:
			return strings.Repeat("m", r.IntN(2000))
		case x < 8 || len(m) == 0:
			return fmt.Sprintf("v%d", r.IntN(6))
		default:
			return m[r.IntN(len(m))]
		}
	}
	idx := func() int64 {
		if len(m) == 0 {
			return int64(r.IntN(3) - 1)
		}
		i := int64(r.IntN(len(m)+4)) - 2
		if r.IntN(2) == 0 {
			i -= int64(len(m))
		}
		return i
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d on %s: %s", step, key, fmt.Sprintf(format, args...))
	}
	switch op := r.IntN(10); op {
	case 0, 1:
		n := 1 + r.IntN(40)
		if r.IntN(5) == 0 {
			n = 1 + r.IntN(600)
		}
		vals := make([]string, n)
		for i := range vals {
			vals[i] = val()
		}
		left := op == 0
		got, _ := db.ListPush([]byte(key), listArgs(vals...), left, false)
		for _, v := range vals {
			if left {
				m = append([]string{v}, m...)
			} else {
				m = append(m, v)
			}
		}
		if got != len(m) {
			fail("push returned %d, want %d", got, len(m))
		}
	case 2:
		left := r.IntN(2) == 0
		count := 1 + r.IntN(5)
		if r.IntN(10) == 0 {
			count = 1 + r.IntN(len(m)+3)
		}
		got, deleted, _ := db.ListPop([]byte(key), left, count)
		count = min(count, len(m))
		var want []string
		for i := 0; i < count; i++ {
			if left {
				want = append(want, m[0])
				m = m[1:]
			} else {
				want = append(want, m[len(m)-1])
				m = m[:len(m)-1]
			}
		}
		if !slices.Equal(listStrs(got), want) || deleted != (count > 0 && len(m) == 0) {
			fail("pop %d: got %d elements (deleted %v), want %d", count, len(got), deleted, len(want))
		}
	case 3:
		i, v := idx(), val()
		err := db.ListSet([]byte(key), i, []byte(v))
		j := i
		if j < 0 {
			j += int64(len(m))
		}
		switch {
		case len(m) == 0:
			if err != ErrNoSuchKey {
				fail("LSET on a missing key: %v", err)
			}
		case j < 0 || j >= int64(len(m)):
			if err != ErrIndexRange {
				fail("LSET %d of %d: %v", i, len(m), err)
			}
		default:
			m[j] = v
		}
	case 4:
		pivot, v, after := val(), val(), r.IntN(2) == 0
		got, _ := db.ListInsert([]byte(key), after, []byte(pivot), []byte(v))
		at := slices.Index(m, pivot)
		switch {
		case len(m) == 0:
			if got != 0 {
				fail("LINSERT on a missing key: %d", got)
			}
		case at < 0:
			if got != -1 {
				fail("LINSERT without pivot: %d", got)
			}
		default:
			if after {
				at++
			}
			m = slices.Insert(m, at, v)
			if got != len(m) {
				fail("LINSERT returned %d, want %d", got, len(m))
			}
		}
	case 5:
		count := int64(r.IntN(7) - 3)
		v := val()
		got, deleted, _ := db.ListRem([]byte(key), count, []byte(v))
		want := 0
		if count >= 0 {
			for i := 0; i < len(m); i++ {
				if m[i] == v && (count == 0 || int64(want) < count) {
					m = slices.Delete(m, i, i+1)
					i--
					want++
				}
			}
		} else {
			for i := len(m) - 1; i >= 0; i-- {
				if m[i] == v && int64(want) < -count {
					m = slices.Delete(m, i, i+1)
					want++
				}
			}
		}
		if got != want || deleted != (want > 0 && len(m) == 0) {
			fail("LREM %d %q removed %d (deleted %v), want %d", count, v, got, deleted, want)
		}
	case 6:
		if r.IntN(3) != 0 { // trims are drastic: rarer than the rest
			return "skip"
		}
		start, stop := idx(), idx()
		if r.IntN(2) == 0 {
			start, stop = int64(r.IntN(3)), int64(-1-r.IntN(3))
		}
		found, deleted, _ := db.ListTrim([]byte(key), start, stop)
		l := &List{n: len(m)}
		from, n := l.RangeBounds(start, stop)
		m = m[from : from+n]
		if found != (l.n > 0) || deleted != (l.n > 0 && n == 0) {
			fail("LTRIM %d %d: found %v deleted %v", start, stop, found, deleted)
		}
	case 7:
		dst := keys[r.IntN(2)]
		fromLeft, toLeft := r.IntN(2) == 0, r.IntN(2) == 0
		v, _, _ := db.ListMove([]byte(key), []byte(dst), fromLeft, toLeft)
		if len(m) == 0 {
			if v != nil {
				fail("move from an empty key returned %q", v)
			}
			break
		}
		var e string
		if fromLeft {
			e, m = m[0], m[1:]
		} else {
			e, m = m[len(m)-1], m[:len(m)-1]
		}
		model[key] = m
		d := model[dst]
		if toLeft {
			d = append([]string{e}, d...)
		} else {
			d = append(d, e)
		}
		model[dst] = d
		m = model[key]
		if v == nil || string(v) != e { // nil would read as "no element"
			fail("move returned %.20q, want %.20q", v, e)
		}
	case 8:
		i := idx()
		l, _ := db.ListRead([]byte(key))
		j := i
		if j < 0 {
			j += int64(len(m))
		}
		if l == nil {
			if len(m) != 0 {
				fail("list missing")
			}
			break
		}
		v, ok := l.Index(i)
		if ok != (j >= 0 && j < int64(len(m))) || (ok && string(v) != m[j]) {
			fail("LINDEX %d: %.20q %v", i, v, ok)
		}
		start, stop := idx(), idx()
		from, n := l.RangeBounds(start, stop)
		var got []string
		l.Each(from, n, false, func(v []byte) { got = append(got, string(v)) })
		lm := &List{n: len(m)}
		wf, wn := lm.RangeBounds(start, stop)
		if !slices.Equal(got, m[wf:wf+wn]) {
			fail("LRANGE %d %d differs", start, stop)
		}
	case 9:
		v := val()
		l, _ := db.ListRead([]byte(key))
		if l == nil {
			break
		}
		got := l.Positions([]byte(v), 1, 0, 0)
		var want []int64
		for i, e := range m {
			if e == v {
				want = append(want, int64(i))
			}
		}
		if !slices.Equal(got, want) {
			fail("LPOS %q = %v, want %v", v, got, want)
		}
	}
	model[key] = m
	return ""
}

// Random operations against a []string model; the change records, replayed
// through the Loader, rebuild the same lists at the same positions.
func TestListModelAndReplay(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			e, rec := newListEngine(t)
			db := e.DB(0)
			store := listStore{}
			model := map[string][]string{}
			r := rand.New(rand.NewPCG(seed, 99))
			for step := 0; step < 1500; step++ {
				listModelOp(t, r, db, model, step)
				store.apply(rec.take())
				if step%100 == 99 || step == 1499 {
					compareReplayedLists(t, db, store, model)
				}
			}
		})
	}
}

// compareReplayedLists checks every model key in db and in an engine
// loaded from store: same elements, same positions.
func compareReplayedLists(t *testing.T, db *DB, store listStore, model map[string][]string) {
	t.Helper()
	e2 := store.load(t)
	e2.Lock()
	defer e2.Unlock()
	for key, want := range model {
		l, _ := db.ListWrite([]byte(key))
		l2, err := e2.DB(db.id).ListWrite([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			if l != nil || l2 != nil {
				t.Fatalf("%s: empty list still present (live %v, replayed %v)", key, l != nil, l2 != nil)
			}
			continue
		}
		if l == nil || l2 == nil {
			t.Fatalf("%s: live %v, replayed %v", key, l != nil, l2 != nil)
		}
		checkListInvariants(t, l, want)
		checkListInvariants(t, l2, want)
		if l.head != l2.head {
			t.Fatalf("%s: head %d live, %d replayed", key, l.head, l2.head)
		}
	}
}

// Edits in the middle persist only the shifted side and survive replay,
// also with a deadline on the key and after a whole-key rewrite.
func TestListMiddleEditsReplay(t *testing.T) {
	e, rec := newListEngine(t)
	db := e.DB(0)
	store := listStore{}
	var model []string
	for i := 0; i < 2000; i++ {
		model = append(model, fmt.Sprintf("e%d", i%50))
	}
	db.ListPush(b("l"), listArgs(model...), false, false)
	db.SetExpire(b("l"), e.Now()+3_600_000)
	store.apply(rec.take())

	db.ListInsert(b("l"), false, b("e10"), b("new"))
	model = slices.Insert(model, 10, "new")
	if recs := rec.take(); len(recs) != 11 {
		t.Fatalf("LINSERT at index 10 wrote %d records, want 11", len(recs))
	} else {
		store.apply(recs)
	}
	n, _, _ := db.ListRem(b("l"), 3, b("e20"))
	for k := 0; k < 3; k++ {
		i := slices.Index(model, "e20")
		model = slices.Delete(model, i, i+1)
	}
	recs := rec.take()
	// Removing at 21, 71 and 121 keeps the long tail run in place: the
	// 119 kept elements before it shift (119 records) and the three
	// positions at the head the list no longer spans are deleted (one
	// range record).
	if n != 3 || len(recs) != 120 {
		t.Fatalf("LREM 3 removed %d and wrote %d records", n, len(recs))
	}
	store.apply(recs)
	db.ListTrim(b("l"), 5, 1000)
	model = model[5:1001]
	store.apply(rec.take())
	db.ListRem(b("l"), 0, b("e7"))
	model = slices.DeleteFunc(model, func(s string) bool { return s == "e7" })
	store.apply(rec.take())
	compareReplayedLists(t, db, store, map[string][]string{"l": model})
	e2 := store.load(t)
	e2.Lock()
	defer e2.Unlock()
	if at := e2.DB(0).Expire(b("l")); at != db.Expire(b("l")) || at == 0 {
		t.Fatalf("deadline after replay %d, want %d", at, db.Expire(b("l")))
	}
}

func TestListLoadRejectsGaps(t *testing.T) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	ld := e.Loader()
	if err := ld.LoadValue(0, b("l"), TypeList, []byte{9}); err == nil {
		t.Fatal("a list record of an unknown format loaded")
	}
	if err := ld.LoadValue(0, b("l"), TypeList, []byte{listFormat}); err != nil {
		t.Fatal(err)
	}
	p1, p3 := listPosItem(1), listPosItem(3)
	if err := ld.LoadItem(0, b("l"), p1[:], b("a")); err != nil {
		t.Fatal(err)
	}
	if err := ld.LoadItem(0, b("l"), p3[:], b("c")); err == nil {
		t.Fatal("a gap in the positions loaded")
	}
	if err := ld.LoadItem(0, b("l"), []byte("short"), b("c")); err == nil {
		t.Fatal("a malformed item key loaded")
	}
	// Positions order as their item keys do, negative ones first.
	keys := [][8]byte{listPosItem(math.MinInt64), listPosItem(-2), listPosItem(-1), listPosItem(0), listPosItem(1), listPosItem(math.MaxInt64)}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1][:], keys[i][:]) >= 0 {
			t.Fatalf("item key %d does not sort after %d", i, i-1)
		}
	}
}
