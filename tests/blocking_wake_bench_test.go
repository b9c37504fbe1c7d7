package tests

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revolver-db/revolver/resp"
)

// BenchmarkBlockedWake measures how long a push takes to wake the client
// blocked on its key while 1,000 clients wait on 1,000 keys: from just
// before the pusher sends RPUSH to the moment the woken client has read its
// BLPOP reply. It runs against Revolver and, when present, redis-server.
//
//	go test -run x -bench BlockedWake -benchtime 20000x ./tests/
//
// Pushes go round-robin over the keys, so each waiter has re-blocked long
// before its key comes up again. Reported: p50, p99 and max in µs.
func BenchmarkBlockedWake(b *testing.B) {
	targets := []struct{ name, addr string }{{"revolver", startServer(b).Addr()}}
	if addr := realRedisForBench(b); addr != "" {
		targets = append(targets, struct{ name, addr string }{"redis", addr})
	}
	for _, tg := range targets {
		b.Run(tg.name, func(b *testing.B) { benchBlockedWake(b, tg.addr, 1000) })
	}
}

// realRedisForBench returns the shared redis-server's address, or "" when
// there is none (a benchmark compares what it can).
func realRedisForBench(b *testing.B) string {
	redisOnce.Do(func() { redisAddr, redisErr = spawnRedis() })
	if redisErr != nil {
		b.Logf("no redis-server to compare with: %v", redisErr)
		return ""
	}
	return redisAddr
}

func benchBlockedWake(b *testing.B, addr string, clients int) {
	woke := make(chan time.Time, clients)
	fail := make(chan error, clients)
	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		go blockLoop(c, "wake:"+strconv.Itoa(i), woke, fail)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	pusher := dialRaw(b, addr)
	waitFor(b, 10*time.Second, fmt.Sprintf("%d blocked clients", clients), func() bool {
		return infoField(pusher, "clients", "blocked_clients") == strconv.Itoa(clients)
	})

	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := "wake:" + strconv.Itoa(i%clients)
		start := time.Now()
		pusher.do("RPUSH", key, "x")
		select {
		case at := <-woke:
			lat = append(lat, at.Sub(start))
		case err := <-fail:
			b.Fatal(err)
		case <-time.After(10 * time.Second):
			b.Fatalf("push %d to %s woke nobody", i, key)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds())/1e3, "max-µs")
	pusher.do("FLUSHALL")
}

// blockLoop keeps one client blocked on key, reporting each wake-up.
func blockLoop(c net.Conn, key string, woke chan<- time.Time, fail chan<- error) {
	rd := resp.NewReader(c)
	cmd := encodeCommand([]string{"BLPOP", key, "0"})
	for {
		if _, err := c.Write(cmd); err != nil {
			return // closed at the end of the benchmark
		}
		v, err := rd.Read()
		if err != nil {
			return
		}
		if len(v.Elems) != 2 {
			fail <- fmt.Errorf("BLPOP %s replied %s", key, v)
			return
		}
		woke <- time.Now()
	}
}

// infoField reads one INFO field through a raw connection.
func infoField(c *rawConn, section, field string) string {
	v := c.do("INFO", section)
	for _, line := range strings.Split(v.Str, "\r\n") {
		if val, ok := strings.CutPrefix(line, field+":"); ok {
			return val
		}
	}
	return ""
}
