package tests

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/revolver-db/revolver/resp"
)

// SORT ... STORE as a write: its keyspace events, the clients it wakes, the
// transactions it aborts and its persistence; and SORT against redis-server
// on random data. The replies themselves are pinned by the differential
// scripts testdata/diff/sort_*.txt.

var sortNotifyCasesKEA = []notifyCase{
	{name: "sortstore", setup: []string{"RPUSH l 3 1 2", "SET s v"},
		cmds: []string{"SORT l STORE d", "SORT l DESC STORE d", "SORT l STORE s", "SORT nosuch STORE d",
			"SORT nosuch STORE d", "SORT l LIMIT 0 0 STORE s", "SORT l", "SORT_RO l", "SORT l BY w_* GET o_*",
			"SORT s STORE d", "SORT l FOO STORE d"},
		want: []string{"sortstore d", "sortstore d", "sortstore s", "del d", "del s"}},
}

var sortNotifyCasesNew = []notifyCase{
	{name: "new-sortstore", setup: []string{"RPUSH l 3 1 2", "SET s v"},
		cmds: []string{"SORT l STORE d", "SORT l STORE d", "SORT l STORE s"},
		want: []string{"new d", "sortstore d", "sortstore d", "sortstore s"}},
}

// With class m, every BY and GET lookup that finds no key is announced,
// in the order SORT makes them: the weights in load order, then the GETs
// row by row.
var sortNotifyCasesMiss = []notifyCase{
	{name: "keymiss", setup: []string{"RPUSH l 2 1 3", "SET w_1 5", "SET o_3 x", "HSET h_2 f 1"},
		cmds: []string{"SORT nosuch", "SORT l BY w_* GET o_* GET h_*->f", "SORT l BY nosort GET #", "SORT l"},
		want: []string{"keymiss nosuch", "keymiss w_2", "keymiss w_3", "keymiss o_2", "keymiss h_3",
			"keymiss o_1", "keymiss h_1"}},
}

func TestSortNotifications(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		runNotifySuites(t, addr, sortNotifyCasesKEA, sortNotifyCasesNew)
		t.Run("KEm", func(t *testing.T) { runNotifyCases(t, addr, "KEm", sortNotifyCasesMiss) })
	})
}

// TestSortStoreWakesBlocked: a list stored by SORT serves clients blocked
// on the destination, oldest first, as a push would.
func TestSortStoreWakesBlocked(t *testing.T) {
	lbRun(t, []string{"lb:src", "lb:dst", "lb:other"}, func(t *testing.T, e *lbEnv) {
		e.do("RPUSH lb:src 3 1 2")
		first := e.block(2, "BLPOP lb:dst 0")
		second := e.block(3, "BLMOVE lb:dst lb:other RIGHT LEFT 0")
		e.blocked(2)
		e.do("SORT lb:src STORE lb:dst")
		e.expect(first, "BLPOP", "[lb:dst 1]")
		e.expect(second, "BLMOVE", "3")
		e.blocked(0)
		if got := e.list("lb:dst"); got != "2" {
			t.Errorf("lb:dst after the pops: %q, want 2", got)
		}
		if got := e.list("lb:other"); got != "3" {
			t.Errorf("lb:other: %q, want 3", got)
		}
		// An empty result wakes nobody: the destination stays absent.
		e.do("DEL lb:dst")
		third := e.block(2, "BLPOP lb:dst 0")
		e.do("SORT lb:src LIMIT 5 5 STORE lb:dst")
		e.blocked(1)
		e.do("SORT lb:src DESC LIMIT 0 1 STORE lb:dst")
		e.expect(third, "BLPOP after an empty result", "[lb:dst 3]")
	})
}

// TestSortStoreTouchesWatch: STORE aborts transactions watching the
// destination, also when an empty result deletes it; a sort without STORE,
// or an empty result on an absent destination, aborts nothing.
func TestSortStoreTouchesWatch(t *testing.T) {
	onBothServers(t, func(t *testing.T, addr string) {
		admin := dialRaw(t, addr)
		admin.do("DEL", "sw:src", "sw:dst", "sw:x")
		admin.do("RPUSH", "sw:src", "2", "1")
		cases := []struct {
			name    string
			setup   []string
			cmd     []string
			aborted bool
		}{
			{"store", nil, []string{"SORT", "sw:src", "STORE", "sw:dst"}, true},
			{"store-over", []string{"SET", "sw:dst", "v"}, []string{"SORT", "sw:src", "STORE", "sw:dst"}, true},
			{"empty-deletes", []string{"SET", "sw:dst", "v"}, []string{"SORT", "sw:src", "LIMIT", "0", "0", "STORE", "sw:dst"}, true},
			{"empty-absent", nil, []string{"SORT", "sw:src", "LIMIT", "0", "0", "STORE", "sw:dst"}, false},
			{"no-store", []string{"SET", "sw:dst", "v"}, []string{"SORT", "sw:src"}, false},
			{"sort-ro", []string{"SET", "sw:dst", "v"}, []string{"SORT_RO", "sw:dst"}, false},
			{"source-watched", nil, []string{"SORT", "sw:dst", "STORE", "sw:x"}, false},
		}
		for _, tc := range cases {
			admin.do("DEL", "sw:dst", "sw:x")
			if tc.setup != nil {
				admin.do(tc.setup...)
			}
			c := dialRaw(t, addr)
			c.do("WATCH", "sw:dst")
			admin.do(tc.cmd...)
			c.do("MULTI")
			c.do("SET", "sw:x", "1")
			want := "1) +OK" // the transaction ran
			if tc.aborted {
				want = "(nil array)"
			}
			if got := c.do("EXEC").String(); got != want {
				t.Errorf("%s: EXEC %s, want %s", tc.name, got, want)
			}
		}
	})
}

// TestSortStorePersists: a stored result, an overwrite and a deletion by
// an empty result survive a restart.
func TestSortStorePersists(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, withPersistence(dir))
	c := dialRaw(t, srv.Addr())
	args := []string{"RPUSH", "src"}
	for i := 0; i < 300; i++ {
		args = append(args, strconv.Itoa((i*7919)%1000))
	}
	c.do(args...)
	c.do("SET", "over", "string")
	c.do("EXPIRE", "over", "1000")
	c.do("SET", "gone", "x")
	c.do("SORT", "src", "STORE", "sorted")
	c.do("SORT", "src", "DESC", "LIMIT", "0", "10", "STORE", "over")
	c.do("SORT", "src", "LIMIT", "0", "0", "STORE", "gone")
	want := map[string]string{}
	for _, k := range []string{"sorted", "over"} {
		want[k] = c.do("LRANGE", k, "0", "-1").String()
	}
	srv.Close()
	srv2 := startServer(t, withPersistence(dir))
	c2 := dialRaw(t, srv2.Addr())
	for k, v := range want {
		if got := c2.do("LRANGE", k, "0", "-1").String(); got != v {
			t.Errorf("%s after restart:\n%s\nwant:\n%s", k, got, v)
		}
	}
	if ttl := c2.do("TTL", "over").Int; ttl != -1 {
		t.Errorf("over keeps a TTL after restart: %d", ttl)
	}
	if n := c2.do("EXISTS", "gone").Int; n != 0 {
		t.Errorf("gone exists after restart")
	}
	if n := c2.do("LLEN", "sorted").Int; n != 300 {
		t.Errorf("sorted has %d elements after restart", n)
	}
}

// TestSortRandomAgainstRedis runs random SORT commands over random lists,
// sets and sorted sets, with random weights, on both servers and compares
// the replies (and, with STORE, the lists stored). What Redis leaves to its
// hash tables' order is avoided: unsorted sets are only sorted when stored,
// and sets and sorted sets get ALPHA BY weights without ties.
func TestSortRandomAgainstRedis(t *testing.T) {
	long(t)
	redisAddr := realRedis(t)
	srv := startServer(t)
	red, rev := dialRaw(t, redisAddr), dialRaw(t, srv.Addr())
	rng := rand.New(rand.NewSource(20261126))
	both := func(args ...string) (resp.Value, resp.Value) { return red.do(args...), rev.do(args...) }
	elems := []string{"0", "1", "2", "-3", "10", "007", "1.5", "-0.25", "1e3", "a", "B", "ab", "zz", "", "x y",
		"\xff", "\x00a", "99999999999999999999", "3.0", "inf", "-inf"}
	weights := []string{"1", "2", "-1", "0.5", "1e2", "abc", "", "3", "3.0", "-inf", "x", "Y"}
	for round := 0; round < 300; round++ {
		both("FLUSHALL")
		kind := []string{"list", "set", "zset"}[rng.Intn(3)]
		n := rng.Intn(60)
		if rng.Intn(5) == 0 {
			n += 150 // past the listpack and intset limits
		}
		pool := elems
		if kind != "list" {
			pool = nil // members unique; numbers make intsets possible
			for i := 0; i < n; i++ {
				if rng.Intn(2) == 0 {
					pool = append(pool, strconv.Itoa(rng.Intn(400)-200))
				} else {
					// No NUL: ALPHA compares up to it, and ties keep hash order.
					pool = append(pool, strings.ReplaceAll(elems[rng.Intn(len(elems))], "\x00", "")+strconv.Itoa(i))
				}
			}
		}
		var members []string
		for i := 0; i < n; i++ {
			members = append(members, pool[rng.Intn(len(pool))])
		}
		if len(members) > 0 {
			switch kind {
			case "list":
				both(append([]string{"RPUSH", "k"}, members...)...)
			case "set":
				both(append([]string{"SADD", "k"}, members...)...)
			case "zset":
				args := []string{"ZADD", "k"}
				for _, m := range members {
					args = append(args, strconv.Itoa(rng.Intn(20)), m)
				}
				both(args...)
			}
		}
		// Weights and GET values for some elements; unique ones on demand.
		uniq := kind != "list"
		for i, m := range members {
			if !uniq && rng.Intn(4) == 0 {
				continue // missing weights tie, which only a list's order decides
			}
			w := weights[rng.Intn(len(weights))]
			if uniq {
				w = fmt.Sprintf("%s%04d", w, rng.Intn(10000)) + strconv.Itoa(i)
			}
			both("SET", "w_"+m, w)
			both("HSET", "h_"+m, "f", strconv.Itoa(rng.Intn(50)), "g", w)
		}
		for q := 0; q < 8; q++ {
			args := randomSortArgs(rng, kind, uniq)
			want, got := both(args...)
			if want.String() != got.String() {
				t.Fatalf("round %d (%s of %d): %q\n redis:    %s\n revolver: %s", round, kind, n,
					strings.Join(args, " "), indent(want.String()), indent(got.String()))
			}
			if args[len(args)-2] == "STORE" {
				w, g := both("LRANGE", "dst", "0", "-1")
				if w.String() != g.String() {
					t.Fatalf("round %d: %q stored\n redis:    %s\n revolver: %s", round, strings.Join(args, " "),
						indent(w.String()), indent(g.String()))
				}
			}
			// An overflowing weight leaves errno set in Redis (sort.c reads it
			// without clearing it); a ZADD clears it again.
			both("ZADD", "errno-reset", "1", "x")
		}
	}
}

// randomSortArgs builds one SORT command over key k.
func randomSortArgs(rng *rand.Rand, kind string, uniqWeights bool) []string {
	args := []string{"SORT", "k"}
	if rng.Intn(6) == 0 {
		args[0] = "SORT_RO"
	}
	alpha := rng.Intn(2) == 0
	by := ""
	switch rng.Intn(5) {
	case 0:
		by = "w_*"
	case 1:
		by = "h_*->f"
	case 2:
		by = "h_*->g"
	case 3:
		by = "nosort"
	}
	store := args[0] == "SORT" && rng.Intn(3) == 0
	// An unsorted set's order is its hash table's unless it is stored.
	if kind == "set" && by == "nosort" && !store {
		by = ""
	}
	// ALPHA BY ties keep the load order, which for sets and sorted sets is
	// their hash table's: only the unique weights of w_* and h_*->g then.
	if alpha && kind != "list" && (by == "h_*->f" || !uniqWeights && by != "" && by != "nosort") {
		by = ""
	}
	if by != "" {
		args = append(args, "BY", by)
	}
	if rng.Intn(2) == 0 {
		off, cnt := rng.Intn(30)-3, rng.Intn(30)-3
		args = append(args, "LIMIT", strconv.Itoa(off), strconv.Itoa(cnt))
	}
	for g := rng.Intn(3); g > 0; g-- {
		args = append(args, "GET", []string{"#", "w_*", "h_*->g", "nope_*"}[rng.Intn(4)])
	}
	if rng.Intn(2) == 0 {
		args = append(args, []string{"ASC", "DESC"}[rng.Intn(2)])
	}
	if alpha {
		args = append(args, "ALPHA")
	}
	if store {
		args = append(args, "STORE", "dst")
	}
	return args
}
