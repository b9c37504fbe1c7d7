package scripting

import (
	"os"
	"testing"

	"github.com/revolver-db/revolver/resp"
)

// cannedHost answers every command with a reply chosen by the command's
// name, at no cost: what is left is the interpreter and the conversions.
type cannedHost map[string]string

func (h cannedHost) Call(args [][]byte, proto int) ([]byte, string) {
	if r, ok := h[string(args[0])]; ok {
		return []byte(r), ""
	}
	return []byte(":1\r\n"), ""
}

func (cannedHost) ACLCheck([][]byte) (bool, string) { return true, "" }

func (cannedHost) ReplyError(string, bool, bool) {}

// BenchmarkRunEval measures running a script on its own: the interpreter,
// redis.call's argument and reply conversions, KEYS/ARGV and the reply,
// with commands answered from cannedHost. The end-to-end numbers with the
// server and redis-server side by side come from revolver-bench --suite
// script.
//
//	go test -run '^$' -bench RunEval -benchmem ./scripting
func BenchmarkRunEval(b *testing.B) {
	numpool, err := os.ReadFile("../tests/testdata/seed003_numpool.lua")
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name       string
		src        string
		keys, args []string
		host       cannedHost
	}{
		{"3calls", "redis.call('INCR', KEYS[1])\nredis.call('HSET', KEYS[2], ARGV[1], ARGV[2])\nreturn redis.call('GET', KEYS[1])",
			[]string{"script:counter:000000000001", "script:hash"}, []string{"script:field:000000000001", "xxx"},
			cannedHost{"GET": "$1\r\n1\r\n"}},
		{"numpool-call", string(numpool), []string{"{numpool}"}, []string{"call"},
			cannedHost{"LPOP": "$11\r\n13800000001\r\n"}},
		{"numpool-hangup", string(numpool), []string{"{numpool}"}, []string{"hangup", "13800000001"},
			cannedHost{"HGET": "$28\r\n{\"callstate\":1,\"regstate\":1}\r\n"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rt := NewEval(&Rand{})
			fn, err := rt.Compile(c.src)
			if err != nil {
				b.Fatal(err)
			}
			keys, args := bytesOf(c.keys), bytesOf(c.args)
			var w resp.Writer
			b.ReportAllocs()
			for b.Loop() {
				w.Reset()
				rt.RunEval(fn, "sha", keys, args, c.host, &w)
			}
			if out := string(w.Bytes()); out == "" || out[0] == '-' {
				b.Fatalf("reply %q", out)
			}
		})
	}
}

func bytesOf(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
