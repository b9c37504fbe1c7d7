package tests

import "testing"

// Keyspace notifications of the HyperLogLog commands, checked on Revolver
// and on redis-server alike (see notify_test.go for the case format).
// PFMERGE announces itself as "pfadd", as Redis does.
var hllNotifyCasesKEA = []notifyCase{
	{name: "pfadd", cmds: []string{"PFADD h a", "PFADD h a", "PFADD h", "PFADD h b c", "PFADD e"},
		want: []string{"pfadd h", "pfadd h", "pfadd e"}},
	{name: "pfcount", setup: []string{"PFADD h a", "PFADD g b"},
		cmds: []string{"PFCOUNT h", "PFCOUNT h", "PFCOUNT h g nosuch", "PFCOUNT nosuch"}},
	{name: "pfmerge", setup: []string{"PFADD a x"},
		cmds: []string{"PFMERGE d a", "PFMERGE d", "PFMERGE e nosuch", "PFMERGE a a"},
		want: []string{"pfadd d", "pfadd d", "pfadd e", "pfadd a"}},
	{name: "pfdebug", setup: []string{"PFADD a x"},
		cmds: []string{"PFDEBUG ENCODING a", "PFDEBUG DECODE a", "PFDEBUG GETREG a", "PFDEBUG TODENSE a"}},
	{name: "errors", setup: []string{"SET s v", "PFADD h a"},
		cmds: []string{"PFADD s a", "PFMERGE d s", "PFMERGE s h", "PFCOUNT s", "PFDEBUG GETREG s"}},
}

var hllNotifyCasesNew = []notifyCase{
	{name: "new-sketches", setup: []string{"PFADD old x"},
		cmds: []string{"PFADD h a", "PFADD old y", "PFMERGE d old", "PFMERGE d old"},
		want: []string{"new h", "pfadd h", "pfadd old", "new d", "pfadd d", "pfadd d"}},
}

func TestHLLKeyspaceNotifications(t *testing.T) {
	testNotifyCases(t, hllNotifyCasesKEA, hllNotifyCasesNew)
}
