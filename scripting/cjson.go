package scripting

import (
	"fmt"
	"math"

	"github.com/revolver-db/revolver/lua"
)

// The cjson library as Redis 7.0 ships it (lua-cjson 2.1.0): encode and
// decode between Lua values and JSON, cjson.null for JSON's null, the
// settings functions, and new, which makes another cjson table with
// settings of its own. Settings outlive a script: they belong to the
// table, which lives as long as the interpreter.

// cjsonConfig is one cjson table's settings. The enumerated ones hold the
// index of their option (0 off, 1 on; 2 "null" for encodeInvalid).
type cjsonConfig struct {
	sparseConvert  int
	sparseRatio    int
	sparseSafe     int
	encodeMaxDepth int
	decodeMaxDepth int
	encodeInvalid  int
	decodeInvalid  int
	precision      int
	keepBuffer     int
	buf            []byte // reused between encodes while keepBuffer is on
}

func newCJSONConfig() *cjsonConfig {
	return &cjsonConfig{sparseRatio: 2, sparseSafe: 10, encodeMaxDepth: 1000, decodeMaxDepth: 1000,
		decodeInvalid: 1, precision: 14, keepBuffer: 1}
}

// nullUserdata is cjson.null: C's NULL as a light userdata, one value that
// every interpreter shares. A light userdata has no metatable of its own.
var nullUserdata = &lua.Userdata{Light: true}

// Null is cjson.null, what cjson.decode gives for JSON's null.
var Null = lua.UserdataValue(nullUserdata)

// OpenCJSON makes the global cjson.
func OpenCJSON(L *lua.State) {
	L.Globals().SetStr("cjson", lua.TableValue(newCJSON()))
}

// newCJSON makes a cjson table with fresh settings (lua_cjson_new): the
// functions in lua-cjson's order, then null, _NAME and _VERSION.
func newCJSON() *lua.Table {
	c := newCJSONConfig()
	t := newModule([]lua.LibFunc{
		{Name: "encode", Fn: c.encode},
		{Name: "decode", Fn: c.decode},
		{Name: "encode_sparse_array", Fn: c.encodeSparseArray},
		{Name: "encode_max_depth", Fn: c.encodeMaxDepthFn},
		{Name: "decode_max_depth", Fn: c.decodeMaxDepthFn},
		{Name: "encode_number_precision", Fn: c.encodeNumberPrecision},
		{Name: "encode_keep_buffer", Fn: c.encodeKeepBuffer},
		{Name: "encode_invalid_numbers", Fn: c.encodeInvalidNumbers},
		{Name: "decode_invalid_numbers", Fn: c.decodeInvalidNumbers},
		{Name: "new", Fn: cjsonNew},
	})
	t.SetStr("null", Null)
	t.SetStr("_NAME", lua.String("cjson"))
	t.SetStr("_VERSION", lua.String("2.1.0"))
	return t
}

func cjsonNew(L *lua.State) int {
	L.Push(lua.TableValue(newCJSON()))
	return 1
}

// ---- Settings ----

// settingArgs refuses more than n arguments (json_arg_init).
func settingArgs(L *lua.State, n int) {
	if L.Top() > n {
		L.ArgError(n+1, "found too many arguments")
	}
}

// integerOption sets *setting from argument i unless it is nil, and
// pushes the setting. lua-cjson names argument 1 in its range error,
// whichever argument is out of range.
func integerOption(L *lua.State, i int, setting *int, lo, hi int) {
	if !L.Get(i).IsNil() {
		v := L.CheckInt(i)
		if v < lo || v > hi {
			L.ArgError(1, fmt.Sprintf("expected integer between %d and %d", lo, hi))
		}
		*setting = v
	}
	L.Push(lua.Number(float64(*setting)))
}

var onOff = []string{"off", "on"}

// enumOption sets *setting from argument i unless it is nil: a boolean
// (true is "on"), or the name of an option. It pushes the setting back,
// as a boolean when it is off or on.
func enumOption(L *lua.State, i int, setting *int, options []string) {
	if v := L.Get(i); !v.IsNil() {
		if b, ok := v.AsBool(); ok {
			*setting = 0
			if b {
				*setting = 1
			}
		} else {
			*setting = L.CheckOption(i, "", options)
		}
	}
	if *setting <= 1 {
		L.Push(lua.Bool(*setting == 1))
	} else {
		L.Push(lua.String(options[*setting]))
	}
}

func (c *cjsonConfig) encodeSparseArray(L *lua.State) int {
	settingArgs(L, 3)
	enumOption(L, 1, &c.sparseConvert, onOff)
	integerOption(L, 2, &c.sparseRatio, 0, math.MaxInt32)
	integerOption(L, 3, &c.sparseSafe, 0, math.MaxInt32)
	return 3
}

func (c *cjsonConfig) encodeMaxDepthFn(L *lua.State) int {
	settingArgs(L, 1)
	integerOption(L, 1, &c.encodeMaxDepth, 1, math.MaxInt32)
	return 1
}

func (c *cjsonConfig) decodeMaxDepthFn(L *lua.State) int {
	settingArgs(L, 1)
	integerOption(L, 1, &c.decodeMaxDepth, 1, math.MaxInt32)
	return 1
}

func (c *cjsonConfig) encodeNumberPrecision(L *lua.State) int {
	settingArgs(L, 1)
	integerOption(L, 1, &c.precision, 1, 14)
	return 1
}

func (c *cjsonConfig) encodeKeepBuffer(L *lua.State) int {
	settingArgs(L, 1)
	enumOption(L, 1, &c.keepBuffer, onOff)
	if c.keepBuffer == 0 {
		c.buf = nil
	}
	return 1
}

func (c *cjsonConfig) encodeInvalidNumbers(L *lua.State) int {
	settingArgs(L, 1)
	enumOption(L, 1, &c.encodeInvalid, []string{"off", "on", "null"})
	return 1
}

func (c *cjsonConfig) decodeInvalidNumbers(L *lua.State) int {
	settingArgs(L, 1)
	enumOption(L, 1, &c.decodeInvalid, onOff)
	return 1
}

// ---- Encoding ----

// jsonEncoder writes one value as JSON. top counts the values lua-cjson
// would hold on the C stack, whose room bounds the nesting as the depth
// setting does.
type jsonEncoder struct {
	L   *lua.State
	cfg *cjsonConfig
	buf []byte
	top int
}

func (c *cjsonConfig) encode(L *lua.State) int {
	if L.Top() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	e := &jsonEncoder{L: L, cfg: c, buf: c.buf[:0], top: 1}
	e.value(L.Get(1), 0)
	L.Push(lua.String(string(e.buf)))
	if c.keepBuffer != 0 {
		c.buf = e.buf
	}
	return 1
}

// fail raises lua-cjson's "Cannot serialise <type>: <reason>".
func (e *jsonEncoder) fail(v lua.Value, reason string) {
	e.L.Errorf("Cannot serialise %s: %s", v.TypeName(), reason)
}

func (e *jsonEncoder) value(v lua.Value, depth int) {
	switch v.Type() {
	case lua.TypeString:
		s, _ := v.AsString()
		e.str(s)
	case lua.TypeNumber:
		f, _ := v.AsNumber()
		e.number(f, v)
	case lua.TypeBoolean:
		if v.Truthy() {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case lua.TypeTable:
		depth++
		e.checkDepth(depth)
		t := v.AsTable()
		if n := e.arrayLength(t); n > 0 {
			e.array(t, int(n), depth)
		} else {
			e.object(t, depth)
		}
	case lua.TypeNil:
		e.buf = append(e.buf, "null"...)
	case lua.TypeLightUserdata:
		if v.AsUserdata() == nullUserdata {
			e.buf = append(e.buf, "null"...)
			return
		}
		e.fail(v, "type not supported")
	default:
		e.fail(v, "type not supported")
	}
}

// checkDepth refuses a table nested past the depth setting, or deeper than
// the C stack has room for (a cycle reaches one or the other).
func (e *jsonEncoder) checkDepth(depth int) {
	if depth <= e.cfg.encodeMaxDepth && stackRoom(e.top, 3) {
		return
	}
	e.L.Errorf("Cannot serialise, excessive nesting (%d)", depth)
}

// arrayLength is lua-cjson's lua_array_length: the largest key when every
// key is a positive integer, else -1 (an object). The largest key is kept
// in a C int, which a key of 2^31 or more turns into INT_MIN (so that such
// a table is an object, unless a smaller key comes after). An excessively
// sparse array is an error, or an object if so configured.
func (e *jsonEncoder) arrayLength(t *lua.Table) int32 {
	var max, items int32
	for k, _, _ := t.Next(lua.Nil); !k.IsNil(); k, _, _ = t.Next(k) {
		f, ok := k.AsNumber()
		if !ok || f == 0 || math.Floor(f) != f || f < 1 {
			return -1
		}
		if f > float64(max) {
			max = cInt32(f)
		}
		items++
	}
	c := e.cfg
	if c.sparseRatio > 0 && max > items*int32(c.sparseRatio) && max > int32(c.sparseSafe) {
		if c.sparseConvert == 0 {
			e.fail(lua.TableValue(t), "excessively sparse array")
		}
		return -1
	}
	return max
}

func (e *jsonEncoder) array(t *lua.Table, n, depth int) {
	e.buf = append(e.buf, '[')
	e.top++ // the item being written
	for i := 1; i <= n; i++ {
		if i > 1 {
			e.buf = append(e.buf, ',')
		}
		e.value(t.GetInt(i), depth)
	}
	e.top--
	e.buf = append(e.buf, ']')
}

// object writes t's entries in next's order, which is Redis's.
func (e *jsonEncoder) object(t *lua.Table, depth int) {
	e.buf = append(e.buf, '{')
	e.top += 2 // the key and the value being written
	first := true
	t.ForEach(func(k, v lua.Value) {
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		switch k.Type() {
		case lua.TypeNumber:
			f, _ := k.AsNumber()
			e.buf = append(e.buf, '"')
			e.number(f, k)
			e.buf = append(e.buf, '"', ':')
		case lua.TypeString:
			s, _ := k.AsString()
			e.str(s)
			e.buf = append(e.buf, ':')
		default:
			e.fail(k, "table key must be a number or string")
		}
		e.value(v, depth)
	})
	e.top -= 2
	e.buf = append(e.buf, '}')
}

// number writes f with the precision setting ("%.14g" by default). NaN and
// the infinities are refused, or written as "nan", "inf" and "-inf", or as
// null, as encode_invalid_numbers says.
func (e *jsonEncoder) number(f float64, v lua.Value) {
	invalid := math.IsInf(f, 0) || math.IsNaN(f)
	switch e.cfg.encodeInvalid {
	case 0:
		if invalid {
			e.fail(v, "must not be NaN or Inf")
		}
	case 1:
		if math.IsNaN(f) {
			e.buf = append(e.buf, "nan"...)
			return
		}
	default:
		if invalid {
			e.buf = append(e.buf, "null"...)
			return
		}
	}
	e.buf = append(e.buf, lua.FormatG(f, e.cfg.precision)...)
}

// jsonEscapes is lua-cjson's char2escape: the control characters, DEL, the
// quote, the backslash and the slash are escaped.
var jsonEscapes = func() (esc [256]string) {
	const hex = "0123456789abcdef"
	for c := 0; c < 0x20; c++ {
		esc[c] = `\u00` + string(hex[c>>4]) + string(hex[c&15])
	}
	esc['\b'], esc['\t'], esc['\n'], esc['\f'], esc['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	esc['"'], esc['\\'], esc['/'], esc[0x7f] = `\"`, `\\`, `\/`, `\u007f`
	return esc
}()

func (e *jsonEncoder) str(s string) {
	e.buf = append(e.buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if esc := jsonEscapes[s[i]]; esc != "" {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, esc...)
			start = i + 1
		}
	}
	e.buf = append(e.buf, s[start:]...)
	e.buf = append(e.buf, '"')
}
