package tests

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Keyspace notifications of the list family, in the format of
// notify_test.go: the same cases run against Revolver and redis-server.
var listNotifyCasesKEA = []notifyCase{
	{name: "push", setup: []string{"SET s v"},
		cmds: []string{"LPUSH l a b", "RPUSH l c", "LPUSHX l d", "RPUSHX l e", "LPUSHX none a", "RPUSHX none a", "LPUSH s a"},
		want: []string{"lpush l", "rpush l", "lpush l", "rpush l"}},
	{name: "pop", setup: []string{"RPUSH l a b c d e"},
		cmds: []string{"LPOP l", "RPOP l", "LPOP l 0", "RPOP l 2", "LPOP none", "LPOP l 5", "LPOP l"},
		want: []string{"lpop l", "rpop l", "rpop l", "lpop l", "del l"}},
	{name: "lset-linsert", setup: []string{"RPUSH l a b"},
		cmds: []string{"LSET l 0 x", "LSET l 9 x", "LINSERT l BEFORE b y", "LINSERT l AFTER nosuch y", "LINSERT none AFTER a b"},
		want: []string{"lset l", "linsert l"}},
	{name: "lrem", setup: []string{"RPUSH l a b a", "RPUSH m x"},
		cmds: []string{"LREM l 1 a", "LREM l 0 nosuch", "LREM l 0 a", "LREM l 0 b", "LREM m 0 x"},
		want: []string{"lrem l", "lrem l", "lrem l", "del l", "lrem m", "del m"}},
	{name: "ltrim", setup: []string{"RPUSH l a b c d"},
		cmds: []string{"LTRIM l 0 -1", "LTRIM l 1 2", "LTRIM none 0 1", "LTRIM l 5 6"},
		want: []string{"ltrim l", "ltrim l", "ltrim l", "del l"}},
	{name: "lmove", setup: []string{"RPUSH src a b", "SET s v"},
		cmds: []string{"LMOVE src dst LEFT RIGHT", "RPOPLPUSH src dst", "LMOVE dst dst RIGHT LEFT", "LMOVE dst s LEFT LEFT",
			"LMOVE none dst LEFT LEFT"},
		want: []string{"rpush dst", "lpop src", "lpush dst", "rpop src", "del src", "lpush dst", "rpop dst"}},
	{name: "lmpop", setup: []string{"RPUSH a 1 2 3"},
		cmds: []string{"LMPOP 2 none a RIGHT", "LMPOP 1 a LEFT COUNT 5", "LMPOP 1 a LEFT"},
		want: []string{"rpop a", "lpop a", "del a"}},
	{name: "blocking-at-once", setup: []string{"RPUSH a 1 2", "RPUSH b x"},
		cmds: []string{"BLPOP none a 0", "BRPOP a 0", "BLMOVE b c LEFT LEFT 0", "BLMPOP 0 1 c RIGHT COUNT 3", "BLPOP none 0.01"},
		want: []string{"lpop a", "rpop a", "del a", "lpush c", "lpop b", "del b", "rpop c", "del c"}},
	{name: "generic-on-lists", setup: []string{"RPUSH l a"},
		cmds: []string{"EXPIRE l 100", "RENAME l m", "COPY m n", "DEL m n"},
		want: []string{"expire l", "rename_from l", "rename_to m", "copy_to n", "del m", "del n"}},
}

var listNotifyCasesNew = []notifyCase{
	{name: "new-lists", setup: []string{"RPUSH old a", "RPUSH src x"},
		cmds: []string{"LPUSH l a", "RPUSH old b", "LPUSHX none a", "LMOVE src dst LEFT LEFT", "LINSERT l BEFORE a b"},
		want: []string{"new l", "lpush l", "rpush old", "new dst", "lpush dst", "lpop src", "del src", "linsert l"}},
}

func TestListNotifications(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		runNotifySuites(t, addr, listNotifyCasesKEA, listNotifyCasesNew)
		t.Run("served-blocked", func(t *testing.T) { listBlockedEvents(t, addr) })
	})
}

// listBlockedEvents: a parked BLPOP and a parked BLMOVE served by a push
// announce the push first, then the blocked client's own pop (and push).
func listBlockedEvents(t *testing.T, addr string) {
	n := newNotifyConn(t, addr, "KEA")
	n.run("FLUSHALL")
	n.drain()
	admin := goRedis(t, addr, 2)
	cases := []struct {
		block func(c *redis.Client) error
		push  string
		want  []string
	}{
		{func(c *redis.Client) error { return c.BLPop(ctx, 0, "k").Err() }, "RPUSH k a",
			[]string{"rpush k", "lpop k", "del k"}},
		{func(c *redis.Client) error { return c.BLMove(ctx, "k", "d", "RIGHT", "LEFT", 0).Err() }, "LPUSH k a b",
			[]string{"lpush k", "lpush d", "rpop k"}},
		{func(c *redis.Client) error { return c.BLMPop(ctx, 0, "left", 5, "none", "k").Err() }, "RPUSH k c",
			[]string{"rpush k", "lpop k", "del k"}},
	}
	for i, tc := range cases {
		n.run("DEL k d")
		n.drain()
		blocker := goRedis(t, addr, 2)
		done := make(chan error, 1)
		go func() { done <- tc.block(blocker) }()
		zsetWaitBlocked(t, admin, 1)
		n.run(tc.push)
		if err := <-done; err != nil {
			t.Fatalf("case %d: blocked command: %v", i, err)
		}
		got, want := n.drain(), expand(tc.want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("case %d: got %q\nwant %q", i, got, want)
		}
	}
	n.run("FLUSHALL")
}
