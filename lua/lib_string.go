package lua

import (
	"encoding/binary"
	"strings"
)

// Lua 5.1's string library as Redis 7.0 ships it (lstrlib.c): the simple
// functions here, patterns in lib_pattern.go, format in lib_format.go.

// openString registers the string library and gives strings their
// metatable, whose __index is the library.
func openString(L *State) *Table {
	lib := L.Register("string", []LibFunc{
		{"byte", strByte}, {"char", strChar}, {"dump", strDump}, {"find", strFind},
		{"format", strFormat}, {"gfind", strGmatch}, {"gmatch", strGmatch}, {"gsub", strGsub},
		{"len", strLen}, {"lower", strLower}, {"match", strMatch}, {"rep", strRep},
		{"reverse", strReverse}, {"sub", strSub}, {"upper", strUpper},
	})
	// LUA_COMPAT_GFIND: gfind is the very same function as gmatch.
	lib.SetStr("gfind", lib.GetStr("gmatch"))
	meta := NewTable(0, 1)
	meta.SetStr("__index", TableValue(lib))
	L.SetStringMetatable(meta)
	return lib
}

// maxStringSize bounds what string.rep builds; Lua has no such bound, it
// keeps the server from exhausting its memory on one call.
const maxStringSize = 1<<31 - 1

// posrelat makes a negative string position count from the end (-1 the
// last byte), and a position before the start 0.
func posrelat(pos, length int) int {
	if pos < 0 {
		pos += length + 1
	}
	if pos < 0 {
		return 0
	}
	return pos
}

func strLen(L *State) int {
	L.Push(Number(float64(len(L.CheckString(1)))))
	return 1
}

func strSub(L *State) int {
	s := L.CheckString(1)
	start := posrelat(L.CheckInteger(2), len(s))
	end := posrelat(L.OptInteger(3, -1), len(s))
	start = max(start, 1)
	end = min(end, len(s))
	if start > end {
		L.Push(String(""))
	} else {
		L.Push(String(s[start-1 : end]))
	}
	return 1
}

func strReverse(L *State) int {
	s := L.CheckString(1)
	b := make([]byte, len(s))
	for i := range len(s) {
		b[len(s)-1-i] = s[i]
	}
	L.Push(String(string(b)))
	return 1
}

// strLower and strUpper map ASCII letters only, as C's tolower and
// toupper do in the C locale.
func strLower(L *State) int {
	L.Push(String(flipCase(L.CheckString(1), 'A', 'Z')))
	return 1
}

func strUpper(L *State) int {
	L.Push(String(flipCase(L.CheckString(1), 'a', 'z')))
	return 1
}

// flipCase switches the case of the letters of s in lo..hi.
func flipCase(s string, lo, hi byte) string {
	b := []byte(s)
	for i, c := range b {
		if c >= lo && c <= hi {
			b[i] = c ^ 0x20
		}
	}
	return string(b)
}

func strRep(L *State) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || s == "" {
		L.Push(String(""))
		return 1
	}
	if len(s) > maxStringSize/n {
		L.Error(String("not enough memory"))
	}
	L.Push(String(strings.Repeat(s, n)))
	return 1
}

func strByte(L *State) int {
	s := L.CheckString(1)
	posi := posrelat(L.OptInteger(2, 1), len(s))
	pose := posrelat(L.OptInteger(3, posi), len(s))
	posi = max(posi, 1)
	pose = min(pose, len(s))
	if posi > pose {
		return 0
	}
	n := pose - posi + 1
	// luaL_checkstack: the results and what is already on the frame
	// must fit in LUAI_MAXCSTACK.
	if n > maxCStack || L.Top()+n > maxCStack {
		L.Errorf("stack overflow (string slice too long)")
	}
	for i := range n {
		L.Push(Number(float64(s[posi-1+i])))
	}
	return n
}

func strChar(L *State) int {
	n := L.Top()
	b := make([]byte, n)
	for i := 1; i <= n; i++ {
		c := L.CheckInt(i)
		if c < 0 || c > 255 {
			L.ArgError(i, "invalid value")
		}
		b[i-1] = byte(c)
	}
	L.Push(String(string(b)))
	return 1
}

// luaSignature is the header of a Lua 5.1 binary chunk as x86-64 builds
// write it: signature, version 5.1, official format, little endian, and
// the sizes of int, size_t, an instruction and a number (not integral).
const luaSignature = "\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00"

// Lua 5.1's is_vararg bits.
const (
	varargHasArg   = 1
	varargIsVararg = 2
	varargNeedsArg = 4
)

// strDump writes a Lua function as far as this interpreter can: the
// chunk header and the function's header (source, lines, counts), where
// Lua's bytecode would follow. Redis loads text chunks only, so no
// script can load a dump back in either case.
func strDump(L *State) int {
	L.CheckType(1, TypeFunction)
	f := L.Get(1).AsFunction()
	if f.proto == nil {
		L.Errorf("unable to dump given function")
	}
	p := f.proto
	b := []byte(luaSignature)
	if p.source == "" {
		b = binary.LittleEndian.AppendUint64(b, 0)
	} else {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(p.source)+1))
		b = append(b, p.source...)
		b = append(b, 0)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(p.lineDefined))
	b = binary.LittleEndian.AppendUint32(b, uint32(p.lastLine))
	vararg := byte(0)
	switch {
	case p.lineDefined == 0:
		vararg = varargIsVararg
	case p.isVararg && p.needsArg:
		vararg = varargIsVararg | varargHasArg | varargNeedsArg
	case p.isVararg:
		vararg = varargIsVararg | varargHasArg
	}
	b = append(b, byte(len(p.upvalNames)), byte(p.nparams), vararg)
	L.Push(String(string(b)))
	return 1
}
