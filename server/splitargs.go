package server

// Redis's argument splitter (sds.c sdssplitargs), which Redis uses both for
// inline commands on the wire and for config-file lines. Both callers here
// share the one implementation below; what differs is only around it:
//
//   - inline requests (reader.inline) split the line in place, in the
//     reader's input buffer, into a reused scratch list: no allocation; the
//     reader caps the line at inlineMax first and answers unbalanced quotes
//     with errProtoQuotes;
//   - config lines (splitConfigArgs) split a copy and get strings back (the
//     text is the caller's, and is small and read once); they have no length
//     limit, and Config.apply reports unbalanced quotes with the file's line
//     number, while ConfigRewrite keeps such a line as it is.

// splitArgs splits line as sdssplitargs does, appending the arguments to
// args: blanks separate arguments; "double quotes" take \n \r \t \b \a \xHH
// and \<any> escapes; 'single quotes' take \' only; a quote opens even in
// mid-word; a closing quote must be followed by a blank or the end; a NUL
// byte ends the line. It unescapes in place (each argument's bytes shrink
// toward its start, never into the next one's), returns arguments without
// spare capacity, and returns ok=false on unbalanced quotes.
func splitArgs(line []byte, args [][]byte) ([][]byte, bool) {
	at := func(i int) byte { // the line as a C string: NUL past its end
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	p := 0
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if at(p) == 0 {
			return args, true
		}
		start, o := p, p
		var quote byte // the open quote, 0 outside quotes
		for done := false; !done; {
			ch := at(p)
			switch {
			case quote == 0:
				switch ch {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"', '\'':
					quote = ch
				default:
					line[o] = ch
					o++
				}
			case ch == 0:
				return args, false // the line ends inside quotes
			case ch == quote:
				if nx := at(p + 1); nx != 0 && !isSpace(nx) {
					return args, false
				}
				done = true
			case ch != '\\':
				line[o] = ch
				o++
			case quote == '\'':
				if at(p+1) == '\'' {
					p++
					ch = '\''
				}
				line[o] = ch
				o++
			case at(p+1) == 'x' && isHex(at(p+2)) && isHex(at(p+3)):
				line[o] = unhex(at(p+2))<<4 | unhex(at(p+3))
				o++
				p += 3
			case at(p+1) != 0:
				p++
				switch e := line[p]; e {
				case 'n':
					line[o] = '\n'
				case 'r':
					line[o] = '\r'
				case 't':
					line[o] = '\t'
				case 'b':
					line[o] = '\b'
				case 'a':
					line[o] = '\a'
				default:
					line[o] = e
				}
				o++
			default: // a backslash last in the line: the quote is left open
				line[o] = ch
				o++
			}
			if ch != 0 {
				p++
			}
		}
		args = append(args, line[start:o:o])
	}
}

// splitConfigArgs is splitArgs for a config-file line: it splits a copy
// (splitArgs unescapes in place) and returns the arguments as strings.
func splitConfigArgs(line string) ([]string, bool) {
	args, ok := splitArgs([]byte(line), nil)
	if !ok {
		return nil, false
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out, true
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
