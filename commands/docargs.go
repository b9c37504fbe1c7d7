package commands

import (
	"fmt"
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
	KeyIndex int // key_spec_index for key arguments, else -1
	Args     []*Arg
}

// parseArgs turns a usage line into an argument tree. The syntax is the one
// Redis documentation uses, with two additions:
//
//	name[:type]          an argument (type defaults to string, "key" to key)
//	TOKEN                a pure token
//	TOKEN x              the token introduces x (an argument or a group)
//	[ ... ]  ( ... )     optional / required group; alternatives split by |
//	[name= ... ]         names a group (otherwise its name is derived)
//	x...                 x may repeat
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
			if a.Type == "key" {
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
	a, err := p.atom()
	if err != nil {
		return nil, err
	}
	if p.peek() == "..." {
		p.pos++
		a.Multiple = true
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
		if next != "" && next != "]" && next != ")" && next != "|" && next != "..." && !isToken(next) {
			a, err := p.atom()
			if err != nil {
				return nil, err
			}
			a.Token = t
			return a, nil
		}
		return &Arg{Name: strings.ToLower(t), Type: "pure-token", Token: t, KeyIndex: -1}, nil
	case t == "" || t == "]" || t == ")" || t == "|" || t == "...":
		return nil, fmt.Errorf("unexpected %q", t)
	default:
		name, typ, _ := strings.Cut(t, ":")
		if typ == "" {
			typ = "string"
			if name == "key" {
				typ = "key"
			}
		}
		switch typ {
		case "string", "integer", "double", "key", "pattern", "unix-time":
		default:
			return nil, fmt.Errorf("unknown argument type %q", typ)
		}
		return &Arg{Name: name, Type: typ, KeyIndex: -1}, nil
	}
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
	if len(alts) == 1 {
		a = block(alts[0])
		if len(alts[0]) == 1 && name != "" && a.Type != "pure-token" {
			// A named single argument keeps its own node.
			a = &Arg{Name: name, Type: a.Type, Token: a.Token, Args: a.Args, KeyIndex: -1}
		}
	} else {
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
	return strings.Join(parts, "-")
}
