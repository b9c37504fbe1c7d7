package tests

import (
	"testing"

	"github.com/revolver-db/revolver/resp"
)

func bulk(s string) resp.Value   { return resp.Value{Kind: resp.KindBulk, Str: s} }
func integer(n int64) resp.Value { return resp.Value{Kind: resp.KindInt, Int: n} }
func arrayOf(kind resp.Kind, elems ...resp.Value) resp.Value {
	return resp.Value{Kind: kind, Elems: elems}
}
func bulks(kind resp.Kind, ss ...string) resp.Value {
	v := resp.Value{Kind: kind}
	for _, s := range ss {
		v.Elems = append(v.Elems, bulk(s))
	}
	return v
}

// TestCompareReplies pins what each differential mode tells apart: every
// "differ" case here passed the unordered compare before pairs and scalar
// values were kept.
func TestCompareReplies(t *testing.T) {
	a := resp.KindArray
	cases := []struct {
		name       string
		mode       string
		want, got  resp.Value
		shouldDiff bool
	}{
		{"pairs reordered", "&", bulks(a, "f1", "v1", "f2", "v2"), bulks(a, "f2", "v2", "f1", "v1"), false},
		{"values swapped between fields", "&", bulks(a, "f1", "v1", "f2", "v2"), bulks(a, "f1", "v2", "f2", "v1"), true},
		{"field and value swapped", "&", bulks(a, "f1", "v1"), bulks(a, "v1", "f1"), true},
		{"integer under ~", "~", integer(1), integer(2), true},
		{"error text under ~", "~", resp.Value{Kind: resp.KindError, Str: "ERR a"}, resp.Value{Kind: resp.KindError, Str: "ERR b"}, true},
		{"set reordered", "~", bulks(a, "a", "b", "c"), bulks(a, "c", "a", "b"), false},
		{"set member changed", "~", bulks(a, "a", "b", "c"), bulks(a, "a", "b", "d"), true},
		{"set with a duplicate", "~", bulks(a, "a", "b", "b"), bulks(a, "a", "a", "b"), true},
		{"bulk against simple string", "~", bulks(a, "OK"), arrayOf(a, resp.Value{Kind: resp.KindSimple, Str: "OK"}), true},
		{"scan page reordered", "~", arrayOf(a, bulk("0"), bulks(a, "k1", "k2")), arrayOf(a, bulk("0"), bulks(a, "k2", "k1")), false},
		{"scan cursor differs", "~", arrayOf(a, bulk("0"), bulks(a, "k1")), arrayOf(a, bulk("7"), bulks(a, "k1")), true},
		{"hscan pairs reordered", "&", arrayOf(a, bulk("0"), bulks(a, "f1", "1", "f2", "2")), arrayOf(a, bulk("0"), bulks(a, "f2", "2", "f1", "1")), false},
		{"hscan values swapped", "&", arrayOf(a, bulk("0"), bulks(a, "f1", "1", "f2", "2")), arrayOf(a, bulk("0"), bulks(a, "f1", "2", "f2", "1")), true},
		{"resp3 map reordered", "~", bulks(resp.KindMap, "k1", "v1", "k2", "v2"), bulks(resp.KindMap, "k2", "v2", "k1", "v1"), false},
		{"resp3 map values swapped", "~", bulks(resp.KindMap, "k1", "v1", "k2", "v2"), bulks(resp.KindMap, "k1", "v2", "k2", "v1"), true},
		{"resp3 tuples reordered", "&", arrayOf(a, bulks(a, "f1", "v1"), bulks(a, "f2", "v2")), arrayOf(a, bulks(a, "f2", "v2"), bulks(a, "f1", "v1")), false},
		{"resp3 tuple values swapped", "&", arrayOf(a, bulks(a, "f1", "v1"), bulks(a, "f2", "v2")), arrayOf(a, bulks(a, "f1", "v2"), bulks(a, "f2", "v1")), true},
		{"exact order", "", bulks(a, "a", "b"), bulks(a, "b", "a"), true},
		{"kind only", "%", integer(1), integer(2), false},
		{"kind only, other kind", "%", integer(1), bulk("1"), true},
	}
	for _, c := range cases {
		if differs := compareReplies(c.want, c.got, c.mode) != ""; differs != c.shouldDiff {
			t.Errorf("%s (%q): differs=%v, want %v", c.name, c.mode, differs, c.shouldDiff)
		}
	}
}

// TestDiffLineChecks pins the setup and error markers and the refusal of
// ~ for field/value replies.
func TestDiffLineChecks(t *testing.T) {
	ok := resp.Value{Kind: resp.KindSimple, Str: "OK"}
	e := resp.Value{Kind: resp.KindError, Str: "ERR x"}
	for _, c := range []struct {
		mode       string
		want, got  resp.Value
		shouldFail bool
	}{
		{"?", ok, integer(3), false},
		{"?", e, e, true},
		{"?", ok, e, true},
		{"!", e, resp.Value{Kind: resp.KindError, Str: "ERR y"}, false},
		{"!", e, ok, true},
		{"!", ok, ok, true},
	} {
		if failed := compareLine(c.mode, c.want, c.got) != ""; failed != c.shouldFail {
			t.Errorf("%s %s / %s: failed=%v, want %v", c.mode, c.want, c.got, failed, c.shouldFail)
		}
	}
	for _, c := range []struct {
		mode   string
		args   []string
		refuse bool
	}{
		{"~", []string{"hgetall", "h"}, true},
		{"~", []string{"CONFIG", "GET", "*"}, true},
		{"~", []string{"HRANDFIELD", "h", "5", "withvalues"}, true},
		{"~", []string{"HRANDFIELD", "h", "5"}, false},
		{"&", []string{"HGETALL", "h"}, false},
		{"?%", []string{"PING"}, true},
		{"?!", []string{"PING"}, true},
	} {
		if refused := checkMarkers(c.mode, c.args) != ""; refused != c.refuse {
			t.Errorf("%s %v: refused=%v, want %v", c.mode, c.args, refused, c.refuse)
		}
	}
}
