package commands

// scriptDebug is SCRIPT DEBUG. Revolver has no Lua debugger (Redis's LDB):
// NO, the mode every connection is in, is accepted; YES and SYNC, which
// would start a debugging session, are refused.
func scriptDebug(c *Ctx) {
	switch mode := c.Args[2]; {
	case is(mode, "NO"):
		c.W.OK()
	case is(mode, "YES"), is(mode, "SYNC"):
		c.W.Error("ERR SCRIPT DEBUG " + string(upper(mode)) + " is not supported: this server has no Lua debugger")
	default:
		c.W.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}

func upper(b []byte) []byte {
	out := make([]byte, len(b))
	for i, ch := range b {
		if ch >= 'a' && ch <= 'z' {
			ch -= 'a' - 'A'
		}
		out[i] = ch
	}
	return out
}
