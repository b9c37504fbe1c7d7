//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package server

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// multiplexingAPI is INFO's name for what the event loops poll with.
const multiplexingAPI = "kqueue"

func totalSystemMemory() int64 {
	name := "hw.physmem"
	if runtime.GOOS == "darwin" {
		name = "hw.memsize"
	}
	n, err := unix.SysctlUint64(name)
	if err != nil {
		return 0
	}
	return int64(n)
}

// rssFallback reads getrusage's maximum resident set size, the closest to
// the current one these systems offer without /proc (kilobytes, except on
// macOS, which counts bytes).
func rssFallback() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
