package tests

import "testing"

// dumpOfV is redis-server's DUMP of the string "v".
const dumpOfV = `"\x00\x01v\x0a\x00\x91\x08\xce\xb2\x198\x8a\xce"`

var dumpNotifyKEA = []notifyCase{
	{name: "restore", cmds: []string{"RESTORE k 0 " + dumpOfV, "RESTORE k 0 " + dumpOfV},
		want: []string{"restore k"}},
	{name: "restore-replace", setup: []string{"SET k old"}, cmds: []string{"RESTORE k 0 " + dumpOfV + " REPLACE"},
		want: []string{"restore k"}},
	{name: "restore-ttl", cmds: []string{"RESTORE k 100000 " + dumpOfV},
		want: []string{"restore k"}},
	{name: "restore-past-absttl", setup: []string{"SET k old"},
		cmds: []string{"RESTORE k 1 " + dumpOfV + " ABSTTL REPLACE", "RESTORE j 1 " + dumpOfV + " ABSTTL"},
		want: []string{"del k"}},
	{name: "restore-errors", setup: []string{"SET k old"},
		cmds: []string{"RESTORE k 0 " + dumpOfV, "RESTORE j 0 bad", "RESTORE j -1 " + dumpOfV},
		want: nil},
}

var dumpNotifyNew = []notifyCase{
	{name: "restore-new", setup: []string{"SET old v"},
		cmds: []string{"RESTORE k 0 " + dumpOfV, "RESTORE old 0 " + dumpOfV + " REPLACE"},
		want: []string{"new k", "restore k", "new old", "restore old"}},
}

// TestDumpNotifications checks RESTORE's keyspace events on both servers.
func TestDumpNotifications(t *testing.T) {
	testNotifyCases(t, dumpNotifyKEA, dumpNotifyNew)
}
