package commands

import (
	"bytes"

	"github.com/revolver-db/revolver/engine"
)

// Bitmaps are the string commands that combine or edit strings as bit
// arrays and packed integers: BITOP, BITFIELD and BITFIELD_RO (SETBIT,
// GETBIT, BITCOUNT and BITPOS are in strings.go).
var Bitmaps = []*Command{
	{Name: "bitop", Arity: -4, Flags: "write denyoom", ACL: "bitmap", Keys: "OW update @2;RO access @3..-1",
		Group: "bitmap", Since: "2.6.0", Complexity: "O(N)",
		Summary: "Performs bitwise operations on multiple strings, and stores the result.",
		Args:    "operation destkey:key key...", Run: bitop},
	{Name: "bitfield", Arity: -2, Flags: "write denyoom", ACL: "bitmap",
		Keys: "RW access update variable_flags @1 " +
			"notes=This command allows both access and modification of the key",
		Group: "bitmap", Since: "3.2.0", Complexity: "O(1) for each subcommand specified",
		Summary: "Performs arbitrary bitfield integer operations on strings.",
		Args: "key [operation=GET (encoding_offset=encoding offset:integer)|" +
			"(write=[OVERFLOW (wrap_sat_fail=WRAP|SAT|FAIL)] " +
			"(write_operation=SET (encoding_offset_value=encoding offset:integer value:integer)|" +
			"INCRBY (encoding_offset_increment=encoding offset:integer increment:integer)))]...",
		Run: func(c *Ctx) { bitfield(c, false) }},
	{Name: "bitfield_ro", Arity: -2, Flags: "readonly fast", ACL: "bitmap", Keys: "RO access @1",
		Group: "bitmap", Since: "6.0.0", Complexity: "O(1) for each subcommand specified",
		Summary: "Performs arbitrary read-only bitfield integer operations on strings.",
		Args:    "key [GET (encoding_offset=encoding offset:integer)]...+",
		Run:     func(c *Ctx) { bitfield(c, true) }},
}

func bitop(c *Ctx) {
	var op engine.BitOpKind
	switch name := c.Args[1]; {
	case is(name, "AND"):
		op = engine.BitAnd
	case is(name, "OR"):
		op = engine.BitOr
	case is(name, "XOR"):
		op = engine.BitXor
	case is(name, "NOT"):
		op = engine.BitNot
	default:
		c.SyntaxError()
		return
	}
	if op == engine.BitNot && len(c.Args) != 4 {
		c.W.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	dst := c.Args[2]
	n, deleted, err := c.DB.BitOp(op, dst, c.Args[3:])
	if err != nil {
		c.Error(err)
		return
	}
	if n > 0 {
		c.DB.Notify(engine.NotifyString, "set", dst)
	} else if deleted {
		c.DB.Notify(engine.NotifyGeneric, "del", dst)
	}
	c.W.Int(int64(n))
}

const bitfieldTypeError = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

// bitfield is BITFIELD, or BITFIELD_RO when readOnly. Every argument is
// parsed before anything runs: one bad argument and nothing is done.
func bitfield(c *Ctx, readOnly bool) {
	var ops []engine.BitfieldOp
	overflow := engine.OverflowWrap
	writes := false
	args := c.Args
	for j := 2; j < len(args); j++ {
		more := len(args) - j - 1
		var op engine.BitfieldOp
		switch a := args[j]; {
		case is(a, "GET") && more >= 2:
			op.Kind = engine.BitfieldGet
		case is(a, "SET") && more >= 3:
			op.Kind = engine.BitfieldSet
		case is(a, "INCRBY") && more >= 3:
			op.Kind = engine.BitfieldIncrBy
		case is(a, "OVERFLOW") && more >= 1:
			j++
			switch mode := args[j]; {
			case is(mode, "WRAP"):
				overflow = engine.OverflowWrap
			case is(mode, "SAT"):
				overflow = engine.OverflowSat
			case is(mode, "FAIL"):
				overflow = engine.OverflowFail
			default:
				c.W.Error("ERR Invalid OVERFLOW type specified")
				return
			}
			continue
		default:
			c.SyntaxError()
			return
		}
		var ok bool
		if op.Signed, op.Bits, ok = bitfieldType(args[j+1]); !ok {
			c.W.Error(bitfieldTypeError)
			return
		}
		if op.Offset, ok = c.bitfieldOffset(args[j+2], op.Bits); !ok {
			return
		}
		op.Overflow = overflow
		if op.Kind != engine.BitfieldGet {
			writes = true
			if op.Value, ok = c.Int64Arg(args[j+3]); !ok {
				return
			}
			j++
		}
		ops = append(ops, op)
		j += 2
	}
	if writes && readOnly {
		// Refused before the key is looked at.
		c.W.Error("ERR BITFIELD_RO only supports the GET subcommand")
		return
	}
	replies, changed, err := c.DB.Bitfield(args[1], ops)
	if err != nil {
		c.Error(err)
		return
	}
	c.W.Array(len(replies))
	for _, r := range replies {
		if r.Failed {
			c.W.Null()
		} else {
			c.W.Int(r.Value)
		}
	}
	if changed {
		c.DB.Notify(engine.NotifyString, "setbit", args[1])
	}
}

// bitfieldType parses "i1".."i64" or "u1".."u63". The letter is
// case-sensitive, and Redis reads the width as a C string, so it ends at a
// NUL byte.
func bitfieldType(a []byte) (signed bool, bits uint, ok bool) {
	if len(a) == 0 || (a[0] != 'i' && a[0] != 'u') {
		return false, 0, false
	}
	signed = a[0] == 'i'
	width := a[1:]
	if i := bytes.IndexByte(width, 0); i >= 0 {
		width = width[:i]
	}
	n, ok := engine.ParseInt(width)
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		return false, 0, false
	}
	return signed, uint(n), true
}

// bitfieldOffset parses a BITFIELD offset: a bit offset, or "#n" for the
// n-th field of this width (n times the width, multiplied in 64-bit
// two's complement as Redis does). Its byte must lie below
// proto-max-bulk-len.
func (c *Ctx) bitfieldOffset(a []byte, bits uint) (uint64, bool) {
	scaled := len(a) > 0 && a[0] == '#'
	if scaled {
		a = a[1:]
	}
	n, ok := engine.ParseInt(a)
	if scaled {
		n *= int64(bits)
	}
	if !ok || n < 0 || n>>3 >= c.Eng.MaxStringLen() {
		c.W.Error("ERR bit offset is not an integer or out of range")
		return 0, false
	}
	return uint64(n), true
}
