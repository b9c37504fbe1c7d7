package tests

import "testing"

// Keyspace notifications of the hash commands, checked on Revolver and on
// redis-server alike (see notify_test.go for the case format).
var hashNotifyCasesKEA = []notifyCase{
	{name: "hset", setup: []string{"HSET h a 1"},
		cmds: []string{"HSET h a 1", "HSET h b 2 c 3", "HMSET h a 2", "HSET h odd"},
		want: []string{"hset h", "hset h", "hset h"}},
	{name: "hsetnx", setup: []string{"HSET h a 1"},
		cmds: []string{"HSETNX h a 2", "HSETNX h b 2", "HSETNX new a 1"},
		want: []string{"hset h", "hset new"}},
	{name: "hdel", setup: []string{"HSET h a 1 b 2 c 3"},
		cmds: []string{"HDEL h nosuch", "HDEL nosuch a", "HDEL h a", "HDEL h b c d"},
		want: []string{"hdel h", "hdel h", "del h"}},
	{name: "hincrby", setup: []string{"HSET h s abc"},
		cmds: []string{"HINCRBY h n 5", "HINCRBY h s 1", "HINCRBY h n abc", "HINCRBY new n -1"},
		want: []string{"hincrby h", "hincrby new"}},
	{name: "hincrby-overflow", setup: []string{"HSET h n 9223372036854775807"},
		cmds: []string{"HINCRBY h n 1", "HINCRBY h n -1"}, want: []string{"hincrby h"}},
	{name: "hincrbyfloat", setup: []string{"HSET h s abc"},
		cmds: []string{"HINCRBYFLOAT h f 1.5", "HINCRBYFLOAT h s 1", "HINCRBYFLOAT h f inf",
			"HINCRBYFLOAT h f abc", "HINCRBYFLOAT new f 1e100"},
		want: []string{"hincrbyfloat h", "hincrbyfloat new"}},
	{name: "hash-wrongtype", setup: []string{"SET str v"},
		cmds: []string{"HSET str a 1", "HSETNX str a 1", "HDEL str a", "HINCRBY str a 1", "HINCRBYFLOAT str a 1"}},
	{name: "hash-reads", setup: []string{"HSET h a 1 b 2"},
		cmds: []string{"HGET h a", "HMGET h a b", "HGETALL h", "HKEYS h", "HVALS h", "HLEN h", "HEXISTS h a",
			"HSTRLEN h a", "HRANDFIELD h", "HRANDFIELD h -3 WITHVALUES", "HSCAN h 0"}},
	{name: "hash-keyspace", setup: []string{"HSET h a 1"},
		cmds: []string{"RENAME h h2", "COPY h2 h3", "EXPIRE h3 100", "DEL h2 h3"},
		want: []string{"rename_from h", "rename_to h2", "copy_to h3", "expire h3", "del h2", "del h3"}},
}

// With class n, creating the hash is announced before the command's event.
var hashNotifyCasesNew = []notifyCase{
	{name: "new-hash-writers", setup: []string{"HSET old a 1"},
		cmds: []string{"HSET h a 1", "HSET old b 2", "HSETNX nx a 1", "HINCRBY i n 1", "HINCRBYFLOAT f n 1",
			"HINCRBY bad n abc", "HINCRBYFLOAT bad n inf", "HMSET m a 1"},
		want: []string{"new h", "hset h", "hset old", "new nx", "hset nx", "new i", "hincrby i",
			"new f", "hincrbyfloat f", "new m", "hset m"}},
	{name: "new-hash-recreated", setup: []string{"HSET h a 1"},
		cmds: []string{"HDEL h a", "HSET h a 1"},
		want: []string{"hdel h", "del h", "new h", "hset h"}},
}

func TestHashKeyspaceNotifications(t *testing.T) {
	testNotifyCases(t, hashNotifyCasesKEA, hashNotifyCasesNew)
}
