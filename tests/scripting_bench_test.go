package tests

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"os"
	"strconv"
	"testing"

	"github.com/revolver-db/revolver/resp"
)

// BenchmarkScriptCall measures EVALSHA on an in-process Revolver (no
// persistence), 16 calls per round trip on one connection: time and heap
// allocations per script call, the server's and the client's together (the
// client's share is the same for every script). Two scripts:
//
//   - 3calls: INCR, HSET and GET on a thousand keys;
//   - numpool: seed 003's number pool, 8 × call then 8 × hangup of the
//     numbers the calls took, over a pool of 64 idle numbers.
//
// It is the quick loop for work on the scripting path; the side-by-side
// numbers with redis-server come from `revolver-bench --suite script`.
//
//	go test -run x -bench ScriptCall -benchmem ./tests/
func BenchmarkScriptCall(b *testing.B) {
	b.Run("3calls", func(b *testing.B) {
		c := dialRaw(b, startServer(b).Addr())
		sha := benchScriptLoad(b, c, "redis.call('INCR', KEYS[1])\n"+
			"redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])\n"+
			"return redis.call('GET', KEYS[1])")
		var batch bytes.Buffer
		for i := range 16 {
			n := strconv.Itoa(i * 61 % 1000)
			batch.Write(encodeCommand([]string{"EVALSHA", sha, "2", "counter:" + n, "hash", "field:" + n, "xxx"}))
		}
		benchScriptBatches(b, c, func(int) ([]byte, int) { return batch.Bytes(), 16 }, nil)
	})
	b.Run("numpool", func(b *testing.B) {
		src, err := os.ReadFile("testdata/seed003_numpool.lua")
		if err != nil {
			b.Fatal(err)
		}
		c := dialRaw(b, startServer(b).Addr())
		sha := benchScriptLoad(b, c, string(src))
		for i := range 64 {
			n := strconv.Itoa(13800000000 + i)
			c.do("EVALSHA", sha, "1", "{numpool}", "add", n)
			c.do("EVALSHA", sha, "1", "{numpool}", "reg", n)
		}
		calls := bytes.Repeat(encodeCommand([]string{"EVALSHA", sha, "1", "{numpool}", "call"}), 8)
		taken := make([]string, 8)
		var hangups bytes.Buffer
		benchScriptBatches(b, c, func(round int) ([]byte, int) {
			if round%2 == 0 {
				return calls, 8
			}
			hangups.Reset()
			for _, n := range taken {
				hangups.Write(encodeCommand([]string{"EVALSHA", sha, "1", "{numpool}", "hangup", n}))
			}
			return hangups.Bytes(), 8
		}, func(round, i int, v resp.Value) {
			if round%2 == 0 {
				taken[i] = v.Str
			}
		})
	})
}

func benchScriptLoad(b *testing.B, c *rawConn, src string) string {
	sum := sha1.Sum([]byte(src))
	sha := hex.EncodeToString(sum[:])
	if got := c.do("SCRIPT", "LOAD", src); got.Str != sha {
		b.Fatalf("SCRIPT LOAD: %+v", got)
	}
	return sha
}

// benchScriptBatches sends the n commands batch(round) returns and reads
// their replies, handing each to seen (when not nil), until b.N replies
// were read.
func benchScriptBatches(b *testing.B, c *rawConn, batch func(round int) ([]byte, int), seen func(round, i int, v resp.Value)) {
	b.ReportAllocs()
	b.ResetTimer()
	for round, done := 0, 0; done < b.N; round++ {
		cmds, n := batch(round)
		if _, err := c.conn.Write(cmds); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			v := c.read()
			if v.Kind == resp.KindError {
				b.Fatalf("script error: %s", v.Str)
			}
			if seen != nil {
				seen(round, i, v)
			}
		}
		done += n
	}
}
