package commands

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Arg is one node of a command's argument tree (COMMAND DOCS "arguments").
type Arg struct {
	Name     string
	Type     string // string, integer, double, key, pattern, unix-time, pure-token, oneof, block
	Token    string
	Optional bool
	Multiple bool
	// MultipleToken: the token comes again with each value ("[GET p]...").
	MultipleToken bool
	KeyIndex      int // key_spec_index for key arguments, else -1
	Since         string
	Args          []*Arg

	explicitKey bool // KeyIndex was given as "#n"
}

// parseArgs turns a usage line into an argument tree. The syntax is the one
// Redis documentation uses, with two additions:
//
//	name[:type][#n]      an argument (type defaults to string, "key" to key);
//	                     a name may contain ':' when a type follows ("ip:port:string");
//	                     #n gives its key_spec_index (by default key arguments
//	                     take the key specs in order, the last one repeating)
//	TOKEN                a pure token
//	"TOK":name           a quoted pure token, named
//	TOKEN x              the token introduces x (an argument or a group)
//	[ ... ]  ( ... )     optional / required group; alternatives split by |
//	[name= ... ]         names a group (otherwise its name is derived from its
//	                     members, joined by '_'); a named group of one
//	                     argument is a block node holding it
//	x...                 x may repeat
//	x...+                x may repeat, each time with its token (multiple_token)
//	[TOKEN x]...         x may repeat, each with its token (multiple_token)
//	[name=TOKEN]         a pure token with its own name
//	x @version           x was added in version ("since")
//
// Example: "key value [NX|XX] [GET] [EX seconds:integer|KEEPTTL]".
func parseArgs(s string) ([]*Arg, error) {
	p := &argParser{toks: tokenizeArgs(s)}
	items, err := p.seq()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	keyIdx := 0
	var number func(args []*Arg)
	number = func(args []*Arg) {
		for _, a := range args {
			if a.Type == "key" && !a.explicitKey {
				a.KeyIndex = keyIdx
				keyIdx++
			}
			number(a.Args)
		}
	}
	number(items)
	return items, nil
}

func tokenizeArgs(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ':
			i++
		case strings.ContainsRune("[]()|", rune(c)):
			toks = append(toks, string(c))
			i++
		case strings.HasPrefix(s[i:], "...+"):
			toks = append(toks, "...+")
			i += 4
		case strings.HasPrefix(s[i:], "..."):
			toks = append(toks, "...")
			i += 3
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" []()|", rune(s[j])) && !strings.HasPrefix(s[j:], "...") {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}

type argParser struct {
	toks []string
	pos  int
}

func (p *argParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func isToken(w string) bool {
	hasUpper := false
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsUpper(r) {
			hasUpper = true
		}
	}
	return hasUpper
}

// seq parses items until a closing bracket, a '|' or the end.
func (p *argParser) seq() ([]*Arg, error) {
	var out []*Arg
	for {
		switch t := p.peek(); t {
		case "", "]", ")", "|":
			return out, nil
		}
		a, err := p.item()
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
}

func (p *argParser) item() (*Arg, error) {
	grouped := p.peek() == "[" || p.peek() == "("
	a, err := p.atom()
	if err != nil {
		return nil, err
	}
	switch p.peek() {
	case "...":
		p.pos++
		a.Multiple = true
		a.MultipleToken = grouped && a.Token != "" && a.Type != "pure-token" && a.Type != "block" && a.Type != "oneof"
	case "...+":
		p.pos++
		a.Multiple, a.MultipleToken = true, true
	}
	if v, ok := strings.CutPrefix(p.peek(), "@"); ok {
		p.pos++
		a.Since = v
	}
	return a, nil
}

func (p *argParser) atom() (*Arg, error) {
	t := p.peek()
	p.pos++
	switch {
	case t == "[" || t == "(":
		closer := map[string]string{"[": "]", "(": ")"}[t]
		a, err := p.group(closer)
		if err != nil {
			return nil, err
		}
		a.Optional = a.Optional || t == "["
		return a, nil
	case isToken(t):
		next := p.peek()
		if next != "" && next != "]" && next != ")" && next != "|" && next != "..." && next != "...+" && !isToken(next) &&
			!strings.HasPrefix(next, "@") {
			a, err := p.atom()
			if err != nil {
				return nil, err
			}
			a.Token = t
			return a, nil
		}
		return &Arg{Name: strings.ToLower(t), Type: "pure-token", Token: t, KeyIndex: -1}, nil
	case strings.HasPrefix(t, `"`):
		// A quoted pure token, named after the colon: `"":empty_string`
		// (MIGRATE's empty key, whose token Redis 7.0 reports empty).
		tok, name, _ := strings.Cut(t[1:], `":`)
		return &Arg{Name: name, Type: "pure-token", Token: tok, KeyIndex: -1}, nil
	case t == "" || t == "]" || t == ")" || t == "|" || t == "..." || t == "...+":
		return nil, fmt.Errorf("unexpected %q", t)
	default:
		return parseLeaf(t)
	}
}

// parseLeaf parses "name[:type][#n]".
func parseLeaf(t string) (*Arg, error) {
	a := &Arg{Name: t, KeyIndex: -1}
	if spec, idx, ok := strings.Cut(t, "#"); ok {
		n, err := strconv.Atoi(idx)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad key spec index in %q", t)
		}
		a.Name, a.KeyIndex, a.explicitKey = spec, n, true
	}
	if i := strings.LastIndexByte(a.Name, ':'); i >= 0 {
		a.Name, a.Type = a.Name[:i], a.Name[i+1:]
	}
	switch a.Type {
	case "":
		a.Type = "string"
		if a.Name == "key" {
			a.Type = "key"
		}
	case "string", "integer", "double", "key", "pattern", "unix-time":
	default:
		return nil, fmt.Errorf("unknown argument type %q", a.Type)
	}
	if strings.Contains(a.Name, "=") {
		return nil, fmt.Errorf("%q: a name= prefix names a group and must open it", t)
	}
	if a.explicitKey && a.Type != "key" && a.Type != "pattern" {
		return nil, fmt.Errorf("%q: only key and pattern arguments have a key spec index", t)
	}
	return a, nil
}

// group parses the inside of [ ] or ( ) up to closer.
func (p *argParser) group(closer string) (*Arg, error) {
	name := ""
	if t := p.peek(); strings.HasSuffix(t, "=") || strings.Contains(t, "=") {
		n, rest, _ := strings.Cut(t, "=")
		name = n
		if rest == "" {
			p.pos++
		} else {
			p.toks[p.pos] = rest
		}
	}
	var alts [][]*Arg
	for {
		s, err := p.seq()
		if err != nil {
			return nil, err
		}
		if len(s) == 0 {
			return nil, fmt.Errorf("empty group")
		}
		alts = append(alts, s)
		if p.peek() == "|" {
			p.pos++
			continue
		}
		break
	}
	if p.peek() != closer {
		return nil, fmt.Errorf("expected %q", closer)
	}
	p.pos++
	block := func(items []*Arg) *Arg {
		if len(items) == 1 {
			return items[0]
		}
		return &Arg{Name: deriveName(items), Type: "block", Args: items, KeyIndex: -1}
	}
	var a *Arg
	switch {
	case len(alts) == 1 && len(alts[0]) == 1 && name != "" && alts[0][0].Type == "pure-token":
		a = alts[0][0] // a named pure token (SORT's "sorting" for ALPHA)
	case len(alts) == 1 && len(alts[0]) == 1 && name != "":
		// Naming a group of one argument makes it a block of its own, as
		// Redis has for CONFIG GET's "parameter" or CLIENT LIST's "id".
		a = &Arg{Type: "block", Args: alts[0], KeyIndex: -1}
	case len(alts) == 1:
		a = block(alts[0])
	default:
		a = &Arg{Type: "oneof", KeyIndex: -1}
		for _, alt := range alts {
			a.Args = append(a.Args, block(alt))
		}
		a.Name = deriveName(a.Args)
	}
	if name != "" {
		a.Name = name
	}
	return a, nil
}

func deriveName(items []*Arg) string {
	parts := make([]string, 0, len(items))
	for _, it := range items {
		parts = append(parts, it.Name)
	}
	return strings.Join(parts, "_")
}
