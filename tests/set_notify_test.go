package tests

import "testing"

// Keyspace notifications of the set commands, checked on Revolver and on
// redis-server alike (see notify_test.go for the case format).
var setNotifyCasesKEA = []notifyCase{
	{name: "sadd", setup: []string{"SADD s a"},
		cmds: []string{"SADD s a", "SADD s b c", "SADD n 1 2"},
		want: []string{"sadd s", "sadd n"}},
	{name: "srem", setup: []string{"SADD s a b c"},
		cmds: []string{"SREM s x", "SREM nosuch a", "SREM s a", "SREM s b c d"},
		want: []string{"srem s", "srem s", "del s"}},
	{name: "spop", setup: []string{"SADD s a b c"},
		cmds: []string{"SPOP nosuch", "SPOP s", "SPOP s", "SPOP s", "SPOP s"},
		want: []string{"spop s", "spop s", "spop s", "del s"}},
	{name: "spop-count", setup: []string{"SADD s 1 2 3 4 5 6 7 8 9 10", "SADD t a b"},
		cmds: []string{"SPOP s 0", "SPOP nosuch 3", "SPOP s -1", "SPOP s 2", "SPOP s 7", "SPOP s 5", "SPOP t 2"},
		want: []string{"spop s", "spop s", "spop s", "del s", "spop t", "del t"}},
	{name: "smove", setup: []string{"SADD a x y z", "SADD b x", "SET str v"},
		cmds: []string{"SMOVE a b x", "SMOVE a b nosuch", "SMOVE a a y", "SMOVE nosuch b x", "SMOVE a str y",
			"SMOVE a c y", "SMOVE a b z"},
		want: []string{"srem a", "srem a", "sadd c", "srem a", "del a", "sadd b"}},
	{name: "sinterstore", setup: []string{"SADD a 1 2 3", "SADD b 2 3 4", "SET str v", "SET str2 v"},
		cmds: []string{"SINTERSTORE d a b", "SINTERSTORE d a nosuch", "SINTERSTORE d a nosuch",
			"SINTERSTORE str a b", "SINTERSTORE d a str2"},
		want: []string{"sinterstore d", "del d", "sinterstore str"}},
	{name: "sunionstore", setup: []string{"SADD a 1 2", "HSET h f v"},
		cmds: []string{"SUNIONSTORE d a", "SUNIONSTORE d nosuch", "SUNIONSTORE d nosuch", "SUNIONSTORE h a"},
		want: []string{"sunionstore d", "del d", "sunionstore h"}},
	{name: "sdiffstore", setup: []string{"SADD a 1 2", "SADD b 2"},
		cmds: []string{"SDIFFSTORE d a b", "SDIFFSTORE d a a", "SDIFFSTORE d a a", "SDIFFSTORE a a b"},
		want: []string{"sdiffstore d", "del d", "sdiffstore a"}},
	{name: "set-reads", setup: []string{"SADD s a b"},
		cmds: []string{"SISMEMBER s a", "SMISMEMBER s a x", "SMEMBERS s", "SCARD s", "SRANDMEMBER s",
			"SRANDMEMBER s -5", "SINTER s s", "SINTERCARD 1 s", "SUNION s", "SDIFF s", "SSCAN s 0"}},
}

// With class n, creating the set is announced before the command's event;
// SMOVE announces its destination after the source's events.
var setNotifyCasesNew = []notifyCase{
	{name: "new-set-writers", setup: []string{"SADD a 1 2", "SADD old x"},
		cmds: []string{"SADD s a", "SADD old y", "SUNIONSTORE u a", "SINTERSTORE i a a", "SDIFFSTORE d a old",
			"SUNIONSTORE u a"},
		want: []string{"new s", "sadd s", "sadd old", "new u", "sunionstore u", "new i", "sinterstore i",
			"new d", "sdiffstore d", "sunionstore u"}},
	{name: "new-smove", setup: []string{"SADD a x y"},
		cmds: []string{"SMOVE a b x", "SMOVE a c y"},
		want: []string{"srem a", "new b", "sadd b", "srem a", "del a", "new c", "sadd c"}},
}

func TestSetKeyspaceNotifications(t *testing.T) {
	testNotifyCases(t, setNotifyCasesKEA, setNotifyCasesNew)
}
