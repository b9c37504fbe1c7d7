package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// revolverBinary builds cmd/revolver once per test run.
func revolverBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "revolver-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "revolver")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/revolver-db/revolver/cmd/revolver").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// process is a Revolver server running as a child process.
type process struct {
	cmd    *exec.Cmd
	addr   string
	log    *bytes.Buffer
	killed atomic.Bool // kill9 was called: clients may fail from then on
}

func startProcess(t *testing.T, dir string, args ...string) *process {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{addr: "127.0.0.1:" + strconv.Itoa(port), log: &bytes.Buffer{}}
	all := append([]string{"--port", strconv.Itoa(port), "--dir", dir}, args...)
	p.cmd = exec.Command(revolverBinary(t), all...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	c := redis.NewClient(&redis.Options{Addr: p.addr})
	defer c.Close()
	waitFor(t, 20*time.Second, "revolver to accept connections", func() bool {
		return c.Ping(ctx).Err() == nil
	})
	return p
}

func (p *process) kill9(t *testing.T) {
	p.killed.Store(true)
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

// stoppedByKill is for a load client that stops at its first error, which
// the kill is meant to cause: an error before kill9 (a timeout, a dropped
// connection, an error reply) fails the test, or the client would stop
// quietly and what it was there to check would go unchecked.
func (p *process) stoppedByKill(t *testing.T, who string, err error) {
	t.Helper()
	if !p.killed.Load() {
		t.Errorf("%s stopped before the server was killed: %v", who, err)
	}
}

func (p *process) terminate(t *testing.T) {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("clean shutdown failed: %v\n%s", err, p.log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not stop on SIGTERM\n%s", p.log)
	}
}

// writeUntilKilled runs writers that SET w<i>:<n> = n and INCR a shared
// counter, recording what was acknowledged, until the server dies (and
// not before: a writer that fails earlier fails the test).
func writeUntilKilled(t *testing.T, p *process, writers int, after time.Duration) (acked [][]int, maxIncr int64) {
	acked = make([][]int, writers)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1, PoolSize: 1})
			defer c.Close()
			for n := 0; ; n++ {
				if err := c.Set(ctx, fmt.Sprintf("w%d:%d", w, n), n, 0).Err(); err != nil {
					p.stoppedByKill(t, fmt.Sprintf("writer %d (SET)", w), err)
					return
				}
				acked[w] = append(acked[w], n)
				v, err := c.Incr(ctx, "counter").Result()
				if err != nil {
					p.stoppedByKill(t, fmt.Sprintf("writer %d (INCR)", w), err)
					return
				}
				mu.Lock()
				maxIncr = max(maxIncr, v)
				mu.Unlock()
			}
		}(w)
	}
	time.Sleep(after)
	p.kill9(t)
	wg.Wait()
	return acked, maxIncr
}

// checkAcked verifies every acknowledged write survived.
func checkAcked(t *testing.T, addr string, acked [][]int, maxIncr int64) {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	total, lost := 0, 0
	for w, ns := range acked {
		for _, n := range ns {
			total++
			v, err := c.Get(ctx, fmt.Sprintf("w%d:%d", w, n)).Result()
			if err != nil || v != strconv.Itoa(n) {
				lost++
				if lost <= 5 {
					t.Errorf("acknowledged write w%d:%d lost after kill -9 (got %q, %v)", w, n, v, err)
				}
			}
		}
	}
	counter, err := c.Get(ctx, "counter").Int64()
	if err != nil || counter < maxIncr {
		t.Errorf("counter after restart = %d (%v), but INCR acknowledged %d", counter, err, maxIncr)
	}
	if total < 100 {
		t.Errorf("only %d writes acknowledged before the kill: the test did not exercise anything", total)
	}
	t.Logf("acknowledged writes: %d SETs + %d INCRs; lost after kill -9 and restart: %d", total, maxIncr, lost)
}

// TestCrashLosesNothingAcknowledged: several writers with appendfsync
// always, kill -9 mid-load, restart: every acknowledged write is there.
func TestCrashLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and runs the binary")
	}
	for _, policy := range []string{"always", "everysec"} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			p := startProcess(t, dir, "--appendfsync", policy)
			acked, maxIncr := writeUntilKilled(t, p, 8, 1500*time.Millisecond)
			p2 := startProcess(t, dir, "--appendfsync", policy)
			checkAcked(t, p2.addr, acked, maxIncr)
		})
	}
}

// TestRestartAfterCleanShutdown: with every fsync policy, a SIGTERM flushes
// everything and a restart restores it, expiries included.
func TestRestartAfterCleanShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("restart test builds and runs the binary")
	}
	for _, policy := range []string{"always", "everysec", "no"} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			p := startProcess(t, dir, "--appendfsync", policy)
			c := redis.NewClient(&redis.Options{Addr: p.addr})
			pipe := c.Pipeline()
			for i := 0; i < 5000; i++ {
				pipe.Set(ctx, "k"+strconv.Itoa(i), i, 0)
			}
			pipe.Set(ctx, "volatile", "v", time.Hour)
			pipe.Set(ctx, "gone", "v", 0)
			pipe.Del(ctx, "gone")
			pipe.Select(ctx, 3)
			pipe.Set(ctx, "db3key", "x", 0)
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			c.Close()
			p.terminate(t)

			p2 := startProcess(t, dir, "--appendfsync", policy)
			c2 := redis.NewClient(&redis.Options{Addr: p2.addr})
			defer c2.Close()
			if n := c2.DBSize(ctx).Val(); n != 5001 {
				t.Errorf("dbsize after restart = %d, want 5001", n)
			}
			for _, i := range []int{0, 2500, 4999} {
				if v := c2.Get(ctx, "k"+strconv.Itoa(i)).Val(); v != strconv.Itoa(i) {
					t.Errorf("k%d = %q", i, v)
				}
			}
			if ttl := c2.TTL(ctx, "volatile").Val(); ttl < 59*time.Minute || ttl > time.Hour {
				t.Errorf("volatile ttl after restart = %v", ttl)
			}
			if c2.Exists(ctx, "gone").Val() != 0 {
				t.Error("deleted key came back")
			}
			c3 := redis.NewClient(&redis.Options{Addr: p2.addr, DB: 3})
			defer c3.Close()
			if v := c3.Get(ctx, "db3key").Val(); v != "x" {
				t.Errorf("db3key = %q", v)
			}
		})
	}
}

// TestExpiredWhileDown: keys whose deadline passed while the server was
// down are gone after the restart.
func TestExpiredWhileDown(t *testing.T) {
	if testing.Short() {
		t.Skip("restart test builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProcess(t, dir)
	c := redis.NewClient(&redis.Options{Addr: p.addr})
	c.Set(ctx, "short", "v", 300*time.Millisecond)
	c.Set(ctx, "long", "v", time.Hour)
	c.Close()
	p.terminate(t)
	time.Sleep(400 * time.Millisecond)
	p2 := startProcess(t, dir)
	c2 := redis.NewClient(&redis.Options{Addr: p2.addr})
	defer c2.Close()
	if c2.Exists(ctx, "short").Val() != 0 {
		t.Error("a key that expired while the server was down is still there")
	}
	if c2.Exists(ctx, "long").Val() != 1 {
		t.Error("a key with an hour to live was lost")
	}
}

// TestRefusesForeignDirectory: Revolver keeps its files in dir/revolver;
// when that directory holds what is not Revolver's, it is refused with a
// message naming the problem and a non-zero exit, and nothing is changed.
// Other files in dir itself are no obstacle (TestRedisDataDirectory).
func TestRefusesForeignDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	own := filepath.Join(dir, "revolver")
	os.Mkdir(own, 0o755)
	os.WriteFile(filepath.Join(own, "important.txt"), []byte("not yours"), 0o644)
	out, err := exec.Command(revolverBinary(t), "--port", "0", "--dir", dir).CombinedOutput()
	if err == nil {
		t.Fatalf("revolver accepted a foreign directory:\n%s", out)
	}
	if !bytes.Contains(out, []byte("not a Revolver data directory")) {
		t.Errorf("refusal does not name the problem:\n%s", out)
	}
	if data, _ := os.ReadFile(filepath.Join(own, "important.txt")); string(data) != "not yours" {
		t.Error("the foreign directory was modified")
	}
	if names, _ := os.ReadDir(own); len(names) != 1 {
		t.Errorf("the refused directory holds %v", names)
	}
	// A file where Revolver's directory would be is refused too.
	dir2 := t.TempDir()
	os.WriteFile(filepath.Join(dir2, "revolver"), []byte("a file"), 0o644)
	out, err = exec.Command(revolverBinary(t), "--port", "0", "--dir", dir2).CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("is not a directory")) {
		t.Errorf("a file named revolver in dir: err %v\n%s", err, out)
	}
}

// TestRefusesLockedDirectory: a second server on the same directory exits
// with a clear message while the first keeps running.
func TestRefusesLockedDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	p := startProcess(t, dir)
	out, err := exec.Command(revolverBinary(t), "--port", "0", "--dir", dir).CombinedOutput()
	if err == nil {
		t.Fatalf("second server started on a locked directory:\n%s", out)
	}
	if !bytes.Contains(out, []byte("locked")) {
		t.Errorf("refusal does not say the directory is locked:\n%s", out)
	}
	c := redis.NewClient(&redis.Options{Addr: p.addr})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("first server hurt: %v", err)
	}
}
