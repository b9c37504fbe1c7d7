package tests

import "testing"

// Keyspace notifications of the stream commands, checked on Revolver and
// on redis-server alike (see notify_test.go for the case format).
var streamNotifyCasesKEA = []notifyCase{
	{name: "xadd", setup: []string{"XADD s 1-0 a 1"},
		cmds: []string{"XADD s 2-0 a 1", "XADD s 1-0 a 1", "XADD s NOMKSTREAM 3-0 a 1", "XADD n NOMKSTREAM 1-0 a 1",
			"XADD s MAXLEN 1 4-0 a 1", "XADD s MAXLEN 5 5-0 a 1"},
		want: []string{"xadd s", "xadd s", "xadd s", "xtrim s", "xadd s"}},
	{name: "xdel-xtrim-xsetid", setup: []string{"XADD s 1-0 a 1", "XADD s 2-0 a 1", "XADD s 3-0 a 1"},
		cmds: []string{"XDEL s 9-0", "XDEL s 1-0", "XTRIM s MAXLEN 5", "XTRIM s MAXLEN 1", "XSETID s 9-0",
			"XSETID s 1-0", "XDEL s 3-0"},
		want: []string{"xdel s", "xtrim s", "xsetid s", "xdel s"}},
	{name: "xgroup", setup: []string{"XADD s 1-0 a 1"},
		cmds: []string{"XGROUP CREATE s g $", "XGROUP CREATE s g $", "XGROUP CREATE m g $ MKSTREAM",
			"XGROUP SETID s g 0", "XGROUP CREATECONSUMER s g c", "XGROUP CREATECONSUMER s g c",
			"XREADGROUP GROUP g d STREAMS s >", "XACK s g 1-0", "XCLAIM s g e 0 1-0", "XGROUP DELCONSUMER s g d",
			"XGROUP DELCONSUMER s g zz", "XAUTOCLAIM s g f 0 0", "XGROUP DESTROY s g", "XGROUP DESTROY s g"},
		want: []string{"xgroup-create s", "xgroup-create m", "xgroup-setid s", "xgroup-createconsumer s",
			"xgroup-createconsumer s", "xgroup-delconsumer s", "xgroup-destroy s"}},
	{name: "stream-keyspace", setup: []string{"XADD s 1-0 a 1"},
		cmds: []string{"RENAME s s2", "COPY s2 s3", "DEL s2 s3"},
		want: []string{"rename_from s", "rename_to s2", "copy_to s3", "del s2", "del s3"}},
}

var streamNotifyCasesNew = []notifyCase{
	{name: "new-streams", cmds: []string{"XADD s 1-0 a 1", "XGROUP CREATE m g $ MKSTREAM", "XADD s 2-0 a 1"},
		want: []string{"new s", "xadd s", "new m", "xgroup-create m", "xadd s"}},
}

func TestStreamKeyspaceNotifications(t *testing.T) {
	testNotifyCases(t, streamNotifyCasesKEA, streamNotifyCasesNew)
}
