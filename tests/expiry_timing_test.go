package tests

import (
	"sort"
	"strconv"
	"testing"
	"time"
)

// TestExpiredEventOnTime: a key with a 1 s TTL produces its "expired"
// event when the deadline passes, not when a sampler happens to find it.
// Several keys are measured and the median lateness must be within 10 ms
// (the median keeps one scheduling hiccup of a shared CI machine from
// failing the test; cmd/revolver-bench measures the distribution with
// 100,000 other volatile keys).
func TestExpiredEventOnTime(t *testing.T) {
	srv := startServer(t, withConfig("notify-keyspace-events", "Ex"))
	c := goRedis(t, srv.Addr(), 3)
	// Other volatile keys that must not slow anything down.
	pipe := c.Pipeline()
	for i := 0; i < 2000; i++ {
		pipe.Set(ctx, "other:"+strconv.Itoa(i), "v", time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	sub := c.Subscribe(ctx, "__keyevent@0__:expired")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := sub.Channel()

	const keys = 9
	deadlines := map[string]time.Time{}
	for i := 0; i < keys; i++ {
		k := "timed:" + strconv.Itoa(i)
		if err := c.Set(ctx, k, "v", time.Second).Err(); err != nil {
			t.Fatal(err)
		}
		ms, err := c.PExpireTime(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		deadlines[k] = time.UnixMilli(int64(ms / time.Millisecond))
		time.Sleep(37 * time.Millisecond) // spread the deadlines
	}
	var late []time.Duration
	timeout := time.After(10 * time.Second)
	for len(late) < keys {
		select {
		case m := <-msgs:
			d, ok := deadlines[m.Payload]
			if !ok {
				t.Fatalf("unexpected expired event for %q", m.Payload)
			}
			late = append(late, time.Since(d))
		case <-timeout:
			t.Fatalf("only %d of %d expired events arrived", len(late), keys)
		}
	}
	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
	t.Logf("expired event lateness: min %v median %v max %v", late[0], late[keys/2], late[keys-1])
	if late[0] < -time.Millisecond {
		t.Errorf("an event arrived %v before its deadline", -late[0])
	}
	if late[keys/2] > 10*time.Millisecond {
		t.Errorf("median lateness %v exceeds 10 ms", late[keys/2])
	}
	if n := c.DBSize(ctx).Val(); n != 2000 {
		t.Errorf("dbsize = %d after the timed keys expired, want 2000", n)
	}
}
