package tests

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Keyspace notifications and WATCH of BITOP and BITFIELD, checked on
// Revolver and on redis-server alike (see notify_test.go for the case
// format). BITOP announces its destination as "set" (or "del" when an
// empty result removed it); BITFIELD announces "setbit" once per command,
// and only when a write changed a field or had to create or grow the
// string.
var bitsNotifyCasesKEA = []notifyCase{
	{name: "bitop", setup: []string{"SET a x", "SET b yy"},
		cmds: []string{"BITOP AND d a b", "BITOP OR d a", "BITOP XOR a a b", "BITOP NOT d b"},
		want: []string{"set d", "set d", "set a", "set d"}},
	{name: "bitop-empty", setup: []string{"SET d v", "SET e \"\""},
		cmds: []string{"BITOP OR d nosuch", "BITOP OR d nosuch", "BITOP AND x e nosuch"},
		want: []string{"del d"}},
	{name: "bitop-replaces", setup: []string{"SET a x", "RPUSH d v", "SET t v EX 100"},
		cmds: []string{"BITOP OR d a", "BITOP OR t a"}, want: []string{"set d", "set t"}},
	{name: "bitop-errors", setup: []string{"SET a x", "RPUSH l v", "SET d v"},
		cmds: []string{"BITOP AND d a l", "BITOP NOT d a b", "BITOP FOO d a"}},
	{name: "bitfield", setup: []string{"SET k \"\\x01\""},
		cmds: []string{"BITFIELD k SET u8 0 2 INCRBY u8 0 1 GET u8 0", "BITFIELD k INCRBY u4 0 1",
			"BITFIELD n SET u8 0 0", "BITFIELD n SET u8 100 0"},
		want: []string{"setbit k", "setbit k", "setbit n", "setbit n"}},
	{name: "bitfield-unchanged", setup: []string{"SET k \"\\x01\\x02\""},
		cmds: []string{"BITFIELD k SET u8 0 1", "BITFIELD k GET u8 0", "BITFIELD k INCRBY i8 8 0",
			"BITFIELD k OVERFLOW FAIL INCRBY u8 0 255 SET i4 8 8", "BITFIELD k", "BITFIELD nosuch GET u8 0",
			"BITFIELD_RO k GET u8 0", "BITFIELD_RO nosuch GET u8 0", "BITFIELD k OVERFLOW SAT SET u1 15 0"}},
	{name: "bitfield-grows", setup: []string{"SET k \"\\x01\""},
		cmds: []string{"BITFIELD k SET u8 8 0", "BITFIELD k OVERFLOW SAT INCRBY u8 0 0"},
		want: []string{"setbit k"}},
	{name: "bitfield-errors", setup: []string{"SET k v", "RPUSH l v"},
		cmds: []string{"BITFIELD l SET u8 0 1", "BITFIELD k SET u8 0 1 GET x8 0", "BITFIELD_RO k SET u8 0 1",
			"BITFIELD k SET u8 -1 1"}},
}

var bitsNotifyCasesNew = []notifyCase{
	{name: "new-keys", setup: []string{"SET a x", "SET old v"},
		cmds: []string{"BITOP NOT d a", "BITOP NOT d a", "BITFIELD b SET u8 0 1", "BITFIELD b SET u8 0 2",
			"BITFIELD old SET u8 0 1", "BITFIELD c GET u8 0", "BITOP AND e nosuch"},
		want: []string{"new d", "set d", "set d", "new b", "setbit b", "setbit b", "setbit old"}},
}

func TestBitsKeyspaceNotifications(t *testing.T) {
	testNotifyCases(t, bitsNotifyCasesKEA, bitsNotifyCasesNew)
}

// TestBitsWatch: a BITOP or a BITFIELD that changes a key aborts the
// transactions watching it; reads, refused writes and writes that change
// nothing do not, on Revolver and on redis-server alike.
func TestBitsWatch(t *testing.T) {
	cases := []struct {
		name    string
		setup   []string
		cmd     string
		aborted bool
	}{
		{"bitop-dest", []string{"SET a x"}, "BITOP OR w a", true},
		{"bitop-source", []string{"SET w x"}, "BITOP OR d w", false},
		{"bitop-empty-deletes", []string{"SET w x"}, "BITOP OR w nosuch", true},
		{"bitop-empty-missing", nil, "BITOP OR w nosuch", false},
		{"bitop-wrongtype", []string{"SET w x", "RPUSH l v"}, "BITOP OR w l", false},
		{"bitfield-set", []string{"SET w x"}, "BITFIELD w SET u8 0 1", true},
		{"bitfield-same", []string{"SET w \"\\x01\""}, "BITFIELD w SET u8 0 1", false},
		{"bitfield-get", []string{"SET w x"}, "BITFIELD w GET u8 0", false},
		{"bitfield-ro", []string{"SET w x"}, "BITFIELD_RO w GET u8 0", false},
		{"bitfield-create", nil, "BITFIELD w SET u8 0 0", true},
		{"bitfield-grow", []string{"SET w x"}, "BITFIELD w SET u8 100 0", true},
		{"bitfield-fail", []string{"SET w \"\\xff\""}, "BITFIELD w OVERFLOW FAIL INCRBY u8 0 1", false},
		// Refused writes that still create or grow the string.
		{"bitfield-fail-creates", nil, "BITFIELD w OVERFLOW FAIL INCRBY u8 0 300", false},
		{"bitfield-fail-grows", []string{"SET w x"}, "BITFIELD w OVERFLOW FAIL SET u8 100 256", false},
		{"bitfield-error", []string{"SET w x"}, "BITFIELD w SET u8 0 1 GET x8 0", false},
	}
	onBothServers(t, func(t *testing.T, addr string) {
		watcher, other := goRedis(t, addr, 2), goRedis(t, addr, 2)
		for _, tc := range cases {
			other.FlushAll(ctx)
			for _, l := range tc.setup {
				args, _ := splitCommandLine(l)
				other.Do(ctx, toAny(args)...)
			}
			err := watcher.Watch(ctx, func(tx *redis.Tx) error {
				args, _ := splitCommandLine(tc.cmd)
				other.Do(ctx, toAny(args)...)
				_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Ping(ctx)
					return nil
				})
				return err
			}, "w")
			if aborted := err == redis.TxFailedErr; aborted != tc.aborted || (err != nil && !aborted) {
				t.Errorf("%s: %s: EXEC error %v, want aborted=%v", tc.name, tc.cmd, err, tc.aborted)
			}
		}
	})
}

func toAny(args []string) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a
	}
	return out
}

// TestBitsDirtyCount: INFO's rdb_changes_since_last_save grows as Redis's:
// by one for a BITOP that stores or deletes, by the number of fields a
// BITFIELD changed (every successful write when the string was created or
// grown), and not at all for reads, refused writes and unchanged fields.
func TestBitsDirtyCount(t *testing.T) {
	cases := []struct {
		setup []string
		cmd   string
		delta int
	}{
		{[]string{"SET a x"}, "BITOP NOT d a", 1},
		{[]string{"SET d x"}, "BITOP OR d nosuch", 1},
		{nil, "BITOP OR d nosuch", 0},
		{[]string{"SET w xy"}, "BITFIELD w SET u8 0 1 SET u8 8 121 INCRBY u8 0 1 GET u8 0", 2},
		{[]string{"SET w x"}, "BITFIELD w SET u8 0 1 SET u8 8 0 INCRBY u8 0 1 GET u8 0", 3},
		{nil, "BITFIELD w SET u8 0 0 SET u8 8 0 SET u8 0 1", 3},
		{[]string{"SET w x"}, "BITFIELD w SET u8 100 0 SET u8 0 120 OVERFLOW FAIL INCRBY u8 0 1000", 2},
		{[]string{"SET w x"}, "BITFIELD w OVERFLOW FAIL SET u8 100 256", 0},
		{nil, "BITFIELD w OVERFLOW FAIL SET u8 0 256", 0},
		{[]string{"SET w x"}, "BITFIELD w GET u8 0", 0},
		{[]string{"SET w x"}, "BITFIELD w SET u8 0 120", 0},
	}
	onBothServers(t, func(t *testing.T, addr string) {
		c := goRedis(t, addr, 2)
		changes := func() int {
			t.Helper()
			info := c.Info(ctx, "persistence").Val()
			_, rest, _ := strings.Cut(info, "rdb_changes_since_last_save:")
			n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]))
			if err != nil {
				t.Fatalf("INFO persistence: %q", info)
			}
			return n
		}
		for _, tc := range cases {
			c.FlushAll(ctx)
			for _, l := range tc.setup {
				args, _ := splitCommandLine(l)
				c.Do(ctx, toAny(args)...)
			}
			before := changes()
			args, _ := splitCommandLine(tc.cmd)
			c.Do(ctx, toAny(args)...)
			if got := changes() - before; got != tc.delta {
				t.Errorf("%s: %d changes counted, want %d", tc.cmd, got, tc.delta)
			}
		}
	})
}
