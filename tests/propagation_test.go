package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// replStream reads a master's replication stream as a replica would: SYNC,
// the RDB skipped, then one command at a time.
type replStream struct {
	conn net.Conn
	br   *bufio.Reader
}

func openReplStream(t *testing.T, addr string) *replStream {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s := &replStream{conn: conn, br: bufio.NewReader(conn)}
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := conn.Write([]byte("SYNC\r\n")); err != nil {
		t.Fatal(err)
	}
	var header string
	for header == "" { // newlines keep the link alive while the RDB is made
		line, err := s.br.ReadString('\n')
		if err != nil {
			t.Fatalf("SYNC: %v", err)
		}
		header = strings.TrimRight(line, "\r\n")
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(header, "$"), 10, 64)
	if !strings.HasPrefix(header, "$") || err != nil {
		t.Fatalf("SYNC answered %q", header)
	}
	if _, err := io.CopyN(io.Discard, s.br, n); err != nil {
		t.Fatal(err)
	}
	return s
}

// next reads one command of the stream.
func (s *replStream) next() ([]string, error) {
	s.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := s.br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return nil, fmt.Errorf("not a multibulk: %q", line)
	}
	n, err := strconv.Atoi(strings.TrimRight(line[1:], "\r\n"))
	if err != nil {
		return nil, err
	}
	args := make([]string, n)
	for i := range args {
		line, err := s.br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimRight(strings.TrimPrefix(line, "$"), "\r\n"))
		if err != nil {
			return nil, fmt.Errorf("bad bulk header %q", line)
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(s.br, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}

// until reads the commands up to the marker SET, leaving out the pings a
// master sends into the stream, and renders them one per line.
func (s *replStream) until(t *testing.T, marker string) []string {
	t.Helper()
	var out []string
	for {
		args, err := s.next()
		if err != nil {
			t.Fatalf("reading the stream: %v (so far %q)", err, out)
		}
		if len(args) == 3 && strings.EqualFold(args[0], "set") && args[1] == "__marker__" && args[2] == marker {
			return out
		}
		if len(args) == 1 && strings.EqualFold(args[0], "ping") {
			continue
		}
		out = append(out, normalizeTimes(strings.Join(quoteAll(args), " ")))
	}
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strconv.Quote(a)
	}
	return out
}

// msTime matches a unix time in milliseconds (and a stream ID's time part):
// the two servers run the same commands a few milliseconds apart.
var msTime = regexp.MustCompile(`\b1[0-9]{12}\b`)

func normalizeTimes(s string) string { return msTime.ReplaceAllString(s, "<ms>") }

// propagationCase is commands run on a master, then what the stream says.
type propagationCase struct {
	name string
	cmds [][]string
	// pause between commands, for deadlines to pass
	pause time.Duration
	// blocked are sent first, each on a connection of its own, and
	// wait for cmds to serve them
	blocked [][]string
}

var propagationCases = []propagationCase{
	{name: "deterministic writes", cmds: [][]string{{"set", "a", "1"}, {"INCR", "a"}, {"rpush", "l", "x", "y"},
		{"HSET", "h", "f", "v"}, {"sadd", "s", "m"}, {"zadd", "z", "1", "m"}, {"del", "nokey"}, {"get", "a"},
		{"mset", "b", "1", "c", "2"}, {"append", "a", "x"}, {"del", "b", "c"}}},
	{name: "select", cmds: [][]string{{"select", "3"}, {"set", "in3", "1"}, {"select", "0"}, {"set", "in0", "1"}}},
	{name: "expiry as absolute times", cmds: [][]string{{"set", "e1", "v", "EX", "100"}, {"SETEX", "e2", "100", "v"},
		{"psetex", "e3", "100000", "v"}, {"set", "e4", "v"}, {"expire", "e4", "100"}, {"pexpire", "e4", "100000"},
		{"expireat", "e4", "4000000000"}, {"expire", "nokey", "10"}, {"set", "e5", "v", "PXAT", "4000000000000"},
		{"expire", "e4", "10", "NX"}, {"expire", "e4", "-1"}, {"set", "e6", "v", "EX", "100", "GET"},
		{"set", "e7", "v", "GET"}, {"getex", "e6", "PERSIST"}, {"getex", "e6", "EX", "50"}, {"getex", "e6"},
		{"getdel", "e6"}, {"getdel", "nokey"}}},
	{name: "float increments as values", cmds: [][]string{{"incrbyfloat", "f", "1.5"}, {"hincrbyfloat", "hf", "x", "2.5"}}},
	{name: "pops as what they popped", cmds: [][]string{{"sadd", "ps", "a"}, {"spop", "ps"}, {"sadd", "ps2", "a", "b", "c"},
		{"spop", "ps2", "10"}, {"rpush", "bl", "a", "b", "c"}, {"blpop", "bl", "1"}, {"brpop", "bl", "1"},
		{"lmpop", "1", "bl", "left", "count", "5"}, {"zadd", "bz", "1", "a", "2", "b", "3", "c"},
		{"bzpopmin", "bz", "1"}, {"zmpop", "1", "bz", "max", "count", "1"}, {"bzmpop", "1", "1", "bz", "min"},
		{"rpush", "src", "a", "b"}, {"blmove", "src", "dst", "left", "right", "1"},
		{"brpoplpush", "src", "dst", "1"}}},
	{name: "transactions", cmds: [][]string{{"multi"}, {"set", "t1", "1"}, {"incr", "t1"}, {"get", "t1"}, {"exec"},
		{"multi"}, {"set", "t2", "1"}, {"exec"}, {"multi"}, {"get", "t1"}, {"exec"}}},
	{name: "scripts as their effects", cmds: [][]string{
		{"eval", "redis.call('set', KEYS[1], '1'); redis.call('incr', KEYS[1])", "1", "s1"},
		{"eval", "redis.call('set', KEYS[1], '1')", "1", "s2"},
		{"eval", "return redis.call('get', KEYS[1])", "1", "s2"},
		{"eval", "redis.call('set', KEYS[1], 'v', 'EX', 100)", "1", "s3"},
		{"eval", "redis.call('select', 2); redis.call('set', 'in2', '1')", "0"}}},
	{name: "publish", cmds: [][]string{{"publish", "ch", "hello"}}},
	{name: "streams with explicit ids", cmds: [][]string{{"xadd", "st", "*", "f", "v"}, {"xadd", "st", "5-1", "f", "v"}}},
	{name: "keyspace commands", cmds: [][]string{{"set", "k1", "v"}, {"rename", "k1", "k2"}, {"copy", "k2", "k3"},
		{"move", "k3", "5"}, {"renamenx", "k2", "k4"}, {"persist", "k4"}, {"expire", "k4", "100"}, {"persist", "k4"},
		{"del", "k4", "nokey"}, {"unlink", "nokey"}, {"set", "k5", "v"}, {"unlink", "k5"}, {"swapdb", "0", "5"},
		{"swapdb", "0", "5"}, {"flushdb"}, {"set", "k6", "v"}, {"expire", "k6", "100", "GT"}, {"touch", "k6"}}},
	{name: "collections", cmds: [][]string{{"rpush", "cl", "a", "b", "c"}, {"lset", "cl", "0", "z"},
		{"linsert", "cl", "before", "b", "y"}, {"lrem", "cl", "0", "nothing"}, {"ltrim", "cl", "0", "10"},
		{"lpushx", "nolist", "a"}, {"hsetnx", "ch", "f", "v"}, {"hsetnx", "ch", "f", "w"}, {"hdel", "ch", "nof"},
		{"zincrby", "cz", "1.5", "m"}, {"zadd", "cz", "GT", "1", "m"}, {"zrangestore", "cz2", "cz", "0", "-1"},
		{"sadd", "cs1", "a", "b"}, {"sadd", "cs2", "b"}, {"sinterstore", "cs3", "cs1", "cs2"},
		{"smove", "cs1", "cs2", "a"}, {"sort", "cl", "ALPHA", "STORE", "csorted"}, {"setrange", "str", "5", "x"},
		{"setbit", "bits", "7", "1"}, {"bitfield", "bits", "INCRBY", "u8", "0", "1"}, {"bitfield", "bits", "GET", "u8", "0"},
		{"pfadd", "hll", "a", "b"}, {"pfadd", "hll", "a"}, {"pfcount", "hll"}, {"geoadd", "geo", "13.3", "38.1", "p"}}},
	{name: "streams, trims and groups", cmds: [][]string{{"xadd", "gs", "1-1", "f", "v"}, {"xadd", "gs", "2-1", "f", "v"},
		{"xadd", "gs", "MAXLEN", "~", "1", "*", "f", "v"}, {"xtrim", "gs", "MAXLEN", "=", "2"},
		{"xgroup", "create", "gs", "g", "0"}, {"xgroup", "createconsumer", "gs", "g", "alice"}, {"xdel", "gs", "1-1"},
		{"xgroup", "setid", "gs", "g", "$"}, {"xgroup", "delconsumer", "gs", "g", "alice"}}},
	{name: "functions", cmds: [][]string{{"function", "load", "#!lua name=plib\nredis.register_function('pf', function(k) return redis.call('set', k[1], 'v') end)"},
		{"fcall", "pf", "1", "fk"}, {"function", "delete", "plib"}, {"script", "load", "return 1"}}},
	{name: "blocked clients served later", blocked: [][]string{{"blpop", "wl", "0"}, {"bzpopmax", "wz", "0"},
		{"blmove", "wm", "wd", "right", "left", "0"}, {"brpoplpush", "wm2", "wd", "0"}, {"blmpop", "0", "1", "wl2", "right", "count", "3"}},
		cmds: [][]string{{"rpush", "wl", "a", "b"}, {"zadd", "wz", "1", "a", "2", "b"}, {"rpush", "wm", "x", "y"},
			{"rpush", "wm2", "z"}, {"lpush", "wl2", "1", "2"}}},
	{name: "stream groups as claims", cmds: [][]string{{"xadd", "rs", "1-1", "f", "v"}, {"xadd", "rs", "1-2", "f", "v"},
		{"xgroup", "create", "rs", "g", "0"}, {"xreadgroup", "group", "g", "bob", "count", "1", "streams", "rs", ">"},
		{"xreadgroup", "group", "g", "bob", "noack", "streams", "rs", ">"}, {"xack", "rs", "g", "1-1"},
		{"xadd", "rs", "1-3", "f", "v"}, {"xreadgroup", "group", "g", "carol", "streams", "rs", ">"},
		{"xclaim", "rs", "g", "dave", "0", "1-3"}, {"xautoclaim", "rs", "g", "erin", "0", "0"},
		{"xreadgroup", "group", "g", "bob", "streams", "rs", "0"}}},
	{name: "lazy expiry", pause: 30 * time.Millisecond, cmds: [][]string{{"set", "x1", "v", "PX", "1"},
		{"get", "x1"}, {"set", "x2", "v", "PX", "1"}, {"append", "x2", "w"}, {"set", "x3", "v", "PX", "1"},
		{"exists", "x3"}}},
}

// TestPropagationMatchesRedis runs the same commands on a redis-server
// master and a Revolver master and compares their replication streams
// command by command.
func TestPropagationMatchesRedis(t *testing.T) {
	redisAddr := startRealRedis(t, "--enable-debug-command", "yes")
	rev := startServer(t)
	addrs := []string{redisAddr, rev.Addr()}
	var streams []*replStream
	for _, addr := range addrs {
		c := dialRaw(t, addr)
		// Keys past their deadline go when a command finds them, not by
		// the expiry cycle racing the test.
		if v := c.do("DEBUG", "SET-ACTIVE-EXPIRE", "0"); v.String() != "+OK" {
			t.Fatalf("%s: DEBUG SET-ACTIVE-EXPIRE: %s", addr, v)
		}
		streams = append(streams, openReplStream(t, addr))
	}
	for i, tc := range propagationCases {
		marker := strconv.Itoa(i)
		var got [2][]string
		for j, addr := range addrs {
			var waiting []*rawConn
			for _, b := range tc.blocked {
				w := dialRaw(t, addr)
				w.send(b...)
				waiting = append(waiting, w)
				time.Sleep(20 * time.Millisecond) // blocked in this order
			}
			c := dialRaw(t, addr)
			for _, cmd := range tc.cmds {
				c.do(cmd...)
				time.Sleep(tc.pause)
			}
			for _, w := range waiting {
				w.read()
			}
			c.do("set", "__marker__", marker)
			got[j] = streams[j].until(t, marker)
		}
		if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") {
			t.Errorf("%s:\nRedis:\n  %s\nRevolver:\n  %s", tc.name, strings.Join(got[0], "\n  "), strings.Join(got[1], "\n  "))
		}
	}
}
