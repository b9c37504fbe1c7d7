package engine

import "testing"

// An empty element is a value (issue 20): the calls that answer nil for an
// absent key must answer a non-nil empty slice for "", or the commands
// built on them reply null (and a blocked BLMOVE waits on after moving it).

func TestListMoveEmptyElement(t *testing.T) {
	e, _ := newListEngine(t)
	db := e.DB(0)
	for _, tc := range []struct {
		dst              string
		fromLeft, toLeft bool
	}{{"dst", true, true}, {"dst", false, true}, {"dst", true, false}, {"src", false, true}, {"src", true, false}} {
		db.Delete(b("src"))
		db.Delete(b("dst"))
		db.ListPush(b("src"), listArgs(""), false, false)
		v, _, err := db.ListMove(b("src"), b(tc.dst), tc.fromLeft, tc.toLeft)
		if v == nil || len(v) != 0 || err != nil {
			t.Errorf("%+v: ListMove of \"\" returned %#v, %v; want []byte{}", tc, v, err)
		}
		if l := listMust(t, db, tc.dst); l.Len() != 1 {
			t.Errorf("%+v: %s holds %d elements, want 1", tc, tc.dst, l.Len())
		}
	}
	if v, _, _ := db.ListMove(b("nosuch"), b("dst"), true, true); v != nil {
		t.Errorf("ListMove from a missing key returned %#v", v)
	}
}

func TestSPopEmptyMember(t *testing.T) {
	e := New(Options{})
	e.Lock()
	defer e.Unlock()
	db := e.DB(0)
	db.SAdd(b("s"), [][]byte{b("")})
	m, removed, err := db.SPop(b("s"))
	if m == nil || len(m) != 0 || !removed || err != nil {
		t.Fatalf("SPop of {\"\"} returned %#v, %v, %v; want []byte{}, true", m, removed, err)
	}
	if m, _, _ := db.SPop(b("s")); m != nil {
		t.Fatalf("SPop of a missing key returned %#v", m)
	}
}
