package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Streams for the DUMP/RESTORE round trips of dump_test.go.
func streamDumpSamples() []dumpSample {
	var big [][]any
	for i := 1; i <= 250; i++ {
		if i%9 == 0 {
			big = append(big, []any{"XADD", "stream-big", fmt.Sprintf("%d-%d", i, i%3), "other", i, "x", strings.Repeat("y", i)})
		} else {
			big = append(big, []any{"XADD", "stream-big", fmt.Sprintf("%d-%d", i, i%3), "f", i * 1000, "g", "v"})
		}
	}
	groups := [][]any{
		{"XADD", "stream-groups", "1-0", "a", 1}, {"XADD", "stream-groups", "2-0", "a", 2}, {"XADD", "stream-groups", "3-0", "b", "x"},
		{"XGROUP", "CREATE", "stream-groups", "g", "0"}, {"XGROUP", "CREATE", "stream-groups", "h", "$"},
		{"XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", "stream-groups", ">"},
		{"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "stream-groups", ">"},
		{"XGROUP", "CREATECONSUMER", "stream-groups", "h", "idle"},
		{"XCLAIM", "stream-groups", "g", "bob", 0, "1-0", "RETRYCOUNT", 4},
		{"XDEL", "stream-groups", "2-0"},
	}
	return []dumpSample{
		{"stream-small", [][]any{{"XADD", "stream-small", "1-1", "f", "v", "n", 12}, {"XADD", "stream-small", "5-0", "f", "w", "n", -3},
			{"XADD", "stream-small", "6-0", "other", strings.Repeat("z", 100)}}},
		{"stream-big", big},
		{"stream-trimmed", append(append([][]any{}, big...)[:0:0], append(renameKey(big, "stream-trimmed"),
			[]any{"XDEL", "stream-trimmed", "50-2", "120-0", "249-0"}, []any{"XTRIM", "stream-trimmed", "MAXLEN", "~", 120},
			[]any{"XTRIM", "stream-trimmed", "MAXLEN", "110"}, []any{"XSETID", "stream-trimmed", "999-9"})...)},
		{"stream-empty", [][]any{{"XADD", "stream-empty", "1-1", "f", "v"}, {"XDEL", "stream-empty", "1-1"}}},
		{"stream-groups", groups},
	}
}

func renameKey(cmds [][]any, key string) [][]any {
	out := make([][]any, len(cmds))
	for i, c := range cmds {
		c = append([]any(nil), c...)
		c[1] = key
		out[i] = c
	}
	return out
}

// Payloads that carry times, or tombstones Revolver does not keep, are
// not byte for byte Redis's.
var streamDumpVaries = map[string]bool{"stream-trimmed": true, "stream-empty": true, "stream-groups": true}

// streamValue renders a stream whole: XINFO STREAM FULL carries the
// pending entries' delivery times and the consumers' seen-times, which a
// payload holds as absolute times, so they survive DUMP/RESTORE exactly.
func streamValue(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	out := fmt.Sprint(c.XRange(ctx, key, "-", "+").Val())
	info, err := c.Do(ctx, "XINFO", "STREAM", key).Result()
	if err != nil {
		t.Fatal(err)
	}
	out += fmt.Sprint(info)
	full, err := c.Do(ctx, "XINFO", "STREAM", key, "FULL", "COUNT", "0").Result()
	if err != nil {
		t.Fatal(err)
	}
	out += fmt.Sprint(full)
	groups, err := c.XInfoGroups(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		out += fmt.Sprintf(" group %+v", g)
		for _, p := range c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: 100}).Val() {
			out += fmt.Sprintf(" %s:%s:%d", p.ID, p.Consumer, p.RetryCount)
		}
		for _, cons := range c.XInfoConsumers(ctx, key, g.Name).Val() {
			out += fmt.Sprintf(" consumer %s/%d", cons.Name, cons.Pending)
		}
	}
	return out
}
