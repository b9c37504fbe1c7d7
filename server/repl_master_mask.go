package server

import (
	"bytes"
	"strconv"
	"strings"
)

// A replica that is not Revolver (a redis-server) cannot run Revolver's own
// commands, and would log each as an error its master sent it. It gets
// each of them as an ECHO of the same length instead: ECHO changes
// nothing, and the same length keeps its offsets (what it acknowledges,
// what it asks PSYNC for) the master's.

// maskNative returns b, a run of whole commands of the stream, with the
// native ones replaced by ECHOs of their length; b itself when it holds
// none. A run it cannot parse is returned as it is.
func (s *Server) maskNative(b []byte) []byte {
	var out []byte
	done := 0 // bytes of b already in out
	for p := 0; p < len(b); {
		name, end, ok := commandAt(b, p)
		if !ok {
			break
		}
		if s.nativeName(name) {
			if out == nil {
				out = make([]byte, 0, len(b))
			}
			out = append(out, b[done:p]...)
			out = appendEchoOfLen(out, end-p)
			done = end
		}
		p = end
	}
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// nativeName reports whether a command name is one of Revolver's own
// families' or REVOLVER.REPL.
func (s *Server) nativeName(name []byte) bool {
	if bytes.IndexByte(name, '.') < 0 {
		return false // the common case, without a lookup
	}
	if bytes.EqualFold(name, replCmd) {
		return true
	}
	cmd := s.table.LookupFullName(string(name))
	return cmd != nil && isNative(cmd)
}

// commandAt parses the multibulk command at b[p:]: its name and where it
// ends.
func commandAt(b []byte, p int) (name []byte, end int, ok bool) {
	n, p, ok := headerAt(b, p, '*')
	if !ok || n < 1 {
		return nil, 0, false
	}
	for i := 0; i < n; i++ {
		var l int
		if l, p, ok = headerAt(b, p, '$'); !ok || l < 0 || p+l+2 > len(b) {
			return nil, 0, false
		}
		if i == 0 {
			name = b[p : p+l]
		}
		p += l + 2
	}
	return name, p, true
}

// headerAt parses "<kind><n>\r\n" at b[p:].
func headerAt(b []byte, p int, kind byte) (n, next int, ok bool) {
	if p >= len(b) || b[p] != kind {
		return 0, 0, false
	}
	i := bytes.Index(b[p:], []byte("\r\n"))
	if i < 0 {
		return 0, 0, false
	}
	n, err := strconv.Atoi(string(b[p+1 : p+i]))
	return n, p + i + 2, err == nil
}

// appendEchoOfLen appends exactly n bytes that change nothing: "ECHO
// <padding>" as long as fits, then a newline or two (an ECHO's length
// skips the values where its padding's length gains a digit), which Redis
// skips as empty inline commands and counts in the offset. n is a native
// command's length, always more than an empty ECHO's 20.
func appendEchoOfLen(dst []byte, n int) []byte {
	const fixed = len("*2\r\n$4\r\nECHO\r\n$\r\n\r\n")
	pad := max(n-fixed-1, 0)
	for pad > 0 && fixed+len(strconv.Itoa(pad))+pad > n {
		pad--
	}
	start := len(dst)
	dst = append(dst, "*2\r\n$4\r\nECHO\r\n$"...)
	dst = strconv.AppendInt(dst, int64(pad), 10)
	dst = append(dst, "\r\n"...)
	dst = append(dst, strings.Repeat("-", pad)...)
	dst = append(dst, "\r\n"...)
	for len(dst)-start < n {
		dst = append(dst, '\n')
	}
	return dst
}
