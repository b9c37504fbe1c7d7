package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Keyspace notifications of the sorted set family (class z, plus "del" when
// a command empties a key and "new" with class n), checked on Revolver and
// on redis-server with the same cases (see notify_test.go for the format).
var notifyCasesZSet = []notifyCase{
	{name: "zadd", cmds: []string{"ZADD z 1 a 2 b", "ZADD z 1 a", "ZADD z 5 a", "ZADD z CH 5 a", "ZADD z NX 9 a",
		"ZADD z XX 1 nosuch", "ZADD z GT 1 a", "ZADD z LT 1 a", "ZADD nosuch XX 1 a", "ZADD z abc a", "ZADD z NX XX 1 a"},
		want: []string{"zadd z", "zadd z", "zadd z"}},
	{name: "zadd-incr", cmds: []string{"ZADD z INCR 1 a", "ZADD z INCR 0 a", "ZINCRBY z 2 a", "ZINCRBY z 0 a",
		"ZADD z INCR inf b", "ZADD z INCR -inf b", "ZADD z XX INCR 1 nosuch"},
		want: []string{"zincr z", "zincr z", "zincr z"}},
	{name: "zrem", setup: []string{"ZADD z 1 a 2 b 3 c"},
		cmds: []string{"ZREM z a nosuch", "ZREM z nosuch", "ZREM z b c", "ZREM z a", "ZREM nosuch a"},
		want: []string{"zrem z", "zrem z", "del z"}},
	{name: "zremrange", setup: []string{"ZADD z 1 a 2 b 3 c 4 d 5 e", "ZADD l 0 a 0 b 0 c"},
		cmds: []string{"ZREMRANGEBYRANK z 0 0", "ZREMRANGEBYRANK z 10 20", "ZREMRANGEBYSCORE z 2 3",
			"ZREMRANGEBYSCORE z 10 20", "ZREMRANGEBYSCORE z x y", "ZREMRANGEBYLEX l [a [b", "ZREMRANGEBYLEX l (x (y",
			"ZREMRANGEBYRANK z 0 -1", "ZREMRANGEBYLEX l - +"},
		want: []string{"zremrangebyrank z", "zremrangebyscore z", "zremrangebylex l", "zremrangebyrank z", "del z",
			"zremrangebylex l", "del l"}},
	{name: "zpop", setup: []string{"ZADD z 1 a 2 b 3 c 4 d"},
		cmds: []string{"ZPOPMIN z", "ZPOPMAX z 1", "ZPOPMIN z 0", "ZPOPMIN nosuch", "ZPOPMAX z 10", "ZPOPMIN z"},
		want: []string{"zpopmin z", "zpopmax z", "zpopmax z", "del z"}},
	{name: "zmpop-bzpop", setup: []string{"ZADD z 1 a 2 b 3 c", "ZADD y 1 a"},
		cmds: []string{"ZMPOP 2 nosuch z MIN", "ZMPOP 1 z MAX COUNT 5", "BZPOPMIN nosuch y 0", "ZADD z 1 a 2 b",
			"BZMPOP 0 1 z MAX", "BZPOPMAX z 0"},
		want: []string{"zpopmin z", "zpopmax z", "del z", "zpopmin y", "del y", "zadd z", "zpopmax z", "zpopmax z",
			"del z"}},
	{name: "store", setup: []string{"ZADD a 1 x 2 y", "ZADD b 3 y 4 z", "SET str v", "SADD s x", "HSET h f v"},
		cmds: []string{"ZUNIONSTORE d 2 a b", "ZINTERSTORE d 2 a b", "ZDIFFSTORE d 2 a b", "ZRANGESTORE d a 0 0",
			"ZUNIONSTORE str 1 s", "ZINTERSTORE d 2 a nosuch", "ZINTERSTORE d 2 a nosuch", "ZDIFFSTORE e 2 a a",
			"ZRANGESTORE f a 5 10", "ZRANGESTORE a a 0 0", "ZUNIONSTORE x 2 a h"},
		want: []string{"zunionstore d", "zinterstore d", "zdiffstore d", "zrangestore d", "zunionstore str", "del d",
			"zrangestore a"}},
	{name: "generic", setup: []string{"ZADD z 1 a"},
		cmds: []string{"EXPIRE z 100", "RENAME z z2", "COPY z2 z3", "DEL z2 z3"},
		want: []string{"expire z", "rename_from z", "rename_to z2", "copy_to z3", "del z2", "del z3"}},
	{name: "wrongtype", setup: []string{"SET str v"},
		cmds: []string{"ZADD str 1 a", "ZINCRBY str 1 a", "ZREM str a", "ZPOPMIN str", "ZREMRANGEBYRANK str 0 1",
			"ZRANGESTORE d str 0 1", "ZUNIONSTORE d 1 str"}},
}

var notifyCasesZSetNew = []notifyCase{
	{name: "new", setup: []string{"ZADD old 1 a", "SET str v"},
		cmds: []string{"ZADD z 1 a", "ZADD old 2 b", "ZINCRBY i 1 a", "ZUNIONSTORE u 1 old", "ZUNIONSTORE u 1 old",
			"ZRANGESTORE r old 0 0", "ZDIFFSTORE str 1 old", "ZADD x XX 1 a"},
		want: []string{"new z", "zadd z", "zadd old", "new i", "zincr i", "new u", "zunionstore u", "zunionstore u",
			"new r", "zrangestore r", "zdiffstore str"}},
}

// TestZSetNotifications checks the events of every sorted-set write on
// Revolver and on redis-server.
func TestZSetNotifications(t *testing.T) {
	testNotifyCases(t, notifyCasesZSet, notifyCasesZSetNew)
}

// TestZSetNotificationsServedPop: a client blocked in BZPOPMIN is served by
// another client's ZADD; the pop's events follow the ZADD's, as in Redis.
func TestZSetNotificationsServedPop(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		n := newNotifyConn(t, addr, "KEA")
		n.run("FLUSHALL")
		n.drain()
		blocked := goRedis(t, addr, 2)
		// park runs pop in the background, waits until the server lists the
		// client as blocked in cmd, and returns where "key member" arrives.
		park := func(cmd string, pop func() (*redis.ZWithKey, error)) <-chan string {
			done := make(chan string, 1)
			go func() {
				if v, err := pop(); err != nil {
					done <- err.Error()
				} else {
					done <- v.Key + " " + v.Member.(string)
				}
			}()
			waitFor(t, 5*time.Second, "the client to block", func() bool {
				return strings.Contains(n.cmd.ClientList(ctx).Val(), "cmd="+cmd)
			})
			return done
		}
		done := park("bzpopmin", func() (*redis.ZWithKey, error) { return blocked.BZPopMin(ctx, 0, "bz").Result() })
		n.run("ZADD bz 1 a 2 b")
		if got := <-done; got != "bz a" {
			t.Fatalf("BZPOPMIN served %q", got)
		}
		n.run("ZADD bz2 1 a")
		done = park("bzpopmax", func() (*redis.ZWithKey, error) { return blocked.BZPopMax(ctx, 0, "bz2x", "bz3").Result() })
		n.run("ZUNIONSTORE bz3 1 bz2")
		if got := <-done; got != "bz3 a" {
			t.Fatalf("BZPOPMAX served %q", got)
		}
		got := n.drain()
		want := expand([]string{"zadd bz", "zpopmin bz", "zadd bz2", "zunionstore bz3", "zpopmax bz3", "del bz3"})
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("events\n got: %q\nwant: %q", got, want)
		}
	})
}
