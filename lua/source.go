package lua

import "strings"

// idSize is Lua's LUA_IDSIZE: the room a chunk's name has in messages.
const idSize = 60

// chunkID is how Lua 5.1 names a chunk in messages (luaO_chunkid): a name
// starting with "=" as it is, without the "="; one starting with "@" (a
// file) without the "@", its end kept if too long; any other name is the
// source itself, shown as [string "its first line"], cut to fit. Lua
// reads the name as a C string: it ends at a NUL.
func chunkID(name string) string { return chunkIDSize(name, idSize) }

// chunkIDSize is chunkID for a buffer of size bytes (the lexer's messages
// use 80, Lua's MAXSRC, where run-time ones use LUA_IDSIZE).
func chunkIDSize(name string, size int) string {
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	switch {
	case strings.HasPrefix(name, "="):
		return truncate(name[1:], size-1)
	case strings.HasPrefix(name, "@"):
		name = name[1:]
		room := size - len(" '...' ") - 1
		if len(name) > room {
			return "..." + name[len(name)-room:]
		}
		return name
	}
	line := name
	if i := strings.IndexAny(name, "\r\n"); i >= 0 {
		line = name[:i]
	}
	line = truncate(line, size-len(` [string "..."] `)-1)
	if len(line) < len(name) {
		return `[string "` + line + `..."]`
	}
	return `[string "` + line + `"]`
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// SyntaxError is a chunk that does not compile; Msg is Lua's message
// ("user_script:1: '=' expected near 'x'").
type SyntaxError struct{ Msg string }

func (e *SyntaxError) Error() string { return e.Msg }
