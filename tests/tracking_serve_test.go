package tests

import (
	"testing"
)

// Tracking around blocked clients and eviction, compared frame by frame
// with redis-server (tracking_test.go's transcripts).
var trackingServeCases = []trackingCase{
	// A client served by BLMOVE is the current client while it is served:
	// the invalidation of the destination it tracks follows its reply
	// (NOLOOP drops it); another reader hears at once; a BCAST reader of
	// the destination hears after its reply too.
	{"served-blmove", []string{
		"a: hello3", "a= CLIENT TRACKING on", "a= LRANGE dst 0 -1", "o: hello3", "o= CLIENT TRACKING on",
		"o= LRANGE dst 0 -1", "a: BLMOVE src dst LEFT LEFT 0", "b= LPUSH src x", "a> 2", "o> 1",
		"n: hello3", "n= CLIENT TRACKING on NOLOOP", "n= LRANGE dst2 0 -1", "n: BLMOVE src2 dst2 RIGHT LEFT 0",
		"b= RPUSH src2 y", "n> 1",
		"m: hello3", "m= CLIENT TRACKING on BCAST PREFIX d3", "m: BLMOVE s3 d3 LEFT LEFT 0", "b= LPUSH s3 z", "m> 2",
		"b= DEL dst dst2 d3", "m> 1",
	}},
	// Keys evicted before a command are invalidated before its reply, and,
	// as in Redis, not at all for the client whose command it is when it
	// tracks with NOLOOP. CONFIG SET maxmemory-policy evicts nothing by
	// itself; the next command does (nearest deadline first).
	{"evicted-before-command", []string{
		"b= SET k v EX 1000", "b= SET k2 v EX 2000", "a: hello3", "a= CLIENT TRACKING on NOLOOP", "a= GET k",
		"c: hello3", "c= CLIENT TRACKING on", "c= GET k", "c= GET k2",
		"b= CONFIG SET maxmemory 1", "b= CONFIG SET maxmemory-policy volatile-ttl", "c> 0",
		"a= GET nosuch", "c> 2", "a= DBSIZE",
		"b= CONFIG SET maxmemory 0", "b= CONFIG SET maxmemory-policy noeviction",
	}},
}

func TestTrackingServe(t *testing.T) {
	t.Cleanup(func() {
		c := dialRaw(t, realRedis(t))
		c.do("CONFIG", "SET", "maxmemory", "0")
		c.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	})
	runTrackingCases(t, func(t *testing.T) string { return startServer(t).Addr() }, trackingServeCases)
}

// TestTrackingServeTwoLoops runs them with the connections on two event
// loops: the served client's reply and pushes cross loops.
func TestTrackingServeTwoLoops(t *testing.T) {
	t.Cleanup(func() {
		c := dialRaw(t, realRedis(t))
		c.do("CONFIG", "SET", "maxmemory", "0")
		c.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	})
	runTrackingCases(t, func(t *testing.T) string { return startServer(t, withConfig("io-threads", "2")).Addr() },
		trackingServeCases)
}
