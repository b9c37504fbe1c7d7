package tests

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/revolver-db/revolver/resp"
)

// How a differential line compares its two replies (its markers; see
// differential_test.go). Every mode compares the reply types; only
// cmpKindOnly stops there. Error texts are compared under every other mode.
type diffMode struct {
	unordered bool // ~ or &: order does not matter, at any depth
	paired    bool // &: flat arrays are field/value pairs, kept together
	kindOnly  bool // %
}

// compareReplies returns "" when the replies match under the markers in
// mode ("~", "&", "%" or "" for exact).
func compareReplies(want, got resp.Value, mode string) string {
	return compareMode(want, got, diffMode{
		unordered: strings.ContainsAny(mode, "~&"),
		paired:    strings.Contains(mode, "&"),
		kindOnly:  strings.Contains(mode, "%"),
	})
}

func compareMode(want, got resp.Value, m diffMode) string {
	if want.Kind != got.Kind || want.Nil2 != got.Nil2 {
		return fmt.Sprintf("type %q vs %q", want.Kind, got.Kind)
	}
	if m.kindOnly {
		return ""
	}
	if !m.unordered {
		if want.String() != got.String() {
			return "different value"
		}
		return ""
	}
	if canonical(want, m) != canonical(got, m) {
		return "different elements"
	}
	return ""
}

// canonical renders v so that two replies equal under m render the same:
// a collection's elements (or, for maps and paired arrays, its pairs) are
// sorted; scalars keep their exact value and type.
func canonical(v resp.Value, m diffMode) string {
	switch v.Kind {
	case resp.KindArray, resp.KindSet, resp.KindPush, resp.KindMap:
	default:
		return v.String()
	}
	var parts []string
	if v.Kind == resp.KindMap || m.paired && len(v.Elems)%2 == 0 && !allCollections(v.Elems) {
		// Pairs: a RESP3 map, or a RESP2 flat field/value list (HGETALL,
		// CONFIG GET, HSCAN's page, HRANDFIELD WITHVALUES).
		for i := 0; i+1 < len(v.Elems); i += 2 {
			parts = append(parts, strconv.Quote(canonical(v.Elems[i], m))+"=>"+strconv.Quote(canonical(v.Elems[i+1], m)))
		}
	} else {
		for _, e := range v.Elems {
			parts = append(parts, strconv.Quote(canonical(e, m)))
		}
	}
	if m.unordered {
		slices.Sort(parts)
	}
	return fmt.Sprintf("%c%d[%s]", v.Kind, len(v.Elems), strings.Join(parts, ","))
}

// allCollections reports whether every element is itself a collection: a
// RESP3 list of [field, value] tuples is a list of pairs already.
func allCollections(elems []resp.Value) bool {
	for _, e := range elems {
		switch e.Kind {
		case resp.KindArray, resp.KindMap, resp.KindSet:
		default:
			return false
		}
	}
	return len(elems) > 0
}
