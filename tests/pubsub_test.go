package tests

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/revolver-db/revolver/resp"
)

// step is one move of a multi-connection conversation: connection conn
// sends args (none: only reads; several lines: pipelined) and reads
// replies frames; unordered
// compares those frames (or the elements of a single reply) as a set,
// since Redis emits some in hash order.
type step struct {
	conn      int
	args      string
	replies   int
	unordered bool
}

// converse plays steps on one server over n connections (RESP proto), from
// an empty keyspace, and returns every frame read, rendered.
func converse(t *testing.T, addr string, proto, n int, steps []step) [][]string {
	t.Helper()
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = dialRaw(t, addr)
		if proto == 3 {
			conns[i].do("HELLO", "3")
		}
	}
	conns[0].do("FLUSHALL") // start from an empty keyspace, as the scripts do
	out := make([][]string, len(steps))
	for i, s := range steps {
		c := conns[s.conn]
		if s.args != "" {
			// Several commands separated by newlines go out in one write.
			var buf []byte
			for _, line := range strings.Split(s.args, "\n") {
				args, err := splitCommandLine(line)
				if err != nil {
					t.Fatal(err)
				}
				buf = append(buf, encodeCommand(args)...)
			}
			if _, err := c.conn.Write(buf); err != nil {
				t.Fatal(err)
			}
		}
		var counts []string
		for j := 0; j < s.replies; j++ {
			v := c.read()
			if s.unordered && s.replies == 1 {
				sort.Slice(v.Elems, func(a, b int) bool { return v.Elems[a].String() < v.Elems[b].String() })
			} else if s.unordered && len(v.Elems) == 3 {
				// (Un)subscribe confirmations of several names come in hash
				// order: compare the names as a set and the counts in order.
				counts = append(counts, v.Elems[2].String())
				v.Elems = v.Elems[:2]
			}
			out[i] = append(out[i], v.String())
		}
		if s.unordered {
			sort.Strings(out[i])
			out[i] = append(out[i], counts...)
		}
	}
	return out
}

// compareConversation plays steps on redis-server and on Revolver and
// reports every frame that differs.
func compareConversation(t *testing.T, proto, n int, steps []step) {
	t.Helper()
	redisAddr := realRedis(t)
	srv := startServer(t)
	want := converse(t, redisAddr, proto, n, steps)
	got := converse(t, srv.Addr(), proto, n, steps)
	for i, s := range steps {
		w, g := strings.Join(want[i], "\n"), strings.Join(got[i], "\n")
		if w != g {
			t.Errorf("step %d: conn %d %q\n redis:    %s\n revolver: %s", i, s.conn, s.args, indent(w), indent(g))
		}
	}
}

// pubsubConversation subscribes, publishes, inspects and unsubscribes, so
// every confirmation, message frame and count is compared with Redis.
var pubsubConversation = []step{
	{0, "UNSUBSCRIBE", 1, false},
	{0, "PUNSUBSCRIBE", 1, false},
	{0, "UNSUBSCRIBE nosuch other", 2, false},
	{0, "SUBSCRIBE a b a", 3, false},
	{0, "PSUBSCRIBE p* a? b*", 3, false},
	{0, "PSUBSCRIBE p*", 1, false},
	{1, "SUBSCRIBE a", 1, false},
	{2, "PUBLISH a hello", 1, false},
	{0, "", 1, false},
	{1, "", 1, false},
	{2, "PUBLISH pa x", 1, false},
	{0, "", 1, false},
	{2, "PUBLISH ab y", 1, false},
	{0, "", 1, false},
	{2, `PUBLISH b "with\r\nbreaks"`, 1, false},
	{0, "", 2, false},
	{2, "PUBLISH nobody z", 1, false},
	{2, "PUBSUB CHANNELS", 1, true},
	{2, "PUBSUB CHANNELS a*", 1, false},
	{2, "PUBSUB NUMSUB a b c", 1, false},
	{2, "PUBSUB NUMPAT", 1, false},
	{0, "UNSUBSCRIBE a nosuch", 2, false},
	{2, "PUBSUB NUMSUB a", 1, false},
	{0, "PUNSUBSCRIBE a? nosuch", 2, false},
	{0, "PUNSUBSCRIBE", 2, true},
	{2, "PUBSUB NUMPAT", 1, false},
	{0, "UNSUBSCRIBE", 1, false},
	{0, "UNSUBSCRIBE", 1, false},
	{0, "PUNSUBSCRIBE", 1, false},
	{1, "UNSUBSCRIBE a", 1, false},
	{2, "PUBSUB CHANNELS", 1, false},
	{0, "SUBSCRIBE c d", 2, false},
	{0, "PSUBSCRIBE x*", 1, false},
	{0, "UNSUBSCRIBE", 2, true},
	{0, "PUNSUBSCRIBE", 1, false},
}

func TestPubSubMatchesRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			compareConversation(t, proto, 3, pubsubConversation)
		})
	}
}

// TestPubSubContextMatchesRedis: in RESP2 a subscribed connection runs only
// (P)SUBSCRIBE, (P)UNSUBSCRIBE, PING, QUIT and RESET; PING answers with a
// pong array. In RESP3 everything runs, and messages arrive as pushes
// between the replies.
func TestPubSubContextMatchesRedis(t *testing.T) {
	steps := []step{
		{0, "SUBSCRIBE ch", 1, false},
		{0, "GET ctxkey", 1, false},
		{0, "SET ctxkey v", 1, false},
		{0, "PING", 1, false},
		{0, "PING hello", 1, false},
		{0, "CLIENT GETNAME", 1, false},
		{0, "NOSUCH", 1, false},
		{1, "PUBLISH ch x", 1, false},
		{0, "", 1, false},
		{0, "PSUBSCRIBE p*", 1, false},
		{0, "UNSUBSCRIBE ch", 1, false},
		{0, "GET ctxkey", 1, false},
		{0, "PUNSUBSCRIBE", 1, false},
		{0, "GET ctxkey", 1, false},
		{0, "SUBSCRIBE ch", 1, false},
		{1, "PUBLISH ch y", 1, false},
		{0, "", 1, false},
		{0, "RESET", 1, false},
		{1, "PUBLISH ch z", 1, false},
		{0, "GET ctxkey", 1, false},
		{0, "SUBSCRIBE ch", 1, false},
		{0, "QUIT", 1, false},
	}
	// Pipelined, a subscriber's own message comes after the confirmation
	// and before PUBLISH's reply (RESP3 only: RESP2 refuses PUBLISH here).
	selfPublish := []step{
		{0, "SUBSCRIBE me\nPUBLISH me hi\nPING", 4, false},
		{0, "SET ctxkey v\nPUBLISH me again\nGET ctxkey", 4, false},
	}
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			compareConversation(t, proto, 2, steps)
		})
	}
	t.Run("RESP3 self publish", func(t *testing.T) { compareConversation(t, 3, 1, selfPublish) })
}

// TestSubscribeConfirmationFirst publishes without pause while clients
// subscribe: the first frame a subscriber reads must be its confirmation.
func TestSubscribeConfirmationFirst(t *testing.T) {
	srv := startServer(t)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		pub, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			return
		}
		defer pub.Close()
		frame := encodeCommand([]string{"PUBLISH", "flood", "m"})
		go func() { // drain the integer replies
			buf := make([]byte, 64<<10)
			for {
				if _, err := pub.Read(buf); err != nil {
					return
				}
			}
		}()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := pub.Write(frame); err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for i := 0; i < 10; i++ {
		for _, proto := range []int{2, 3} {
			c := dialRaw(t, srv.Addr())
			if proto == 3 {
				c.do("HELLO", "3")
			}
			c.send("SUBSCRIBE", "flood")
			first := c.read()
			if len(first.Elems) != 3 || first.Elems[0].Str != "subscribe" || first.Elems[2].Int != 1 {
				t.Fatalf("RESP%d: first frame after SUBSCRIBE: %s", proto, first)
			}
			if next := c.read(); len(next.Elems) != 3 || next.Elems[0].Str != "message" {
				t.Fatalf("RESP%d: frame after the confirmation: %s", proto, next)
			}
			c.conn.Close()
		}
	}
}

// TestSlowSubscriberDisconnected: a subscriber that stops reading is
// disconnected once its pending output passes client-output-buffer-limit
// pubsub, and the publisher is unaffected.
func TestSlowSubscriberDisconnected(t *testing.T) {
	srv := startServer(t, withConfig("client-output-buffer-limit", "pubsub 256kb 128kb 1"))
	sub := dialRaw(t, srv.Addr())
	sub.do("SUBSCRIBE", "slow")
	pub := goRedis(t, srv.Addr(), 3)
	payload := strings.Repeat("x", 64<<10)
	waitFor(t, 10*time.Second, "the slow subscriber to be disconnected", func() bool {
		n, err := pub.Publish(ctx, "slow", payload).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
	if n, err := pub.PubSubNumSub(ctx, "slow").Result(); err != nil || n["slow"] != 0 {
		t.Errorf("NUMSUB after disconnect: %v %v", n, err)
	}
	list, err := pub.ClientList(ctx).Result()
	if err != nil || strings.Contains(list, "sub=1") {
		t.Errorf("CLIENT LIST still shows the subscriber: %v\n%s", err, list)
	}
	expectClosed(t, sub, "the slow subscriber") // what was already sent may be read first
}

// TestSoftLimitDisconnectsAfterSeconds: over the soft limit for longer
// than its seconds, a subscriber is disconnected even under the hard limit.
func TestSoftLimitDisconnectsAfterSeconds(t *testing.T) {
	srv := startServer(t, withConfig("client-output-buffer-limit", "pubsub 0 64kb 1"))
	sub := dialRaw(t, srv.Addr())
	sub.do("SUBSCRIBE", "soft")
	pub := goRedis(t, srv.Addr(), 2)
	payload := strings.Repeat("y", 32<<10)
	start := time.Now()
	waitFor(t, 15*time.Second, "the soft limit to disconnect the subscriber", func() bool {
		n, err := pub.Publish(ctx, "soft", payload).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
	if time.Since(start) < time.Second {
		t.Errorf("disconnected after %v, before the soft limit's second passed", time.Since(start))
	}
	expectClosed(t, sub, "the subscriber over its soft limit")
}

// TestPubSubGoRedis drives pub/sub through go-redis in both protocols.
func TestPubSubGoRedis(t *testing.T) {
	srv := startServer(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c := goRedis(t, srv.Addr(), proto)
			ps := c.Subscribe(ctx, "news")
			defer ps.Close()
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ps.PSubscribe(ctx, "n*"); err != nil {
				t.Fatal(err)
			}
			pub := goRedis(t, srv.Addr(), proto)
			waitFor(t, 5*time.Second, "the pattern subscription", func() bool {
				return pub.PubSubNumPat(ctx).Val() == 1
			})
			if n, err := pub.Publish(ctx, "news", "hello").Result(); err != nil || n != 2 {
				t.Fatalf("PUBLISH: %d %v", n, err)
			}
			got := map[string]string{}
			for len(got) < 2 {
				msg, err := ps.ReceiveTimeout(ctx, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				switch m := msg.(type) {
				case *redis.Subscription:
					if m.Kind != "psubscribe" || m.Channel != "n*" || m.Count != 2 {
						t.Errorf("confirmation: %v", m)
					}
				case *redis.Message:
					got[m.Pattern] = m.Channel + "=" + m.Payload
				default:
					t.Fatalf("unexpected %T %v", msg, msg)
				}
			}
			if got[""] != "news=hello" || got["n*"] != "news=hello" {
				t.Errorf("messages: %v", got)
			}
			if proto == 3 {
				// A RESP3 connection may run any command while subscribed.
				conn := dialRaw(t, srv.Addr())
				conn.do("HELLO", "3")
				conn.do("SUBSCRIBE", "x")
				if v := conn.do("SET", "k", "v"); v.Kind != resp.KindSimple || v.Str != "OK" {
					t.Errorf("SET while subscribed: %s", v)
				}
				if v := conn.do("GET", "k"); v.Str != "v" {
					t.Errorf("GET while subscribed: %s", v)
				}
			}
		})
	}
}
