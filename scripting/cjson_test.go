package scripting

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/revolver-db/revolver/lua"
)

func st(fn string, args ...any) step { return step{fn, vals(args...)} }

var goFunc = lua.FunctionValue(lua.NewFunction("f", func(*lua.State) int { return 0 }))

func TestCJSONEncodeCases(t *testing.T) {
	// t = {x=1, y=2}; t.x = nil; t.z = 3
	xyz := record("x", 1, "y", 2)
	xyz.SetStr("x", lua.Nil)
	xyz.SetStr("z", lua.Number(3))
	// {1, 2, 3, x = 1}: the keyed item goes in before the list.
	mixed := lua.NewTable(3, 1)
	mixed.SetStr("x", lua.Number(1))
	for i := 1; i <= 3; i++ {
		mixed.SetInt(i, lua.Number(float64(i)))
	}
	cycle := lua.NewTable(0, 0)
	cycle.SetInt(1, lua.TableValue(cycle))
	keys40, rev40 := lua.NewTable(0, 0), lua.NewTable(0, 0)
	for i := 1; i <= 40; i++ {
		keys40.SetStr("key"+strconv.Itoa(i), lua.Number(float64(i)))
		rev40.SetStr("k"+strconv.Itoa(41-i), lua.Number(float64(41-i)))
	}
	runCases(t, []libCase{
		{step: st("cjson.encode"), want: "error: bad argument #1 to '?' (expected 1 argument)"},
		{step: st("cjson.encode", nil), want: `"null"`},
		{step: st("cjson.encode", 1, 2), want: "error: bad argument #1 to '?' (expected 1 argument)"},
		{step: st("cjson.encode", true), want: `"true"`},
		{step: st("cjson.encode", false), want: `"false"`},
		{step: st("cjson.encode", 0), want: `"0"`},
		{step: st("cjson.encode", math.Copysign(0, -1)), want: `"-0"`},
		{step: st("cjson.encode", 0.1), want: `"0.1"`},
		{step: st("cjson.encode", 1e20), want: `"1e+20"`},
		{step: st("cjson.encode", 123456789012345678.0), want: `"1.2345678901235e+17"`},
		{step: st("cjson.encode", 1.0/3), want: `"0.33333333333333"`},
		{step: st("cjson.encode", -1.5e-300), want: `"-1.5e-300"`},
		{step: st("cjson.encode", 9007199254740992.0), want: `"9.007199254741e+15"`},
		{step: st("cjson.encode", 1e14), want: `"1e+14"`},
		{step: st("cjson.encode", 99999999999999.0), want: `"99999999999999"`},
		{step: st("cjson.encode", inf), want: "error: Cannot serialise number: must not be NaN or Inf"},
		{step: st("cjson.encode", -inf), want: "error: Cannot serialise number: must not be NaN or Inf"},
		{step: st("cjson.encode", negNaN), want: "error: Cannot serialise number: must not be NaN or Inf"},
		{step: st("cjson.encode", "a/b\"\\\n\t\r\b\f\x01\x1f\x7f\x80\xc3\xa9"), want: `""a\\/b\\"\\\\\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f\x80\xc3\xa9""`},
		{step: st("cjson.encode", ""), want: `""""`},
		{step: st("cjson.encode", "12"), want: `""12""`},
		{step: st("cjson.encode", Null), want: `"null"`},
		{step: st("cjson.encode", goFunc), want: "error: Cannot serialise function: type not supported"},
		{step: st("cjson.encode", array(1, 2, 3, record("a", 1))), src: "{1, 2, 3, {a = 1}}", want: `"[1,2,3,{"a":1}]"`},
		{step: st("cjson.encode", lua.NewTable(0, 0)), src: "{}", want: `"{}"`},
		{step: st("cjson.encode", array(1, nil, 3)), src: "{1, nil, 3}", want: `"[1,null,3]"`},
		{step: st("cjson.encode", record(1, 1, 2, 2, 20, 3)), src: "{[1]=1, [2]=2, [20]=3}", want: "error: Cannot serialise table: excessively sparse array"},
		{step: st("cjson.encode", record(1, 1, 2, 2, 10, 3)), src: "{[1]=1, [2]=2, [10]=3}", want: `"[1,2,null,null,null,null,null,null,null,3]"`},
		{step: st("cjson.encode", record(1, 1, 2, 2, "a", 3)), src: "{[1]=1, [2]=2, a=3}", want: `"{"1":1,"2":2,"a":3}"`},
		{step: st("cjson.encode", record(10, 1, 20, 2, 3.5, 3)), src: "{[10]=1, [20]=2, [3.5]=3}", want: `"{"10":1,"20":2,"3.5":3}"`},
		{step: st("cjson.encode", record(true, 1)), src: "{[true]=1}", want: "error: Cannot serialise boolean: table key must be a number or string"},
		{step: st("cjson.encode", record(0, 1)), src: "{[0]=1}", want: `"{"0":1}"`},
		{step: st("cjson.encode", record(-1, 1)), src: "{[-1]=1}", want: `"{"-1":1}"`},
		{step: st("cjson.encode", record(1.5, "x")), src: "{[1.5]='x'}", want: `"{"1.5":"x"}"`},
		{step: st("cjson.encode", record(2147483648.0, 1)), src: "{[2^31]=1}", want: `"{"2147483648":1}"`},
		{step: st("cjson.encode", record(2147483648.0, 1, 1, 2)), src: "{[2^31]=1, [1]=2}", want: `"[2]"`},
		{step: st("cjson.encode", record(4294967301.0, 1)), src: "{[2^32+5]=1}", want: `"{"4294967301":1}"`},
		{step: st("cjson.encode", record(inf, 1)), src: "{[1/0]=1}", want: "error: Cannot serialise number: must not be NaN or Inf"},
		{step: st("cjson.encode", record("a", record("b", record("c", lua.NewTable(0, 0))))), src: "{a={b={c={}}}}", want: `"{"a":{"b":{"c":{}}}}"`},
		{step: st("cjson.encode", record("a", Null)), src: "{a=c.null}", want: `"{"a":null}"`},
		{step: st("cjson.encode", record("f", goFunc)), src: "{f=tostring}", want: "error: Cannot serialise function: type not supported"},
		{step: st("cjson.encode", mixed), src: "{1, 2, 3, x = 1}", want: `"{"1":1,"2":2,"3":3,"x":1}"`},
		{step: st("cjson.encode", cycle), src: "(function() local t = {} t[1] = t return t end)()", want: "error: Cannot serialise, excessive nesting (1001)"},
		// Key order: Lua's table layout decides it, as in Redis.
		{step: st("cjson.encode", record("callstate", 0, "regstate", 1)), src: "{callstate=0, regstate=1}", want: `"{"callstate":0,"regstate":1}"`},
		{step: st("cjson.encode", record("regstate", 1, "callstate", 0)), src: "{regstate=1, callstate=0}", want: `"{"callstate":0,"regstate":1}"`},
		{step: st("cjson.encode", assigned("b", 1, "a", 2, "c", 3)), src: "(function() local t = {} t.b = 1 t.a = 2 t.c = 3 return t end)()", want: `"{"a":2,"c":3,"b":1}"`},
		{step: st("cjson.encode", keys40), src: "(function() local t = {} for i = 1, 40 do t['key' .. i] = i end return t end)()", want: `"{"key16":16,"key9":9,"key35":35,"key24":24,"key14":14,"key8":8,"key31":31,"key26":26,"key17":17,"key39":39,"key13":13,"key21":21,"key4":4,"key32":32,"key2":2,"key1":1,"key27":27,"key40":40,"key38":38,"key22":22,"key33":33,"key3":3,"key25":25,"key15":15,"key6":6,"key34":34,"key11":11,"key5":5,"key30":30,"key10":10,"key19":19,"key29":29,"key7":7,"key37":37,"key20":20,"key12":12,"key18":18,"key23":23,"key36":36,"key28":28}"`},
		{step: st("cjson.encode", rev40), src: "(function() local t = {} for i = 40, 1, -1 do t['k' .. i] = i end return t end)()", want: `"{"k16":16,"k32":32,"k19":19,"k39":39,"k31":31,"k15":15,"k30":30,"k38":38,"k14":14,"k1":1,"k3":3,"k27":27,"k34":34,"k23":23,"k7":7,"k5":5,"k26":26,"k22":22,"k21":21,"k29":29,"k25":25,"k10":10,"k4":4,"k36":36,"k28":28,"k20":20,"k37":37,"k24":24,"k8":8,"k35":35,"k9":9,"k2":2,"k11":11,"k17":17,"k12":12,"k33":33,"k6":6,"k13":13,"k40":40,"k18":18}"`},
		{step: st("cjson.encode", xyz), src: "(function() local t = {x=1, y=2} t.x = nil t.z = 3 return t end)()", want: `"{"y":2,"z":3}"`},
		{step: st("cjson.encode", record("a", 1, "b", 2, "c", 3, "d", 4, "e", 5, "f", 6, "g", 7, "h", 8, "i", 9)), src: "{a=1, b=2, c=3, d=4, e=5, f=6, g=7, h=8, i=9}", want: `"{"a":1,"c":3,"b":2,"e":5,"d":4,"g":7,"f":6,"i":9,"h":8}"`},
		{step: st("cjson.encode", record("alpha", 1, "beta", 2, "gamma", 3, "delta", 4, "epsilon", 5)), src: "{alpha=1, beta=2, gamma=3, delta=4, epsilon=5}", want: `"{"beta":2,"epsilon":5,"delta":4,"alpha":1,"gamma":3}"`},
	})
}

func TestCJSONDecodeCases(t *testing.T) {
	type decodeCase struct{ in, want string }
	var cases []libCase
	for _, c := range []decodeCase{
		{in: `[1,2`, want: "error: Expected comma or array end but found T_END at character 5"},
		{in: `{"a":null}`, want: `{"a"=null}`},
		{in: `"x"`, want: `"x"`},
		{in: `123`, want: "123"},
		{in: ` 1 `, want: "1"},
		{in: `-0`, want: "-0"},
		{in: `1e400`, want: "inf"},
		{in: `-1e400`, want: "-inf"},
		{in: `1e-400`, want: "0"},
		{in: `0x10`, want: "16"},
		{in: `+1`, want: "1"},
		{in: `inf`, want: "inf"},
		{in: `-Infinity`, want: "-inf"},
		{in: `nan`, want: "nan"},
		{in: `NaN`, want: "nan"},
		{in: `-nan`, want: "-nan"},
		{in: `01`, want: "1"},
		{in: `1.`, want: "1"},
		{in: `.5`, want: "error: Expected value but found invalid token at character 1"},
		{in: `1e`, want: "error: Expected the end but found invalid token at character 2"},
		{in: `truex`, want: "error: Expected the end but found invalid token at character 5"},
		{in: `tru`, want: "error: Expected value but found invalid token at character 1"},
		{in: `nul`, want: "error: Expected value but found invalid token at character 1"},
		{in: `[]`, want: "{}"},
		{in: `{}`, want: "{}"},
		{in: `[1,]`, want: "error: Expected value but found T_ARR_END at character 4"},
		{in: `{"a":1,}`, want: "error: Expected object key string but found T_OBJ_END at character 8"},
		{in: `{"a" 1}`, want: "error: Expected colon but found T_NUMBER at character 6"},
		{in: `{1:2}`, want: "error: Expected object key string but found T_NUMBER at character 2"},
		{in: `"a\u00e9"`, want: `"a\xc3\xa9"`},
		{in: `"\ud83d\ude00"`, want: `"\xf0\x9f\x98\x80"`},
		{in: `"\ud83d"`, want: "error: Expected value but found invalid unicode escape code at character 2"},
		{in: `"\ude00"`, want: "error: Expected value but found invalid unicode escape code at character 2"},
		{in: `"\ud83dx"`, want: "error: Expected value but found invalid unicode escape code at character 2"},
		{in: `"\u12"`, want: "error: Expected value but found invalid unicode escape code at character 2"},
		{in: `"\x"`, want: "error: Expected value but found invalid escape code at character 2"},
		{in: `"\/\b\f\n\r\t\"\\"`, want: `"/\x08\x0c\x0a\x0d\x09"\\"`},
		{in: "\"a\tb\x01\"", want: `"a\x09b\x01"`},
		{in: `"abc`, want: "error: Expected value but found unexpected end of string at character 5"},
		{in: `["ab\xcd"]`, want: "error: Expected value but found invalid escape code at character 5"},
		{in: `{"ab\u12":1}`, want: "error: Expected object key string but found invalid unicode escape code at character 5"},
		{in: "abc\x00def", want: "error: Expected value but found invalid token at character 1"},
		{in: "1\x00", want: "error: JSON parser does not support UTF-16 or UTF-32"},
		{in: "12\x00x", want: "12"},
		{in: "", want: "error: Expected value but found T_END at character 1"},
		{in: "   ", want: "error: Expected value but found T_END at character 4"},
		{in: `[1,2,3]`, want: "{1=1,2=2,3=3}"},
		{in: `{"b":1,"a":2,"c":3}`, want: `{"a"=2,"c"=3,"b"=1}`},
		{in: `[[[[1]]]]`, want: "{1={1={1={1=1}}}}"},
		{in: `{"a":{"b":[1,{"c":null}]}}`, want: `{"a"={"b"={1=1,2={"c"=null}}}}`},
		{in: `{"a":1,"a":2}`, want: `{"a"=2}`},
		{in: `1.5e3`, want: "1500"},
		{in: `-`, want: "error: Expected value but found invalid number at character 1"},
		{in: `-a`, want: "error: Expected value but found invalid number at character 1"},
		{in: `--1`, want: "error: Expected value but found invalid number at character 1"},
		{in: `1 2`, want: "error: Expected the end but found T_NUMBER at character 3"},
		{in: `[true,false,null]`, want: "{1=true,2=false,3=null}"},
		{in: `{"id":7,"name":"x","tags":[1,2],"state":{"up":true,"busy":false},"ts":1700000000}`, want: `{"state"={"busy"=false,"up"=true},"ts"=1700000000,"name"="x","tags"={1=1,2=2},"id"=7}`},
		{in: "\"\x00\"", want: "error: JSON parser does not support UTF-16 or UTF-32"},
		{in: `"\u0000"`, want: `"\x00"`},
		{in: `infinity`, want: "inf"},
		{in: `Infinite`, want: "error: Expected the end but found invalid token at character 4"},
		{in: `0x`, want: "error: Expected the end but found invalid token at character 2"},
		{in: `[1 2]`, want: "error: Expected comma or array end but found T_NUMBER at character 4"},
		{in: `{"a":1 "b":2}`, want: "error: Expected comma or object end but found T_STRING at character 8"},
		{in: `{"a",1}`, want: "error: Expected colon but found T_COMMA at character 5"},
		{in: `]`, want: "error: Expected value but found T_ARR_END at character 1"},
		{in: "\"a\x00b\"", want: "error: Expected value but found unexpected end of string at character 3"},
		{in: "[1,\x002]", want: "error: Expected value but found T_END at character 4"},
	} {
		cases = append(cases, libCase{step: st("cjson.decode", c.in), want: c.want})
	}
	cases = append(cases,
		libCase{step: st("cjson.decode", 123), want: "123"},
		libCase{step: st("cjson.decode", lua.NewTable(0, 0)), src: "{}", want: "error: bad argument #1 to '?' (string expected, got table)"},
		libCase{step: st("cjson.decode"), want: "error: bad argument #1 to '?' (expected 1 argument)"},
		libCase{step: st("cjson.decode", "1", "2"), want: "error: bad argument #1 to '?' (expected 1 argument)"},
	)
	runCases(t, cases)
}

func TestCJSONSettingsCases(t *testing.T) {
	noInvalid := []step{st("cjson.decode_invalid_numbers", false)}
	runCases(t, []libCase{
		{step: st("cjson.encode_sparse_array"), want: "false, 2, 10"},
		{step: st("cjson.encode_sparse_array", "on", 3, 4), want: "true, 3, 4"},
		{step: st("cjson.encode_sparse_array", nil, nil, 7), want: "false, 2, 7"},
		{step: st("cjson.encode_sparse_array", true, -1), want: "error: bad argument #1 to '?' (expected integer between 0 and 2147483647)"},
		{step: st("cjson.encode_sparse_array", true, 1, -1), want: "error: bad argument #1 to '?' (expected integer between 0 and 2147483647)"},
		{step: st("cjson.encode_sparse_array", "yes"), want: "error: bad argument #1 to '?' (invalid option 'yes')"},
		{step: st("cjson.encode_sparse_array", 1, 2, 3, 4), want: "error: bad argument #4 to '?' (found too many arguments)"},
		{step: st("cjson.encode_max_depth"), want: "1000"},
		{step: st("cjson.encode_max_depth", 0), want: "error: bad argument #1 to '?' (expected integer between 1 and 2147483647)"},
		{step: st("cjson.encode_max_depth", 4294967301.0), want: "5"},
		{step: st("cjson.encode_max_depth", "7"), want: "7"},
		{step: st("cjson.encode_max_depth", "x"), want: "error: bad argument #1 to '?' (number expected, got string)"},
		{step: st("cjson.encode_max_depth", 1, 2), want: "error: bad argument #2 to '?' (found too many arguments)"},
		{step: st("cjson.decode_max_depth", 2.9), want: "2"},
		{step: st("cjson.encode_number_precision", 15), want: "error: bad argument #1 to '?' (expected integer between 1 and 14)"},
		{step: st("cjson.encode_number_precision"), want: "14"},
		{step: st("cjson.encode_keep_buffer"), want: "true"},
		{step: st("cjson.encode_keep_buffer", "off"), want: "false"},
		{step: st("cjson.encode_keep_buffer", 1), want: "error: bad argument #1 to '?' (invalid option '1')"},
		{step: st("cjson.encode_keep_buffer", lua.NewTable(0, 0)), src: "{}", want: "error: bad argument #1 to '?' (string expected, got table)"},
		{step: st("cjson.encode_invalid_numbers"), want: "false"},
		{step: st("cjson.encode_invalid_numbers", "null"), want: `"null"`},
		{step: st("cjson.encode_invalid_numbers", true), want: "true"},
		{step: st("cjson.encode_invalid_numbers", "maybe"), want: "error: bad argument #1 to '?' (invalid option 'maybe')"},
		{step: st("cjson.decode_invalid_numbers"), want: "true"},
		{step: st("cjson.decode_invalid_numbers", "off"), want: "false"},
		{pre: []step{st("cjson.encode_max_depth", 2)}, step: st("cjson.encode", array(array(array()))), src: "{{{}}}", want: "error: Cannot serialise, excessive nesting (3)"},
		{pre: []step{st("cjson.encode_max_depth", 2)}, step: st("cjson.encode", array(array())), src: "{{}}", want: `"[{}]"`},
		{pre: []step{st("cjson.decode_max_depth", 2)}, step: st("cjson.decode", "[[[1]]]"), want: "error: Found too many nested data structures (3) at character 3"},
		{pre: []step{st("cjson.decode_max_depth", 2)}, step: st("cjson.decode", ` {"a":[{"b":1}]}`), want: "error: Found too many nested data structures (3) at character 8"},
		{pre: []step{st("cjson.decode_max_depth", 2)}, step: st("cjson.decode", "[[1]]"), want: "{1={1=1}}"},
		{pre: []step{st("cjson.encode_number_precision", 3)}, step: st("cjson.encode", 3.14159), want: `"3.14"`},
		{pre: []step{st("cjson.encode_number_precision", 3)}, step: st("cjson.encode", 12345), want: `"1.23e+04"`},
		{pre: []step{st("cjson.encode_number_precision", 1)}, step: st("cjson.encode", record(0.25, 0.75)), src: "{[0.25]=0.75}", want: `"{"0.2":0.8}"`},
		{pre: []step{st("cjson.encode_invalid_numbers", true)}, step: st("cjson.encode", array(negNaN, inf, -inf)), src: "{0/0, 1/0, -1/0}", want: `"[nan,inf,-inf]"`},
		{pre: []step{st("cjson.encode_invalid_numbers", "null")}, step: st("cjson.encode", array(negNaN, inf, 1.5)), src: "{0/0, 1/0, 1.5}", want: `"[null,null,1.5]"`},
		{pre: []step{st("cjson.encode_invalid_numbers", "null")}, step: st("cjson.encode", record(inf, 1)), src: "{[1/0]=1}", want: `"{"null":1}"`},
		{pre: []step{st("cjson.encode_sparse_array", true)}, step: st("cjson.encode", record(1, 1, 20, 2)), src: "{[1]=1, [20]=2}", want: `"{"1":1,"20":2}"`},
		{pre: []step{st("cjson.encode_sparse_array", false, 0)}, step: st("cjson.encode", record(1, 1, 12, 2)), src: "{[1]=1, [12]=2}", want: `"[1,null,null,null,null,null,null,null,null,null,null,2]"`},
		{pre: []step{st("cjson.encode_sparse_array", false, 1, 0)}, step: st("cjson.encode", record(1, 1, 3, 2)), src: "{[1]=1, [3]=2}", want: "error: Cannot serialise table: excessively sparse array"},
		{pre: noInvalid, step: st("cjson.decode", "inf"), want: "error: Expected value but found invalid token at character 1"},
		{pre: noInvalid, step: st("cjson.decode", "0x10"), want: "error: Expected value but found invalid number at character 1"},
		{pre: noInvalid, step: st("cjson.decode", "+1"), want: "error: Expected value but found invalid token at character 1"},
		{pre: noInvalid, step: st("cjson.decode", "01"), want: "error: Expected value but found invalid number at character 1"},
		{pre: noInvalid, step: st("cjson.decode", "[-inf]"), want: "error: Expected value but found invalid number at character 2"},
		{pre: noInvalid, step: st("cjson.decode", "-0.5e2"), want: "-50"},
		{pre: noInvalid, step: st("cjson.decode", "nan"), want: "error: Expected value but found invalid token at character 1"},
	})
}

// TestCJSONDepth checks the nesting limits: 1000 tables deep by default,
// and a cycle is refused when it reaches the limit.
func TestCJSONDepth(t *testing.T) {
	L := newState()
	nest := func(n int) lua.Value {
		v := lua.TableValue(lua.NewTable(0, 0))
		for i := 1; i < n; i++ {
			v = lua.TableValue(array(v))
		}
		return v
	}
	want := strings.Repeat("[", 999) + "{}" + strings.Repeat("]", 999)
	if got := call(t, L, "cjson.encode", nest(1000)); got != quote(want) {
		t.Errorf("1000 deep: %.40s...", got)
	}
	// Recorded from Redis (as the errors below): t = {} then t = {t} 1000 times.
	if got := call(t, L, "cjson.encode", nest(1001)); got != "error: Cannot serialise, excessive nesting (1001)" {
		t.Errorf("1001 deep: %.80s", got)
	}
	doc := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	if got := call(t, L, "cjson.decode", lua.String(doc)); !strings.HasPrefix(got, "{1={1={") {
		t.Errorf("decode 1000 deep: %.80s", got)
	}
	if got := call(t, L, "cjson.decode", lua.String("["+doc+"]")); got != "error: Found too many nested data structures (1001) at character 1001" {
		t.Errorf("decode 1001 deep: %.80s", got)
	}
	// With the depth setting raised, the C stack runs out first: 2 slots
	// per object level, 1 per array level.
	call(t, L, "cjson.encode_max_depth", lua.Number(100000))
	call(t, L, "cjson.decode_max_depth", lua.Number(100000))
	obj := lua.NewTable(0, 0)
	for i := 0; i < 5000; i++ {
		obj = record("a", obj)
	}
	if got := call(t, L, "cjson.encode", lua.TableValue(obj)); got != "error: Cannot serialise, excessive nesting (4000)" {
		t.Errorf("deep objects: %.80s", got)
	}
	if got := call(t, L, "cjson.encode", nest(9000)); got != "error: Cannot serialise, excessive nesting (7998)" {
		t.Errorf("deep arrays: %.80s", got)
	}
	if got := call(t, L, "cjson.decode", lua.String(strings.Repeat(`{"a":`, 5000))); got != "error: Found too many nested data structures (4000) at character 19996" {
		t.Errorf("decode deep objects: %.80s", got)
	}
	if got := call(t, L, "cjson.decode", lua.String(strings.Repeat(`[`, 9000))); got != "error: Found too many nested data structures (7999) at character 7999" {
		t.Errorf("decode deep arrays: %.80s", got)
	}
}

// TestCJSONNull checks that cjson.null is one light userdata for every
// state and every cjson table, without a metatable.
func TestCJSONNull(t *testing.T) {
	L1, L2 := newState(), newState()
	n1 := L1.Globals().GetStr("cjson").AsTable().GetStr("null")
	n2 := L2.Globals().GetStr("cjson").AsTable().GetStr("null")
	if !lua.RawEqual(n1, n2) || !lua.RawEqual(n1, Null) || n1.Type() != lua.TypeLightUserdata {
		t.Fatalf("cjson.null differs: %v %v", n1, n2)
	}
	other := L1.Call1(libFunc(t, L1, "cjson.new")).AsTable().GetStr("null")
	if !lua.RawEqual(other, Null) {
		t.Error("cjson.new().null is another value")
	}
	decoded := L1.Call1(libFunc(t, L1, "cjson.decode"), lua.String("null"))
	if !lua.RawEqual(decoded, Null) {
		t.Error("decode(null) is not cjson.null")
	}
	if L1.Metatable(Null) != nil {
		t.Error("cjson.null has a metatable")
	}
	if s, _ := L1.ToStringMeta(Null).AsString(); s != "userdata: (nil)" {
		t.Errorf("tostring(cjson.null) = %q", s)
	}
}

// TestCJSONNewIsSeparate checks that a table from cjson.new has settings
// of its own.
func TestCJSONNewIsSeparate(t *testing.T) {
	L := newState()
	c2 := L.Call1(libFunc(t, L, "cjson.new")).AsTable()
	L.Call(c2.GetStr("encode_number_precision"), []lua.Value{lua.Number(2)}, -1)
	if got := call(t, L, "cjson.encode", lua.Number(1.0/3)); got != `"0.33333333333333"` {
		t.Errorf("cjson.encode(1/3) = %s", got)
	}
	if got := L.Call1(c2.GetStr("encode"), lua.Number(1.0/3)); !lua.RawEqual(got, lua.String("0.33")) {
		t.Errorf("new().encode(1/3) = %s", dump(got))
	}
}

// TestCJSONRefusesUserdata checks that no userdata but cjson.null encodes:
// a script cannot make one, but Go code could hand one over.
func TestCJSONRefusesUserdata(t *testing.T) {
	L := newState()
	for _, u := range []*lua.Userdata{{Light: true}, {}} {
		if got := call(t, L, "cjson.encode", lua.TableValue(record("a", lua.UserdataValue(u)))); got != "error: Cannot serialise userdata: type not supported" {
			t.Errorf("encode(%v) = %s", u, got)
		}
	}
}
