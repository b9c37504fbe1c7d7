package scripting

import (
	"errors"
	"fmt"
	"strings"
)

// Shebang lines: "#!lua flags=no-writes,allow-oom" on an EVAL script,
// "#!lua name=mylib" on a FUNCTION library. Redis splits them as it
// splits a command line (sdssplitargs), so values may be quoted.

// Flags are a script's or function's flags.
type Flags uint8

// The flags, as Redis names them.
const (
	FlagEvalCompat Flags = 1 << iota // a script without a shebang: Redis's backwards-compatible mode
	FlagNoWrites
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlot
)

// FlagNames lists the flags scripts can declare, in Redis's order.
var FlagNames = []struct {
	Name string
	Flag Flags
}{
	{"no-writes", FlagNoWrites}, {"allow-oom", FlagAllowOOM}, {"allow-stale", FlagAllowStale},
	{"no-cluster", FlagNoCluster}, {"allow-cross-slot-keys", FlagAllowCrossSlot},
}

// ParseScriptShebang reads an EVAL script's "#!lua flags=..." line. It
// returns the flags and how many bytes the line takes (not its line feed:
// line numbers stay the script's). Errors are Redis's replies.
func ParseScriptShebang(body string) (Flags, int, error) {
	if !strings.HasPrefix(body, "#!") {
		return FlagEvalCompat, 0, nil
	}
	end := strings.IndexByte(body, '\n')
	if end < 0 {
		return 0, 0, errors.New("ERR Invalid script shebang")
	}
	parts, ok := splitArgs(body[:end])
	if !ok || len(parts) == 0 {
		return 0, 0, errors.New("ERR Invalid engine in script shebang")
	}
	if parts[0] != "#!lua" {
		return 0, 0, fmt.Errorf("ERR Unexpected engine in script shebang: %s", parts[0])
	}
	var flags Flags
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, 0, fmt.Errorf("ERR Unknown lua shebang option: %s", p)
		}
		for _, f := range strings.Split(list, ",") {
			bit, found := flagNamed(f, false)
			if !found {
				return 0, 0, fmt.Errorf("ERR Unexpected flag in script shebang: %s", f)
			}
			flags |= bit
		}
	}
	return flags, end, nil
}

// flagNamed finds a flag by name (case-insensitively for functions).
func flagNamed(name string, fold bool) (Flags, bool) {
	for _, d := range FlagNames {
		if d.Name == name || fold && strings.EqualFold(d.Name, name) {
			return d.Flag, true
		}
	}
	return 0, false
}

// LibraryMeta is a FUNCTION library's shebang: "#!<engine> name=<name>".
type LibraryMeta struct {
	Engine, Name string
	Body         string // the code after the shebang line, from its line feed
}

// ParseLibraryMeta reads a library's shebang (Redis's
// functionExtractLibMetaData); errors are its texts, without "ERR".
func ParseLibraryMeta(code string) (LibraryMeta, error) {
	var md LibraryMeta
	if !strings.HasPrefix(code, "#!") {
		return md, errors.New("Missing library metadata")
	}
	end := strings.IndexByte(code, '\n')
	if end < 0 {
		return md, errors.New("Invalid library metadata")
	}
	parts, ok := splitArgs(code[:end])
	if !ok || len(parts) == 0 {
		return md, errors.New("Invalid library metadata")
	}
	md.Engine = parts[0][min(2, len(parts[0])):]
	named := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if named {
				return md, errors.New("Invalid metadata value, name argument was given multiple times")
			}
			md.Name, named = p[5:], true
			continue
		}
		return md, fmt.Errorf("Invalid metadata value given: %s", p)
	}
	if !named {
		return md, errors.New("Library name was not given")
	}
	md.Body = code[end:]
	return md, nil
}

// splitArgs splits a line as Redis's sdssplitargs does: words separated by
// spaces, "double quotes" with \n \r \t \b \a \xHH and \<char> escapes,
// 'single quotes' with \' only; a closing quote must end the word. It
// reports false for unbalanced quotes.
func splitArgs(line string) ([]string, bool) {
	var out []string
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return out, true
		}
		var cur strings.Builder
		inq, insq := false, false
		for done := false; !done; i++ {
			var c byte
			if i < len(line) {
				c = line[i]
			}
			switch {
			case inq:
				switch {
				case c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur.WriteByte(unhex(line[i+2])<<4 | unhex(line[i+3]))
					i += 3
				case c == '\\' && i+1 < len(line):
					i++
					cur.WriteByte(unescape(line[i]))
				case c == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				case i >= len(line):
					return nil, false
				default:
					cur.WriteByte(c)
				}
			case insq:
				switch {
				case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur.WriteByte('\'')
				case c == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				case i >= len(line):
					return nil, false
				default:
					cur.WriteByte(c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur.WriteByte(c)
				}
			}
		}
		out = append(out, cur.String())
	}
}

// unescape is the byte "\c" stands for in double quotes.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
func isHex(c byte) bool   { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }
func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}
