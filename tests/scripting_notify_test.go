package tests

import "testing"

// Keyspace notifications of what scripts do: each command a script calls
// announces itself as it would from a client, in order, and a script that
// fails halfway has announced what it did before failing. Checked on
// Revolver and on redis-server alike (see notify_test.go for the format).
var scriptNotifyCasesKEA = []notifyCase{
	{name: "eval", cmds: []string{
		`EVAL "redis.call('set', KEYS[1], 'v'); redis.call('expire', KEYS[1], 100); redis.call('del', KEYS[1])" 1 k`,
		`EVAL "return redis.call('get', KEYS[1])" 1 k`},
		want: []string{"set k", "expire k", "del k"}},
	{name: "eval-error", setup: []string{"SET s v"}, cmds: []string{
		`EVAL "redis.call('rpush', KEYS[1], 'a'); redis.call('incr', KEYS[2]); redis.call('rpush', KEYS[1], 'b')" 2 l s`},
		want: []string{"rpush l"}},
	{name: "fcall", setup: []string{"FUNCTION LOAD REPLACE \"#!lua name=nlib\\nredis.register_function('nset', function(keys, args) redis.call('hset', keys[1], 'f', args[1]); return redis.call('hdel', keys[1], 'f') end)\""},
		cmds: []string{"FCALL nset 1 h v"}, want: []string{"hset h", "hdel h", "del h"}},
}

var scriptNotifyCasesNew = []notifyCase{
	{name: "new-from-script", cmds: []string{`EVAL "redis.call('sadd', KEYS[1], 'm')" 1 s`},
		want: []string{"new s", "sadd s"}},
}

func TestScriptKeyspaceNotifications(t *testing.T) {
	testNotifyCases(t, scriptNotifyCasesKEA, scriptNotifyCasesNew)
}
