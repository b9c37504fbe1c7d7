package commands

import (
	"strconv"
	"strings"

	"github.com/revolver-db/revolver/engine"
)

// optionParser reads the NAME [value] options of the native families
// (DELAY, QUEUE, ...) strictly: an unknown option, a missing value, a
// repeated option, a value that is not a number or is out of range each get
// an error reply naming the problem, and parsing stops at the first.
type optionParser struct {
	c    *Ctx
	args [][]byte
	i    int
	seen []string
	name string // the option being read (upper case)
	err  bool
}

// options starts parsing c.Args from index from.
func (c *Ctx) options(from int) *optionParser { return &optionParser{c: c, args: c.Args, i: from} }

// next reads the next option name and reports false at the end of the
// arguments or after an error.
func (p *optionParser) next() bool {
	if p.err || p.i >= len(p.args) {
		return false
	}
	p.name = strings.ToUpper(string(p.args[p.i]))
	p.i++
	for _, s := range p.seen {
		if s == p.name {
			return p.fail("ERR syntax error, option '" + p.name + "' given more than once")
		}
	}
	p.seen = append(p.seen, p.name)
	return true
}

// unknown rejects the option just read.
func (p *optionParser) unknown() {
	p.fail("ERR syntax error, unknown option '" + p.name + "' for '" + p.c.Cmd.FullName() + "'")
}

func (p *optionParser) fail(msg string) bool {
	if !p.err {
		p.c.W.Error(msg)
		p.err = true
	}
	return false
}

// value is the option's argument.
func (p *optionParser) value() []byte {
	if p.err {
		return nil
	}
	if p.i >= len(p.args) {
		p.fail("ERR syntax error, option '" + p.name + "' needs a value")
		return nil
	}
	v := p.args[p.i]
	p.i++
	return v
}

// maxTimeMs bounds every time and duration a client gives (about 285,000
// years): sums of them stay far from int64 overflow.
const maxTimeMs = 1 << 53

// millis reads a duration or time in ms of at least min.
func (p *optionParser) millis(min int64) int64 {
	v := p.value()
	if p.err {
		return 0
	}
	return p.c.parseMillis(v, p.name, min, &p.err)
}

// positive reads a count of at least 1.
func (p *optionParser) positive() int64 {
	v := p.value()
	if p.err {
		return 0
	}
	n, ok := engine.ParseInt(v)
	if !ok {
		p.fail("ERR value is not an integer or out of range")
		return 0
	}
	if n < 1 {
		p.fail("ERR " + p.name + " must be positive")
		return 0
	}
	return n
}

// parseMillis parses v, the ms value of what (an option name or argument),
// requiring at least min; on failure it writes the error and sets *failed.
func (c *Ctx) parseMillis(v []byte, what string, min int64, failed *bool) int64 {
	n, ok := engine.ParseInt(v)
	switch {
	case !ok:
		c.W.Error("ERR value is not an integer or out of range")
	case n < min && min > 0:
		c.W.Error("ERR " + what + " must be at least " + itoa(min) + " ms")
	case n < min:
		c.W.Error("ERR " + what + " must not be negative")
	case n > maxTimeMs:
		c.W.Error("ERR " + what + " is out of range")
	default:
		return n
	}
	*failed = true
	return 0
}

// integer reads any integer.
func (p *optionParser) integer() int64 {
	v := p.value()
	if p.err {
		return 0
	}
	n, ok := engine.ParseInt(v)
	if !ok {
		p.fail("ERR value is not an integer or out of range")
		return 0
	}
	return n
}

// atLeast reads an integer of at least min (0 often meaning "no limit").
func (p *optionParser) atLeast(min int64) int64 {
	n := p.integer()
	if !p.err && n < min {
		p.fail("ERR " + p.name + " must be at least " + itoa(min))
	}
	return n
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
