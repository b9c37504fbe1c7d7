package commands

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// The cjson library as Redis 7.0 ships it (lua-cjson 2.1): encode and
// decode between Lua values and JSON, cjson.null for JSON's null, and the
// settings functions. Numbers are written with 14 significant digits,
// forward slashes are escaped, an empty table is an object, a table whose
// keys are all positive integers is an array (an excessively sparse one
// is an error), and NaN and infinity are refused.

type cjsonConfig struct {
	sparseConvert bool
	sparseRatio   int
	sparseSafe    int
	encodeDepth   int
	decodeDepth   int
	precision     int
	keepBuffer    bool
	encodeInvalid string // "off", "on" or "null"
	decodeInvalid bool
}

func defaultCJSONConfig() *cjsonConfig {
	return &cjsonConfig{sparseRatio: 2, sparseSafe: 10, encodeDepth: 1000, decodeDepth: 1000, precision: 14,
		keepBuffer: true, encodeInvalid: "off", decodeInvalid: true}
}

// cjsonNull is cjson.null: JSON's null once decoded.
var cjsonNull = &lua.LUserData{}

func openCJSON(L *lua.LState) {
	cfg := defaultCJSONConfig()
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				L.ArgError(1, "expected 1 argument")
			}
			var b strings.Builder
			cjsonEncode(L, cfg, &b, L.Get(1), 0)
			L.Push(lua.LString(b.String()))
			return 1
		},
		"decode": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				L.ArgError(1, "expected 1 argument")
			}
			s := L.CheckString(1)
			d := &cjsonDecoder{L: L, cfg: cfg, s: s}
			v := d.value(0)
			d.skipSpace()
			if d.i < len(d.s) {
				d.fail("the end", d.i)
			}
			L.Push(v)
			return 1
		},
		"encode_sparse_array": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				cfg.sparseConvert = lua.LVAsBool(L.Get(1))
			}
			if L.GetTop() >= 2 {
				cfg.sparseRatio = cjsonIntArg(L, 2, 0, math.MaxInt32, cfg.sparseRatio)
			}
			if L.GetTop() >= 3 {
				cfg.sparseSafe = cjsonIntArg(L, 3, 0, math.MaxInt32, cfg.sparseSafe)
			}
			L.Push(lua.LBool(cfg.sparseConvert))
			L.Push(lua.LNumber(cfg.sparseRatio))
			L.Push(lua.LNumber(cfg.sparseSafe))
			return 3
		},
		"encode_max_depth": func(L *lua.LState) int {
			cfg.encodeDepth = cjsonIntArg(L, 1, 1, math.MaxInt32, cfg.encodeDepth)
			L.Push(lua.LNumber(cfg.encodeDepth))
			return 1
		},
		"decode_max_depth": func(L *lua.LState) int {
			cfg.decodeDepth = cjsonIntArg(L, 1, 1, math.MaxInt32, cfg.decodeDepth)
			L.Push(lua.LNumber(cfg.decodeDepth))
			return 1
		},
		"encode_number_precision": func(L *lua.LState) int {
			cfg.precision = cjsonIntArg(L, 1, 1, 14, cfg.precision)
			L.Push(lua.LNumber(cfg.precision))
			return 1
		},
		"encode_keep_buffer": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				cfg.keepBuffer = lua.LVAsBool(L.Get(1))
			}
			L.Push(lua.LBool(cfg.keepBuffer))
			return 1
		},
		"encode_invalid_numbers": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				switch v := L.Get(1).(type) {
				case lua.LString:
					if v != "null" {
						L.ArgError(1, "invalid option '"+string(v)+"'")
					}
					cfg.encodeInvalid = "null"
				default:
					cfg.encodeInvalid = map[bool]string{true: "on", false: "off"}[lua.LVAsBool(v)]
				}
			}
			if cfg.encodeInvalid == "null" {
				L.Push(lua.LString("null"))
			} else {
				L.Push(lua.LBool(cfg.encodeInvalid == "on"))
			}
			return 1
		},
		"decode_invalid_numbers": func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				cfg.decodeInvalid = lua.LVAsBool(L.Get(1))
			}
			L.Push(lua.LBool(cfg.decodeInvalid))
			return 1
		},
	})
	t.RawSetString("null", cjsonNull)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	L.SetGlobal("cjson", t)
}

func cjsonIntArg(L *lua.LState, i, lo, hi, def int) int {
	if L.GetTop() < i || L.Get(i) == lua.LNil {
		return def
	}
	n := L.CheckInt(i)
	if n < lo || n > hi {
		L.ArgError(i, "expected integer between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi))
	}
	return n
}

func cjsonEncode(L *lua.LState, cfg *cjsonConfig, b *strings.Builder, v lua.LValue, depth int) {
	switch x := v.(type) {
	case *lua.LNilType:
		b.WriteString("null")
	case lua.LBool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case lua.LNumber:
		cjsonNumber(L, cfg, b, float64(x))
	case lua.LString:
		cjsonString(b, string(x))
	case *lua.LTable:
		depth++
		if depth > cfg.encodeDepth {
			L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := cjsonArrayLen(L, cfg, x); n >= 0 {
			b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				cjsonEncode(L, cfg, b, x.RawGetInt(i), depth)
			}
			b.WriteByte(']')
			return
		}
		b.WriteByte('{')
		keys, vals := luaNextOrder(x)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			switch key := k.(type) {
			case lua.LString:
				cjsonString(b, string(key))
			case lua.LNumber:
				b.WriteByte('"')
				cjsonNumber(L, cfg, b, float64(key))
				b.WriteByte('"')
			default:
				L.RaiseError("Cannot serialise %s: table key must be a number or string", k.Type().String())
			}
			b.WriteByte(':')
			cjsonEncode(L, cfg, b, vals[i], depth)
		}
		b.WriteByte('}')
	case *lua.LUserData:
		if x == cjsonNull {
			b.WriteString("null")
			return
		}
		L.RaiseError("Cannot serialise userdata: type not supported")
	default:
		L.RaiseError("Cannot serialise %s: type not supported", v.Type().String())
	}
}

// cjsonArrayLen is lua-cjson's lua_array_length: the largest index when
// every key is a positive integer (-1 when not an array), an error for an
// excessively sparse array unless sparse arrays are converted to objects.
func cjsonArrayLen(L *lua.LState, cfg *cjsonConfig, t *lua.LTable) int {
	max, items := 0, 0
	isArray := true
	t.ForEach(func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) < 1 || float64(n) != math.Floor(float64(n)) {
			isArray = false
			return
		}
		if int(n) > max {
			max = int(n)
		}
		items++
	})
	if !isArray || items == 0 {
		return -1
	}
	if cfg.sparseRatio > 0 && max > items*cfg.sparseRatio && max > cfg.sparseSafe {
		if !cfg.sparseConvert {
			L.RaiseError("Cannot serialise table: excessively sparse array")
		}
		return -1
	}
	return max
}

func cjsonNumber(L *lua.LState, cfg *cjsonConfig, b *strings.Builder, f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		switch cfg.encodeInvalid {
		case "null":
			b.WriteString("null")
			return
		case "on":
			switch {
			case math.IsNaN(f):
				b.WriteString("nan")
			case f > 0:
				b.WriteString("inf")
			default:
				b.WriteString("-inf")
			}
			return
		}
		L.RaiseError("Cannot serialise number: must not be NaN or Inf")
	}
	b.WriteString(formatG(f, cfg.precision))
}

// formatG is C's printf("%.<p>g").
func formatG(f float64, p int) string {
	s := strconv.FormatFloat(f, 'g', p, 64)
	// Go writes exponents with at least two digits like C, but keeps
	// trailing zeros that %g drops.
	if mant, exp, ok := strings.Cut(s, "e"); ok {
		if strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		return mant + "e" + exp
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

const hexDigits = "0123456789abcdef"

func cjsonString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// cjsonDecoder parses JSON into Lua values.
type cjsonDecoder struct {
	L   *lua.LState
	cfg *cjsonConfig
	s   string
	i   int
}

// fail raises lua-cjson's parse error, naming the token found at at as
// lua-cjson does (T_END, T_OBJ_BEGIN, ...).
func (d *cjsonDecoder) fail(expected string, at int) {
	found := "invalid token"
	if at >= len(d.s) {
		found = "T_END"
	} else {
		switch c := d.s[at]; {
		case c == '{':
			found = "T_OBJ_BEGIN"
		case c == '[':
			found = "T_ARR_BEGIN"
		case c == '"':
			found = "T_STRING"
		case c == ':':
			found = "T_COLON"
		case c == ',':
			found = "T_COMMA"
		case c == '}':
			found = "T_OBJ_END"
		case c == ']':
			found = "T_ARR_END"
		case c == '-' || c >= '0' && c <= '9':
			found = "T_NUMBER"
		case strings.HasPrefix(d.s[at:], "true") || strings.HasPrefix(d.s[at:], "false"):
			found = "T_BOOLEAN"
		case strings.HasPrefix(d.s[at:], "null"):
			found = "T_NULL"
		}
	}
	d.L.RaiseError("Expected %s but found %s at character %d", expected, found, at+1)
}

func (d *cjsonDecoder) skipSpace() {
	for d.i < len(d.s) && strings.IndexByte(" \t\r\n", d.s[d.i]) >= 0 {
		d.i++
	}
}

func (d *cjsonDecoder) value(depth int) lua.LValue {
	d.skipSpace()
	if d.i >= len(d.s) {
		d.fail("value", d.i)
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return lua.LString(d.str())
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case strings.HasPrefix(d.s[d.i:], "true"):
		d.i += 4
		return lua.LTrue
	case strings.HasPrefix(d.s[d.i:], "false"):
		d.i += 5
		return lua.LFalse
	case strings.HasPrefix(d.s[d.i:], "null"):
		d.i += 4
		return cjsonNull
	}
	if d.cfg.decodeInvalid {
		for _, w := range []string{"nan", "-nan", "inf", "-inf", "NaN", "Infinity", "-Infinity"} {
			if strings.HasPrefix(strings.ToLower(d.s[d.i:]), strings.ToLower(w)) {
				return d.number()
			}
		}
	}
	d.fail("value", d.i)
	return nil
}

func (d *cjsonDecoder) nest(depth int) {
	if depth > d.cfg.decodeDepth {
		d.L.RaiseError("Found too many nested data structures (%d) at character %d", depth, d.i+1)
	}
}

func (d *cjsonDecoder) object(depth int) lua.LValue {
	d.nest(depth)
	t := d.L.NewTable()
	d.i++
	d.skipSpace()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return t
	}
	for {
		d.skipSpace()
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			d.fail("object key string", d.i)
		}
		k := d.str()
		d.skipSpace()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			d.fail("colon", d.i)
		}
		d.i++
		t.RawSetString(k, d.value(depth))
		d.skipSpace()
		if d.i < len(d.s) && d.s[d.i] == '}' {
			d.i++
			return t
		}
		if d.i >= len(d.s) || d.s[d.i] != ',' {
			d.fail("comma or object end", d.i)
		}
		d.i++
	}
}

func (d *cjsonDecoder) array(depth int) lua.LValue {
	d.nest(depth)
	t := d.L.NewTable()
	d.i++
	d.skipSpace()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return t
	}
	for n := 1; ; n++ {
		t.RawSetInt(n, d.value(depth))
		d.skipSpace()
		if d.i < len(d.s) && d.s[d.i] == ']' {
			d.i++
			return t
		}
		if d.i >= len(d.s) || d.s[d.i] != ',' {
			d.fail("comma or array end", d.i)
		}
		d.i++
	}
}

func (d *cjsonDecoder) number() lua.LValue {
	start := d.i
	for d.i < len(d.s) && strings.IndexByte("+-0123456789.eExXaAbBcCdDfFiInNtTyY", d.s[d.i]) >= 0 {
		d.i++
	}
	tok := d.s[start:d.i]
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil {
		if n, err2 := strconv.ParseInt(tok, 0, 64); err2 == nil {
			return lua.LNumber(n)
		}
		if e, ok := err.(*strconv.NumError); !ok || e.Err != strconv.ErrRange {
			d.fail("value", start)
		}
	}
	return lua.LNumber(f)
}

func (d *cjsonDecoder) str() string {
	start := d.i
	d.i++
	var b strings.Builder
	for {
		if d.i >= len(d.s) {
			d.fail("string end", start)
		}
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return b.String()
		case c == '\\':
			if d.i+1 >= len(d.s) {
				d.fail("string end", start)
			}
			e := d.s[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					d.L.RaiseError("Expected value but found invalid unicode escape code at character %d", start+1)
				}
				if r >= 0xD800 && r <= 0xDBFF && strings.HasPrefix(d.s[d.i:], `\u`) {
					d.i += 2
					lo, ok := d.hex4()
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						d.L.RaiseError("Expected value but found invalid unicode escape code at character %d", start+1)
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				}
				var buf [4]byte
				b.Write(buf[:utf8.EncodeRune(buf[:], rune(r))])
			default:
				d.L.RaiseError("Expected value but found invalid escape code at character %d", start+1)
			}
		default:
			if c < 0x20 {
				d.fail("string end", start)
			}
			b.WriteByte(c)
			d.i++
		}
	}
}

func (d *cjsonDecoder) hex4() (int, bool) {
	if d.i+4 > len(d.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(d.s[d.i:d.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	d.i += 4
	return int(n), true
}
