package tests

import (
	"strings"
	"testing"
	"time"
)

// TestMaxmemoryNoeviction: past maxmemory, commands that may grow memory
// get Redis's OOM error; reads and deletions still run; lifting the limit
// lets writes through again.
func TestMaxmemoryNoeviction(t *testing.T) {
	srv := startServer(t)
	c := goRedis(t, srv.Addr(), 3)
	if err := c.Set(ctx, "before", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	// Memory use is sampled by the server's cron (every 100 ms).
	var lastErr error
	waitFor(t, 5*time.Second, "writes to be refused", func() bool {
		lastErr = c.Set(ctx, "k", "v", 0).Err()
		return lastErr != nil
	})
	if want := "OOM command not allowed when used memory > 'maxmemory'."; lastErr.Error() != want {
		t.Fatalf("error = %q, want %q", lastErr, want)
	}
	if err := c.Append(ctx, "before", "x").Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM") {
		t.Errorf("APPEND over maxmemory: %v", err)
	}
	if v := c.Get(ctx, "before").Val(); v != "v" {
		t.Errorf("GET over maxmemory = %q", v)
	}
	if n := c.Del(ctx, "before").Val(); n != 1 {
		t.Errorf("DEL over maxmemory removed %d keys", n)
	}
	if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "after", "v", 0).Err(); err != nil {
		t.Errorf("SET after lifting maxmemory: %v", err)
	}
}
