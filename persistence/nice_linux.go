package persistence

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// lowerPriority locks the calling goroutine to its thread and gives that
// thread nice value n, so that the kernel runs the event loops' threads
// first when both want the CPU. Raising one's own nice value needs no
// privilege. The goroutine keeps the thread until it exits, and the thread
// ends with it (the main thread, which Go cannot end, is parked for good),
// so no other goroutine ever runs at that priority.
func lowerPriority(n int) {
	runtime.LockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), n)
}
