package persistence

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// lowerPriority locks the calling goroutine to its thread for good and
// gives that thread nice value n, so that the kernel runs the event loops'
// threads first when both want the CPU.
func lowerPriority(n int) {
	runtime.LockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), n)
}
