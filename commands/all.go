package commands

// Families lists every command family; the server builds its table from it.
// A new family is one file declaring its slice, plus one line here.
func Families() [][]*Command {
	return [][]*Command{Connection, ServerCmds, Introspection, PubSub, Transactions, Keys, Strings, Lists, Hashes, Sets, ZSets, HyperLogLog, UV, Delay}
}
