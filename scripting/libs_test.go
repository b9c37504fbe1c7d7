package scripting

import (
	"strings"
	"testing"

	"github.com/revolver-db/revolver/lua"
)

// TestLibraryOrder checks the order pairs walks the library tables in,
// recorded from Redis: local r = {} for k in pairs(cjson) do r[#r+1] = k end
func TestLibraryOrder(t *testing.T) {
	L := newState()
	keys := func(tb *lua.Table) string {
		var ks []string
		tb.ForEach(func(k, _ lua.Value) {
			s, _ := k.AsString()
			ks = append(ks, s)
		})
		return strings.Join(ks, " ")
	}
	for lib, want := range map[string]string{
		"cjson": "_NAME encode decode_max_depth _VERSION decode_invalid_numbers encode_keep_buffer null " +
			"encode_number_precision new encode_max_depth encode_invalid_numbers decode encode_sparse_array",
		"cmsgpack": "_DESCRIPTION pack _NAME unpack _COPYRIGHT _VERSION unpack_one unpack_limit",
		"struct":   "pack size unpack",
		"bit":      "band rshift bor bnot bswap bxor tobit ror lshift tohex rol arshift",
	} {
		if got := keys(L.Globals().GetStr(lib).AsTable()); got != want {
			t.Errorf("pairs(%s):\n got %s\nwant %s", lib, got, want)
		}
	}
	fresh := L.Call1(libFunc(t, L, "cjson.new")).AsTable()
	if got, want := keys(fresh), keys(L.Globals().GetStr("cjson").AsTable()); got != want {
		t.Errorf("pairs(cjson.new()):\n got %s\nwant %s", got, want)
	}
}
