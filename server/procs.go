package server

import (
	"os"
	"runtime"
)

// SetProcs gives the Go scheduler one P per event loop more than the CPUs
// the runtime found (its default, which follows CPU affinity and the
// cgroup's quota), unless the GOMAXPROCS environment variable decides.
// With no spare P, a loop whose epoll_wait returns while the applier,
// Pebble's compactions or the collector hold every P waits in the run
// queue until the runtime preempts one of them, 10 ms later: write tails
// at multiples of 10 ms. With a spare P it runs at once and the kernel
// shares the CPUs between threads, which favours the one that slept (the
// loop) at a finer grain. docs/decisions/0021-a-p-per-event-loop.md has the
// measurements. It returns the value set, or 0 when it left it alone.
func SetProcs(loops int) int {
	if os.Getenv("GOMAXPROCS") != "" || loops < 1 {
		return 0
	}
	n := runtime.GOMAXPROCS(0) + loops
	runtime.GOMAXPROCS(n)
	return n
}
