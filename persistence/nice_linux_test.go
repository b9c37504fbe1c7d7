package persistence

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// threadsAtNice counts the process's threads whose nice value is n.
func threadsAtNice(t *testing.T, n int) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited
		}
		// Fields after the command's closing parenthesis: state is the
		// first, nice the 17th.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if v, err := strconv.Atoi(f[16]); err == nil && v == n {
			count++
		}
	}
	return count
}

// TestApplierRunsAtLowerPriority: the applier applies its windows on a
// thread at applierNice while it keeps up, and stores opened one after
// the other reuse that thread: none is ever ended (which would kill child
// processes started from it with a parent-death signal).
func TestApplierRunsAtLowerPriority(t *testing.T) {
	var calls, niced atomic.Int64
	hook := func() {
		calls.Add(1)
		// getpriority(2) returns 20 - nice.
		if p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid()); err == nil && 20-p == applierNice {
			niced.Add(1)
		}
	}
	threads := -1
	for i := range 4 {
		dir := t.TempDir()
		s := openTunedTest(t, dir, FsyncNo, tuning{applyHook: hook})
		for k := range 100 {
			s.PutValue(0, []byte(strconv.Itoa(k)), 1, []byte("v"))
		}
		applied(s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		n := threadsAtNice(t, applierNice)
		if threads < 0 {
			threads = n
		}
		if n == 0 || n != threads {
			t.Fatalf("store %d: %d threads at nice %d after Close, %d after the first", i, n, applierNice, threads)
		}
	}
	if calls.Load() == 0 || niced.Load() != calls.Load() {
		t.Fatalf("%d of %d windows applied at nice %d", niced.Load(), calls.Load(), applierNice)
	}
}
