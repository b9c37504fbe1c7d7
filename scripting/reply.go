package scripting

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/revolver-db/revolver/lua"
	"github.com/revolver-db/revolver/resp"
)

// Replies to Lua and back, as Redis 7.0's redisProtocolToLuaType and
// luaReplyToRedisReply convert them.

// replyToLua turns one RESP reply into a Lua value, reading the bytes
// directly (no intermediate reply tree): integers are numbers, bulk
// strings strings, RESP2's nulls false, arrays tables, a status {ok=...},
// an error {err=...} (isErr), RESP3's types tables with their one field,
// its null nil and its booleans booleans.
func replyToLua(b []byte) (v lua.Value, isErr bool) {
	p := replyParser{b: b}
	v = p.value()
	return v, len(b) > 0 && b[0] == '-'
}

type replyParser struct {
	b []byte
	i int
}

// line returns the rest of the current line after its type byte.
func (p *replyParser) line() []byte {
	start := p.i + 1
	end := bytes.Index(p.b[start:], []byte("\r\n"))
	if end < 0 {
		p.i = len(p.b)
		return p.b[start:]
	}
	p.i = start + end + 2
	return p.b[start : start+end]
}

func (p *replyParser) blob(n int) []byte {
	if n < 0 || p.i+n > len(p.b) {
		p.i = len(p.b)
		return nil
	}
	s := p.b[p.i : p.i+n]
	p.i += n + 2
	return s
}

func atoi(b []byte) int {
	n, _ := strconv.Atoi(string(b))
	return n
}

func (p *replyParser) value() lua.Value {
	if p.i >= len(p.b) {
		return lua.Nil
	}
	switch kind := p.b[p.i]; kind {
	case ':':
		n, _ := strconv.ParseInt(string(p.line()), 10, 64)
		return lua.Number(float64(n))
	case '$':
		n := atoi(p.line())
		if n < 0 {
			return lua.False
		}
		return lua.String(string(p.blob(n)))
	case '+':
		return field("ok", lua.String(string(p.line())))
	case '-':
		t := lua.NewTable(0, 0)
		t.SetStr("err", lua.String(string(p.line())))
		// The command already counted its error in the stats.
		t.SetStr("ignore_error_stats_update", lua.True)
		return lua.TableValue(t)
	case '*', '~', '%', '>':
		n := atoi(p.line())
		if n < 0 {
			return lua.False
		}
		switch kind {
		case '%':
			m := lua.NewTable(0, 0)
			for j := 0; j < n; j++ {
				k := p.value()
				v := p.value()
				if !k.IsNil() {
					m.Set(k, v)
				}
			}
			return field("map", lua.TableValue(m))
		case '~':
			s := lua.NewTable(0, 0)
			for j := 0; j < n; j++ {
				if k := p.value(); !k.IsNil() {
					s.Set(k, lua.True)
				}
			}
			return field("set", lua.TableValue(s))
		}
		t := lua.NewTable(0, 0)
		for j := 1; j <= n; j++ {
			t.SetInt(j, p.value())
		}
		return lua.TableValue(t)
	case '_':
		p.line()
		return lua.Nil
	case '#':
		return lua.Bool(string(p.line()) == "t")
	case ',':
		return field("double", lua.Number(parseDouble(string(p.line()))))
	case '(':
		return field("big_number", lua.String(string(p.line())))
	case '=':
		s := p.blob(atoi(p.line()))
		format, text := "txt", s
		if len(s) >= 4 && s[3] == ':' {
			format, text = string(s[:3]), s[4:]
		}
		inner := lua.NewTable(0, 0)
		inner.SetStr("string", lua.String(string(text)))
		inner.SetStr("format", lua.String(format))
		return field("verbatim_string", lua.TableValue(inner))
	case '|':
		// An attribute: skipped, the reply follows it.
		n := atoi(p.line())
		for j := 0; j < 2*n; j++ {
			p.value()
		}
		return p.value()
	}
	p.i = len(p.b)
	return lua.Nil
}

// field is a table of one field.
func field(name string, v lua.Value) lua.Value {
	t := lua.NewTable(0, 0)
	t.SetStr(name, v)
	return lua.TableValue(t)
}

func parseDouble(s string) float64 {
	switch s {
	case "inf":
		return math.Inf(1)
	case "-inf":
		return math.Inf(-1)
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// errorCounted reports whether an error table says a command counted its
// error already: ignore_error_stats_update set to true (a boolean, as
// Redis reads it).
func errorCounted(t *lua.Table) bool {
	b, ok := t.GetStr("ignore_error_stats_update").AsBool()
	return ok && b
}

// maxReplyDepth bounds nested tables in a reply (Redis runs out of Lua
// stack near there).
const maxReplyDepth = 1000

// writeReply writes a script's result: strings as bulk strings, numbers
// as integers (truncated), true as 1 and false as a null (RESP3:
// booleans), and tables as an error, a status, a double, a big number, a
// verbatim string, a map or a set by their one field, else as an array up
// to the first nil.
func writeReply(w *resp.Writer, host Host, proto int, v lua.Value, depth int) {
	if depth > maxReplyDepth {
		const msg = "ERR reached lua stack limit"
		w.Error(msg)
		host.ReplyError(msg, false, depth > 0)
		return
	}
	switch v.Type() {
	case lua.TypeString:
		s, _ := v.AsString()
		w.BulkString(s)
	case lua.TypeBoolean:
		b, _ := v.AsBool()
		switch {
		case proto == 3:
			w.Bool(b)
		case b:
			w.Int(1)
		default:
			w.Null()
		}
	case lua.TypeNumber:
		f, _ := v.AsNumber()
		w.Int(numberToInt(f))
	case lua.TypeTable:
		writeTable(w, host, proto, v.AsTable(), depth)
	default:
		w.Null()
	}
}

// numberToInt is C's (long long) cast of a double on x86-64.
func numberToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return math.MinInt64
	}
	return int64(f)
}

var crlfToSpaces = strings.NewReplacer("\r", " ", "\n", " ")

func writeTable(w *resp.Writer, host Host, proto int, t *lua.Table, depth int) {
	if e, ok := t.GetStr("err").AsString(); ok {
		w.Error(e)
		host.ReplyError(e, errorCounted(t), depth > 0)
		return
	}
	if s, ok := t.GetStr("ok").AsString(); ok {
		w.Simple(crlfToSpaces.Replace(s))
		return
	}
	if d, ok := t.GetStr("double").AsNumber(); ok {
		w.Double(d)
		return
	}
	if b, ok := t.GetStr("big_number").AsString(); ok {
		w.BigNumber(crlfToSpaces.Replace(b))
		return
	}
	if vs := t.GetStr("verbatim_string").AsTable(); vs != nil {
		f, okF := vs.GetStr("format").AsString()
		s, okS := vs.GetStr("string").AsString()
		if okF && okS {
			w.Verbatim(f, s)
			return
		}
	}
	if m := t.GetStr("map").AsTable(); m != nil {
		n := 0
		m.ForEach(func(_, _ lua.Value) { n++ })
		w.Map(n)
		m.ForEach(func(k, v lua.Value) {
			writeReply(w, host, proto, k, depth+1)
			writeReply(w, host, proto, v, depth+1)
		})
		return
	}
	if s := t.GetStr("set").AsTable(); s != nil {
		n := 0
		s.ForEach(func(_, _ lua.Value) { n++ })
		w.Set(n)
		s.ForEach(func(k, _ lua.Value) { writeReply(w, host, proto, k, depth+1) })
		return
	}
	n := 0
	for !t.GetInt(n + 1).IsNil() {
		n++
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		writeReply(w, host, proto, t.GetInt(i), depth+1)
	}
}
