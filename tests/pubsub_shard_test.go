package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/revolver-db/revolver/resp"
)

// shardConversation drives SSUBSCRIBE/SPUBLISH/SUNSUBSCRIBE next to the
// normal channels, so every confirmation, smessage frame and count (7.0
// counts shard channels apart) is compared with Redis.
var shardConversation = []step{
	{0, "SUNSUBSCRIBE", 1, false},
	{0, "SUNSUBSCRIBE nosuch other", 2, false},
	{0, "SSUBSCRIBE a b a", 3, false},
	{0, "SUBSCRIBE a", 1, false},
	{0, "PSUBSCRIBE *", 1, false},
	{1, "SSUBSCRIBE a", 1, false},
	{2, "SPUBLISH a hello", 1, false},
	{0, "", 1, false},
	{1, "", 1, false},
	{2, "PUBLISH a plain", 1, false},
	{0, "", 2, true},
	{2, "SPUBLISH nobody z", 1, false},
	{2, "PUBSUB SHARDCHANNELS", 1, true},
	{2, "PUBSUB SHARDCHANNELS a*", 1, false},
	{2, "PUBSUB SHARDNUMSUB a b c", 1, false},
	{2, "PUBSUB CHANNELS", 1, false},
	{2, "PUBSUB NUMSUB a b", 1, false},
	{0, "SUNSUBSCRIBE a nosuch", 2, false},
	{2, "PUBSUB SHARDNUMSUB a", 1, false},
	{0, "UNSUBSCRIBE", 1, false},
	{0, "PUNSUBSCRIBE", 1, false},
	{0, "PING", 1, false},
	{0, "GET k", 1, false},
	{0, "SUNSUBSCRIBE", 1, false},
	{0, "SUNSUBSCRIBE", 1, false},
	{0, "GET k", 1, false},
	{1, "SSUBSCRIBE c d", 2, false},
	{1, "SUNSUBSCRIBE", 3, true}, // c, d and a from above
	{1, "SSUBSCRIBE e", 1, false},
	{1, "RESET", 1, false},
	{2, "PUBSUB SHARDCHANNELS", 1, false},
	{1, "MULTI", 1, false},
	{1, "SSUBSCRIBE x", 1, false},
	{1, "EXEC", 1, false},
	{2, "PUBSUB SHARDCHANNELS", 1, false},
}

func TestShardPubSubMatchesRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			compareConversation(t, proto, 3, shardConversation)
		})
	}
	// Pipelined, a shard subscriber's own message comes after the
	// confirmation and before SPUBLISH's reply (RESP3 lets it publish).
	selfPublish := []step{
		{0, "SSUBSCRIBE me\nSPUBLISH me hi\nPING", 4, false},
	}
	t.Run("RESP3 self publish", func(t *testing.T) { compareConversation(t, 3, 1, selfPublish) })
}

// TestShardPubSubClientFields: CLIENT LIST's ssub= and INFO's
// pubsubshard_channels follow shard subscriptions only.
func TestShardPubSubClientFields(t *testing.T) {
	srv := startServer(t)
	sub := dialRaw(t, srv.Addr())
	other := dialRaw(t, srv.Addr())
	sub.do("HELLO", "3")
	sub.do("SSUBSCRIBE", "s1")
	sub.do("SSUBSCRIBE", "s2")
	sub.do("SUBSCRIBE", "n1")
	info := sub.do("CLIENT", "INFO").Str
	if !strings.Contains(info, " sub=1 psub=0 ssub=2 ") || !strings.Contains(info, "flags=P") {
		t.Fatalf("CLIENT INFO: %s", info)
	}
	stats := other.do("INFO", "stats").Str
	if !strings.Contains(stats, "pubsub_channels:1\r\n") || !strings.Contains(stats, "pubsubshard_channels:2\r\n") {
		t.Fatalf("INFO stats: %s", stats)
	}
	if v := other.do("CLIENT", "LIST", "TYPE", "pubsub").String(); !strings.Contains(v, "ssub=2") {
		t.Fatalf("CLIENT LIST TYPE pubsub: %s", v)
	}
}

// TestShardPubSubAcrossLoops: a shard message reaches a subscriber served by
// another event loop, in both protocols.
func TestShardPubSubAcrossLoops(t *testing.T) {
	s := startServer(t, withConfig("io-threads", "2"))
	for _, proto := range []int{2, 3} {
		sub := dialRaw(t, s.Addr())
		pub := dialRaw(t, s.Addr()) // the next connection goes to the other loop
		if proto == 3 {
			sub.do("HELLO", "3")
		}
		if v := sub.do("SSUBSCRIBE", "cross:shard"); frameText(v) != "ssubscribe cross:shard 1" {
			t.Fatalf("RESP%d SSUBSCRIBE: %s", proto, v)
		}
		if v := pub.do("SPUBLISH", "cross:shard", "hi"); v.String() != "(integer) 1" {
			t.Fatalf("RESP%d SPUBLISH: %s", proto, v)
		}
		if v := sub.read(); frameText(v) != "smessage cross:shard hi" {
			t.Fatalf("RESP%d smessage: %s", proto, v)
		}
		if v := pub.do("PUBLISH", "cross:shard", "plain"); v.String() != "(integer) 0" {
			t.Fatalf("RESP%d PUBLISH to a shard channel's name: %s", proto, v)
		}
		sub.conn.Close()
	}
}

// frameText renders a pushed frame's elements, whatever the protocol.
func frameText(v resp.Value) string {
	parts := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		parts[i] = e.Str
		if e.Str == "" {
			parts[i] = fmt.Sprint(e.Int)
		}
	}
	return strings.Join(parts, " ")
}
