package scripting

import (
	"testing"

	"github.com/revolver-db/revolver/lua"
)

func TestBitCases(t *testing.T) {
	runCases(t, []libCase{
		{step: st("bit.tobit", 4294967301.0), want: "5"},
		{step: st("bit.tobit", 2147483648.0), want: "-2147483648"},
		{step: st("bit.tobit", -1), want: "-1"},
		{step: st("bit.tobit", 1.5), want: "2"},
		{step: st("bit.tobit", 2.5), want: "2"},
		{step: st("bit.tobit", -1.5), want: "-2"},
		{step: st("bit.tobit", 1152921504606846976.0), want: "0"},
		{step: st("bit.tobit", 9007199254740995.0), want: "2"},
		{step: st("bit.tobit", 2251799813685248.5), want: "0"},
		{step: st("bit.tobit", -36028797018963975.0), want: "2"},
		{step: st("bit.tobit", 1e300), want: "-2013235812"},
		{step: st("bit.tobit", inf), want: "0"},
		{step: st("bit.tobit", negNaN), want: "0"},
		{step: st("bit.tobit", "0x10"), want: "16"},
		{step: st("bit.tobit", " 12 "), want: "12"},
		{step: st("bit.tobit", "x"), want: "error: bad argument #1 to '?' (number expected, got string)"},
		{step: st("bit.tobit"), want: "error: bad argument #1 to '?' (number expected, got no value)"},
		{step: st("bit.tobit", nil), want: "error: bad argument #1 to '?' (number expected, got nil)"},
		{step: st("bit.bnot", 0), want: "-1"},
		{step: st("bit.bnot", -2147483648.0), want: "2147483647"},
		{step: st("bit.band", 255, 15), want: "15"},
		{step: st("bit.band", "3", "5"), want: "1"},
		{step: st("bit.band", 7), want: "7"},
		{step: st("bit.band", 255, 15, 6, -1), want: "6"},
		{step: st("bit.band", 1, "x", lua.NewTable(0, 0)), src: "1, 'x', {}", want: "error: bad argument #3 to '?' (number expected, got table)"},
		{step: st("bit.bor", 1, 2, 4, 2147483648.0), want: "-2147483641"},
		{step: st("bit.bxor", 255, 15, 1), want: "241"},
		{step: st("bit.lshift", 1, 33), want: "2"},
		{step: st("bit.lshift", 1, 31), want: "-2147483648"},
		{step: st("bit.lshift", 3, -1), want: "-2147483648"},
		{step: st("bit.rshift", -256, 4), want: "268435440"},
		{step: st("bit.arshift", -256, 4), want: "-16"},
		{step: st("bit.arshift", 256, 36), want: "16"},
		{step: st("bit.rol", 0x12345678, 8), want: "878082066"},
		{step: st("bit.rol", 0x12345678, 0), want: "305419896"},
		{step: st("bit.ror", 0x12345678, 8), want: "2014458966"},
		{step: st("bit.ror", 1, 32), want: "1"},
		{step: st("bit.bswap", 0x12345678), want: "2018915346"},
		{step: st("bit.bswap", 255), want: "-16777216"},
		{step: st("bit.lshift", 1), want: "error: bad argument #2 to '?' (number expected, got no value)"},
		{step: st("bit.tohex", 255), want: `"000000ff"`},
		{step: st("bit.tohex", -1, -4), want: `"FFFF"`},
		{step: st("bit.tohex", 255, 2), want: `"ff"`},
		{step: st("bit.tohex", 255, 9), want: `"000000ff"`},
		{step: st("bit.tohex", 255, -9), want: `"000000FF"`},
		{step: st("bit.tohex", 0x1234, 0), want: `""`},
		{step: st("bit.tohex", 0xabcdef, -2147483648.0), want: `"00ABCDEF"`},
		{step: st("bit.tohex", 255, nil), want: "error: bad argument #2 to '?' (number expected, got nil)"},
		{step: st("bit.tohex", 3000000000.0), want: `"b2d05e00"`},
	})
}
