package persistence

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// threadsAtNice counts the process's threads whose nice value is n, the
// main one only if withMain.
func threadsAtNice(t *testing.T, n int, withMain bool) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, p := range stats {
		if !withMain && filepath.Base(filepath.Dir(p)) == strconv.Itoa(os.Getpid()) {
			// The main thread: a goroutine that ends locked to it leaves it
			// parked for good (Go cannot end a process's main thread), so
			// it keeps the nice value but never runs anything again.
			continue
		}
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

// TestApplierRunsAtLowerPriority: an open store's applier has a thread of
// its own at applierNice, and the thread goes with the store. (The test
// cannot see the main thread's priority: when the applier started on it,
// the thread stays, parked, after Close.)
func TestApplierRunsAtLowerPriority(t *testing.T) {
	before, beforeOthers := threadsAtNice(t, applierNice, true), threadsAtNice(t, applierNice, false)
	s := openTest(t, t.TempDir(), FsyncNo)
	// The applier sets its priority when its goroutine starts.
	deadline := time.Now().Add(5 * time.Second)
	for threadsAtNice(t, applierNice, true) != before+1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d threads at nice %d with the store open, %d before", threadsAtNice(t, applierNice, true), applierNice, before)
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A goroutine that exits locked to its thread takes the thread with it
	// (just after Close sees the applier finish), so no other goroutine
	// runs at its priority.
	deadline = time.Now().Add(5 * time.Second)
	for threadsAtNice(t, applierNice, false) != beforeOthers {
		if time.Now().After(deadline) {
			t.Fatalf("%d threads other than the main one at nice %d after Close, %d before", threadsAtNice(t, applierNice, false), applierNice, beforeOthers)
		}
		time.Sleep(time.Millisecond)
	}
}
